// Issue 14, point 3: a summary of 10 M samples against numpy's percentile on the very same samples
// (written to a file that python reads), side by side in one process run; the memory a summary
// holds while 10 M samples stream through it; `compare` of 2 × 1 M samples against its 2 s target.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compare } from "../src/results/compare.ts";
import { Distribution } from "../src/results/distribution.ts";

const N = 10_000_000;
/** The summary's percentiles, in the order numpy is asked for them below. */
const PERCENTILES = ["p50", "p90", "p95", "p99", "p999", "p9999", "p99999"] as const;

/** A lognormal RTT-like sample (µs), deterministic: the same seed gives the same samples. */
function lognormal(n: number, seed: number, out = new Float64Array(n)): Float64Array {
  let s = seed >>> 0;
  const rand = () => ((s = (s * 1664525 + 1013904223) >>> 0) + 0.5) / 2 ** 32;
  for (let i = 0; i < n; i++) out[i] = Math.exp(4 + 0.3 * Math.sqrt(-2 * Math.log(rand())) * Math.cos(2 * Math.PI * rand()));
  return out;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function timeMedian(runs: number, fn: () => void): number {
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    fn();
    ms.push(performance.now() - t);
  }
  return median(ms);
}

/** numpy's side: the python to use, and its timing of np.percentile on the file's samples. */
function numpyPercentile(file: string): { ms: number; version: string; values: number[] } | { missing: string } {
  const python = process.env.LATLAB_BENCH_PYTHON ?? "python3";
  const script = `
import json, sys, time
import numpy as np
a = np.fromfile(sys.argv[1], dtype="<f8")
q = [50, 90, 95, 99, 99.9, 99.99, 99.999]
runs = []
for _ in range(5):
    t = time.perf_counter()
    v = np.percentile(a, q, method="inverted_cdf")
    runs.append((time.perf_counter() - t) * 1000)
runs.sort()
print(json.dumps({"ms": runs[2], "version": np.__version__, "values": [float(x) for x in v]}))
`;
  const r = spawnSync(python, ["-c", script, file], { encoding: "utf8", maxBuffer: 1 << 20 });
  if (r.error) return { missing: `${python} not found (${r.error.message})` };
  if (r.status !== 0) {
    const why = /No module named .?numpy/.test(r.stderr) ? "has no numpy" : `failed: ${r.stderr.trim().split("\n").pop()}`;
    return { missing: `${python} ${why}` };
  }
  return JSON.parse(r.stdout) as { ms: number; version: string; values: number[] };
}

export async function summaryVsNumpyBench(): Promise<void> {
  const samples = lognormal(N, 1);
  const dir = mkdtempSync(join(tmpdir(), "latlab-bench-numpy-"));
  try {
    const file = join(dir, "samples.f64");
    writeFileSync(file, new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength));
    const ours = timeMedian(5, () => new Distribution("rtt", "us").add(samples).summary());
    const summary = new Distribution("rtt", "us").add(samples).summary();
    const numpy = numpyPercentile(file);
    const label = "summary of 10 M samples (moments + 7 percentiles)".padEnd(56);
    if ("missing" in numpy) {
      console.log(label, `${ours.toFixed(0)} ms; numpy not measured: ${numpy.missing} (set LATLAB_BENCH_PYTHON to a python with numpy)`);
    } else {
      console.log(label, `${ours.toFixed(0)} ms vs numpy ${numpy.version} percentile ${numpy.ms.toFixed(0)} ms: ${(ours / numpy.ms).toFixed(2)}× numpy (reference: numpy, same samples, median of 5)`);
      // numpy's inverted_cdf is the exact nearest-rank percentile: the histogram's must lie within its bound.
      let worst = 0;
      PERCENTILES.forEach((key, i) => {
        const exact = numpy.values[i]!;
        worst = Math.max(worst, Math.abs(summary[key]! - exact) / exact);
      });
      console.log("".padEnd(56), `count, mean, stddev, min, max exact; percentiles from the histogram, largest error vs numpy's exact ones ${(worst * 100).toFixed(3)} % (bound 0.098 %)`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  // Bounded memory: 10 M samples made and summarised 64 Ki at a time, never held together.
  const before = process.memoryUsage().rss;
  const streaming = new Distribution("rtt", "us");
  const batch = new Float64Array(65_536);
  for (let done = 0, seed = 7; done < N; done += batch.length, seed++) streaming.add(lognormal(Math.min(batch.length, N - done), seed, batch).subarray(0, Math.min(batch.length, N - done)));
  const grown = (process.memoryUsage().rss - before) / 2 ** 20;
  console.log("summary state while 10 M samples stream through".padEnd(56), `${(streaming.footprintBytes / 1024).toFixed(0)} KiB held (set by the values' range, not their number); resident memory ${grown >= 0 ? "+" : ""}${grown.toFixed(0)} MiB over the stream (the samples in one array: ${(N * 8 / 2 ** 20).toFixed(0)} MiB)`);

  const a = Array.from(lognormal(1_000_000, 11));
  const b = Array.from(lognormal(1_000_000, 12));
  const ms = timeMedian(3, () => compare(a, b));
  console.log("compare 2 × 1 M (block bootstrap 1000 + Mann-Whitney)".padEnd(56), `${ms.toFixed(0)} ms (target < 2 s: ${(ms / 2000).toFixed(2)}×, median of 3)`);
}
