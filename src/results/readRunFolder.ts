import { existsSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { z } from "zod";
import { ResultsSchema, type Results } from "./schema.ts";

/** A run's results folder read back: results.json, validated, and a reader of each cell's samples. */
export interface RunFolder {
  dir: string;
  results: Results;
  /** A cell's samples in the order measured; [] when the run kept none for it (or the file is gone). */
  samplesOf: (cell: string) => number[];
}

/** Reads results.json from a run folder (or the file itself); errors name the path and what is wrong. */
export function readRunFolder(path: string): RunFolder {
  const given = resolve(path);
  if (!existsSync(given)) throw new Error(`${given}: no such results folder`);
  const dir = statSync(given).isDirectory() ? given : resolve(given, "..");
  const file = statSync(given).isDirectory() ? join(given, "results.json") : given;
  if (!existsSync(file)) throw new Error(`${dir}: no results.json (not a finished run's folder)`);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new Error(`${file}: not JSON (${(error as Error).message})`);
  }
  const checked = ResultsSchema.safeParse(raw);
  if (!checked.success) throw new Error(`${file}: does not match the results schema:\n${z.prettifyError(checked.error)}`);
  const results = checked.data;
  const files = new Map(results.measurements.map((m) => [m.cell, m.samplesFile]));
  const samplesOf = (cell: string): number[] => {
    const f = files.get(cell);
    if (!f || !existsSync(resolve(dir, f))) return [];
    return parseSamplesText(readFileSync(resolve(dir, f), "utf8"));
  };
  return { dir, results, samplesOf };
}

/** A samples reader that reads each cell once (a cell may hold millions of samples, and the table and the report both want them). */
export function memoizeSamples(read: (cell: string) => number[]): (cell: string) => number[] {
  const cache = new Map<string, number[]>();
  return (cell) => {
    let s = cache.get(cell);
    if (!s) cache.set(cell, (s = read(cell)));
    return s;
  };
}

/**
 * A samples file's values (one a line; blank lines skipped), without splitting it into millions of
 * strings first: a cell of 5 M samples is read in about half the time.
 */
export function parseSamplesText(text: string): number[] {
  const out: number[] = [];
  let start = 0;
  for (;;) {
    const nl = text.indexOf("\n", start);
    const end = nl < 0 ? text.length : nl;
    if (end > start) out.push(Number(text.slice(start, end)));
    if (nl < 0) return out;
    start = nl + 1;
  }
}
