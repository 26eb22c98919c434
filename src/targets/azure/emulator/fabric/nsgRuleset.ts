/**
 * A network security group as nftables rules inside the VM's namespace (pure: text out).
 *
 * Azure evaluates a NIC's NSG on the private address, after the public address has been
 * translated (so a rule's destination is the VM's private IP, and public-path traffic arrives
 * with the sending VM's public IP as source); the first matching rule by priority decides;
 * below every custom rule sit the default rules (AllowVnetInBound 65000,
 * AllowAzureLoadBalancerInBound 65001, DenyAllInBound 65500 and their outbound twins, which
 * allow everything outbound). NSGs are stateful: replies to an allowed flow pass.
 *
 * Tags: VirtualNetwork = the VNet's address space plus the spaces of connected peerings;
 * Internet = anything outside it; AzureLoadBalancer = 168.63.129.16 (nothing here sends from
 * it). A NIC without an NSG lets everything through, as on Azure.
 */

export interface NsgRule {
  name: string;
  priority: number;
  direction: "Inbound" | "Outbound";
  access: "Allow" | "Deny";
  protocol: string;
  sourceAddressPrefixes: string[];
  sourcePortRanges: string[];
  destinationAddressPrefixes: string[];
  destinationPortRanges: string[];
}

export const NSG_TABLE = "latlab_nsg";
const AZURE_LB = "168.63.129.16";

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const strings = (one: unknown, many: unknown): string[] => {
  const list = Array.isArray(many) ? many.filter((x): x is string => typeof x === "string" && x !== "") : [];
  if (list.length) return list;
  return typeof one === "string" && one !== "" ? [one] : ["*"];
};

/** The rules of an NSG's ARM body (securityRules[].properties), in evaluation order. */
export function nsgRulesOf(body: Record<string, unknown>): NsgRule[] {
  const props = isRecord(body.properties) ? body.properties : {};
  const raw = Array.isArray(props.securityRules) ? props.securityRules : [];
  return raw
    .filter(isRecord)
    .map((r) => {
      const p = isRecord(r.properties) ? r.properties : {};
      return {
        name: typeof r.name === "string" ? r.name : "rule",
        priority: typeof p.priority === "number" ? p.priority : 4096,
        direction: p.direction === "Outbound" ? "Outbound" : "Inbound",
        access: p.access === "Deny" ? "Deny" : "Allow",
        protocol: typeof p.protocol === "string" ? p.protocol : "*",
        sourceAddressPrefixes: strings(p.sourceAddressPrefix, p.sourceAddressPrefixes),
        sourcePortRanges: strings(p.sourcePortRange, p.sourcePortRanges),
        destinationAddressPrefixes: strings(p.destinationAddressPrefix, p.destinationAddressPrefixes),
        destinationPortRanges: strings(p.destinationPortRange, p.destinationPortRanges),
      } satisfies NsgRule;
    })
    .sort((a, b) => a.priority - b.priority);
}

const ANY = new Set(["*", "any", "0.0.0.0/0", "internet*"]);

/** An address match, or null for "any"; undefined when it can never match here. */
function addressMatch(field: "saddr" | "daddr", prefixes: string[], vnet: readonly string[]): string | null | undefined {
  if (prefixes.some((p) => ANY.has(p.toLowerCase()))) return null;
  const parts: string[] = [];
  let negateVnet = false;
  for (const p of prefixes) {
    const lower = p.toLowerCase();
    if (lower === "virtualnetwork") parts.push(...vnet);
    else if (lower === "internet") negateVnet = true;
    else if (lower === "azureloadbalancer") parts.push(AZURE_LB);
    else if (/^[\d.]+(\/\d+)?$/.test(p)) parts.push(p);
    // Other service tags (Storage, AzureCloud…) name Azure's own ranges, which nothing here uses.
  }
  if (negateVnet && parts.length === 0) return vnet.length ? `ip ${field} != { ${vnet.join(", ")} }` : null;
  if (parts.length === 0) return undefined;
  // "Internet" beside explicit prefixes: the prefixes, or anything outside the VNet.
  if (negateVnet) return undefined;
  return `ip ${field} { ${[...new Set(parts)].join(", ")} }`;
}

function portMatch(kind: "sport" | "dport", ranges: string[]): string | null {
  if (ranges.some((r) => r === "*")) return null;
  return `${kind} { ${ranges.join(", ")} }`;
}

/** One NSG rule as nftables statements; a rule that cannot match anything here yields nothing. */
function ruleLines(rule: NsgRule, vnet: readonly string[]): string[] {
  const verdict = rule.access === "Allow" ? "accept" : "drop";
  const src = addressMatch("saddr", rule.sourceAddressPrefixes, vnet);
  const dst = addressMatch("daddr", rule.destinationAddressPrefixes, vnet);
  if (src === undefined || dst === undefined) return [`# ${rule.name} (${rule.priority}): matches nothing on this fabric`];
  const protocols: string[] = (() => {
    switch (rule.protocol.toLowerCase()) {
      case "tcp":
        return ["tcp"];
      case "udp":
        return ["udp"];
      case "icmp":
        return ["icmp"];
      case "esp":
        return ["esp"];
      case "ah":
        return ["ah"];
      default:
        return ["*"];
    }
  })();
  const lines: string[] = [];
  for (const proto of protocols) {
    const parts: string[] = [];
    if (proto !== "*") parts.push(`meta l4proto ${proto}`);
    if (src) parts.push(src);
    if (dst) parts.push(dst);
    if (proto === "tcp" || proto === "udp") {
      const sp = portMatch("sport", rule.sourcePortRanges);
      const dp = portMatch("dport", rule.destinationPortRanges);
      if (sp) parts.push(`${proto} ${sp}`);
      if (dp) parts.push(`${proto} ${dp}`);
    } else if (proto === "*" && (portMatch("dport", rule.destinationPortRanges) || portMatch("sport", rule.sourcePortRanges))) {
      // Ports with protocol "*" apply to TCP and UDP.
      return [...ruleLines({ ...rule, protocol: "Tcp" }, vnet), ...ruleLines({ ...rule, protocol: "Udp" }, vnet)];
    }
    lines.push(`${parts.join(" ")} ${verdict} comment "${rule.name.replace(/"/g, "")} ${rule.priority}"`.trim());
  }
  return lines;
}

/**
 * The complete nftables script for a VM: replaces the table atomically (flush + define). With
 * no NSG, the table is emptied and everything passes.
 */
export function nsgRuleset(rules: readonly NsgRule[] | undefined, vnetPrefixes: readonly string[]): string {
  const lines = [`table inet ${NSG_TABLE} {}`, `delete table inet ${NSG_TABLE}`];
  if (!rules) return `${lines.join("\n")}\n`;
  const vnet = [...new Set(vnetPrefixes)];
  const inbound = rules.filter((r) => r.direction === "Inbound").flatMap((r) => ruleLines(r, vnet));
  const outbound = rules.filter((r) => r.direction === "Outbound").flatMap((r) => ruleLines(r, vnet));
  const vnetSet = vnet.length ? `{ ${vnet.join(", ")} }` : undefined;
  lines.push(
    `table inet ${NSG_TABLE} {`,
    "  chain input {",
    "    type filter hook input priority 0; policy drop;",
    "    ct state established,related accept",
    '    iif "lo" accept',
    ...inbound.map((l) => `    ${l}`),
    ...(vnetSet ? [`    ip saddr ${vnetSet} ip daddr ${vnetSet} accept comment "AllowVnetInBound 65000"`] : []),
    '    drop comment "DenyAllInBound 65500"',
    "  }",
    "  chain output {",
    "    type filter hook output priority 0; policy accept;",
    "    ct state established,related accept",
    ...outbound.map((l) => `    ${l}`),
    '    accept comment "AllowVnetOutBound 65000, AllowInternetOutBound 65001"',
    "  }",
    "}",
  );
  return `${lines.join("\n")}\n`;
}
