// Performance benchmarks (not tests): how long the hot paths take on run-sized inputs.
// Run with `npm run bench`. Prints one line per case: median of 5 runs.
import { readFileSync } from "node:fs";
import { compare } from "../src/results/compare.ts";
import { Distribution } from "../src/results/distribution.ts";
import { sockperf, sockperfFullLogPath } from "../src/tools/sockperf/index.ts";

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
  console.log(`${label.padEnd(56)} ${runs[2]!.toFixed(1)} ms (median of 5)`);
}

const a = lognormal(100_000, 1);
const b = lognormal(100_000, 2);
time("Distribution.add + summary, 1e5 samples", () => new Distribution("rtt", "us").add(a).summary());
time("compare (bootstrap 1000 + Mann-Whitney), 2×1e5", () => compare(a, b));

// A 60 s sockperf run at full rate writes ~350k full-log rows: build one from a real capture.
const fixture = new URL("../tests/fixtures/sockperf/", import.meta.url);
const csv = readFileSync(new URL("tcp-full-rtt.csv", fixture), "utf8");
const header = csv.slice(0, csv.indexOf("\n", csv.search(/packet, ?txTime/i)) + 1);
const rows = csv.slice(header.length).split("\n").filter((l) => /^\d/.test(l));
const big = header + Array.from({ length: 350_000 }, (_, i) => rows[i % rows.length]).join("\n") + "\n";
const params = sockperf.params.parse({});
const path = sockperfFullLogPath("/w", 11000);
const stdout = readFileSync(new URL("tcp-full-rtt.stdout", fixture), "utf8");
time("sockperf parse, 350k full-log rows", () => {
  const r = sockperf.parse({ stdout, stderr: "", exitCode: 0, files: { [path]: big } }, params);
  if (r.samples.length < 300_000) throw new Error(`parsed only ${r.samples.length} samples`);
});

const { historySizeBench } = await import("./historySize.ts");
await historySizeBench();

const { reportSizeBench } = await import("./reportSize.ts");
await reportSizeBench();
