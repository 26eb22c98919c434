/**
 * What the regression gate over the history (gate.ts) takes and gives, as zod schemas; the
 * TypeScript types are inferred from them. Pure: no computation here.
 *
 * The gate's unit of inference is the run: each previous comparable run of the experiment gives
 * one value of each headline statistic, and those values are the independent observations the
 * prediction band is made from. Which runs are comparable is decided before (issue 24 item 2);
 * the gate takes them as given.
 */
import { z } from "zod";
import { MetricSchema, UnitSchema } from "../results/summary.ts";

/** The statistics of a run the gate watches (HEADLINE_STATISTICS in gate.ts says which per metric). */
export const HeadlineStatisticSchema = z.enum(["mean", "p50"]);
export type HeadlineStatistic = z.infer<typeof HeadlineStatisticSchema>;

/** One headline figure of one run: a variant × measure × host pair's merged (`all`) statistic. */
export const HeadlineSchema = z.object({
  variant: z.string().min(1),
  /**
   * The measure's identity, as the caller matches measures across runs: today the measure's index
   * as text; the identity of issue 24 item 2 (tool, parameters, pair, path) once it exists.
   */
  measure: z.string().min(1),
  pair: z.string().min(1),
  metric: MetricSchema,
  unit: UnitSchema,
  statistic: HeadlineStatisticSchema,
  /** Finite (zod 4 refuses ±Infinity and NaN). */
  value: z.number(),
});
export type Headline = z.infer<typeof HeadlineSchema>;

/** A run as the gate sees it: when it started (to order the previous runs) and its headline figures. */
export const GateRunSchema = z.object({
  runId: z.string().min(1),
  startedAt: z.iso.datetime({ offset: true }),
  headlines: z.array(HeadlineSchema),
});
export type GateRun = z.infer<typeof GateRunSchema>;

/**
 * The gate's settings. Defaults: a two-sided 99 % prediction band (α = 0.01, so a stationary
 * series steps above it — the regression side — in 0.5 % of checks), at least 5 previous runs
 * before any verdict, the most recent 20 of them (stationarity is easier to believe over a
 * window than over the whole history), and a change of more than 5 % of the previous runs'
 * centre (0 % for hop counts: any route change is worth saying).
 */
export const GateConfigSchema = z
  .object({
    alpha: z.number().gt(0).lt(1).default(0.01),
    /** k: fewer previous runs than this and the verdict is "learning (n of k)". Below 3 the t band is too wide to mean anything (t₀.₉₉₅,₁ ≈ 63.7). */
    minRuns: z.number().int().min(3).default(5),
    /** The band is made from at most this many previous runs, the most recent ones. */
    maxRuns: z.number().int().min(3).default(20),
    /** |change| vs the band's centre, in %, a value outside the band must exceed to be flagged. */
    thresholdPct: z.number().min(0).default(5),
    /** Per-metric thresholds, replacing `thresholdPct` for that metric. */
    thresholdPctByMetric: z.partialRecord(MetricSchema, z.number().min(0)).default({ hops: 0 }),
  })
  .refine((c) => c.maxRuns >= c.minRuns, { message: "maxRuns must be at least minRuns", path: ["maxRuns"] });
export type GateConfig = z.output<typeof GateConfigSchema>;
export type GateConfigInput = z.input<typeof GateConfigSchema>;

/**
 * - `regression` / `improvement`: outside the band, by more than the threshold, in the worse /
 *   better direction (RTT up is worse, throughput down is worse);
 * - `changed`: outside the band by more than the threshold for a metric with no better side
 *   (hop counts: a different path either way is what to report);
 * - `within threshold`: outside the band but by no more than the threshold;
 * - `within band`: inside the prediction band;
 * - `learning`: fewer than k previous runs: no band yet, and never a silent pass.
 */
export const GateVerdictSchema = z.enum(["regression", "improvement", "changed", "within threshold", "within band", "learning"]);
export type GateVerdict = z.infer<typeof GateVerdictSchema>;

/** The prediction band for one new run's value, in the metric's unit. */
export const GateBandSchema = z.object({
  low: z.number(),
  high: z.number(),
  /** The previous runs' centre the change is relative to: their geometric mean (log scale) or mean (linear). */
  center: z.number(),
  /** 1 − α, e.g. 0.99. */
  level: z.number().gt(0).lt(1),
  /** log: the interval is made on the logarithms of the values and mapped back (asymmetric, positive). */
  scale: z.enum(["log", "linear"]),
  /** t_{1−α/2, n−1}, the Student t quantile used. */
  t: z.number(),
});
export type GateBand = z.infer<typeof GateBandSchema>;

/** The gate's answer for one variant × measure × pair × statistic. */
export const GateCheckSchema = HeadlineSchema.omit({ value: true }).extend({
  /** The new run's value. */
  value: z.number(),
  verdict: GateVerdictSchema,
  /** What the band is over: always the previous runs, one value (one unit) each. */
  basis: z.literal("previous runs"),
  /** Previous runs used (n), oldest first. */
  runs: z.array(z.string()),
  n: z.number().int().nonnegative(),
  /** k, the minimum. */
  minRuns: z.number().int().positive(),
  /** null while learning. */
  band: GateBandSchema.nullable(),
  /** (value − centre) / |centre| in %; null while learning or when the centre is 0. */
  pctChange: z.number().nullable(),
  thresholdPct: z.number().min(0),
  /** One line saying the verdict with its figures and its basis. */
  text: z.string(),
});
export type GateCheck = z.infer<typeof GateCheckSchema>;

/** A headline the previous runs had and the new run has not: said, not dropped silently. */
export const GateMissingSchema = HeadlineSchema.omit({ value: true, unit: true }).extend({
  /** How many of the previous runs (within maxRuns) had it. */
  n: z.number().int().positive(),
});
export type GateMissing = z.infer<typeof GateMissingSchema>;

export const GateReportSchema = z.object({
  runId: z.string(),
  /** The settings used, defaults filled in. */
  config: GateConfigSchema,
  /** The previous runs given, oldest first (a check uses those that have its headline, at most maxRuns). */
  previousRuns: z.array(z.string()),
  checks: z.array(GateCheckSchema),
  missing: z.array(GateMissingSchema),
});
export type GateReport = z.infer<typeof GateReportSchema>;
