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
