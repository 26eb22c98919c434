import { describe, expect, it } from "vitest";
import { predictionBand } from "../../../src/history/gate.ts";
import type { SummaryRow } from "../../../src/history/historySchema.ts";
import { trendPageModel } from "../../../src/report/trend/trendModel.ts";
import { TrendPageModelSchema } from "../../../src/report/trend/trendPageSchema.ts";
import { asHistory, fixtureRecords, REGRESSED_VARIANT, runIdOf } from "./trendFixture.ts";

const model = (data: ReturnType<typeof asHistory>) => {
  const m = trendPageModel(data, { history: "/h/history.duckdb", generatedAt: "2026-12-01T00:00:00.000Z" });
  expect(TrendPageModelSchema.safeParse(m).success).toBe(true);
  return m;
};

describe("the trend page's model (history → page content)", () => {
  it("judges each run against its previous comparable runs: learning first, then the gate's band; the jump is the only alert", () => {
    const records = fixtureRecords({ runs: 8, regressionAt: 7 });
    const data = asHistory(records);
    const page = model(data);
    expect(page.experiments.map((e) => e.experiment)).toEqual(["hist"]);
    const [e] = page.experiments;
    expect(e!.runs.map((r) => [r.runId, r.comparable])).toEqual(Array.from({ length: 8 }, (_, i) => [runIdOf(i), i]));
    expect(e!.measures).toHaveLength(1);
    const m = e!.measures[0]!;
    expect([m.metric, m.statistic, m.unit, m.tool, m.measure]).toEqual(["rtt", "p50", "us", "ping", 0]);
    expect(m.points).toHaveLength(16);
    expect(new Set(m.points.map((p) => p.series))).toEqual(new Set(["accelnet=false", "accelnet=true"]));
    // The history has no interval for a run's figure: none is made up.
    expect(m.points.every((p) => p.ci === null)).toBe(true);
    // Fewer than 5 previous comparable runs: learning, no band.
    for (const p of m.points) {
      const i = Number(p.runId.slice(1)) - 1;
      expect(p.n).toBe(i);
      if (i < 5) expect([p.verdict, p.band]).toEqual(["learning", null]);
      else expect(p.band).not.toBeNull();
    }
    // The points are the runs' p50 rows, and the band at r08 is the prediction band of r01…r07's values.
    const p50 = (runId: string, variant: string) => data.summaries.find((s) => s.runId === runId && s.variant === variant && s.level === "all")!.p50;
    const jumped = m.points.find((p) => p.runId === "r08" && p.variant === REGRESSED_VARIANT)!;
    expect(jumped.value).toBe(p50("r08", REGRESSED_VARIANT));
    const band = predictionBand(Array.from({ length: 7 }, (_, i) => p50(runIdOf(i), REGRESSED_VARIANT)), 0.01, "log");
    expect(jumped.band).toEqual({ low: band.low, high: band.high, center: band.center, level: band.level, scale: "log" });
    expect(jumped.value).toBeGreaterThan(band.high);
    expect(jumped.verdict).toBe("regression");
    for (const p of m.points.filter((q) => q !== jumped && q.band)) expect(["within band", "within threshold"]).toContain(p.verdict);
    // Alerts on every headline statistic of that run and variant (mean and p50), none elsewhere.
    expect(e!.alerts.map((a) => [a.runId, a.variant, a.statistic, a.verdict]).sort()).toEqual([
      ["r08", REGRESSED_VARIANT, "mean", "regression"],
      ["r08", REGRESSED_VARIANT, "p50", "regression"],
    ]);
    expect(e!.changes).toEqual([]);
    expect(page.gate).toMatchObject({ level: 0.99, minRuns: 5, thresholdPct: 5 });
  });

  it("marks plan and latlab changes, and a run after one starts learning again; a manual run is nobody's baseline", () => {
    const page = model(asHistory(fixtureRecords({ runs: 10, planChangeAt: 2, manualAt: 4, upgradeAt: 7 })));
    const e = page.experiments[0]!;
    expect(e.changes.map((c) => [c.runId, c.what.map((w) => w.replace(/[0-9a-f]{8}/g, "#"))])).toEqual([
      ["r03", ["plan # → #"]],
      ["r04", ["plan # → #"]],
      ["r08", ["latlab 0.1.0 → 0.2.0"]],
    ]);
    const run = (id: string) => e.runs.find((r) => r.runId === id)!;
    // r07: r01, r02, r04, r06 (r03 another plan, r05 manual).
    expect(run("r07").comparable).toBe(4);
    expect(run("r07").excluded.map((x) => x.runId)).toEqual(["r03", "r05"]);
    expect(run("r07").excluded[1]!.why.join()).toMatch(/started by workflow_dispatch/);
    expect(run("r05").comparable).toBe(0);
    // After the upgrade no earlier run is comparable: learning, whatever came before.
    expect([run("r08").comparable, run("r09").comparable, run("r10").comparable]).toEqual([0, 1, 2]);
    expect(e.measures[0]!.points.filter((p) => p.runId >= "r08").every((p) => p.verdict === "learning" && p.band === null)).toBe(true);
    expect(e.changes.find((c) => c.runId === "r08")!.startedAt).toBe(run("r08").startedAt);
  });

  it("draws each metric's headline: mean throughput, median hops; one chart per measure and experiment", () => {
    const records = fixtureRecords({ runs: 3 });
    const asMetric = (rows: SummaryRow[], metric: SummaryRow["metric"], unit: SummaryRow["unit"]) => rows.map((s) => ({ ...s, metric, unit, mean: s.mean / 10, p50: s.p50 / 20 }));
    const throughput = asHistory(records);
    throughput.summaries = asMetric(throughput.summaries, "throughput", "Mbit/s");
    const t = model(throughput).experiments[0]!.measures[0]!;
    expect([t.metric, t.statistic]).toEqual(["throughput", "mean"]);
    expect(t.points.map((p) => p.value)).toEqual(throughput.summaries.filter((s) => s.level === "all").map((s) => s.mean));
    const hops = asHistory(records);
    hops.summaries = asMetric(hops.summaries, "hops", "hops");
    expect(model(hops).experiments[0]!.measures[0]!.statistic).toBe("p50");

    // Two experiments, by name.
    const two = model(asHistory([...fixtureRecords({ runs: 2, experiment: "zeta" }), ...fixtureRecords({ runs: 2, experiment: "alpha" }).map((r) => ({ ...r, run: { ...r.run, runId: `a-${r.run.runId}` }, summaries: r.summaries.map((s) => ({ ...s, runId: `a-${s.runId}` })) }))]));
    expect(two.experiments.map((e) => [e.experiment, e.runs.length, e.measures.length])).toEqual([
      ["alpha", 2, 1],
      ["zeta", 2, 1],
    ]);
  });
});
