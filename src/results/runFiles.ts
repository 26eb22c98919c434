/**
 * Every file a run writes goes through here: into the run's folder, or — when that fails (a full
 * disk, a file system gone read-only, an I/O error) — into a rescue folder, so that nothing
 * measured is lost to storage. The run goes on measuring either way; the first failure of each
 * kind is said with the path and the reason, and every file that went elsewhere is recorded.
 *
 * The rescue folder mirrors the run folder's layout (raw/…, samples/…, results.json), so
 * `latlab report <rescue folder>` reads what was saved there. It is
 * `$TMPDIR/latlab-rescue-<runId>/`, else `/dev/shm/…` (memory), else `/var/tmp/…`: the first
 * that takes the file.
 */
import { mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { describeFsError, errnoCode, StorageError } from "./fsErrors.ts";
import { recordWritten } from "./runManifest.ts";
import type { Results } from "./schema.ts";
import { INVALID_RESULTS, INVALID_RESULTS_ERRORS, writeResults } from "./writeResults.ts";

export interface StorageFault {
  /** The file that could not be written in the run folder (absolute). */
  file: string;
  reason: string;
  /** Where it was written instead; absent when it could not be written anywhere. */
  savedTo?: string;
}

export interface RunFilesOptions {
  runId: string;
  /** Told the first storage failure of each kind, with the path, the reason and where files go instead. */
  warn?: (message: string) => void;
  /** Where a rescue folder may go, in order (default: $TMPDIR, /dev/shm, /var/tmp). */
  rescueRoots?: readonly string[];
}

export const rescueFolderName = (runId: string) => `latlab-rescue-${runId}`;

/** Where rescue folders go unless a caller says otherwise, in order. */
export const defaultRescueRoots = (): string[] => [tmpdir(), "/dev/shm", "/var/tmp"];

/**
 * The rescue folders a run of `runId` left (those that exist, under `roots`): what its results
 * folder could not take, for `latlab resume` to bring back.
 */
export function findRescueFolders(runId: string, roots: readonly string[] = defaultRescueRoots()): string[] {
  const found = [...new Set(roots.map((r) => join(resolve(r), rescueFolderName(runId))))];
  return found.filter((dir) => statSync(dir, { throwIfNoEntry: false })?.isDirectory());
}

/**
 * Makes `folder` and the folders above it that are missing, one level at a time. Not Node's
 * recursive mkdir: on a read-only file system it says ENOENT ("no such file or directory") for a
 * new folder, hiding the real cause (EROFS); a level at a time, each error is the kernel's own.
 */
function makeFolder(folder: string): void {
  const missing: string[] = [];
  for (let at = folder; ; at = dirname(at)) {
    // Throws ENOTDIR (a file on the way), EACCES…: the real cause, with its path.
    const found = statSync(at, { throwIfNoEntry: false });
    if (found) {
      if (!found.isDirectory()) throw Object.assign(new Error(`${at}: a file is in the way`), { code: "ENOTDIR" });
      break;
    }
    if (dirname(at) === at) break;
    missing.unshift(at);
  }
  for (const dir of missing) {
    try {
      mkdirSync(dir);
    } catch (error) {
      // Made meanwhile (a parallel cell): fine when it is a folder.
      if (errnoCode(error) === "EEXIST" && statSync(dir, { throwIfNoEntry: false })?.isDirectory()) continue;
      if (errnoCode(error) === "EEXIST") throw Object.assign(new Error(`${dir}: a file is in the way`), { code: "ENOTDIR", cause: error });
      throw error;
    }
  }
}

export class RunFiles {
  readonly dir: string;
  readonly runId: string;
  /** Every file that could not be written in the run folder. */
  readonly faults: StorageFault[] = [];
  /** Where results.json was last written (the run folder or the rescue folder); undefined while nowhere. */
  resultsFile: string | undefined;
  private readonly warn: (message: string) => void;
  private readonly roots: string[];
  private rescue: string | undefined;
  private readonly said = new Set<string>();
  private readonly made = new Set<string>();
  private readonly recorded = new Set<string>();

  constructor(dir: string, options: RunFilesOptions) {
    this.dir = resolve(dir);
    this.runId = options.runId;
    this.warn = options.warn ?? (() => undefined);
    this.roots = [...new Set((options.rescueRoots ?? defaultRescueRoots()).map((r) => resolve(r)))];
  }

  /** The rescue folder, once something had to be written there. */
  get rescueDir(): string | undefined {
    return this.rescue;
  }

  /** The run folder's path for `rel`. */
  inRunFolder(rel: string): string {
    return join(this.dir, rel);
  }

  /**
   * Writes `rel` (a path inside the run folder) and returns where it went: the run folder, or
   * the rescue folder when the run folder could not take it. Throws a StorageError naming both
   * paths and reasons only when neither could.
   */
  write(rel: string, data: string | Uint8Array): string {
    const file = this.inRunFolder(rel);
    try {
      this.writeIn(file, data);
      return file;
    } catch (error) {
      return this.rescueWrite(rel, error, (target) => this.writeIn(target, data));
    }
  }

  /** Where `rel` is now: the run folder, else the rescue folder; undefined when in neither. */
  locate(rel: string): string | undefined {
    for (const base of [this.dir, this.rescue]) {
      if (!base) continue;
      const file = join(base, rel);
      if (statSync(file, { throwIfNoEntry: false })?.isFile()) return file;
    }
    return undefined;
  }

  /**
   * Writes results.json (validated, atomically: writeResults) in the run folder, else in the
   * rescue folder. Returns where, or undefined when it could be written nowhere (said through
   * `warn`); throws only what is not a storage failure (results that fail validation).
   *
   * `final`: the run's last word. Then an older copy left where this one did not go is removed,
   * so that no stale results.json (status "running") stands beside the real one.
   */
  writeResults(results: Results, final = false): string | undefined {
    let written: string | undefined;
    // results.json and the temporary copy it is written through.
    for (const name of ["results.json", "results.json.tmp"]) this.record(join(this.dir, name));
    try {
      written = writeResults(this.dir, results);
    } catch (error) {
      if (!(error instanceof StorageError)) {
        // Results that failed validation were written as they are beside the run's (writeResults).
        for (const name of [INVALID_RESULTS, INVALID_RESULTS_ERRORS]) if (statSync(join(this.dir, name), { throwIfNoEntry: false })) this.record(join(this.dir, name));
        throw error;
      }
      try {
        written = this.rescueWrite("results.json", error.cause, (target) => {
          this.ensureFolder(dirname(target));
          writeResults(dirname(target), results);
        });
      } catch (again) {
        if (!(again instanceof StorageError)) throw again;
        this.warnOnce(`results:${again.message}`, `${again.message}; the results are kept in memory and printed below`);
        return undefined;
      }
    }
    this.resultsFile = written;
    if (final) {
      for (const base of [this.dir, this.rescue]) {
        const stale = base ? join(base, "results.json") : undefined;
        if (!stale || stale === written) continue;
        try {
          rmSync(stale, { force: true });
        } catch {
          // A folder gone read-only keeps its copy; its status says it is not the last word.
        }
      }
    }
    return written;
  }

  /** One line per kind of fault for the end of the run; [] when every file went where it should. */
  summary(): string[] {
    if (!this.faults.length) return [];
    const reasons = [...new Set(this.faults.map((f) => f.reason))].join("; ");
    const saved = this.faults.filter((f) => f.savedTo).length;
    const lost = this.faults.length - saved;
    return [
      `storage: ${this.faults.length} file(s) could not be written in ${this.dir} (${reasons})` +
        (saved ? `; ${saved} saved in ${this.rescue}` : "") +
        (lost ? `; ${lost} could be written nowhere: ${this.faults.filter((f) => !f.savedTo).map((f) => f.file).slice(0, 5).join(", ")}` : ""),
    ];
  }

  /**
   * Records a file of the run folder in the folder's record of what latlab wrote there
   * (runManifest.ts: what --force may remove), before it is written; by its top-level entry, once.
   */
  private record(file: string): void {
    if (!file.startsWith(`${this.dir}/`)) return; // the rescue folder keeps no record
    const [top, ...below] = file.slice(this.dir.length + 1).split("/");
    if (!top || this.recorded.has(top)) return;
    this.recorded.add(top);
    recordWritten(this.dir, top, below.length ? "folder" : "file");
  }

  private writeIn(file: string, data: string | Uint8Array): void {
    this.record(file);
    this.ensureFolder(dirname(file));
    try {
      writeFileSync(file, data);
    } catch (error) {
      // Half a file (the disk filled mid-write) must not pass for the whole one saved elsewhere.
      try {
        rmSync(file, { force: true });
      } catch {
        // The folder is unreadable as well: nothing more to do here.
      }
      throw error;
    }
  }

  private ensureFolder(folder: string): void {
    if (this.made.has(folder)) return;
    makeFolder(folder);
    this.made.add(folder);
  }

  /** After `cause` kept `rel` out of the run folder: writes it under the rescue folder, saying so the first time. */
  private rescueWrite(rel: string, cause: unknown, writeTo: (target: string) => void): string {
    const file = this.inRunFolder(rel);
    const reason = describeFsError(cause);
    const attempts: string[] = [];
    const roots = this.rescue ? [dirname(this.rescue), ...this.roots.filter((r) => r !== dirname(this.rescue!))] : this.roots;
    for (const root of roots) {
      const rescue = join(root, rescueFolderName(this.runId));
      if (rescue === this.dir || rescue.startsWith(`${this.dir}/`)) continue;
      const target = join(rescue, rel);
      try {
        writeTo(target);
      } catch (error) {
        attempts.push(`${target}: ${describeFsError(error)}`);
        continue;
      }
      this.rescue = rescue;
      this.faults.push({ file, reason, savedTo: target });
      this.warnOnce(`${errnoCode(cause) ?? reason}→${rescue}`, `cannot write ${file}: ${reason}; what cannot be written in ${this.dir} is saved in ${rescue} instead`);
      return target;
    }
    this.faults.push({ file, reason });
    const error = new StorageError(file, cause, `cannot write ${file}: ${reason}${attempts.length ? `; nor in a rescue folder (${attempts.join("; ")})` : ""}`);
    this.warnOnce(`lost:${errnoCode(cause) ?? reason}`, error.message);
    throw error;
  }

  private warnOnce(key: string, message: string): void {
    if (this.said.has(key)) return;
    this.said.add(key);
    this.warn(message);
  }
}
