/**
 * The one guarded way to make a folder the CLI writes in — a run's results folder, the history
 * file's folder, `latlab init`'s project, `history export --parquet`'s folder, and so the locks
 * kept in them. A path that cannot hold files is refused at once, naming it and the reason in
 * words, having created nothing: a pseudo-filesystem (the kernel's views of itself), a read-only
 * or full file system, a folder latlab may not write in, a file in the way.
 *
 * Why a guard at all: Node's recursive mkdir (`mkdir -p`) spins for ever on /proc — there mkdir
 * answers ENOENT under a folder that exists, and Node's mkdirp takes ENOENT to mean "make the
 * parent first", which exists (EEXIST), so it tries the child again, for ever (MKDirpSync and
 * MKDirpAsync in Node's src/node_file.cc; seen on Node 22 and 24): fs.mkdirSync blocks the main
 * thread, so no signal handler ever runs; fs.promises.mkdir never settles. So folders are made here one level at a time, after the file system was
 * checked, and every step that could hang on a network file system gives way to an abort signal.
 */
import { constants, readFileSync, rmdirSync } from "node:fs";
import { access, lstat, mkdir, realpath, stat, statfs } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { describeFsError, errnoCode } from "./fsErrors.ts";

/**
 * Pseudo-filesystems by statfs's f_type (statfs(2); the numbers are linux/magic.h's). statfs asks
 * the file system that really holds the path — bind mounts and symbolic links included — with no
 * parsing; it cannot tell devtmpfs (/dev) from tmpfs (same magic), which the mount table can.
 */
const PSEUDO_BY_MAGIC: Record<number, string> = {
  0x9fa0: "proc: the kernel's view of processes",
  0x62656572: "sysfs: the kernel's view of devices",
  0x1cd1: "devpts: terminals",
  0x27e0eb: "cgroup",
  0x63677270: "cgroup2",
  0x64626720: "debugfs",
  0x74726163: "tracefs",
  0x73636673: "securityfs",
  0xcafe4a11: "bpf",
  0x6165676c: "pstore",
  0x62656570: "configfs",
  0xde5e81e4: "efivarfs",
  0xf97cff8c: "selinuxfs",
  0x65735543: "fusectl",
  0x42494e4d: "binfmt_misc",
  0x6e736673: "nsfs",
  0x19800202: "mqueue",
};

/** …and by the mount table's file-system type, for those statfs cannot tell apart. */
const PSEUDO_BY_TYPE: Record<string, string> = {
  devtmpfs: "devtmpfs: the kernel's device nodes (/dev)",
};

/** The path cannot be written: the message names it and says why. Nothing was created. */
export class WritablePathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WritablePathError";
  }
}

export interface GuardOptions {
  /** What the folder is for, in words: "the results folder", "the history file's folder"… */
  what: string;
  /** Ctrl-C / SIGTERM: stops at the next step (or while waiting on a file system). */
  signal?: AbortSignal;
  /** The path errors name, when it is not the folder's own (the file the folder is made for). */
  shownAs?: string;
}

/** A folder made ready by {@link makeWritableFolder}. */
export interface WritableFolder {
  /** The folder, absolute. */
  dir: string;
  /** The folders this call created, outermost first. */
  created: string[];
  /** Removes the folders this call created, innermost first, as long as they are empty. */
  removeCreated(): void;
}

/**
 * Linux's limits on a path handed to a system call (linux/limits.h): PATH_MAX 4096 bytes counting
 * the end byte, NAME_MAX 255 bytes per name. Past them every call answers ENAMETOOLONG, so they
 * are checked first, and said with the limit rather than as an errno on a path too long to print.
 */
export const PATH_MAX = 4096;
export const NAME_MAX = 255;

/** A path longer than this is shown by its start and end (a 5,000-character path fills a screen). */
const SHOWN_PATH_CHARS = 120;
const SHOWN_END_CHARS = 40;
const SHOWN_NAME_END_CHARS = 20;

const clip = (text: string, end: number) => (text.length <= 2 * end + 1 ? text : `${text.slice(0, end)}…${text.slice(-end)}`);

/** `path` as errors show it: whole when short, else its first and last characters and its length. */
export function shownPath(path: string): string {
  return path.length <= SHOWN_PATH_CHARS ? path : `${clip(path, SHOWN_END_CHARS)} (a path of ${path.length} characters)`;
}

/** Why Linux would refuse `path` for its length (ENAMETOOLONG), in words; undefined when it would not. */
export function pathLengthProblem(path: string): string | undefined {
  const bytes = Buffer.byteLength(path);
  if (bytes >= PATH_MAX) return `it is ${bytes} bytes long, and Linux takes paths of at most ${PATH_MAX - 1} (PATH_MAX ${PATH_MAX} with the end byte; ENAMETOOLONG)`;
  const name = path.split("/").find((part) => Buffer.byteLength(part) > NAME_MAX);
  if (name !== undefined) return `its part ${clip(name, SHOWN_NAME_END_CHARS)} is ${Buffer.byteLength(name)} bytes long, and Linux takes names of at most ${NAME_MAX} (NAME_MAX; ENAMETOOLONG)`;
  return undefined;
}

const cannotUse = (path: string, what: string, why: string) => new WritablePathError(`cannot use ${shownPath(path)} as ${what}: ${why}`);

export const interrupted = (dir: string, what: string) => new Error(`interrupted while preparing ${what} ${shownPath(dir)}; nothing was started`);

/** `work`, or a rejection as soon as the signal aborts (a hung network file system must not keep Ctrl-C waiting). */
export function abortable<T>(work: Promise<T>, signal: AbortSignal | undefined, onAbort: () => Error): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(onAbort());
  }
  return new Promise<T>((resolvePromise, reject) => {
    const abort = () => reject(onAbort());
    signal.addEventListener("abort", abort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", abort);
        resolvePromise(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", abort);
        reject(error);
      },
    );
  });
}

/**
 * Checks that `path` can be a folder latlab writes in, creating nothing: returns the nearest part
 * that exists and the folders still to create under it, outermost first.
 */
export async function checkWritableFolder(path: string, options: GuardOptions): Promise<{ dir: string; existing: string; missing: string[] }> {
  const dir = resolve(path);
  const shown = options.shownAs ?? dir;
  // Before any file-system call: each would fail with ENAMETOOLONG, naming the path again.
  const tooLong = pathLengthProblem(shown) ?? pathLengthProblem(dir);
  if (tooLong) throw cannotUse(shown, options.what, tooLong);
  const step = <T>(work: Promise<T>) => abortable(work, options.signal, () => interrupted(shown, options.what));
  const { existing, missing } = await step(inspect(dir, shown, options.what));
  await step(checkFileSystem(shown, existing, options.what));
  return { dir, existing, missing };
}

/** Checks `path` (see {@link checkWritableFolder}), then creates what is missing, one level at a time. */
export async function makeWritableFolder(path: string, options: GuardOptions): Promise<WritableFolder> {
  const { dir, missing } = await checkWritableFolder(path, options);
  const created: string[] = [];
  const removeCreated = () => {
    for (const d of [...created].reverse()) {
      try {
        rmdirSync(d);
      } catch {
        break; // not empty (or gone): what is in it is someone's
      }
    }
    created.length = 0;
  };
  try {
    for (const d of missing) {
      await abortable(makeFolder(options.shownAs ?? dir, d, options.what), options.signal, () => interrupted(options.shownAs ?? dir, options.what));
      created.push(d);
    }
  } catch (error) {
    removeCreated();
    throw error;
  }
  return { dir, created, removeCreated };
}

/** Checks, creating nothing, that `file` can be written (see {@link checkWritableFolder}); errors name the file. */
export async function checkWritableFile(file: string, options: GuardOptions): Promise<void> {
  const path = resolve(file);
  const tooLong = pathLengthProblem(path);
  if (tooLong) throw cannotUse(path, options.what, tooLong);
  const found = await abortable(stat(path).catch(() => undefined), options.signal, () => interrupted(path, options.what));
  if (found?.isDirectory()) throw cannotUse(path, options.what, "it is a folder, not a file");
  await checkWritableFolder(dirname(path), { ...options, shownAs: path });
}

/** The folder a file goes in, checked and made (see {@link makeWritableFolder}); errors name the file. */
export async function makeWritableFileFolder(file: string, options: GuardOptions): Promise<WritableFolder> {
  const path = resolve(file);
  await checkWritableFile(path, options);
  return makeWritableFolder(dirname(path), { ...options, shownAs: path });
}

/**
 * The nearest part of `dir` that exists (a folder) and the folders below it still to create,
 * outermost first. A file in the way, or a part latlab may not look into, is refused here.
 */
async function inspect(dir: string, shown: string, what: string): Promise<{ existing: string; missing: string[] }> {
  const missing: string[] = [];
  for (let current = dir; ; current = dirname(current)) {
    try {
      const found = await stat(current);
      if (!found.isDirectory()) throw cannotUse(shown, what, current === dir && shown === dir ? "it is a file, not a folder" : `${current} is a file, not a folder`);
      return { existing: current, missing };
    } catch (error) {
      if (error instanceof WritablePathError) throw error;
      const code = errnoCode(error);
      // ENOTDIR: a file further up; the walk up finds and names it.
      if ((code === "ENOENT" || code === "ENOTDIR") && dirname(current) !== current) {
        if ((await lstat(current).catch(() => undefined))?.isSymbolicLink()) throw cannotUse(shown, what, `${current} is a symbolic link to something that does not exist`);
        missing.unshift(current);
        continue;
      }
      throw cannotUse(shown, what, code === "EACCES" ? `cannot look into ${dirname(current)}: ${describeFsError(error)}` : `${current}: ${describeFsError(error)}`);
    }
  }
}

/**
 * The file-system type of the mount holding `path` (already resolved through symbolic links),
 * from /proc/self/mountinfo (proc_pid_mountinfo(5): the mount point is field 5, the type the
 * first field after " - "; spaces and the like are octal escapes). Undefined when unreadable.
 */
export function mountTypeOf(path: string, mountinfo = readMountinfo()): string | undefined {
  let best: { point: string; type: string } | undefined;
  for (const line of mountinfo?.split("\n") ?? []) {
    const [left, right] = line.split(" - ");
    const point = left?.split(" ")[4];
    const type = right?.split(" ")[0];
    if (!point || !type) continue;
    const unescaped = point.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
    const inside = unescaped === "/" || path === unescaped || path.startsWith(`${unescaped}/`);
    // The last of equally long mount points is the one on top (mounted later).
    if (inside && (!best || unescaped.length >= best.point.length)) best = { point: unescaped, type };
  }
  return best?.type;
}

function readMountinfo(): string | undefined {
  try {
    return readFileSync("/proc/self/mountinfo", "utf8");
  } catch {
    return undefined;
  }
}

/** Which pseudo-filesystem holds `existing` (a folder that exists), in words; undefined for a real one. */
export async function pseudoFileSystem(existing: string): Promise<string | undefined> {
  const byMagic = PSEUDO_BY_MAGIC[(await statfs(existing)).type];
  if (byMagic) return byMagic;
  const type = mountTypeOf(await realpath(existing).catch(() => existing));
  return type ? PSEUDO_BY_TYPE[type] : undefined;
}

/** Refuses a folder on a file system that cannot hold our files: the kernel's own, read-only, not ours to write, full. */
async function checkFileSystem(dir: string, existing: string, what: string): Promise<void> {
  const fs = await statfs(existing).catch((error: unknown) => {
    throw cannotUse(dir, what, `${existing}: ${describeFsError(error)}`);
  });
  const pseudo = await pseudoFileSystem(existing);
  if (pseudo) throw cannotUse(dir, what, `${existing} is on a pseudo-filesystem (${pseudo}), which cannot hold files; choose a folder on a disk`);
  try {
    await access(existing, constants.W_OK | constants.X_OK);
  } catch (error) {
    const code = errnoCode(error);
    if (code === "EROFS") throw cannotUse(dir, what, `${existing} is on a read-only file system`);
    if (code === "EACCES" || code === "EPERM") throw cannotUse(dir, what, `cannot write in ${existing}: ${describeFsError(error)}`);
    throw cannotUse(dir, what, `${existing}: ${describeFsError(error)}`);
  }
  // root may use the blocks reserved for it; others only what is available to them.
  const free = process.getuid?.() === 0 ? fs.bfree : fs.bavail;
  if (free === 0) throw cannotUse(dir, what, `no space left on the device holding ${existing}`);
  if (fs.files > 0 && fs.ffree === 0) throw cannotUse(dir, what, `no free inodes left on the device holding ${existing} (it cannot hold one more file)`);
}

/** One folder, not recursive (see the module comment); one that appeared meanwhile is fine. */
async function makeFolder(dir: string, folder: string, what: string): Promise<void> {
  try {
    await mkdir(folder);
  } catch (error) {
    const code = errnoCode(error);
    if (code === "EEXIST" && (await stat(folder).catch(() => undefined))?.isDirectory()) return;
    // The reason is the file system's, not the path's: ENOENT under a folder that exists means
    // the file system refuses new folders (as /proc does).
    const why = code === "ENOENT" ? `the file system under ${dirname(folder)} does not let folders be created there` : describeFsError(error);
    throw cannotUse(dir, what, `cannot create ${folder}: ${why}`);
  }
}
