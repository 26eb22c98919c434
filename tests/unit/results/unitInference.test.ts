import tCdf from "@stdlib/stats-base-dists-t-cdf";
import tQuantile from "@stdlib/stats-base-dists-t-quantile";
import { describe, expect, it } from "vitest";
import { EXACT_RANK_MAX_UNITS, exactMannWhitney, unitStatistics, welchT } from "../../../src/results/unitInference.ts";
import { expectRel, sample, unitReference, type UnitTestReference } from "./statsReference.ts";

/** numpy.array_split: k consecutive parts, the first n mod k one longer. */
function split(xs: readonly number[], k: number): number[][] {
  const size = Math.floor(xs.length / k);
  const extra = xs.length % k;
  const parts: number[][] = [];
  let at = 0;
  for (let i = 0; i < k; i++) {
    const len = size + (i < extra ? 1 : 0);
    parts.push(xs.slice(at, at + len));
    at += len;
  }
  return parts;
}

function expectMatches(baseline: number[], candidate: number[], ref: UnitTestReference): void {
  const w = welchT(baseline, candidate);
  expect(Math.abs(w.estimate - ref.estimate)).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(ref.estimate)));
  expectRel(w.ci95[0], ref.ci95[0], 1e-10, "ci95 low");
  expectRel(w.ci95[1], ref.ci95[1], 1e-10, "ci95 high");
  expectRel(w.test!.t, ref.welch.t, 1e-10, "t");
  expectRel(w.test!.df, ref.welch.df, 1e-10, "df");
  expectRel(w.test!.p, ref.welch.p, 1e-9, "Welch p");
  const r = exactMannWhitney(baseline, candidate);
  expect(r.method).toBe("exact");
  expect(r.u).toBe(ref.rankTest.u);
  expectRel(r.p, ref.rankTest.p, 1e-12, "rank p");
}

describe(`unit inference vs scipy (tests/fixtures/stats/unit_reference.json, ${unitReference.command})`, () => {
  for (const ref of unitReference.cases) {
    it(ref.name, () => expectMatches(ref.baseline, ref.candidate, ref));
  }

  for (const ref of unitReference.splitCases) {
    it(`${ref.name}: unit means and medians, then Welch and the rank test over them`, () => {
      const b = unitStatistics(split(sample(ref.baseline), ref.units));
      const c = unitStatistics(split(sample(ref.candidate), ref.units));
      for (const [got, want] of [[b, ref.unitStatistics.baseline], [c, ref.unitStatistics.candidate]] as const) {
        expect(got.p50).toEqual(want.p50);
        got.mean.forEach((m, i) => expectRel(m, want.mean[i]!, 1e-12, `unit mean ${i}`));
      }
      expectMatches(b.mean, c.mean, ref.mean);
      expectMatches(b.p50, c.p50, ref.p50);
    });
  }

  it("the t quantile and CDF of the library match scipy.stats.t", () => {
    for (const { q, df, x } of unitReference.tPpf) {
      if (x === 0) expect(Math.abs(tQuantile(q, df))).toBeLessThan(1e-15);
      else expectRel(tQuantile(q, df), x, 1e-12, `t.ppf(${q}, ${df})`);
    }
    for (const { x, df, p } of unitReference.tCdf) expectRel(tCdf(x, df), p, 1e-11, `t.cdf(${x}, ${df})`);
  });
});

describe("unit inference on hand-checkable numbers", () => {
  it("3 units a side can give a rank p of 0.1 at best, whatever the effect", () => {
    expect(exactMannWhitney([1, 2, 3], [100, 200, 300])).toEqual({ u: 9, p: 0.1, method: "exact" });
    expect(exactMannWhitney([100, 200, 300], [1, 2, 3])).toEqual({ u: 0, p: 0.1, method: "exact" });
    expect(exactMannWhitney([1, 2, 3], [1, 2, 3]).p).toBe(1);
  });

  it("gives the CI as the difference and no t-test when both sides have zero spread", () => {
    expect(welchT([5, 5, 5], [7, 7])).toEqual({ estimate: 2, ci95: [2, 2] });
  });

  it("falls back to the normal approximation beyond the exact limit", () => {
    const half = EXACT_RANK_MAX_UNITS / 2 + 1;
    const r = exactMannWhitney(Array.from({ length: half }, (_, i) => i), Array.from({ length: half }, (_, i) => i + 0.5));
    expect(r.method).toBe("asymptotic");
    expect(r.p).toBeGreaterThan(0.5);
  });

  it("refuses fewer than 2 units a side for Welch and non-finite values", () => {
    expect(() => welchT([1], [2, 3])).toThrow(/at least 2/);
    expect(() => welchT([1, Number.NaN], [2, 3])).toThrow(/finite/);
    expect(() => exactMannWhitney([], [2, 3])).toThrow(/at least 1/);
  });

  it("reduces each unit to its mean and its nearest-rank median", () => {
    expect(unitStatistics([[1, 2, 3, 10], [5]])).toEqual({ mean: [4, 5], p50: [2, 5] });
  });
});
