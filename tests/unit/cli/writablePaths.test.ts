import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { historyRecords } from "../../../src/history/historyRecords.ts";
import { appendRuns } from "../../../src/history/historyStore.ts";
import { around, fakeRun } from "../history/fakeRun.ts";
import { tempDirs } from "../../tempDirs.ts";

const tempDir = tempDirs();
const ROOT = resolve(import.meta.dirname, "../../..");
const BIN = join(ROOT, "bin/latlab.js");
const FAKE_TARGET_RUN = join(import.meta.dirname, "fixtures/fakeTargetRun.ts");

/**
 * The CLI in a child process. Before the guard these commands spun for ever in Node's recursive
 * mkdir on /proc, ignoring SIGTERM: the child is SIGKILLed after a minute so that such a hang
 * fails the test (with status null) instead of stopping the suite. With the guard they end at once.
 */
const latlab = (args: string[], cwd: string) =>
  spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: "utf8", timeout: 60_000, killSignal: "SIGKILL", env: { ...process.env, CI: "true", LATLAB_HISTORY: join(cwd, "history.duckdb") } });

/** A finished run's results folder. */
function runFolder(base: string): string {
  const run = fakeRun("r1", (c) => around(100 + c.replica, 10));
  const dir = join(base, "r1");
  mkdirSync(dir);
  writeFileSync(join(dir, "results.json"), JSON.stringify(run.results));
  for (const m of run.results.measurements) {
    mkdirSync(dirname(join(dir, m.samplesFile!)), { recursive: true });
    writeFileSync(join(dir, m.samplesFile!), `${run.samplesOf(m.cell).join("\n")}\n`);
  }
  return dir;
}

/** Ended, not killed; non-zero; the error names the path and why. */
function refused(r: SpawnSyncReturns<string>, path: string): void {
  expect(r.signal, `killed: it hung\n${r.stderr}`).toBeNull();
  expect(r.status, r.stderr).toBe(1);
  expect(r.stderr).toContain(path);
  expect(r.stderr).toContain("pseudo-filesystem");
}

describe("every path the CLI writes is refused at once on a pseudo-filesystem (/proc), naming it", () => {
  it("latlab init /proc/x", () => {
    const r = latlab(["init", "/proc/x"], tempDir("latlab-wp-"));
    refused(r, "/proc/x");
    expect(r.stderr).toContain("cannot use /proc/x as the project folder: /proc is on a pseudo-filesystem (proc");
  });

  it("latlab history add … --history /proc/x/h.duckdb", () => {
    const cwd = tempDir("latlab-wp-");
    const r = latlab(["history", "add", runFolder(cwd), "--history", "/proc/x/h.duckdb"], cwd);
    refused(r, "/proc/x/h.duckdb");
  });

  it("latlab history export --parquet /proc/x", async () => {
    const cwd = tempDir("latlab-wp-");
    const run = fakeRun("r1", (c) => around(100 + c.replica, 10));
    await appendRuns(join(cwd, "history.duckdb"), [historyRecords(run.results, run.samplesOf)]);
    const r = latlab(["history", "export", "--parquet", "/proc/x"], cwd);
    refused(r, "/proc/x");
    expect(r.stderr).toContain("cannot use /proc/x as the Parquet export folder");
  });

  it("latlab run … --history /proc/x/h.duckdb: refused before anything starts, its --out never made", () => {
    const cwd = tempDir("latlab-wp-");
    const out = join(cwd, "out");
    // Against the fake target (tests/unit/cli/fixtures/fakeTargetRun.ts), which brings nothing up:
    // were the history's place not checked first, the run would start and wait there, not measure.
    const r = spawnSync(process.execPath, ["--import", "tsx", FAKE_TARGET_RUN, "run", "ppg-vs-zone", "--target", "fake", "--out", out, "--history", "/proc/x/h.duckdb"], {
      cwd: ROOT,
      encoding: "utf8",
      timeout: 60_000,
      killSignal: "SIGKILL",
      env: { ...process.env, CI: "true" },
    });
    refused(r, "/proc/x/h.duckdb");
    expect(r.stderr).not.toMatch(/variants, \d+ hosts/);
    expect(existsSync(out)).toBe(false);
  });
});
