import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { RunSource } from "../../history/compareRuns.ts";
import { readRunFolder, type RunFolder } from "../../results/readRunFolder.ts";

/**
 * What `latlab compare` refuses before comparing, because the answer would look like a finding
 * and be none: a run compared with itself ("no clear change" by construction), and a results
 * folder whose recorded samples are gone (compared over what is left, or not at all, while the
 * verdict reads like the whole run's).
 */

/** Sample files named at most in one message; the count says how many more. */
const SHOWN = 5;

/** A run's results folder, refused (naming the folder and the files) when samples it recorded are missing. */
export function completeRunFolder(ref: string, dir: string): RunFolder {
  const folder = readRunFolder(dir);
  const missing = folder.results.measurements.filter((m) => m.samplesFile && !existsSync(resolve(folder.dir, m.samplesFile)));
  if (!missing.length) return folder;
  const listed = missing.slice(0, SHOWN).map((m) => `  ${m.samplesFile} (cell ${m.cell})`);
  if (missing.length > SHOWN) listed.push(`  and ${missing.length - SHOWN} more`);
  throw new Error(
    `"${ref}" (${folder.dir}): ${missing.length} of the ${folder.results.measurements.length} sample files its results.json records are missing, so a comparison would be of part of the run, or of nothing; restore them:\n${listed.join("\n")}`,
  );
}

/** Refuses two references to one run (the same folder, a copy of it, or its id twice). */
export function refuseSameRun(refA: string, a: RunSource, refB: string, b: RunSource): void {
  if (a.runId !== b.runId) return;
  const given = refA === refB ? `"${refA}" twice` : `"${refA}" and "${refB}"`;
  throw new Error(`${given}: both are run ${a.runId}, and a run compared with itself shows no change whatever it measured; name two different runs`);
}
