import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from "node:fs";

/**
 * Reading a file a user names for `latlab parse`: a capture of a tool's output. Read whole, as
 * any file given by name could be anything: /dev/zero or a FIFO never ends, a folder is no text,
 * and a multi-gigabyte file would fill the memory before the parser saw a line. So only a
 * regular file is read, up to a limit well above any capture (a 60 s sockperf full log is ~15
 * MiB), and every refusal names the path and why.
 */
export const MAX_CAPTURE_BYTES = 64 * 1024 * 1024;

const size = (bytes: number) => (bytes < 1024 * 1024 ? `${bytes} bytes` : `${Math.floor(bytes / 1024 / 1024)} MiB`);

/** What a file that is not a regular file is, in words. */
function kind(stats: Stats): string {
  if (stats.isDirectory()) return "a folder";
  if (stats.isFIFO()) return "a FIFO (named pipe)";
  if (stats.isCharacterDevice()) return "a character device";
  if (stats.isBlockDevice()) return "a block device";
  if (stats.isSocket()) return "a socket";
  return "not a regular file";
}

/** Node's error codes, in words (the message alone, "EISDIR: illegal operation…", names no path). */
const REASONS: Record<string, string> = {
  ENOENT: "no such file",
  EACCES: "permission denied",
  EPERM: "permission denied",
  ENOTDIR: "a part of the path is not a folder",
  ELOOP: "too many symbolic links",
  ENAMETOOLONG: "the path is too long",
  EISDIR: "a folder, not a file",
};

/**
 * The text of `path`, or an error naming it (`label`: how the user gave it, e.g. "--file").
 * Opened without blocking (opening a FIFO otherwise waits for a writer), checked on the open
 * descriptor (the path cannot change between the check and the read), read to the limit only.
 */
export function readCapture(path: string, label?: string, maxBytes = MAX_CAPTURE_BYTES): string {
  const named = label ? `${label} ${path}` : path;
  const fail = (why: string, cause?: unknown): never => {
    throw new Error(`${named}: ${why}`, cause === undefined ? undefined : { cause });
  };
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "";
    return fail(REASONS[code] ?? (error as Error).message, error);
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) fail(`${kind(stats)}, not a file: expected a tool's captured output`);
    if (stats.size > maxBytes) fail(`${size(stats.size)}, over the ${size(maxBytes)} a capture may have`);
    // The size said is not trusted (a file still growing, /proc reports 0): read to the end,
    // stopping one byte past the limit.
    const chunks: Buffer[] = [];
    let length = 0;
    for (;;) {
      const chunk = Buffer.alloc(Math.min(Math.max(stats.size - length, 64 * 1024), maxBytes + 1 - length));
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      chunks.push(chunk.subarray(0, n));
      length += n;
      if (length > maxBytes) fail(`over the ${size(maxBytes)} a capture may have (it grew while read)`);
    }
    return Buffer.concat(chunks, length).toString("utf8");
  } catch (error) {
    if ((error as Error).message.startsWith(`${named}: `)) throw error;
    const code = (error as NodeJS.ErrnoException).code ?? "";
    return fail(REASONS[code] ?? (error as Error).message, error);
  } finally {
    closeSync(fd);
  }
}

/** `fn`, whose error (a parser's: "sockperf: …") is prefixed with the capture it was about. */
export function aboutCapture<T>(path: string, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    throw new Error(`${path}: ${(error as Error).message}`, { cause: error });
  }
}
