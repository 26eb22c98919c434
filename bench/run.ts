// Performance benchmarks (not tests): how long the hot paths take on run-sized inputs, each
// figure printed with its ratio to a reference (numpy on the same samples, a target, a hand-run
// tool, the measurement time asked for). Run with `npm run bench`.
import { readFileSync } from "node:fs";
import { sockperf, sockperfFullLogPath } from "../src/tools/sockperf/index.ts";

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

const { summaryVsNumpyBench } = await import("./summaryVsNumpy.ts");
await summaryVsNumpyBench();

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

const { harnessPerturbationBench } = await import("./harnessPerturbation.ts");
await harnessPerturbationBench();

const { shapingErrorBench } = await import("./shapingError.ts");
await shapingErrorBench();

// Last: a whole run (~40 s), after the harness figure above.
const { runOverheadBench } = await import("./runOverhead.ts");
await runOverheadBench();
