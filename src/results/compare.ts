/**
 * Comparing a variant (candidate) with the baseline, from raw samples. Pure, deterministic.
 *
 * Samples of one run are serially correlated and share their hosts: comparisons.ts takes only
 * the descriptive figures ({@link compareDescriptive}) from here, and the block bootstrap when a
 * side has a single run; its CIs and p-values over replicas or repetitions are unitInference.ts'.
 * The sample-level Mann–Whitney below is kept (and checked against scipy) but not reported.
 *
 * - ratios are candidate / baseline; pctChange = (candidate − baseline) / baseline × 100
 *   (IEEE semantics: a zero baseline gives ±Infinity or NaN; results.json cannot hold those, so
 *   comparisons.ts leaves such a ratio out).
 * - p50 / p99 are exact nearest-rank percentiles of the raw samples (sorted[ceil(n·q) − 1],
 *   numpy `method="inverted_cdf"`), the same definition {@link Distribution} uses.
 * - diffMean = mean(candidate) − mean(baseline), with a 95 % percentile confidence interval from
 *   a moving-block bootstrap (see {@link blockBootstrapDiffMeanCI}).
 * - mannWhitney: two-sided Mann–Whitney U test, normal approximation with tie and continuity
 *   corrections, identical to scipy.stats.mannwhitneyu(candidate, baseline,
 *   alternative="two-sided", method="asymptotic", use_continuity=True). `u` is the U statistic
 *   of the CANDIDATE sample (scipy's first argument): the number of (candidate, baseline) pairs
 *   with candidate > baseline, ties counting ½. u > n₁n₂/2 means the candidate tends to be larger.
 */
import { nearestRank } from "./distribution.ts";

export interface CompareOptions {
  /** PRNG seed for the bootstrap (uint32). Default {@link DEFAULT_SEED}. */
  seed?: number;
  /** Number of bootstrap resamples. Default {@link DEFAULT_RESAMPLES}. */
  resamples?: number;
  /** Bootstrap block length, applied to both samples (clamped to each sample's size). Default ceil(√n) per sample. */
  blockLength?: number;
}

export interface Comparison {
  ratioMean: number;
  pctChangeMean: number;
  ratioP50: number;
  ratioP99: number;
  diffMean: { estimate: number; ci95: [number, number] };
  mannWhitney: { u: number; p: number };
}

export const DEFAULT_SEED = 0x1a7_1ab; // fixed: results are reproducible run to run
export const DEFAULT_RESAMPLES = 1000;

export function compare(
  baseline: readonly number[],
  candidate: readonly number[],
  opts: CompareOptions = {},
): Comparison {
  validate("baseline", baseline);
  validate("candidate", candidate);
  const sb = sortedCopy(baseline);
  const sc = sortedCopy(candidate);
  const d = describeSorted(baseline, candidate, sb, sc);
  return {
    ratioMean: d.ratioMean,
    pctChangeMean: d.pctChangeMean,
    ratioP50: d.ratioP50,
    ratioP99: d.ratioP99,
    diffMean: { estimate: d.diffMean, ci95: blockBootstrapDiffMeanCI(baseline, candidate, opts) },
    mannWhitney: mannWhitneySorted(sc, sb),
  };
}

/**
 * The descriptive part of {@link compare} alone (ratios, %-change, difference of means), without
 * the bootstrap or the rank test: what comparisons.ts reports of all samples merged, whose
 * inference is over independent units instead (unitInference.ts).
 */
export function compareDescriptive(baseline: readonly number[], candidate: readonly number[]): Omit<Comparison, "diffMean" | "mannWhitney"> & { diffMean: number } {
  validate("baseline", baseline);
  validate("candidate", candidate);
  return describeSorted(baseline, candidate, sortedCopy(baseline), sortedCopy(candidate));
}

function describeSorted(baseline: readonly number[], candidate: readonly number[], sb: Float64Array, sc: Float64Array) {
  const mb = mean(baseline);
  const mc = mean(candidate);
  const pct = (s: Float64Array, num: number, den: number): number => s[nearestRank(s.length, num, den) - 1] as number;
  return {
    ratioMean: mc / mb,
    pctChangeMean: ((mc - mb) / mb) * 100,
    ratioP50: pct(sc, 1, 2) / pct(sb, 1, 2),
    ratioP99: pct(sc, 99, 100) / pct(sb, 99, 100),
    diffMean: mc - mb,
  };
}

// ---------------------------------------------------------------------------------------------
// Bootstrap

/**
 * mulberry32 (Tommy Ettinger, public domain): a 32-bit-state PRNG, fast and good enough for
 * resampling. Returns a function yielding uniform floats in [0, 1) with 2⁻³² resolution.
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * 95 % percentile confidence interval for mean(candidate) − mean(baseline) by a moving-block
 * bootstrap: samples inside one run are autocorrelated, so each sample is resampled
 * independently as ceil(n / L) blocks of L consecutive observations (the last one truncated so
 * the resample has n observations), block starts drawn uniformly. Blocks wrap around the end of
 * the sample (the circular variant, Politis & Romano 1992), so every observation is equally
 * likely and the bootstrap mean is centred on the sample mean.
 *
 * Cost is O(n) for prefix sums plus O(resamples · n / L) with no array copies, so n = 10⁵ with
 * the defaults takes a few milliseconds. The interval is the 2.5 % and 97.5 % quantiles of the
 * resampled differences (linear interpolation, numpy's default). Deterministic for a seed.
 */
export function blockBootstrapDiffMeanCI(
  baseline: readonly number[],
  candidate: readonly number[],
  opts: CompareOptions = {},
): [number, number] {
  validate("baseline", baseline);
  validate("candidate", candidate);
  const seed = opts.seed ?? DEFAULT_SEED;
  const resamples = opts.resamples ?? DEFAULT_RESAMPLES;
  if (!Number.isInteger(seed)) throw new RangeError(`compare: seed must be an integer, got ${seed}`);
  if (!Number.isInteger(resamples) || resamples < 1) {
    throw new RangeError(`compare: resamples must be a positive integer, got ${resamples}`);
  }
  if (opts.blockLength !== undefined && (!Number.isInteger(opts.blockLength) || opts.blockLength < 1)) {
    throw new RangeError(`compare: blockLength must be a positive integer, got ${opts.blockLength}`);
  }
  const rand = mulberry32(seed);
  const b = new BlockResampler(baseline, opts.blockLength);
  const c = new BlockResampler(candidate, opts.blockLength);
  const diffs = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) {
    const mb = b.resampleMean(rand);
    const mc = c.resampleMean(rand);
    diffs[r] = mc - mb;
  }
  diffs.sort();
  return [quantileLinear(diffs, 0.025), quantileLinear(diffs, 0.975)];
}

class BlockResampler {
  readonly #n: number;
  readonly #len: number;
  readonly #blocks: number;
  readonly #lastLen: number;
  readonly #mean: number;
  /** Prefix sums of the centred sample repeated twice: block sums without wrap-around branches. */
  readonly #prefix: Float64Array;

  constructor(x: readonly number[], blockLength: number | undefined) {
    const n = x.length;
    this.#n = n;
    this.#len = Math.min(n, blockLength ?? Math.ceil(Math.sqrt(n)));
    this.#blocks = Math.ceil(n / this.#len);
    this.#lastLen = n - (this.#blocks - 1) * this.#len;
    this.#mean = mean(x);
    // Centring keeps the prefix sums small, so block sums don't lose digits to cancellation.
    const p = new Float64Array(2 * n + 1);
    for (let i = 0; i < 2 * n; i++) p[i + 1] = (p[i] as number) + ((x[i % n] as number) - this.#mean);
    this.#prefix = p;
  }

  resampleMean(rand: () => number): number {
    const p = this.#prefix;
    const n = this.#n;
    let sum = 0;
    for (let j = 0; j < this.#blocks; j++) {
      const start = Math.floor(rand() * n);
      const len = j === this.#blocks - 1 ? this.#lastLen : this.#len;
      sum += (p[start + len] as number) - (p[start] as number);
    }
    return this.#mean + sum / n;
  }
}

/** Quantile q of sorted data, linear interpolation between order statistics (numpy "linear"). */
function quantileLinear(sorted: Float64Array, q: number): number {
  const h = (sorted.length - 1) * q;
  const lo = Math.floor(h);
  const a = sorted[lo] as number;
  const b = sorted[Math.min(lo + 1, sorted.length - 1)] as number;
  return a + (h - lo) * (b - a);
}

// ---------------------------------------------------------------------------------------------
// Mann–Whitney U

/**
 * Two-sided Mann–Whitney U test of x against y, as scipy.stats.mannwhitneyu(x, y,
 * alternative="two-sided", method="asymptotic", use_continuity=True): `u` is U for x (scipy's
 * first argument), p uses the normal approximation with tie correction and continuity correction.
 */
export function mannWhitneyU(x: readonly number[], y: readonly number[]): { u: number; p: number } {
  validate("x", x);
  validate("y", y);
  return mannWhitneySorted(sortedCopy(x), sortedCopy(y));
}

function mannWhitneySorted(x: Float64Array, y: Float64Array): { u: number; p: number } {
  const n1 = x.length;
  const n2 = y.length;
  // Walk both sorted samples together: each run of equal values gets the average rank.
  let i = 0;
  let j = 0;
  let ranked = 0;
  let r1 = 0;
  let tieTerm = 0;
  while (i < n1 || j < n2) {
    const xi = i < n1 ? (x[i] as number) : Number.POSITIVE_INFINITY;
    const yj = j < n2 ? (y[j] as number) : Number.POSITIVE_INFINITY;
    const v = Math.min(xi, yj);
    let cx = 0;
    while (i < n1 && x[i] === v) {
      i++;
      cx++;
    }
    let cy = 0;
    while (j < n2 && y[j] === v) {
      j++;
      cy++;
    }
    const t = cx + cy;
    r1 += cx * (ranked + (t + 1) / 2);
    tieTerm += t * t * t - t;
    ranked += t;
  }
  const u1 = r1 - (n1 * (n1 + 1)) / 2;
  const u2 = n1 * n2 - u1;
  const u = Math.max(u1, u2);
  // Same expression (and evaluation order) as scipy's _get_mwu_z.
  const mu = (n1 * n2) / 2;
  const n = n1 + n2;
  const s = Math.sqrt(((n1 * n2) / 12) * (n + 1 - tieTerm / (n * (n - 1))));
  const z = (u - mu - 0.5) / s;
  const p = Math.min(1, Math.max(0, 2 * normalSf(z)));
  return { u: u1, p };
}

// ---------------------------------------------------------------------------------------------
// Normal distribution

// W. J. Cody's rational Chebyshev approximations (ACM TOMS 715; the algorithm of R's pnorm):
// relative accuracy near double precision over the whole range, including the far tail.
const A = [2.2352520354606839287, 161.02823106855587881, 1067.6894854603709582, 18154.981253343561249, 0.065682337918207449113];
const B = [47.20258190468824187, 976.09855173777669322, 10260.932208618978205, 45507.789335026729956];
const C = [
  0.39894151208813466764, 8.8831497943883759412, 93.506656132177855979, 597.27027639480026226, 2494.5375852903726711,
  6848.1904505362823326, 11602.651437647350124, 9842.7148383839780218, 1.0765576773720192317e-8,
];
const D = [
  22.266688044328115691, 235.38790178262499861, 1519.377599407554805, 6485.558298266760755, 18615.571640885098091,
  34900.952721145977266, 38912.003286093271411, 19685.429676859990727,
];
const P = [0.21589853405795699, 0.1274011611602473639, 0.022235277870649807, 0.001421619193227893466, 2.9112874951168792e-5, 0.02307344176494017303];
const Q = [1.28426009614491121, 0.468238212480865118, 0.0659881378689285515, 0.00378239633202758244, 7.29751555083966205e-5];
const M_1_SQRT_2PI = 0.398942280401432677939946059934;
const SQRT_32 = 5.656854249492380195206754896838;

const at = (arr: readonly number[], i: number): number => arr[i] as number;

/** exp(−y²/2) · temp, splitting y² to avoid cancellation (Cody's "do_del"). */
function gaussTail(y: number, temp: number): number {
  const ysq = Math.trunc(y * 16) / 16;
  const del = (y - ysq) * (y + ysq);
  return Math.exp(-ysq * ysq * 0.5) * Math.exp(-del * 0.5) * temp;
}

/** Standard normal survival function P(Z > z) = 1 − Φ(z), accurate in the upper tail. */
export function normalSf(z: number): number {
  if (Number.isNaN(z)) return Number.NaN;
  const y = Math.abs(z);
  if (y <= 0.67448975) {
    let num = 0;
    let den = 0;
    if (y > 1.11e-16) {
      const ysq = z * z;
      num = at(A, 4) * ysq;
      den = ysq;
      for (let i = 0; i < 3; i++) {
        num = (num + at(A, i)) * ysq;
        den = (den + at(B, i)) * ysq;
      }
    }
    return 0.5 - (z * (num + at(A, 3))) / (den + at(B, 3));
  }
  let tail: number; // P(Z > y) for y = |z|
  if (y <= SQRT_32) {
    let num = at(C, 8) * y;
    let den = y;
    for (let i = 0; i < 7; i++) {
      num = (num + at(C, i)) * y;
      den = (den + at(D, i)) * y;
    }
    tail = gaussTail(y, (num + at(C, 7)) / (den + at(D, 7)));
  } else if (y < 37.5193) {
    const ysq = 1 / (y * y);
    let num = at(P, 5) * ysq;
    let den = ysq;
    for (let i = 0; i < 4; i++) {
      num = (num + at(P, i)) * ysq;
      den = (den + at(Q, i)) * ysq;
    }
    const temp = (M_1_SQRT_2PI - (ysq * (num + at(P, 4))) / (den + at(Q, 4))) / y;
    tail = gaussTail(y, temp);
  } else {
    tail = 0;
  }
  return z > 0 ? tail : 1 - tail;
}

// ---------------------------------------------------------------------------------------------
// helpers

function validate(name: string, xs: readonly number[]): void {
  if (xs.length === 0) throw new RangeError(`compare: ${name} sample is empty`);
  for (let i = 0; i < xs.length; i++) {
    const v = xs[i];
    if (typeof v !== "number" || !Number.isFinite(v)) {
      throw new RangeError(`compare: ${name} sample #${i} is ${String(v)}; samples must be finite numbers`);
    }
  }
}

function sortedCopy(xs: readonly number[]): Float64Array {
  return Float64Array.from(xs).sort();
}

/** Mean by compensated (Neumaier) summation. */
export function mean(xs: readonly number[]): number {
  let sum = 0;
  let comp = 0;
  for (let i = 0; i < xs.length; i++) {
    const v = xs[i] as number;
    const t = sum + v;
    comp += Math.abs(sum) >= Math.abs(v) ? sum - t + v : v - t + sum;
    sum = t;
  }
  return (sum + comp) / xs.length;
}
