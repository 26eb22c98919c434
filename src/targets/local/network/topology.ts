import type { ResolvedHost } from "../../../dsl/placement.ts";
import type { Deployment, NetworkPath, PathKind } from "../../../plan/types.ts";
import {
  assertIfname,
  cidrContains,
  DATA_NET,
  hostLabel,
  hostNamespace,
  intToIp,
  ipToInt,
  parseCidr,
  PUBLIC_NET,
  publicRouterNamespace,
  regionRouterNamespace,
  sanitizeRole,
  TRANSIT_NET,
  zoneRouterNamespace,
} from "./names.ts";
import type { Cidr, RunNames } from "./names.ts";

/**
 * The emulated fabric of one deployment, as data. Pure: no command is run here.
 *
 *   host ─ eth0 ══ rack bridge (in its zone router) ── zone router ── up0 ══ zN ── region router ── xM ══ xK ── other region router
 *                                                                               region router ── pub0 ══ rN ── public router
 *
 * - A host is a namespace with one data interface (eth0) on a rack bridge.
 * - Hosts sharing a PPG (in the same zone, or both regional, and in the same VNet) share one
 *   rack; a host without a PPG gets a rack of its own. A PPG across two VNets is two racks: its
 *   latency is still the PPG's (shaping goes by placement), its hops are those of a peering.
 * - A zone router namespace holds the bridges of its racks and routes between them. Hosts of a
 *   region without a zone hang off one "regional" router, which stands in for a zone router.
 * - One region router per VNet links its zone routers: a region's default VNet, plus one per
 *   VNet name its hosts give (`vnet: "a"`). A VNet's hosts have their own zone routers and
 *   racks (a subnet never spans VNets, on Azure either), so the "region router" is really the
 *   VNet's router. Region routers are linked pairwise: between regions ("inter-region") and
 *   between two VNets of one region ("peering") — as latlab peers every VNet pair a deployment
 *   spans on Azure.
 * - One public router per deployment (the internet edge) links to every region router.
 *
 * Private path (data addresses, DATA_NET), routed hops = routers a packet crosses: same rack 0,
 * same zone router 1, same region 3 (zone router, region router, zone router), another VNet of
 * the region 4 (zone router, region router, peering link, region router, zone router), other
 * region 4. These are the fabric's hops, not Azure's (Azure's traceroute shows one hop inside a
 * VNet and over a peering alike). Latency shaping goes by placement only (pathKindBetween): a
 * peering adds no modelled delay, as Azure documents for peered VNets of one region.
 *
 * Public path (public addresses, PUBLIC_NET, one /32 per host on its lo): traffic to a public
 * address always leaves through the region router to the public router and comes back in:
 * zone router → region router → public router → region router → zone router, 5 routed hops for
 * every pair, whatever their placement. No NAT: a host reaches PUBLIC_NET through a route with
 * `src <its own public address>`, so the server's reply is addressed to a public address too and
 * takes the same way back. The routers tell the way out from the way in by the interface a
 * packet came in on: on the way out the main table sends PUBLIC_NET up (zone router: default
 * route; region router: PUBLIC_NET via the public router); packets coming down from the public
 * router (region router, iif pub0) or the region router (zone router, iif up0) are looked up in
 * table PUBLIC_TABLE first, which holds the /32s below that router and rejects the rest of
 * PUBLIC_NET (no loops). The public router knows only the public /32s: private addresses are not
 * reachable from the "internet".
 */

export type NamespaceKind = "host" | "zone-router" | "region-router" | "public-router";

export interface TopoNamespace {
  name: string;
  kind: NamespaceKind;
  /** Routers forward (net.ipv4.ip_forward=1); hosts do not. */
  forwarding: boolean;
  /** Region a zone or region router stands for. */
  region?: string;
  /** VNet a zone or region router stands for (null: the region's default VNet). */
  vnet?: string | null;
  /** Zone a zone router stands for (null: the regional router of a region's zone-less hosts). */
  zone?: string | null;
}

export interface TopoBridge {
  namespace: string;
  name: string;
  /** Gateway address of the rack, on the bridge itself (CIDR). */
  address: string;
  /** The rack's subnet. */
  subnet: string;
  /** PPG the rack stands for; null for the rack of a single host without a PPG. */
  ppg: string | null;
}

export interface LinkEnd {
  namespace: string;
  ifname: string;
  /** Address with prefix length, when the end has one. */
  address?: string;
  /** Bridge this end is a port of. */
  bridge?: string;
}

export interface TopoLink {
  /** "peering": two VNets of one region; "inter-region": two regions (a global peering on Azure). */
  kind: "rack-port" | "zone-uplink" | "inter-region" | "peering" | "public-uplink";
  /** The end created first (`ip -n <a.namespace> link add <a.ifname> type veth peer …`). */
  a: LinkEnd;
  b: LinkEnd;
}

/** An address on an interface that is not a link end (a host's public /32 on lo). */
export interface TopoAddress {
  namespace: string;
  dev: string;
  /** CIDR. */
  address: string;
}

export interface TopoRoute {
  namespace: string;
  /** CIDR or "default". */
  destination: string;
  via: string;
  dev: string;
  /** Preferred source address for traffic using the route. */
  src?: string;
  /** Routing table; the main table when absent. */
  table?: number;
}

/** `ip route add unreachable <destination> table <table>`: stops a lookup from falling through. */
export interface TopoUnreachable {
  namespace: string;
  destination: string;
  table: number;
}

/** `ip rule add iif <iif> lookup <table> pref <priority>`. */
export interface TopoRule {
  namespace: string;
  iif: string;
  table: number;
  priority: number;
}

export interface TopoHost {
  role: string;
  hostname: string;
  namespace: string;
  spec: ResolvedHost;
  /** Index of the host in its deployment. */
  index: number;
  dataIfname: string;
  dataAddress: string;
  dataCidr: string;
  gateway: string;
  /** The host's public address (on its lo), reachable only through the public router. */
  publicAddress: string;
  rack: string;
  zoneRouter: string;
  regionRouter: string;
  publicRouter: string;
}

export interface DeploymentTopology {
  deploymentId: string;
  deploymentIndex: number;
  /** The deployment's public router namespace. */
  publicRouter: string;
  namespaces: TopoNamespace[];
  bridges: TopoBridge[];
  links: TopoLink[];
  addresses: TopoAddress[];
  routes: TopoRoute[];
  unreachable: TopoUnreachable[];
  rules: TopoRule[];
  hosts: TopoHost[];
}

export const DATA_IFNAME = "eth0";
export const MGMT_IFNAME = "mgmt0";
/** Interface of a region router towards the public router. */
export const PUBLIC_UPLINK_IFNAME = "pub0";
/** Table the routers look public addresses up in for traffic coming down from the public side. */
export const PUBLIC_TABLE = 100;
export const PUBLIC_RULE_PRIORITY = 100;
const PUBLIC = parseCidr(PUBLIC_NET);
/** Public addresses handed out per deployment (host i gets PUBLIC_NET + 1 + i). */
export const MAX_PUBLIC_ADDRESSES = 2 ** (32 - PUBLIC.prefix) - 2;
const MAX_RACKS = 256;
const FIRST_HOST_OCTET = 10;
const MAX_HOSTS_PER_RACK = 254 - FIRST_HOST_OCTET + 1;

/** How traffic between two hosts travels, from their placement. */
export function pathKindBetween(a: ResolvedHost, b: ResolvedHost): PathKind {
  if (a.region !== b.region) return "cross-region";
  if (a.zone !== null && b.zone !== null && a.zone !== b.zone) return "cross-zone";
  if (a.zone === b.zone && a.ppg !== null && a.ppg === b.ppg) return "same-ppg";
  if (a.zone !== null && a.zone === b.zone) return "same-zone";
  return "same-region";
}

interface ZoneGroup {
  key: string;
  region: string;
  vnet: string | null;
  /** Key of its VNet (routerKey). */
  router: string;
  zone: string | null;
  namespace: string;
  racks: { key: string; ppg: string | null; hosts: number[] }[];
}

export function buildDeploymentTopology(deployment: Deployment, names: RunNames): DeploymentTopology {
  const d = deployment.index;
  const namespaces: TopoNamespace[] = [];
  const bridges: TopoBridge[] = [];
  const links: TopoLink[] = [];
  const addresses: TopoAddress[] = [];
  const routes: TopoRoute[] = [];
  const unreachable: TopoUnreachable[] = [];
  const rules: TopoRule[] = [];
  const publicRouter = publicRouterNamespace(names, d);
  if (deployment.hosts.length > MAX_PUBLIC_ADDRESSES) throw new Error(`deployment ${deployment.id}: more than ${MAX_PUBLIC_ADDRESSES} hosts for ${PUBLIC_NET}`);

  // VNets (a region router each) and zone groups, in order of first appearance.
  const routers: { key: string; region: string; vnet: string | null; namespace: string }[] = [];
  const zones: ZoneGroup[] = [];
  deployment.hosts.forEach((h, i) => {
    const router = `${h.region}/${h.vnet ?? ""}`;
    if (!routers.some((r) => r.key === router)) routers.push({ key: router, region: h.region, vnet: h.vnet, namespace: regionRouterNamespace(names, d, h.region, h.vnet) });
    const zkey = `${router}/${h.zone ?? "regional"}`;
    let z = zones.find((g) => g.key === zkey);
    if (!z) {
      z = { key: zkey, region: h.region, vnet: h.vnet, router, zone: h.zone, namespace: zoneRouterNamespace(names, d, h.region, h.zone, h.vnet), racks: [] };
      zones.push(z);
    }
    const rkey = h.ppg !== null ? `ppg:${h.ppg}` : `host:${i}`;
    let rack = z.racks.find((r) => r.key === rkey);
    if (!rack) {
      rack = { key: rkey, ppg: h.ppg, hosts: [] };
      z.racks.push(rack);
    }
    rack.hosts.push(i);
  });

  // Host namespaces: unique even when two roles sanitise to the same string.
  const usedHostNs = new Set<string>();
  const hostNs: string[] = deployment.hosts.map((h, i) => {
    let ns = hostNamespace(names, d, sanitizeRole(h.role));
    if (usedHostNs.has(ns)) ns = `${ns}-${i}`;
    usedHostNs.add(ns);
    return ns;
  });
  const usedHostnames = new Set<string>();
  const hostnames: string[] = deployment.hosts.map((h, i) => {
    let n = hostLabel(d, h.role);
    if (usedHostnames.has(n)) n = `${n}-${i}`;
    usedHostnames.add(n);
    return n;
  });

  namespaces.push({ name: publicRouter, kind: "public-router", forwarding: true });
  for (const r of routers) namespaces.push({ name: r.namespace, kind: "region-router", forwarding: true, region: r.region, vnet: r.vnet });
  for (const z of zones) namespaces.push({ name: z.namespace, kind: "zone-router", forwarding: true, region: z.region, vnet: z.vnet, zone: z.zone });
  const routerOf = (z: ZoneGroup): string => routers.find((r) => r.key === z.router)!.namespace;
  deployment.hosts.forEach((_, i) => namespaces.push({ name: hostNs[i] as string, kind: "host", forwarding: false }));

  // Transit /30s, handed out in order.
  const transit = parseCidr(TRANSIT_NET);
  let nextTransit = 0;
  const transitPair = (): [string, string] => {
    const net = transit.network + nextTransit * 4;
    nextTransit++;
    if (net + 4 > transit.network + 2 ** (32 - transit.prefix)) throw new Error(`too many router links for ${TRANSIT_NET}`);
    return [`${intToIp(net + 1)}/30`, `${intToIp(net + 2)}/30`];
  };
  const addrOf = (cidr: string): string => cidr.split("/")[0] as string;
  const publicOf = (hostIndex: number): string => intToIp(PUBLIC.network + 1 + hostIndex);

  // Racks and host ports.
  const data = parseCidr(DATA_NET);
  let rackIndex = 0;
  const hosts: TopoHost[] = [];
  const zoneSubnets = new Map<string, string[]>();
  for (const z of zones) {
    const subnets: string[] = [];
    z.racks.forEach((rack, localRack) => {
      if (rackIndex >= MAX_RACKS) throw new Error(`deployment ${deployment.id}: more than ${MAX_RACKS} racks`);
      if (rack.hosts.length > MAX_HOSTS_PER_RACK) throw new Error(`deployment ${deployment.id}: more than ${MAX_HOSTS_PER_RACK} hosts in one PPG`);
      const net = data.network + rackIndex * 256;
      rackIndex++;
      const subnet = `${intToIp(net)}/24`;
      const gateway = intToIp(net + 1);
      const bridge = `rk${localRack}`;
      assertIfname(bridge);
      bridges.push({ namespace: z.namespace, name: bridge, address: `${gateway}/24`, subnet, ppg: rack.ppg });
      subnets.push(subnet);
      rack.hosts.forEach((hi, k) => {
        const spec = deployment.hosts[hi] as ResolvedHost;
        const ns = hostNs[hi] as string;
        const address = intToIp(net + FIRST_HOST_OCTET + k);
        const pub = publicOf(hi);
        const port = `p${hi}`;
        assertIfname(port);
        links.push({
          kind: "rack-port",
          a: { namespace: z.namespace, ifname: port, bridge },
          b: { namespace: ns, ifname: DATA_IFNAME, address: `${address}/24` },
        });
        routes.push({ namespace: ns, destination: "default", via: gateway, dev: DATA_IFNAME });
        // The public address lives on lo; public destinations are reached from it.
        addresses.push({ namespace: ns, dev: "lo", address: `${pub}/32` });
        routes.push({ namespace: ns, destination: PUBLIC_NET, via: gateway, dev: DATA_IFNAME, src: pub });
        // Coming down from the region router: the zone router delivers the public /32 on the rack.
        routes.push({ namespace: z.namespace, destination: `${pub}/32`, via: address, dev: bridge, table: PUBLIC_TABLE });
        hosts.push({
          role: spec.role,
          hostname: hostnames[hi] as string,
          namespace: ns,
          spec,
          index: hi,
          dataIfname: DATA_IFNAME,
          dataAddress: address,
          dataCidr: `${address}/24`,
          gateway,
          publicAddress: pub,
          rack: `${z.namespace}/${bridge}`,
          zoneRouter: z.namespace,
          regionRouter: routerOf(z),
          publicRouter,
        });
      });
    });
    zoneSubnets.set(z.namespace, subnets);
  }
  hosts.sort((a, b) => a.index - b.index);
  const hostsOfZone = (zns: string) => hosts.filter((h) => h.zoneRouter === zns);

  // Zone routers up to their region (VNet) router.
  const regionSubnets = new Map<string, string[]>();
  zones.forEach((z, zi) => {
    const rr = routerOf(z);
    const [rrAddr, zrAddr] = transitPair();
    const down = `z${zi}`;
    assertIfname(down);
    links.push({
      kind: "zone-uplink",
      a: { namespace: rr, ifname: down, address: rrAddr },
      b: { namespace: z.namespace, ifname: "up0", address: zrAddr },
    });
    routes.push({ namespace: z.namespace, destination: "default", via: addrOf(rrAddr), dev: "up0" });
    for (const s of zoneSubnets.get(z.namespace) ?? []) {
      routes.push({ namespace: rr, destination: s, via: addrOf(zrAddr), dev: down });
    }
    regionSubnets.set(rr, [...(regionSubnets.get(rr) ?? []), ...(zoneSubnets.get(z.namespace) ?? [])]);
    // Public traffic coming down: table PUBLIC_TABLE (its hosts' /32s, added above; nothing else).
    rules.push({ namespace: z.namespace, iif: "up0", table: PUBLIC_TABLE, priority: PUBLIC_RULE_PRIORITY });
    unreachable.push({ namespace: z.namespace, destination: PUBLIC_NET, table: PUBLIC_TABLE });
    for (const h of hostsOfZone(z.namespace)) {
      routes.push({ namespace: rr, destination: `${h.publicAddress}/32`, via: addrOf(zrAddr), dev: down, table: PUBLIC_TABLE });
    }
  });

  // Region (VNet) routers, pairwise: every VNet pair of the deployment is peered.
  routers.forEach((ra, i) => {
    routers.forEach((rb, j) => {
      if (j <= i) return;
      const nsA = ra.namespace;
      const nsB = rb.namespace;
      const [aAddr, bAddr] = transitPair();
      const ifA = `x${j}`;
      const ifB = `x${i}`;
      assertIfname(ifA);
      assertIfname(ifB);
      links.push({ kind: ra.region === rb.region ? "peering" : "inter-region", a: { namespace: nsA, ifname: ifA, address: aAddr }, b: { namespace: nsB, ifname: ifB, address: bAddr } });
      for (const s of regionSubnets.get(nsB) ?? []) routes.push({ namespace: nsA, destination: s, via: addrOf(bAddr), dev: ifA });
      for (const s of regionSubnets.get(nsA) ?? []) routes.push({ namespace: nsB, destination: s, via: addrOf(aAddr), dev: ifB });
    });
  });

  // Region routers up to the public router (the internet edge).
  routers.forEach((r, ri) => {
    const rr = r.namespace;
    const [rrAddr, pubAddr] = transitPair();
    const pubIf = `r${ri}`;
    assertIfname(pubIf);
    links.push({
      kind: "public-uplink",
      a: { namespace: publicRouter, ifname: pubIf, address: pubAddr },
      b: { namespace: rr, ifname: PUBLIC_UPLINK_IFNAME, address: rrAddr },
    });
    // Going out: every public address is over there.
    routes.push({ namespace: rr, destination: PUBLIC_NET, via: addrOf(pubAddr), dev: PUBLIC_UPLINK_IFNAME });
    // Coming back in: table PUBLIC_TABLE (the region's /32s, added with the zone uplinks).
    rules.push({ namespace: rr, iif: PUBLIC_UPLINK_IFNAME, table: PUBLIC_TABLE, priority: PUBLIC_RULE_PRIORITY });
    unreachable.push({ namespace: rr, destination: PUBLIC_NET, table: PUBLIC_TABLE });
    for (const h of hosts.filter((x) => x.regionRouter === rr)) {
      routes.push({ namespace: publicRouter, destination: `${h.publicAddress}/32`, via: addrOf(rrAddr), dev: pubIf });
    }
  });

  return { deploymentId: deployment.id, deploymentIndex: d, publicRouter, namespaces, bridges, links, addresses, routes, unreachable, rules, hosts };
}

// ---------------------------------------------------------------------------------------------
// A small forwarding simulator over the model, so the routes can be checked without a kernel.

interface SimIface {
  namespace: string;
  ifname: string;
  address: number | null;
  subnet: Cidr | null;
  /** The subnet is a connected route (not for /32s, e.g. a public address on lo). */
  connected: boolean;
  segment: string;
}

function simInterfaces(t: DeploymentTopology): SimIface[] {
  const out: SimIface[] = [];
  for (const b of t.bridges) {
    out.push({
      namespace: b.namespace,
      ifname: b.name,
      address: ipToInt(b.address.split("/")[0] as string),
      subnet: parseCidr(b.address),
      connected: true,
      segment: `${b.namespace}/${b.name}`,
    });
  }
  t.links.forEach((l, i) => {
    const seg = l.a.bridge !== undefined ? `${l.a.namespace}/${l.a.bridge}` : `link${i}`;
    for (const end of [l.a, l.b]) {
      if (end.bridge !== undefined) continue; // a bridge port has no address of its own
      const subnet = end.address ? parseCidr(end.address) : null;
      out.push({
        namespace: end.namespace,
        ifname: end.ifname,
        address: end.address ? ipToInt(end.address.split("/")[0] as string) : null,
        subnet,
        connected: subnet !== null && subnet.prefix < 32,
        segment: seg,
      });
    }
  });
  for (const a of t.addresses) {
    const subnet = parseCidr(a.address);
    out.push({
      namespace: a.namespace,
      ifname: a.dev,
      address: ipToInt(a.address.split("/")[0] as string),
      subnet,
      connected: subnet.prefix < 32,
      segment: `${a.namespace}/${a.dev}`,
    });
  }
  return out;
}

interface SimHop {
  /** Interface the packet leaves by, and the segment it is on. */
  dev: string;
  segment: string;
  nextHop: number;
  /** Source address a packet sent from this namespace would get. */
  src: number | null;
}

/** Longest-prefix match in one table of one namespace (null: main, with the connected routes). */
function simTableLookup(t: DeploymentTopology, ifaces: SimIface[], ns: string, table: number | null, dst: number): SimHop | "unreachable" | null {
  type Choice = { prefix: number; hop: SimHop | "unreachable" };
  const choices: Choice[] = [];
  if (table === null) {
    for (const i of ifaces) {
      if (i.namespace === ns && i.connected && i.subnet && cidrContains(i.subnet, dst)) {
        choices.push({ prefix: i.subnet.prefix, hop: { dev: i.ifname, segment: i.segment, nextHop: dst, src: i.address } });
      }
    }
  }
  for (const r of t.routes) {
    if (r.namespace !== ns || (r.table ?? null) !== table) continue;
    const c = r.destination === "default" ? parseCidr("0.0.0.0/0") : parseCidr(r.destination);
    if (!cidrContains(c, dst)) continue;
    const via = ipToInt(r.via);
    const out = ifaces.find((i) => i.namespace === ns && i.ifname === r.dev && i.connected);
    if (!out || !out.subnet || !cidrContains(out.subnet, via)) throw new Error(`route ${r.destination} via ${r.via} in ${ns}: gateway not on ${r.dev}`);
    let src = out.address;
    if (r.src !== undefined) {
      const s = ipToInt(r.src);
      if (!ifaces.some((i) => i.namespace === ns && i.address === s)) throw new Error(`route ${r.destination} in ${ns}: src ${r.src} is not an address of ${ns}`);
      src = s;
    }
    choices.push({ prefix: c.prefix, hop: { dev: r.dev, segment: out.segment, nextHop: via, src } });
  }
  for (const u of t.unreachable) {
    if (u.namespace !== ns || u.table !== table) continue;
    const c = parseCidr(u.destination);
    if (cidrContains(c, dst)) choices.push({ prefix: c.prefix, hop: "unreachable" });
  }
  choices.sort((a, b) => b.prefix - a.prefix);
  return choices[0]?.hop ?? null;
}

/** The kernel's lookup: local addresses, then rules by priority (iif match), then the main table. */
function simLookup(t: DeploymentTopology, ifaces: SimIface[], ns: string, iif: string | null, dst: number): SimHop | "local" {
  if (ifaces.some((i) => i.namespace === ns && i.address === dst)) return "local";
  const tables: (number | null)[] = [
    ...t.rules
      .filter((r) => r.namespace === ns && r.iif === iif)
      .sort((a, b) => a.priority - b.priority)
      .map((r) => r.table),
    null,
  ];
  for (const table of tables) {
    const hop = simTableLookup(t, ifaces, ns, table, dst);
    if (hop === "unreachable") throw new Error(`${ns}: ${intToIp(dst)} is unreachable (table ${table ?? "main"}, iif ${iif ?? "local"})`);
    if (hop) return hop;
  }
  throw new Error(`${ns}: no route to ${intToIp(dst)}`);
}

export interface SimFlow {
  /** Namespaces crossed in order (first = source, last = destination's namespace). */
  path: string[];
  /** Source address the sender's kernel picks (the route's `src`, else its outgoing interface's address). */
  source: string;
}

/**
 * Follows the model's routing (addresses, rules, tables) from `fromNamespace` to `destination`,
 * as a packet sent from that namespace would travel.
 */
export function simulateFlow(t: DeploymentTopology, fromNamespace: string, destination: string): SimFlow {
  const ifaces = simInterfaces(t);
  const dst = ipToInt(destination);
  const path = [fromNamespace];
  let ns = fromNamespace;
  let iif: string | null = null;
  let source: number | null = null;
  for (let guard = 0; guard < 32; guard++) {
    const hop = simLookup(t, ifaces, ns, iif, dst);
    if (hop === "local") {
      if (source === null) source = dst;
      return { path, source: intToIp(source) };
    }
    if (source === null) {
      if (hop.src === null) throw new Error(`${ns}: no source address on ${hop.dev}`);
      source = hop.src;
    }
    const next = ifaces.find((i) => i.segment === hop.segment && i.address === hop.nextHop && i.namespace !== ns);
    if (!next) throw new Error(`${ns}: next hop ${intToIp(hop.nextHop)} for ${destination} is not on the segment`);
    ns = next.namespace;
    iif = next.ifname;
    path.push(ns);
  }
  throw new Error(`routing loop from ${fromNamespace} to ${destination}`);
}

/** Namespaces crossed from `fromNamespace` to `destination` (see simulateFlow). */
export function simulatePath(t: DeploymentTopology, fromNamespace: string, destination: string): string[] {
  return simulateFlow(t, fromNamespace, destination).path;
}

function hostsByRole(t: DeploymentTopology, fromRole: string, toRole: string): [TopoHost, TopoHost] {
  const a = t.hosts.find((h) => h.role === fromRole);
  const b = t.hosts.find((h) => h.role === toRole);
  if (!a || !b) throw new Error(`unknown role ${!a ? fromRole : toRole}`);
  return [a, b];
}

/** The address of `host` a peer measures to over `path`. */
export function addressOver(host: TopoHost, path: NetworkPath): string {
  return path === "public" ? host.publicAddress : host.dataAddress;
}

/** Routers crossed from one host to another's private (default) or public address (0 = same L2 rack). */
export function routedHops(t: DeploymentTopology, fromRole: string, toRole: string, path: NetworkPath = "private"): number {
  const [a, b] = hostsByRole(t, fromRole, toRole);
  return simulatePath(t, a.namespace, addressOver(b, path)).length - 2;
}

export interface SimRoundTrip {
  /** Request: client → server's address over the path. */
  there: SimFlow;
  /** Reply: server → the source address the client's request carried. */
  back: SimFlow;
}

/** A request and its reply through the model: shows whether the path is symmetric. */
export function simulateRoundTrip(t: DeploymentTopology, fromRole: string, toRole: string, path: NetworkPath): SimRoundTrip {
  const [a, b] = hostsByRole(t, fromRole, toRole);
  const there = simulateFlow(t, a.namespace, addressOver(b, path));
  return { there, back: simulateFlow(t, b.namespace, there.source) };
}

/** All interface names the model creates, with their namespace (for length checks). */
export function interfaceNames(t: DeploymentTopology): { namespace: string; ifname: string }[] {
  return [
    ...t.bridges.map((b) => ({ namespace: b.namespace, ifname: b.name })),
    ...t.links.flatMap((l) => [l.a, l.b].map((e) => ({ namespace: e.namespace, ifname: e.ifname }))),
  ];
}

