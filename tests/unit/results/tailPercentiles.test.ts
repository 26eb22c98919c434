import { describe, expect, it } from "vitest";
import { Distribution, nearestRank, SIGNIFICANT_DIGITS, VALUE_SCALE } from "../../../src/results/distribution.ts";
import { TAIL_PERCENTILES, tailSupported, type TailPercentile } from "../../../src/results/summary.ts";
import { expectRel, tailReference, tailSequence } from "./statsReference.ts";

const TAILS = Object.keys(TAIL_PERCENTILES) as TailPercentile[];

/**
 * distribution.ts' guarantee for a percentile whose exact (nearest-rank) value is v: HdrHistogram
 * with SIGNIFICANT_DIGITS = 3 has buckets at most v/1024 wide, and values are recorded to
 * 1/VALUE_SCALE: |reported − v| ≤ max(v/1024, 0.5/VALUE_SCALE).
 */
function expectPercentile(actual: number, expected: number, what: string): void {
  const bound = Math.max(expected / 1024, 0.5 / VALUE_SCALE);
  expect(Math.abs(actual - expected) <= bound, `${what}: ${actual} vs ${expected} (bound ${bound})`).toBe(true);
}

describe("tailSupported: a tail percentile q needs n ≥ 1/(1 − q) samples", () => {
  it("at the boundaries: p99.9 from 1 000, p99.99 from 10 000, p99.999 from 100 000", () => {
    const at = (n: number) => TAILS.map((k) => tailSupported(n, k));
    expect(at(1)).toEqual([false, false, false]);
    expect(at(999)).toEqual([false, false, false]);
    expect(at(1_000)).toEqual([true, false, false]);
    expect(at(9_999)).toEqual([true, false, false]);
    expect(at(10_000)).toEqual([true, true, false]);
    expect(at(99_999)).toEqual([true, true, false]);
    expect(at(100_000)).toEqual([true, true, true]);
    expect(at(Number.MAX_SAFE_INTEGER)).toEqual([true, true, true]);
  });

  it("no count, or not a count, supports anything", () => {
    for (const n of [0, -1_000_000, 1_000.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(TAILS.map((k) => tailSupported(n, k)), String(n)).toEqual([false, false, false]);
    }
  });

  it("holds exactly when the nearest rank is below the maximum's (the percentile is not just the max)", () => {
    for (const k of TAILS) {
      const { num, den } = TAIL_PERCENTILES[k];
      for (const n of [1, 2, 10, den - 2, den - 1, den, den + 1, 2 * den - 1, 2 * den, 3 * den + 7]) {
        expect(tailSupported(n, k), `${k} n=${n}`).toBe(nearestRank(n, num, den) < n);
      }
    }
  });

  it("agrees with the rule make_tail_reference.py checked against numpy's ranks", () => {
    for (const [n, ref] of Object.entries(tailReference.sets)) {
      for (const k of TAILS) expect(tailSupported(Number(n), k), `${k} n=${n}`).toBe(ref.supported[k]);
    }
  });
});

describe("tail percentiles vs numpy (tests/fixtures/stats/tail_reference.json)", () => {
  const sequence = tailSequence(tailReference.sequence.length);

  it("the generated samples are the ones the reference was computed from", () => {
    expect(sequence.slice(0, 5)).toEqual(tailReference.sequence.first);
    expect(sequence.reduce((sum, v) => sum + Math.round(v * 10), 0)).toBe(tailReference.sequence.tenthsSum);
    expect(SIGNIFICANT_DIGITS).toBe(3); // the precision bound below assumes it
  });

  for (const [n, ref] of Object.entries(tailReference.sets)) {
    it(`n=${n}: p50…p99.999 within the histogram's precision; p99.99/p99.999 only where supported`, () => {
      const s = new Distribution("rtt", "us").add(sequence.slice(0, Number(n))).summary();
      expect(s.count).toBe(ref.count);
      expectRel(s.mean, ref.mean, 1e-9, "mean");
      expect([s.min, s.max]).toEqual([ref.min, ref.max]);
      for (const p of ["p50", "p90", "p99", "p999"] as const) expectPercentile(s[p], ref[p], p);
      for (const p of ["p9999", "p99999"] as const) {
        if (ref.supported[p]) expectPercentile(s[p]!, ref[p], p);
        else expect(s, p).not.toHaveProperty(p);
      }
      // p999 is always there (see SummarySchema); unsupported, it is the maximum (clamped to it).
      if (!ref.supported.p999) expect(s.p999).toBe(ref.max);
    });
  }

  it("merging chunks gives the same tail percentiles as the whole (histograms add)", () => {
    const whole = new Distribution("rtt", "us").add(sequence).summary();
    const merged = new Distribution("rtt", "us");
    for (let i = 0; i < sequence.length; i += 9_000) merged.merge(new Distribution("rtt", "us").add(sequence.slice(i, i + 9_000)));
    const m = merged.summary();
    expect([m.p999, m.p9999, m.p99999]).toEqual([whole.p999, whole.p9999, whole.p99999]);
    expect(m.p99999).toBeDefined();
  });
});
