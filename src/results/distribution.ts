/**
 * A mergeable distribution of one metric's samples, built on HdrHistogram (hdr-histogram-js, the
 * plain JS implementation; no WebAssembly).
 *
 * - Percentiles come from the histogram. Samples are non-negative floats; they are recorded as
 *   integers `Math.round(value * VALUE_SCALE)` (VALUE_SCALE = 1000, i.e. 0.001 µs or
 *   0.001 Mbit/s) in a histogram with 3 significant digits.
 * - count, mean, stddev, min and max are computed exactly alongside (not from the histogram).
 *
 * Combine replicas / repetitions with {@link Distribution.merge}, which adds the histograms
 * (and the exact moments): never average percentiles.
 *
 * Percentile definition: pXX is the nearest-rank percentile, the sample at 1-based rank
 * ceil(n · XX/100) of the sorted samples (numpy `quantile(..., method="inverted_cdf")`),
 * as resolved by the histogram: HdrHistogram reports the highest value of the bucket holding
 * that sample (conservatively high), and the result is clamped to the exact [min, max].
 *
 * Tail percentiles: p999 is always reported; p9999 and p99999 only when the count supports them
 * (n ≥ 10 000, n ≥ 100 000: {@link tailSupported}); with fewer samples their nearest rank is the
 * maximum. The precision below holds for them as for every percentile (it is per bucket, whatever
 * the rank).
 *
 * Precision guarantee for a percentile whose exact value is v:
 *   |reported − v| ≤ max(v / 1024, 0.5 / VALUE_SCALE)
 * i.e. better than 0.1 % relative for every v ≥ 0.512 (any real RTT in µs or throughput in
 * Mbit/s), and within 0.0005 units below that.
 */
import { build } from "hdr-histogram-js";
import type { Histogram } from "hdr-histogram-js";
import { SummarySchema, tailSupported } from "./summary.ts";
import type { Metric, Summary, Unit } from "./summary.ts";

/** Values are recorded in the histogram as integers in units of 1/VALUE_SCALE. */
export const VALUE_SCALE = 1000;

/** HdrHistogram resolution: 3 significant decimal digits (relative bucket width ≤ 1/1024). */
export const SIGNIFICANT_DIGITS = 3;

/**
 * Largest value accepted (in the metric's unit: 10⁹ µs ≈ 17 min RTT, 10⁹ Mbit/s). Keeps the
 * scaled integers far below 2⁵³, where hdr-histogram-js stops working.
 */
export const MAX_VALUE = 1e9;

/** The percentiles a {@link Summary} reports, as exact fractions num/den. */
const SUMMARY_PERCENTILES = {
  p50: [1, 2],
  p90: [9, 10],
  p95: [19, 20],
  p99: [99, 100],
  p999: [999, 1000],
  p9999: [9999, 10_000],
  p99999: [99_999, 100_000],
} as const;

/**
 * 1-based nearest rank of the quantile num/den in n sorted samples: max(1, ceil(n · num / den)),
 * computed exactly (no floating-point drift such as 0.999 · 10000 = 9990.000000000002).
 */
export function nearestRank(n: number, num: number, den: number): number {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`nearestRank: n must be a positive integer, got ${n}`);
  // n·num is an exact integer; an exact-integer quotient is computed exactly, and a
  // non-integer one is at least 1/den away from the next integer, far more than its rounding.
  return Math.max(1, Math.ceil((n * num) / den));
}

/** The samples {@link Distribution.add} takes: a plain array or a typed array (a parser's Float64Array). */
export type Samples = ArrayLike<number>;

function allNumbers(samples: ArrayLike<unknown>): boolean {
  for (let i = 0; i < samples.length; i++) if (typeof samples[i] !== "number") return false;
  return true;
}

/** The error for the first sample that is not a finite number in [0, MAX_VALUE]. */
function firstInvalid(samples: Samples): RangeError {
  for (let i = 0; i < samples.length; i++) {
    const v: unknown = samples[i];
    if (typeof v !== "number" || !(v >= 0 && v <= MAX_VALUE)) {
      return new RangeError(`Distribution.add: sample #${i} is ${String(v)}; samples must be finite numbers in [0, ${MAX_VALUE}]`);
    }
  }
  return new RangeError("Distribution.add: the samples changed while they were being added");
}

/**
 * HdrHistogram's bucket layout for 3 significant digits: 2048 sub-buckets, the upper half of each
 * bucket used from bucket 1 on. A scaled value v lands at bucket b = max(⌊log₂ v⌋ − 10, 0), sub-bucket
 * s = ⌊v / 2ᵇ⌋, counts index (b + 1)·1024 + s − 1024 (hdr-histogram-js' countsArrayIndex).
 */
const SUB_BUCKET_HALF_COUNT_MAGNITUDE = 10;
const SUB_BUCKET_HALF_COUNT = 1 << SUB_BUCKET_HALF_COUNT_MAGNITUDE;

/**
 * Why this exists: hdr-histogram-js' recordValue costs ~100 ns a call (10 M samples: 1 s), 5×
 * numpy's whole percentile. Counting first into a flat array laid out exactly like the histogram's
 * (same bucket, same sub-bucket, by the library's own formula) and handing each non-empty bucket to
 * the library once with its count gives the histogram the same counts as recording one value at a
 * time — HdrHistogram cannot tell values of one bucket apart — in ~10 ns a sample.
 */
function preBucket(samples: Samples, counts: Float64Array, first: number): void {
  const n = samples.length;
  for (let i = 0; i < n; i++) counts[indexOf((samples[i] as number) * VALUE_SCALE) - first]! += 1;
}

/** The histogram's counts index of a scaled value (never decreasing as the value grows). */
function indexOf(scaled: number): number {
  return scaled >= 1 && scaled < 0x7fff_ffff ? commonIndex(scaled) : otherIndex(scaled);
}

/**
 * The counts index of a scaled value in [1, 2³¹ − 1), in int32 arithmetic: V8's Math.round, and
 * a branch on the fraction (taken half the time), each cost more than the rest of the loop.
 * (scaled + 0.5) | 0 is ⌊scaled + ½⌋ = Math.round(scaled), except where the addition rounds up to
 * the next integer: then v − scaled (exact there, Sterbenz) exceeds ½ and v is one too many. Below
 * 2³¹, 31 − clz32 is ⌊log₂ v⌋ exactly, as the library's floor(log2(v)) is there (at least 6·10⁻¹⁰
 * from an integer).
 */
function commonIndex(scaled: number): number {
  let v = (scaled + 0.5) | 0;
  if (v - scaled > 0.5) v = (v - 1) | 0;
  const e = 31 - Math.clz32(v) - SUB_BUCKET_HALF_COUNT_MAGNITUDE;
  const b = e > 0 ? e : 0;
  return (b << SUB_BUCKET_HALF_COUNT_MAGNITUDE) + (v >>> b);
}

/** The counts index of any other scaled value (below 1 or from 2³¹ − 1 on), by the library's own formula. */
function otherIndex(scaled: number): number {
  const v = Math.round(scaled);
  const b = Math.max(Math.floor(Math.log2(v)) - SUB_BUCKET_HALF_COUNT_MAGNITUDE, 0);
  return b * SUB_BUCKET_HALF_COUNT + Math.floor(v / 2 ** b);
}

export class Distribution {
  readonly metric: Metric;
  readonly unit: Unit;

  readonly #histogram: Histogram;
  #count = 0;
  #mean = 0;
  /** Sum of squared deviations from the mean (Welford/Chan "M2"). */
  #m2 = 0;
  #min = Number.POSITIVE_INFINITY;
  #max = Number.NEGATIVE_INFINITY;

  constructor(metric: Metric, unit: Unit) {
    this.metric = metric;
    this.unit = unit;
    this.#histogram = build({
      bitBucketSize: 64, // Float64 counts: exact up to 2^53 samples per bucket
      autoResize: true,
      lowestDiscernibleValue: 1,
      numberOfSignificantValueDigits: SIGNIFICANT_DIGITS,
      useWebAssembly: false,
    });
  }

  /** Number of samples recorded (including merged ones). */
  get count(): number {
    return this.#count;
  }

  /**
   * Memory the distribution holds (the histogram's estimate plus the exact moments): set by the
   * range of values recorded, not by their number.
   */
  get footprintBytes(): number {
    return this.#histogram.estimatedFootprintInBytes + 64;
  }

  /**
   * Records samples (non-negative finite numbers ≤ MAX_VALUE). All-or-nothing: if any sample is
   * invalid, throws a RangeError and records none. Returns `this`.
   */
  add(samples: Samples): this {
    const n = samples.length;
    if (n === 0) return this;

    // Batch moments by the corrected two-pass algorithm: a plain sum gives a first mean; the sum
    // of deviations from it corrects the mean and the sum of squared deviations (Chan, Golub &
    // LeVeque); the batch is then combined with the running moments. Plain loops on purpose: a
    // check per sample or a compensated sum here triples the time of 10 M samples.
    let sum = 0;
    let min = Number.POSITIVE_INFINITY;
    let max = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < n; i++) {
      const v = samples[i] as number;
      sum += v;
      // Branch-free (and a NaN turns them NaN, which the check below catches too).
      min = Math.min(min, v);
      max = Math.max(max, v);
    }
    // Checked in bulk, before anything is recorded (all-or-nothing): a NaN makes the sum NaN, a
    // string makes it a string, anything out of range moves min or max out of [0, MAX_VALUE]. Only
    // something other than a typed array can hold a non-number that slips past those (null counts
    // as 0): look for it there.
    if (typeof sum !== "number" || !Number.isFinite(sum) || !(min >= 0 && max <= MAX_VALUE) || (!ArrayBuffer.isView(samples) && !allNumbers(samples))) {
      throw firstInvalid(samples);
    }
    const rough = sum / n;
    let ss = 0;
    let sd = 0;
    for (let i = 0; i < n; i++) {
      const d = (samples[i] as number) - rough;
      ss += d * d;
      sd += d;
    }
    const mean = rough + sd / n;
    const m2 = Math.max(0, ss - (sd * sd) / n);
    this.#combine(n, mean, m2, min, max);

    // Only the indices between min's and max's: a batch of three samples must not pay for 32 768.
    const first = indexOf(min * VALUE_SCALE);
    const counts = new Float64Array(indexOf(max * VALUE_SCALE) - first + 1);
    preBucket(samples, counts, first);
    for (let at = 0; at < counts.length; at++) {
      const count = counts[at]!;
      if (count === 0) continue;
      const index = first + at;
      // The lowest value of the bucket: the library files it under this same index.
      const b = Math.max((index >>> SUB_BUCKET_HALF_COUNT_MAGNITUDE) - 1, 0);
      const sub = index - (b << SUB_BUCKET_HALF_COUNT_MAGNITUDE);
      this.#histogram.recordValueWithCount(sub * 2 ** b, count);
    }
    return this;
  }

  /**
   * Adds all of `other`'s samples to this distribution (histogram addition plus exact moments),
   * leaving `other` unchanged. Metric and unit must match. Returns `this`.
   */
  merge(other: Distribution): this {
    if (other.metric !== this.metric || other.unit !== this.unit) {
      throw new Error(
        `Distribution.merge: cannot merge ${other.metric} [${other.unit}] into ${this.metric} [${this.unit}]`,
      );
    }
    if (other.#count === 0) return this;
    // Read other's state before mutating (other may be this).
    const [n, mean, m2, min, max] = [other.#count, other.#mean, other.#m2, other.#min, other.#max];
    this.#histogram.add(other.#histogram);
    this.#combine(n, mean, m2, min, max);
    return this;
  }

  /**
   * The summary: exact count, mean, min, max and sample standard deviation (denominator n − 1;
   * 0 when count is 1), and histogram percentiles (p99.99 and p99.999 only where the count
   * supports them; see the module comment for their definition and precision). Throws if no
   * sample was recorded.
   */
  summary(): Summary {
    const n = this.#count;
    if (n === 0) {
      throw new Error(`Distribution.summary: no samples recorded for ${this.metric} [${this.unit}] (empty distribution)`);
    }
    const pct = (num: number, den: number): number => {
      const k = nearestRank(n, num, den);
      // hdr-histogram-js looks for the first bucket whose cumulative count reaches
      // ceil(p/100 · n); asking for p = 100·(k − ½)/n makes that exactly k, free of
      // floating-point surprises at integer ranks.
      const scaled = this.#histogram.getValueAtPercentile((100 * (k - 0.5)) / n);
      return Math.min(this.#max, Math.max(this.#min, scaled / VALUE_SCALE));
    };
    return SummarySchema.parse({
      metric: this.metric,
      unit: this.unit,
      count: n,
      mean: this.#mean,
      p50: pct(...SUMMARY_PERCENTILES.p50),
      p90: pct(...SUMMARY_PERCENTILES.p90),
      p95: pct(...SUMMARY_PERCENTILES.p95),
      p99: pct(...SUMMARY_PERCENTILES.p99),
      p999: pct(...SUMMARY_PERCENTILES.p999),
      // Only where the count supports them (tailSupported); p999 is always given, see SummarySchema.
      ...(tailSupported(n, "p9999") ? { p9999: pct(...SUMMARY_PERCENTILES.p9999) } : {}),
      ...(tailSupported(n, "p99999") ? { p99999: pct(...SUMMARY_PERCENTILES.p99999) } : {}),
      min: this.#min,
      max: this.#max,
      stddev: n > 1 ? Math.sqrt(this.#m2 / (n - 1)) : 0,
    });
  }

  /** Chan, Golub & LeVeque's parallel combination of (count, mean, M2), plus min/max. */
  #combine(n: number, mean: number, m2: number, min: number, max: number): void {
    const na = this.#count;
    const total = na + n;
    if (na === 0) {
      this.#mean = mean;
      this.#m2 = m2;
    } else {
      const delta = mean - this.#mean;
      this.#mean += (delta * n) / total;
      this.#m2 += m2 + ((delta * delta * na) / total) * n;
    }
    this.#count = total;
    if (min < this.#min) this.#min = min;
    if (max > this.#max) this.#max = max;
  }
}
