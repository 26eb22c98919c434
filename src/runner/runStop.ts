import type { RunStopRecord } from "../results/schema.ts";

/**
 * Why a run was told to stop measuring: what its AbortController is aborted with. A signal
 * (Ctrl-C, kill, a hang-up, a CI runner cancelling the step) or the run's own `--time-limit`.
 * Either way the run stops the same way — cells in flight interrupted, the rest recorded as not
 * run, everything torn down with the teardown's full allowance — and results.json says which.
 */
export type StopCause = { by: "signal"; signal: NodeJS.Signals } | { by: "time-limit"; minutes: number };

export class RunStop extends Error {
  readonly stop: StopCause;
  readonly at: Date;

  constructor(stop: StopCause, at = new Date()) {
    super(stop.by === "signal" ? `stopped by ${stop.signal}` : `stopped at its time limit of ${formatMinutes(stop.minutes)}`);
    this.name = "RunStop";
    this.stop = stop;
    this.at = at;
  }

  /** What results.json records of it. */
  record(): RunStopRecord {
    return this.stop.by === "signal"
      ? { by: "signal", signal: this.stop.signal, at: this.at.toISOString() }
      : { by: "time-limit", timeLimitMinutes: this.stop.minutes, at: this.at.toISOString() };
  }
}

/** The RunStop a signal was aborted with; undefined when it was not aborted, or aborted without one (a test, `latlab resume`). */
export function stopOf(signal: AbortSignal): RunStop | undefined {
  return signal.aborted && signal.reason instanceof RunStop ? signal.reason : undefined;
}

/** "30 min", "0.5 min": as the user wrote it, with its unit. */
export const formatMinutes = (minutes: number) => `${minutes} min`;

/**
 * The longest `--time-limit`: Node's timers hold at most 2^31 − 1 ms (about 24.8 days; a longer
 * delay is taken as 1 ms — Node's documentation of setTimeout), so a longer limit is refused
 * rather than firing at once.
 */
export const MAX_TIME_LIMIT_MINUTES = Math.floor((2 ** 31 - 1) / 60_000);

export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * Aborts `controller` with a time-limit RunStop once `minutes` have passed, unless something
 * stopped it first (its first reason stands). Returns the disarm: called when the run has ended,
 * so that nothing fires after it. The timer does not keep the process alive by itself.
 */
export function armTimeLimit(controller: AbortController, minutes: number, timers: Timers = realTimers, onReached?: () => void): () => void {
  if (!(minutes > 0) || minutes > MAX_TIME_LIMIT_MINUTES) throw new RangeError(`time limit: expected minutes in (0, ${MAX_TIME_LIMIT_MINUTES}], got ${minutes}`);
  const handle = timers.setTimeout(() => {
    if (controller.signal.aborted) return;
    onReached?.();
    controller.abort(new RunStop({ by: "time-limit", minutes }));
  }, minutes * 60_000);
  (handle as { unref?: () => void } | undefined)?.unref?.();
  return () => timers.clearTimeout(handle);
}

export interface StopSignalsOptions {
  /** Aborted with the first stop's RunStop: the run stops measuring and tears down. */
  controller: AbortController;
  /** Aborted by a second, different signal when the target can hand its teardown over (Target.handOver). */
  handOver: AbortController;
  /** Has the run brought anything up (or started to)? */
  running: () => boolean;
  /** Can the run's target hand its teardown over? */
  canHandOver: () => boolean;
  /** Where the decisions are said (stderr). */
  write: (text: string) => void;
  /** Named in how to hand over (default this process's). */
  pid?: number;
}

/**
 * What each stop signal does to a `latlab run`, decided here alone: child processes that could
 * hear the terminal's Ctrl-C themselves (Pulumi: lifecycle/pulumiSession.ts) do not, so this is
 * all that happens.
 *
 *   - the first stops the run: cells in flight interrupted, everything torn down;
 *   - the same signal again never cancels the teardown (a second Ctrl-C of an impatient person):
 *     it goes on, and the message says what would stop waiting for it;
 *   - a different one after it (GitHub's runner: SIGINT, SIGTERM 7.5 s later, SIGKILL 2.5 s after
 *     that) hands the teardown over when the target can (Target.handOver, issue 22) — the run's
 *     resources are deleted without waiting, latlab exits, `latlab destroy` finishes;
 *   - anything after a hand-over began changes nothing.
 */
export function stopSignalHandler(o: StopSignalsOptions): (signal: NodeJS.Signals) => void {
  let first: NodeJS.Signals | undefined;
  let count = 0;
  const pid = o.pid ?? process.pid;
  const goesOn = "teardown continues; it reports what it could not remove when it ends";
  return (signal) => {
    count++;
    first ??= signal;
    const stop = new RunStop({ by: "signal", signal });
    if (!o.running()) o.write(`\n${signal}: stopping; nothing has been brought up yet\n`);
    else if (count === 1) o.write(o.controller.signal.aborted ? `\n${signal}: already stopping (its time limit); the teardown goes on…\n` : `\n${signal}: stopping after the current step and tearing everything down…\n`);
    else if (o.handOver.signal.aborted) o.write(`${signal}: the teardown is being handed over already; exiting…\n`);
    else if (signal !== first && o.canHandOver()) {
      o.write(`${signal} after ${first}: the process is about to be killed; handing the teardown over and exiting…\n`);
      o.handOver.abort(stop);
    } else if (o.canHandOver()) {
      // The hand-over is a signal other than the first: name one that is (SIGTERM after Ctrl-C, SIGINT after a kill).
      const other = first === "SIGTERM" ? { name: "SIGINT", kill: `kill -INT ${pid}` } : { name: "SIGTERM", kill: `kill ${pid}` };
      o.write(
        `${signal} again: ${goesOn} (another ${signal} changes nothing). Not to wait for it: ${other.name} (\`${other.kill}\`) hands it over — ` +
          "the run's resources are deleted without waiting, latlab exits, and `latlab destroy` finishes\n",
      );
    } else {
      o.write(`${signal}${signal === first ? " again" : ` after ${first}`}: ${goesOn} (this target cannot hand it over: further signals change nothing)\n`);
    }
    o.controller.abort(stop);
  };
}
