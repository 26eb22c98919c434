import type { DefinitionIssue } from "../../../dsl/errors.ts";
import type { Cell, Plan } from "../../../plan/types.ts";
import { qperfDataPort } from "../../../tools/qperf/index.ts";
import { findTool } from "../../../tools/registry.ts";
import { intToIp, parseCidr } from "../../local/network/names.ts";
import { subnetName } from "./names.ts";
import { hostName } from "./types.ts";

/**
 * The address plan and the firewall plan of an Azure run, as pure data (no Pulumi here):
 * one VNet per region and VNet name (a host's `vnet`; none = the region's default VNet), each a
 * non-overlapping block of 10.0.0.0/8; one /24 subnet per deployment and VNet; static private
 * addresses; peering both ways between the VNets that share a deployment (two VNets of one
 * region too); and the inbound rules of every host's NSG. These ranges are Azure VNet ranges,
 * never contacted from the machine that computes them.
 */

/** First port a measure's server listens on (measure i: +i). Same value as the runner's BASE_PORT (a test ties them). */
export const BENCHMARK_BASE_PORT = 11_000;
export const SSH_PORT = 22;
/** The address space latlab's VNets take on Azure (a /16 per VNet from 10.10.0.0/16 on). */
export const AZURE_ADDRESS_SPACE = "10.0.0.0/8";
/** Azure reserves .0-.3 and .255 of every subnet. */
const FIRST_HOST_OCTET = 4;
const MAX_HOSTS_PER_SUBNET = 255 - FIRST_HOST_OCTET;

/**
 * How an address space is cut: a block per VNet, a /24 per deployment inside it. A /8 (the
 * default) gives a /16 per VNet from its eleventh on (10.10.0.0/16, 10.11.0.0/16…), clear of
 * the 10.0.x.x ranges people use elsewhere; a smaller space (the emulator's 198.18.0.0/16)
 * gives 16 VNet blocks from its start.
 */
export interface AddressLayout {
  network: number;
  vnetPrefix: number;
  firstVnet: number;
  maxVnets: number;
  maxDeployments: number;
}

export function addressLayout(space: string = AZURE_ADDRESS_SPACE): AddressLayout {
  const c = parseCidr(space);
  if (c.prefix > 20) throw new Error(`address space ${space}: latlab needs at least a /20 (a /24 per deployment and VNet)`);
  const vnetPrefix = c.prefix <= 12 ? 16 : Math.min(24, c.prefix + 4);
  const firstVnet = c.prefix === 8 ? 10 : 0;
  return { network: c.network, vnetPrefix, firstVnet, maxVnets: 2 ** (vnetPrefix - c.prefix) - firstVnet, maxDeployments: 2 ** (24 - vnetPrefix) };
}

/**
 * A VNet's key: its region, or `<region>-<vnet>` for a named VNet. Regions have no "-", so keys
 * never collide; the default VNet keeps the key (and so the Azure names) it had before VNets
 * could be named, so that existing stacks do not churn.
 */
export function vnetKey(host: { region: string; vnet: string | null }): string {
  return host.vnet === null ? host.region : `${host.region}-${host.vnet}`;
}

/** The Azure (and Pulumi) name of a VNet of the run (names.ts, fitted to Azure's 64 characters). */
export { vnetName } from "./names.ts";

export interface VnetPlan {
  /** vnetKey(): `northeurope`, `northeurope-a`. */
  key: string;
  region: string;
  /** The experiment's VNet name; null for the region's default VNet. */
  vnet: string | null;
  addressPrefix: string;
}

export interface SubnetPlan {
  /** Key used by hosts: `<vnet key>/d<index>`. */
  key: string;
  region: string;
  /** Key of the VNet it is in. */
  vnet: string;
  deployment: string;
  deploymentIndex: number;
  name: string;
  addressPrefix: string;
}

export interface HostAddress {
  /** hostName(deployment index, role): the key of settings.hostKeys and of every per-host resource. */
  name: string;
  deployment: string;
  deploymentIndex: number;
  role: string;
  region: string;
  /** Key of its VNet. */
  vnet: string;
  subnet: string;
  privateIp: string;
}

export interface PeeringPlan {
  /** VNet keys. */
  from: string;
  to: string;
}

export interface AddressPlan {
  vnets: VnetPlan[];
  subnets: SubnetPlan[];
  hosts: HostAddress[];
  /** Both directions of every VNet pair that some deployment spans. */
  peerings: PeeringPlan[];
}

/** Regions in the order the plan first uses them. */
export function planRegions(plan: Plan): string[] {
  const regions: string[] = [];
  for (const d of plan.deployments) for (const h of d.hosts) if (!regions.includes(h.region)) regions.push(h.region);
  return regions;
}

/** VNets in the order the plan first uses them. */
export function planVnets(plan: Plan): Omit<VnetPlan, "addressPrefix">[] {
  const vnets: Omit<VnetPlan, "addressPrefix">[] = [];
  for (const d of plan.deployments) {
    for (const h of d.hosts) {
      const key = vnetKey(h);
      if (!vnets.some((v) => v.key === key)) vnets.push({ key, region: h.region, vnet: h.vnet });
    }
  }
  return vnets;
}

export function addressPlanIssues(plan: Plan, space: string = AZURE_ADDRESS_SPACE): DefinitionIssue[] {
  const issues: DefinitionIssue[] = [];
  const vnets = planVnets(plan);
  const layout = addressLayout(space);
  if (vnets.length > layout.maxVnets) issues.push({ path: "variants", message: `${vnets.length} VNets (${vnets.map((v) => v.key).join(", ")}); the address plan (${space}) has room for ${layout.maxVnets}` });
  if (plan.deployments.length > layout.maxDeployments) {
    issues.push({ path: "deployments", message: `${plan.deployments.length} deployments (host sets × replicas); one Azure run in ${space} has room for ${layout.maxDeployments} (a /24 each): split the experiment` });
  }
  for (const d of plan.deployments) {
    for (const v of vnets) {
      const n = d.hosts.filter((h) => vnetKey(h) === v.key).length;
      if (n > MAX_HOSTS_PER_SUBNET) issues.push({ path: `deployments[${d.id}]`, message: `${n} hosts in VNet ${v.key}; a /24 subnet holds ${MAX_HOSTS_PER_SUBNET}` });
    }
  }
  return issues;
}

/** The address plan in `space` (default AZURE_ADDRESS_SPACE). Throws when addressPlanIssues() is not empty. */
export function addressPlan(plan: Plan, space: string = AZURE_ADDRESS_SPACE): AddressPlan {
  const issues = addressPlanIssues(plan, space);
  if (issues.length) throw new Error(issues.map((i) => `${i.path}: ${i.message}`).join("; "));
  const layout = addressLayout(space);
  const vnets: VnetPlan[] = planVnets(plan).map((v, i) => ({ ...v, addressPrefix: `${intToIp(layout.network + (layout.firstVnet + i) * 2 ** (32 - layout.vnetPrefix))}/${layout.vnetPrefix}` }));
  const base = new Map(vnets.map((v) => [v.key, parseCidr(v.addressPrefix).network]));
  const subnets: SubnetPlan[] = [];
  const hosts: HostAddress[] = [];
  const pairs = new Set<string>();
  for (const d of plan.deployments) {
    const used = vnets.filter((v) => d.hosts.some((h) => vnetKey(h) === v.key));
    for (const v of used) {
      const key = `${v.key}/d${d.index}`;
      const subnet = base.get(v.key)! + d.index * 256;
      subnets.push({ key, region: v.region, vnet: v.key, deployment: d.id, deploymentIndex: d.index, name: subnetName(d.index), addressPrefix: `${intToIp(subnet)}/24` });
      d.hosts
        .filter((h) => vnetKey(h) === v.key)
        .forEach((h, i) => {
          hosts.push({ name: hostName(d.index, h.role), deployment: d.id, deploymentIndex: d.index, role: h.role, region: v.region, vnet: v.key, subnet: key, privateIp: intToIp(subnet + FIRST_HOST_OCTET + i) });
        });
    }
    for (const a of used) for (const b of used) if (a !== b) pairs.add(`${a.key}>${b.key}`);
  }
  const peerings = [...pairs].map((p) => {
    const [from, to] = p.split(">") as [string, string];
    return { from, to };
  });
  return { vnets, subnets, hosts, peerings };
}

// ---------------------------------------------------------------------------------------------
// NSG rules

export type RuleProtocol = "Tcp" | "Udp" | "Icmp";

/** Where a rule lets traffic in from: a fixed prefix, or the public IP of another host (known only once Azure allocates it). */
export type RuleSource = { kind: "prefix"; prefix: string } | { kind: "publicIpOf"; host: string };

export interface InboundRule {
  name: string;
  priority: number;
  access: "Allow" | "Deny";
  protocol: RuleProtocol | "*";
  sources: RuleSource[];
  /** Azure service tag as source (only the closing deny uses one). */
  sourceTag?: "VirtualNetwork";
  destinationPort: string;
  /** The host's own private address (NSG rules see the private address, also for public-path traffic). */
  destination: string;
  /** Why this rule exists, for the listing. */
  why: string;
}

export interface ToolTraffic {
  protocol: RuleProtocol;
  /** Destination port, or "*" for ICMP. */
  port: string;
}

type TrafficRule = (params: Record<string, unknown>, port: number) => ToolTraffic[];

const both = (port: number | string): ToolTraffic[] => [
  { protocol: "Tcp", port: String(port) },
  { protocol: "Udp", port: String(port) },
];

/**
 * What each tool sends to the host it measures, when its server port alone does not say it
 * (port = the measure's server port, BENCHMARK_BASE_PORT + measure index). A tool with a server
 * and no entry here gets TCP and UDP on its server port; a serverless tool with no entry is
 * refused (latlab will not guess a firewall hole).
 */
export const TOOL_TRAFFIC: Readonly<Record<string, TrafficRule>> = {
  ping: () => [{ protocol: "Icmp", port: "*" }],
  // nmap SYN probes to one TCP port of the target (default 22, its sshd).
  traceroute: (params) => [{ protocol: "Tcp", port: String(typeof params.port === "number" ? params.port : 22) }],
  // qperf: the listen (control) port and a second, data port (TCP for tcp_*, UDP for udp_lat).
  qperf: (params, port) => [...both(port), ...both(qperfDataPort(port, { dataPort: typeof params.dataPort === "number" ? params.dataPort : undefined }))],
};

/** The traffic one cell sends to its "to" host, or undefined when latlab cannot tell. */
export function cellTraffic(cell: Pick<Cell, "tool" | "params" | "measure">): ToolTraffic[] | undefined {
  const port = BENCHMARK_BASE_PORT + cell.measure;
  const rule = Object.hasOwn(TOOL_TRAFFIC, cell.tool) ? TOOL_TRAFFIC[cell.tool] : undefined;
  if (rule) return rule(cell.params, port);
  const tool = findTool(cell.tool);
  if (!tool) return undefined;
  const server = tool.server({ bindAddress: "0.0.0.0", port, workDir: "/tmp/latlab", assetsDir: "/tmp/latlab" }, cell.params);
  return server ? both(server.port) : undefined;
}

export const CLOSING_DENY_PRIORITY = 4000;

/**
 * Inbound rules per host (keyed by host name). SSH only from `sshFrom`; each benchmark port
 * only from the hosts that measure this host: their private addresses for the private path,
 * their public IPs for the public path. A closing rule denies the rest of the VirtualNetwork
 * (Azure's default AllowVnetInBound would otherwise let every peered host in); the Internet is
 * already denied by Azure's DenyAllInBound.
 */
export function inboundRules(plan: Plan, addresses: AddressPlan, sshFrom: string): Map<string, InboundRule[]> {
  const byKey = new Map(addresses.hosts.map((h) => [`${h.deployment}\u0000${h.role}`, h]));
  const out = new Map<string, InboundRule[]>();
  for (const host of addresses.hosts) {
    const rules: InboundRule[] = [
      {
        name: "allow-ssh-from-runner",
        priority: 100,
        access: "Allow",
        protocol: "Tcp",
        sources: [{ kind: "prefix", prefix: sshFrom }],
        destinationPort: String(SSH_PORT),
        destination: host.privateIp,
        why: "the runner's SSH (settings.sshFrom)",
      },
    ];
    // (path, protocol, port) → clients
    const groups = new Map<string, { path: "private" | "public"; traffic: ToolTraffic; tool: string; clients: Set<string> }>();
    for (const cell of plan.cells) {
      if (cell.deployment !== host.deployment || cell.to !== host.role) continue;
      const client = byKey.get(`${cell.deployment}\u0000${cell.from}`);
      if (!client) continue;
      for (const traffic of cellTraffic(cell) ?? []) {
        const key = `${cell.path}/${traffic.protocol}/${traffic.port}`;
        const g = groups.get(key) ?? { path: cell.path, traffic, tool: cell.tool, clients: new Set<string>() };
        g.clients.add(client.name);
        groups.set(key, g);
      }
    }
    let priority = 200;
    for (const g of [...groups.values()].sort((a, b) => (a.path + a.traffic.port + a.traffic.protocol).localeCompare(b.path + b.traffic.port + b.traffic.protocol))) {
      const clients = [...g.clients].sort();
      const sources: RuleSource[] =
        g.path === "private"
          ? clients.map((c) => ({ kind: "prefix", prefix: `${addresses.hosts.find((h) => h.name === c)!.privateIp}/32` }))
          : clients.map((c) => ({ kind: "publicIpOf", host: c }));
      const port = g.traffic.port === "*" ? "" : `-${g.traffic.port}`;
      rules.push({
        name: `allow-${g.tool}-${g.traffic.protocol.toLowerCase()}${port}-${g.path}`,
        priority: priority++,
        access: "Allow",
        protocol: g.traffic.protocol,
        sources,
        destinationPort: g.traffic.port,
        destination: host.privateIp,
        why: `${g.tool} from ${clients.join(", ")} over the ${g.path} path`,
      });
    }
    rules.push({
      name: "deny-other-vnet-inbound",
      priority: CLOSING_DENY_PRIORITY,
      access: "Deny",
      protocol: "*",
      sources: [],
      sourceTag: "VirtualNetwork",
      destinationPort: "*",
      destination: "*",
      why: "overrides Azure's default AllowVnetInBound (peered VNets included)",
    });
    out.set(host.name, rules);
  }
  return out;
}
