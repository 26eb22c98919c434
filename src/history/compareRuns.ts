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
import { planDifferences, sameVariantSetup } from "../plan/planDifferences.ts";
import { identityOf, measureIdentities } from "../plan/planHash.ts";
import { blocksOf, compareGroups, difference, groupBy, inferenceUnitFromCounts, NOTES, type SampledMeasurement } from "../results/comparisons.ts";
import type { ComparisonStats } from "../results/schema.ts";
import type { Summary } from "../results/summary.ts";
import type { RunRow, SummaryRow } from "./historySchema.ts";

/** What tells whether two runs are comparable: their plan (hash and content), latlab version, event, target. */
export type ComparableFacts = Pick<RunRow, "target" | "latlabVersion" | "event" | "planHash" | "plan">;

/** One side of a comparison of runs. */
export interface RunSource {
  runId: string;
  experiment: string;
  /** The run's summaries at every level (historyRecords for a folder, the store for the history). */
  summaries: readonly SummaryRow[];
  /** The run's measurements with their samples: present for a results folder that kept them. */
  sampled?: readonly SampledMeasurement[];
  /** The run's plan, version and event (historyRecords' run row); absent: not checked, and said so. */
  facts?: ComparableFacts;
}

export interface RunComparison extends ComparisonStats {
  variant: string;
  pair: string;
  /** The measure's identity (planHash.ts), or undefined when a run was recorded before identities (matched by index). */
  measureId?: string;
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
  /**
   * Whether the runs ran the same plan (equal plan hashes): null when a run has no hash or was
   * given without its facts. `differences` says what changed, when both plans are known.
   */
  plan: { same: boolean | null; differences: string[] };
  /** What the reader must know before reading the figures (a plan or latlab version that changed, measures matched by index). */
  notes: string[];
}

/**
 * Measures are matched by identity (tool, parameters as run, pairs, path), not by their index
 * in the file: an edited experiment that moves or changes a measure does not pair different
 * things. Rows recorded before identities (null) fall back to the index, and the notes say so.
 */
const keyOf = (r: { variant: string; measure: number; pair: string }, id: string | null | undefined, byIndex: boolean) =>
  `${r.variant}\u0000${byIndex || !id ? `#${r.measure}` : id}\u0000${r.pair}`;
const pairOf = (m: { from: string; to: string }) => `${m.from}->${m.to}`;
const shortId = (id: string | null | undefined) => (id ? id.slice(0, 8) : undefined);

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

/** How the runs' facts differ: the plan (with what changed), the latlab version, the event. */
function factsCompared(a: RunSource, b: RunSource): { plan: RunsCompared["plan"]; notes: string[] } {
  const notes: string[] = [];
  const fa = a.facts;
  const fb = b.facts;
  if (!fa || !fb) return { plan: { same: null, differences: [] }, notes: [`run ${fa ? b.runId : a.runId}: its plan, latlab version and event are unknown here: not checked`] };
  if (fa.target !== fb.target) throw new Error(`run ${a.runId} ran on target "${fa.target}" and run ${b.runId} on "${fb.target}": different networks, nothing of them compares`);
  if (fa.latlabVersion !== fb.latlabVersion) notes.push(`latlab ${fa.latlabVersion} in run A, ${fb.latlabVersion} in run B: a change may be latlab's own`);
  if (fa.event !== fb.event) notes.push(`run A was started by ${fa.event ?? "an unknown event"}, run B by ${fb.event ?? "an unknown event"}`);
  if (fa.planHash === null || fb.planHash === null) {
    notes.push(`run ${fa.planHash === null ? a.runId : b.runId} was recorded before plan hashes: whether both ran the same plan (sizes, durations…) is unknown`);
    return { plan: { same: null, differences: [] }, notes };
  }
  if (fa.planHash === fb.planHash) return { plan: { same: true, differences: [] }, notes };
  const differences = fa.plan && fb.plan ? planDifferences(fa.plan, fb.plan) : [];
  notes.push(
    `the runs ran different plans (plan ${shortId(fa.planHash)} and ${shortId(fb.planHash)}): only measures of the same identity on variants set up alike are compared${differences.length ? "" : "; what changed is unknown (a plan not kept in the history)"}`,
  );
  return { plan: { same: false, differences }, notes };
}

/** Run B (candidate) against run A (baseline), per variant × measure × host pair measured in both. */
export function compareRuns(a: RunSource, b: RunSource): RunsCompared {
  if (a.experiment !== b.experiment) throw new Error(`run ${a.runId} is of experiment "${a.experiment}" and run ${b.runId} of "${b.experiment}": only runs of one experiment compare`);
  const { plan, notes } = factsCompared(a, b);
  const runRows = (s: RunSource) => s.summaries.filter((r) => r.level === "run");
  // One run without identities: both matched by index (an identity and an index never meet).
  const byIndex = [a, b].some((s) => runRows(s).some((r) => !r.measureId));
  if (byIndex) notes.push("measures matched by their index in the experiment file (a run was recorded before measure identities): an edit that moved a measure pairs different things");
  const rowKey = (r: SummaryRow) => keyOf(r, r.measureId, byIndex);
  const labels = new Map<string, string>();
  const keysOf = (s: RunSource) => {
    const keys = new Set<string>();
    for (const r of runRows(s)) {
      const key = rowKey(r);
      keys.add(key);
      labels.set(key, `${r.variant} measure ${r.measure} ${r.tool} ${r.pair}`);
    }
    return keys;
  };
  const ka = keysOf(a);
  const kb = keysOf(b);
  const both = [...kb].filter((k) => ka.has(k));
  const bySamples = a.sampled && b.sampled;
  const sampledKey = (s: RunSource) => {
    const identities = measureIdentities(s.sampled!.map((x) => x.measurement));
    return (m: SampledMeasurement["measurement"]) => keyOf({ variant: m.variant, measure: m.measure, pair: pairOf(m) }, identityOf(identities, m.variant, m.measure), byIndex);
  };
  const groupsA = bySamples ? groupBy(a.sampled!, sampledKey(a)) : undefined;
  const groupsB = bySamples ? groupBy(b.sampled!, sampledKey(b)) : undefined;
  const comparisons: RunComparison[] = [];
  const notComparable: string[] = [];
  for (const key of both) {
    const rowB = runRows(b).find((r) => rowKey(r) === key)!;
    const { variant, pair, measure } = rowB;
    // A variant whose hosts, replicas or repetitions changed: every figure of it changed with them.
    if (plan.same === false && !(a.facts?.plan && b.facts?.plan && sameVariantSetup(a.facts.plan, b.facts.plan, variant))) {
      notComparable.push(`${labels.get(key)}: variant ${variant} was not set up alike in both runs (see the plan differences)`);
      continue;
    }
    const ids = { variant, pair, ...(byIndex || !rowB.measureId ? {} : { measureId: rowB.measureId }), baselineRun: a.runId, candidateRun: b.runId };
    const ga = groupsA?.get(key);
    const gb = groupsB?.get(key);
    if (ga && gb) {
      comparisons.push({ ...ids, source: "samples", ...compareGroups("runs", measure, ga, gb) });
      continue;
    }
    const stats = fromSummaries(
      measure,
      a.summaries.filter((r) => rowKey(r) === key),
      b.summaries.filter((r) => rowKey(r) === key),
    );
    if (stats) comparisons.push({ ...ids, source: "summaries", ...stats });
    else notComparable.push(`${labels.get(key)}: a run of it has several tool runs and none kept its samples, so there is no merged summary to compare (compare the results folders)`);
  }
  return {
    comparisons,
    onlyInBaseline: [...ka].filter((k) => !kb.has(k)).map((k) => labels.get(k)!),
    onlyInCandidate: [...kb].filter((k) => !ka.has(k)).map((k) => labels.get(k)!),
    notComparable,
    plan,
    notes,
  };
}
