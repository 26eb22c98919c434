import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { LATENCY_MODEL, modelRtt, publishedPairSpread, regionPairRtt } from "../../../../src/targets/local/model/latencyModel.ts";
import {
  modelledRttQuantilesUs,
  oneWaySpread,
  rttDistribution,
  RttSpreadSchema,
  shiftedLognormalQuantile,
  sumQuantile,
  type ShiftedLognormal,
} from "../../../../src/targets/local/model/latencySpread.ts";
import type { PeerDelay } from "../../../../src/targets/local/network/shaping.ts";

// scipy's figures: tests/fixtures/latency-spread/make_reference.py (the command is in its header).
const reference = JSON.parse(readFileSync(new URL("../../../fixtures/latency-spread/reference.json", import.meta.url), "utf8")) as {
  rtt: Record<string, { floorUs: number; scaleUs: number; sigma: number; p50Us: number; p95Us: number; p99Us: number }>;
  sum: Record<string, { oneWay: ShiftedLognormal; quantiles: Record<string, number> }>;
};
const SEED000 = { "same-zone": { p95Us: 975 }, "cross-zone": { p95Us: 1950 }, "cross-region": { p95Us: 6800 } } as const;
const seedRow = (path: keyof typeof SEED000) => (path === "cross-region" ? modelRtt("cross-region", false, false, ["uksouth", "nowhere"]) : modelRtt(path, false, false));
const peer = (rttUs: number, egressSpread?: ShiftedLognormal): PeerDelay => ({ peerRole: "p", address: "198.18.0.1", pathKind: "same-zone", rttUs, egressDelayUs: Math.round(rttUs / 2), ...(egressSpread ? { egressSpread } : {}) });

describe("the model's spreads", () => {
  it("gives every entry a spread that parses, with a source; seed 000's rows its minimum and p99", () => {
    for (const m of LATENCY_MODEL) expect(RttSpreadSchema.parse(m.spread).source.length, `${m.pathKind}/${m.accelnet}`).toBeGreaterThan(20);
    expect(modelRtt("same-zone", false, false).spread).toMatchObject({ kind: "shifted-lognormal", floorUs: 726, p99Us: 1050 });
    expect(modelRtt("cross-zone", false, false).spread).toMatchObject({ kind: "shifted-lognormal", floorUs: 1154, p99Us: 2250 });
    expect(seedRow("cross-region").spread).toMatchObject({ kind: "shifted-lognormal", floorUs: 4587, p99Us: 8100 });
    expect(modelRtt("same-zone", false, false).spread.source).toMatch(/seed 000.*minimum 726 µs.*p99 1050 µs/);
    // Averages only (seeds 001, 004): none, and said so.
    expect(modelRtt("same-zone", true, true).spread).toMatchObject({ kind: "none", source: expect.stringMatching(/seed 001.*average only/) });
    expect(modelRtt("same-region", false, false).spread).toMatchObject({ kind: "none", source: expect.stringMatching(/seed 004/) });
    // Accelerated Networking's fixed saving moves the distribution down with the median.
    expect(modelRtt("cross-zone", true, true).spread).toMatchObject({ floorUs: 1154 - 662, p99Us: 2250 - 662 });
  });

  it("gives a published region pair seed 000's cross-region offsets around Microsoft's P50", () => {
    const pair = regionPairRtt("uksouth", "ukwest");
    expect(pair.basis).toBe("published");
    expect(pair.spread).toEqual(publishedPairSpread(pair.rttUs));
    expect(pair.spread).toMatchObject({ floorUs: pair.rttUs - 713, p99Us: pair.rttUs + 2800, source: expect.stringMatching(/P50 only/) });
  });

  it("keeps every median at the model's figure: the 575 µs between same-zone and cross-zone stays", () => {
    const zone = rttDistribution(850, modelRtt("same-zone", false, false).spread)!;
    const cross = rttDistribution(1425, modelRtt("cross-zone", false, false).spread)!;
    expect(shiftedLognormalQuantile(cross, 0.5) - shiftedLognormalQuantile(zone, 0.5)).toBeCloseTo(575, 9);
  });
});

describe("the round trip's shifted lognormal", () => {
  for (const path of ["same-zone", "cross-zone", "cross-region"] as const) {
    it(`${path}: through seed 000's floor, median and p99 as scipy fits it, and its p95 within 3.5 % of the seed's`, () => {
      const m = seedRow(path);
      const d = rttDistribution(m.rttUs, m.spread)!;
      const ref = reference.rtt[path]!;
      expect(d.floorUs).toBe(ref.floorUs);
      expect(d.scaleUs).toBe(ref.scaleUs);
      expect(d.sigma).toBeCloseTo(ref.sigma, 12);
      for (const [q, want] of [[0.5, ref.p50Us], [0.95, ref.p95Us], [0.99, ref.p99Us]] as const) expect(shiftedLognormalQuantile(d, q)).toBeCloseTo(want, 6);
      // The p95 was not fitted: how close it lands is the shape's check against the source.
      expect(Math.abs(ref.p95Us - SEED000[path].p95Us) / SEED000[path].p95Us).toBeLessThan(0.035);
    });
  }

  it("refuses a spread whose floor, median and p99 are out of order", () => {
    expect(() => rttDistribution(700, { kind: "shifted-lognormal", floorUs: 726, p99Us: 1050, source: "x" })).toThrow(/floor < p50 < p99/);
    expect(rttDistribution(850, { kind: "none", source: "x" })).toBeNull();
  });
});

describe("one way: two independent draws add up to the round trip", () => {
  for (const path of ["same-zone", "cross-zone", "cross-region"] as const) {
    it(`${path}: the sum's quantiles are scipy's, and its p50 and p99 the round trip's`, () => {
      const m = seedRow(path);
      const oneWay = oneWaySpread(rttDistribution(m.rttUs, m.spread)!);
      const ref = reference.sum[path]!;
      expect(oneWay).toEqual(ref.oneWay);
      const w = { kind: "shifted-lognormal" as const, ...oneWay };
      for (const q of ["0.5", "0.95", "0.99"]) expect(Math.abs(sumQuantile(w, w, Number(q)) - ref.quantiles[q]!)).toBeLessThan(0.01);
      const rtt = modelledRttQuantilesUs(peer(m.rttUs, oneWay), peer(m.rttUs, oneWay));
      expect(Math.abs(rtt.p50Us - m.rttUs)).toBeLessThan(0.01);
      const p99 = (m.spread as { p99Us: number }).p99Us;
      expect(Math.abs(rtt.p99Us - p99)).toBeLessThan(0.01);
    });
  }

  it("is the constant sum when neither end has a spread, and shifts by a constant end", () => {
    expect(modelledRttQuantilesUs(peer(850), peer(850))).toEqual({ p50Us: 850, p99Us: 850 });
    const oneWay = oneWaySpread(rttDistribution(850, modelRtt("same-zone", false, false).spread)!);
    expect(modelledRttQuantilesUs(peer(850, oneWay), peer(100)).p99Us).toBeCloseTo(shiftedLognormalQuantile(oneWay, 0.99) + 50, 9);
  });
});
