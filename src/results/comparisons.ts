import type { Cell } from "../plan/types.ts";
import { compare } from "./compare.ts";
import type { Comparison, Measurement, PairComparison } from "./schema.ts";
import { summarizeMany } from "./summarize.ts";
import type { Metric, Unit } from "./summary.ts";

export interface SampledMeasurement {
  measurement: Measurement;
  samples: number[];
}

interface Group {
  metric: Metric;
  unit: Unit;
  tool: string;
  samples: number[][];
}

/** Samples of successful measurements grouped by a key; replicas and repetitions are merged. */
function groupBy(sampled: readonly SampledMeasurement[], key: (m: Measurement) => string): Map<string, Group> {
  const groups = new Map<string, Group>();
  for (const { measurement, samples } of sampled) {
    if (measurement.status !== "ok" || !measurement.summary || !samples.length) continue;
    const k = key(measurement);
    const group = groups.get(k) ?? { metric: measurement.summary.metric, unit: measurement.summary.unit, tool: measurement.tool, samples: [] };
    group.samples.push(samples);
    groups.set(k, group);
  }
  return groups;
}

const finite = <K extends string>(key: K, value: number): { [P in K]?: number } =>
  (Number.isFinite(value) ? { [key]: value } : {}) as { [P in K]?: number };

/** Below this many samples a side, a bootstrap CI or a rank test would only pretend. */
export const MIN_SAMPLES_FOR_INFERENCE = 3;

function stats(measure: number, base: Group, cand: Group) {
  const b = base.samples.flat();
  const v = cand.samples.flat();
  const c = compare(b, v);
  const inferable = Math.min(b.length, v.length) >= MIN_SAMPLES_FOR_INFERENCE;
  return {
    measure,
    tool: cand.tool,
    metric: cand.metric,
    unit: cand.unit,
    variantSummary: summarizeMany(cand.metric, cand.unit, cand.samples)!,
    baselineSummary: summarizeMany(base.metric, base.unit, base.samples)!,
    // A zero baseline (a stalled iperf3 run, a 0 percentile) has no ratio: IEEE gives
    // Infinity or NaN, which JSON cannot hold and the schema refuses, so the field is left out.
    ...finite("ratioMean", c.ratioMean),
    ...finite("pctChangeMean", c.pctChangeMean),
    ...finite("ratioP50", c.ratioP50),
    ...finite("ratioP99", c.ratioP99),
    ...(inferable
      ? {
          diffMean: { estimate: c.diffMean.estimate, ci95: [c.diffMean.ci95[0], c.diffMean.ci95[1]] as [number, number] },
          mannWhitney: { u: c.mannWhitney.u, p: c.mannWhitney.p },
        }
      : {}),
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
        if (base && cand) out.push({ variant, baseline, pair, ...stats(measure, base, cand) });
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
          if (base && cand) out.push({ variant, pair: pairs[j]!, baselinePair: pairs[i]!, ...stats(measure, base, cand) });
        }
      }
    }
  }
  return out;
}
