import type { Cell } from "../plan/types.ts";
import { blockBootstrapDiffMeanCI, compareDescriptive, mean } from "./compare.ts";
import type { Comparison, Difference, InferenceUnit, Measurement, PairComparison, Results } from "./schema.ts";
import { unalignedPpgs, type PlacementCaveat } from "./placement.ts";
import { summarizeMany } from "./summarize.ts";
import type { Metric, Unit } from "./summary.ts";
import { exactMannWhitney, unitStatistics, welchT } from "./unitInference.ts";

export interface SampledMeasurement {
  measurement: Measurement;
  samples: number[];
}

interface Run {
  replica: number;
  repetition: number;
  samples: number[];
}

/** The successful runs of one variant × measure × host pair (or any other key), each run kept apart. */
export interface Group {
  metric: Metric;
  unit: Unit;
  tool: string;
  runs: Run[];
}

/** Samples of successful measurements grouped by a key, each run (replica, repetition) kept apart. */
export function groupBy(sampled: readonly SampledMeasurement[], key: (m: Measurement) => string): Map<string, Group> {
  const groups = new Map<string, Group>();
  for (const { measurement, samples } of sampled) {
    if (measurement.status !== "ok" || !measurement.summary || !samples.length) continue;
    const k = key(measurement);
    const group = groups.get(k) ?? { metric: measurement.summary.metric, unit: measurement.summary.unit, tool: measurement.tool, runs: [] };
    group.runs.push({ replica: measurement.replica, repetition: measurement.repetition, samples });
    groups.set(k, group);
  }
  return groups;
}

const finite = <K extends string>(key: K, value: number): { [P in K]?: number } =>
  (Number.isFinite(value) ? { [key]: value } : {}) as { [P in K]?: number };

/** Below this many samples a side, a bootstrap CI would only pretend. */
export const MIN_SAMPLES_FOR_INFERENCE = 3;

/** Below this many independent units a side, inference falls back to sample blocks of one run. */
export const MIN_UNITS_FOR_INFERENCE = 2;

/** A group's samples per unit, in order: per replica (its repetitions merged) or per run. */
function unitsOf(group: Group, by: "replica" | "repetition"): number[][] {
  const units = new Map<string, { order: [number, number]; samples: number[] }>();
  for (const run of group.runs) {
    const key = by === "replica" ? `${run.replica}` : `${run.replica}/${run.repetition}`;
    const unit = units.get(key) ?? { order: [run.replica, by === "replica" ? 0 : run.repetition], samples: [] };
    for (const v of run.samples) unit.samples.push(v);
    units.set(key, unit);
  }
  return [...units.values()].sort((a, b) => a.order[0] - b.order[0] || a.order[1] - b.order[1]).map((u) => u.samples);
}

/**
 * The independent unit two groups are compared over: replicas (independent deployments) when
 * both sides have ≥ 2; else runs (repetitions, on the same hosts) when both have ≥ 2; else
 * blocks of the samples of one run.
 */
function inferenceUnitOf(base: Pick<Group, "runs">, cand: Pick<Group, "runs">): InferenceUnit {
  return inferenceUnitFromCounts(unitCounts(base.runs), unitCounts(cand.runs));
}

/** Distinct replicas and runs (replica × repetition) among a side's runs. */
export function unitCounts(runs: readonly { replica: number; repetition: number }[]): { replicas: number; runs: number } {
  return { replicas: new Set(runs.map((r) => r.replica)).size, runs: new Set(runs.map((r) => `${r.replica}/${r.repetition}`)).size };
}

/** {@link inferenceUnitOf} from the sides' unit counts: what a comparison made from the history (no samples) uses too. */
export function inferenceUnitFromCounts(base: { replicas: number; runs: number }, cand: { replicas: number; runs: number }): InferenceUnit {
  const count = (c: { replicas: number; runs: number }, by: "replica" | "repetition") => (by === "replica" ? c.replicas : c.runs);
  if (Math.min(count(base, "replica"), count(cand, "replica")) >= MIN_UNITS_FOR_INFERENCE) return "replica";
  // Repetitions are alike units only when each side is one deployment: with two replicas on one
  // side (the other's second failed), runs of different hosts would be counted as if of the same.
  const oneDeploymentEach = count(base, "replica") === 1 && count(cand, "replica") === 1;
  if (oneDeploymentEach && Math.min(count(base, "repetition"), count(cand, "repetition")) >= MIN_UNITS_FOR_INFERENCE) return "repetition";
  return "sample-blocks";
}

/**
 * Whether the comparison is of two variants (each on its own hosts), of two host pairs of one
 * variant, or of one variant in two runs (`latlab compare`: each run on its own hosts).
 */
export type Kind = "variants" | "pairs" | "runs";

export const NOTES: Record<Kind, Record<Exclude<InferenceUnit, "replica">, string>> = {
  variants: {
    repetition:
      "CI and p over repetitions on the same hosts (one deployment on a side): they cover run-to-run variation, not the hosts drawn; placement cannot be separated from the host — use replicas ≥ 2",
    "sample-blocks":
      "fewer than two independent units on a side (one run of one deployment, or replicas on one side only): placement cannot be separated from the host; the CI is a block bootstrap over serially correlated samples and no p-value is given — use replicas ≥ 2",
  },
  runs: {
    repetition:
      "CI and p over repetitions on each run's hosts (one deployment a run): they cover run-to-run variation, not the hosts drawn; a change between the runs cannot be separated from a change of hosts — use replicas ≥ 2",
    "sample-blocks":
      "one deployment a run: a change between the runs cannot be separated from a change of hosts; the CI is a block bootstrap over serially correlated samples and no p-value is given — use replicas ≥ 2",
  },
  pairs: {
    repetition:
      "CI and p over repetitions on the same hosts (one deployment): the pairs' difference is that of these hosts, not of the placement — use replicas ≥ 2",
    "sample-blocks":
      "one run of a pair (one deployment): the pairs' difference is that of these hosts, not of the placement; the CI is a block bootstrap over serially correlated samples and no p-value is given — use replicas ≥ 2",
  },
};

/** Bootstrap blocks of n samples (compare.ts: blocks of ceil(√n)): what a sample-blocks CI is over. */
export const blocksOf = (n: number) => Math.ceil(n / Math.ceil(Math.sqrt(n)));

/** Welch's interval and test, and the exact rank test, over unit statistics (≥ 2 a side). */
export function difference(base: readonly number[], cand: readonly number[]): Difference {
  const w = welchT(base, cand);
  return {
    estimate: w.estimate,
    ci95: w.ci95,
    method: "welch-t",
    ...(w.test ? { welch: w.test } : {}),
    rankTest: exactMannWhitney(base, cand),
  };
}

/**
 * The CI and p of a comparison, over independent units (see {@link inferenceUnitOf}):
 * - replicas or repetitions: each unit's mean and median; diffMean / diffP50 are the differences
 *   of the means of those unit statistics (an unweighted mean over units, so not the merged
 *   samples' difference when units differ in size) with Welch's t interval and test, and the
 *   exact Mann–Whitney over units beside it (no normality assumed; with 3 a side its p is ≥ 0.1).
 * - sample-blocks: one run on a side. The block bootstrap CI of the merged samples' mean
 *   difference is kept, labelled, with a note; no p-value at all: a rank test over thousands of
 *   correlated samples of one host set gives p < 1e-15 for any host-to-host difference, which
 *   is not a finding about the variant.
 */
function inference(kind: Kind, base: Group, cand: Group, b: readonly number[], v: readonly number[]): Pick<Comparison, "inference" | "diffMean" | "diffP50"> {
  const unit = inferenceUnitOf(base, cand);
  if (unit === "sample-blocks") {
    const inferable = Math.min(b.length, v.length) >= MIN_SAMPLES_FOR_INFERENCE;
    return {
      inference: { unit, units: { baseline: blocksOf(b.length), candidate: blocksOf(v.length) }, note: NOTES[kind][unit] },
      ...(inferable ? { diffMean: { estimate: mean(v) - mean(b), ci95: blockBootstrapDiffMeanCI(b, v), method: "block-bootstrap" as const } } : {}),
    };
  }
  const sb = unitStatistics(unitsOf(base, unit));
  const sc = unitStatistics(unitsOf(cand, unit));
  return {
    inference: {
      unit,
      units: { baseline: sb.mean.length, candidate: sc.mean.length },
      unitStatistics: { baseline: sb, candidate: sc },
      ...(unit === "repetition" ? { note: NOTES[kind][unit] } : {}),
    },
    diffMean: difference(sb.mean, sc.mean),
    diffP50: difference(sb.p50, sc.p50),
  };
}

/** The descriptive figures of all samples merged and the inference over units (see {@link inference}). */
export function compareGroups(kind: Kind, measure: number, base: Group, cand: Group) {
  const bSets = base.runs.map((r) => r.samples);
  const vSets = cand.runs.map((r) => r.samples);
  const b = bSets.flat();
  const v = vSets.flat();
  // Descriptive: every sample of every run merged. Inference: over units, below.
  const c = compareDescriptive(b, v);
  return {
    measure,
    tool: cand.tool,
    metric: cand.metric,
    unit: cand.unit,
    variantSummary: summarizeMany(cand.metric, cand.unit, vSets)!,
    baselineSummary: summarizeMany(base.metric, base.unit, bSets)!,
    // A zero baseline (a stalled iperf3 run, a 0 percentile) has no ratio: IEEE gives
    // Infinity or NaN, which JSON cannot hold and the schema refuses, so the field is left out.
    ...finite("ratioMean", c.ratioMean),
    ...finite("pctChangeMean", c.pctChangeMean),
    ...finite("ratioP50", c.ratioP50),
    ...finite("ratioP99", c.ratioP99),
    ...inference(kind, base, cand, b, v),
  };
}

const measureIndex = (cells: readonly Cell[]) => {
  const byId = new Map(cells.map((c) => [c.id, c.measure]));
  return (m: Measurement) => byId.get(m.cell);
};
const measuresOf = (cells: readonly Cell[]) => [...new Set(cells.map((c) => c.measure))].sort((a, b) => a - b);

const pairOf = (c: { from: string; to: string }) => `${c.from}->${c.to}`;

/**
 * Every variant against its baseline, per measure and host pair: pooling the pairs would mix
 * a same-zone client with a cross-region one and compare the blend. Pairs, variants or
 * baselines without samples are skipped.
 */
export function compareVariants(baselineOf: Readonly<Record<string, string>>, variants: readonly string[], sampled: readonly SampledMeasurement[], cells: readonly Cell[]): Comparison[] {
  const measureOf = measureIndex(cells);
  const groups = groupBy(sampled, (m) => `${m.variant}\u0000${measureOf(m)}\u0000${pairOf(m)}`);
  const out: Comparison[] = [];
  for (const variant of variants) {
    const baseline = baselineOf[variant];
    if (baseline === undefined || variant === baseline) continue;
    for (const measure of measuresOf(cells)) {
      const pairs = [...new Set(cells.filter((c) => c.variant === variant && c.measure === measure).map(pairOf))];
      for (const pair of pairs) {
        const base = groups.get(`${baseline}\u0000${measure}\u0000${pair}`);
        const cand = groups.get(`${variant}\u0000${measure}\u0000${pair}`);
        if (base && cand) out.push({ variant, baseline, pair, ...compareGroups("variants", measure, base, cand) });
      }
    }
  }
  return out;
}

/**
 * Within each variant and measure that covers several host pairs, every pair against each pair
 * declared before it — the seed's "cross-AZ vs same AZ, cross-region vs same AZ, cross-region
 * vs cross-AZ".
 */
export function comparePairs(sampled: readonly SampledMeasurement[], cells: readonly Cell[]): PairComparison[] {
  const measureOf = measureIndex(cells);
  const groups = groupBy(sampled, (m) => `${m.variant}\u0000${measureOf(m)}\u0000${pairOf(m)}`);
  const out: PairComparison[] = [];
  const variants = [...new Set(cells.map((c) => c.variant))];
  for (const variant of variants) {
    for (const measure of measuresOf(cells)) {
      const pairs = [...new Set(cells.filter((c) => c.variant === variant && c.measure === measure).map(pairOf))];
      for (let j = 1; j < pairs.length; j++) {
        for (let i = 0; i < j; i++) {
          const base = groups.get(`${variant}\u0000${measure}\u0000${pairs[i]}`);
          const cand = groups.get(`${variant}\u0000${measure}\u0000${pairs[j]}`);
          if (base && cand) out.push({ variant, pair: pairs[j]!, baselinePair: pairs[i]!, ...compareGroups("pairs", measure, base, cand) });
        }
      }
    }
  }
  return out;
}

/** One side of a comparison: a variant's cells of one host pair. */
export interface ComparisonSide {
  side: PlacementCaveat["side"];
  variant: string;
  /** `from->to`. */
  pair: string;
}

/**
 * The proximity placement groups a comparison's sides relied on that ARM did not report Aligned
 * (NotAligned, or Unknown: not confirmed): the PPGs of the pair's two hosts in the deployments
 * whose cells of that pair measured. [] when every such PPG is Aligned, or no host carries
 * placement evidence (a local run, a run made before latlab read it).
 */
export function placementCaveats(results: Pick<Results, "variants" | "measurements">, sides: readonly ComparisonSide[]): PlacementCaveat[] {
  // Two pairs of one deployment (a pair comparison) may share a PPG: it is said once.
  const seen = new Set<string>();
  return sides.flatMap(({ side, variant, pair }) => {
    const deployments = new Set(results.measurements.filter((m) => m.status === "ok" && m.variant === variant && pairOf(m) === pair).map((m) => m.deployment));
    return unalignedPpgs(
      results.variants.find((v) => v.id === variant),
      deployments,
      pair.split("->"),
      side,
    ).filter((c) => !seen.has(`${c.deployment}\u0000${c.ppg}`) && seen.add(`${c.deployment}\u0000${c.ppg}`));
  });
}

/** {@link placementCaveats} of a variant against its baseline. */
export const comparisonCaveats = (results: Pick<Results, "variants" | "measurements">, c: Pick<Comparison, "variant" | "baseline" | "pair">) =>
  placementCaveats(results, [
    { side: "baseline", variant: c.baseline, pair: c.pair },
    { side: "candidate", variant: c.variant, pair: c.pair },
  ]);

/** {@link placementCaveats} of two host pairs of one variant. */
export const pairComparisonCaveats = (results: Pick<Results, "variants" | "measurements">, c: Pick<PairComparison, "variant" | "pair" | "baselinePair">) =>
  placementCaveats(results, [
    { side: "baseline", variant: c.variant, pair: c.baselinePair },
    { side: "candidate", variant: c.variant, pair: c.pair },
  ]);
