import { describe, expect, it } from "vitest";
import { cdfPoints, cdfQuantiles, fiveNumbers, percentileMarks, quantileOfSorted, sortedCopy, windowSeries } from "../../../src/report/html/chartData.ts";
import { reportCharts } from "../../../src/report/html/reportCharts.ts";
import { renderSvg } from "../../../src/report/html/renderSvg.ts";
import { around, fakeRun } from "../history/fakeRun.ts";

describe("chart data", () => {
  it("nearest-rank quantiles of sorted values (numpy's inverted_cdf)", () => {
    const sorted = sortedCopy([5, 1, 4, 2, 3]);
    // numpy 2.4.6: numpy.quantile([1,2,3,4,5], [0, .2, .21, .5, .8, .81, 1], method="inverted_cdf") = [1, 1, 2, 3, 4, 5, 5]
    expect([0, 0.2, 0.21, 0.5, 0.8, 0.81, 1].map((q) => quantileOfSorted(sorted, q))).toEqual([1, 1, 2, 3, 4, 5, 5]);
    expect(() => quantileOfSorted(new Float64Array(0), 0.5)).toThrow(/no samples/);
    // 0.28 × 25 is 7.000000000000001 in floating point: still the 7th value.
    expect(quantileOfSorted(sortedCopy(Array.from({ length: 25 }, (_, i) => i + 1)), 0.28)).toBe(7);
  });

  it("a CDF keeps the tail and the maximum, with quantiles only as deep as the count reaches, whatever the count", () => {
    const qs = cdfQuantiles(10_000_000);
    expect(qs.length).toBeLessThan(400);
    expect(qs.at(-1)).toBe(1);
    expect(Math.max(...qs.filter((q) => q < 1))).toBeGreaterThan(0.999999);
    expect(cdfQuantiles(100).filter((q) => q > 0.99 && q < 1)).toEqual([]);
    const samples = Array.from({ length: 100_000 }, (_, i) => i + 1);
    const points = cdfPoints(sortedCopy(samples));
    expect(points.at(-1)!.value).toBe(100_000);
    expect(points.find((p) => p.q === 0.5)!.value).toBe(50_000);
    // "Nines": p99 is 2, p99.9 is 3.
    expect(points.find((p) => Math.abs(p.q - 0.999) < 1e-12)!.nines).toBeCloseTo(3, 9);
  });

  it("marks a tail percentile only where the count supports it (n ≥ 1/(1−q))", () => {
    expect(percentileMarks(sortedCopy(around(10, 999))).map((m) => m.label)).toEqual(["p50", "p99"]);
    expect(percentileMarks(sortedCopy(around(10, 1000))).map((m) => m.label)).toEqual(["p50", "p99", "p99.9"]);
    expect(percentileMarks(sortedCopy(around(10, 10_000))).map((m) => m.label)).toEqual(["p50", "p99", "p99.9", "p99.99"]);
  });

  it("five numbers and window means", () => {
    expect(fiveNumbers(sortedCopy([1, 2, 3, 4, 5, 6, 7, 8]))).toEqual({ min: 1, q1: 2, median: 4, q3: 6, max: 8, count: 8 });
    const w = windowSeries(Array.from({ length: 1000 }, (_, i) => (i < 500 ? 10 : 20)), 100, 10);
    expect(w).toHaveLength(10);
    expect(w.map((p) => p.mean)).toEqual([10, 10, 10, 10, 10, 20, 20, 20, 20, 20]);
    expect(w[0]!.t).toBeCloseTo(5, 9);
    expect(windowSeries([], 10)).toEqual([]);
  });
});

describe("the report's charts", () => {
  it("per measure: a CDF, boxes, a time series and the Δ with its CI; each renders to SVG with marks", async () => {
    const run = fakeRun("r", (c) => around(c.variant.includes("true") ? 80 : 100, 300, c.replica + 1), { replicas: 2 });
    const results = { ...run.results, measurements: run.results.measurements.map((m) => ({ ...m, startedAt: "2026-11-23T10:00:00Z", finishedAt: "2026-11-23T10:00:30Z" })) };
    const charts = reportCharts(results, run.samplesOf);
    expect(charts).toHaveLength(1);
    expect(charts[0]!.charts.map((c) => c.id.split("-").at(-1))).toEqual(["cdf", "box", "time", "delta"]);
    const cdf = charts[0]!.charts[0]!;
    // One series per variant, all of its replicas' samples together.
    expect(JSON.stringify(cdf.spec)).toContain("accelnet=false (n=600)");
    const delta = charts[0]!.charts[3]!.spec as { data: { values: { estimate: number; lo: number; hi: number; over: string }[] } };
    expect(delta.data.values).toEqual([{ label: "accelnet false → true", estimate: results.comparisons[0]!.diffMean!.estimate, lo: results.comparisons[0]!.diffMean!.ci95[0], hi: results.comparisons[0]!.diffMean!.ci95[1], over: "replica" }]);
    for (const chart of charts[0]!.charts) {
      const svg = await renderSvg(chart.spec);
      expect(svg, chart.id).toMatch(/^<svg /);
      expect(svg.match(/class="mark-[a-z]+ role-mark/g)?.length ?? 0, chart.id).toBeGreaterThan(0);
    }
  });

  it("no samples (a tool's own summary only): no distribution charts, and nothing for failed cells", () => {
    const run = fakeRun("r", () => around(100, 50));
    const charts = reportCharts(run.results, () => []);
    expect(charts[0]!.charts.map((c) => c.id.split("-").at(-1))).toEqual(["delta"]);
    const failed = { ...run.results, measurements: run.results.measurements.map((m) => ({ ...m, status: "failed" as const })) };
    expect(reportCharts(failed, run.samplesOf)).toEqual([]);
  });
});
