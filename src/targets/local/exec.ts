import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { constants } from "node:os";
import { sessionSpawner, type SpawnedCommand, type SpawnedCommandEvents } from "./spawner/sessionSpawner.ts";

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

/**
 * Runs a command in its own process group (unless `foreground`): a Ctrl-C in the terminal
 * signals latlab's whole foreground group, and a second one during teardown must not kill
 * `ip netns del` & co half-way — latlab decides when they stop. Such commands are started by
 * latlab's session spawner (spawner/sessionSpawner.ts), which no terminal signal reaches, not
 * even between fork and setsid. A command is still awaited, and on our timeout (or too much
 * output) its whole group gets SIGTERM, then SIGKILL.
 */
export const execCommand: ExecFn = (argv, options = {}) =>
  new Promise((resolve) => {
    const [file, ...args] = argv;
    if (file === undefined) {
      resolve({ code: 127, stdout: "", stderr: "empty command" });
      return;
    }
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const env = { ...process.env, LC_ALL: "C", ...options.env };
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let size = 0;
    let stoppedBecause: string | undefined;
    let escalation: NodeJS.Timeout | undefined;
    let settled = false;
    let command: SpawnedCommand | undefined;

    const stop = (reason: string) => {
      if (stoppedBecause !== undefined) return;
      stoppedBecause = reason;
      command?.signalGroup("SIGTERM");
      escalation = setTimeout(() => command?.signalGroup("SIGKILL"), KILL_GRACE_MS);
    };
    const timer = setTimeout(() => stop(`killed (SIGTERM) after ${timeoutMs} ms: timed out`), timeoutMs);
    const collect = (into: Buffer[]) => (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_OUTPUT_BYTES) stop(`killed: output exceeded ${MAX_OUTPUT_BYTES} bytes`);
      else into.push(chunk);
    };
    const finish = (code: number, extra = "") => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(escalation);
      const err = Buffer.concat(stderr).toString("utf8");
      resolve({ code, stdout: Buffer.concat(stdout).toString("utf8"), stderr: [err, extra].filter((s) => s !== "").join("\n") });
    };
    const events: SpawnedCommandEvents = {
      stdout: collect(stdout),
      stderr: collect(stderr),
      failedToStart: (code, message) => finish(127, code === "ENOENT" ? `${file}: command not found` : message),
      exited: (code, signal) => {
        if (stoppedBecause !== undefined) finish(124, stoppedBecause);
        else if (signal) finish(128 + (constants.signals[signal] ?? 0), `killed by ${signal}`);
        else finish(code ?? 127);
      },
      lost: (reason) => finish(125, reason),
    };
    const started = options.foreground ? Promise.resolve(spawnInForeground(file, args, env, events)) : sessionSpawner.spawn(file, args, env, events);
    void started.then((c) => {
      command = c;
      // A timeout that fired while the command was being handed over still applies, in full.
      if (stoppedBecause !== undefined && !settled) {
        c.signalGroup("SIGTERM");
        clearTimeout(escalation);
        escalation = setTimeout(() => c.signalGroup("SIGKILL"), KILL_GRACE_MS);
      }
    });
  });

/** Starts a command in latlab's own process group, where a Ctrl-C reaches it too. */
function spawnInForeground(file: string, args: readonly string[], env: NodeJS.ProcessEnv, events: SpawnedCommandEvents): SpawnedCommand {
  let child: ChildProcess;
  try {
    child = spawn(file, args, { stdio: ["ignore", "pipe", "pipe"], env });
  } catch (error) {
    events.failedToStart((error as NodeJS.ErrnoException).code, `${file}: ${(error as Error).message}`);
    return { signalGroup: () => {} };
  }
  child.stdout!.on("data", events.stdout);
  child.stderr!.on("data", events.stderr);
  let ended = false;
  child.on("error", (error: NodeJS.ErrnoException) => {
    // Could not start (no pid); other errors (a failed kill) change nothing.
    if (child.pid !== undefined || ended) return;
    ended = true;
    events.failedToStart(error.code, error.message);
  });
  child.on("close", (code, signal) => {
    if (ended) return;
    ended = true;
    events.exited(code, signal);
  });
  return {
    signalGroup: (signal) => {
      try {
        child.kill(signal);
      } catch {
        // Already gone.
      }
    },
  };
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
