import { z } from "zod";

/** The metrics latlab reports. Latency is always a round-trip time in microseconds. */
export const MetricSchema = z.enum(["rtt", "throughput"]);
export type Metric = z.infer<typeof MetricSchema>;

export const UnitSchema = z.enum(["us", "Mbit/s"]);
export type Unit = z.infer<typeof UnitSchema>;

/** Distribution summary of one measurement (or of several merged). */
export const SummarySchema = z.object({
  metric: MetricSchema,
  unit: UnitSchema,
  count: z.number().int().nonnegative(),
  mean: z.number(),
  p50: z.number(),
  p90: z.number(),
  p99: z.number(),
  p999: z.number(),
  min: z.number(),
  max: z.number(),
  stddev: z.number(),
});
export type Summary = z.infer<typeof SummarySchema>;
