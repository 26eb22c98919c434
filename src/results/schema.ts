import { z } from "zod";
import { ResolvedHostSchema } from "../dsl/placement.ts";
import { DelayLinePrecisionSchema, DelayLineRunSummarySchema } from "./delayLineRecord.ts";
import { AxisValueSchema, CellSchema, PathKindSchema } from "../plan/types.ts";
import { SummarySchema } from "./summary.ts";
import { HostPlacementSchema } from "./placement.ts";
import { WaveNoteSchema, WavesRecordSchema } from "./waveRecords.ts";

export const SCHEMA_VERSION = 1;

/** What latency/bandwidth emulation the target really applied: never claimed, only observed. */
/** The spread a latency-model entry carries (the local target's model, model/latencySpread.ts): fitted figures with their source, or none and why. */
export const RttSpreadSchema = z.discriminatedUnion("kind", [
  z
    .object({
      kind: z.literal("shifted-lognormal"),
      /** The round trip's floor, µs (the source's minimum). */
      floorUs: z.number().nonnegative(),
      /** The round trip's 99th percentile, µs. */
      p99Us: z.number().positive(),
      /** Where floor and p99 come from (seed and figure), or the rule that derived them. */
      source: z.string().min(1),
    })
    .strict(),
  z.object({ kind: z.literal("none"), /** Why no spread is modelled. */ source: z.string().min(1) }).strict(),
]);
export type RttSpread = z.infer<typeof RttSpreadSchema>;

export const ShapingStatusSchema = z.object({
  latency: z.enum(["applied", "unavailable", "not-applicable"]),
  bandwidth: z.enum(["applied", "unavailable", "not-applicable"]),
  /** One human sentence, e.g. "shaping: unavailable — kernel has no netem". */
  note: z.string(),
  /** How latency was applied, when it was: the kernel's netem, or latlab's delay line (NFQUEUE, where netem is missing). Absent in results made before it was recorded. */
  mechanism: z.enum(["netem", "delay-line"]).optional(),
  /**
   * The delay line's precision, measured at bring-up on one pair of hosts: pings without it and
   * through it, quantile against the model's quantile. Single packets of one series: the
   * delay line's error, no confidence interval.
   */
  delayLinePrecision: DelayLinePrecisionSchema.extend({
    /** "<host> → <host>". */
    pair: z.string(),
  }).optional(),
  /** The latency model used (or that would have been used), with its sources. */
  model: z
    .array(
      z.object({
        pathKind: PathKindSchema,
        accelnet: z.boolean(),
        rttUs: z.number(),
        source: z.string(),
        /** The spread around rttUs (kept as the median), with its source; absent in results made before it was modelled. */
        spread: RttSpreadSchema.optional(),
      }),
    )
    .optional(),
});
export type ShapingStatus = z.infer<typeof ShapingStatusSchema>;

/**
 * A teardown handed over: the run had to end within seconds (a second, different signal during
 * its teardown — a CI runner's SIGTERM before its SIGKILL), so the target started removing what the
 * run holds without waiting (Azure: ARM deleting the run's resource groups) and latlab exited.
 */
export const TeardownHandOverSchema = z.object({
  at: z.string(),
  /** The signal that asked for it. */
  signal: z.string().optional(),
  /** What was started and goes on without latlab (e.g. "resource group … : deletion accepted by ARM"). */
  started: z.array(z.string()),
  /** Commands that finish (or confirm) the teardown later. */
  finishWith: z.array(z.string()),
});
export type TeardownHandOver = z.infer<typeof TeardownHandOverSchema>;

export const TeardownReportSchema = z.object({
  status: z.enum(["ok", "failed", "not-started"]),
  errors: z.array(z.string()),
  /** Things removed (namespaces, links, processes, folders), for the record. */
  removed: z.array(z.string()),
  /** Present when the teardown was handed over instead of finished (status is then "failed": it did not finish here). */
  handedOver: TeardownHandOverSchema.optional(),
  /** The local target's delay line: what its helpers did with the run's traffic, read from their last words at teardown. */
  delayLine: DelayLineRunSummarySchema.optional(),
});
export type TeardownReport = z.infer<typeof TeardownReportSchema>;

const ActualValue = z.union([z.string(), z.number(), z.boolean(), z.null()]);

/**
 * The value of a host's `actual.<feature>Emulated` when only the feature's latency is modelled
 * (latlab's latency model applied between the hosts: Accelerated Networking's per-RTT saving) and
 * nothing else of it — throughput, CPU — is emulated. `false`: not emulated at all (report/wording.ts).
 */
export const LATENCY_ONLY = "latency";

export const HostRecordSchema = ResolvedHostSchema.extend({
  deployment: z.string(),
  /** What the target reports the host really got (path kind, bandwidth cap, zone…). */
  actual: z.record(z.string(), ActualValue),
  /** Differences between what was asked and what was got; empty when none. */
  mismatches: z.array(z.string()),
  /** What the cloud's control plane says of where the host runs (Azure: its PPG's colocation status, its VM's instance view; placement.ts). */
  placement: HostPlacementSchema.optional(),
});
export type HostRecord = z.infer<typeof HostRecordSchema>;

/**
 * Where a cell's wall time went, in seconds: `setup` (tool version, assets, the server started
 * or checked), `client` (the client command from start to end, the tool's own start-up and the
 * runner's polling of a detached client included), `collect` (fetching the files it wrote),
 * `parse` (parsing, the summary, writing the samples); `measurement` is what the tool was asked to
 * measure (sockperf -t, ping count × interval…), the floor the others are overhead over.
 */
export const CellTimingSchema = z.object({
  setupSeconds: z.number().nonnegative(),
  clientSeconds: z.number().nonnegative(),
  collectSeconds: z.number().nonnegative(),
  parseSeconds: z.number().nonnegative(),
  measurementSeconds: z.number().nonnegative(),
});
export type CellTiming = z.infer<typeof CellTimingSchema>;

/**
 * One attempt at a run — `latlab run`, then each `latlab resume` — and the seconds it spent. An
 * attempt that was killed (`finished: false`) wrote no timing of its own: its totalSeconds is from
 * its start to its last results.json (a lower bound), its bring-up, cells and teardown are unknown
 * (absent), and its measurementSeconds is that of the cells it measured.
 */
export const AttemptTimingSchema = z.object({
  /** "run", or "resume N" (the N of the run's `resume.N` fact). */
  attempt: z.string(),
  /** The run id it ran under (a resume brings hosts up under an id of its own). */
  runId: z.string(),
  startedAt: z.string(),
  /** Its end; for an attempt that was killed, when it last wrote results.json. */
  endedAt: z.string(),
  /** false: killed before it wrote its timing (its seconds are what its last results.json shows). */
  finished: z.boolean(),
  /** The cells it measured (status ok) that the results keep. */
  cellsMeasured: z.number().int().nonnegative(),
  totalSeconds: z.number().nonnegative(),
  measurementSeconds: z.number().nonnegative(),
  bringUpSeconds: z.number().nonnegative().optional(),
  cellsSeconds: z.number().nonnegative().optional(),
  teardownSeconds: z.number().nonnegative().optional(),
});
export type AttemptTiming = z.infer<typeof AttemptTimingSchema>;

/**
 * Where the run's wall time went, in seconds: bring-up (target.up), cells (every step of every
 * deployment: connecting, setup, clients, collection), teardown, total (start to results); and
 * `measurementSeconds`, the sum over cells of what their tools were asked to measure, with
 * `overhead` = total ÷ measurement (1.00 would be a run that did nothing but measure).
 */
export const RunTimingSchema = z.object({
  bringUpSeconds: z.number().nonnegative(),
  cellsSeconds: z.number().nonnegative(),
  teardownSeconds: z.number().nonnegative(),
  totalSeconds: z.number().nonnegative(),
  measurementSeconds: z.number().nonnegative(),
  overhead: z.number().nonnegative().optional(),
  /**
   * Whether different deployments' cells ran at the same time (a target whose deployments are
   * separate machines, unless the run asked for --serial): then cellsSeconds is about the
   * slowest deployment's readySeconds + cellsSeconds, not their sum. Absent in runs made before.
   */
  concurrentDeployments: z.boolean().optional(),
  /**
   * Each deployment the runner reached, in plan order: readySeconds opening it (connecting to
   * its hosts, waiting until they were ready — cloud-init, the probe — and what is prepared
   * before its first cell); cellsSeconds running its cells.
   */
  deployments: z.array(z.object({ deployment: z.string(), readySeconds: z.number().nonnegative(), cellsSeconds: z.number().nonnegative() })).optional(),
  /**
   * A run finished by `latlab resume`: every attempt, in order. The fields above are then sums
   * over them (bring-up, cells and teardown over the attempts that recorded theirs). Absent: the
   * run was made in one attempt.
   */
  attempts: z.array(AttemptTimingSchema).optional(),
});
export type RunTiming = z.infer<typeof RunTimingSchema>;

/** One cell's outcome: the cell it ran (as planned) plus what came of it. */
export const MeasurementSchema = CellSchema.pick({
  measure: true,
  variant: true,
  deployment: true,
  tool: true,
  params: true,
  from: true,
  to: true,
  path: true,
  pathKind: true,
  replica: true,
  repetition: true,
}).extend({
  /** The cell's id (see plan.json). */
  cell: z.string(),
  status: z.enum(["ok", "failed"]),
  error: z.string().optional(),
  startedAt: z.string(),
  finishedAt: z.string(),
  summary: SummarySchema.optional(),
  /** The tool's own summary, normalised to the same unit. */
  reported: z.record(z.string(), z.union([z.number(), z.string()])).optional(),
  warnings: z.array(z.string()),
  /** Raw outputs kept under the run folder, relative to results.json. */
  raw: z.array(z.string()),
  /** Samples file (one value a line, normalised unit), relative to results.json. */
  samplesFile: z.string().optional(),
  /** Where the cell's time went (measured cells of runs made since latlab recorded it). */
  timing: CellTimingSchema.optional(),
});
export type Measurement = z.infer<typeof MeasurementSchema>;

/** What a comparison's CI and p-values are computed over: the independent units, never raw samples. */
export const InferenceUnitSchema = z.enum(["replica", "repetition", "sample-blocks"]);
export type InferenceUnit = z.infer<typeof InferenceUnitSchema>;

/**
 * A difference candidate − baseline with its 95 % CI and, over replicas or repetitions, its tests.
 * `welch-t`: Welch's t interval over the unit statistics (scipy.stats.ttest_ind(equal_var=False));
 * `block-bootstrap`: moving-block bootstrap over the samples of one deployment per side (see compare.ts).
 */
export const DifferenceSchema = z.object({
  estimate: z.number(),
  ci95: z.tuple([z.number(), z.number()]),
  method: z.enum(["welch-t", "block-bootstrap"]),
  /** Welch's t-test over the unit statistics; absent when both sides have zero spread. */
  welch: z.object({ t: z.number(), df: z.number(), p: z.number() }).optional(),
  /** Two-sided Mann–Whitney over the unit statistics; `u` is the candidate's; exact (permutation) up to 100 units. */
  rankTest: z.object({ u: z.number(), p: z.number(), method: z.enum(["exact", "asymptotic"]) }).optional(),
});

const UnitValuesSchema = z.object({ mean: z.array(z.number()), p50: z.array(z.number()) });

/**
 * Which units the CI and p are over. Named `inference.unit` because the comparison's own `unit`
 * is the measurement unit (µs, Mbit/s).
 * - `replica`: independent deployments (≥ 2 a side): a variant's effect is separated from its hosts.
 * - `repetition`: runs (≥ 2 a side) on the same hosts: a weaker unit, it covers run-to-run
 *   variation but not the draw of hosts.
 * - `sample-blocks`: one run on a side: a block bootstrap CI over serially correlated samples, no
 *   p-value (one deployment cannot separate placement from the host).
 */
export const InferenceSchema = z.object({
  unit: InferenceUnitSchema.describe(
    "what the CI and p-values are over: replica (independent deployments), repetition (runs on the same hosts: weaker), sample-blocks (one run on a side: block bootstrap CI, no p-value)",
  ),
  /** Units a side: replicas, runs, or (sample-blocks) the bootstrap's blocks, ceil(n / ceil(√n)). */
  units: z.object({ baseline: z.number().int().nonnegative(), candidate: z.number().int().nonnegative() }),
  /** Each unit's mean and median (replica or repetition only), in unit order: one lucky host shows here. */
  unitStatistics: z.object({ baseline: UnitValuesSchema, candidate: UnitValuesSchema }).optional(),
  /** What the unit cannot tell (same hosts, one deployment; units from different waves); absent for replicas in one wave. */
  note: z.string().optional(),
  /** A run made in waves (quota): the waves the units came from (waveRecords.ts). */
  waves: WaveNoteSchema.optional(),
});
export type Inference = z.infer<typeof InferenceSchema>;
export type Difference = z.infer<typeof DifferenceSchema>;

/**
 * One sample set against another: ratios (candidate/baseline) and %-change of all samples merged
 * (descriptive), and a CI and tests over independent units (`inference`).
 */
export const ComparisonStatsSchema = z.object({
  /** Index into the experiment's measure list. */
  measure: z.number().int().nonnegative(),
  tool: z.string(),
  metric: z.string(),
  unit: z.string(),
  variantSummary: SummarySchema,
  baselineSummary: SummarySchema,
  // Optional: a ratio to a zero baseline (a stalled iperf3 run, a 0 µs percentile) is no number.
  ratioMean: z.number().optional().describe("mean(candidate) / mean(baseline); absent when the baseline mean is 0"),
  pctChangeMean: z.number().optional().describe("(mean(candidate) − mean(baseline)) / mean(baseline) × 100; absent when the baseline mean is 0"),
  ratioP50: z.number().optional().describe("p50(candidate) / p50(baseline); absent when the baseline p50 is 0"),
  ratioP99: z.number().optional().describe("p99(candidate) / p99(baseline); absent when the baseline p99 is 0"),
  /** Δ of the means, over `inference.unit`: absent below 3 samples a side (sample-blocks) or when no CI can be had. */
  diffMean: DifferenceSchema.optional().describe("mean(candidate) − mean(baseline) with a 95% CI over inference.unit: Welch t over unit means, or a block bootstrap for sample-blocks"),
  /** Δ of the unit medians (p50 of each unit's samples), over replicas or repetitions only. */
  diffP50: DifferenceSchema.optional().describe("difference of the mean unit medians with Welch's 95% CI; replica or repetition only"),
  inference: InferenceSchema,
});

/** A variant against its baseline variant, for one measure and one host pair. */
export const ComparisonSchema = ComparisonStatsSchema.extend({
  variant: z.string(),
  baseline: z.string(),
  /** The host pair, `from->to`: the same pair in the variant and in its baseline. */
  pair: z.string(),
});
export type Comparison = z.infer<typeof ComparisonSchema>;
export type ComparisonStats = z.infer<typeof ComparisonStatsSchema>;

/** Within one variant, one host pair against an earlier one (seed 000: "cross-zone 1.7× same-zone"). */
export const PairComparisonSchema = ComparisonStatsSchema.extend({
  variant: z.string(),
  pair: z.string(),
  baselinePair: z.string(),
});
export type PairComparison = z.infer<typeof PairComparisonSchema>;

/**
 * What told a run to stop measuring: a signal (Ctrl-C, kill, a hang-up, a CI runner cancelling the
 * step), or its own `--time-limit`. The cells it did not reach are recorded as not run either way.
 */
export const RunStopSchema = z.discriminatedUnion("by", [
  z.object({ by: z.literal("signal"), signal: z.string(), at: z.string() }),
  z.object({ by: z.literal("time-limit"), timeLimitMinutes: z.number().positive(), at: z.string() }),
]);
export type RunStopRecord = z.infer<typeof RunStopSchema>;

export const ResultsSchema = z.object({
  schemaVersion: z.literal(SCHEMA_VERSION),
  runId: z.string(),
  experiment: z.object({
    name: z.string(),
    description: z.string(),
    source: z.string(),
    /** Sizes the reproduced reports ran instead of this run's (the experiment's `seedSizes`). */
    seedSizes: z.array(z.object({ seed: z.string(), size: z.string(), note: z.string().optional() })).optional(),
  }),
  target: z.string(),
  /**
   * What makes two runs comparable, hashed (src/plan/planHash.ts): the target, each variant's
   * axes, hosts, replicas and repetitions, and each measure's tool, parameters as run (so the
   * duration), pairs and path. Two runs with the same hash measured the same thing the same way.
   * Absent in results made before it was recorded.
   */
  planHash: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional()
    .describe("sha256 of what makes runs comparable (target; per variant its axes, hosts, replicas, repetitions; per measure its tool, parameters as run, pairs, path): see src/plan/planHash.ts; absent in runs made before it was recorded"),
  startedAt: z.string(),
  finishedAt: z.string(),
  /**
   * `running`: written while the run goes on (results.json is rewritten as cells finish, with the
   * cells finished so far and no comparisons yet). A results.json still `running` after its run
   * ended is what a run that stopped without finishing (a crash, kill -9, a power cut) kept.
   */
  status: z
    .enum(["complete", "partial", "failed", "interrupted", "running"])
    .describe("complete, partial (some cells failed), failed, interrupted; running: written while the run goes on (finished cells only, no comparisons) — still running after the run ended means the run stopped without finishing"),
  error: z.string().optional(),
  environment: z.object({
    latlabVersion: z.string(),
    node: z.string(),
    kernel: z.string(),
    toolVersions: z.record(z.string(), z.string()),
    shaping: ShapingStatusSchema,
    facts: z.record(z.string(), z.string()),
    /**
     * What started the run: GitHub Actions' event name (schedule, workflow_dispatch, push…),
     * else "local" (runEvent.ts). Absent in results made before it was recorded: then the
     * `github.event` fact says it, when there is one.
     */
    event: z.string().min(1).optional().describe("what started the run: GitHub Actions' GITHUB_EVENT_NAME (schedule, workflow_dispatch, push, …), else local; absent in runs made before it was recorded"),
  }),
  baseline: z.string(),
  variants: z.array(
    z.object({
      id: z.string(),
      axes: z.record(z.string(), AxisValueSchema),
      /** The variant this one is compared with (itself for a baseline). */
      baseline: z.string(),
      hosts: z.array(HostRecordSchema),
    }),
  ),
  measurements: z.array(MeasurementSchema),
  comparisons: z.array(ComparisonSchema),
  pairComparisons: z.array(PairComparisonSchema),
  teardown: TeardownReportSchema,
  /** What told the run to stop measuring before its plan was done (a signal, its --time-limit); absent: nothing did. */
  stopped: RunStopSchema.optional(),
  /** Where the run's time went (runs made since latlab recorded it). */
  timing: RunTimingSchema.optional(),
  /** The waves the deployments ran in, when they could not all be up at once (quota, --max-vcpus); absent: one wave. */
  waves: WavesRecordSchema.optional(),
});
export type Results = z.infer<typeof ResultsSchema>;
