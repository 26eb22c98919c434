import { userInfo } from "node:os";

/** The errno code of a file-system error (ENOSPC, EROFS…), or undefined for anything else. */
export function errnoCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^E[A-Z0-9]+$/.test(code) ? code : undefined;
}

const whoAmI = () => {
  try {
    return userInfo().username;
  } catch {
    return `uid ${process.getuid?.() ?? "?"}`;
  }
};

/** What an errno code means for someone choosing where results go, in words. */
const WORDS: Record<string, () => string> = {
  ENOSPC: () => "no space left on the device",
  EDQUOT: () => "the disk quota is used up",
  EROFS: () => "the file system is read-only",
  EIO: () => "input/output error: the disk (or network file system) failed",
  EACCES: () => `no permission (latlab runs as ${whoAmI()})`,
  EPERM: () => `not permitted (latlab runs as ${whoAmI()})`,
  ENOTDIR: () => "a part of the path is a file, not a folder",
  EISDIR: () => "it is a folder where a file was expected",
  ENOENT: () => "it does not exist",
  EEXIST: () => "it exists already",
  ENOTEMPTY: () => "the folder is not empty",
  ENAMETOOLONG: () => "the path is too long",
  ELOOP: () => "too many symbolic links (a loop?)",
  EMFILE: () => "too many open files in latlab",
  ENFILE: () => "too many open files on this machine",
  EFBIG: () => "the file is too large for the file system",
  EBUSY: () => "the file or folder is busy",
  ESTALE: () => "stale file handle (the network file system lost it)",
  ENODEV: () => "no such device",
  ENXIO: () => "no such device",
  ETXTBSY: () => "the file is busy",
};

/**
 * An fs error in words with its code, e.g. "no space left on the device (ENOSPC)"; any other
 * error as its message.
 */
export function describeFsError(error: unknown): string {
  const code = errnoCode(error);
  const words = code ? WORDS[code] : undefined;
  if (words) return `${words()} (${code})`;
  return (error as Error)?.message ?? String(error);
}

/** A file latlab could not write: its path and the reason in words; `code` is the errno code. */
export class StorageError extends Error {
  readonly path: string;
  readonly code: string | undefined;

  constructor(path: string, cause: unknown, message = `cannot write ${path}: ${describeFsError(cause)}`) {
    super(message, { cause });
    this.name = "StorageError";
    this.path = path;
    this.code = errnoCode(cause);
  }
}
