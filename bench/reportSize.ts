// The report of a run with 10 M samples (issue 13: under 5 s, under 5 MB): two variants of 5 M
// RTT samples each, lognormal with a long tail. Times writeReport (charts reduced from the
// samples, rendered to SVG, report.html + report.md + specs written) and prints the sizes. The
// comparisons in results.json come from small stand-in samples: only the report's work is timed.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeReport } from "../src/report/writeReport.ts";
import { memoizeSamples, readRunFolder } from "../src/results/readRunFolder.ts";
import { around, fakeRun } from "../tests/unit/history/fakeRun.ts";

function lognormal(n: number, seed: number): Float64Array {
  let s = seed >>> 0;
  const rand = () => ((s = (s * 1664525 + 1013904223) >>> 0) + 0.5) / 2 ** 32;
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.exp(4 + 0.4 * Math.sqrt(-2 * Math.log(rand())) * Math.cos(2 * Math.PI * rand()));
  return out;
}

export async function reportSizeBench(total = 10_000_000): Promise<void> {
  const run = fakeRun("bench-report", (c) => around(60 + c.replica, 200, 1), { startedAt: "2026-11-23T10:00:00.000Z" });
  const results = { ...run.results, finishedAt: "2026-11-23T10:10:00.000Z", measurements: run.results.measurements.map((m) => ({ ...m, startedAt: "2026-11-23T10:00:00.000Z", finishedAt: "2026-11-23T10:05:00.000Z" })) };
  const per = Math.floor(total / results.measurements.length);
  const big = new Map(results.measurements.map((m, i) => [m.cell, Array.from(lognormal(per, i + 1))]));
  const dir = mkdtempSync(join(tmpdir(), "latlab-bench-report-"));
  try {
    const t = performance.now();
    const written = await writeReport(dir, results, (cell) => big.get(cell) ?? []);
    const ms = performance.now() - t;
    const html = statSync(written.html).size;
    const charts = readdirSync(join(dir, "charts")).reduce((n, f) => n + statSync(join(dir, "charts", f)).size, 0);
    console.log(`report of ${(per * results.measurements.length / 1e6).toFixed(0)} M samples (${results.measurements.length} cells), in memory`.padEnd(56), `${(ms / 1000).toFixed(2)} s (target < 5 s: ${(ms / 5000).toFixed(2)}×), report.html ${(html / 1024).toFixed(0)} KiB (target < 5 MB: ${(html / 5 / 1024 / 1024).toFixed(2)}×), specs ${(charts / 1024).toFixed(0)} KiB`);
    // As `latlab report <dir>` does it: the samples read from the run folder's text files first.
    mkdirSync(join(dir, "samples"), { recursive: true });
    for (const m of results.measurements) writeFileSync(join(dir, m.samplesFile!), `${big.get(m.cell)!.join("\n")}\n`);
    writeFileSync(join(dir, "results.json"), JSON.stringify(results));
    big.clear();
    const t2 = performance.now();
    const folder = readRunFolder(dir);
    await writeReport(dir, folder.results, memoizeSamples(folder.samplesOf));
    const ms2 = performance.now() - t2;
    console.log("report of the same, samples read from their text files".padEnd(56), `${(ms2 / 1000).toFixed(2)} s (target < 5 s: ${(ms2 / 5000).toFixed(2)}×)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
