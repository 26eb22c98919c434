// Performance benchmarks (not tests): how long the statistics take on run-sized inputs.
// Run with `npm run bench`. Prints one line per case: median of 5 runs.
import { compare } from "../src/results/compare.ts";
import { Distribution } from "../src/results/distribution.ts";

function lognormal(n: number, seed: number): number[] {
  let s = seed >>> 0;
  const rand = () => ((s = (s * 1664525 + 1013904223) >>> 0) + 0.5) / 2 ** 32;
  return Array.from({ length: n }, () => Math.exp(4 + 0.3 * Math.sqrt(-2 * Math.log(rand())) * Math.cos(2 * Math.PI * rand())));
}

function time(label: string, fn: () => void): void {
  const runs: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    fn();
    runs.push(performance.now() - t);
  }
  runs.sort((a, b) => a - b);
  console.log(`${label.padEnd(48)} ${runs[2]!.toFixed(1)} ms (median of 5)`);
}

const a = lognormal(100_000, 1);
const b = lognormal(100_000, 2);
time("Distribution.add + summary, 1e5 samples", () => new Distribution("rtt", "us").add(a).summary());
time("compare (bootstrap 1000 + Mann-Whitney), 2×1e5", () => compare(a, b));
