/**
 * `latlab compare <runA> <runB>`: each variant × measure × host pair of run B against the same in
 * run A, with the statistics variants are compared with (comparisons.ts), so a change between
 * runs is judged like a difference between variants — over independent units, labelled.
 * Pure: the CLI reads the runs.
 *
 * - Both runs as results folders with their samples: exactly comparisons.ts' figures (ratios of
 *   all samples merged; CI and p over replicas or repetitions; else the block bootstrap, no p).
 * - Either run only in the history (no samples kept): the descriptive figures come from the
 *   histogram summaries (percentiles within 0.1 %), the CI and p over replicas or repetitions
 *   from each unit's exact mean and median, which the history keeps — the same numbers; with
 *   one deployment and one run a side there is no CI at all (a bootstrap needs the samples).
 */
import { blocksOf, compareGroups, difference, groupBy, inferenceUnitFromCounts, NOTES, type SampledMeasurement } from "../results/comparisons.ts";
import type { ComparisonStats } from "../results/schema.ts";
import type { Summary } from "../results/summary.ts";
import type { SummaryRow } from "./historySchema.ts";

/** One side of a comparison of runs. */
export interface RunSource {
  runId: string;
  experiment: string;
  /** The run's summaries at every level (historyRecords for a folder, the store for the history). */
  summaries: readonly SummaryRow[];
  /** The run's measurements with their samples: present for a results folder that kept them. */
  sampled?: readonly SampledMeasurement[];
}

export interface RunComparison extends ComparisonStats {
  variant: string;
  pair: string;
  /** Run A (the baseline) and run B. */
  baselineRun: string;
  candidateRun: string;
  /** Where the figures came from: both runs' samples, or the history's summaries. */
  source: "samples" | "summaries";
}

export interface RunsCompared {
  comparisons: RunComparison[];
  /** variant × measure × pair keys measured in one run only. */
  onlyInBaseline: string[];
  onlyInCandidate: string[];
  /** Measured in both runs but not comparable, with why. */
  notComparable: string[];
}

const keyOf = (r: { variant: string; measure: number; pair: string }) => `${r.variant}\u0000${r.measure}\u0000${r.pair}`;
const label = (key: string) => {
  const [variant, measure, pair] = key.split("\u0000");
  return `${variant} measure ${measure} ${pair}`;
};
const pairOf = (m: { from: string; to: string }) => `${m.from}->${m.to}`;

const finite = <K extends string>(key: K, value: number): { [P in K]?: number } => (Number.isFinite(value) ? { [key]: value } : {}) as { [P in K]?: number };

function summaryOf(row: SummaryRow): Summary {
  return {
    metric: row.metric,
    unit: row.unit,
    count: row.n,
    mean: row.mean,
    p50: row.p50,
    p90: row.p90,
    ...(row.p95 === null ? {} : { p95: row.p95 }),
    p99: row.p99,
    p999: row.p999,
    ...(row.p9999 === null ? {} : { p9999: row.p9999 }),
    ...(row.p99999 === null ? {} : { p99999: row.p99999 }),
    min: row.min,
    max: row.max,
    stddev: row.stddev,
  };
}

const HISTORY_NOTE =
  "from the history: fewer than two independent units (replicas, or repetitions of one deployment) on a side, and the history keeps each unit's mean and median, not the samples: no CI — compare the two runs' results folders for a block-bootstrap CI (which, over one deployment a run, cannot separate a change from the hosts drawn)";

/** The comparison of one key from the summaries alone; undefined when a side has no merged summary. */
function fromSummaries(measure: number, base: readonly SummaryRow[], cand: readonly SummaryRow[]): ComparisonStats | undefined {
  const allB = base.find((r) => r.level === "all");
  const allC = cand.find((r) => r.level === "all");
  if (!allB || !allC) return undefined;
  const runsB = base.filter((r) => r.level === "run");
  const runsC = cand.filter((r) => r.level === "run");
  const counts = (runs: readonly SummaryRow[]) => ({ replicas: new Set(runs.map((r) => r.replica)).size, runs: runs.length });
  const unit = inferenceUnitFromCounts(counts(runsB), counts(runsC));
  const descriptive = {
    measure,
    tool: allC.tool,
    metric: allC.metric,
    unit: allC.unit,
    variantSummary: summaryOf(allC),
    baselineSummary: summaryOf(allB),
    ...finite("ratioMean", allC.mean / allB.mean),
    ...finite("pctChangeMean", ((allC.mean - allB.mean) / allB.mean) * 100),
    ...finite("ratioP50", allC.p50 / allB.p50),
    ...finite("ratioP99", allC.p99 / allB.p99),
  };
  const level = unit === "replica" ? "replica" : "run";
  const unitsB = base.filter((r) => r.level === level);
  const unitsC = cand.filter((r) => r.level === level);
  const exact = [...unitsB, ...unitsC].every((r) => r.unitMean !== null && r.unitP50 !== null);
  if (unit === "sample-blocks" || !exact) {
    return {
      ...descriptive,
      inference: {
        unit: "sample-blocks",
        units: { baseline: blocksOf(allB.n), candidate: blocksOf(allC.n) },
        note: exact ? HISTORY_NOTE : "some runs kept no samples, so their units' exact statistics are unknown: no CI",
      },
    };
  }
  const order = (a: SummaryRow, b: SummaryRow) => (a.replica ?? 0) - (b.replica ?? 0) || (a.repetition ?? 0) - (b.repetition ?? 0);
  const sb = { mean: [...unitsB].sort(order).map((r) => r.unitMean!), p50: [...unitsB].sort(order).map((r) => r.unitP50!) };
  const sc = { mean: [...unitsC].sort(order).map((r) => r.unitMean!), p50: [...unitsC].sort(order).map((r) => r.unitP50!) };
  return {
    ...descriptive,
    inference: {
      unit,
      units: { baseline: sb.mean.length, candidate: sc.mean.length },
      unitStatistics: { baseline: sb, candidate: sc },
      ...(unit === "repetition" ? { note: NOTES.runs.repetition } : {}),
    },
    diffMean: difference(sb.mean, sc.mean),
    diffP50: difference(sb.p50, sc.p50),
  };
}

/** Run B (candidate) against run A (baseline), per variant × measure × host pair measured in both. */
export function compareRuns(a: RunSource, b: RunSource): RunsCompared {
  if (a.experiment !== b.experiment) throw new Error(`run ${a.runId} is of experiment "${a.experiment}" and run ${b.runId} of "${b.experiment}": only runs of one experiment compare`);
  const keysOf = (s: RunSource) => new Set(s.summaries.filter((r) => r.level === "run").map(keyOf));
  const ka = keysOf(a);
  const kb = keysOf(b);
  const both = [...kb].filter((k) => ka.has(k));
  const bySamples = a.sampled && b.sampled;
  const groupsA = bySamples ? groupBy(a.sampled!, (m) => keyOf({ variant: m.variant, measure: m.measure, pair: pairOf(m) })) : undefined;
  const groupsB = bySamples ? groupBy(b.sampled!, (m) => keyOf({ variant: m.variant, measure: m.measure, pair: pairOf(m) })) : undefined;
  const comparisons: RunComparison[] = [];
  const notComparable: string[] = [];
  for (const key of both) {
    const [variant, measureText, pair] = key.split("\u0000") as [string, string, string];
    const measure = Number(measureText);
    const ids = { variant, pair, baselineRun: a.runId, candidateRun: b.runId };
    const ga = groupsA?.get(key);
    const gb = groupsB?.get(key);
    if (ga && gb) {
      comparisons.push({ ...ids, source: "samples", ...compareGroups("runs", measure, ga, gb) });
      continue;
    }
    const stats = fromSummaries(
      measure,
      a.summaries.filter((r) => keyOf(r) === key),
      b.summaries.filter((r) => keyOf(r) === key),
    );
    if (stats) comparisons.push({ ...ids, source: "summaries", ...stats });
    else notComparable.push(`${label(key)}: a run of it has several tool runs and none kept its samples, so there is no merged summary to compare (compare the results folders)`);
  }
  return {
    comparisons,
    onlyInBaseline: [...ka].filter((k) => !kb.has(k)).map(label),
    onlyInCandidate: [...kb].filter((k) => !ka.has(k)).map(label),
    notComparable,
  };
}
