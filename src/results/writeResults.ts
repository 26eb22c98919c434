import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { StorageError } from "./fsErrors.ts";
import { ResultsSchema, type Results } from "./schema.ts";

/** Where results that failed validation are written, next to the run's other files. */
export const INVALID_RESULTS = "results.invalid.json";
/** The validation errors of INVALID_RESULTS, in words. */
export const INVALID_RESULTS_ERRORS = "results.invalid.errors.txt";

const firstLines = (text: string, n: number) => {
  const lines = text.split("\n");
  return lines.length > n ? [...lines.slice(0, n), `… (${lines.length - n} more lines)`].join("\n") : text;
};

/**
 * Writes a file atomically (temp file + rename): a crash mid-write never leaves half a file. A
 * write that fails (a full disk…) removes its temp file and throws a StorageError naming the
 * file and the reason in words; the file itself is left as it was.
 */
function writeAtomically(file: string, text: string): void {
  const tmp = `${file}.tmp`;
  try {
    // Flushed before the rename: after a power cut the file is the old one or the new one, never empty.
    const fd = openSync(tmp, "w");
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch (error) {
    try {
      rmSync(tmp, { force: true });
    } catch {
      // The folder itself is gone or unreadable: there is no temp file to leave behind.
    }
    throw new StorageError(file, error);
  }
}

/**
 * Validates and writes results.json atomically, so a crash mid-write never leaves a truncated
 * file where a good one was expected. Results that fail validation (a bug in latlab) are not
 * lost: they are written as they are to results.invalid.json with the validation errors beside
 * them, and the error thrown names both files. A file that cannot be written throws a
 * StorageError (src/results/fsErrors.ts) and leaves no temp file.
 */
export function writeResults(runDir: string, results: Results): string {
  const checked = ResultsSchema.safeParse(results);
  if (!checked.success) {
    const file = join(runDir, INVALID_RESULTS);
    const errorsFile = join(runDir, INVALID_RESULTS_ERRORS);
    const explained = z.prettifyError(checked.error);
    writeAtomically(file, `${JSON.stringify(results, null, 2)}\n`);
    writeAtomically(errorsFile, `${explained}\n`);
    throw new Error(
      `results do not match the results schema (a bug in latlab); everything measured was written to ${file} ` +
        `and the validation errors to ${errorsFile}:\n${firstLines(explained, 20)}`,
    );
  }
  const file = join(runDir, "results.json");
  writeAtomically(file, `${JSON.stringify(checked.data, null, 2)}\n`);
  return file;
}
