import { spawn } from "node:child_process";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../../..");

/**
 * bin/latlab.js in a process of its own, with what it printed. What is under test may never
 * return: the kill after `killAfterMs` turns a hang into the test's failure (a guard, not a time
 * budget: the exit code is then null).
 */
export function spawnLatlab(args: string[], options: { cwd?: string; env?: Record<string, string>; killAfterMs?: number } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [join(ROOT, "bin/latlab.js"), ...args], { cwd: options.cwd ?? ROOT, env: { ...process.env, ...options.env } });
    const out = { stdout: "", stderr: "" };
    child.stdout.on("data", (d) => (out.stdout += d));
    child.stderr.on("data", (d) => (out.stderr += d));
    const guard = setTimeout(() => child.kill("SIGKILL"), options.killAfterMs ?? 600_000);
    child.on("close", (code) => {
      clearTimeout(guard);
      done({ code, ...out });
    });
  });
}
