import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { constants } from "node:os";

/**
 * The one place the local target runs commands. Always argv arrays through spawn:
 * no shell string is ever built from plan data (roles, regions, run ids).
 */

export interface ExecResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface ExecOptions {
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  /**
   * Stay in latlab's process group, so that a Ctrl-C in the terminal stops the command too
   * (e.g. a long install before any teardown is at stake). Default: own process group.
   */
  foreground?: boolean;
}

/** Runs a command; resolves with its exit code whatever it is (127 when it cannot start). */
export type ExecFn = (argv: readonly string[], options?: ExecOptions) => Promise<ExecResult>;

const DEFAULT_TIMEOUT_MS = 30_000;
const MAX_OUTPUT_BYTES = 16 * 1024 * 1024;
/** After SIGTERM on our timeout, how long a command has before SIGKILL. */
const KILL_GRACE_MS = 2_000;

/** Signals a terminal sends to its whole foreground process group (Ctrl-C, Ctrl-backslash). */
const TERMINAL_SIGNALS: readonly string[] = ["SIGINT", "SIGQUIT"];
/** How often a command that a terminal signal killed before it started is started again. */
const START_ATTEMPTS = 10;

/**
 * Runs a command in its own process group (unless `foreground`): a Ctrl-C in the terminal
 * signals latlab's whole foreground group, and a second one during teardown must not kill
 * `ip netns del` & co half-way — latlab decides when they stop. It is still awaited, and on
 * our timeout (or too much output) its whole group gets SIGTERM, then SIGKILL.
 *
 * One gap remains: between fork and setsid the child is still in latlab's group, and a Ctrl-C
 * in that window stays pending and kills it before it runs anything (measured: under a burst of
 * Ctrl-Cs, about one start in four). Once in its own session no terminal can reach it, so a
 * command that a terminal signal killed without a word of output never ran: it is started again.
 */
export const execCommand: ExecFn = async (argv, options = {}) => {
  let result = await execOnce(argv, options);
  for (let attempt = 1; attempt < START_ATTEMPTS && result.killedBeforeStart; attempt++) result = await execOnce(argv, options);
  return result.result;
};

function execOnce(argv: readonly string[], options: ExecOptions): Promise<{ result: ExecResult; killedBeforeStart: boolean }> {
  return new Promise((resolveOnce) => {
    const resolve = (result: ExecResult, killedBeforeStart = false) => resolveOnce({ result, killedBeforeStart });
    const [file, ...args] = argv;
    if (file === undefined) {
      resolve({ code: 127, stdout: "", stderr: "empty command" });
      return;
    }
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const ownGroup = !options.foreground;
    let child: ChildProcess;
    try {
      child = spawn(file, args, { detached: ownGroup, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, LC_ALL: "C", ...options.env } });
    } catch (error) {
      resolve({ code: 127, stdout: "", stderr: `${file}: ${(error as Error).message}` });
      return;
    }
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let size = 0;
    let stoppedBecause: string | undefined;
    let escalation: NodeJS.Timeout | undefined;
    let settled = false;

    const signalGroup = (signal: NodeJS.Signals) => {
      try {
        if (ownGroup && child.pid !== undefined) process.kill(-child.pid, signal);
        else child.kill(signal);
      } catch {
        // Already gone.
      }
    };
    const stop = (reason: string) => {
      if (stoppedBecause !== undefined) return;
      stoppedBecause = reason;
      signalGroup("SIGTERM");
      escalation = setTimeout(() => signalGroup("SIGKILL"), KILL_GRACE_MS);
    };
    const timer = setTimeout(() => stop(`killed (SIGTERM) after ${timeoutMs} ms: timed out`), timeoutMs);
    const collect = (into: Buffer[]) => (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_OUTPUT_BYTES) stop(`killed: output exceeded ${MAX_OUTPUT_BYTES} bytes`);
      else into.push(chunk);
    };
    child.stdout!.on("data", collect(stdout));
    child.stderr!.on("data", collect(stderr));

    const finish = (code: number, extra = "", killedBeforeStart = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(escalation);
      const err = Buffer.concat(stderr).toString("utf8");
      resolve({ code, stdout: Buffer.concat(stdout).toString("utf8"), stderr: [err, extra].filter((s) => s !== "").join("\n") }, killedBeforeStart);
    };
    child.on("error", (error: NodeJS.ErrnoException) => {
      // Could not start (no pid); other errors (a failed kill) change nothing.
      if (child.pid !== undefined) return;
      finish(127, error.code === "ENOENT" ? `${file}: command not found` : error.message);
    });
    child.on("close", (code, signal) => {
      if (stoppedBecause !== undefined) finish(124, stoppedBecause);
      else if (signal) finish(128 + (constants.signals[signal] ?? 0), `killed by ${signal}`, ownGroup && TERMINAL_SIGNALS.includes(signal) && size === 0);
      else finish(code ?? 127);
    });
  });
}

/** Quotes argv for display in error messages and logs (never executed). */
export function formatArgv(argv: readonly string[]): string {
  return argv.map((a) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(" ");
}

export class CommandError extends Error {
  readonly argv: readonly string[];
  readonly result: ExecResult;
  readonly context: string;

  constructor(argv: readonly string[], result: ExecResult, context: string) {
    const stderr = result.stderr.trim() || result.stdout.trim() || "(no output)";
    super(`${context}: \`${formatArgv(argv)}\` failed with exit code ${result.code}: ${stderr}`);
    this.argv = argv;
    this.result = result;
    this.context = context;
    this.name = "CommandError";
  }
}

/** Runs a command and throws a CommandError naming `context` when it fails. */
export async function mustExec(exec: ExecFn, argv: readonly string[], context: string, options?: ExecOptions): Promise<ExecResult> {
  const r = await exec(argv, options);
  if (r.code !== 0) throw new CommandError(argv, r, context);
  return r;
}

export interface DetachedProcess {
  pid: number;
  child: ChildProcess;
  /** Set once the process has exited. */
  exit: { code: number | null; signal: NodeJS.Signals | null } | null;
}

/**
 * Starts a long-running process in its own process group with stdout and stderr appended to
 * `logFile`, and without keeping Node's event loop alive.
 */
export function spawnDetached(argv: readonly string[], logFile: string): DetachedProcess {
  const [file, ...args] = argv;
  if (file === undefined) throw new Error("empty command");
  const fd = openSync(logFile, "a");
  try {
    const child = spawn(file, args, { detached: true, stdio: ["ignore", fd, fd], env: { ...process.env, LC_ALL: "C" } });
    const proc: DetachedProcess = { pid: child.pid ?? -1, child, exit: null };
    child.on("exit", (code, signal) => {
      proc.exit = { code, signal };
    });
    child.on("error", (err) => {
      proc.exit = { code: 127, signal: null };
      void err;
    });
    child.unref();
    return proc;
  } finally {
    closeSync(fd);
  }
}
