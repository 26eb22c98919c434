/**
 * The figures the report's charts draw, reduced from the samples so that a run of 10 M samples
 * makes a report of a few hundred points a series: CDFs by quantiles (dense in the tail, the
 * maximum always kept — never by dropping samples), boxes by five numbers, time series by window
 * means. Pure.
 */

/** One point of a CDF: the value at quantile q, and q as "nines" (−log10(1−q): p90 = 1, p99 = 2…). */
export interface QuantilePoint {
  q: number;
  nines: number;
  value: number;
}

/** Nines shown for the maximum (q = 1 has infinitely many). */
const nines = (q: number, n: number) => (q >= 1 ? Math.log10(n) + 0.3 : -Math.log10(1 - q));

/** Nearest rank on sorted values: the smallest value with at least q of the samples at or below it. */
export function quantileOfSorted(sorted: ArrayLike<number>, q: number): number {
  const n = sorted.length;
  if (!n) throw new RangeError("quantileOfSorted: no samples");
  // q·n in floating point can land a hair above a whole rank (0.28 × 25 = 7.000000000000001).
  const rank = Math.min(n, Math.max(1, Math.ceil(Math.round(q * n * 1e9) / 1e9)));
  return sorted[rank - 1]!;
}

/** The quantiles a CDF is drawn with: every 0.5 % up to p99, then 20 a decade of the tail as far as the count reaches, and the maximum. */
export function cdfQuantiles(n: number): number[] {
  const qs: number[] = [];
  for (let i = 0; i <= 198; i++) qs.push(i / 200);
  const decades = Math.log10(n);
  for (let k = 2; k < decades; k += 0.05) qs.push(1 - 10 ** -k);
  qs.push(1);
  return qs;
}

/** Sorted copy (a typed array sorts numerically and fast). */
export const sortedCopy = (samples: readonly number[] | Float64Array) => Float64Array.from(samples).sort();

/** A series' CDF reduced to quantiles. */
export function cdfPoints(sorted: Float64Array): QuantilePoint[] {
  const n = sorted.length;
  if (!n) return [];
  return cdfQuantiles(n).map((q) => ({ q, nines: nines(q, n), value: quantileOfSorted(sorted, q) }));
}

/** The tail percentiles marked on a CDF, where the count supports them (n ≥ 1/(1−q)). */
export function percentileMarks(sorted: Float64Array): { label: string; q: number; nines: number; value: number }[] {
  const n = sorted.length;
  const marks = [
    { label: "p50", q: 0.5 },
    { label: "p99", q: 0.99 },
    { label: "p99.9", q: 0.999 },
    { label: "p99.99", q: 0.9999 },
  ];
  return marks.filter((m) => n >= Math.round(1 / (1 - m.q))).map((m) => ({ ...m, nines: nines(m.q, n), value: quantileOfSorted(sorted, m.q) }));
}

export interface FiveNumbers {
  min: number;
  q1: number;
  median: number;
  q3: number;
  max: number;
  count: number;
}

export function fiveNumbers(sorted: Float64Array): FiveNumbers {
  return {
    min: sorted[0]!,
    q1: quantileOfSorted(sorted, 0.25),
    median: quantileOfSorted(sorted, 0.5),
    q3: quantileOfSorted(sorted, 0.75),
    max: sorted[sorted.length - 1]!,
    count: sorted.length,
  };
}

export interface WindowPoint {
  /** Seconds into the cell, at the window's middle. */
  t: number;
  mean: number;
  /** Samples in the window. */
  count: number;
}

/**
 * Means of consecutive windows, at most `maxWindows` of them, over a cell that took `seconds`:
 * a sample's time is its place in the order measured times seconds / n (the tools sample at a
 * steady rate: an interval, a second, back-to-back).
 */
export function windowSeries(samples: readonly number[], seconds: number, maxWindows = 200): WindowPoint[] {
  const n = samples.length;
  if (!n) return [];
  const size = Math.max(1, Math.ceil(n / maxWindows));
  const points: WindowPoint[] = [];
  for (let start = 0; start < n; start += size) {
    const stop = Math.min(n, start + size);
    let sum = 0;
    for (let i = start; i < stop; i++) sum += samples[i]!;
    points.push({ t: (((start + stop) / 2) * seconds) / n, mean: sum / (stop - start), count: stop - start });
  }
  return points;
}
