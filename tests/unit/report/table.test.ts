import { describe, expect, it } from "vitest";
import { comparisonTable } from "../../../src/report/table.ts";
import { measureLabels, notEmulatedAxes } from "../../../src/report/wording.ts";
import type { Measurement, Results } from "../../../src/results/schema.ts";
import { buildPlan, defineExperiment } from "../../../src/index.ts";
import type { Cell } from "../../../src/plan/types.ts";
import { compareVariants } from "../../../src/results/comparisons.ts";
import { summarizeMany } from "../../../src/results/summarize.ts";
import type { Summary } from "../../../src/results/summary.ts";

const m = (measure: number, tool: string, params: Record<string, unknown>, more: Partial<Measurement> = {}) =>
  ({ measure, tool, params, path: "private", from: "client", to: "server", ...more }) as unknown as Measurement;

describe("measureLabels", () => {
  it("names a tool alone when it appears once, and by what differs when it appears twice", () => {
    const labels = measureLabels([m(0, "iperf3", { parallel: 4 }), m(1, "iperf3", { parallel: 4, window: "32M" }), m(2, "ping", { count: 5 })]);
    expect([...labels.entries()]).toEqual([
      [0, "iperf3 window=-"],
      [1, "iperf3 window=32M"],
      [2, "ping"],
    ]);
  });

  it("tells apart measures of one tool that differ only in path or in pairs", () => {
    const labels = measureLabels([
      m(0, "iperf3", { parallel: 4 }),
      m(1, "iperf3", { parallel: 4 }, { path: "public" }),
      m(2, "ping", {}, { from: "a" }),
      m(2, "ping", {}, { from: "b" }),
      m(3, "ping", {}, { from: "c" }),
    ]);
    expect([...labels.entries()]).toEqual([
      [0, "iperf3 path=private"],
      [1, "iperf3 path=public"],
      [2, "ping pairs=a->server,b->server"],
      [3, "ping pairs=c->server"],
    ]);
  });
});

describe("notEmulatedAxes", () => {
  const results = (axes: Record<string, unknown>, host: Record<string, unknown>) =>
    ({ variants: [{ id: "v", axes, baseline: "v", hosts: [{ role: "a", accelnet: false, availabilitySet: null, ...host, actual: { accelnetEmulated: false, availabilitySetEmulated: false, sizeEmulated: true } }] }] }) as never;
  it("names what the experiment varies or asks for but the target cannot emulate", () => {
    expect(notEmulatedAxes(results({ accelnet: true }, {}))).toEqual(["accelnet"]);
    expect(notEmulatedAxes(results({}, { availabilitySet: "avset" }))).toEqual(["availabilitySet"]);
    expect(notEmulatedAxes(results({}, {}))).toEqual([]);
  });
});

describe("comparisonTable", () => {
  /** Results of a plan whose cells measured `samplesOf(cell)`; `summaryOf` stands for a tool's own summary. */
  function resultsOf(cells: readonly Cell[], plan: ReturnType<typeof buildPlan>, samplesOf: (c: Cell) => number[], summaryOf?: (c: Cell) => Summary | undefined): Results {
    const measurements: Measurement[] = cells.map((c) => ({
      cell: c.id, measure: c.measure, variant: c.variant, deployment: c.deployment, tool: c.tool, params: c.params, from: c.from, to: c.to,
      path: c.path, pathKind: c.pathKind, replica: c.replica, repetition: c.repetition, status: "ok", startedAt: "", finishedAt: "", warnings: [], raw: [],
      summary: summaryOf?.(c) ?? summarizeMany("rtt", "us", [samplesOf(c)])!,
    }));
    const sampled = measurements.map((measurement, i) => ({ measurement, samples: samplesOf(cells[i]!) }));
    return {
      schemaVersion: 1, runId: "r", experiment: { name: "x", description: "x", source: "x.ts" }, target: "local", startedAt: "", finishedAt: "", status: "complete",
      environment: { latlabVersion: "0", node: "24", kernel: "k", toolVersions: {}, shaping: { latency: "unavailable", bandwidth: "applied", note: "shaping: test" }, facts: {} },
      baseline: plan.baseline,
      variants: plan.variants.map((v) => ({ id: v.id, axes: v.axes, baseline: plan.baselineOf[v.id]!, hosts: [] })),
      measurements,
      comparisons: compareVariants(plan.baselineOf, plan.variants.map((v) => v.id), sampled, plan.cells),
      pairComparisons: [],
      teardown: { status: "ok", errors: [], removed: [] },
    };
  }
  /** The table's rows as lists of cell texts, those whose cells include every word given. */
  const rowsOf = (text: string, ...words: string[]) =>
    text
      .split("\n")
      .filter((line) => line.startsWith("│"))
      .map((line) => line.split("│").slice(1, -1).map((cell) => cell.trim()))
      .filter((cells) => words.every((w) => cells.includes(w)));
  const byCell = (cells: readonly Cell[], samplesOf: (c: Cell) => number[]) => (id: string) => samplesOf(cells.find((c) => c.id === id)!);
  const n = (value: number) => Array.from({ length: 20 }, (_, i) => value * (1 + (i % 2) / 100));

  it("shows on each pair's row the comparison of that pair", () => {
    const plan = buildPlan(defineExperiment({ name: "x", description: "x", axes: { accelnet: [false, true] }, hosts: { server: {}, near: {}, far: {} }, measure: [{ tool: "ping" }] }));
    const value = (c: Cell) => (c.from === "near" ? 100 : 1000) * (c.variant === "accelnet=true" ? (c.from === "near" ? 0.5 : 2) : 1);
    const text = comparisonTable(resultsOf(plan.cells, plan, (c) => n(value(c))), byCell(plan.cells, (c) => n(value(c))));
    // variant, measure, pair, metric, n, mean, p50, p95, p99, p99.9, p99.99, p99.999, min, max, vs baseline, change, …
    expect(rowsOf(text, "variant")[0]!.slice(6, 14)).toEqual(["p50", "p95", "p99", "p99.9", "p99.99", "p99.999", "min", "max"]);
    expect(rowsOf(text, "accelnet=true", "near->server").map((r) => r.slice(14, 16))).toEqual([["0.50×", "-50.0%"]]);
    expect(rowsOf(text, "accelnet=true", "far->server").map((r) => r.slice(14, 16))).toEqual([["2.00×", "+100.0%"]]);
  });

  it("looks the same with one pair per measure", () => {
    const plan = buildPlan(defineExperiment({ name: "x", description: "x", axes: { accelnet: [false, true] }, hosts: { server: {}, client: {} }, measure: [{ tool: "ping" }] }));
    const samples = (c: Cell) => n(c.variant === "accelnet=true" ? 50 : 100);
    const text = comparisonTable(resultsOf(plan.cells, plan, samples), byCell(plan.cells, samples));
    expect(rowsOf(text, "variant")[0]!.slice(0, 4)).toEqual(["variant", "measure", "metric", "n"]);
    expect(rowsOf(text, "accelnet=true", "ping").map((r) => r.slice(13, 15))).toEqual([["0.50×", "-50.0%"]]);
  });

  it("prints — for a ratio to a zero baseline", () => {
    const plan = buildPlan(defineExperiment({ name: "x", description: "x", axes: { accelnet: [false, true] }, hosts: { server: {}, client: {} }, measure: [{ tool: "ping" }] }));
    const samples = (c: Cell) => (c.variant === "accelnet=true" ? n(5) : n(0).map(() => 0));
    const results = resultsOf(plan.cells, plan, samples);
    expect(results.comparisons[0]).not.toHaveProperty("ratioMean");
    const rows = rowsOf(comparisonTable(results, byCell(plan.cells, samples)), "accelnet=true", "ping");
    expect(rows.map((r) => r.slice(13, 15))).toEqual([["—", "—"]]);
    expect(rows[0]![15]).toMatch(/^\[/);
  });

  describe("says what each comparison's CI and p are over", () => {
    const experiment = (replicas: number, repetitions: number) =>
      buildPlan(defineExperiment({ name: "x", description: "x", axes: { ppg: [false, true] }, hosts: { server: {}, client: {} }, measure: [{ tool: "ping" }], replicas, repetitions }));
    const samples = (c: Cell) => Array.from({ length: 50 }, (_, i) => (c.variant === "ppg=true" ? 80 : 100) + c.replica + c.repetition + (i % 5));
    const tableOf = (p: ReturnType<typeof experiment>) => comparisonTable(resultsOf(p.cells, p, samples), byCell(p.cells, samples));
    // variant, measure, metric, n, mean, p50, p95, p99, p99.9, p99.99, p99.999, min, max, vs baseline, change, CI, p, over
    const lastThree = (text: string) => rowsOf(text, "ppg=true", "ping").map((r) => r.slice(15));

    it("replicas: the row names them and the p-values are Welch's and the rank test's over them", () => {
      const p = experiment(3, 2);
      const results = resultsOf(p.cells, p, samples);
      const text = tableOf(p);
      expect(rowsOf(text, "variant")[0]!.slice(15)).toEqual(["95% CI of Δmean", "p Welch / rank", "over"]);
      const [[ci, pv, over]] = lastThree(text) as [[string, string, string]];
      expect(over).toBe("3+3 replicas");
      const d = results.comparisons[0]!.diffMean!;
      expect(ci).toMatch(/^\[-\d/);
      expect(pv).toBe(`${d.welch!.p < 0.001 ? d.welch!.p.toExponential(1) : d.welch!.p.toFixed(3)} / ${d.rankTest!.p.toFixed(3)}`);
      expect(text).toMatch(/CI and p over independent units/);
      expect(text).not.toMatch(/placement cannot be separated/);
    });

    it("repetitions: the row says they share hosts and the footer says what that cannot tell", () => {
      const text = tableOf(experiment(1, 4));
      expect(lastThree(text)[0]![2]).toBe("4+4 reps (same hosts)");
      expect(text).toMatch(/CI and p over repetitions on the same hosts/);
    });

    it("one run a side: sample blocks, no p-value, and the note that placement is not separated from the host", () => {
      const text = tableOf(experiment(1, 1));
      const [[ci, pv, over]] = lastThree(text) as [[string, string, string]];
      expect([pv, over]).toEqual(["—", "sample blocks"]);
      expect(ci).toMatch(/^\[/);
      expect(text).toMatch(/fewer than two independent units on a side \(one run of one deployment, or replicas on one side only\): placement cannot be separated from the host/);
      expect(text).not.toMatch(/CI and p over independent units/);
    });
  });

  it("shows every measurement that has only the tool's summary, never an average of percentiles", () => {
    const plan = buildPlan(defineExperiment({ name: "x", description: "x", hosts: { server: {}, client: {} }, measure: [{ tool: "qperf" }], repetitions: 2 }));
    const summary = (mean: number): Summary => ({ metric: "rtt", unit: "us", count: 1, mean, p50: mean, p90: mean, p99: mean, p999: mean, min: mean, max: mean, stddev: 0 });
    const results = resultsOf(plan.cells, plan, () => [], (c) => summary(c.repetition ? 300 : 100));
    const text = comparisonTable(results, () => []);
    // measure, metric, n, mean, p50, p95, p99, p99.9, p99.99, p99.999, min, max
    expect(rowsOf(text, "default (baseline)").map((r) => r.slice(1, 13))).toEqual([
      ["qperf [rep0]", "rtt µs", "1", "100", "100", "—", "100", "—", "—", "—", "100", "100"],
      ["qperf [rep1]", "rtt µs", "1", "300", "300", "—", "300", "—", "—", "—", "300", "300"],
    ]);
  });

  describe("tail percentiles p99.9 / p99.99 / p99.999", () => {
    const plan = buildPlan(defineExperiment({ name: "x", description: "x", hosts: { server: {}, client: {} }, measure: [{ tool: "ping" }] }));
    /** n samples: 10 µs but for the 20 largest, 50, 100, …, 1000 µs, so each tail rank shows. */
    const tail = (count: number) => [...Array.from({ length: count - 20 }, () => 10), ...Array.from({ length: 20 }, (_, i) => 50 * (i + 1))];
    const tailsOf = (text: string) => rowsOf(text, "default (baseline)").map((r) => r.slice(7, 12)); // p99 … p99.999, min
    const tableOf = (samples: number[], summary?: Summary) => comparisonTable(resultsOf(plan.cells, plan, () => samples, summary && (() => summary)), () => samples);

    it("each from the count that supports it; '—' below, with a note saying why", () => {
      // Nearest ranks: n = 999: p99 = rank 990 (550), p99.9 = rank 999 = the maximum (1000): not shown.
      const below = tableOf(tail(999));
      expect(tailsOf(below)).toEqual([["550", "—", "—", "—", "10.0"]]);
      expect(below).toMatch(/p99\.9 \/ p99\.99 \/ p99\.999: "—" with fewer than 1,000 \/ 10,000 \/ 100,000 samples \(the nearest rank would be the maximum\)/);
      expect(tailsOf(tableOf(tail(1_000)))).toEqual([["500", "950", "—", "—", "10.0"]]);
      expect(tailsOf(tableOf(tail(10_000)))).toEqual([["10.0", "500", "950", "—", "10.0"]]);
      const all = tableOf(tail(100_000));
      expect(tailsOf(all)).toEqual([["10.0", "10.0", "500", "950", "10.0"]]);
      expect(all).not.toMatch(/with fewer than 1,000/);
    });

    it("a tool's own summary: shown where present and supported, '—' where absent", () => {
      const summary: Summary = { metric: "rtt", unit: "us", count: 20_000, mean: 60, p50: 60, p90: 70, p99: 80, p999: 90, p9999: 95, min: 50, max: 99, stddev: 1 };
      expect(tailsOf(tableOf([], summary))).toEqual([["80.0", "90.0", "95.0", "—", "50.0"]]);
      // A p99.99 where the count does not support it (a summary from elsewhere) is not shown either.
      expect(tailsOf(tableOf([], { ...summary, count: 5_000 }))).toEqual([["80.0", "90.0", "—", "—", "50.0"]]);
    });
  });

  it("merges the measurements with samples and lists those without on their own rows", () => {
    const plan = buildPlan(defineExperiment({ name: "x", description: "x", hosts: { server: {}, client: {} }, measure: [{ tool: "ping" }], repetitions: 3 }));
    const samples = (c: Cell) => (c.repetition < 2 ? n(100) : []);
    const summary = (c: Cell): Summary | undefined => (c.repetition === 2 ? { metric: "rtt", unit: "us", count: 7, mean: 500, p50: 500, p90: 500, p99: 500, p999: 500, min: 500, max: 500, stddev: 0 } : undefined);
    const results = resultsOf(plan.cells, plan, samples, summary);
    const text = comparisonTable(results, byCell(plan.cells, samples));
    expect(rowsOf(text, "default (baseline)").map((r) => r.slice(1, 5))).toEqual([
      ["ping", "rtt µs", "40", "101"],
      ["ping [rep2]", "rtt µs", "7", "500"],
    ]);
  });
});
