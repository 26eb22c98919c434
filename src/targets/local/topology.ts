import type { ResolvedHost } from "../../dsl/placement.ts";
import type { Deployment, PathKind } from "../../plan/types.ts";
import {
  assertIfname,
  cidrContains,
  DATA_NET,
  hostLabel,
  hostNamespace,
  intToIp,
  ipToInt,
  parseCidr,
  regionRouterNamespace,
  sanitizeRole,
  TRANSIT_NET,
  zoneRouterNamespace,
} from "./names.ts";
import type { RunNames } from "./names.ts";

/**
 * The emulated fabric of one deployment, as data. Pure: no command is run here.
 *
 *   host ─ eth0 ══ rack bridge (in its zone router) ── zone router ── up0 ══ zN ── region router ── xM ══ xK ── other region router
 *
 * - A host is a namespace with one data interface (eth0) on a rack bridge.
 * - Hosts sharing a PPG (in the same zone, or both regional) share one rack; a host without a
 *   PPG gets a rack of its own.
 * - A zone router namespace holds the bridges of its racks and routes between them. Hosts of a
 *   region without a zone hang off one "regional" router, which stands in for a zone router.
 * - One region router per region links its zone routers; region routers are linked pairwise.
 *
 * Routed hops (routers a packet crosses): same rack 0, same zone router 1, same region 3
 * (zone router, region router, zone router), other region 4.
 */

export type NamespaceKind = "host" | "zone-router" | "region-router";

export interface TopoNamespace {
  name: string;
  kind: NamespaceKind;
  /** Routers forward (net.ipv4.ip_forward=1); hosts do not. */
  forwarding: boolean;
}

export interface TopoBridge {
  namespace: string;
  name: string;
  /** Gateway address of the rack, on the bridge itself (CIDR). */
  address: string;
  /** The rack's subnet. */
  subnet: string;
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
  kind: "rack-port" | "zone-uplink" | "inter-region";
  /** The end created first (`ip -n <a.namespace> link add <a.ifname> type veth peer …`). */
  a: LinkEnd;
  b: LinkEnd;
}

export interface TopoRoute {
  namespace: string;
  /** CIDR or "default". */
  destination: string;
  via: string;
  dev: string;
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
  rack: string;
  zoneRouter: string;
  regionRouter: string;
}

export interface DeploymentTopology {
  deploymentId: string;
  deploymentIndex: number;
  namespaces: TopoNamespace[];
  bridges: TopoBridge[];
  links: TopoLink[];
  routes: TopoRoute[];
  hosts: TopoHost[];
}

export const DATA_IFNAME = "eth0";
export const MGMT_IFNAME = "mgmt0";
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
  zone: string | null;
  namespace: string;
  racks: { key: string; hosts: number[] }[];
}

export function buildDeploymentTopology(deployment: Deployment, names: RunNames): DeploymentTopology {
  const d = deployment.index;
  const namespaces: TopoNamespace[] = [];
  const bridges: TopoBridge[] = [];
  const links: TopoLink[] = [];
  const routes: TopoRoute[] = [];

  // Regions and zone groups, in order of first appearance.
  const regions: string[] = [];
  const zones: ZoneGroup[] = [];
  deployment.hosts.forEach((h, i) => {
    if (!regions.includes(h.region)) regions.push(h.region);
    const zkey = `${h.region}/${h.zone ?? "regional"}`;
    let z = zones.find((g) => g.key === zkey);
    if (!z) {
      z = { key: zkey, region: h.region, zone: h.zone, namespace: zoneRouterNamespace(names, d, h.region, h.zone), racks: [] };
      zones.push(z);
    }
    const rkey = h.ppg !== null ? `ppg:${h.ppg}` : `host:${i}`;
    let rack = z.racks.find((r) => r.key === rkey);
    if (!rack) {
      rack = { key: rkey, hosts: [] };
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

  for (const r of regions) namespaces.push({ name: regionRouterNamespace(names, d, r), kind: "region-router", forwarding: true });
  for (const z of zones) namespaces.push({ name: z.namespace, kind: "zone-router", forwarding: true });
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
      bridges.push({ namespace: z.namespace, name: bridge, address: `${gateway}/24`, subnet });
      subnets.push(subnet);
      rack.hosts.forEach((hi, k) => {
        const spec = deployment.hosts[hi] as ResolvedHost;
        const address = intToIp(net + FIRST_HOST_OCTET + k);
        const port = `p${hi}`;
        assertIfname(port);
        links.push({
          kind: "rack-port",
          a: { namespace: z.namespace, ifname: port, bridge },
          b: { namespace: hostNs[hi] as string, ifname: DATA_IFNAME, address: `${address}/24` },
        });
        routes.push({ namespace: hostNs[hi] as string, destination: "default", via: gateway, dev: DATA_IFNAME });
        hosts.push({
          role: spec.role,
          hostname: hostnames[hi] as string,
          namespace: hostNs[hi] as string,
          spec,
          index: hi,
          dataIfname: DATA_IFNAME,
          dataAddress: address,
          dataCidr: `${address}/24`,
          gateway,
          rack: `${z.namespace}/${bridge}`,
          zoneRouter: z.namespace,
          regionRouter: regionRouterNamespace(names, d, z.region),
        });
      });
    });
    zoneSubnets.set(z.namespace, subnets);
  }
  hosts.sort((a, b) => a.index - b.index);

  // Zone routers up to their region router.
  const regionSubnets = new Map<string, string[]>();
  zones.forEach((z, zi) => {
    const rr = regionRouterNamespace(names, d, z.region);
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
    regionSubnets.set(z.region, [...(regionSubnets.get(z.region) ?? []), ...(zoneSubnets.get(z.namespace) ?? [])]);
  });

  // Region routers, pairwise.
  regions.forEach((ra, i) => {
    regions.forEach((rb, j) => {
      if (j <= i) return;
      const nsA = regionRouterNamespace(names, d, ra);
      const nsB = regionRouterNamespace(names, d, rb);
      const [aAddr, bAddr] = transitPair();
      const ifA = `x${j}`;
      const ifB = `x${i}`;
      assertIfname(ifA);
      assertIfname(ifB);
      links.push({ kind: "inter-region", a: { namespace: nsA, ifname: ifA, address: aAddr }, b: { namespace: nsB, ifname: ifB, address: bAddr } });
      for (const s of regionSubnets.get(rb) ?? []) routes.push({ namespace: nsA, destination: s, via: addrOf(bAddr), dev: ifA });
      for (const s of regionSubnets.get(ra) ?? []) routes.push({ namespace: nsB, destination: s, via: addrOf(aAddr), dev: ifB });
    });
  });

  return { deploymentId: deployment.id, deploymentIndex: d, namespaces, bridges, links, routes, hosts };
}

// ---------------------------------------------------------------------------------------------
// A small forwarding simulator over the model, so the routes can be checked without a kernel.

interface SimIface {
  namespace: string;
  ifname: string;
  address: number | null;
  subnet: ReturnType<typeof parseCidr> | null;
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
      segment: `${b.namespace}/${b.name}`,
    });
  }
  t.links.forEach((l, i) => {
    const seg = l.a.bridge !== undefined ? `${l.a.namespace}/${l.a.bridge}` : `link${i}`;
    for (const end of [l.a, l.b]) {
      if (end.bridge !== undefined) continue; // a bridge port has no address of its own
      out.push({
        namespace: end.namespace,
        ifname: end.ifname,
        address: end.address ? ipToInt(end.address.split("/")[0] as string) : null,
        subnet: end.address ? parseCidr(end.address) : null,
        segment: seg,
      });
    }
  });
  return out;
}

/**
 * Follows the routing tables of the model from `fromNamespace` to `destination`; returns the
 * namespaces crossed in order (first = source, last = destination's namespace).
 */
export function simulatePath(t: DeploymentTopology, fromNamespace: string, destination: string): string[] {
  const ifaces = simInterfaces(t);
  const dst = ipToInt(destination);
  const path = [fromNamespace];
  let ns = fromNamespace;
  for (let guard = 0; guard < 32; guard++) {
    if (ifaces.some((i) => i.namespace === ns && i.address === dst)) return path;
    type Choice = { prefix: number; segment: string; nextHop: number };
    const choices: Choice[] = [];
    for (const i of ifaces) {
      if (i.namespace === ns && i.subnet && cidrContains(i.subnet, dst)) choices.push({ prefix: i.subnet.prefix, segment: i.segment, nextHop: dst });
    }
    for (const r of t.routes) {
      if (r.namespace !== ns) continue;
      const c = r.destination === "default" ? parseCidr("0.0.0.0/0") : parseCidr(r.destination);
      if (!cidrContains(c, dst)) continue;
      const via = ipToInt(r.via);
      const out = ifaces.find((i) => i.namespace === ns && i.ifname === r.dev);
      if (!out || !out.subnet || !cidrContains(out.subnet, via)) throw new Error(`route ${r.destination} via ${r.via} in ${ns}: gateway not on ${r.dev}`);
      choices.push({ prefix: c.prefix, segment: out.segment, nextHop: via });
    }
    choices.sort((a, b) => b.prefix - a.prefix);
    const best = choices[0];
    if (!best) throw new Error(`${ns}: no route to ${destination}`);
    const next = ifaces.find((i) => i.segment === best.segment && i.address === best.nextHop && i.namespace !== ns);
    if (!next) throw new Error(`${ns}: next hop ${intToIp(best.nextHop)} for ${destination} is not on the segment`);
    ns = next.namespace;
    path.push(ns);
  }
  throw new Error(`routing loop from ${fromNamespace} to ${destination}`);
}

/** Routers crossed between two hosts of the model (0 = same L2 rack). */
export function routedHops(t: DeploymentTopology, fromRole: string, toRole: string): number {
  const a = t.hosts.find((h) => h.role === fromRole);
  const b = t.hosts.find((h) => h.role === toRole);
  if (!a || !b) throw new Error(`unknown role ${!a ? fromRole : toRole}`);
  return simulatePath(t, a.namespace, b.dataAddress).length - 2;
}

/** All interface names the model creates, with their namespace (for length checks). */
export function interfaceNames(t: DeploymentTopology): { namespace: string; ifname: string }[] {
  return [
    ...t.bridges.map((b) => ({ namespace: b.namespace, ifname: b.name })),
    ...t.links.flatMap((l) => [l.a, l.b].map((e) => ({ namespace: e.namespace, ifname: e.ifname }))),
  ];
}

