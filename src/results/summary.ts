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
  p999: z.number(),
  min: z.number(),
  max: z.number(),
  stddev: z.number(),
});
export type Summary = z.infer<typeof SummarySchema>;
