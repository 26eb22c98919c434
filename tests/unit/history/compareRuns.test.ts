import { describe, expect, it } from "vitest";
import { compareRuns, type RunSource } from "../../../src/history/compareRuns.ts";
import { historyRecords } from "../../../src/history/historyRecords.ts";
import { assess } from "../../../src/history/regression.ts";
import { compareGroups, groupBy } from "../../../src/results/comparisons.ts";
import { ComparisonStatsSchema } from "../../../src/results/schema.ts";
import { defineExperiment } from "../../../src/index.ts";
import { around, fakeRun } from "./fakeRun.ts";

type Opts = Parameters<typeof fakeRun>[2];
const folder = (runId: string, samplesOf: Parameters<typeof fakeRun>[1], opts: Opts = {}): RunSource => {
  const run = fakeRun(runId, samplesOf, opts);
  return { runId, experiment: "hist", summaries: historyRecords(run.results, run.samplesOf).summaries, sampled: run.sampled };
};
/** The same run as the history holds it: summaries, no samples. */
const historyOnly = (s: RunSource): RunSource => ({ runId: s.runId, experiment: s.experiment, summaries: s.summaries });

describe("compareRuns", () => {
  it("from two results folders: exactly the statistics variants are compared with", () => {
    const a = folder("a", (c) => around(100 + 5 * c.replica, 40, c.replica), { replicas: 3 });
    const b = folder("b", (c) => around(130 + 5 * c.replica, 40, c.replica + 7), { replicas: 3 });
    const out = compareRuns(a, b);
    expect(out.comparisons.map((c) => [c.variant, c.pair, c.source])).toEqual([
      ["accelnet=false", "client->server", "samples"],
      ["accelnet=true", "client->server", "samples"],
    ]);
    const key = (m: { variant: string; measure: number; from: string; to: string }) => `${m.variant}/${m.measure}/${m.from}->${m.to}`;
    const ga = groupBy(a.sampled!, key).get("accelnet=false/0/client->server")!;
    const gb = groupBy(b.sampled!, key).get("accelnet=false/0/client->server")!;
    const { variant, pair, measureId, baselineRun, candidateRun, source, ...stats } = out.comparisons[0]!;
    expect(measureId).toBe(a.summaries[0]!.measureId);
    expect(stats).toEqual(compareGroups("runs", 0, ga, gb));
    expect(ComparisonStatsSchema.parse(stats)).toEqual(stats);
    expect([variant, pair, baselineRun, candidateRun, source]).toEqual(["accelnet=false", "client->server", "a", "b", "samples"]);
    expect(stats.inference.unit).toBe("replica");
    expect(stats.diffMean!.ci95[0]).toBeGreaterThan(0);
  });

  it("from the history alone: over replicas the same CI and tests as from the samples (the units' exact statistics are kept)", () => {
    const a = folder("a", (c) => around(100 + 5 * c.replica, 40, c.replica), { replicas: 3 });
    const b = folder("b", (c) => around(104 + 6 * c.replica, 40, c.replica + 3), { replicas: 3 });
    const fromSamples = compareRuns(a, b).comparisons[0]!;
    const fromHistory = compareRuns(historyOnly(a), b).comparisons[0]!;
    expect(fromHistory.source).toBe("summaries");
    expect(fromHistory.inference).toEqual(fromSamples.inference);
    expect(fromHistory.diffMean).toEqual(fromSamples.diffMean);
    expect(fromHistory.diffP50).toEqual(fromSamples.diffP50);
    // Descriptive figures from histograms: within their 0.1 % guarantee.
    expect(fromHistory.ratioP50!).toBeCloseTo(fromSamples.ratioP50!, 2);
    expect(fromHistory.ratioMean).toBeCloseTo(fromSamples.ratioMean!, 12);
  });

  it("from the history alone: the merged summaries keep p99.99 where the count supports it, as from the samples", () => {
    const a = folder("a", () => around(100, 12_000));
    const b = folder("b", () => around(110, 12_000, 2));
    const fromSamples = compareRuns(a, b).comparisons[0]!;
    const fromHistory = compareRuns(historyOnly(a), historyOnly(b)).comparisons[0]!;
    for (const side of ["baselineSummary", "variantSummary"] as const) {
      expect(fromHistory[side].p9999).toBeDefined();
      expect(fromHistory[side].p9999).toBe(fromSamples[side].p9999);
      expect(fromHistory[side]).not.toHaveProperty("p99999");
    }
  });

  it("from the history with one run a side: no CI (a bootstrap needs the samples), and it says so", () => {
    const a = folder("a", () => around(100, 40));
    const b = folder("b", () => around(200, 40, 2));
    const c = compareRuns(historyOnly(a), historyOnly(b)).comparisons[0]!;
    expect(c.inference.unit).toBe("sample-blocks");
    expect(c.diffMean).toBeUndefined();
    expect(c.inference.note).toMatch(/keeps each unit's mean and median, not the samples/);
    expect(c.ratioMean).toBeGreaterThan(1.9);
    expect(assess([c], 20).map((f) => f.verdict)).toEqual(["no CI"]);
    // The folders have the samples: a block-bootstrap CI, no p-value.
    const d = compareRuns(a, b).comparisons[0]!;
    expect(d.diffMean!.method).toBe("block-bootstrap");
    expect(d.diffMean!.welch).toBeUndefined();
  });

  it("lists what only one run measured and refuses runs of different experiments", () => {
    const a = folder("a", () => around(100, 10));
    const b = { ...folder("b", () => around(100, 10)) };
    b.summaries = b.summaries.filter((s) => s.variant !== "accelnet=true");
    const out = compareRuns(a, b);
    expect(out.onlyInBaseline).toEqual(["accelnet=true measure 0 ping client->server"]);
    expect(out.onlyInCandidate).toEqual([]);
    expect(() => compareRuns(a, { ...b, experiment: "other" })).toThrow(/run a is of experiment "hist" and run b of "other"/);
  });
});

describe("assess (--fail-on-regression)", () => {
  const pair = (base: number, cand: number, replicas = 3) => compareRuns(
    folder("a", (c) => around(base + c.replica, 40, c.replica), { replicas }),
    folder("b", (c) => around(cand + c.replica, 40, c.replica + 1), { replicas }),
  ).comparisons.filter((c) => c.variant === "accelnet=false");

  it("an RTT 30 % higher with a CI excluding 0 is a regression past 20 %, not past 40 %", () => {
    const c = pair(100, 130);
    expect(assess(c, 20).map((f) => [f.statistic, f.verdict])).toEqual([["mean", "regression"], ["p50", "regression"]]);
    expect(assess(c, 20)[0]!.pctChange).toBeCloseTo(30, 0);
    expect(assess(c, 40).map((f) => f.verdict)).toEqual(["changed within threshold", "changed within threshold"]);
  });

  it("a lower RTT is an improvement; for throughput lower is worse", () => {
    expect(assess(pair(130, 100), 10).map((f) => f.verdict)).toEqual(["improvement", "improvement"]);
    const c = pair(130, 100).map((k) => ({ ...k, metric: "throughput" }));
    expect(assess(c, 10).map((f) => f.verdict)).toEqual(["regression", "regression"]);
  });

  it("a change whose CI includes 0 is no regression however large its estimate", () => {
    const c = pair(100, 100)[0]!;
    const wide = { ...c, diffMean: { ...c.diffMean!, estimate: 50, ci95: [-10, 110] as [number, number] } };
    expect(assess([wide], 20)[0]!.verdict).toBe("no clear change");
    expect(() => assess([c], -1)).toThrow(/threshold must be a percentage/);
  });
});

describe("compareRuns: comparable runs only", () => {
  type Def = Parameters<typeof defineExperiment>[0];
  const def = (over: Partial<Def> = {}) =>
    defineExperiment({ name: "hist", description: "history test", axes: { accelnet: [false, true] }, hosts: { server: {}, client: {} }, measure: [{ tool: "ping", params: { count: 20 } }, { tool: "ping", params: { count: 40 } }], ...over } as Def);
  const source = (runId: string, experiment: ReturnType<typeof def>, centre = 100): RunSource => {
    // A measure's samples depend on what it is (its count), not on where it stands in the file.
    const run = fakeRun(runId, (c) => around(centre + (c.params["count"] === 40 ? 50 : 0), 40, runId.length), { experiment });
    const records = historyRecords(run.results, run.samplesOf);
    return { runId, experiment: "hist", summaries: records.summaries, sampled: run.sampled, facts: records.run };
  };

  it("matches measures by identity: a measure moved in the file is compared with itself, not with the one now at its index", () => {
    const a = source("a", def());
    const b = source("b", def({ measure: [{ tool: "ping", params: { count: 40 } }, { tool: "ping", params: { count: 20 } }] }));
    const out = compareRuns(a, b);
    expect(out.plan).toEqual({ same: true, differences: [] });
    expect(out.onlyInBaseline).toEqual([]);
    // count 40 is measure 1 in run A and measure 0 in run B, both around 150: no change (matched by index: +50 %).
    const count40 = out.comparisons.filter((c) => c.measure === 0);
    expect(count40.length).toBe(2);
    for (const c of count40) expect(Math.abs(c.pctChangeMean!)).toBeLessThan(0.5);
    // From the history alone too.
    const fromHistory = compareRuns({ ...a, sampled: undefined }, { ...b, sampled: undefined });
    expect(fromHistory.comparisons.filter((c) => c.measure === 0).map((c) => Math.abs(c.ratioMean! - 1) < 0.005)).toEqual([true, true]);
  });

  it("runs of different plans: a measure with other parameters is only in one run, a variant with other hosts is not compared, and both are said", () => {
    const a = source("a", def());
    const b = source("b", def({ measure: [{ tool: "ping", params: { count: 20 } }, { tool: "ping", params: { count: 80 } }], hosts: { server: {}, client: { size: "Standard_D4s_v5" } }, axes: { accelnet: [false, true] } }));
    const out = compareRuns(a, b);
    expect(out.plan.same).toBe(false);
    expect(out.plan.differences).toContain("variant accelnet=false: ping parameters count 40 → 80");
    expect(out.plan.differences.some((d) => /^variant accelnet=false: host client size \S+ → Standard_D4s_v5$/.test(d)), out.plan.differences.join("\n")).toBe(true);
    expect(out.notes[0]).toMatch(/^the runs ran different plans \(plan [0-9a-f]{8} and [0-9a-f]{8}\): only measures of the same identity on variants set up alike are compared$/);
    expect(out.onlyInBaseline).toEqual(["accelnet=false measure 1 ping client->server", "accelnet=true measure 1 ping client->server"]);
    expect(out.comparisons).toEqual([]);
    expect(out.notComparable).toEqual([
      "accelnet=false measure 0 ping client->server: variant accelnet=false was not set up alike in both runs (see the plan differences)",
      "accelnet=true measure 0 ping client->server: variant accelnet=true was not set up alike in both runs (see the plan differences)",
    ]);
    // Same hosts, other duration of one measure: the other measure is still compared.
    const c = source("c", def({ measure: [{ tool: "ping", params: { count: 20 } }, { tool: "ping", params: { count: 80 } }] }));
    expect(compareRuns(a, c).comparisons.map((x) => [x.variant, x.measure])).toEqual([["accelnet=false", 0], ["accelnet=true", 0]]);
  });

  it("refuses runs of different targets, notes another latlab or event, and falls back to indices for rows recorded before identities", () => {
    const a = source("a", def());
    const b = source("b", def());
    expect(() => compareRuns(a, { ...b, facts: { ...b.facts!, target: "azure" } })).toThrow(/run a ran on target "local" and run b on "azure"/);
    const later = compareRuns(a, { ...b, facts: { ...b.facts!, latlabVersion: "0.2.0", event: "schedule" } });
    expect(later.notes).toEqual(["latlab 0.1.0 in run A, 0.2.0 in run B: a change may be latlab's own", "run A was started by an unknown event, run B by schedule"]);
    const old = { ...a, sampled: undefined, summaries: a.summaries.map((s) => ({ ...s, measureId: null })), facts: { ...a.facts!, planHash: null, plan: null } };
    const out = compareRuns(old, b);
    expect(out.comparisons.length).toBe(4);
    expect(out.plan.same).toBeNull();
    expect(out.notes).toEqual([
      "run a was recorded before plan hashes: whether both ran the same plan (sizes, durations…) is unknown",
      "measures matched by their index in the experiment file (a run was recorded before measure identities): an edit that moved a measure pairs different things",
    ]);
  });
});
