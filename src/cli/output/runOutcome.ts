import { existsSync, readFileSync } from "node:fs";
import { writeReport } from "../../report/writeReport.ts";
import type { RunFiles } from "../../results/runFiles.ts";
import type { Results } from "../../results/schema.ts";

/**
 * The exit code of a run. A teardown that failed wins over everything, an interruption
 * included: resources may be leaking, and scripts must not take it for a clean Ctrl-C. A teardown
 * handed over (a second signal) is such a failure: it did not finish here. A run stopped at its
 * --time-limit is partial (2) when it measured anything, failed (1) when it measured nothing.
 */
export function runExitCode(results: Pick<Results, "status" | "teardown">): number {
  if (results.teardown.status === "failed" || results.status === "failed") return 1;
  if (results.status === "interrupted") return 130;
  if (results.status === "partial") return 2;
  return 0;
}

/** Writes the run's report; the line says where, or why not and how to make it later. Never fails the run. */
export async function reportLine(dir: string, results: Results, samplesOf: (cell: string) => number[]): Promise<string> {
  try {
    const written = await writeReport(dir, results, samplesOf);
    return `report: ${written.html} (and report.md)`;
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return `report: not written in ${dir}: ${why.split("\n")[0]} (\`latlab report ${dir}\` makes it later)`;
  }
}

/** A cell's samples, from the results folder or, for those it could not take, the rescue folder. */
export function readSamples(runFiles: RunFiles, results: Results): (cell: string) => number[] {
  const files = new Map(results.measurements.map((m) => [m.cell, m.samplesFile]));
  return (cell: string) => {
    const rel = files.get(cell);
    const file = rel ? runFiles.locate(rel) : undefined;
    if (!file || !existsSync(file)) return [];
    return readFileSync(file, "utf8").split("\n").filter(Boolean).map(Number);
  };
}
