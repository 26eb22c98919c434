import { z } from "zod";
import { mergeDelayLineRuns } from "./delayLineRecord.ts";
import type { Comparison, Measurement, Results, TeardownReport } from "./schema.ts";

/**
 * A run made in waves (plan/waves.ts: the subscription's quota, or --max-vcpus, could not hold
 * every deployment at once): which deployments each wave held and what it took, in results.json;
 * and, on each comparison, which waves its units came from.
 */

export const WaveRunSchema = z.object({
  /** 1-based, as printed ("wave 2 of 3"). */
  wave: z.number().int().positive(),
  deployments: z.array(z.string()),
  variants: z.array(z.string()),
  replicas: z.array(z.number().int().nonnegative()),
  /** The run id the target brought this wave up under (`<runId>-w<n>`: its own stack and resource group on Azure). */
  targetRunId: z.string(),
  startedAt: z.string(),
  bringUpSeconds: z.number().nonnegative(),
  cellsSeconds: z.number().nonnegative(),
  teardownSeconds: z.number().nonnegative(),
  /** This wave's teardown ("not-started": the wave never came up, or the run stopped before tearing it down). */
  teardown: z.enum(["ok", "failed", "not-started"]),
  /** What the target said of this wave (stack, resource group…). */
  facts: z.record(z.string(), z.string()),
});
export type WaveRun = z.infer<typeof WaveRunSchema>;

export const WavesRecordSchema = z.object({
  /** What the waves were sized against ("the subscription's free quota, read live", "--max-vcpus 8"…). */
  limits: z.string(),
  /** The limits all deployments at once would have exceeded. */
  reasons: z.array(z.string()),
  /** Planned waves, in order; a wave the run never reached has no entry in `runs`. */
  planned: z.number().int().positive(),
  /** Each planned wave's deployments, in order, reached or not: what `latlab resume` keeps. Absent in results written before latlab recorded it. */
  plannedWaves: z.array(z.array(z.string())).optional(),
  runs: z.array(WaveRunSchema),
});
export type WavesRecord = z.infer<typeof WavesRecordSchema>;

/** On a comparison of a run made in waves: the waves its units (replicas) came from. */
export const WaveNoteSchema = z.object({
  /** Per wave holding either side: its units (distinct replicas) of each side. */
  waves: z.array(z.object({ wave: z.number().int().positive(), baseline: z.number().int().nonnegative(), candidate: z.number().int().nonnegative() })),
  /** Every wave that held one side held the other: each unit was measured beside the other side's. */
  balanced: z.boolean(),
  /** No wave held both sides: the baseline ran only in other waves, so the difference includes the waves' (other hosts, another time). */
  baselineElsewhere: z.boolean(),
});
export type WaveNote = z.infer<typeof WaveNoteSchema>;

/** Sums wave teardowns into the run's: failed if any failed; errors prefixed with their wave; the delay line's helpers together. */
export function mergeTeardown(so: TeardownReport, next: TeardownReport, prefix: string): TeardownReport {
  const errors = [...so.errors, ...next.errors.map((e) => `${prefix}${e}`)];
  const removed = [...so.removed, ...next.removed];
  const delayLine = mergeDelayLineRuns(so.delayLine, next.delayLine);
  const rest = { errors, removed, ...(delayLine ? { delayLine } : {}) };
  if (so.status === "not-started") return { status: next.status, ...rest };
  if (next.status === "not-started") return { status: so.status, ...rest };
  return { status: so.status === "failed" || next.status === "failed" ? "failed" : "ok", ...rest };
}

const list = (waves: readonly number[]) => waves.map((w) => w + 1).join(", ");

/**
 * The waves of each comparison's units, and a note saying it (CLI table, report): the sides'
 * replicas per wave, whether each wave held both sides, and — flagged — a variant whose baseline
 * ran only in other waves. `waveOf`: deployment → 0-based wave. Comparisons are returned anew.
 */
export function withWaveNotes(comparisons: readonly Comparison[], measurements: readonly Measurement[], waveOf: ReadonlyMap<string, number>): Comparison[] {
  return comparisons.map((c) => {
    const side = (variant: string) => {
      const byWave = new Map<number, Set<number>>();
      for (const m of measurements) {
        if (m.status !== "ok" || m.variant !== variant || m.measure !== c.measure || `${m.from}->${m.to}` !== c.pair) continue;
        const w = waveOf.get(m.deployment);
        if (w === undefined) continue;
        byWave.set(w, (byWave.get(w) ?? new Set()).add(m.replica));
      }
      return byWave;
    };
    const base = side(c.baseline);
    const cand = side(c.variant);
    const all = [...new Set([...base.keys(), ...cand.keys()])].sort((a, b) => a - b);
    if (!all.length) return c;
    const shared = all.filter((w) => base.has(w) && cand.has(w));
    const note: WaveNote = {
      waves: all.map((w) => ({ wave: w + 1, baseline: base.get(w)?.size ?? 0, candidate: cand.get(w)?.size ?? 0 })),
      balanced: shared.length === all.length,
      baselineElsewhere: shared.length === 0,
    };
    const onlyBase = all.filter((w) => base.has(w) && !cand.has(w));
    const onlyCand = all.filter((w) => cand.has(w) && !base.has(w));
    const text = note.baselineElsewhere
      ? `${c.variant} vs ${c.baseline}: FLAGGED — the baseline ran only in wave ${list(onlyBase)}, the candidate only in wave ${list(onlyCand)}: the difference includes the waves' (other hosts, another time) and cannot be told apart from the variant's`
      : !note.balanced
        ? `${c.variant} vs ${c.baseline}: units from waves ${list(all)}; wave ${list([...onlyBase, ...onlyCand].sort((a, b) => a - b))} held one side only, so those units are compared across waves`
        : all.length === 1
          ? "run in waves (quota): both sides of each comparison measured in the same wave"
          : `run in waves (quota): units from ${all.length} waves, each wave holding both sides`;
    return { ...c, inference: { ...c.inference, waves: note, note: c.inference.note ? `${c.inference.note}; ${text}` : text } };
  });
}

/** The waves that held only the baseline, and those that held only the candidate (1-based), from a comparison's wave note. */
function oneSided(note: WaveNote): { baseline: number[]; candidate: number[] } {
  return { baseline: note.waves.filter((w) => w.baseline > 0 && w.candidate === 0).map((w) => w.wave), candidate: note.waves.filter((w) => w.candidate > 0 && w.baseline === 0).map((w) => w.wave) };
}

/**
 * The sentence a comparison's verdict ends with when its baseline ran only in other waves (as the
 * placement caveat does): the difference is the waves' as much as the variant's. Empty otherwise.
 */
export function waveCaveatSentence(c: Pick<Comparison, "inference">): string {
  const note = c.inference.waves;
  if (!note?.baselineElsewhere) return "";
  const { baseline, candidate } = oneSided(note);
  return `Waves: FLAGGED — the baseline ran only in wave ${baseline.join(", ")}, the candidate only in wave ${candidate.join(", ")} (other hosts, another time), so this difference includes the waves' and cannot be told apart from the variant's.`;
}

/** The same, short, for a table's row ("over" column). Empty when the baseline shared a wave with the candidate. */
export function waveCaveatCell(c: Pick<Comparison, "inference">): string {
  const note = c.inference.waves;
  if (!note?.baselineElsewhere) return "";
  const { baseline, candidate } = oneSided(note);
  return `FLAGGED: baseline in wave ${baseline.join(", ")}, candidate in wave ${candidate.join(", ")}`;
}

/**
 * Baseline groups (a baseline and the variants compared with it) that did not run in the same
 * waves: each comparison may be within a wave, but reading one group's figures against another's
 * (accelnet's effect across ppg-availability-set's rows, one placement against another in
 * accelnet-on-off) compares waves too. One note naming the groups of each wave; undefined for a
 * run in one wave, or when every wave held the same groups.
 */
export function crossGroupWaveNote(results: Pick<Results, "variants" | "waves">): string | undefined {
  const runs = results.waves?.runs ?? [];
  if (runs.length < 2) return undefined;
  const baselineOf = new Map(results.variants.map((v) => [v.id, v.baseline]));
  const order = new Map(results.variants.map((v, i) => [v.id, i]));
  const groupsOf = runs.map((r) => [...new Set(r.variants.map((v) => baselineOf.get(v) ?? v))].sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0)));
  const all = new Set(groupsOf.flat());
  if (all.size < 2 || groupsOf.every((g) => g.length === all.size)) return undefined;
  const perWave = runs.map((r, i) => `wave ${r.wave}: ${groupsOf[i]!.map((g) => `the group of baseline ${g}`).join(", ")}`);
  return `variants of different baseline groups ran in different waves (other hosts, another time): reading across them compares waves too — ${perWave.join("; ")}`;
}
