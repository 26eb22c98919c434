import { describe, expect, it } from "vitest";
import { gate } from "../../../src/history/gate.ts";
import type { GateConfigInput, GateRun, GateVerdict } from "../../../src/history/gateSchema.ts";
import { mulberry32 } from "../../../src/results/compare.ts";

/**
 * The gate's false-alarm rate and power, by simulation with a seeded PRNG (deterministic: the
 * same numbers every run). Each series is independent: n previous runs and one new run drawn
 * from a stationary lognormal (the gate's model: the logarithms of the headline values are
 * normal), so the checks are independent Bernoulli trials and the observed rate's standard
 * error is the binomial one, √(p(1 − p)/N). The tolerance is 4 SE: a correct gate stays within it
 * except with probability ≈ 6·10⁻⁵.
 */

/** Standard normal by Box–Muller from two uniforms of mulberry32 (1 − u keeps the log finite). */
function normals(seed: number): () => number {
  const u = mulberry32(seed);
  return () => Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u());
}

const SERIES_PER_RUN = 500;

/**
 * Verdicts of `series` independent series, each with `n` previous runs and a new one, RTT means
 * lognormal around 400 µs with log-spread `sigma`; the new run's values multiplied by `shift`.
 * Series are packed as variants of one experiment (SERIES_PER_RUN a gate call): each variant's
 * band uses only its own values, so they stay independent.
 */
function simulate(seed: number, series: number, n: number, sigma: number, shift: number, settings: GateConfigInput = {}): GateVerdict[] {
  const z = normals(seed);
  const draw = () => 400 * Math.exp(sigma * z());
  const verdicts: GateVerdict[] = [];
  for (let done = 0; done < series; done += SERIES_PER_RUN) {
    const width = Math.min(SERIES_PER_RUN, series - done);
    const run = (i: number, factor: number): GateRun => ({
      runId: `r${i}`,
      startedAt: new Date(Date.UTC(2025, 0, 1, i)).toISOString(),
      headlines: Array.from({ length: width }, (_, v) => ({ variant: `s${v}`, measure: "0", pair: "a->b", metric: "rtt" as const, unit: "us" as const, statistic: "mean" as const, value: draw() * factor })),
    });
    const previous = Array.from({ length: n }, (_, i) => run(i, 1));
    const report = gate(run(n, shift), previous, { maxRuns: Math.max(20, n), ...settings });
    verdicts.push(...report.checks.map((c) => c.verdict));
  }
  return verdicts;
}

const rate = (verdicts: GateVerdict[], which: GateVerdict[]) => verdicts.filter((v) => which.includes(v)).length / verdicts.length;
const binomialSe = (p: number, trials: number) => Math.sqrt((p * (1 - p)) / trials);

describe("the gate's false-alarm rate (stationary lognormal runs)", () => {
  const N = 20_000;
  const alpha = 0.01;

  for (const n of [5, 10, 20]) {
    it(`with ${n} previous runs the band misses ${alpha * 100} % of new runs, half of them above (threshold 0): within 4 binomial SE`, () => {
      const verdicts = simulate(1000 + n, N, n, 0.1, 1, { thresholdPct: 0, alpha });
      const outside = rate(verdicts, ["regression", "improvement"]);
      const above = rate(verdicts, ["regression"]);
      // Two-sided: the interval is exact under the model, so the rate is α, not merely at most α.
      expect(Math.abs(outside - alpha), `outside the band: ${outside}`).toBeLessThanOrEqual(4 * binomialSe(alpha, N));
      expect(Math.abs(above - alpha / 2), `regressions: ${above}`).toBeLessThanOrEqual(4 * binomialSe(alpha / 2, N));
    });
  }

  it("with the default settings a regression is flagged in at most α/2 = 0.5 % of checks (+4 SE)", () => {
    for (const sigma of [0.02, 0.1]) {
      const verdicts = simulate(7 + Math.round(sigma * 100), N, 8, sigma, 1);
      const falseAlarms = rate(verdicts, ["regression"]);
      expect(falseAlarms, `σ = ${sigma}: ${falseAlarms}`).toBeLessThanOrEqual(alpha / 2 + 4 * binomialSe(alpha / 2, N));
    }
  });
});

describe("the gate's power", () => {
  it("flags a real +30 % shift of RTT in most runs (10 previous runs, 5 % run-to-run spread)", () => {
    // Expected ≈ 93 % (a simulation of 20 000 series); 85 % leaves room for the seed's luck.
    const verdicts = simulate(424242, 4_000, 10, 0.05, 1.3);
    expect(rate(verdicts, ["regression"])).toBeGreaterThan(0.85);
  });

  it("does not call a −30 % shift a regression", () => {
    const verdicts = simulate(4243, 2_000, 10, 0.05, 0.7);
    expect(rate(verdicts, ["regression"])).toBe(0);
    expect(rate(verdicts, ["improvement"])).toBeGreaterThan(0.9);
  });
});
