import { execFile, spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { closeSync, openSync } from "node:fs";

/**
 * The one place the local target runs commands. Always argv arrays through execFile/spawn:
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
}

/** Runs a command; resolves with its exit code whatever it is (127 when it cannot start). */
export type ExecFn = (argv: readonly string[], options?: ExecOptions) => Promise<ExecResult>;

export const execCommand: ExecFn = (argv, options = {}) =>
  new Promise((resolve) => {
    const [file, ...args] = argv;
    if (file === undefined) {
      resolve({ code: 127, stdout: "", stderr: "empty command" });
      return;
    }
    execFile(
      file,
      args,
      {
        timeout: options.timeoutMs ?? 30_000,
        maxBuffer: 16 * 1024 * 1024,
        env: { ...process.env, LC_ALL: "C", ...options.env },
        encoding: "utf8",
      },
      (error, stdout, stderr) => {
        if (!error) {
          resolve({ code: 0, stdout, stderr });
          return;
        }
        const e = error as NodeJS.ErrnoException & { code?: number | string; killed?: boolean; signal?: string };
        let code = typeof e.code === "number" ? e.code : 127;
        let extra = "";
        if (e.code === "ENOENT") extra = `${file}: command not found`;
        else if (e.killed || e.signal) {
          code = 124;
          extra = `killed (${e.signal ?? "timeout"}) after ${options.timeoutMs ?? 30_000} ms`;
        } else if (typeof e.code !== "number") extra = e.message;
        resolve({ code, stdout: stdout ?? "", stderr: [stderr ?? "", extra].filter((s) => s !== "").join("\n") });
      },
    );
  });

/** Quotes argv for display in error messages and logs (never executed). */
export function formatArgv(argv: readonly string[]): string {
  return argv.map((a) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(" ");
}

export class CommandError extends Error {
  constructor(
    readonly argv: readonly string[],
    readonly result: ExecResult,
    readonly context: string,
  ) {
    const stderr = result.stderr.trim() || result.stdout.trim() || "(no output)";
    super(`${context}: \`${formatArgv(argv)}\` failed with exit code ${result.code}: ${stderr}`);
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
