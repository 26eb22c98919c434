import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { describe, expect, it } from "vitest";
import { historyRecords } from "../../../src/history/historyRecords.ts";
import { HISTORY_SCHEMA_VERSION } from "../../../src/history/historySchema.ts";
import { appendRuns, exportParquet, HISTORY_FAULT_ENV, loadHistory, migrate, writeHistory } from "../../../src/history/historyStore.ts";
import { tempDirs } from "../../tempDirs.ts";
import { around, fakeRun } from "./fakeRun.ts";

const tempDir = tempDirs();
const ROOT = resolve(import.meta.dirname, "../../..");

const recordsOf = (runId: string, centre = 100, startedAt = "2026-11-01T10:00:00.000Z") => {
  const run = fakeRun(runId, (c) => around(centre + (c.variant === "accelnet=true" ? 20 : 0), 30), { startedAt, facts: { "git.commit": `commit-${runId}` } });
  return historyRecords(run.results, run.samplesOf);
};

async function query(file: string, sql: string): Promise<Record<string, unknown>[]> {
  const instance = await DuckDBInstance.create(file, { access_mode: "READ_ONLY" });
  const c = await instance.connect();
  try {
    return (await c.runAndReadAll(sql)).getRowObjectsJS();
  } finally {
    c.closeSync();
    instance.closeSync();
  }
}

describe("history store", () => {
  it("appends runs, reads them back as they went in, and adding a run twice changes nothing", async () => {
    const file = join(tempDir("latlab-hist-"), "sub", "history.duckdb");
    const a = recordsOf("a");
    const b = recordsOf("b", 110, "2026-11-08T10:00:00.000Z");
    expect(await appendRuns(file, [b, a])).toEqual({ added: ["b", "a"], present: [] });
    expect(await appendRuns(file, [a])).toEqual({ added: [], present: ["a"] });
    const data = await loadHistory(file);
    expect(data.runs.map((r) => r.runId)).toEqual(["a", "b"]); // oldest first
    expect(data.runs[0]).toEqual(a.run);
    expect(data.summaries.filter((s) => s.runId === "a")).toEqual(expect.arrayContaining(a.summaries));
    expect(data.summaries).toHaveLength(a.summaries.length + b.summaries.length);
    expect(data.comparisons.filter((k) => k.runId === "b")).toEqual(b.comparisons);
    expect(data.variants.filter((v) => v.runId === "a")).toEqual(a.variants);
    expect((await loadHistory(file, "other")).runs).toEqual([]);
    // No lock, no private copy left beside it.
    expect(readdirSync(join(file, ".."))).toEqual(["history.duckdb"]);
  });

  it("an error in the middle of a write leaves the history as it was", async () => {
    const file = join(tempDir("latlab-hist-"), "history.duckdb");
    await appendRuns(file, [recordsOf("a")]);
    const before = readFileSync(file);
    await expect(
      writeHistory(file, async (c) => {
        await c.run("INSERT INTO runs (run_id, experiment, target, started_at, finished_at, status, latlab_version, added_at) VALUES ('x', 'e', 't', now(), now(), 'complete', '0', now())");
        throw new Error("disk on fire");
      }),
    ).rejects.toThrow("disk on fire");
    expect(readFileSync(file).equals(before)).toBe(true);
    expect((await loadHistory(file)).runs.map((r) => r.runId)).toEqual(["a"]);
    expect(readdirSync(join(file, ".."))).toEqual(["history.duckdb"]);
  });

  it("a writer SIGKILLed with its new copy complete but not in place leaves the old history whole; the next write clears its copy and lock", async () => {
    const dir = tempDir("latlab-hist-");
    const file = join(dir, "history.duckdb");
    await appendRuns(file, [recordsOf("a")]);
    const before = readFileSync(file);
    const folder = tempDir("latlab-hist-run-");
    const run = fakeRun("killed", () => around(100, 10));
    writeFileSync(join(folder, "results.json"), JSON.stringify(run.results));
    const child = spawnSync(process.execPath, [join(ROOT, "bin/latlab.js"), "history", "add", folder, "--history", file], { encoding: "utf8", env: { ...process.env, [HISTORY_FAULT_ENV]: "kill-before-rename" } });
    expect(child.signal).toBe("SIGKILL");
    expect(readFileSync(file).equals(before)).toBe(true);
    const leftovers = readdirSync(dir).filter((f) => f !== "history.duckdb");
    expect(leftovers.some((f) => /^\.history\.duckdb\.\d+\.tmp$/.test(f))).toBe(true);
    expect(leftovers).toContain("history.duckdb.lock");
    const said: string[] = [];
    await appendRuns(file, [recordsOf("b")], (m) => said.push(m));
    expect(said.join("\n")).toMatch(/removed a stale lock/);
    expect(said.join("\n")).toMatch(/left by a writer that died/);
    expect((await loadHistory(file)).runs.map((r) => r.runId)).toEqual(["a", "b"]);
    expect(readdirSync(dir)).toEqual(["history.duckdb"]);
  });

  it("migrates a history written with schema version 1: its runs keep their figures and gain empty provenance", async () => {
    const file = join(tempDir("latlab-hist-"), "history.duckdb");
    // A version-1 file, made by version 1's own step, with a run as version 1 stored it.
    const instance = await DuckDBInstance.create(file);
    const c = await instance.connect();
    expect(await migrate(c, file, 1)).toEqual({ from: 0, to: 1 });
    await c.run(`INSERT INTO runs VALUES ('old', 'hist', 'local', '2026-10-01T00:00:00Z', '2026-10-01T00:01:00Z', 'complete', '0.0.9', 'v22', 'k', '{"ping":"1"}', 'shaping: old', now())`);
    await c.run(`INSERT INTO summaries VALUES ('old', 'accelnet=false', 0, 'ping', 'client->server', 'all', NULL, NULL, 'rtt', 'us', 30, 101.5, 0.4, 100, 101, 102, 102.5, 103, 103, 103, NULL, NULL)`);
    c.closeSync();
    instance.closeSync();

    const data = await loadHistory(file);
    expect(data.runs).toEqual([
      { runId: "old", experiment: "hist", target: "local", startedAt: "2026-10-01T00:00:00.000Z", finishedAt: "2026-10-01T00:01:00.000Z", status: "complete", latlabVersion: "0.0.9", gitCommit: null, node: "v22", kernel: "k", toolVersions: { ping: "1" }, shaping: "shaping: old", facts: {}, planHash: null, plan: null, event: null },
    ]);
    expect(data.summaries[0]).toMatchObject({ runId: "old", level: "all", mean: 101.5, p95: 102.5 });
    // Reading migrates a private copy; the file itself is migrated by the next write.
    expect((await query(file, "SELECT max(version) AS v FROM schema_migrations"))[0]!["v"]).toBe(1);
    await appendRuns(file, [recordsOf("new")]);
    expect((await query(file, "SELECT max(version) AS v FROM schema_migrations"))[0]!["v"]).toBe(HISTORY_SCHEMA_VERSION);
    expect((await loadHistory(file)).runs.map((r) => [r.runId, r.gitCommit])).toEqual([["old", null], ["new", "commit-new"]]);
  });

  it("migrates a history written with schema version 2: its summaries keep their figures and gain empty p99.99 / p99.999", async () => {
    const file = join(tempDir("latlab-hist-"), "history.duckdb");
    // A version-2 file, made by steps 1 and 2, with a run of 20 000 samples as version 2 stored it.
    const instance = await DuckDBInstance.create(file);
    const c = await instance.connect();
    expect(await migrate(c, file, 2)).toEqual({ from: 0, to: 2 });
    await c.run(`INSERT INTO runs VALUES ('old', 'hist', 'local', '2026-10-01T00:00:00Z', '2026-10-01T00:01:00Z', 'complete', '0.0.9', 'v22', 'k', '{"ping":"1"}', 'shaping: old', now(), 'abc123', '{"git.commit":"abc123"}')`);
    await c.run(`INSERT INTO summaries VALUES ('old', 'accelnet=false', 0, 'ping', 'client->server', 'all', NULL, NULL, 'rtt', 'us', 20000, 101.5, 0.4, 100, 101, 102, 102.5, 103, 104, 110, NULL, NULL)`);
    c.closeSync();
    instance.closeSync();

    const data = await loadHistory(file);
    expect(data.runs.map((r) => [r.runId, r.gitCommit])).toEqual([["old", "abc123"]]);
    expect(data.summaries).toEqual([
      { runId: "old", variant: "accelnet=false", measure: 0, tool: "ping", pair: "client->server", level: "all", replica: null, repetition: null, metric: "rtt", unit: "us", n: 20000, mean: 101.5, stddev: 0.4, min: 100, p50: 101, p90: 102, p95: 102.5, p99: 103, p999: 104, p9999: null, p99999: null, max: 110, unitMean: null, unitP50: null, measureId: null },
    ]);
    expect((await query(file, "SELECT max(version) AS v FROM schema_migrations"))[0]!["v"]).toBe(2);

    // The next write migrates the file; a run of 12 000 samples a cell stores its p99.99, and no p99.999.
    const big = fakeRun("new", (cell) => around(cell.variant === "accelnet=true" ? 120 : 100, 12_000));
    await appendRuns(file, [historyRecords(big.results, big.samplesOf)]);
    expect(await query(file, "SELECT version, description FROM schema_migrations WHERE version = 3")).toEqual([{ version: 3, description: "tail percentiles p99.99 and p99.999 of the summaries" }]);
    expect(HISTORY_SCHEMA_VERSION).toBe(4);
    expect(await query(file, "SELECT column_name, data_type, is_nullable FROM information_schema.columns WHERE table_name = 'summaries' AND column_name IN ('p9999', 'p99999') ORDER BY column_name")).toEqual([
      { column_name: "p9999", data_type: "DOUBLE", is_nullable: "YES" },
      { column_name: "p99999", data_type: "DOUBLE", is_nullable: "YES" },
    ]);
    const after = await loadHistory(file);
    expect(after.summaries.find((s) => s.runId === "old")).toMatchObject({ n: 20000, p999: 104, p9999: null, p99999: null });
    const fresh = after.summaries.filter((s) => s.runId === "new");
    expect(fresh.length).toBeGreaterThan(0);
    for (const s of fresh) {
      expect(s.n).toBe(12_000);
      expect(s.p9999).toBeCloseTo(s.variant === "accelnet=true" ? 121.2 : 101.2, 1);
      expect(s.p99999).toBeNull();
    }
  });

  it("migrates a history written with schema version 3: old runs keep their figures, gain the event GitHub recorded, and no plan or measure identity", async () => {
    const file = join(tempDir("latlab-hist-"), "history.duckdb");
    // A version-3 file, made by steps 1 to 3, with a scheduled run and a local one as version 3 stored them.
    const instance = await DuckDBInstance.create(file);
    const c = await instance.connect();
    expect(await migrate(c, file, 3)).toEqual({ from: 0, to: 3 });
    await c.run(`INSERT INTO runs VALUES ('ci', 'hist', 'local', '2026-10-01T00:00:00Z', '2026-10-01T00:01:00Z', 'complete', '0.0.9', 'v22', 'k', '{}', 'shaping: old', now(), 'abc', '{"github.event":"schedule","git.commit":"abc"}')`);
    await c.run(`INSERT INTO runs VALUES ('mine', 'hist', 'local', '2026-10-02T00:00:00Z', '2026-10-02T00:01:00Z', 'complete', '0.0.9', 'v22', 'k', '{}', 'shaping: old', now(), 'abc', '{"git.commit":"abc"}')`);
    await c.run(`INSERT INTO summaries VALUES ('ci', 'accelnet=false', 0, 'ping', 'client->server', 'all', NULL, NULL, 'rtt', 'us', 30, 101.5, 0.4, 100, 101, 102, 102.5, 103, 103, 103, NULL, NULL, NULL, NULL)`);
    c.closeSync();
    instance.closeSync();

    await appendRuns(file, [recordsOf("new", 100, "2026-11-01T10:00:00.000Z")]);
    expect(await query(file, "SELECT version, description FROM schema_migrations WHERE version = 4")).toEqual([
      { version: 4, description: "comparable runs: each run's plan hash and content and its event (run_plans), the measure identity of the summaries" },
    ]);
    const data = await loadHistory(file);
    expect(data.runs.map((r) => [r.runId, r.event, r.planHash, r.plan === null])).toEqual([
      ["ci", "schedule", null, true],
      ["mine", null, null, true],
      ["new", null, recordsOf("new").run.planHash, false],
    ]);
    expect(data.runs[2]!.plan).toEqual(recordsOf("new").run.plan);
    expect(data.summaries.find((s) => s.runId === "ci")).toMatchObject({ mean: 101.5, measureId: null });
    const fresh = data.summaries.filter((s) => s.runId === "new");
    expect(fresh.length).toBeGreaterThan(0);
    expect(fresh.map((s) => s.measureId)).toEqual(recordsOf("new").summaries.map((s) => s.measureId));
    expect(fresh[0]!.measureId).toMatch(/^[0-9a-f]{64}$/);
  });

  it("refuses a history from a newer latlab, and a file that is not a DuckDB database, naming the file", async () => {
    const dir = tempDir("latlab-hist-");
    const newer = join(dir, "newer.duckdb");
    await appendRuns(newer, [recordsOf("a")]);
    const instance = await DuckDBInstance.create(newer);
    const c = await instance.connect();
    await c.run(`INSERT INTO schema_migrations VALUES (${HISTORY_SCHEMA_VERSION + 1}, 'future', now())`);
    c.closeSync();
    instance.closeSync();
    await expect(loadHistory(newer)).rejects.toThrow(new RegExp(`newer\\.duckdb: schema version ${HISTORY_SCHEMA_VERSION + 1} was written by a newer latlab`));
    const text = join(dir, "notes.duckdb");
    writeFileSync(text, "just some text\n");
    await expect(appendRuns(text, [recordsOf("b")])).rejects.toThrow(/notes\.duckdb: cannot be opened as a DuckDB database/);
    expect(readFileSync(text, "utf8")).toBe("just some text\n");
  });

  it("takes over a lock left empty by a crash once it is 10 s old, waits for a live one, and refuses a history with a write-ahead log beside it", async () => {
    const dir = tempDir("latlab-hist-");
    const file = join(dir, "history.duckdb");
    await appendRuns(file, [recordsOf("a")]);
    // Made by a writer killed between creating and writing it: empty, 20 s old.
    writeFileSync(`${file}.lock`, "");
    utimesSync(`${file}.lock`, new Date(Date.now() - 20_000), new Date(Date.now() - 20_000));
    const said: string[] = [];
    await appendRuns(file, [recordsOf("b")], (m) => said.push(m));
    expect(said.join("\n")).toMatch(/removed a stale lock .* \(left unreadable by a crash\)/);
    expect(readdirSync(dir)).toEqual(["history.duckdb"]);
    // A live writer's lock (this process: alive) is waited for, never removed.
    writeFileSync(`${file}.lock`, JSON.stringify({ pid: process.pid, host: hostname(), token: "x" }));
    const waiting = appendRuns(file, [recordsOf("c")], (m) => said.push(m));
    while (!said.some((m) => /waiting for .*history\.duckdb\.lock/.test(m))) await new Promise((r) => setTimeout(r, 20));
    expect(existsSync(`${file}.lock`)).toBe(true);
    rmSync(`${file}.lock`);
    await waiting;
    expect((await loadHistory(file)).runs.map((r) => r.runId)).toEqual(["a", "b", "c"]);
    writeFileSync(`${file}.wal`, "");
    const before = readFileSync(file);
    await expect(appendRuns(file, [recordsOf("d")])).rejects.toThrow(/history\.duckdb: has a write-ahead log .*history\.duckdb\.wal/);
    await expect(loadHistory(file)).rejects.toThrow(/write-ahead log/);
    expect(readFileSync(file).equals(before)).toBe(true);
  });

  it("exports every table as Parquet that DuckDB reads back row for row", async () => {
    const dir = tempDir("latlab-hist-");
    const file = join(dir, "history.duckdb");
    const a = recordsOf("a");
    await appendRuns(file, [a, recordsOf("b")]);
    const written = await exportParquet(file, join(dir, "parquet"));
    expect(written.map((f) => f.split("/").pop())).toEqual(["runs.parquet", "run_plans.parquet", "variants.parquet", "hosts.parquet", "summaries.parquet", "comparisons.parquet", "schema_migrations.parquet"]);
    const instance = await DuckDBInstance.create(":memory:");
    const c = await instance.connect();
    const rows = async (sql: string) => (await c.runAndReadAll(sql)).getRowObjectsJS();
    expect(await rows(`SELECT run_id, git_commit FROM read_parquet('${join(dir, "parquet", "runs.parquet")}') ORDER BY run_id`)).toEqual([
      { run_id: "a", git_commit: "commit-a" },
      { run_id: "b", git_commit: "commit-b" },
    ]);
    const summaries = await rows(`SELECT count(*) AS n, sum(n) AS samples FROM read_parquet('${join(dir, "parquet", "summaries.parquet")}')`);
    expect(Number(summaries[0]!["n"])).toBe(2 * a.summaries.length);
    c.closeSync();
    instance.closeSync();
    await expect(exportParquet(join(dir, "missing.duckdb"), join(dir, "p2"))).rejects.toThrow(/missing\.duckdb: does not exist/);
    expect(existsSync(join(dir, "p2"))).toBe(false);
  });
});
