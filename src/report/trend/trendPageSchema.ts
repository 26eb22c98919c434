/**
 * What the trend page (`latlab report --history`) shows, as zod schemas; the TypeScript types are
 * inferred from them. trendModel.ts makes it from the history (pure), trendPage.ts draws it.
 *
 * One point is one run's headline statistic for one variant × measure × host pair: a figure over
 * that run's merged samples. The band it is drawn against is the gate's (src/history/gate.ts): a
 * prediction interval made from the previous comparable runs, one unit each.
 */
import { z } from "zod";
import { GateBandSchema, GateVerdictSchema, HeadlineStatisticSchema } from "../../history/gateSchema.ts";
import { MetricSchema, UnitSchema } from "../../results/summary.ts";

/** One run as the page lists it. */
export const TrendPageRunSchema = z.object({
  runId: z.string().min(1),
  startedAt: z.string(),
  status: z.string(),
  latlabVersion: z.string(),
  planHash: z.string().nullable(),
  event: z.string().nullable(),
  gitCommit: z.string().nullable(),
  /** How many previous comparable runs the gate had for this run, and why the others were left out. */
  comparable: z.number().int().nonnegative(),
  excluded: z.array(z.object({ runId: z.string(), why: z.array(z.string()) })),
  /** The gate could not judge this run (its error, said rather than dropped); undefined when it could. */
  gateError: z.string().optional(),
});
export type TrendPageRun = z.infer<typeof TrendPageRunSchema>;

/** One run's headline statistic of one series, with the gate's judgement of it. */
export const TrendPointSchema = z.object({
  runId: z.string(),
  startedAt: z.string(),
  /** The series: variant, and the pair when the measure has several. */
  series: z.string(),
  variant: z.string(),
  pair: z.string(),
  value: z.number(),
  /**
   * The history keeps each run's summary (n, mean, percentiles) but no interval for it, so there
   * is none to draw: always null today, said on the page as "no CI recorded".
   */
  ci: z.null(),
  verdict: GateVerdictSchema,
  /** The gate's band for this run; null while learning (fewer than k previous comparable runs). */
  band: GateBandSchema.pick({ low: true, high: true, center: true, level: true, scale: true }).nullable(),
  /** Previous comparable runs the band is made from (n), and the minimum k. */
  n: z.number().int().nonnegative(),
  minRuns: z.number().int().positive(),
  /** The gate's sentence for this point. */
  text: z.string(),
});
export type TrendPoint = z.infer<typeof TrendPointSchema>;

/** One chart: a measure's headline statistic across the experiment's runs, one series per variant (and pair). */
export const TrendMeasureSchema = z.object({
  /** What the points are matched by across runs: the measure identity, or `#<index>` for runs recorded before identities. */
  measureId: z.string(),
  /** The measure's index and tool in the latest run that has it. */
  measure: z.number().int().nonnegative(),
  tool: z.string(),
  metric: MetricSchema,
  unit: UnitSchema,
  statistic: HeadlineStatisticSchema,
  points: z.array(TrendPointSchema),
});
export type TrendMeasure = z.infer<typeof TrendMeasureSchema>;

/** A verdict someone should hear about (regression, or a changed hop count), on any headline statistic. */
export const TrendAlertSchema = z.object({
  runId: z.string(),
  startedAt: z.string(),
  variant: z.string(),
  measure: z.number().int().nonnegative(),
  tool: z.string(),
  pair: z.string(),
  statistic: HeadlineStatisticSchema,
  verdict: GateVerdictSchema,
  text: z.string(),
});
export type TrendAlert = z.infer<typeof TrendAlertSchema>;

/** Where a run's plan hash or latlab version is not its predecessor's (src/history/trend.ts trendChanges). */
export const TrendMarkerSchema = z.object({
  runId: z.string(),
  startedAt: z.string(),
  what: z.array(z.string()),
});
export type TrendMarker = z.infer<typeof TrendMarkerSchema>;

export const TrendExperimentSchema = z.object({
  experiment: z.string().min(1),
  /** Oldest first. */
  runs: z.array(TrendPageRunSchema),
  measures: z.array(TrendMeasureSchema),
  alerts: z.array(TrendAlertSchema),
  changes: z.array(TrendMarkerSchema),
});
export type TrendExperiment = z.infer<typeof TrendExperimentSchema>;

export const TrendPageModelSchema = z.object({
  /** The history file the page was made from, as the user named it. */
  history: z.string(),
  generatedAt: z.string(),
  /** The gate's settings every band was made with (defaults of GateConfigSchema). */
  gate: z.object({ level: z.number(), minRuns: z.number().int(), maxRuns: z.number().int(), thresholdPct: z.number(), thresholdPctByMetric: z.record(z.string(), z.number()) }),
  /** By name. */
  experiments: z.array(TrendExperimentSchema),
});
export type TrendPageModel = z.infer<typeof TrendPageModelSchema>;
