import { readFileSync } from "node:fs";
import { expect } from "vitest";

// Reference values: tests/fixtures/stats/make_reference.py (numpy/scipy); see its README.md.
// One loader for every statistics test, so they all read the same sets the same way.

export interface SetReference {
  count: number;
  mean: number;
  stddev: number;
  min: number;
  max: number;
  p50: number;
  p90: number;
  p95: number;
  p99: number;
  p999: number;
}

export interface PairReference {
  baseline: string;
  candidate: string;
  ratioMean: number;
  pctChangeMean: number;
  ratioP50: number;
  ratioP99: number;
  diffMean: number;
  mannWhitney: { u: number; p: number };
}

const fixtures = new URL("../../fixtures/stats/", import.meta.url);
const samples = JSON.parse(readFileSync(new URL("samples.json", fixtures), "utf8")) as Record<string, number[]>;

export const reference = JSON.parse(readFileSync(new URL("reference.json", fixtures), "utf8")) as {
  sets: Record<string, SetReference>;
  pairs: PairReference[];
  normSf: { z: number; sf: number }[];
};

export interface UnitTestReference {
  estimate: number;
  ci95: [number, number];
  welch: { t: number; df: number; p: number };
  rankTest: { u: number; p: number };
}

/** tests/fixtures/stats/make_unit_reference.py: Welch t and the exact rank test over units. */
export const unitReference = JSON.parse(readFileSync(new URL("unit_reference.json", fixtures), "utf8")) as {
  command: string;
  cases: ({ name: string; baseline: number[]; candidate: number[] } & UnitTestReference)[];
  splitCases: {
    name: string;
    baseline: string;
    candidate: string;
    units: number;
    unitStatistics: Record<"baseline" | "candidate", { mean: number[]; p50: number[] }>;
    mean: UnitTestReference;
    p50: UnitTestReference;
  }[];
  tPpf: { q: number; df: number; x: number }[];
  tCdf: { x: number; df: number; p: number }[];
};

export function sample(name: string): number[] {
  const s = samples[name];
  if (!s) throw new Error(`fixture set ${name} missing`);
  return s;
}

/** |actual − expected| ≤ rel·|expected|, with a message naming the quantity and the error. */
export function expectRel(actual: number, expected: number, rel: number, what: string): void {
  const err = Math.abs(actual - expected);
  expect(err <= rel * Math.abs(expected), `${what}: ${actual} vs ${expected} (rel err ${err / Math.abs(expected)} > ${rel})`).toBe(true);
}

export interface TailSetReference {
  count: number;
  mean: number;
  min: number;
  max: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  p9999: number;
  p99999: number;
  supported: Record<"p999" | "p9999" | "p99999", boolean>;
}

/**
 * tests/fixtures/stats/make_tail_reference.py: nearest-rank tail percentiles (numpy
 * `inverted_cdf`) of prefixes of one generated sequence ({@link tailSequence}), and which of them
 * each count supports.
 */
export const tailReference = JSON.parse(readFileSync(new URL("tail_reference.json", fixtures), "utf8")) as {
  command: string;
  numpy: string;
  sequence: { seed: number; definition: string; length: number; first: number[]; tenthsSum: number };
  sets: Record<string, TailSetReference>;
};

/**
 * The sequence make_tail_reference.py draws, made the same way (Park–Miller minstd, then a
 * shifted Pareto at 0.1 µs): only operations IEEE 754 rounds exactly, so the values are
 * bit-identical to Python's.
 */
export function tailSequence(n: number, seed = tailReference.sequence.seed): number[] {
  const modulus = 2 ** 31 - 1;
  const out = new Array<number>(n);
  let state = seed;
  for (let i = 0; i < n; i++) {
    state = (state * 48271) % modulus; // < 2^47: exact
    out[i] = Math.floor((40 + 20 / Math.sqrt(state / modulus)) * 10) / 10;
  }
  return out;
}
