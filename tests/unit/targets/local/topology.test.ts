import { describe, expect, it } from "vitest";
import type { PathKind } from "../../../../src/plan/types.ts";
import { IFNAMSIZ_MAX, ipToInt, parseCidr, cidrContains, runNames } from "../../../../src/targets/local/names.ts";
import {
  buildDeploymentTopology,
  interfaceNames,
  pathKindBetween,
  routedHops,
  simulatePath,
} from "../../../../src/targets/local/topology.ts";
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
      { id: "d1", index: 1, variant: "v", replica: 0, hosts: [host("a"), host("r1", { zone: null }), host("r2", { zone: null })] },
      names,
    );
    expect(routedHops(t, "a", "r1")).toBe(3);
    expect(routedHops(t, "r1", "r2")).toBe(1);
  });

  it("uses unique addresses from the right ranges", () => {
    const data = parseCidr("198.18.0.0/16");
    const transit = parseCidr("198.19.0.0/17");
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
    const t = buildDeploymentTopology({ id: "d", index: 0, variant: "v", replica: 0, hosts: [host("a b"), host("a_b")] }, names);
    expect(new Set(t.hosts.map((h) => h.namespace)).size).toBe(2);
    expect(new Set(t.hosts.map((h) => h.hostname)).size).toBe(2);
  });
});
