/**
 * Inference over independent units: replicas (independent deployments) or repetitions (runs
 * on the same hosts), never over the serially correlated samples of one run. Pure, deterministic.
 *
 * - Each unit is reduced to one number (its samples' mean, or their median: the exact
 *   nearest-rank p50, as in compare.ts), so n units give n independent observations.
 * - {@link welchT}: Welch's unequal-variance t-test and its 95 % interval for
 *   mean(candidate) − mean(baseline) of those unit statistics, identical to
 *   scipy.stats.ttest_ind(candidate, baseline, equal_var=False) and its
 *   `.confidence_interval(0.95)`. The Student t CDF and inverse CDF come from stdlib
 *   (@stdlib/stats-base-dists-t-cdf / -t-quantile: ports of Boost/Cephes incomplete-beta code,
 *   typed, no install scripts) rather than hand-written numerics.
 * - {@link exactMannWhitney}: the rank test over units, exact: the permutation distribution of
 *   U over every split of the pooled units into groups of the observed sizes, ties by midranks
 *   (scipy.stats.permutation_test with U as the statistic and n_resamples=inf; without ties the
 *   same as scipy.stats.mannwhitneyu(method="exact")). With 3 units a side the smallest
 *   two-sided p it can give is 0.1: that is what 3 replicas can show, and the table says so by
 *   printing it next to Welch's p, which leans on normality of the unit statistics.
 */
import tCdf from "@stdlib/stats-base-dists-t-cdf";
import tQuantile from "@stdlib/stats-base-dists-t-quantile";
import { mannWhitneyU, mean } from "./compare.ts";
import { nearestRank } from "./distribution.ts";

export interface WelchResult {
  /** mean(candidate) − mean(baseline). */
  estimate: number;
  /** 95 % Welch t interval of the difference. [estimate, estimate] when both sides have zero spread. */
  ci95: [number, number];
  /**
   * Welch's t-test; absent when both sides have zero spread (t = ±∞ or 0/0: scipy answers
   * p = 0 or NaN there, neither of which is evidence about anything but synthetic data).
   */
  test?: { t: number; df: number; p: number };
}

/** Welch's t interval and test for mean(candidate) − mean(baseline); at least 2 values a side. */
export function welchT(baseline: readonly number[], candidate: readonly number[], level = 0.95): WelchResult {
  validate("baseline", baseline, 2);
  validate("candidate", candidate, 2);
  const nb = baseline.length;
  const nc = candidate.length;
  const mb = mean(baseline);
  const mc = mean(candidate);
  const vb = variance(baseline, mb) / nb;
  const vc = variance(candidate, mc) / nc;
  const estimate = mc - mb;
  const se = Math.sqrt(vb + vc);
  if (se === 0) return { estimate, ci95: [estimate, estimate] };
  const df = (vb + vc) ** 2 / (vb ** 2 / (nb - 1) + vc ** 2 / (nc - 1));
  const t = estimate / se;
  const p = Math.min(1, 2 * tCdf(-Math.abs(t), df));
  const half = tQuantile(1 - (1 - level) / 2, df) * se;
  return { estimate, ci95: [estimate - half, estimate + half], test: { t, df, p } };
}

export interface RankTest {
  /** U of the candidate: (candidate, baseline) pairs with candidate > baseline, ties ½. */
  u: number;
  /** Two-sided: min(1, 2 · min(P(U ≤ u), P(U ≥ u))) under the permutation distribution. */
  p: number;
  /** "exact" (every split enumerated) up to {@link EXACT_RANK_MAX_UNITS} units; beyond, the normal approximation of compare.ts. */
  method: "exact" | "asymptotic";
}

/** Above this many units in all, the exact distribution gives way to the normal approximation (then accurate). */
export const EXACT_RANK_MAX_UNITS = 100;

/** Mann–Whitney U test of the candidate's units against the baseline's, exact for small n. */
export function exactMannWhitney(baseline: readonly number[], candidate: readonly number[]): RankTest {
  validate("baseline", baseline, 1);
  validate("candidate", candidate, 1);
  const n1 = candidate.length;
  const n = n1 + baseline.length;
  if (n > EXACT_RANK_MAX_UNITS) return { ...mannWhitneyU(candidate, baseline), method: "asymptotic" };
  // Doubled midranks are integers: the rank sums can index an array.
  const pooled = [...candidate.map((v) => ({ v, cand: true })), ...baseline.map((v) => ({ v, cand: false }))].sort((a, b) => a.v - b.v);
  const ranks2 = new Array<number>(n);
  let observed = 0;
  for (let i = 0; i < n; ) {
    let j = i;
    while (j < n && pooled[j]!.v === pooled[i]!.v) j++;
    const r2 = i + 1 + j; // 2 × midrank of 1-based ranks i+1 … j
    for (let k = i; k < j; k++) {
      ranks2[k] = r2;
      if (pooled[k]!.cand) observed += r2;
    }
    i = j;
  }
  const maxSum = n * (n + 1);
  // counts[k · (maxSum + 1) + s]: subsets of k of the units seen so far with doubled rank sum s.
  const width = maxSum + 1;
  const counts = new Float64Array((n1 + 1) * width);
  counts[0] = 1;
  for (let i = 0; i < n; i++) {
    const r2 = ranks2[i]!;
    for (let k = Math.min(i + 1, n1); k >= 1; k--) {
      const to = k * width;
      const from = (k - 1) * width;
      for (let s = maxSum; s >= r2; s--) counts[to + s]! += counts[from + s - r2]!;
    }
  }
  let total = 0;
  let below = 0;
  let above = 0;
  for (let s = 0; s <= maxSum; s++) {
    const c = counts[n1 * width + s]!;
    total += c;
    if (s <= observed) below += c;
    if (s >= observed) above += c;
  }
  const u = observed / 2 - (n1 * (n1 + 1)) / 2;
  return { u, p: Math.min(1, (2 * Math.min(below, above)) / total), method: "exact" };
}

/** Per-unit statistics: each unit's samples reduced to their mean and their exact nearest-rank median. */
export function unitStatistics(units: readonly (readonly number[])[]): { mean: number[]; p50: number[] } {
  const means: number[] = [];
  const p50s: number[] = [];
  for (const samples of units) {
    validate("unit", samples, 1);
    means.push(mean(samples));
    const sorted = Float64Array.from(samples).sort();
    p50s.push(sorted[nearestRank(sorted.length, 1, 2) - 1]!);
  }
  return { mean: means, p50: p50s };
}

function validate(name: string, xs: readonly number[], min: number): void {
  if (xs.length < min) throw new RangeError(`unitInference: ${name} needs at least ${min} value(s), got ${xs.length}`);
  for (let i = 0; i < xs.length; i++) {
    if (!Number.isFinite(xs[i])) throw new RangeError(`unitInference: ${name} value #${i} is ${String(xs[i])}; values must be finite numbers`);
  }
}


/** Sample variance (n − 1), two-pass around the mean. */
function variance(xs: readonly number[], m: number): number {
  let ss = 0;
  let c = 0;
  for (const v of xs) {
    ss += (v - m) ** 2;
    c += v - m;
  }
  return (ss - (c * c) / xs.length) / (xs.length - 1);
}
