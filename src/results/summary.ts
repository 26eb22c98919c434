import { z } from "zod";

/**
 * The metrics latlab reports. Latency is always a round-trip time in microseconds, throughput
 * is goodput in Mbit/s, hops is the number of routed hops on a path.
 */
export const MetricSchema = z.enum(["rtt", "throughput", "hops"]);
export type Metric = z.infer<typeof MetricSchema>;

export const UnitSchema = z.enum(["us", "Mbit/s", "hops"]);
export type Unit = z.infer<typeof UnitSchema>;

/** Distribution summary of one measurement (or of several merged). */
export const SummarySchema = z.object({
  metric: MetricSchema,
  unit: UnitSchema,
  count: z.number().int().nonnegative(),
  mean: z.number(),
  p50: z.number(),
  p90: z.number(),
  /** Always from samples; absent when only a tool's own summary exists (sockperf prints no p95). */
  p95: z.number().optional(),
  p99: z.number(),
  /**
   * Always present (results.json and the history have always had it), even when the count does
   * not support it (see {@link tailSupported}): then it is the maximum under another name, and
   * the reports print "—" for it.
   */
  p999: z.number(),
  /**
   * p99.99 and p99.999: present only where the count supports them (n ≥ 10 000 and n ≥ 100 000,
   * see {@link tailSupported}); with fewer samples the nearest rank is the largest sample, so a
   * figure would be the maximum passed off as a tail percentile. Optional also because summaries
   * written before latlab reported them, and tools' own summaries that print none, lack them.
   */
  p9999: z.number().optional(),
  p99999: z.number().optional(),
  min: z.number(),
  max: z.number(),
  stddev: z.number(),
});
export type Summary = z.infer<typeof SummarySchema>;

/**
 * The tail percentiles the reports show (as sockperf prints them), each as the exact fraction
 * num/den of the quantile and its column label.
 */
export const TAIL_PERCENTILES = {
  p999: { label: "p99.9", num: 999, den: 1_000 },
  p9999: { label: "p99.99", num: 9_999, den: 10_000 },
  p99999: { label: "p99.999", num: 99_999, den: 100_000 },
} as const;
export type TailPercentile = keyof typeof TAIL_PERCENTILES;

/**
 * Whether `count` samples support the tail percentile q = num/den: n ≥ 1/(1 − q), i.e. p99.9 from
 * 1 000 samples, p99.99 from 10 000, p99.999 from 100 000. Below that n·(1 − q) < 1, so the
 * nearest rank ceil(n·q) is n: the "percentile" is just the largest sample. Computed in exact
 * integers (n·(den − num) ≥ den), free of 1/(1 − 0.999) = 999.9999999999991.
 */
export function tailSupported(count: number, percentile: TailPercentile): boolean {
  const { num, den } = TAIL_PERCENTILES[percentile];
  return Number.isSafeInteger(count) && count > 0 && count * (den - num) >= den;
}
