import { describe, expect, it } from "vitest";
import { comparePairs, compareVariants, type SampledMeasurement } from "../../../src/results/comparisons.ts";
import { hostRecords } from "../../../src/results/hostRecords.ts";
import { buildPlan } from "../../../src/plan/buildPlan.ts";
import type { Cell } from "../../../src/plan/types.ts";
import ppgVsZone from "../../../experiments/ppg-vs-zone.ts";
import { defineExperiment } from "../../../src/index.ts";
import { ComparisonSchema, PairComparisonSchema } from "../../../src/results/schema.ts";

const plan = buildPlan(ppgVsZone);

function sampled(cell: Cell, samples: number[], status: "ok" | "failed" = "ok"): SampledMeasurement {
  const mean = samples.reduce((a, b) => a + b, 0) / (samples.length || 1);
  return {
    measurement: {
      cell: cell.id, measure: cell.measure, variant: cell.variant, deployment: cell.deployment, tool: cell.tool, params: cell.params,
      from: cell.from, to: cell.to, path: cell.path, pathKind: cell.pathKind, replica: cell.replica, repetition: cell.repetition, status,
      startedAt: "", finishedAt: "", warnings: [], raw: [],
      ...(status === "ok" ? { summary: { metric: "rtt", unit: "us", count: samples.length, mean, p50: mean, p90: mean, p95: mean, p99: mean, p999: mean, min: mean, max: mean, stddev: 0 } } : {}),
    },
    samples,
  };
}

describe("compareVariants", () => {
  const cell = (variant: string, tool: string) => plan.cells.find((c) => c.variant === variant && c.tool === tool)!;
  const [sockA, pingA, sockB, pingB] = [cell("ppg=false", "sockperf"), cell("ppg=false", "ping"), cell("ppg=true", "sockperf"), cell("ppg=true", "ping")];
  it("compares each variant with the baseline per measure", () => {
    const base = Array.from({ length: 200 }, (_, i) => 100 + (i % 10));
    const faster = base.map((v) => v * 0.5);
    const out = compareVariants(plan.baselineOf, plan.variants.map((v) => v.id), [sampled(sockA!, base), sampled(sockB!, faster), sampled(pingA!, base), sampled(pingB!, base)], plan.cells);
    expect(out.map((c) => [c.variant, c.tool])).toEqual([["ppg=true", "sockperf"], ["ppg=true", "ping"]]);
    expect(out[0]!.ratioMean).toBeCloseTo(0.5, 10);
    expect(out[0]!.pctChangeMean).toBeCloseTo(-50, 10);
    expect(out[0]!.diffMean!.ci95[1]).toBeLessThan(0);
    expect(out[1]!.ratioMean).toBe(1);
  });

  it("gives no CI or test from fewer than 3 samples a side", () => {
    const out = compareVariants(plan.baselineOf, plan.variants.map((v) => v.id), [sampled(sockA!, [2]), sampled(sockB!, [6])], plan.cells);
    expect(out[0]!.ratioMean).toBe(3);
    expect(out[0]!.diffMean).toBeUndefined();
    expect(out[0]!.inference.unit).toBe("sample-blocks");
    expect(ComparisonSchema.parse(out[0])).toEqual(out[0]);
  });

  it("compares pair with pair, merging every replica and repetition of each", () => {
    const e = defineExperiment({
      name: "x",
      description: "x",
      axes: { accelnet: [false, true] },
      hosts: { server: {}, near: {}, far: {} },
      measure: [{ tool: "ping" }],
      replicas: 2,
      repetitions: 2,
    });
    const p = buildPlan(e);
    expect(p.cells).toHaveLength(2 * 2 * 2 * 2);
    // Baseline: near 100 (replica 0) and 120 (replica 1), far 1000; the candidate halves near and doubles far.
    const value = (c: Cell) => (c.from === "near" ? 100 + 20 * c.replica : 1000) * (c.variant === "accelnet=true" ? (c.from === "near" ? 0.5 : 2) : 1);
    const samples = p.cells.map((c) => sampled(c, Array.from({ length: 10 }, () => value(c) + c.repetition)));
    const out = compareVariants(p.baselineOf, p.variants.map((v) => v.id), samples, p.cells);
    expect(out.map((c) => [c.variant, c.baseline, c.pair, c.variantSummary.count, c.baselineSummary.count])).toEqual([
      ["accelnet=true", "accelnet=false", "near->server", 40, 40],
      ["accelnet=true", "accelnet=false", "far->server", 40, 40],
    ]);
    const [near, far] = out;
    expect(near!.baselineSummary.mean).toBeCloseTo(110.5, 10); // (100 + 120) / 2 + mean repetition offset 0.5
    expect(near!.variantSummary.mean).toBeCloseTo(55.5, 10);
    expect(far!.ratioMean).toBeCloseTo(2000.5 / 1000.5, 10);
    for (const c of out) expect(ComparisonSchema.parse(c)).toEqual(c);
    // Inference over the 2 replicas a side, each one's repetitions merged.
    expect(near!.inference).toEqual({
      unit: "replica",
      units: { baseline: 2, candidate: 2 },
      unitStatistics: { baseline: { mean: [100.5, 120.5], p50: [100, 120] }, candidate: { mean: [50.5, 60.5], p50: [50, 60] } },
    });
    expect(near!.diffMean).toMatchObject({ estimate: -55, method: "welch-t" });
    expect(near!.diffP50).toMatchObject({ estimate: -55, method: "welch-t" });
    expect(near!.diffMean!.welch!.df).toBeCloseTo(125 ** 2 / (100 ** 2 + 25 ** 2), 12);
  });

  /** `n` noisy but deterministic samples of one run, from `level` to `level` + 10. */
  const run = (level: number, seed: number, n = 200) => Array.from({ length: n }, (_, i) => level + ((i * 7919 + seed * 104729) % 101) / 10);
  const experiment = (replicas: number, repetitions: number) =>
    buildPlan(defineExperiment({ name: "x", description: "x", axes: { ppg: [false, true] }, hosts: { server: {}, client: {} }, measure: [{ tool: "ping" }], replicas, repetitions }));
  const compareAll = (p: ReturnType<typeof experiment>, value: (c: Cell) => number, skip: (c: Cell) => boolean = () => false) =>
    compareVariants(p.baselineOf, p.variants.map((v) => v.id), p.cells.filter((c) => !skip(c)).map((c) => sampled(c, run(value(c), c.replica * 10 + c.repetition))), p.cells);

  it("separates one lucky host from the variant's effect: the CI is over replicas, not samples", () => {
    const p = experiment(3, 1);
    // Baseline replicas at 100, 103, 97; the candidate's replica 0 got a fast host (80), the others are as the baseline.
    const value = (c: Cell) => (c.variant === "ppg=true" && c.replica === 0 ? 80 : [100, 103, 97][c.replica]!);
    const [cmp] = compareAll(p, value);
    expect(cmp!.inference).toMatchObject({ unit: "replica", units: { baseline: 3, candidate: 3 } });
    expect(cmp!.inference.note).toBeUndefined();
    expect(cmp!.inference.unitStatistics!.candidate.p50[0]).toBeLessThan(90);
    const [lo, hi] = cmp!.diffMean!.ci95;
    expect(lo).toBeLessThan(0);
    expect(hi).toBeGreaterThan(0); // 3 replicas do not show an effect that only one host has
    expect(cmp!.diffMean!.welch!.p).toBeGreaterThan(0.05);
    expect(cmp!.diffMean!.rankTest).toMatchObject({ method: "exact" });
    expect(cmp!.diffMean!.rankTest!.p).toBeGreaterThanOrEqual(0.1);
    // Pooled as independent samples, the same data looked like a finding.
    expect(cmp!.ratioMean).toBeLessThan(0.95);
    expect(ComparisonSchema.parse(cmp)).toEqual(cmp);
  });

  it("takes the repetition as the unit when there is one replica, and says it is the weaker unit", () => {
    const p = experiment(1, 4);
    const [cmp] = compareAll(p, (c) => (c.variant === "ppg=true" ? 90 : 100) + c.repetition);
    expect(cmp!.inference).toMatchObject({ unit: "repetition", units: { baseline: 4, candidate: 4 } });
    expect(cmp!.inference.note).toMatch(/same hosts/);
    expect(cmp!.inference.note).toMatch(/cannot be separated from the host/);
    expect(cmp!.diffMean).toMatchObject({ method: "welch-t" });
    expect(cmp!.diffMean!.ci95[1]).toBeLessThan(0);
    expect(cmp!.diffMean!.welch!.p).toBeLessThan(0.01);
    expect(ComparisonSchema.parse(cmp)).toEqual(cmp);
  });

  it("a side that lost all but one replica does not mix runs of two deployments as repetitions: sample blocks, no p", () => {
    const p = experiment(2, 3);
    const [cmp] = compareAll(p, (c) => (c.variant === "ppg=true" ? 90 : 100), (c) => c.variant === "ppg=true" && c.replica === 1);
    expect(cmp!.inference).toMatchObject({ unit: "sample-blocks", note: expect.stringMatching(/replicas on one side only/) });
    expect(cmp!.diffMean).not.toHaveProperty("welch");
  });

  it("labels one deployment and one run a side sample-blocks, with a note and no p-value", () => {
    const p = experiment(1, 1);
    const [cmp] = compareAll(p, (c) => (c.variant === "ppg=true" ? 90 : 100));
    expect(cmp!.inference).toEqual({
      unit: "sample-blocks",
      units: { baseline: 14, candidate: 14 }, // 200 samples in blocks of ceil(√200) = 15
      note: expect.stringMatching(/placement cannot be separated from the host.*no p-value/),
    });
    expect(cmp!.diffMean).toMatchObject({ method: "block-bootstrap" });
    expect(cmp!.diffMean!.estimate).toBeCloseTo(-10, 10);
    expect(cmp!.diffMean).not.toHaveProperty("welch");
    expect(cmp!.diffMean).not.toHaveProperty("rankTest");
    expect(cmp).not.toHaveProperty("diffP50");
    expect(JSON.stringify(cmp)).not.toMatch(/"p"|mannWhitney/);
    expect(ComparisonSchema.parse(cmp)).toEqual(cmp);
  });

  it("leaves out a ratio to a zero baseline instead of writing Infinity or NaN", () => {
    const stalled = Array.from({ length: 10 }, () => 0);
    const halfStalled = [0, 0, 0, 0, 0, 0, 10, 10, 10, 10];
    const out = compareVariants(plan.baselineOf, plan.variants.map((v) => v.id), [sampled(sockA!, stalled), sampled(sockB!, stalled.map(() => 5)), sampled(pingA!, halfStalled), sampled(pingB!, halfStalled)], plan.cells);
    const [zero, half] = out;
    expect(zero).not.toHaveProperty("ratioMean");
    expect([zero!.ratioMean, zero!.pctChangeMean, zero!.ratioP50, zero!.ratioP99]).toEqual([undefined, undefined, undefined, undefined]);
    expect(zero!.diffMean!.estimate).toBe(5);
    // Mean and p99 are not 0, p50 is: only ratioP50 is missing.
    expect([half!.ratioMean, half!.pctChangeMean, half!.ratioP50, half!.ratioP99]).toEqual([1, 0, undefined, 1]);
    for (const c of out) expect(() => ComparisonSchema.parse(c)).not.toThrow();
    expect(JSON.stringify(out)).not.toMatch(/null|Infinity|NaN/);
  });

  it("skips a measure whose variant failed, instead of comparing with nothing", () => {
    const out = compareVariants(plan.baselineOf, plan.variants.map((v) => v.id), [sampled(sockA!, [1, 2, 3]), sampled(sockB!, [], "failed")], plan.cells);
    expect(out).toEqual([]);
  });
});

describe("hostRecords", () => {
  it("flags what a host got that differs from what was asked", () => {
    const endpoint = (role: string, actual: Record<string, string | number | boolean | null>) => ({
      deployment: "ppg=true", role, ssh: { host: "x", port: 22, username: "root", privateKey: "" }, hostKey: "", privateAddress: "", workDir: "", actual,
    });
    const records = hostRecords(plan, "ppg=true", [endpoint("client", { zone: "2", bandwidthCapMbit: 12500 }), endpoint("server", { zone: "1" })]);
    expect(records.find((r) => r.role === "client")!.mismatches).toEqual(['zone: asked "1", got "2"']);
    expect(records.find((r) => r.role === "server")!.mismatches).toEqual([]);
  });

  it("gives every variant of a shared deployment its hosts (public and private path measured between the same VMs)", () => {
    const e = defineExperiment({ name: "paths", description: "x", axes: { path: ["private", "public"] }, hosts: { server: { vnet: "b" }, client: { vnet: "a" } }, measure: [{ tool: "ping" }] });
    const p = buildPlan(e);
    expect(p.deployments).toHaveLength(1);
    const endpoint = (role: string) => ({ deployment: p.deployments[0]!.id, role, ssh: { host: "x", port: 22, username: "root", privateKey: "" }, hostKey: "", privateAddress: "", workDir: "", actual: { vnet: role === "client" ? "a" : "a" } });
    for (const v of p.variants) {
      const records = hostRecords(p, v.id, [endpoint("client"), endpoint("server")]);
      expect(records.map((r) => r.role).sort(), v.id).toEqual(["client", "server"]);
      // The VNet is compared like the other placement fields.
      expect(records.find((r) => r.role === "server")!.mismatches).toEqual(['vnet: asked "b", got "a"']);
    }
  });
});

describe("comparePairs", () => {
  it("compares every pair with each pair declared before it, like seed 000's ratio table", () => {
    const e = defineExperiment({
      name: "x",
      description: "x",
      hosts: { server: { zone: "1" }, samezone: { zone: "1" }, crosszone: { zone: "2" }, crossregion: { region: "ukwest", zone: null } },
      measure: [{ tool: "ping" }],
    });
    const p = buildPlan(e);
    const [same, cross, region] = p.cells;
    // means 853, 1428, 5303: ratios 1428/853 = 1.67, 5303/853 = 6.22, 5303/1428 = 3.71
    const s = (n: number) => Array.from({ length: 100 }, (_, i) => n + (i % 7));
    const out = comparePairs([sampled(same!, s(850)), sampled(cross!, s(1425)), sampled(region!, s(5300))], p.cells);
    expect(out.map((c) => `${c.pair} vs ${c.baselinePair}: ${c.ratioMean!.toFixed(2)}`)).toEqual([
      "crosszone->server vs samezone->server: 1.67",
      "crossregion->server vs samezone->server: 6.22",
      "crossregion->server vs crosszone->server: 3.71",
    ]);
    // One deployment: the pairs' difference is these hosts', and no p-value says otherwise.
    for (const c of out) {
      expect(c.inference.unit).toBe("sample-blocks");
      expect(c.inference.note).toMatch(/these hosts/);
      expect(PairComparisonSchema.parse(c)).toEqual(c);
    }
  });

  it("compares pairs over replicas when there are several", () => {
    const e = defineExperiment({ name: "x", description: "x", hosts: { server: {}, a: {}, b: {} }, measure: [{ tool: "ping" }], replicas: 3 });
    const p = buildPlan(e);
    const out = comparePairs(p.cells.map((c) => sampled(c, Array.from({ length: 20 }, (_, i) => (c.from === "a" ? 100 : 150) + c.replica + (i % 3)))), p.cells);
    expect(out).toHaveLength(1);
    expect(out[0]!.inference).toMatchObject({ unit: "replica", units: { baseline: 3, candidate: 3 } });
    expect(out[0]!.diffMean!.estimate).toBeCloseTo(50, 10);
  });
});
