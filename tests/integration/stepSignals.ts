/**
 * Runs one workflow step's bash script the way GitHub's runner runs it, and when its output
 * matches a marker, does to it what the runner does (tests/integration/workflowRunner.ts calls
 * this as a child process, so that runJob stays synchronous):
 *
 * - "cancel": a cancelled run, or a step or job timeout — SIGINT to the step's process, SIGTERM
 *   7.5 s later, SIGKILL 2.5 s after that if it is still running (actions/runner
 *   src/Runner.Sdk/ProcessInvoker.cs: CancelAndKillProcessTree sends SIGINT, waits 7.5 s, SIGTERM,
 *   waits 2.5 s, then kills the process tree).
 * - "vanish": the runner machine is lost: everything of the job dies at once (SIGKILL to the
 *   step's whole process group, which holds every process the step started).
 *
 * The moment: its output matches `marker` (a regex), or `poll` (a bash command run every 250 ms
 * with the step's environment) exits 0 — e.g. "the emulator has created the resource group".
 *
 * Argument: the path of a JSON file { script, cwd, env, marker?, poll?, mode, resultFile }.
 * Writes { stdout, stderr, code, signal, events: [{ at (ms since start), what }] } to resultFile.
 */
import { spawn, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";

interface Job {
  script: string;
  cwd: string;
  env: Record<string, string>;
  marker?: string;
  poll?: string;
  mode: "cancel" | "vanish";
  resultFile: string;
}

const job = JSON.parse(readFileSync(process.argv[2]!, "utf8")) as Job;
const started = Date.now();
const events: { at: number; what: string }[] = [];
const note = (what: string) => events.push({ at: Date.now() - started, what });
// Its own process group: "vanish" kills the group, as a lost machine takes every process with it.
const child = spawn("bash", ["--noprofile", "--norc", "-eo", "pipefail", job.script], { cwd: job.cwd, env: job.env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
let stdout = "";
let stderr = "";
let triggered = false;
let exited = false;
const marker = job.marker === undefined ? undefined : new RegExp(job.marker);
const timers: NodeJS.Timeout[] = [];
const send = (signal: NodeJS.Signals, group: boolean) => {
  if (exited) return;
  note(`${signal} to ${group ? "the process group" : "the step's shell"}`);
  try {
    if (group) process.kill(-child.pid!, signal);
    else child.kill(signal);
  } catch (e) {
    note(`${signal}: ${(e as Error).message}`);
  }
};
const watch = (polled = false) => {
  if (triggered || !(polled || (marker && marker.test(stdout + stderr)))) return;
  triggered = true;
  note(polled ? `poll \`${job.poll}\` succeeded` : `marker /${job.marker}/ seen`);
  if (job.mode === "vanish") {
    send("SIGKILL", true);
    return;
  }
  send("SIGINT", false);
  timers.push(setTimeout(() => send("SIGTERM", false), 7_500));
  // ProcessInvoker kills the process tree at the end; the tree is the step's process group here.
  timers.push(setTimeout(() => send("SIGKILL", true), 10_000));
};
child.stdout.on("data", (d: Buffer) => {
  stdout += d.toString();
  watch();
});
child.stderr.on("data", (d: Buffer) => {
  stderr += d.toString();
  watch();
});
const poller = job.poll
  ? setInterval(() => {
      if (triggered || exited) return;
      if (spawnSync("bash", ["-c", job.poll!], { cwd: job.cwd, env: job.env, stdio: "ignore" }).status === 0) watch(true);
    }, 250)
  : undefined;
child.on("exit", (code, signal) => {
  exited = true;
  if (poller) clearInterval(poller);
  note(`exited: code ${code} signal ${signal}`);
  for (const t of timers) clearTimeout(t);
  // What a "vanished" step left behind dies with the machine: nothing of the group survives.
  if (job.mode === "vanish" && triggered) {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // The group is gone already.
    }
  }
  // The streams may still hold the last lines.
  setImmediate(() => writeFileSync(job.resultFile, JSON.stringify({ stdout, stderr, code, signal, triggered, events })));
});
