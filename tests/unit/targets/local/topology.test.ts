import { describe, expect, it } from "vitest";
import type { PathKind } from "../../../../src/plan/types.ts";
import {
  cidrContains,
  cidrOverlaps,
  DATA_NET,
  IFNAMSIZ_MAX,
  ipToInt,
  MGMT_NET,
  parseCidr,
  PUBLIC_NET,
  runNames,
  TRANSIT_NET,
} from "../../../../src/targets/local/network/names.ts";
import {
  buildDeploymentTopology,
  interfaceNames,
  pathKindBetween,
  PUBLIC_RULE_PRIORITY,
  PUBLIC_TABLE,
  routedHops,
  simulatePath,
  simulateRoundTrip,
} from "../../../../src/targets/local/network/topology.ts";
import { peerDelays } from "../../../../src/targets/local/network/shaping.ts";
import { fiveHostDeployment, host } from "./fixtures.ts";

const names = runNames("unit-run");
const topo = buildDeploymentTopology(fiveHostDeployment(), names);
const byRole = (role: string) => {
  const h = topo.hosts.find((x) => x.role === role);
  if (!h) throw new Error(role);
  return h;
};

describe("path kinds", () => {
  it("classifies placements", () => {
    const a = host("a", { ppg: "p" });
    expect(pathKindBetween(a, host("b", { ppg: "p" }))).toBe<PathKind>("same-ppg");
    expect(pathKindBetween(a, host("b"))).toBe<PathKind>("same-zone");
    expect(pathKindBetween(a, host("b", { zone: "2" }))).toBe<PathKind>("cross-zone");
    expect(pathKindBetween(a, host("b", { zone: null }))).toBe<PathKind>("same-region");
    expect(pathKindBetween(host("a", { zone: null }), host("b", { zone: null }))).toBe<PathKind>("same-region");
    expect(pathKindBetween(a, host("b", { region: "ukwest" }))).toBe<PathKind>("cross-region");
  });
});

describe("deployment topology", () => {
  it("has one namespace per host and per router", () => {
    const kinds = topo.namespaces.map((n) => n.kind);
    expect(kinds.filter((k) => k === "host")).toHaveLength(5);
    // uksouth zone 1, uksouth zone 2, ukwest regional
    expect(kinds.filter((k) => k === "zone-router")).toHaveLength(3);
    expect(kinds.filter((k) => k === "region-router")).toHaveLength(2);
    expect(kinds.filter((k) => k === "public-router")).toHaveLength(1);
    expect(topo.namespaces.filter((n) => n.forwarding).map((n) => n.kind)).not.toContain("host");
    expect(new Set(topo.namespaces.map((n) => n.name)).size).toBe(topo.namespaces.length);
    for (const n of topo.namespaces) expect(n.name.startsWith(names.namespacePrefix)).toBe(true);
    expect(byRole("client").namespace).toBe(`${names.namespacePrefix}0-client`);
    expect(topo.namespaces.find((n) => n.kind === "zone-router")?.name).toBe(`${names.namespacePrefix}0-_zr-uksouth-1`);
  });

  it("puts PPG members on one rack bridge and others on racks of their own, bridges in routers", () => {
    expect(byRole("client").rack).toBe(byRole("server").rack);
    expect(byRole("zone1").rack).not.toBe(byRole("client").rack);
    expect(byRole("zone1").zoneRouter).toBe(byRole("client").zoneRouter);
    expect(topo.bridges).toHaveLength(4);
    const routers = new Set(topo.namespaces.filter((n) => n.kind === "zone-router").map((n) => n.name));
    for (const b of topo.bridges) expect(routers.has(b.namespace)).toBe(true);
  });

  it("gives routed hop counts 0 / 1 / 3 / 4 per path kind", () => {
    expect(routedHops(topo, "client", "server")).toBe(0); // same-ppg
    expect(routedHops(topo, "client", "zone1")).toBe(1); // same-zone
    expect(routedHops(topo, "client", "zone2")).toBe(3); // cross-zone
    expect(routedHops(topo, "client", "west")).toBe(4); // cross-region
    expect(routedHops(topo, "west", "zone2")).toBe(4);
    // and back again: the routes are symmetric
    for (const a of topo.hosts) for (const b of topo.hosts) if (a !== b) expect(routedHops(topo, a.role, b.role)).toBe(routedHops(topo, b.role, a.role));
    const path = simulatePath(topo, byRole("client").namespace, byRole("west").dataAddress);
    expect(path.map((p) => p.slice(names.namespacePrefix.length))).toEqual(["0-client", "0-_zr-uksouth-1", "0-_rr-uksouth", "0-_rr-ukwest", "0-_zr-ukwest-regional", "0-west"]);
  });

  it("gives a regional host (no zone) in a zoned region 3 hops to zonal hosts, 1 to another regional host", () => {
    const t = buildDeploymentTopology(
      { id: "d1", index: 1, variant: "v", variants: ["v"], replica: 0, hosts: [host("a"), host("r1", { zone: null }), host("r2", { zone: null })] },
      names,
    );
    expect(routedHops(t, "a", "r1")).toBe(3);
    expect(routedHops(t, "r1", "r2")).toBe(1);
  });

  it("uses unique addresses from the right ranges", () => {
    const data = parseCidr("198.18.0.0/16");
    const transit = parseCidr("198.19.0.0/18");
    const hostAddrs = topo.hosts.map((h) => h.dataAddress);
    expect(new Set(hostAddrs).size).toBe(hostAddrs.length);
    for (const a of hostAddrs) expect(cidrContains(data, ipToInt(a))).toBe(true);
    const all = [
      ...topo.bridges.map((b) => b.address.split("/")[0] as string),
      ...topo.links.flatMap((l) => [l.a.address, l.b.address]).filter((a): a is string => a !== undefined).map((a) => a.split("/")[0] as string),
    ];
    expect(new Set(all).size).toBe(all.length);
    for (const l of topo.links.filter((x) => x.kind !== "rack-port")) {
      for (const e of [l.a, l.b]) expect(cidrContains(transit, ipToInt((e.address ?? "").split("/")[0] as string))).toBe(true);
    }
  });

  it("keeps every interface name within 15 characters", () => {
    for (const { ifname } of interfaceNames(topo)) expect(ifname.length).toBeLessThanOrEqual(IFNAMSIZ_MAX);
    // many hosts, many zones
    const big = buildDeploymentTopology(
      {
        id: "big",
        index: 99,
        variant: "v",
        variants: ["v"],
        replica: 0,
        hosts: Array.from({ length: 120 }, (_, i) => host(`h${i}`, { region: `r${i % 7}x`, zone: (["1", "2", "3", null] as const)[i % 4] ?? null })),
      },
      names,
    );
    for (const { ifname } of interfaceNames(big)) expect(ifname.length).toBeLessThanOrEqual(IFNAMSIZ_MAX);
    expect(routedHops(big, "h0", "h119")).toBeGreaterThan(0);
  });

  it("names differ between two run ids (no collisions when both are up)", () => {
    const other = buildDeploymentTopology(fiveHostDeployment(), runNames("unit-run-2"));
    const mine = new Set(topo.namespaces.map((n) => n.name));
    for (const n of other.namespaces) expect(mine.has(n.name)).toBe(false);
  });

  it("keeps two roles that sanitise alike apart", () => {
    const t = buildDeploymentTopology({ id: "d", index: 0, variant: "v", variants: ["v"], replica: 0, hosts: [host("a b"), host("a_b")] }, names);
    expect(new Set(t.hosts.map((h) => h.namespace)).size).toBe(2);
    expect(new Set(t.hosts.map((h) => h.hostname)).size).toBe(2);
  });
});

describe("public path", () => {
  // Every path kind between `client` and a peer: same-ppg, same-zone, cross-zone, same-region, cross-region.
  const deployment = {
    id: "d3",
    index: 3,
    variant: "v",
    variants: ["v"],
    replica: 0,
    hosts: [
      host("client", { ppg: "rack-a" }),
      host("server", { ppg: "rack-a" }),
      host("zone1"),
      host("zone2", { zone: "2" }),
      host("regional", { zone: null }),
      host("west", { region: "ukwest", zone: null }),
    ],
  };
  const t = buildDeploymentTopology(deployment, names);
  const h = (role: string) => {
    const x = t.hosts.find((y) => y.role === role);
    if (!x) throw new Error(role);
    return x;
  };
  const peers = ["server", "zone1", "zone2", "regional", "west"];

  it("gives every host a unique public /32 from 198.19.64.0/18, apart from every other block", () => {
    const pub = parseCidr(PUBLIC_NET);
    const addrs = t.hosts.map((x) => x.publicAddress);
    expect(new Set(addrs).size).toBe(addrs.length);
    for (const a of addrs) expect(cidrContains(pub, ipToInt(a))).toBe(true);
    expect(PUBLIC_NET).toBe("198.19.64.0/18");
    const blocks = [DATA_NET, TRANSIT_NET, PUBLIC_NET, MGMT_NET].map(parseCidr);
    for (const b of blocks) expect(cidrContains(parseCidr("198.18.0.0/15"), b.network)).toBe(true);
    blocks.forEach((a, i) => blocks.forEach((b, j) => i !== j && expect(cidrOverlaps(a, b)).toBe(false)));
    // On the host's lo, not on a link; no other address of the fabric is public.
    for (const x of t.hosts) expect(t.addresses).toContainEqual({ namespace: x.namespace, dev: "lo", address: `${x.publicAddress}/32` });
    const linkAddrs = t.links.flatMap((l) => [l.a.address, l.b.address]).filter((a): a is string => a !== undefined);
    for (const a of [...linkAddrs, ...t.bridges.map((b) => b.address)]) expect(cidrContains(pub, ipToInt(a.split("/")[0] as string))).toBe(false);
    // Unique within a deployment, and the same plan in every deployment (each is its own fabric).
    expect(buildDeploymentTopology({ ...deployment, index: 4 }, names).hosts.map((x) => x.publicAddress)).toEqual(addrs);
  });

  it("has one public router per deployment, linked to every region router", () => {
    const pubs = t.namespaces.filter((n) => n.kind === "public-router");
    expect(pubs.map((n) => n.name)).toEqual([`${names.namespacePrefix}3-_pub`]);
    expect(pubs[0]?.forwarding).toBe(true);
    expect(t.publicRouter).toBe(pubs[0]?.name);
    const uplinks = t.links.filter((l) => l.kind === "public-uplink");
    const regionRouters = t.namespaces.filter((n) => n.kind === "region-router").map((n) => n.name);
    expect(uplinks.map((l) => l.b.namespace).sort()).toEqual([...regionRouters].sort());
    for (const l of uplinks) expect(l.a.namespace).toBe(t.publicRouter);
    expect(topo.namespaces.filter((n) => n.kind === "public-router").map((n) => n.name)).toEqual([`${names.namespacePrefix}0-_pub`]);
    expect(topo.publicRouter).not.toBe(t.publicRouter);
  });

  it("crosses more routers over public than private for every path kind: 5 against 0 / 1 / 3 / 3 / 4", () => {
    const kinds = peers.map((p) => pathKindBetween(h("client").spec, h(p).spec));
    expect(kinds).toEqual<PathKind[]>(["same-ppg", "same-zone", "cross-zone", "same-region", "cross-region"]);
    const hops = peers.map((p) => [routedHops(t, "client", p, "private"), routedHops(t, "client", p, "public")]);
    expect(hops).toEqual([
      [0, 5],
      [1, 5],
      [3, 5],
      [3, 5],
      [4, 5],
    ]);
    for (const [priv, pub] of hops) expect(pub).toBeGreaterThan(priv as number);
    // and for every ordered pair of hosts
    for (const a of t.hosts) {
      for (const b of t.hosts) {
        if (a === b) continue;
        expect(routedHops(t, a.role, b.role, "public"), `${a.role} → ${b.role}`).toBeGreaterThan(routedHops(t, a.role, b.role, "private"));
      }
    }
  });

  it("goes out through the region router to the public router and back in", () => {
    const short = (p: string[]) => p.map((n) => n.slice(names.namespacePrefix.length));
    expect(short(simulatePath(t, h("client").namespace, h("zone1").publicAddress))).toEqual([
      "3-client",
      "3-_zr-uksouth-1",
      "3-_rr-uksouth",
      "3-_pub",
      "3-_rr-uksouth",
      "3-_zr-uksouth-1",
      "3-zone1",
    ]);
    expect(short(simulatePath(t, h("client").namespace, h("west").publicAddress))).toEqual([
      "3-client",
      "3-_zr-uksouth-1",
      "3-_rr-uksouth",
      "3-_pub",
      "3-_rr-ukwest",
      "3-_zr-ukwest-regional",
      "3-west",
    ]);
    // The private path never touches the public router; the public path always does.
    for (const a of t.hosts) {
      for (const b of t.hosts) {
        if (a === b) continue;
        expect(simulatePath(t, a.namespace, b.dataAddress)).not.toContain(t.publicRouter);
        expect(simulatePath(t, a.namespace, b.publicAddress)).toContain(t.publicRouter);
      }
    }
  });

  it("is symmetric: requests leave from the client's public address and replies come back the same way", () => {
    for (const p of peers) {
      const pub = simulateRoundTrip(t, "client", p, "public");
      expect(pub.there.source).toBe(h("client").publicAddress);
      expect(pub.back.source).toBe(h(p).publicAddress);
      expect(pub.back.path).toEqual([...pub.there.path].reverse());
      const priv = simulateRoundTrip(t, "client", p, "private");
      expect(priv.there.source).toBe(h("client").dataAddress);
      expect(priv.back.path).toEqual([...priv.there.path].reverse());
    }
    // The route that makes it so: PUBLIC_NET via the rack gateway, src = own public address.
    for (const x of t.hosts) {
      expect(t.routes).toContainEqual({ namespace: x.namespace, destination: PUBLIC_NET, via: x.gateway, dev: "eth0", src: x.publicAddress });
    }
  });

  it("keeps the public router out of the private space, and stops unknown public addresses", () => {
    expect(() => simulatePath(t, t.publicRouter, h("client").dataAddress)).toThrow(/no route/);
    expect(simulatePath(t, t.publicRouter, h("client").publicAddress).at(-1)).toBe(h("client").namespace);
    // An address of PUBLIC_NET nobody has: stops at the edge, no loop.
    expect(() => simulatePath(t, h("client").namespace, "198.19.100.1")).toThrow(/_pub: no route/);
    // A /32 missing below a router is rejected there instead of bouncing back up (no loop).
    const zone1Pub = `${h("zone1").publicAddress}/32`;
    const broken = { ...t, routes: t.routes.filter((r) => !(r.namespace === h("zone1").zoneRouter && r.destination === zone1Pub)) };
    expect(() => simulatePath(broken, h("client").namespace, h("zone1").publicAddress)).toThrow(/_zr-uksouth-1: .* is unreachable \(table 100, iif up0\)/);
    // Traffic coming down into a zone router is looked up in the public table first.
    const zr = h("client").zoneRouter;
    expect(t.rules).toContainEqual({ namespace: zr, iif: "up0", table: PUBLIC_TABLE, priority: PUBLIC_RULE_PRIORITY });
    expect(t.unreachable).toContainEqual({ namespace: zr, destination: PUBLIC_NET, table: PUBLIC_TABLE });
  });

  it("records which PPG each rack stands for, and which region/zone each router", () => {
    expect(t.bridges.find((b) => `${b.namespace}/${b.name}` === h("client").rack)?.ppg).toBe("rack-a");
    expect(t.bridges.find((b) => `${b.namespace}/${b.name}` === h("zone1").rack)?.ppg).toBeNull();
    expect(t.namespaces.find((n) => n.name === h("zone2").zoneRouter)).toMatchObject({ kind: "zone-router", region: "uksouth", zone: "2" });
    expect(t.namespaces.find((n) => n.name === h("west").zoneRouter)).toMatchObject({ kind: "zone-router", region: "ukwest", zone: null });
    expect(t.namespaces.find((n) => n.name === h("west").regionRouter)).toMatchObject({ kind: "region-router", region: "ukwest" });
  });
});

describe("two VNets of one region (seed 002: peered VNets)", () => {
  // Server and `same` in VNet b, client in VNet a, `plain` in the region's default VNet; no zones, as public-vs-peered.
  const deployment = {
    id: "d5",
    index: 5,
    variant: "v",
    variants: ["v"],
    replica: 0,
    hosts: [
      host("server", { region: "northeurope", zone: null, vnet: "b" }),
      host("client", { region: "northeurope", zone: null, vnet: "a" }),
      host("same", { region: "northeurope", zone: null, vnet: "b" }),
      host("plain", { region: "northeurope", zone: null }),
    ],
  };
  const t = buildDeploymentTopology(deployment, names);
  const short = (ns: string) => ns.slice(names.namespacePrefix.length);

  it("makes each VNet its own routed network: a region router per VNet, with its own zone routers and racks", () => {
    expect(t.namespaces.filter((n) => n.kind === "region-router").map((n) => [short(n.name), n.region, n.vnet])).toEqual([
      ["5-_rr-northeurope-b", "northeurope", "b"],
      ["5-_rr-northeurope-a", "northeurope", "a"],
      // The default VNet keeps the name it had before VNets could be named.
      ["5-_rr-northeurope", "northeurope", null],
    ]);
    expect(t.namespaces.filter((n) => n.kind === "zone-router").map((n) => [short(n.name), n.vnet])).toEqual([
      ["5-_zr-northeurope-b-regional", "b"],
      ["5-_zr-northeurope-a-regional", "a"],
      ["5-_zr-northeurope-regional", null],
    ]);
    const h = (role: string) => t.hosts.find((x) => x.role === role)!;
    expect(h("server").regionRouter).toBe(h("same").regionRouter);
    expect(h("client").regionRouter).not.toBe(h("server").regionRouter);
  });

  it("joins the VNets pairwise by peering links, and routes the private path through them", () => {
    expect(t.links.filter((l) => l.kind === "peering").map((l) => `${short(l.a.namespace)} ${short(l.b.namespace)}`)).toEqual([
      "5-_rr-northeurope-b 5-_rr-northeurope-a",
      "5-_rr-northeurope-b 5-_rr-northeurope",
      "5-_rr-northeurope-a 5-_rr-northeurope",
    ]);
    expect(t.links.some((l) => l.kind === "inter-region")).toBe(false);
    const server = t.hosts.find((x) => x.role === "server")!;
    expect(simulatePath(t, t.hosts.find((x) => x.role === "client")!.namespace, server.dataAddress).map(short)).toEqual([
      "5-client",
      "5-_zr-northeurope-a-regional",
      "5-_rr-northeurope-a",
      "5-_rr-northeurope-b",
      "5-_zr-northeurope-b-regional",
      "5-server",
    ]);
    expect(routedHops(t, "client", "server")).toBe(4); // across the peering
    expect(routedHops(t, "same", "server")).toBe(1); // one VNet, one (regional) zone router
    expect(routedHops(t, "plain", "server")).toBe(4);
    for (const a of t.hosts) for (const b of t.hosts) if (a !== b) expect(routedHops(t, a.role, b.role)).toBe(routedHops(t, b.role, a.role));
  });

  it("keeps the public path as it is: out to the public router and back, 5 hops, symmetric", () => {
    expect(routedHops(t, "client", "server", "public")).toBe(5);
    const rt = simulateRoundTrip(t, "client", "server", "public");
    expect(rt.back.path).toEqual([...rt.there.path].reverse());
    expect(rt.there.path.map(short)).toContain("5-_pub");
  });

  it("shapes by placement only: a peered pair gets the same modelled latency as a pair in one VNet", () => {
    const server = t.hosts.find((x) => x.role === "server")!;
    const delays = peerDelays(server, t.hosts);
    expect(delays.map((d) => [d.peerRole, d.pathKind, d.rttUs])).toEqual([
      ["client", "same-region", 313],
      ["same", "same-region", 313],
      ["plain", "same-region", 313],
    ]);
  });
});
