/**
 * A run's results folder (`--out`), made ready before anything is brought up and held for the
 * whole run: created if missing, locked against a second run, refused when it holds other files
 * (unless --force, which removes latlab's own files there and nothing else), and refused at once
 * — with the path and the reason in words — when it cannot hold files at all.
 *
 * Folders are created one level at a time (never `mkdir -p`: Node's recursive mkdir loops for
 * ever on /proc, where mkdir answers ENOENT under a folder that exists), and every step that
 * could hang on a network file system gives way to the run's abort signal.
 */
import { closeSync, constants, linkSync, openSync, readFileSync, rmSync, rmdirSync, statSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import { access, lstat, mkdir, readdir, rm, stat, statfs } from "node:fs/promises";
import { hostname } from "node:os";
import { dirname, join, resolve } from "node:path";
import { describeFsError, errnoCode } from "./fsErrors.ts";

/** The lock file a run keeps in its folder. */
export const LOCK_FILE = ".latlab.lock";
const TAKEOVER_FILE = `${LOCK_FILE}.takeover`;

/**
 * latlab's own files in a run folder: what --force removes, and nothing else. results.json's own
 * temporary and invalid copies count as results.json.
 */
export const OWN_FILES = ["results.json", "results.json.tmp", "results.invalid.json", "results.invalid.errors.txt", "plan.json"] as const;
export const OWN_FOLDERS = ["raw", "samples", ".resume"] as const;
/** An Azure run's pointer to its state (src/targets/azure/lifecycle/runState.ts, POINTER_FILE): never overwritten. */
export const AZURE_POINTER_FILE = "azure-state.json";

/**
 * File systems that hold no files of ours: the kernel's views of itself. Keyed by statfs's f_type
 * (linux/magic.h).
 */
const PSEUDO_FILE_SYSTEMS: Record<number, string> = {
  0x9fa0: "a proc file system (the kernel's view of processes)",
  0x62656572: "a sysfs file system (the kernel's view of devices)",
  0x1cd1: "a devpts file system (terminals)",
  0x27e0eb: "a cgroup file system",
  0x63677270: "a cgroup2 file system",
  0x64626720: "a debugfs file system",
  0x74726163: "a tracefs file system",
  0x73636673: "a securityfs file system",
  0xcafe4a11: "a bpf file system",
  0x6165676c: "a pstore file system",
  0x62656570: "a configfs file system",
  0xde5e81e4: "an efivarfs file system",
  0xf97cff8c: "a selinuxfs file system",
  0x65735543: "a fusectl file system",
  0x42494e4d: "a binfmt_misc file system",
  0x6e736673: "an nsfs file system",
  0x19800202: "an mqueue file system",
};

/** The folder cannot be used: `message` names it and says why. Nothing was left behind. */
export class OutputFolderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "OutputFolderError";
  }
}

export interface OutputFolder {
  /** The folder, absolute. */
  dir: string;
  lockFile: string;
  /** What preparing did that the user should know (a stale lock taken over, files removed by --force). */
  notes: string[];
  /** Removes the lock (if still ours) and the folders preparing created, if they stayed empty. Safe to call twice. */
  release(): void;
}

export interface PrepareOptions {
  runId: string;
  /** Use a folder that is not empty, removing latlab's own files from it first. */
  force?: boolean;
  /** Ctrl-C / SIGTERM: preparing stops at its next step (or while waiting on a file system). */
  signal?: AbortSignal;
  /** Told what preparing did (also kept in `notes`). */
  log?: (message: string) => void;
}

/** What a lock file holds. */
export interface LockHolder {
  pid: number;
  host: string;
  runId: string;
  startedAt: string;
  /** The process's start time (/proc/<pid>/stat, field 22): a reused pid is not the holder. */
  pidStart?: string;
}

const cannotUse = (dir: string, why: string) => new OutputFolderError(`cannot use ${dir} as the results folder: ${why}`);

/**
 * Makes `path` ready to hold a run's files and locks it; see the module comment. Throws
 * OutputFolderError (or, when the signal aborted, an error saying so) having changed nothing.
 */
export async function prepareOutputFolder(path: string, options: PrepareOptions): Promise<OutputFolder> {
  const dir = resolve(path);
  const notes: string[] = [];
  const note = (m: string) => {
    notes.push(m);
    options.log?.(m);
  };
  const { signal } = options;
  const step = <T>(work: Promise<T>): Promise<T> => abortable(work, dir, signal);

  const { existing, missing } = await step(inspect(dir));
  await step(checkFileSystem(dir, existing));
  const created: string[] = [];
  const removeCreated = () => {
    for (const d of [...created].reverse()) {
      try {
        rmdirSync(d);
      } catch {
        break; // not empty (or gone): what is in it is the run's
      }
    }
  };
  try {
    for (const d of missing) {
      await step(makeFolder(dir, d));
      created.push(d);
    }
    if (signal?.aborted) throw interrupted(dir);
    const lock = takeLock(dir, options.runId, note);
    try {
      if (signal?.aborted) throw interrupted(dir);
      await step(checkContents(dir, Boolean(options.force), note));
    } catch (error) {
      lock.release();
      throw error;
    }
    const onExit = () => lock.release();
    // A crash (an uncaught error) still removes the lock; a kill -9 leaves it, and the next run takes it over.
    process.once("exit", onExit);
    let released = false;
    return {
      dir,
      lockFile: lock.file,
      notes,
      release() {
        if (released) return;
        released = true;
        process.off("exit", onExit);
        lock.release();
        removeCreated();
      },
    };
  } catch (error) {
    removeCreated();
    throw error;
  }
}

const interrupted = (dir: string) => new Error(`interrupted while preparing the results folder ${dir}; nothing was started`);

/** `work`, or a rejection as soon as the signal aborts (a hung network file system must not keep Ctrl-C waiting). */
function abortable<T>(work: Promise<T>, dir: string, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(interrupted(dir));
  }
  return new Promise<T>((resolvePromise, reject) => {
    const onAbort = () => reject(interrupted(dir));
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolvePromise(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

/**
 * The nearest part of `dir` that exists (a folder) and the folders below it still to create,
 * outermost first. A file in the way, or a part latlab may not look into, is refused here.
 */
async function inspect(dir: string): Promise<{ existing: string; missing: string[] }> {
  const missing: string[] = [];
  for (let current = dir; ; current = dirname(current)) {
    try {
      const found = await stat(current);
      if (!found.isDirectory()) throw cannotUse(dir, current === dir ? "it is a file, not a folder" : `${current} is a file, not a folder`);
      return { existing: current, missing };
    } catch (error) {
      if (error instanceof OutputFolderError) throw error;
      const code = errnoCode(error);
      // ENOTDIR: a file further up; the walk up finds and names it.
      if ((code === "ENOENT" || code === "ENOTDIR") && dirname(current) !== current) {
        if ((await lstat(current).catch(() => undefined))?.isSymbolicLink()) throw cannotUse(dir, `${current} is a symbolic link to something that does not exist`);
        missing.unshift(current);
        continue;
      }
      throw cannotUse(dir, code === "EACCES" ? `cannot look into ${dirname(current)}: ${describeFsError(error)}` : `${current}: ${describeFsError(error)}`);
    }
  }
}

/** Refuses a folder on a file system that cannot hold our files: the kernel's own, read-only, not ours to write, full. */
async function checkFileSystem(dir: string, existing: string): Promise<void> {
  const fs = await statfs(existing).catch((error: unknown) => {
    throw cannotUse(dir, `${existing}: ${describeFsError(error)}`);
  });
  const pseudo = PSEUDO_FILE_SYSTEMS[fs.type];
  if (pseudo) throw cannotUse(dir, `${existing} is on ${pseudo}, which cannot hold files; choose a folder on a disk`);
  try {
    await access(existing, constants.W_OK | constants.X_OK);
  } catch (error) {
    const code = errnoCode(error);
    if (code === "EROFS") throw cannotUse(dir, `${existing} is on a read-only file system`);
    if (code === "EACCES" || code === "EPERM") throw cannotUse(dir, `cannot write in ${existing}: ${describeFsError(error)}`);
    throw cannotUse(dir, `${existing}: ${describeFsError(error)}`);
  }
  // root may use the blocks reserved for it; others only what is available to them.
  const free = process.getuid?.() === 0 ? fs.bfree : fs.bavail;
  if (free === 0) throw cannotUse(dir, `no space left on the device holding ${existing}`);
  if (fs.files > 0 && fs.ffree === 0) throw cannotUse(dir, `no free inodes left on the device holding ${existing} (it cannot hold one more file)`);
}

/** One folder, not recursive (see the module comment); one that appeared meanwhile is fine. */
async function makeFolder(dir: string, folder: string): Promise<void> {
  try {
    await mkdir(folder);
  } catch (error) {
    const code = errnoCode(error);
    if (code === "EEXIST" && (await stat(folder).catch(() => undefined))?.isDirectory()) return;
    // The reason is the file system's, not the path's: ENOENT under a folder that exists means
    // the file system refuses new folders (as /proc does).
    const why = code === "ENOENT" ? `the file system under ${dirname(folder)} does not let folders be created there` : describeFsError(error);
    throw cannotUse(dir, `cannot create ${folder}: ${why}`);
  }
}

function hostPidStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after "(comm)" start at field 3; the start time is field 22.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

/** Whether the lock's process still runs on this host (a pid reused by another process does not count). */
function holderAlive(holder: LockHolder): boolean {
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if (errnoCode(error) === "ESRCH") return false;
    // EPERM: it exists, under another user.
  }
  const start = hostPidStart(holder.pid);
  return !(holder.pidStart && start && start !== holder.pidStart);
}

function readHolder(file: string): LockHolder | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as Partial<LockHolder>;
    if (typeof parsed.pid !== "number" || typeof parsed.host !== "string") return undefined;
    return { pid: parsed.pid, host: parsed.host, runId: String(parsed.runId ?? "?"), startedAt: String(parsed.startedAt ?? "?"), ...(parsed.pidStart ? { pidStart: String(parsed.pidStart) } : {}) };
  } catch {
    return undefined;
  }
}

const sameHolder = (a: LockHolder | undefined, b: LockHolder) => a !== undefined && a.pid === b.pid && a.host === b.host && a.runId === b.runId && a.startedAt === b.startedAt;

/** Creates `file` with O_EXCL holding `text`; false when it exists. A file that could not be written whole is removed. */
/**
 * Creates `file` holding `text` only if it does not exist, all at once: the text is written to a
 * private file first and linked into place, so a kill can never leave an empty lock behind.
 */
function createExclusive(file: string, text: string): boolean {
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(tmp, text, { mode: 0o644, flag: "wx" });
  try {
    linkSync(tmp, file);
    return true;
  } catch (error) {
    if (errnoCode(error) === "EEXIST") return false;
    throw error;
  } finally {
    rmSync(tmp, { force: true });
  }
}

/** The lock of an existing run folder (`latlab resume` works in a folder that is not empty by design). */
export function lockRunFolder(dir: string, runId: string, note: (m: string) => void = () => {}): { file: string; release(): void } {
  return takeLock(resolve(dir), runId, note);
}

/**
 * Takes the folder's lock: one latlab run per folder. A lock whose process is gone (on this
 * host) is taken over, saying so; a live one, or one from another host, is refused naming it.
 */
function takeLock(dir: string, runId: string, note: (m: string) => void): { file: string; release(): void } {
  const file = join(dir, LOCK_FILE);
  const host = hostname();
  const me: LockHolder = { pid: process.pid, host, runId, startedAt: new Date().toISOString(), ...(hostPidStart(process.pid) ? { pidStart: hostPidStart(process.pid)! } : {}) };
  const release = () => {
    try {
      if (sameHolder(readHolder(file), me)) unlinkSync(file);
    } catch {
      // Gone already, or the folder with it: nothing to release.
    }
  };
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      if (createExclusive(file, `${JSON.stringify(me)}\n`)) return { file, release };
    } catch (error) {
      throw cannotUse(dir, `cannot create its lock ${file}: ${describeFsError(error)}`);
    }
    const holder = readHolder(file);
    if (!holder) {
      if (!statSync(file, { throwIfNoEntry: false })) continue; // released meanwhile
      throw new OutputFolderError(
        `${dir} has a lock file that latlab cannot read (${file}): another run may be starting there. If no latlab run uses ${dir}, remove ${file} and try again.`,
      );
    }
    const who = `run ${holder.runId}, pid ${holder.pid} on ${holder.host === host ? "this host" : holder.host}, since ${holder.startedAt}`;
    if (holder.host !== host) {
      throw new OutputFolderError(
        `${dir} is locked by another latlab run (${who}). latlab cannot tell from here whether it still runs: if it does not, remove ${file} and try again; otherwise choose another --out.`,
      );
    }
    if (holderAlive(holder)) {
      throw new OutputFolderError(`${dir} is in use by another latlab run (${who}): two runs in one folder would mix their files. Wait for it to end, or choose another --out.`);
    }
    takeOver(dir, file, holder);
    note(`${dir}: took over the lock of run ${holder.runId} (pid ${holder.pid} on this host is no longer running)`);
  }
  throw new OutputFolderError(`${dir}: could not take its lock ${file} (other runs keep taking it); try again`);
}

/**
 * Removes a dead run's lock, under a second lock so that two runs taking it over at once cannot
 * remove each other's fresh lock: whoever holds the take-over file re-reads the lock and removes
 * it only if it is still the dead run's.
 */
function takeOver(dir: string, file: string, dead: LockHolder): void {
  const guard = join(dir, TAKEOVER_FILE);
  const mine: LockHolder = { pid: process.pid, host: hostname(), runId: dead.runId, startedAt: new Date().toISOString() };
  if (!createExclusive(guard, `${JSON.stringify(mine)}\n`)) {
    const other = readHolder(guard);
    if (other && other.host === mine.host && !holderAlive(other)) {
      unlinkSync(guard); // a take-over that died half-way
      return;
    }
    throw new OutputFolderError(`${dir} is being taken over by another latlab run (pid ${other?.pid ?? "?"}) right now; choose another --out.`);
  }
  try {
    if (sameHolder(readHolder(file), dead)) unlinkSync(file);
  } finally {
    unlinkSync(guard);
  }
}

const listed = (names: readonly string[], max = 6) => (names.length > max ? `${names.slice(0, max).join(", ")} and ${names.length - max} more` : names.join(", "));

/** A previous run's results.json, described for the refusal. */
function previousRun(dir: string): string {
  try {
    const r = JSON.parse(readFileSync(join(dir, "results.json"), "utf8")) as { runId?: string; status?: string };
    return r.runId ? ` — it holds the results of run ${r.runId} (status ${r.status ?? "?"})` : "";
  } catch {
    return "";
  }
}

/**
 * A folder must be empty but for its lock. --force removes latlab's own files there (OWN_FILES,
 * OWN_FOLDERS) and keeps everything else; an Azure run's pointer is never removed or overwritten.
 */
async function checkContents(dir: string, force: boolean, note: (m: string) => void): Promise<void> {
  const entries = (await readdir(dir)).filter((e) => e !== LOCK_FILE && e !== TAKEOVER_FILE).sort();
  if (!entries.length) return;
  const isOwn = (e: string) => (OWN_FILES as readonly string[]).includes(e) || (OWN_FOLDERS as readonly string[]).includes(e);
  const own = entries.filter(isOwn);
  const others = entries.filter((e) => !isOwn(e));
  if (entries.includes(AZURE_POINTER_FILE)) {
    throw new OutputFolderError(
      `${dir} holds ${AZURE_POINTER_FILE}, an Azure run's pointer to its state: its resources may still exist. Run \`latlab destroy ${dir}\` first, or choose another --out (--force never removes it).`,
    );
  }
  if (!force) {
    throw new OutputFolderError(
      `${dir} is not empty (${listed(entries)})${previousRun(dir)}: a run there would mix its files with these. Choose a new or empty folder, ` +
        `or add --force, which removes latlab's own files there (${own.length ? own.join(", ") : "none here"}) and keeps everything else.`,
    );
  }
  for (const name of own) {
    const entry = await lstat(join(dir, name));
    const wantsFolder = (OWN_FOLDERS as readonly string[]).includes(name);
    // A symbolic link is removed itself, never what it points to.
    if (!entry.isSymbolicLink() && entry.isDirectory() !== wantsFolder) {
      throw new OutputFolderError(`${join(dir, name)} is a ${entry.isDirectory() ? "folder" : "file"}, not latlab's ${wantsFolder ? "folder" : "file"} of that name; --force does not remove it: remove or rename it yourself.`);
    }
  }
  for (const name of own) await rm(join(dir, name), { recursive: true, force: true });
  if (own.length) note(`--force: removed latlab's own files from ${dir}: ${own.map((n) => ((OWN_FOLDERS as readonly string[]).includes(n) ? `${n}/` : n)).join(", ")}`);
  if (others.length) note(`--force: kept what is not latlab's in ${dir}: ${listed(others)}`);
}
