/**
 * The crash-safe record of a local run: written (atomically) before the run creates anything,
 * so whatever kills the runner — SIGKILL, a crash, a lost machine session — `latlab cleanup`
 * knows what the run made and whether its owner is still alive. Everything a run creates carries
 * its short name (names.ts: namespaces ll-<short>-…, root veths ll<short>-m…, temp folder
 * latlab-<short>-…), so the record names the prefixes, the owner and the temp folder.
 *
 * Where: $LATLAB_LOCAL_RUNS (default /run/latlab/local-runs): /run is cleared at boot, as are the
 * namespaces, veths and processes a record stands for.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";

export const LOCAL_RUNS_ENV = "LATLAB_LOCAL_RUNS";
export const DEFAULT_LOCAL_RUNS_DIR = "/run/latlab/local-runs";

export const localRunsDir = (env: NodeJS.ProcessEnv = process.env) => env[LOCAL_RUNS_ENV] || DEFAULT_LOCAL_RUNS_DIR;

export const RunRecordSchema = z.object({
  runId: z.string(),
  short: z.string().regex(/^[0-9a-f]+$/),
  namespacePrefix: z.string(),
  rootLinkPrefix: z.string(),
  /** The runner process, and its start time (clock ticks since boot, /proc/<pid>/stat field 22): a pid reused by another process is not the owner. */
  pid: z.number().int().positive(),
  pidStartTicks: z.string(),
  createdAt: z.string(),
  /** The run's temp folder (sshd configs, logs, work folders), once made. */
  tempDir: z.string().nullable(),
  /** The run's key folder (private keys), once made. */
  keysDir: z.string().nullable().default(null),
  /** The hosts' endpoints, saved once they are all up (savedEnvironment.ts): `latlab resume` re-attaches to them. */
  environmentFile: z.string().nullable().default(null),
  /** The results folder, for the user's orientation. */
  runDir: z.string().nullable(),
  /**
   * The boot the record was written in (/proc/sys/kernel/random/boot_id): a record of another
   * boot, or of another machine or container sharing this folder, is not this machine's to judge.
   */
  bootId: z.string().nullable().default(null),
  /** Set when the owner's teardown ended (its outcome): from then on the record is cleanup's, whatever the owner does. */
  ended: z.enum(["ok", "failed"]).nullable(),
});
export type RunRecord = z.infer<typeof RunRecordSchema>;

/** A process's start time in clock ticks since boot, or null when it is gone. */
export function processStartTicks(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // comm (field 2) may hold spaces and parentheses: the fields after it follow the last ")".
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

/** This boot's id, or null where the kernel does not say. */
export function currentBootId(): string | null {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim() || null;
  } catch {
    return null;
  }
}

/** Is the record's owner the process that wrote it, still running? */
export const ownerAlive = (r: Pick<RunRecord, "pid" | "pidStartTicks">) => processStartTicks(r.pid) === r.pidStartTicks;

const fileOf = (dir: string, short: string) => join(dir, `${short}.json`);

/** Writes (or replaces) a record: temp file, fsync, rename. */
export function writeRunRecord(record: RunRecord, dir = localRunsDir()): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = fileOf(dir, record.short);
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = openSync(tmp, "w", 0o600);
  try {
    writeSync(fd, `${JSON.stringify(RunRecordSchema.parse(record), null, 2)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
  return file;
}

export function removeRunRecord(short: string, dir = localRunsDir()): void {
  rmSync(fileOf(dir, short), { force: true });
}

/** Every record, and the files that are not readable records (named, never deleted silently). */
export function readRunRecords(dir = localRunsDir()): { records: RunRecord[]; unreadable: { file: string; error: string }[] } {
  const records: RunRecord[] = [];
  const unreadable: { file: string; error: string }[] = [];
  if (!existsSync(dir)) return { records, unreadable };
  for (const name of readdirSync(dir).sort()) {
    if (!name.endsWith(".json")) continue;
    const file = join(dir, name);
    try {
      records.push(RunRecordSchema.parse(JSON.parse(readFileSync(file, "utf8"))));
    } catch (error) {
      unreadable.push({ file, error: (error as Error).message.split("\n")[0]! });
    }
  }
  return { records, unreadable };
}

/** A new record for a run this process is about to bring up. */
export function newRunRecord(runId: string, names: { short: string; namespacePrefix: string; rootLinkPrefix: string }, runDir: string | null): RunRecord {
  const ticks = processStartTicks(process.pid);
  if (ticks === null) throw new Error("local target: cannot read this process's start time from /proc");
  return { runId, short: names.short, namespacePrefix: names.namespacePrefix, rootLinkPrefix: names.rootLinkPrefix, pid: process.pid, pidStartTicks: ticks, createdAt: new Date().toISOString(), tempDir: null, keysDir: null, environmentFile: null, runDir, bootId: currentBootId(), ended: null };
}
