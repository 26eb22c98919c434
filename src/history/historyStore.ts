/**
 * The history store: one DuckDB file (default results/history.duckdb) that every finished run
 * appends to. I/O only; what goes in is historyRecords.ts', what comes out is read into plain
 * rows for the pure code (trend, compareRuns) to work on.
 *
 * Crash safety: a write never touches the file in place. It copies the file, migrates and
 * appends to the copy in one transaction, checkpoints and closes it, fsyncs it and renames it over
 * the original — so the file is always either the old history or the new one, whatever dies
 * when (the SIGKILL test in tests/unit/history/historyStore.test.ts stops a writer just before
 * the rename). A lock file beside it (pid, host) serialises writers on one machine; one left by a
 * process that is gone is taken over. Reads work on a private copy too, so a reader never sees a
 * half-written file and never needs write access to the history.
 */
import { closeSync, copyFileSync, existsSync, fsyncSync, linkSync, mkdtempSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { hostname, tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import type { DuckDBConnection } from "@duckdb/node-api";
import {
  ComparisonRowSchema,
  HISTORY_SCHEMA_VERSION,
  HISTORY_TABLES,
  HostRowSchema,
  MIGRATIONS,
  RunRowSchema,
  SummaryRowSchema,
  VariantRowSchema,
  type ComparisonRow,
  type HistoryRecords,
  type HostRow,
  type RunRow,
  type SummaryRow,
  type VariantRow,
} from "./historySchema.ts";
import { checkWritableFile, makeWritableFileFolder, makeWritableFolder } from "../results/writablePath.ts";

/** Where runs are recorded unless --history or LATLAB_HISTORY says otherwise: beside the runs' folders. */
export const DEFAULT_HISTORY_FILE = "results/history.duckdb";
export const HISTORY_ENV = "LATLAB_HISTORY";

/** Fault injection for the crash-safety test: `kill-before-rename` SIGKILLs the writer with the new copy complete but not yet in place. */
export const HISTORY_FAULT_ENV = "LATLAB_FAULT_HISTORY";

export function historyFile(option?: string): string {
  return resolve(option ?? process.env[HISTORY_ENV] ?? DEFAULT_HISTORY_FILE);
}

export class HistoryError extends Error {}

/**
 * Checks, creating nothing, that the history file can be written where it is asked for (a
 * pseudo-filesystem such as /proc, a read-only or full disk… are refused naming it): `latlab run`
 * asks before it starts, rather than finding out once the run is over.
 */
export async function checkHistoryPlace(file: string, signal?: AbortSignal): Promise<void> {
  await checkWritableFile(file, { what: "the history file", ...(signal ? { signal } : {}) });
}

/** Opens `file` (a private copy); errors name `shownAs`, the history the user knows. */
async function openDatabase(file: string, shownAs: string): Promise<{ connection: DuckDBConnection; close: () => void }> {
  const { DuckDBInstance } = await import("@duckdb/node-api");
  let instance;
  try {
    instance = await DuckDBInstance.create(file);
  } catch (error) {
    throw new HistoryError(`history ${shownAs}: cannot be opened as a DuckDB database (${(error as Error).message.split("\n")[0]!.replaceAll(file, shownAs)})`);
  }
  const connection = await instance.connect();
  // Times are stored as TIMESTAMPTZ and read back as UTC ISO strings, whatever this machine's zone.
  await connection.run("SET TimeZone = 'UTC'");
  return {
    connection,
    close: () => {
      connection.closeSync();
      instance.closeSync();
    },
  };
}

async function tableExists(c: DuckDBConnection, name: string): Promise<boolean> {
  const r = await c.runAndReadAll("SELECT count(*) AS n FROM duckdb_tables() WHERE table_name = $1", [name]);
  return Number(r.getRowObjectsJS()[0]!["n"]) > 0;
}

/** The file's schema version: 0 for an empty (new) database. */
export async function schemaVersion(c: DuckDBConnection): Promise<number> {
  if (!(await tableExists(c, "schema_migrations"))) return (await tableExists(c, "runs")) ? -1 : 0;
  const r = await c.runAndReadAll("SELECT coalesce(max(version), 0) AS v FROM schema_migrations");
  return Number(r.getRowObjectsJS()[0]!["v"]);
}

/**
 * Brings the database to `upTo` (default: this latlab's version), in one transaction. A file
 * from a newer latlab is refused rather than misread.
 */
export async function migrate(c: DuckDBConnection, file: string, upTo = HISTORY_SCHEMA_VERSION): Promise<{ from: number; to: number }> {
  const from = await schemaVersion(c);
  if (from === -1) throw new HistoryError(`history ${file}: has a runs table but no schema_migrations: not a latlab history file`);
  if (from > HISTORY_SCHEMA_VERSION) {
    throw new HistoryError(`history ${file}: schema version ${from} was written by a newer latlab; this one knows up to ${HISTORY_SCHEMA_VERSION}: upgrade latlab to read it`);
  }
  if (from >= upTo) return { from, to: from };
  await c.run("BEGIN TRANSACTION");
  try {
    if (from === 0) await c.run("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, description VARCHAR NOT NULL, applied_at TIMESTAMPTZ NOT NULL)");
    for (const m of MIGRATIONS) {
      if (m.version <= from || m.version > upTo) continue;
      await c.run(m.sql);
      await c.run("INSERT INTO schema_migrations VALUES ($1, $2, now())", [m.version, m.description]);
    }
    await c.run("COMMIT");
  } catch (error) {
    await c.run("ROLLBACK");
    throw new HistoryError(`history ${file}: migrating from schema version ${from} failed: ${(error as Error).message}`);
  }
  return { from, to: upTo };
}

const json = (v: unknown) => JSON.stringify(v);

async function insertRecords(c: DuckDBConnection, r: HistoryRecords): Promise<void> {
  const run = r.run;
  await c.run(
    `INSERT INTO runs (run_id, experiment, target, started_at, finished_at, status, latlab_version, node, kernel, tool_versions, shaping, added_at, git_commit, facts)
     VALUES ($1, $2, $3, CAST($4 AS TIMESTAMPTZ), CAST($5 AS TIMESTAMPTZ), $6, $7, $8, $9, $10, $11, now(), $12, $13)`,
    [run.runId, run.experiment, run.target, run.startedAt, run.finishedAt, run.status, run.latlabVersion, run.node, run.kernel, json(run.toolVersions), run.shaping, run.gitCommit, json(run.facts)],
  );
  await c.run("INSERT INTO run_plans (run_id, plan_hash, plan, event) VALUES ($1, $2, $3, $4)", [run.runId, run.planHash, run.plan === null ? null : json(run.plan), run.event]);
  for (const v of r.variants) await c.run("INSERT INTO variants VALUES ($1, $2, $3, $4)", [v.runId, v.variant, v.baseline, json(v.axes)]);
  for (const h of r.hosts) await c.run("INSERT INTO hosts VALUES ($1, $2, $3, $4, $5, $6, $7)", [h.runId, h.variant, h.host, h.deployment, json(h.requested), json(h.actual), json(h.mismatches)]);
  for (const s of r.summaries) {
    await c.run(
      `INSERT INTO summaries (run_id, variant, measure, tool, pair, level, replica, repetition, metric, unit, n, mean, stddev, min, p50, p90, p95, p99, p999, max, unit_mean, unit_p50, p9999, p99999, measure_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25)`,
      [s.runId, s.variant, s.measure, s.tool, s.pair, s.level, s.replica, s.repetition, s.metric, s.unit, s.n, s.mean, s.stddev, s.min, s.p50, s.p90, s.p95, s.p99, s.p999, s.max, s.unitMean, s.unitP50, s.p9999, s.p99999, s.measureId],
    );
  }
  for (const k of r.comparisons) {
    await c.run(
      `INSERT INTO comparisons (run_id, kind, variant, baseline, pair, baseline_pair, measure, tool, metric, unit, statistic, estimate, ci_low, ci_high, method, inference_unit, units_baseline, units_candidate, p_welch, p_rank)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)`,
      [k.runId, k.kind, k.variant, k.baseline, k.pair, k.baselinePair, k.measure, k.tool, k.metric, k.unit, k.statistic, k.estimate, k.ciLow, k.ciHigh, k.method, k.inferenceUnit, k.unitsBaseline, k.unitsCandidate, k.pWelch, k.pRank],
    );
  }
}

const LOCK_WAIT_MS = 60_000;

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** A lock file whose content cannot be read this long after it was made was cut off by a crash. */
const UNREADABLE_LOCK_STALE_MS = 10_000;

interface LockOwner {
  pid?: number;
  host?: string;
  token?: string;
}

const readLock = (path: string): { owner: LockOwner; text: string } | undefined => {
  try {
    const text = readFileSync(path, "utf8");
    try {
      return { owner: JSON.parse(text) as LockOwner, text };
    } catch {
      return { owner: {}, text };
    }
  } catch {
    return undefined;
  }
};

/**
 * Takes `<file>.lock` (O_EXCL, holding pid, host and a token of its own). A lock whose process on
 * this host is gone, or whose content stayed unreadable for 10 s, is stale: it is taken over
 * atomically — renamed aside, then deleted only if it is still the lock that was judged stale
 * (another waiter may have taken it over and made a live one meanwhile: that one is put back).
 * The release removes the lock only while it is still this writer's.
 */
async function acquireLock(file: string, log: (m: string) => void): Promise<() => void> {
  const lock = `${file}.lock`;
  const token = randomBytes(8).toString("hex");
  const mine = JSON.stringify({ pid: process.pid, host: hostname(), token });
  const deadline = Date.now() + LOCK_WAIT_MS;
  let said = false;
  for (;;) {
    let fd: number | undefined;
    try {
      fd = openSync(lock, "wx", 0o644);
      writeSync(fd, mine);
      closeSync(fd);
      return () => {
        if (readLock(lock)?.text === mine) rmSync(lock, { force: true });
      };
    } catch (error) {
      if (fd !== undefined) {
        // Made but not written (a full disk): an empty lock must not stay behind.
        closeSync(fd);
        rmSync(lock, { force: true });
        throw new HistoryError(`history ${file}: cannot write its lock ${lock}: ${(error as Error).message}`);
      }
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw new HistoryError(`history ${file}: cannot create its lock ${lock}: ${(error as Error).message}`);
    }
    const seen = readLock(lock);
    if (!seen) continue; // released meanwhile
    const { owner, text } = seen;
    const age = (() => {
      try {
        return Date.now() - statSync(lock).mtimeMs;
      } catch {
        return 0;
      }
    })();
    const deadOwner = owner.host === hostname() && typeof owner.pid === "number" && !processAlive(owner.pid);
    const cutOff = owner.pid === undefined && age > UNREADABLE_LOCK_STALE_MS;
    if (deadOwner || cutOff) {
      const aside = `${lock}.stale.${process.pid}.${token}`;
      try {
        renameSync(lock, aside);
      } catch {
        continue; // someone else moved it first
      }
      if (readLock(aside)?.text === text) {
        rmSync(aside, { force: true });
        log(`history: removed a stale lock ${lock} (${deadOwner ? `process ${owner.pid} is gone` : "left unreadable by a crash"})`);
      } else {
        // Not the lock judged stale: a live one made in between. Put it back (unless yet another exists).
        try {
          linkSync(aside, lock);
        } catch {
          // A newer lock is there: the one moved aside belonged to a writer that has finished or will find its lock gone.
        }
        rmSync(aside, { force: true });
      }
      continue;
    }
    if (Date.now() > deadline) {
      throw new HistoryError(`history ${file}: locked by ${lock} (${owner.pid ? `process ${owner.pid} on ${owner.host}` : "unreadable"}) for over ${LOCK_WAIT_MS / 1000} s; if no latlab is writing it, delete the lock`);
    }
    if (!said) {
      log(`history: waiting for ${lock} (another latlab is writing the history)…`);
      said = true;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

function fsyncPath(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * A write-ahead log beside the history means some other DuckDB (the duckdb CLI…) has it open or
 * crashed with changes not yet in the file: copying the file alone would lose them.
 */
function refuseWal(file: string): void {
  if (existsSync(`${file}.wal`)) {
    throw new HistoryError(`history ${file}: has a write-ahead log ${file}.wal: another program has it open, or crashed while writing it; open it once with DuckDB (\`duckdb ${file} 'CHECKPOINT'\`) to fold the log in, then try again`);
  }
}

/**
 * Runs `write` on a private copy of the history (migrated first) inside one transaction, then
 * puts the copy in place atomically. The history file is created, with its folder, if missing.
 */
export async function writeHistory<T>(file: string, write: (c: DuckDBConnection) => Promise<T>, log: (m: string) => void = () => {}): Promise<T> {
  // Through the guard, never mkdir -p: that spins for ever on /proc (see writablePath.ts).
  await makeWritableFileFolder(file, { what: "the history file" });
  refuseWal(file);
  const release = await acquireLock(file, log);
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
  try {
    for (const leftover of removeLeftoverCopies(file)) log(`history: removed ${leftover}, left by a writer that died before finishing (the history itself was not changed)`);
    rmSync(tmp, { force: true });
    rmSync(`${tmp}.wal`, { force: true });
    if (existsSync(file)) copyFileSync(file, tmp);
    const db = await openDatabase(tmp, file);
    let result: T;
    try {
      await migrate(db.connection, file);
      await db.connection.run("BEGIN TRANSACTION");
      try {
        result = await write(db.connection);
        await db.connection.run("COMMIT");
      } catch (error) {
        await db.connection.run("ROLLBACK");
        throw error;
      }
      await db.connection.run("CHECKPOINT");
    } finally {
      db.close();
    }
    if (existsSync(`${tmp}.wal`)) throw new HistoryError(`history ${file}: the new copy ${tmp} still has a write-ahead log after its checkpoint; the history was not changed`);
    fsyncPath(tmp);
    if (process.env[HISTORY_FAULT_ENV] === "kill-before-rename") process.kill(process.pid, "SIGKILL");
    renameSync(tmp, file);
    fsyncPath(dirname(file));
    return result;
  } finally {
    rmSync(tmp, { force: true });
    rmSync(`${tmp}.wal`, { force: true });
    release();
  }
}

/**
 * Runs `read` on a private, migrated copy of the history; an empty database when the file does
 * not exist. The original is only read (copied), never opened by DuckDB.
 */
export async function readHistory<T>(file: string, read: (c: DuckDBConnection) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "latlab-history-"));
  try {
    const copy = join(dir, "history.duckdb");
    refuseWal(file);
    if (existsSync(file)) {
      if (!statSync(file).isFile()) throw new HistoryError(`history ${file}: is not a file`);
      copyFileSync(file, copy);
    }
    const db = await openDatabase(copy, file);
    try {
      await migrate(db.connection, file);
      return await read(db.connection);
    } finally {
      db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Appends runs not yet in the history (by run id): adding a run twice changes nothing — unless
 * `replace` (a resumed run: the same run, now with more cells), which swaps its rows in one go.
 */
export async function appendRuns(file: string, records: readonly HistoryRecords[], log: (m: string) => void = () => {}, options: { replace?: boolean } = {}): Promise<{ added: string[]; present: string[] }> {
  return writeHistory(
    file,
    async (c) => {
      const added: string[] = [];
      const present: string[] = [];
      for (const r of records) {
        const existing = await c.runAndReadAll("SELECT count(*) AS n FROM runs WHERE run_id = $1", [r.run.runId]);
        const there = Number(existing.getRowObjectsJS()[0]!["n"]) > 0 || added.includes(r.run.runId);
        if (there && options.replace) {
          for (const table of HISTORY_TABLES) await c.run(`DELETE FROM ${table} WHERE run_id = $1`, [r.run.runId]);
        } else if (there) {
          present.push(r.run.runId);
          continue;
        }
        await insertRecords(c, r);
        added.push(r.run.runId);
      }
      return { added, present };
    },
    log,
  );
}

/** The history as plain rows, for one experiment or all. */
export interface HistoryData {
  runs: RunRow[];
  variants: VariantRow[];
  hosts: HostRow[];
  summaries: SummaryRow[];
  comparisons: ComparisonRow[];
}

const ISO = (column: string) => `strftime(${column}, '%Y-%m-%dT%H:%M:%S.%gZ') AS ${column}`;

async function rows(c: DuckDBConnection, sql: string, values: string[]): Promise<Record<string, unknown>[]> {
  const r = await c.runAndReadAll(sql, values);
  return r.getRowObjectsJS().map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === "bigint" ? Number(v) : v])));
}

const camel = (row: Record<string, unknown>) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k.replace(/_([a-z0-9])/g, (_, ch: string) => ch.toUpperCase()), v]));
const parsed = (row: Record<string, unknown>, ...jsonColumns: string[]) => {
  const out = camel(row);
  for (const k of jsonColumns) out[k] = typeof out[k] === "string" ? JSON.parse(out[k] as string) : (out[k] ?? {});
  return out;
};

/** Reads every row of the runs of `experiment` (all runs when undefined), runs oldest first. */
export async function loadHistory(file: string, experiment?: string): Promise<HistoryData> {
  return readHistory(file, async (c) => {
    const where = experiment === undefined ? "" : "WHERE experiment = $1";
    const args = experiment === undefined ? [] : [experiment];
    const runs = (
      await rows(
        c,
        `SELECT run_id, experiment, target, ${ISO("started_at")}, ${ISO("finished_at")}, status, latlab_version, git_commit, node, kernel, tool_versions, shaping, facts, plan_hash, plan, event
         FROM runs LEFT JOIN run_plans USING (run_id) ${where} ORDER BY started_at, run_id`,
        args,
      )
    ).map((r) => {
      const row = parsed(r, "toolVersions", "facts");
      // null stays null: a run recorded before version 4 has no plan content.
      row["plan"] = typeof row["plan"] === "string" ? JSON.parse(row["plan"]) : null;
      return RunRowSchema.parse(row);
    });
    const inRuns = `WHERE run_id IN (SELECT run_id FROM runs ${where})`;
    const variants = (await rows(c, `SELECT * FROM variants ${inRuns}`, args)).map((r) => VariantRowSchema.parse(parsed(r, "axes")));
    const hosts = (await rows(c, `SELECT * FROM hosts ${inRuns}`, args)).map((r) => HostRowSchema.parse(parsed(r, "requested", "actual", "mismatches")));
    const summaries = (await rows(c, `SELECT * FROM summaries ${inRuns} ORDER BY run_id, variant, measure, pair, level, replica, repetition`, args)).map((r) => SummaryRowSchema.parse(camel(r)));
    const comparisons = (await rows(c, `SELECT * FROM comparisons ${inRuns}`, args)).map((r) => ComparisonRowSchema.parse(camel(r)));
    return { runs, variants, hosts, summaries, comparisons };
  });
}

/** Writes each table as `<dir>/<table>.parquet`; returns the files. */
export async function exportParquet(file: string, dir: string): Promise<string[]> {
  if (!existsSync(file)) throw new HistoryError(`history ${file}: does not exist (no run has been recorded there yet)`);
  await makeWritableFolder(dir, { what: "the Parquet export folder" });
  return readHistory(file, async (c) => {
    const written: string[] = [];
    for (const table of [...HISTORY_TABLES, "schema_migrations"]) {
      const out = resolve(dir, `${table}.parquet`);
      const tmp = `${out}.tmp`;
      // A path is a literal in COPY, not a parameter: quotes are doubled.
      await c.run(`COPY (SELECT * FROM ${table}) TO '${tmp.replaceAll("'", "''")}' (FORMAT parquet)`);
      renameSync(tmp, out);
      written.push(out);
    }
    return written;
  });
}

/** Removes a leftover private copy (a writer killed before its rename); the history itself is never touched. */
export function removeLeftoverCopies(file: string): string[] {
  const dir = dirname(file);
  const prefix = `.${basename(file)}.`;
  const removed: string[] = [];
  if (!existsSync(dir)) return removed;
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(prefix) || !/\.\d+\.tmp(\.wal)?$/.test(name)) continue;
    const pid = Number(/\.(\d+)\.tmp/.exec(name)![1]);
    if (processAlive(pid)) continue;
    unlinkSync(join(dir, name));
    removed.push(join(dir, name));
  }
  return removed;
}
