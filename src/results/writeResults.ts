import { renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ResultsSchema, type Results } from "./schema.ts";

/**
 * Validates and writes results.json atomically (temp file + rename), so a crash mid-write
 * never leaves a truncated file where a good one was expected.
 */
export function writeResults(runDir: string, results: Results): string {
  const valid = ResultsSchema.parse(results);
  const file = join(runDir, "results.json");
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(valid, null, 2)}\n`);
  renameSync(tmp, file);
  return file;
}
