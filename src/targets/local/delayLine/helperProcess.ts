import { readFile } from "node:fs/promises";
import { HelperSummarySchema, type HelperSummary } from "../../../results/delayLineRecord.ts";
import { formatArgv, spawnDetached, type DetachedProcess } from "../exec.ts";
import { helperArgv, type DelayQueue, type HelperTuning } from "./delayLine.ts";

/**
 * Starting and stopping one host's delay-line helper. It runs detached (like sshd), inside the
 * host's namespace, its output appended to a log in the host's folder; `ip netns exec` execs it,
 * so the pid spawned is the helper's own.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// The summary's schema is results.json's (results/delayLineRecord.ts): teardown records it there.
export { HelperSummarySchema, type HelperSummary } from "../../../results/delayLineRecord.ts";

const SUMMARY =
  /delayline: released (\d+) packets, dropped (\d+) \(kernel queue full (\d+|n\/a), not delivered (\d+|n\/a), helper full (\d+)\); held at most (\d+); (\d+) held behind the packet ahead, by up to (\d+) µs; release late by p50 (\d+) µs, p99 (\d+) µs, max (\d+) µs/;
const FAILED = /^delayline: stopped by the error above/m;

/** The summary line of a helper's log, or null when it has none (still running, or killed). */
export function parseHelperSummary(log: string): HelperSummary | null {
  const m = SUMMARY.exec(log);
  if (!m) return null;
  const count = (s: string | undefined) => (s === "n/a" ? null : Number(s));
  const [released, dropped, queueFull, undelivered, helperFull, heldPeak, heldBehind, heldBehindMaxUs, lateP50Us, lateP99Us, lateMaxUs] = m.slice(1);
  return HelperSummarySchema.parse({
    released: Number(released),
    dropped: Number(dropped),
    droppedQueueFull: count(queueFull),
    droppedUndelivered: count(undelivered),
    droppedHelperFull: Number(helperFull),
    heldPeak: Number(heldPeak),
    heldBehind: Number(heldBehind),
    heldBehindMaxUs: Number(heldBehindMaxUs),
    lateP50Us: Number(lateP50Us),
    lateP99Us: Number(lateP99Us),
    lateMaxUs: Number(lateMaxUs),
    failed: FAILED.test(log),
  });
}

export interface RunningHelper {
  namespace: string;
  argv: string[];
  logPath: string;
  process: DetachedProcess;
}

export interface StartOptions {
  binary: string;
  namespace: string;
  queues: readonly DelayQueue[];
  logPath: string;
  tuning?: HelperTuning;
  /** How long the helper has to bind its queues. */
  readyTimeoutMs?: number;
}

/** Starts the helper and waits for its "ready" (queues bound): only then may rules send it packets. */
export async function startHelper(options: StartOptions): Promise<RunningHelper> {
  const argv = helperArgv(options.binary, options.namespace, options.queues, options.tuning);
  const proc = spawnDetached(argv, options.logPath);
  const helper: RunningHelper = { namespace: options.namespace, argv, logPath: options.logPath, process: proc };
  const deadline = Date.now() + (options.readyTimeoutMs ?? 5_000);
  for (;;) {
    const log = await readFile(options.logPath, "utf8").catch(() => "");
    if (/^ready$/m.test(log)) return helper;
    if (proc.exit) throw new Error(`delay line in ${options.namespace} exited (code ${proc.exit.code ?? proc.exit.signal}) instead of starting: \`${formatArgv(argv)}\`: ${log.trim() || "(no output)"}`);
    if (Date.now() > deadline) {
      await stopHelper(helper, 1_000);
      throw new Error(`delay line in ${options.namespace} did not bind its queues within ${options.readyTimeoutMs ?? 5_000} ms: \`${formatArgv(argv)}\`: ${log.trim() || "(no output)"}`);
    }
    await sleep(20);
  }
}

/**
 * SIGTERM (the helper lets go of what it holds and writes its summary), SIGKILL after
 * `graceMs`; resolves with the summary, or null when it had to be killed.
 */
export async function stopHelper(helper: RunningHelper, graceMs = 2_000): Promise<HelperSummary | null> {
  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(helper.process.pid, sig);
    } catch {
      // Gone already.
    }
  };
  if (!helper.process.exit) {
    signal("SIGTERM");
    const deadline = Date.now() + graceMs;
    while (!helper.process.exit && Date.now() < deadline) await sleep(10);
    if (!helper.process.exit) {
      signal("SIGKILL");
      const killDeadline = Date.now() + 2_000;
      while (!helper.process.exit && Date.now() < killDeadline) await sleep(10);
    }
  }
  return parseHelperSummary(await readFile(helper.logPath, "utf8").catch(() => ""));
}
