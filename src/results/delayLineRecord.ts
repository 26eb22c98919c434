import { z } from "zod";

/**
 * What the local target's delay line did with a run's real traffic, as results.json records it
 * (teardown.delayLine): each helper's own summary (the last line of its log, parsed by
 * targets/local/delayLine/helperProcess.ts) and the run's, all helpers together
 * (targets/local/delayLine/runSummary.ts). Beside the bring-up precision (shaping.delayLinePrecision),
 * which is measured on pings of an idle path, this says what the tools' own traffic met.
 */

/**
 * The helper's last words on stderr (delayline.c), what it did with the run's real traffic: what
 * it released and dropped, how much it held, and how late it let packets go. `dropped` is every
 * drop of its queues: the kernel's (read from /proc/net/netfilter/nfnetlink_queue at stop) and
 * its own, so 0 means none — unless the kernel's counts could not be read (null), when it is a
 * lower bound.
 */
export const HelperSummarySchema = z.object({
  released: z.number().int().nonnegative(),
  /** All drops: droppedQueueFull + droppedUndelivered + droppedHelperFull. */
  dropped: z.number().int().nonnegative(),
  /** The kernel's queue was at its maxlen (null: the kernel's counts could not be read). */
  droppedQueueFull: z.number().int().nonnegative().nullable(),
  /** The kernel could not put the packet's message on the helper's socket (it was full). */
  droppedUndelivered: z.number().int().nonnegative().nullable(),
  /** The helper held all it has room for. */
  droppedHelperFull: z.number().int().nonnegative(),
  /** Most packets held at once. */
  heldPeak: z.number().int().nonnegative(),
  /** Packets held past their own drawn delay behind the packet ahead (the in-order rule: a train closer than the spread). */
  heldBehind: z.number().int().nonnegative(),
  /** The most such a packet was held past its draw, µs. */
  heldBehindMaxUs: z.number().nonnegative(),
  lateP50Us: z.number().nonnegative(),
  lateP99Us: z.number().nonnegative(),
  lateMaxUs: z.number().nonnegative(),
  /** It stopped on an error of its own (exit 1), not because it was told to. */
  failed: z.boolean(),
});
export type HelperSummary = z.infer<typeof HelperSummarySchema>;

export const DelayLineHelperRecordSchema = z.object({
  /** Which helper: its host's label or namespace. */
  name: z.string(),
  /** Its summary, or null when its log has none (killed before it could write it, or died). */
  summary: HelperSummarySchema.nullable(),
});
export type DelayLineHelperRecord = z.infer<typeof DelayLineHelperRecordSchema>;

export const DelayLineRunSummarySchema = z.object({
  /** Helpers the run started (logs found). */
  helpers: z.number().int().nonnegative(),
  /** Helpers with no summary: killed or died. Their packets are not in the counts below. */
  unsummarized: z.array(z.string()),
  /** Helpers that stopped on an error of their own (exit 1): the delay line stopped mid-run there. */
  failed: z.array(z.string()),
  released: z.number().int().nonnegative(),
  /** Every drop the summaries count; a lower bound when `kernelDropsCounted` is false. */
  dropped: z.number().int().nonnegative(),
  /** Whether every summarized helper could read the kernel's drop counts of its queues. */
  kernelDropsCounted: z.boolean(),
  droppedQueueFull: z.number().int().nonnegative(),
  droppedUndelivered: z.number().int().nonnegative(),
  droppedHelperFull: z.number().int().nonnegative(),
  /** The most packets one helper held at once. */
  heldPeakMax: z.number().int().nonnegative(),
  /** Packets held past their drawn delay behind the packet ahead (in-order rule), all helpers. */
  heldBehind: z.number().int().nonnegative(),
  heldBehindMaxUs: z.number().nonnegative(),
  /** Release lateness: the largest per-helper p50 and p99, and the largest single lateness, µs. */
  worstHelperLateP50Us: z.number().nonnegative(),
  worstHelperLateP99Us: z.number().nonnegative(),
  lateMaxUs: z.number().nonnegative(),
  perHelper: z.array(DelayLineHelperRecordSchema),
});
export type DelayLineRunSummary = z.infer<typeof DelayLineRunSummarySchema>;

/**
 * What the delay line did with a run's real traffic, all its helpers together: the record the
 * local target keeps in results.json beside the bring-up precision (delayLine/precision.ts), which is
 * measured on 200 pings of an idle path and says nothing about what the tools' own traffic met.
 *
 * The helpers' lateness figures are quantiles of each helper's own packets; without the
 * histograms they cannot be merged into one quantile of all packets, so the record gives the
 * worst helper's, which bounds the pooled quantile from above (at the largest per-helper p99,
 * every helper has at least 99 % of its packets at or below it, so all packets together do too).
 * Counts are plain sums.
 */

/** One record of the delay line's behaviour in a run, from each helper's summary (parseHelperSummary of its log). */
export function summarizeDelayLineRun(helpers: readonly DelayLineHelperRecord[]): DelayLineRunSummary {
  const summarized = helpers.filter((h): h is { name: string; summary: HelperSummary } => h.summary !== null);
  const all = summarized.map((h) => h.summary);
  const sum = (f: (s: HelperSummary) => number) => all.reduce((a, s) => a + f(s), 0);
  const max = (f: (s: HelperSummary) => number) => all.reduce((a, s) => Math.max(a, f(s)), 0);
  return DelayLineRunSummarySchema.parse({
    helpers: helpers.length,
    unsummarized: helpers.filter((h) => h.summary === null).map((h) => h.name),
    failed: summarized.filter((h) => h.summary.failed).map((h) => h.name),
    released: sum((s) => s.released),
    dropped: sum((s) => s.dropped),
    kernelDropsCounted: all.every((s) => s.droppedQueueFull !== null && s.droppedUndelivered !== null),
    droppedQueueFull: sum((s) => s.droppedQueueFull ?? 0),
    droppedUndelivered: sum((s) => s.droppedUndelivered ?? 0),
    droppedHelperFull: sum((s) => s.droppedHelperFull),
    heldPeakMax: max((s) => s.heldPeak),
    heldBehind: sum((s) => s.heldBehind),
    heldBehindMaxUs: max((s) => s.heldBehindMaxUs),
    worstHelperLateP50Us: max((s) => s.lateP50Us),
    worstHelperLateP99Us: max((s) => s.lateP99Us),
    lateMaxUs: max((s) => s.lateMaxUs),
    perHelper: helpers.map((h) => ({ name: h.name, summary: h.summary })),
  });
}

/** Two teardowns' records as one (a run in waves, or resumed): their helpers together. */
export function mergeDelayLineRuns(a: DelayLineRunSummary | undefined, b: DelayLineRunSummary | undefined): DelayLineRunSummary | undefined {
  if (!a || !b) return a ?? b;
  return summarizeDelayLineRun([...a.perHelper, ...b.perHelper]);
}

/** The delay line's precision, measured at bring-up (targets/local/delayLine/precision.ts): pings of one pair without it and through it, quantile against the model's quantile. Single packets of one series: the delay line's error, no confidence interval. */
export const DelayLinePrecisionSchema = z.object({
  /** Modelled RTT the delay line adds at the median (both ends' egress delays), µs. */
  modelledP50Us: z.number().nonnegative(),
  /** Modelled added RTT at p99 (equal to modelledP50Us when the model has no spread), µs. */
  modelledP99Us: z.number().nonnegative(),
  /** Median RTT of the path without the delay line, µs. */
  baselineP50Us: z.number().nonnegative(),
  /** Median RTT with it, µs. */
  delayedP50Us: z.number().nonnegative(),
  /** 99th percentile of the RTT with it, µs. */
  delayedP99Us: z.number().nonnegative(),
  /** p50 error: delayed p50 − baseline p50 − modelled p50 (the delay line's bias), µs. */
  p50ErrorUs: z.number(),
  /** p99 error: delayed p99 − baseline p50 − modelled p99, µs. */
  p99ErrorUs: z.number(),
  /**
   * The "±N µs at p99" the shaping line states: the larger of |p50 error| and |p99 error|, so
   * that both the median and the tail of the delayed distribution lie within ±N of the model's.
   */
  precisionP99Us: z.number().nonnegative(),
  /** Pings behind the baseline and behind the delayed figures. */
  baselineSamples: z.number().int().positive(),
  delayedSamples: z.number().int().positive(),
});
export type DelayLinePrecision = z.infer<typeof DelayLinePrecisionSchema>;
