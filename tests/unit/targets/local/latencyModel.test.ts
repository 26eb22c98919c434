import { describe, expect, it } from "vitest";
import { PathKindSchema } from "../../../../src/plan/types.ts";
import { ShapingStatusSchema } from "../../../../src/results/schema.ts";
import { ACCELNET_SAVING_US, bandwidthForSize, LATENCY_MODEL, modelRtt, VM_BANDWIDTH } from "../../../../src/targets/local/model/latencyModel.ts";

describe("latency model", () => {
  it("has one entry with a source for every path kind × accelnet", () => {
    for (const kind of PathKindSchema.options) {
      for (const accelnet of [false, true]) {
        const entries = LATENCY_MODEL.filter((m) => m.pathKind === kind && m.accelnet === accelnet);
        expect(entries, `${kind}/${accelnet}`).toHaveLength(1);
        const e = entries[0];
        expect(e?.source.trim().length).toBeGreaterThan(10);
        expect(e?.rttUs).toBeGreaterThan(0);
      }
    }
    expect(LATENCY_MODEL).toHaveLength(PathKindSchema.options.length * 2);
    expect(ShapingStatusSchema.shape.model.parse(LATENCY_MODEL)).toHaveLength(10);
  });

  it("carries the seed figures", () => {
    expect(modelRtt("same-zone", false, false).rttUs).toBe(850);
    expect(modelRtt("cross-zone", false, false).rttUs).toBe(1425);
    expect(modelRtt("cross-region", false, false, ["uksouth", "ukwest"]).rttUs).toBe(7500);
    expect(modelRtt("same-ppg", true, true).rttUs).toBe(126);
    expect(modelRtt("same-zone", true, true).rttUs).toBe(188);
    expect(modelRtt("same-region", false, false).rttUs).toBe(313);
    expect(modelRtt("same-region", true, true).rttUs).toBeCloseTo(145.8);
  });

  it("derives the rest with the documented rule and says so", () => {
    expect(ACCELNET_SAVING_US).toBe(662);
    for (const [kind, accel] of [["same-ppg", false], ["cross-zone", true], ["cross-region", true]] as const) {
      const e = modelRtt(kind, accel, accel, ["uksouth", "ukwest"]);
      expect(e.source).toMatch(/^derived/);
      const other = modelRtt(kind, !accel, !accel, ["uksouth", "ukwest"]);
      expect(Math.abs(e.rttUs - other.rttUs)).toBe(ACCELNET_SAVING_US);
    }
  });

  it("models a cross-region pair by its regions, from Microsoft's table, with the AccelNet rule on top", () => {
    expect(() => modelRtt("cross-region", false, false)).toThrow(/needs the pair's regions/);
    const plain = modelRtt("cross-region", false, false, ["eastus", "westeurope"]);
    expect(plain.rttUs).toBe(84_000); // (83 + 85) / 2 ms, P50 of the 30 days ending July 30, 2026
    expect(plain.source).toMatch(/^Microsoft, 'Azure network round-trip latency statistics', P50/);
    const accel = modelRtt("cross-region", true, true, ["westeurope", "eastus"]);
    expect(accel.rttUs).toBe(84_000 - ACCELNET_SAVING_US);
    expect(accel.source).toMatch(/^derived: .*84000 − 662, from Microsoft/);
    expect(modelRtt("cross-region", true, false, ["uksouth", "ukwest"]).rttUs).toBe(7500);
  });

  it("uses the accelnet row only when both ends have it", () => {
    expect(modelRtt("same-zone", true, false).accelnet).toBe(false);
    expect(modelRtt("same-zone", true, true).accelnet).toBe(true);
  });
});

describe("VM size → bandwidth", () => {
  it("covers the sizes the seeds and defaults use", () => {
    for (const size of ["Standard_B1s", "Standard_B1ms", "Standard_D2s_v4", "Standard_D2s_v5", "Standard_D3_v2", "Standard_DS13_v2", "Standard_DS14_v2", "Standard_D4s_v5", "Standard_D8s_v5"]) {
      expect(VM_BANDWIDTH[size], size).toBeDefined();
      expect(VM_BANDWIDTH[size]?.source.length).toBeGreaterThan(10);
    }
    expect(bandwidthForSize("Standard_D2s_v4").mbit).toBe(5000);
    expect(bandwidthForSize("Standard_D2s_v5").mbit).toBe(12500);
    expect(bandwidthForSize("Standard_D3_v2").mbit).toBe(3000);
    expect(bandwidthForSize("Standard_DS13_v2").mbit).toBe(6000);
    expect(bandwidthForSize("Standard_DS14_v2").mbit).toBe(12000);
  });

  it("caps nothing where Azure publishes no figure or the size is unknown, and says why", () => {
    const b1 = bandwidthForSize("Standard_B1s");
    expect(b1.mbit).toBeNull();
    expect(b1.note).toMatch(/no cap/);
    const unknown = bandwidthForSize("Standard_Z99_v9");
    expect(unknown.mbit).toBeNull();
    expect(unknown.note).toMatch(/not in latlab's bandwidth table/);
  });
});

describe("VM size → bandwidth, from Azure's catalogue where this table has no row", () => {
  it("caps a catalogued size this table lacks with the catalogue's figure, and says a B-series size is uncapped", () => {
    expect(bandwidthForSize("Standard_D16s_v4").mbit).toBe(12500);
    const b2s = bandwidthForSize("Standard_B2s");
    expect(b2s.mbit).toBeNull();
    expect(b2s.note).toMatch(/^Standard_B2s: uncapped/);
    expect(b2s.note).toMatch(/no bandwidth figure/);
  });
});
