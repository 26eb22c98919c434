import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { StorageError } from "../../../src/results/fsErrors.ts";
import type { Results } from "../../../src/results/schema.ts";
import { INVALID_RESULTS, INVALID_RESULTS_ERRORS, writeResults } from "../../../src/results/writeResults.ts";
import { tempDirs } from "../../tempDirs.ts";

const tempDir = tempDirs();

const results: Results = {
  schemaVersion: 1,
  runId: "unit",
  experiment: { name: "x", description: "x", source: "x.ts" },
  target: "local",
  startedAt: "2026-11-21T05:00:00.000Z",
  finishedAt: "2026-11-21T05:01:00.000Z",
  status: "complete",
  environment: {
    latlabVersion: "0.1.0",
    node: "v24",
    kernel: "6",
    toolVersions: {},
    shaping: { latency: "not-applicable", bandwidth: "not-applicable", note: "shaping: n/a" },
    facts: {},
  },
  baseline: "v",
  variants: [],
  measurements: [],
  comparisons: [],
  pairComparisons: [],
  teardown: { status: "ok", errors: [], removed: [] },
};

describe("writeResults", () => {
  it("writes valid results to results.json", () => {
    const dir = tempDir("latlab-unit-results-");
    expect(writeResults(dir, results)).toBe(join(dir, "results.json"));
    expect(JSON.parse(readFileSync(join(dir, "results.json"), "utf8"))).toEqual(results);
    expect(existsSync(join(dir, INVALID_RESULTS))).toBe(false);
  });

  it("a results.json it cannot write throws a StorageError naming the file and the reason in words, and leaves no temp file", () => {
    const dir = tempDir("latlab-unit-results-");
    mkdirSync(join(dir, "results.json"));
    let thrown: unknown;
    try {
      writeResults(dir, results);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(StorageError);
    expect((thrown as Error).message).toBe(`cannot write ${join(dir, "results.json")}: it is a folder where a file was expected (EISDIR)`);
    expect(readdirSync(dir)).toEqual(["results.json"]);
  });

  it("never loses a run's results to a validation bug: writes them beside the errors and names the file", () => {
    const dir = tempDir("latlab-unit-results-");
    const bad = { ...results, status: "mostly-fine" } as unknown as Results;
    expect(() => writeResults(dir, bad)).toThrow(new RegExp(`written to ${join(dir, INVALID_RESULTS).replace(/[.]/g, "\\.")}.*status`, "s"));
    expect(JSON.parse(readFileSync(join(dir, INVALID_RESULTS), "utf8"))).toEqual(bad);
    expect(readFileSync(join(dir, INVALID_RESULTS_ERRORS), "utf8")).toMatch(/status/);
    expect(existsSync(join(dir, "results.json"))).toBe(false);
  });
});
