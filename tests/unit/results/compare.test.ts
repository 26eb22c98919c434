import { describe, expect, it } from "vitest";
import {
  blockBootstrapDiffMeanCI,
  compare,
  mannWhitneyU,
  mulberry32,
  normalSf,
} from "../../../src/results/compare.ts";

import { expectRel, reference, sample } from "./statsReference.ts";

/** Synthetic run: AR(1) Gaussian noise (autocorrelated, like samples within one run) around `mean`. */
function ar1(n: number, mean: number, sd: number, phi: number, seed: number): number[] {
  const rand = mulberry32(seed);
  const gauss = (): number => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
  const innovation = sd * Math.sqrt(1 - phi * phi); // stationary variance sd²
  const out: number[] = [];
  let e = sd * gauss();
  for (let i = 0; i < n; i++) {
    out.push(mean + e);
    e = phi * e + innovation * gauss();
  }
  return out;
}

describe("compare vs numpy/scipy reference (tests/fixtures/stats/reference.json)", () => {
  for (const ref of reference.pairs) {
    it(`${ref.candidate} vs baseline ${ref.baseline}`, () => {
      const r = compare(sample(ref.baseline), sample(ref.candidate));
      expectRel(r.ratioMean, ref.ratioMean, 1e-9, "ratioMean");
      expect(Math.abs(r.pctChangeMean - ref.pctChangeMean)).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(ref.pctChangeMean)));
      expectRel(r.ratioP50, ref.ratioP50, 1e-12, "ratioP50");
      expectRel(r.ratioP99, ref.ratioP99, 1e-12, "ratioP99");
      expect(Math.abs(r.diffMean.estimate - ref.diffMean)).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(ref.diffMean)));
      expect(r.mannWhitney.u).toBe(ref.mannWhitney.u);
      expectRel(r.mannWhitney.p, ref.mannWhitney.p, 1e-6, "p");
      const [lo, hi] = r.diffMean.ci95;
      expect(lo).toBeLessThanOrEqual(r.diffMean.estimate);
      expect(hi).toBeGreaterThanOrEqual(r.diffMean.estimate);
    });
  }

  it("normalSf matches scipy.stats.norm.sf, deep into the tail", () => {
    for (const { z, sf } of reference.normSf) {
      if (sf === 0) expect(normalSf(z)).toBe(0);
      else expectRel(normalSf(z), sf, 1e-11, `sf(${z})`); // far tighter than the 1e-6 the p-values need
    }
  });

  it("U is for the first argument (the candidate in compare); swapping gives n1·n2 − U, same p", () => {
    const a = sample("rtt_small_a");
    const b = sample("rtt_small_b");
    const ab = mannWhitneyU(a, b);
    const ba = mannWhitneyU(b, a);
    expect(ab.u + ba.u).toBe(a.length * b.length);
    expect(ab.p).toBe(ba.p);
    expect(compare(a, b).mannWhitney).toEqual(ba);
  });
});

describe("compare on hand-checkable numbers", () => {
  it("ratios and percent change are candidate relative to baseline", () => {
    const r = compare([100, 200, 300], [150, 250, 350]);
    expect(r.ratioMean).toBeCloseTo(1.25, 15);
    expect(r.pctChangeMean).toBeCloseTo(25, 12);
    expect(r.ratioP50).toBeCloseTo(250 / 200, 15);
    expect(r.ratioP99).toBeCloseTo(350 / 300, 15);
    expect(r.diffMean.estimate).toBe(50);

    const faster = compare([80, 80], [60, 60]);
    expect(faster.ratioMean).toBe(0.75);
    expect(faster.pctChangeMean).toBe(-25);
  });

  it("constant samples: the CI collapses to the exact difference", () => {
    const r = compare(new Array(50).fill(100), new Array(40).fill(110));
    expect(r.diffMean).toEqual({ estimate: 10, ci95: [10, 10] });
    expect(r.mannWhitney.u).toBe(50 * 40); // every candidate sample is larger
  });

  it("identical samples: U = n²/2 and p = 1", () => {
    const r = compare([1, 2, 3, 3, 4], [1, 2, 3, 3, 4]);
    expect(r.mannWhitney).toEqual({ u: 12.5, p: 1 });
    expect(r.ratioMean).toBe(1);
    expect(r.pctChangeMean).toBe(0);
  });

  it("rejects empty or non-finite input and bad options", () => {
    expect(() => compare([], [1])).toThrow(/baseline sample is empty/);
    expect(() => compare([1], [])).toThrow(/candidate sample is empty/);
    expect(() => compare([1, Number.NaN], [1])).toThrow(RangeError);
    expect(() => compare([1], [Number.POSITIVE_INFINITY])).toThrow(RangeError);
    expect(() => compare([1], [2], { resamples: 0 })).toThrow(/resamples/);
    expect(() => compare([1], [2], { blockLength: 1.5 })).toThrow(/blockLength/);
    expect(() => compare([1], [2], { seed: 0.5 })).toThrow(/seed/);
  });
});

describe("moving-block bootstrap CI of the difference of means", () => {
  const base = ar1(2000, 60, 5, 0.6, 1);
  const cand = ar1(2000, 62, 5, 0.6, 2);

  it("is deterministic for a seed, and depends on it", () => {
    const a = compare(base, cand, { seed: 7 }).diffMean.ci95;
    const b = compare(base, cand, { seed: 7 }).diffMean.ci95;
    const other = compare(base, cand, { seed: 8 }).diffMean.ci95;
    expect(a).toEqual(b);
    expect(other).not.toEqual(a);
    expect(compare(base, cand).diffMean.ci95).toEqual(compare(base, cand).diffMean.ci95); // default seed fixed
  });

  it("contains the true difference for shifted autocorrelated samples (coverage over 40 datasets)", () => {
    const shift = 1.5;
    let covered = 0;
    const datasets = 40;
    for (let k = 0; k < datasets; k++) {
      const b = ar1(1000, 60, 5, 0.6, 1000 + 2 * k);
      const c = ar1(1000, 60 + shift, 5, 0.6, 1001 + 2 * k);
      const [lo, hi] = compare(b, c, { seed: k }).diffMean.ci95;
      if (lo <= shift && shift <= hi) covered++;
    }
    // Nominal 95 %: expect ~38/40. An i.i.d. bootstrap would badly under-cover here.
    expect(covered).toBeGreaterThanOrEqual(34);
  });

  it("is wider than an i.i.d. bootstrap (block length 1) on autocorrelated data", () => {
    const [blo, bhi] = blockBootstrapDiffMeanCI(base, cand);
    const [ilo, ihi] = blockBootstrapDiffMeanCI(base, cand, { blockLength: 1 });
    // AR(1) with phi = 0.6: the long-run sd is sqrt((1+phi)/(1-phi)) = 2× the i.i.d. one.
    expect((bhi - blo) / (ihi - ilo)).toBeGreaterThan(1.5);
  });

  it("narrows as n grows (≈ 1/√n)", () => {
    const width = (n: number): number => {
      const [lo, hi] = compare(ar1(n, 60, 5, 0.3, 11), ar1(n, 61, 5, 0.3, 12)).diffMean.ci95;
      expect(lo).toBeLessThanOrEqual(1);
      expect(hi).toBeGreaterThanOrEqual(1);
      return hi - lo;
    };
    const w100 = width(100);
    const w1000 = width(1000);
    const w10000 = width(10_000);
    expect(w1000).toBeLessThan(w100);
    expect(w10000).toBeLessThan(w1000);
    expect(w100 / w10000).toBeGreaterThan(5); // ideal 10
    expect(w100 / w10000).toBeLessThan(20);
  });

  // Speed is the bench's job (DEVELOPERS.md: no timed tests); this checks n = 10⁵ is handled right.
  it("handles n = 10⁵ with the defaults", () => {
    const b = ar1(100_000, 60, 5, 0.6, 21);
    const c = ar1(100_000, 60.1, 5, 0.6, 22);
    const r = compare(b, c);
    expect(r.diffMean.ci95[0]).toBeLessThan(r.diffMean.ci95[1]);
    expect(r.diffMean.ci95[0]).toBeLessThan(r.diffMean.estimate);
    expect(r.diffMean.ci95[1]).toBeGreaterThan(r.diffMean.estimate);
  });
});
