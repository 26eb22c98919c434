import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { gate, headlinesOf, predictionBand } from "../../../src/history/gate.ts";
import { GateReportSchema, type GateRun, type Headline } from "../../../src/history/gateSchema.ts";
import { SummaryRowSchema, type SummaryRow } from "../../../src/history/historySchema.ts";
import type { Metric } from "../../../src/results/summary.ts";
import { expectRel } from "../results/statsReference.ts";

// Reference values: tests/fixtures/stats/make_gate_reference.py (scipy.stats.t.interval / t.ppf); see its header.
interface GateCase {
  name: string;
  metric: Metric;
  alpha: number;
  threshold: number;
  previous: number[];
  values: number[];
  band: { n: number; scale: "log" | "linear"; t: number; low: number; high: number; center: number };
  checks: { value: number; verdict: string; pctChange: number | null }[];
}
const reference = JSON.parse(readFileSync(new URL("../../fixtures/stats/gate_reference.json", import.meta.url), "utf8")) as { command: string; cases: GateCase[] };

const UNIT = { rtt: "us", throughput: "Mbit/s", hops: "hops" } as const;

function head(metric: Metric, value: number, over: Partial<Headline> = {}): Headline {
  return { variant: "v", measure: "0", pair: "a->b", metric, unit: UNIT[metric], statistic: metric === "hops" ? "p50" : "mean", value, ...over };
}

/** Runs an hour apart from 2025-01-01, each with the given headlines. */
function runs(series: Headline[][]): GateRun[] {
  return series.map((headlines, i) => ({ runId: `r${i}`, startedAt: new Date(Date.UTC(2025, 0, 1, i)).toISOString(), headlines }));
}

/** `values` as previous runs of one headline, then `value` as the new run. */
function gateOne(metric: Metric, values: number[], value: number, settings: Parameters<typeof gate>[2] = {}) {
  const all = runs([...values, value].map((v) => [head(metric, v)]));
  const report = gate(all.at(-1)!, all.slice(0, -1), settings);
  expect(GateReportSchema.safeParse(report).success).toBe(true);
  expect(report.checks).toHaveLength(1);
  return report.checks[0]!;
}

describe("the gate's prediction band against scipy", () => {
  it("stores the command that made the reference", () => {
    expect(reference.command).toContain("make_gate_reference.py");
    expect(reference.cases.length).toBeGreaterThanOrEqual(6);
  });

  for (const c of reference.cases) {
    it(`${c.name}: band, t and verdicts to 1e-9`, () => {
      const band = predictionBand(c.previous, c.alpha, c.band.scale);
      expect(band.scale).toBe(c.band.scale);
      expect(band.level).toBeCloseTo(1 - c.alpha, 15);
      expectRel(band.t, c.band.t, 1e-9, "t quantile");
      expectRel(band.low, c.band.low, 1e-9, "band low");
      expectRel(band.high, c.band.high, 1e-9, "band high");
      expectRel(band.center, c.band.center, 1e-9, "band centre");
      for (const expected of c.checks) {
        const got = gateOne(c.metric, c.previous, expected.value, { alpha: c.alpha, minRuns: 5, thresholdPct: c.threshold, thresholdPctByMetric: { [c.metric]: c.threshold } });
        expect(got.band?.scale, `${expected.value}`).toBe(c.band.scale);
        expect(got.verdict, `${c.name}: ${expected.value}`).toBe(expected.verdict);
        if (expected.pctChange === null) expect(got.pctChange).toBeNull();
        else expect(Math.abs(got.pctChange! - expected.pctChange)).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(expected.pctChange)));
        expect(got.n).toBe(c.previous.length);
      }
    });
  }
});

describe("gate", () => {
  const stable = [400, 410, 395, 405, 402, 398];

  it("says learning (n of k) below the minimum, with no band, never a pass", () => {
    const c = gateOne("rtt", stable.slice(0, 4), 900);
    expect(c.verdict).toBe("learning");
    expect(c.band).toBeNull();
    expect(c.text).toMatch(/^learning \(4 of 5\)/);
    expect(gateOne("rtt", [], 900).text).toMatch(/^learning \(0 of 5\)/);
    expect(gateOne("rtt", stable.slice(0, 5), 900).verdict).toBe("regression");
    expect(gateOne("rtt", stable, 900, { minRuns: 7, maxRuns: 20 }).text).toMatch(/^learning \(6 of 7\)/);
  });

  it("judges by direction: RTT up and throughput down are worse; hops either way are a change", () => {
    expect(gateOne("rtt", stable, 500).verdict).toBe("regression");
    expect(gateOne("rtt", stable, 300).verdict).toBe("improvement");
    expect(gateOne("throughput", stable, 300).verdict).toBe("regression");
    expect(gateOne("throughput", stable, 500).verdict).toBe("improvement");
    expect(gateOne("hops", [8, 8, 8, 8, 8], 9).verdict).toBe("changed");
    expect(gateOne("hops", [8, 8, 8, 8, 8], 7).verdict).toBe("changed");
    expect(gateOne("hops", [8, 8, 8, 8, 8], 8).verdict).toBe("within band");
  });

  it("flags only beyond both the band and the threshold", () => {
    const flat = [400, 400.4, 399.7, 400.1, 400.2];
    const small = gateOne("rtt", flat, 410); // +2.5 %: outside a band of ±0.3 %
    expect(small.band!.high).toBeLessThan(410);
    expect(small.verdict).toBe("within threshold");
    expect(gateOne("rtt", flat, 410, { thresholdPct: 2 }).verdict).toBe("regression");
    expect(gateOne("rtt", flat, 430).verdict).toBe("regression");
    // A wide band: +20 % is beyond the threshold but inside what the runs vary by.
    expect(gateOne("rtt", [300, 500, 350, 450, 400], 480).verdict).toBe("within band");
  });

  it("says its basis and figures in the text", () => {
    const c = gateOne("rtt", stable, 500);
    expect(c.basis).toBe("previous runs");
    expect(c.runs).toEqual(["r0", "r1", "r2", "r3", "r4", "r5"]);
    expect(c.text).toMatch(/^regression: 500 us, 99 % prediction band [\d.]+–[\d.]+ us from 6 previous runs \(one unit each, log scale\); \+[\d.]+ % vs their geometric mean [\d.]+; threshold 5 %$/);
  });

  it("uses the most recent maxRuns runs that have the headline, whatever order they are given in", () => {
    const values = [100, 100, 100, 400, 410, 395, 405, 402];
    const all = runs(values.map((v) => [head("rtt", v)]));
    const newRun = runs([...values, 404].map((v) => [head("rtt", v)])).at(-1)!;
    const report = gate(newRun, [...all].reverse(), { maxRuns: 5 });
    expect(report.previousRuns).toEqual(all.map((r) => r.runId));
    expect(report.checks[0]!.runs).toEqual(["r3", "r4", "r5", "r6", "r7"]);
    expect(report.checks[0]!.verdict).toBe("within band");
  });

  it("counts only the previous runs that have the headline, and lists what the new run lacks", () => {
    const a = (v: number) => head("rtt", v, { variant: "a" });
    const b = (v: number) => head("rtt", v, { variant: "b" });
    const all = runs([[a(400), b(50)], [a(401)], [a(399), b(51)], [a(402)], [a(400)], [a(401), b(52)]]);
    const newRun = { runId: "new", startedAt: "2025-02-01T00:00:00.000Z", headlines: [a(401)] };
    const report = gate(newRun, all);
    expect(report.checks.map((c) => [c.variant, c.n, c.verdict])).toEqual([["a", 6, "within band"]]);
    expect(report.missing).toEqual([{ variant: "b", measure: "0", pair: "a->b", metric: "rtt", statistic: "mean", n: 3 }]);
    const withB = gate({ ...newRun, headlines: [a(401), b(51)] }, all);
    expect(withB.checks.find((c) => c.variant === "b")!.text).toMatch(/^learning \(3 of 5\)/);
  });

  it("refuses previous runs that are not previous, or given twice", () => {
    const all = runs([400, 401, 399, 402, 400, 401].map((v) => [head("rtt", v)]));
    expect(() => gate(all[2]!, all)).toThrow(/among its own previous runs/);
    expect(() => gate(all[2]!, all.slice(3))).toThrow(/not before run r2/);
    expect(() => gate(all[5]!, [all[0]!, all[0]!])).toThrow(/given twice/);
    expect(() => gate(all[5]!, all.slice(0, 5), { minRuns: 6, maxRuns: 5 })).toThrow(/maxRuns/);
    expect(() => gate({ ...all[5]!, headlines: [head("rtt", 1), head("rtt", 2)] }, [])).toThrow(/ambiguous/);
  });
});

describe("headlinesOf", () => {
  // Through the schema, so the row has whatever columns the history's rows have now (measureId since version 4).
  const row = (metric: Metric, level: SummaryRow["level"], over: Partial<SummaryRow> = {}): SummaryRow =>
    SummaryRowSchema.parse({
      runId: "r",
      measureId: null,
      variant: "v",
      measure: 1,
      tool: "t",
      pair: "a->b",
      level,
      replica: level === "all" ? null : 0,
      repetition: level === "run" ? 0 : null,
      metric,
      unit: UNIT[metric],
      n: 100,
      mean: 11,
      stddev: 1,
      min: 9,
      p50: 10,
      p90: 12,
      p95: 13,
      p99: 14,
      p999: 15,
      p9999: null,
      p99999: null,
      max: 16,
      unitMean: null,
      unitP50: null,
      ...over,
    });

  it("takes the merged rows: mean and p50 of RTT, mean throughput, median hops", () => {
    const rows = [row("rtt", "all"), row("rtt", "replica"), row("rtt", "run"), row("throughput", "all", { variant: "w" }), row("hops", "all", { variant: "h" }), row("rtt", "all", { variant: "empty", n: 0 })];
    expect(headlinesOf(rows).map((h) => [h.variant, h.measure, h.metric, h.statistic, h.value])).toEqual([
      ["v", "1", "rtt", "mean", 11],
      ["v", "1", "rtt", "p50", 10],
      ["w", "1", "throughput", "mean", 11],
      ["h", "1", "hops", "p50", 10],
    ]);
    expect(headlinesOf([row("rtt", "all")], (r) => `ping#${r.measure}`)[0]!.measure).toBe("ping#1");
  });
});
