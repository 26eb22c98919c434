/**
 * The runs `compare` and `report` are given: a results folder by path, or a run id under ./results,
 * else (compare) the run's rows in the history.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { RunSource } from "../../history/compareRuns.ts";
import { historyRecords } from "../../history/historyRecords.ts";
import { loadHistory } from "../../history/historyStore.ts";
import type { RunFolder } from "../../results/readRunFolder.ts";
import { completeRunFolder } from "./compareInputs.ts";

/** A run folder by path, or by run id under ./results; undefined when neither exists. */
export function findRunFolder(ref: string): string | undefined {
  for (const dir of [resolve(ref), resolve("results", ref)]) if (existsSync(resolve(dir, "results.json")) || (existsSync(dir) && dir.endsWith(".json"))) return dir;
  return undefined;
}

function fromFolder(folder: RunFolder): RunSource {
  const { results, samplesOf } = folder;
  const records = historyRecords(results, samplesOf);
  return {
    runId: results.runId,
    experiment: results.experiment.name,
    summaries: records.summaries,
    facts: records.run,
    sampled: results.measurements.map((measurement) => ({ measurement, samples: samplesOf(measurement.cell) })),
  };
}

/** A run to compare: its results folder (with samples) when there is one, else its rows in the history. */
export async function runSource(ref: string, file: string): Promise<RunSource> {
  const dir = findRunFolder(ref);
  if (dir) return fromFolder(completeRunFolder(ref, dir));
  const data = existsSync(file) ? await loadHistory(file) : undefined;
  const run = data?.runs.find((r) => r.runId === ref);
  if (!data || !run) {
    throw new Error(`"${ref}": no results folder (looked for ${resolve(ref)} and ${resolve("results", ref)}) and no run with that id in the history ${file}${data ? "" : " (which does not exist)"}`);
  }
  return { runId: run.runId, experiment: run.experiment, summaries: data.summaries.filter((s) => s.runId === run.runId), facts: run };
}

