import { describe, expect, it } from "vitest";
import { historyRecords } from "../../../src/history/historyRecords.ts";
import { SummaryRowSchema } from "../../../src/history/historySchema.ts";
import { identityOf, measureIdentities, planHash } from "../../../src/plan/planHash.ts";
import { unitStatistics } from "../../../src/results/unitInference.ts";
import { around, fakeRun } from "./fakeRun.ts";

describe("historyRecords", () => {
  it("keeps each run, each replica (its repetitions merged) and the merged whole, with the exact unit statistics", () => {
    const run = fakeRun("r1", (c) => around(100 + 10 * c.replica + c.repetition + (c.variant === "accelnet=true" ? 50 : 0), 40, c.repetition), { replicas: 2, repetitions: 2, facts: { "git.commit": "abc123" } });
    const rec = historyRecords(run.results, run.samplesOf);
    expect(rec.run).toMatchObject({ runId: "r1", experiment: "hist", gitCommit: "abc123", status: "complete" });
    const ofVariant = rec.summaries.filter((s) => s.variant === "accelnet=false");
    expect(ofVariant.map((s) => [s.level, s.replica, s.repetition])).toEqual([
      ["run", 0, 0], ["run", 0, 1], ["run", 1, 0], ["run", 1, 1], ["replica", 0, null], ["replica", 1, null], ["all", null, null],
    ]);
    for (const s of rec.summaries) expect(SummaryRowSchema.parse(s)).toEqual(s);
    // The replica unit is its repetitions' samples merged, reduced as unitInference does.
    const cells = run.plan.cells.filter((c) => c.variant === "accelnet=false" && c.replica === 1);
    const merged = cells.flatMap((c) => run.samplesOf(c.id));
    const expected = unitStatistics([merged]);
    const replica1 = ofVariant.find((s) => s.level === "replica" && s.replica === 1)!;
    expect([replica1.unitMean, replica1.unitP50]).toEqual([expected.mean[0], expected.p50[0]]);
    expect(replica1.n).toBe(80);
    // 80 samples support no p99.99 / p99.999: stored as null (p999 is always stored).
    expect([replica1.p9999, replica1.p99999]).toEqual([null, null]);
    expect(replica1.p999).toBeGreaterThan(0);
    expect(ofVariant.find((s) => s.level === "all")!.n).toBe(160);
    // The run's own comparisons, with their CIs over replicas.
    const cmp = rec.comparisons.filter((k) => k.kind === "variant");
    expect(cmp.map((k) => [k.statistic, k.inferenceUnit])).toEqual([["mean", "replica"], ["p50", "replica"]]);
    expect(cmp[0]!.ciLow).toBeGreaterThan(0);
    expect(rec.variants.map((v) => [v.variant, v.baseline])).toEqual([["accelnet=false", "accelnet=false"], ["accelnet=true", "accelnet=false"]]);
  });

  it("without samples keeps each run's own summary and guesses no merged level", () => {
    const run = fakeRun("r2", () => around(100, 20), { repetitions: 2 });
    const rec = historyRecords(run.results, () => []);
    const levels = rec.summaries.filter((s) => s.variant === "accelnet=false").map((s) => [s.level, s.unitMean]);
    expect(levels).toEqual([["run", null], ["run", null]]);
  });
});

describe("historyRecords: what tells comparable runs apart", () => {
  it("records the run's plan hash, the content it hashes, its event, and each summary's measure identity", () => {
    const run = fakeRun("r3", () => around(100, 20), { facts: { "github.event": "schedule" } });
    const rec = historyRecords(run.results, run.samplesOf);
    const expected = planHash({ target: "local", variants: run.results.variants, cells: run.plan.cells });
    expect(rec.run.planHash).toBe(expected);
    expect(rec.run.plan!.variants.map((v) => v.id)).toEqual(["accelnet=false", "accelnet=true"]);
    expect(rec.run.event).toBe("schedule");
    const ids = measureIdentities(run.plan.cells);
    for (const s of rec.summaries) expect(s.measureId).toBe(identityOf(ids, s.variant, s.measure));
    expect(rec.summaries[0]!.measureId).toMatch(/^[0-9a-f]{64}$/);
    // A results.json that records its own hash and event: those are kept.
    const recorded = { ...run.results, planHash: "a".repeat(64), environment: { ...run.results.environment, event: "workflow_dispatch" } };
    const rec2 = historyRecords(recorded, run.samplesOf);
    expect([rec2.run.planHash, rec2.run.event]).toEqual(["a".repeat(64), "workflow_dispatch"]);
    // Its content does not give that hash: not stored, rather than explain another plan.
    expect(rec2.run.plan).toBeNull();
    // Outside GitHub Actions, before the event had a field: unknown, not guessed.
    expect(historyRecords(fakeRun("r4", () => around(100, 20)).results, () => []).run.event).toBeNull();
  });
});
