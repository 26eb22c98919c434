/**
 * `--fail-on-regression <percent>`: which compared figures got worse by more than the threshold
 * with a 95 % CI that excludes zero. Pure.
 *
 * Worse is higher for round-trip times and hop counts, lower for throughput. The change is the
 * difference's estimate relative to the baseline's value of the same statistic (the mean of the
 * unit means or medians when the CI is over units; the merged samples' mean for sample blocks).
 * A figure without a CI is never a regression: it is reported as undecided, with why.
 *
 * A regression is `confounded` when its CI is not over replicas: over one deployment a run (its
 * repetitions, or blocks of its samples) a change between runs cannot be told from the change of
 * hosts every new deployment draws — the CLI then exits with its own code, which the scheduled
 * workflow reports as a warning, not as a failure.
 */
import type { Metric } from "../results/summary.ts";
import { mean } from "../results/compare.ts";
import type { RunComparison } from "./compareRuns.ts";

export type Verdict = "regression" | "improvement" | "changed within threshold" | "no clear change" | "no CI";

export interface Finding {
  comparison: RunComparison;
  statistic: "mean" | "p50";
  estimate?: number;
  ci95?: [number, number];
  /** The baseline's value of the statistic, the change is relative to. */
  baselineValue: number;
  /** Signed change in % of the baseline value; undefined when the baseline value is 0. */
  pctChange?: number;
  verdict: Verdict;
  /** The CI is over one deployment a run (repetitions or sample blocks), not over replicas. */
  confounded: boolean;
}

/** +1 when a larger value is worse, −1 when a smaller one is. */
export const WORSE_DIRECTION: Record<Metric, 1 | -1> = { rtt: 1, hops: 1, throughput: -1 };

export function assess(comparisons: readonly RunComparison[], thresholdPct: number): Finding[] {
  if (!Number.isFinite(thresholdPct) || thresholdPct < 0) throw new RangeError(`regression threshold must be a percentage ≥ 0, got ${thresholdPct}`);
  const findings: Finding[] = [];
  for (const c of comparisons) {
    const direction = WORSE_DIRECTION[c.metric as Metric];
    for (const statistic of ["mean", "p50"] as const) {
      const d = statistic === "mean" ? c.diffMean : c.diffP50;
      const units = c.inference.unitStatistics?.baseline;
      // p50 has a CI only over units; without one it is not assessed at all (the mean row says "no CI").
      if (statistic === "p50" && !d) continue;
      const baselineValue = units ? mean(units[statistic]) : statistic === "mean" ? c.baselineSummary.mean : c.baselineSummary.p50;
      if (!d) {
        findings.push({ comparison: c, statistic, baselineValue, verdict: "no CI", confounded: c.inference.unit !== "replica" });
        continue;
      }
      const pctChange = baselineValue === 0 ? undefined : (d.estimate / Math.abs(baselineValue)) * 100;
      const excludesZero = d.ci95[0] > 0 || d.ci95[1] < 0;
      const beyond = pctChange !== undefined && Math.abs(pctChange) > thresholdPct;
      const worse = Math.sign(d.estimate) === direction;
      const verdict: Verdict = !excludesZero ? "no clear change" : !beyond ? "changed within threshold" : worse ? "regression" : "improvement";
      findings.push({ comparison: c, statistic, estimate: d.estimate, ci95: d.ci95, baselineValue, ...(pctChange === undefined ? {} : { pctChange }), verdict, confounded: c.inference.unit !== "replica" });
    }
  }
  return findings;
}
