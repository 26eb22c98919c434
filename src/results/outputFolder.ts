/**
 * A run's results folder (`--out`), made ready before anything is brought up and held for the
 * whole run: created if missing (through writablePath.ts, which refuses at once — with the path
 * and the reason in words — a place that cannot hold files), locked against a second run, and
 * refused when it holds other files, unless --force.
 *
 * --force removes only what latlab recorded writing there (runManifest.ts), and only once the run
 * can no longer be refused: preparing is two steps. `prepareOutputFolder` checks and locks, and
 * says now what --force would remove or why it will not (a file named like latlab's that latlab
 * has no record of writing); `claim()`, called after every check that can refuse the run, removes
 * it and starts the folder's new record. A run refused in between has removed nothing.
 */
import { linkSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { lstat, readdir, rm } from "node:fs/promises";
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { describeFsError, errnoCode } from "./fsErrors.ts";
import { MANIFEST_FILE, readManifest, startManifest, type ManifestEntry } from "./runManifest.ts";
import { abortable, interrupted, makeWritableFolder, WritablePathError } from "./writablePath.ts";

/** The lock file a run keeps in its folder. */
export const LOCK_FILE = ".latlab.lock";
const TAKEOVER_FILE = `${LOCK_FILE}.takeover`;

/**
 * The names a run writes in its folder (results.json's own temporary and invalid copies count as
 * results.json). A file of one of these names that latlab has no record of writing stops --force:
 * the run would write over it.
 */
export const OWN_FILES = ["results.json", "results.json.tmp", "results.invalid.json", "results.invalid.errors.txt", "plan.json"] as const;
export const OWN_FOLDERS = ["raw", "samples", ".resume"] as const;
/** An Azure run's pointer to its state (src/targets/azure/lifecycle/runState.ts, POINTER_FILE): never overwritten. */
export const AZURE_POINTER_FILE = "azure-state.json";

/** The folder cannot be used: `message` names it and says why. Nothing was left behind. */
export class OutputFolderError extends WritablePathError {
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
  /**
   * Call once every check that can refuse the run has passed: removes what --force removes (said
   * in `notes`) and starts the folder's record of what latlab writes. Safe to call twice.
   */
  claim(): Promise<void>;
  /** Removes the lock (if still ours) and the folders preparing created, if they stayed empty. Safe to call twice. */
  release(): void;
}

export interface PrepareOptions {
  runId: string;
  /** Use a folder that is not empty, removing (at `claim()`) what latlab recorded writing there. */
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

const WHAT = "the results folder";

/**
 * Makes `path` ready to hold a run's files and locks it; see the module comment. Throws
 * OutputFolderError / WritablePathError (or, when the signal aborted, an error saying so) having
 * changed nothing.
 */
export async function prepareOutputFolder(path: string, options: PrepareOptions): Promise<OutputFolder> {
  const notes: string[] = [];
  const note = (m: string) => {
    notes.push(m);
    options.log?.(m);
  };
  const { signal } = options;
  const made = await makeWritableFolder(path, { what: WHAT, ...(signal ? { signal } : {}) });
  const { dir } = made;
  try {
    if (signal?.aborted) throw interrupted(dir, WHAT);
    const lock = takeLock(dir, options.runId, note);
    let contents: Contents;
    try {
      if (signal?.aborted) throw interrupted(dir, WHAT);
      contents = await abortable(checkContents(dir, Boolean(options.force)), signal, () => interrupted(dir, WHAT));
    } catch (error) {
      lock.release();
      throw error;
    }
    const onExit = () => lock.release();
    // A crash (an uncaught error) still removes the lock; a kill -9 leaves it, and the next run takes it over.
    process.once("exit", onExit);
    let released = false;
    let claimed = false;
    return {
      dir,
      lockFile: lock.file,
      notes,
      async claim() {
        if (claimed) return;
        claimed = true;
        await removeRecorded(dir, contents, note);
        startManifest(dir, options.runId);
      },
      release() {
        if (released) return;
        released = true;
        process.off("exit", onExit);
        lock.release();
        made.removeCreated();
      },
    };
  } catch (error) {
    made.removeCreated();
    throw error;
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
      throw new OutputFolderError(`cannot use ${dir} as ${WHAT}: cannot create its lock ${file}: ${describeFsError(error)}`);
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

/** What --force will remove at `claim()` (latlab's recorded entries) and what it keeps. */
interface Contents {
  remove: ManifestEntry[];
  keep: string[];
}

const isOwnName = (e: string) => (OWN_FILES as readonly string[]).includes(e) || (OWN_FOLDERS as readonly string[]).includes(e);
const shown = (e: ManifestEntry) => (e.kind === "folder" ? `${e.name}/` : e.name);

/**
 * A folder must be empty but for its lock and latlab's record. With --force, what latlab recorded
 * writing there (runManifest.ts) is to be removed and everything else kept — unless something
 * named like a file the run writes is not in the record: the run would write over a file that is
 * perhaps the user's, so the folder is refused naming it. An Azure run's pointer stops everything.
 * Reads only: the removal is `claim()`'s.
 */
async function checkContents(dir: string, force: boolean): Promise<Contents> {
  const entries = (await readdir(dir)).filter((e) => e !== LOCK_FILE && e !== TAKEOVER_FILE && e !== MANIFEST_FILE).sort();
  if (!entries.length) return { remove: [], keep: [] };
  if (entries.includes(AZURE_POINTER_FILE)) {
    throw new OutputFolderError(
      `${dir} holds ${AZURE_POINTER_FILE}, an Azure run's pointer to its state: its resources may still exist. Run \`latlab destroy ${dir}\` first, or choose another --out (--force never removes it).`,
    );
  }
  const { manifest, invalid } = readManifest(dir);
  const recorded = (manifest?.written ?? []).filter((e) => entries.includes(e.name));
  const unrecorded = entries.filter((e) => isOwnName(e) && !recorded.some((r) => r.name === e));
  if (!force) {
    throw new OutputFolderError(
      `${dir} is not empty (${listed(entries)})${previousRun(dir)}: a run there would mix its files with these. Choose a new or empty folder, ` +
        `or add --force, which removes only what latlab recorded writing there (${recorded.length ? recorded.map(shown).join(", ") : `none: ${manifest ? "nothing listed" : "no record"} in ${MANIFEST_FILE}`}) and keeps everything else.`,
    );
  }
  if (invalid) {
    throw new OutputFolderError(`${join(dir, MANIFEST_FILE)} is not a record latlab wrote (${invalid}); --force removes nothing on its word: remove it and what latlab wrote there yourself, or choose another --out.`);
  }
  if (unrecorded.length) {
    throw new OutputFolderError(
      `--force removes only what latlab recorded writing in ${dir} (its ${MANIFEST_FILE}), and ${manifest ? "that record does not list" : "there is no such record there for"} ` +
        `${unrecorded.join(", ")}: latlab cannot tell ${unrecorded.length > 1 ? "them" : "it"} from your own files, and the run would write over ${unrecorded.length > 1 ? "them" : "it"}. ` +
        `Nothing was removed. Move or remove ${unrecorded.length > 1 ? "them" : "it"} yourself, or choose another --out.`,
    );
  }
  for (const entry of recorded) {
    const found = await lstat(join(dir, entry.name));
    // A symbolic link is removed itself, never what it points to.
    if (!found.isSymbolicLink() && found.isDirectory() !== (entry.kind === "folder")) {
      throw new OutputFolderError(
        `${join(dir, entry.name)} is a ${found.isDirectory() ? "folder" : "file"}, not the ${entry.kind} latlab wrote there; --force does not remove it: remove or rename it yourself.`,
      );
    }
  }
  return { remove: recorded, keep: entries.filter((e) => !recorded.some((r) => r.name === e)) };
}

/** `claim()`'s half of --force: removes the recorded entries checked by checkContents, if still of the kind recorded. */
async function removeRecorded(dir: string, contents: Contents, note: (m: string) => void): Promise<void> {
  const removed: ManifestEntry[] = [];
  for (const entry of contents.remove) {
    const found = await lstat(join(dir, entry.name)).catch(() => undefined);
    if (!found) continue;
    if (!found.isSymbolicLink() && found.isDirectory() !== (entry.kind === "folder")) {
      throw new OutputFolderError(`${join(dir, entry.name)} changed into a ${found.isDirectory() ? "folder" : "file"} while the run was checked; --force does not remove it: remove or rename it yourself.`);
    }
    await rm(join(dir, entry.name), { recursive: true, force: true });
    removed.push(entry);
  }
  if (removed.length) note(`--force: removed what latlab had written in ${dir}: ${removed.map(shown).join(", ")}`);
  if (contents.keep.length) note(`--force: kept what latlab did not write in ${dir}: ${listed(contents.keep)}`);
}
