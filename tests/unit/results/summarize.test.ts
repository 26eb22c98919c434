import { describe, expect, it } from "vitest";
import { summarize, summarizeMany } from "../../../src/results/summarize.ts";
import type { ToolResult } from "../../../src/tools/types.ts";

const result = (samples: number[], reported?: ToolResult["reported"]): ToolResult => ({ metric: "rtt", unit: "us", samples, warnings: [], ...(reported ? { reported } : {}) });
// What a sockperf stdout captured by hand gives: its own summary, no samples and no p95.
const printed = { count: 1000, mean: 61.2, p50: 60, p90: 70, p99: 90, p999: 120, min: 40, max: 300, stddev: 9.5 };

describe("summarize", () => {
  it("summarises the samples when there are any, whatever the tool printed", () => {
    const s = summarize(result([10, 20, 30, 40], { ...printed }))!;
    expect([s.count, s.mean, s.min, s.max, s.p95]).toEqual([4, 25, 10, 40, 40]);
    // Histogram percentiles: within v/1024 of the exact nearest-rank value (see distribution.ts).
    expect(Math.abs(s.p50 - 20)).toBeLessThanOrEqual(20 / 1024);
  });

  it("falls back to the tool's own summary, without a p95 it never printed", () => {
    const s = summarize(result([], { ...printed, printed: "sockperf: ...", test: "ping-pong" }));
    expect(s).toEqual({ metric: "rtt", unit: "us", ...printed });
    expect(s).not.toHaveProperty("p95");
  });

  it("keeps the tool's p95 when it printed one", () => {
    expect(summarize(result([], { ...printed, p95: 80 }))!.p95).toBe(80);
  });

  it("keeps the result's metric and unit over the tool's copy of them", () => {
    const s = summarize({ ...result([], { ...printed, metric: "throughput", unit: "Mbit/s" }) });
    expect([s!.metric, s!.unit]).toEqual(["rtt", "us"]);
  });

  it("gives nothing when neither samples nor a complete summary exist", () => {
    expect(summarize(result([]))).toBeUndefined();
    const { p99: _dropped, ...incomplete } = printed;
    expect(summarize(result([], incomplete))).toBeUndefined();
  });
});

describe("summarizeMany", () => {
  it("merges sample sets as one distribution and ignores empty ones", () => {
    const s = summarizeMany("rtt", "us", [[1, 2, 3], [], [4, 5, 6, 7, 8, 9, 10]])!;
    expect([s.count, s.mean, s.min, s.max]).toEqual([10, 5.5, 1, 10]);
    expect(Math.abs(s.p50 - 5)).toBeLessThanOrEqual(5 / 1024);
    expect(summarizeMany("rtt", "us", [[], []])).toBeUndefined();
  });
});
