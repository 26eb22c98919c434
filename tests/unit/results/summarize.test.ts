import { describe, expect, it } from "vitest";
import { summarize, summarizeMany } from "../../../src/results/summarize.ts";
import { parseSockperf } from "../../../src/tools/sockperf/parse.ts";
import type { ToolResult } from "../../../src/tools/types.ts";
import { fixture } from "../tools/helpers.ts";

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

  it("keeps the tool's p99.99 / p99.999 (sockperf's p99_99 / p99_999) only where the count supports them", () => {
    const tails = { p99_99: 150, p99_999: 200 };
    const at = (count: number) => summarize(result([], { ...printed, ...tails, count }))!;
    expect(at(1_000)).not.toHaveProperty("p9999");
    expect(at(1_000)).not.toHaveProperty("p99999");
    expect(at(10_000).p9999).toBe(150);
    expect(at(10_000)).not.toHaveProperty("p99999");
    expect([at(100_000).p9999, at(100_000).p99999]).toEqual([150, 200]);
    // A figure under Summary's own name wins over sockperf's spelling of it.
    expect(summarize(result([], { ...printed, ...tails, count: 100_000, p9999: 151 }))!.p9999).toBe(151);
  });

  it("fills p99.99 from sockperf's printed summary of 48 937 observations, and no p99.999", () => {
    const r = parseSockperf({ stdout: fixture("sockperf", "v3.10-udp-full-rtt.public.stdout") });
    const s = summarize(r)!;
    expect([s.count, s.p999, s.p9999]).toEqual([48_937, 15.372, 17.387]);
    expect(s).not.toHaveProperty("p99999"); // sockperf printed 17.814, its maximum: not a p99.999 of 48 937
    // 550 observations: sockperf's 99.990 and 99.999 are its maximum; neither is kept.
    const small = summarize(parseSockperf({ stdout: fixture("sockperf", "tcp-full-rtt.stdout") }))!;
    expect(small.count).toBe(550);
    expect(small).not.toHaveProperty("p9999");
    expect(small).not.toHaveProperty("p99999");
  });

  it("samples: p99.99 and p99.999 appear at 10 000 and 100 000 samples", () => {
    const ramp = (n: number) => Array.from({ length: n }, (_, i) => 1 + i / 100);
    expect(summarize(result(ramp(9_999)))).not.toHaveProperty("p9999");
    expect(summarize(result(ramp(10_000)))!.p9999).toBeDefined();
    expect(summarize(result(ramp(99_999)))).not.toHaveProperty("p99999");
    expect(summarize(result(ramp(100_000)))!.p99999).toBeDefined();
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
