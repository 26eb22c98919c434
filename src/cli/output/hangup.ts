/**
 * Write errors that mean "nobody is reading any more": the terminal hung up (EIO), the reader
 * of a pipe went away (EPIPE), or the stream already failed for one of those reasons.
 */
const GONE = new Set(["EIO", "EPIPE", "ERR_STREAM_DESTROYED"]);

export function isHangupWriteError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && GONE.has(code);
}

/** The 'error' listener: swallows hang-up errors, lets any other error surface as before. */
export function onWriteError(error: Error): void {
  if (!isHangupWriteError(error)) throw error;
}

const guarded = new WeakSet<NodeJS.EventEmitter>();

/**
 * After an SSH session drops, writes to its terminal fail asynchronously; with no 'error'
 * listener that is an uncaught exception that kills a run before teardown and results. Output
 * written after that is lost, nothing else. Idempotent.
 */
export function ignoreHangupWriteErrors(stream: NodeJS.EventEmitter): void {
  if (guarded.has(stream)) return;
  guarded.add(stream);
  stream.on("error", onWriteError);
}
