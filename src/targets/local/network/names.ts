import { createHash } from "node:crypto";

/**
 * Names and addresses of one local run, derived from its run id. Pure.
 *
 * Everything a run creates carries `<short>`, a few hex characters hashed from the run id:
 *   namespaces      ll-<short>-<deploymentIndex>-<role>           (hosts)
 *                   ll-<short>-<deploymentIndex>-_zr-<region>[-<vnet>]-<zone|regional>
 *                   ll-<short>-<deploymentIndex>-_rr-<region>[-<vnet>]   (routers; -<vnet> for a named VNet)
 *                   ll-<short>-<deploymentIndex>-_pub             (the deployment's internet edge)
 *   root-side veths ll<short>-m<n>   (n = host ordinal in the run, base 36; ≤ 15 chars)
 * Sanitised roles never start with "_", so a host namespace cannot collide with a router's.
 * Interfaces inside namespaces (eth0, mgmt0, p3, rk0, up0, z1, x2) are short and private to
 * their namespace: only the root-side veths must be unique on the machine.
 */

export const IFNAMSIZ_MAX = 15;
export const SHORT_LEN = 6;

/**
 * Address plan (all inside 198.18.0.0/15, the benchmarking block; none of it overlaps):
 *   198.18.0.0/16    DATA_NET     private (VNet) addresses: one /24 per rack
 *   198.19.0.0/18    TRANSIT_NET  router-to-router links: one /30 per link
 *   198.19.64.0/18   PUBLIC_NET   public addresses: one /32 per host, on the host's lo
 *   198.19.128.0/17  MGMT_NET     management /30s between the root namespace and each host
 * Data, transit and public addresses repeat from one deployment to the next (each deployment is
 * a fabric of its own); management addresses are unique on the machine.
 */
/** Data (host) addresses: one /24 per rack. */
export const DATA_NET = "198.18.0.0/16";
/** Router transit links: one /30 per link. */
export const TRANSIT_NET = "198.19.0.0/18";
/** Public addresses: one /32 per host, reachable only through the deployment's public router. */
export const PUBLIC_NET = "198.19.64.0/18";
/** Management /30s between the root namespace and each host. */
export const MGMT_NET = "198.19.128.0/17";

export function runShort(runId: string): string {
  return createHash("sha256").update(runId).digest("hex").slice(0, SHORT_LEN);
}

export interface RunNames {
  runId: string;
  short: string;
  /** Every namespace of the run starts with this. */
  namespacePrefix: string;
  /** Every root-side interface of the run starts with this. */
  rootLinkPrefix: string;
}

export function runNames(runId: string): RunNames {
  const short = runShort(runId);
  return { runId, short, namespacePrefix: `ll-${short}-`, rootLinkPrefix: `ll${short}-m` };
}

/** A role as it may appear in a namespace name: [A-Za-z0-9_-], never starting with "_" or "-". */
export function sanitizeRole(role: string): string {
  const s = role.replace(/[^A-Za-z0-9_-]/g, "_").replace(/^[_-]+/, "");
  return s === "" ? "h" : s;
}

/** A hostname label (RFC 1123): lower case, digits, "-", ≤ 63 characters. */
export function hostLabel(deploymentIndex: number, role: string): string {
  const r = role
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, "-")
    .replace(/-+/g, "-")
    .replace(/^-|-$/g, "");
  return `d${deploymentIndex}-${r === "" ? "host" : r}`.slice(0, 63).replace(/-$/, "");
}

export function hostNamespace(names: RunNames, deploymentIndex: number, sanitizedRole: string): string {
  return `${names.namespacePrefix}${deploymentIndex}-${sanitizedRole}`;
}

/** A region, or `<region>-<vnet>` for a named VNet of it (regions have no "-": never ambiguous). */
const vnetPart = (region: string, vnet: string | null): string => (vnet === null ? region : `${region}-${vnet}`);

export function zoneRouterNamespace(names: RunNames, deploymentIndex: number, region: string, zone: string | null, vnet: string | null = null): string {
  return `${names.namespacePrefix}${deploymentIndex}-_zr-${vnetPart(region, vnet)}-${zone ?? "regional"}`;
}

/** The router of a region's VNet: the region's default VNet keeps the name it had before VNets could be named. */
export function regionRouterNamespace(names: RunNames, deploymentIndex: number, region: string, vnet: string | null = null): string {
  return `${names.namespacePrefix}${deploymentIndex}-_rr-${vnetPart(region, vnet)}`;
}

/** The deployment's internet edge: every region router links to it; public addresses route through it. */
export function publicRouterNamespace(names: RunNames, deploymentIndex: number): string {
  return `${names.namespacePrefix}${deploymentIndex}-_pub`;
}

/** Root-side management veth of the run's n-th host (0-based, across deployments). */
export function mgmtRootLink(names: RunNames, hostOrdinal: number): string {
  const name = `${names.rootLinkPrefix}${hostOrdinal.toString(36)}`;
  assertIfname(name);
  return name;
}

export function assertIfname(name: string): void {
  if (name.length === 0 || name.length > IFNAMSIZ_MAX || /[\s/:]/.test(name)) {
    throw new Error(`interface name "${name}" is not a valid Linux interface name (1–${IFNAMSIZ_MAX} characters, no space, "/" or ":")`);
  }
}

// ---------------------------------------------------------------------------------------------
// IPv4 helpers

export function ipToInt(ip: string): number {
  const parts = ip.split(".");
  if (parts.length !== 4) throw new Error(`not an IPv4 address: ${ip}`);
  let n = 0;
  for (const p of parts) {
    const v = Number(p);
    if (!/^\d{1,3}$/.test(p) || v > 255) throw new Error(`not an IPv4 address: ${ip}`);
    n = n * 256 + v;
  }
  return n;
}

export function intToIp(n: number): string {
  return [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join(".");
}

export interface Cidr {
  /** Network address as an integer. */
  network: number;
  prefix: number;
}

export function parseCidr(cidr: string): Cidr {
  const [ip, len] = cidr.split("/");
  const prefix = len === undefined ? 32 : Number(len);
  if (ip === undefined || !Number.isInteger(prefix) || prefix < 0 || prefix > 32) throw new Error(`not a CIDR: ${cidr}`);
  const size = 2 ** (32 - prefix);
  return { network: Math.floor(ipToInt(ip) / size) * size, prefix };
}

export function cidrSize(c: Cidr): number {
  return 2 ** (32 - c.prefix);
}

export function cidrContains(c: Cidr, ip: number): boolean {
  return ip >= c.network && ip < c.network + cidrSize(c);
}

export function cidrOverlaps(a: Cidr, b: Cidr): boolean {
  return a.network < b.network + cidrSize(b) && b.network < a.network + cidrSize(a);
}

export function formatCidr(c: Cidr): string {
  return `${intToIp(c.network)}/${c.prefix}`;
}

// ---------------------------------------------------------------------------------------------
// Management /30s

const MGMT = parseCidr(MGMT_NET);
export const MGMT_BLOCKS = cidrSize(MGMT) / 4;

export interface MgmtBlock {
  index: number;
  cidr: string;
  /** Address on the root side of the veth. */
  rootAddress: string;
  /** Address on the host side (mgmt0): sshd listens here. */
  hostAddress: string;
}

export function mgmtBlock(index: number): MgmtBlock {
  const i = ((index % MGMT_BLOCKS) + MGMT_BLOCKS) % MGMT_BLOCKS;
  const net = MGMT.network + i * 4;
  return { index: i, cidr: `${intToIp(net)}/30`, rootAddress: intToIp(net + 1), hostAddress: intToIp(net + 2) };
}

/** First block tried for a run: hashed from the run id so that two runs start far apart. */
export function mgmtBaseBlock(runId: string): number {
  const h = createHash("sha256").update(`mgmt:${runId}`).digest();
  return h.readUInt32BE(0) % MGMT_BLOCKS;
}

/**
 * Picks a free /30 for the next host: starting from `start`, the first block that overlaps no
 * prefix in `inUse` (addresses and routes of the root namespace) and is not in `taken`.
 */
export function pickMgmtBlock(start: number, inUse: readonly Cidr[], taken: ReadonlySet<number>): MgmtBlock {
  for (let k = 0; k < MGMT_BLOCKS; k++) {
    const b = mgmtBlock(start + k);
    if (taken.has(b.index)) continue;
    const c = parseCidr(b.cidr);
    if (inUse.some((u) => cidrOverlaps(u, c) && u.prefix >= 17)) continue;
    return b;
  }
  throw new Error(`no free /30 left in ${MGMT_NET} for a management link`);
}

/**
 * Prefixes in use in a namespace, from `ip -4 -o addr show` (each address as a /32 and its
 * connected subnet) and `ip -4 route show table all` (each destination). Default routes and
 * prefixes shorter than /17 are kept out by pickMgmtBlock's overlap rule.
 */
export function parseInUsePrefixes(addrOutput: string, routeOutput: string): Cidr[] {
  const out: Cidr[] = [];
  for (const line of addrOutput.split("\n")) {
    const m = /\binet\s+(\d+\.\d+\.\d+\.\d+)(?:\/(\d+))?/.exec(line);
    if (!m || m[1] === undefined) continue;
    out.push(parseCidr(`${m[1]}/32`));
    if (m[2] !== undefined) out.push(parseCidr(`${m[1]}/${m[2]}`));
  }
  for (const line of routeOutput.split("\n")) {
    const tokens = line.trim().split(/\s+/);
    // "broadcast 10.0.0.255 dev …", "local 127.0.0.1 dev …", "10.0.0.0/8 via …"
    const dest = ["local", "broadcast", "unicast", "anycast", "multicast", "blackhole", "unreachable", "prohibit"].includes(tokens[0] ?? "")
      ? tokens[1]
      : tokens[0];
    if (dest === undefined || !/^\d+\.\d+\.\d+\.\d+(\/\d+)?$/.test(dest)) continue;
    out.push(parseCidr(dest));
  }
  return out;
}

export interface AddrLine {
  ifname: string;
  address: string;
  prefix: number;
}

/** `ip -4 -o addr show` → one entry per IPv4 address ("eth0@if3" is reported as "eth0"). */
export function parseAddrLines(output: string): AddrLine[] {
  const out: AddrLine[] = [];
  for (const line of output.split("\n")) {
    const m = /^\d+:\s+(\S+?)(?:@\S+)?\s+inet\s+(\d+\.\d+\.\d+\.\d+)\/(\d+)/.exec(line.trim());
    if (!m || m[1] === undefined || m[2] === undefined || m[3] === undefined) continue;
    out.push({ ifname: m[1], address: m[2], prefix: Number(m[3]) });
  }
  return out;
}

/** `ip netns list` → namespace names ("name (id: 3)" → "name"). */
export function parseNetnsList(output: string): string[] {
  return output
    .split("\n")
    .map((l) => l.trim().split(/\s+/)[0] ?? "")
    .filter((n) => n !== "");
}

/** `ip netns list-id` → nsid → namespace name ("nsid 0 (iproute2 netns name: foo)"). */
export function parseNetnsIds(output: string): Map<number, string> {
  const out = new Map<number, string>();
  for (const line of output.split("\n")) {
    const m = /^nsid\s+(\d+)\s+\(iproute2 netns name:\s*([^)\s]+)\)/.exec(line.trim());
    if (m && m[1] !== undefined && m[2] !== undefined) out.set(Number(m[1]), m[2]);
  }
  return out;
}

/** `ip -o link show` → interface names ("5: name@if2: <…>" → "name"). */
export function parseLinkNames(output: string): string[] {
  const out: string[] = [];
  for (const line of output.split("\n")) {
    const m = /^\d+:\s+([^:@\s]+)(?:@[^:\s]+)?:/.exec(line.trim());
    if (m && m[1] !== undefined) out.push(m[1]);
  }
  return out;
}
