import { describe, expect, it } from "vitest";
import type { ResolvedHost } from "../../../../src/dsl/placement.ts";
import { ShapingStatusSchema } from "../../../../src/results/schema.ts";
import { LATENCY_MODEL, regionPairRtt } from "../../../../src/targets/local/model/latencyModel.ts";
import { deploymentModelEntries, hostPairModelRtt } from "../../../../src/targets/local/model/modelEntries.ts";
import { peerDelays } from "../../../../src/targets/local/network/shaping.ts";
import type { TopoHost } from "../../../../src/targets/local/network/topology.ts";

/**
 * results.json's shaping.model on the local target: the entries its pairs used, not the fixed
 * table — a cross-region pair's published figure and source (Microsoft's round-trip table),
 * every entry's spread — so "sources in results.json" holds the figures the run applied.
 */

const spec = (role: string, s: Partial<ResolvedHost> = {}): ResolvedHost => ({ role, region: "uksouth", zone: "1", ppg: null, availabilitySet: null, size: "Standard_D2s_v5", accelnet: false, vnet: null, ...s });
const topo = (specs: ResolvedHost[]) => ({ hosts: specs.map((s) => ({ spec: s })) });

describe("the model entries a local run records", () => {
  it("a cross-region pair records Microsoft's published figure for its regions, with its source and spread — the table's fallback row is not it", () => {
    const entries = deploymentModelEntries([topo([spec("a"), spec("b", { region: "ukwest", zone: null })])]);
    const published = regionPairRtt("uksouth", "ukwest");
    expect(published.basis).toBe("published");
    expect(entries).toEqual([{ pathKind: "cross-region", accelnet: false, rttUs: published.rttUs, source: published.source, spread: published.spread }]);
    expect(LATENCY_MODEL.some((m) => m.rttUs === published.rttUs && m.source === published.source)).toBe(false);
    expect(ShapingStatusSchema.shape.model.parse(entries)![0]!.spread).toEqual(published.spread);
  });

  it("one entry per distinct pair row used, only between hosts of one deployment (the ones that delay each other), as peerDelays applies them", () => {
    const d0 = [spec("c", { ppg: "p", accelnet: true }), spec("s", { ppg: "p", accelnet: true }), spec("z2", { zone: "2", accelnet: true })];
    const d1 = [spec("x", { zone: "2" }), spec("y", { zone: "2" })];
    const entries = deploymentModelEntries([topo(d0), topo(d1)]);
    expect(entries.map((m) => `${m.pathKind}/${m.accelnet}`).sort()).toEqual(["cross-zone/true", "same-ppg/true", "same-zone/false"]);
    // The same rows the delays come from: each peer's RTT is an entry's.
    const hosts = d0.map((s, i) => ({ spec: s, role: s.role, namespace: `n${i}`, dataAddress: `10.0.0.${i}` }) as unknown as TopoHost);
    for (const h of hosts) for (const p of peerDelays(h, hosts)) expect(entries.map((m) => m.rttUs)).toContain(p.rttUs);
    // Accelerated Networking's row only when both ends have it.
    expect(hostPairModelRtt(d0[0]!, spec("o", { ppg: "p" })).accelnet).toBe(false);
  });
});
