// How big the history grows: a year of weekly runs of the largest shipped experiment
// (ppg-availability-set, 80 cells), recorded one run at a time as the scheduled workflow does.
// Prints the file's size on disk and deflated (what one commit of it adds to a git branch), and
// the time an append takes. Synthetic samples: the history holds summaries, so their values do
// not change its size.
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import experiment from "../experiments/ppg-availability-set.ts";
import { historyRecords } from "../src/history/historyRecords.ts";
import { appendRuns } from "../src/history/historyStore.ts";
import { around, fakeRun } from "../tests/unit/history/fakeRun.ts";

export async function historySizeBench(runs = 52): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "latlab-bench-history-"));
  const file = join(dir, "history.duckdb");
  const times: number[] = [];
  try {
    for (let i = 0; i < runs; i++) {
      const run = fakeRun(`run-${i}`, (c) => around(100 + c.replica, 2000, i), { experiment: experiment as never, startedAt: new Date(Date.UTC(2026, 0, 1 + 7 * i)).toISOString() });
      const t = performance.now();
      await appendRuns(file, [historyRecords(run.results, run.samplesOf)]);
      times.push(performance.now() - t);
      if (i === 0 || i === runs - 1) {
        const bytes = statSync(file).size;
        console.log(`history after ${String(i + 1).padStart(2)} run(s) of ppg-availability-set (80 cells)`.padEnd(56), `${(bytes / 1024).toFixed(0)} KiB on disk, ${(deflateSync(readFileSync(file)).length / 1024).toFixed(1)} KiB deflated`);
      }
    }
    times.sort((a, b) => a - b);
    console.log("history append, one run of 80 cells".padEnd(56), `${times[Math.floor(times.length / 2)]!.toFixed(1)} ms (median of ${runs})`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
