import { readFile } from "node:fs/promises";
import type { ExecFn } from "../exec.ts";

/**
 * Stopping everything that runs inside a network namespace: what a local host's teardown and an
 * emulated Azure VM's deletion both need before the namespace itself can go.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Pids of the processes in network namespace `ns` (empty when it has none or is gone). */
export async function namespacePids(exec: ExecFn, ns: string): Promise<number[]> {
  const r = await exec(["ip", "netns", "pids", ns]);
  if (r.code !== 0) return [];
  return r.stdout
    .split(/\s+/)
    .filter((s) => /^\d+$/.test(s))
    .map(Number);
}

/**
 * SIGTERM to every process in `ns`, SIGKILL to what is left after `graceMs`. What was stopped
 * goes to `removed`, what survived SIGKILL to `errors` (both worded for a teardown report).
 */
export async function killNamespaceProcesses(exec: ExecFn, ns: string, graceMs: number, errors: string[], removed: string[]): Promise<void> {
  let pids = await namespacePids(exec, ns);
  if (pids.length === 0) return;
  const names = new Map<number, string>();
  for (const pid of pids) names.set(pid, (await readFile(`/proc/${pid}/comm`, "utf8").catch(() => "?")).trim());
  const signal = (sig: NodeJS.Signals, list: number[]) => {
    for (const pid of list) {
      try {
        process.kill(pid, sig);
      } catch {
        /* exited meanwhile */
      }
    }
  };
  signal("SIGTERM", pids);
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    await sleep(50);
    pids = await namespacePids(exec, ns);
    if (pids.length === 0) break;
  }
  if (pids.length > 0) {
    signal("SIGKILL", pids);
    const killDeadline = Date.now() + 2000;
    while (Date.now() < killDeadline) {
      await sleep(50);
      pids = await namespacePids(exec, ns);
      if (pids.length === 0) break;
    }
  }
  for (const [pid, comm] of names) if (!pids.includes(pid)) removed.push(`process ${pid} (${comm}) in ${ns}`);
  if (pids.length > 0) errors.push(`processes still running in ${ns} after SIGKILL: ${pids.join(", ")}`);
}
