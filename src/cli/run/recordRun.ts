import { appendRuns } from "../../history/historyStore.ts";
import { historyRecords } from "../../history/historyRecords.ts";
import { readRunFolder } from "../../results/readRunFolder.ts";

/** Adds a finished run's folder to the history; returns the line to print. */
export async function recordRun(runDir: string, file: string, log: (m: string) => void = () => {}, options: { replace?: boolean } = {}): Promise<string> {
  const folder = readRunFolder(runDir);
  const { added } = await appendRuns(file, [historyRecords(folder.results, folder.samplesOf)], log, options);
  return added.length ? `history: run ${folder.results.runId} recorded in ${file}` : `history: run ${folder.results.runId} was already in ${file}`;
}
