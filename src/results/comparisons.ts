import type { Cell } from "../plan/types.ts";
import { compare } from "./compare.ts";
import type { Comparison, Measurement } from "./schema.ts";
import { summarizeMany } from "./summarize.ts";
import type { Metric, Unit } from "./summary.ts";

export interface SampledMeasurement {
  measurement: Measurement;
  samples: number[];
}

/**
 * Every variant against the baseline, per measure (tool + parameters) and metric: samples of
 * all replicas and repetitions merged. Variants or baselines without samples are skipped.
 */
export function compareVariants(baseline: string, variants: readonly string[], sampled: readonly SampledMeasurement[], cells: readonly Cell[]): Comparison[] {
  const measureOf = new Map(cells.map((c) => [c.id, c.measure]));
  const groups = new Map<string, { metric: Metric; unit: Unit; tool: string; samples: number[][] }>();
  for (const { measurement, samples } of sampled) {
    if (measurement.status !== "ok" || !measurement.summary || !samples.length) continue;
    const key = `${measurement.variant}\u0000${measureOf.get(measurement.cell)}`;
    const group = groups.get(key) ?? { metric: measurement.summary.metric, unit: measurement.summary.unit, tool: measurement.tool, samples: [] };
    group.samples.push(samples);
    groups.set(key, group);
  }
  const measures = [...new Set(cells.map((c) => c.measure))].sort((a, b) => a - b);
  const out: Comparison[] = [];
  for (const variant of variants) {
    if (variant === baseline) continue;
    for (const measure of measures) {
      const base = groups.get(`${baseline}\u0000${measure}`);
      const cand = groups.get(`${variant}\u0000${measure}`);
      if (!base || !cand) continue;
      const baseAll = base.samples.flat();
      const candAll = cand.samples.flat();
      const c = compare(baseAll, candAll);
      out.push({
        variant,
        baseline,
        tool: cand.tool,
        metric: cand.metric,
        unit: cand.unit,
        variantSummary: summarizeMany(cand.metric, cand.unit, cand.samples)!,
        baselineSummary: summarizeMany(base.metric, base.unit, base.samples)!,
        ratioMean: c.ratioMean,
        pctChangeMean: c.pctChangeMean,
        ratioP50: c.ratioP50,
        ratioP99: c.ratioP99,
        diffMean: { estimate: c.diffMean.estimate, ci95: [c.diffMean.ci95[0], c.diffMean.ci95[1]] },
        mannWhitney: { u: c.mannWhitney.u, p: c.mannWhitney.p },
      });
    }
  }
  return out;
}
