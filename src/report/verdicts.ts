/**
 * One plain sentence per comparison — what changed, by how much, with its 95 % CI and what the CI
 * is over — for the HTML report and report.md. A CI that includes 0 is said to be no clear
 * difference; a CI over one deployment a side says the hosts drawn may explain it; a PPG not
 * Aligned, or a baseline that ran only in another wave, is said at the end. Pure.
 */
import type { Comparison, Results } from "../results/schema.ts";
import { comparisonCaveats } from "../results/comparisons.ts";
import { caveatSentence } from "../results/placement.ts";
import { waveCaveatSentence } from "../results/waveRecords.ts";
import { BANDWIDTH_UNMODELLED_CAVEAT, emulatedTarget, fmt, formatP, HOPS_EMULATED_CAVEAT, measureLabels, modelledLabel, notEmulatedAxes, UNSHAPED_CAVEAT, unitLabel } from "./wording.ts";

export interface Verdict {
  variant: string;
  baseline: string;
  measure: number;
  pair: string;
  /** The sentence. */
  text: string;
  /** "lower", "higher", "no clear difference", or "no CI" (too few samples). */
  finding: "lower" | "higher" | "no clear difference" | "no CI";
  /** Set when a side ran on a PPG ARM did not report Aligned: the sentence saying so (also at the end of `text`). */
  placement?: string;
  /** Set when the baseline ran only in other waves than the candidate (FLAGGED): the sentence saying so (also at the end of `text`). */
  waves?: string;
}

/** "ppg false → true" (the axes that differ), or the variant ids when no axis tells them apart. */
export function changeLabel(results: Pick<Results, "variants">, variant: string, baseline: string): string {
  const v = results.variants.find((x) => x.id === variant)?.axes ?? {};
  const b = results.variants.find((x) => x.id === baseline)?.axes ?? {};
  const keys = [...new Set([...Object.keys(v), ...Object.keys(b)])].filter((k) => JSON.stringify(v[k]) !== JSON.stringify(b[k]));
  return keys.length ? keys.map((k) => `${k} ${String(b[k])} → ${String(v[k])}`).join(", ") : `${baseline} → ${variant}`;
}

const signed = (v: number) => `${v >= 0 ? "+" : "-"}${fmt(Math.abs(v))}`;
/** A label as a sentence of a verdict: capitalised, ending in a full stop. */
const sentence = (label: string) => `${label[0]!.toUpperCase()}${label.slice(1)}.`;

function overWords(c: Comparison): string {
  const { unit, units } = c.inference;
  if (unit === "replica") return `over ${units.baseline} + ${units.candidate} replicas (independent deployments)`;
  if (unit === "repetition") return `over ${units.baseline} + ${units.candidate} repetitions on the same hosts (the draw of hosts is not covered)`;
  return "over sample blocks of one deployment a side (the hosts drawn may explain it; no p-value)";
}

/**
 * The %-change that goes with Δ: over the same units. Over replicas or repetitions Δ is the
 * difference of the unit means (each unit weighs the same), so the % is Δ over the mean of the
 * baseline's unit means, not the merged samples' %-change (replicas of unequal size would make the
 * two disagree, even in sign).
 */
function pctOf(c: Comparison): number | undefined {
  const d = c.diffMean;
  const units = c.inference.unitStatistics?.baseline.mean;
  if (d && units?.length) {
    const base = units.reduce((a, b) => a + b, 0) / units.length;
    return base !== 0 ? (100 * d.estimate) / base : undefined;
  }
  return c.pctChangeMean;
}

/** What a run's caveats are read from: its target, shaping and hosts' records. */
export type CaveatRun = Pick<Results, "variants" | "environment" | "target">;

/**
 * What a comparison's difference is on this run, said with its finding (the verdict sentence and
 * the table cell alike), first that applies: noise — an axis the target does not emulate for this
 * measure (notEmulatedAxes: Accelerated Networking's throughput where only its latency is
 * modelled); the model's — modelledLabel, by measure; a throughput difference on latlab's hosts
 * without both ends capped; a hop count of the emulated routing; latency not shaped at all.
 */
export function comparisonCaveat(run: CaveatRun, c: Comparison): { text: string; kind: "noise" | "modelled" | "machine" } | undefined {
  const axesOf = (id: string) => run.variants.find((x) => x.id === id)?.axes ?? {};
  const differ = (k: string) => JSON.stringify(axesOf(c.variant)[k]) !== JSON.stringify(axesOf(c.baseline)[k]);
  const unemulated = notEmulatedAxes(run, c.metric).filter(differ);
  if (unemulated.length) {
    // Features modelled for latency only are not emulated for this measure: said as such.
    const none = new Set(notEmulatedAxes(run));
    const what = unemulated.map((k) => (none.has(k) ? k : `${k} (modelled for latency only)`)).join(", ");
    return { kind: "noise", text: `${what} is not emulated on this target${unemulated.every((k) => none.has(k)) ? "" : ` for ${c.metric}`}: this difference is noise here, not a finding.` };
  }
  const modelled = modelledLabel(run, c);
  if (modelled) return { kind: "modelled", text: sentence(modelled) };
  if (emulatedTarget(run) && c.metric === "throughput") return { kind: "machine", text: BANDWIDTH_UNMODELLED_CAVEAT };
  if (emulatedTarget(run) && c.metric === "hops") return { kind: "machine", text: HOPS_EMULATED_CAVEAT };
  if (run.environment.shaping.latency === "unavailable") return { kind: "machine", text: UNSHAPED_CAVEAT };
  return undefined;
}

export interface VerdictContext {
  /** The run the comparison is from (target, shaping, hosts): its caveat (comparisonCaveat); none without it. */
  run?: CaveatRun;
  /** Name the variant and baseline too: two comparisons would otherwise read the same. */
  nameVariants?: boolean;
}

export function verdictOf(results: Pick<Results, "variants" | "measurements">, c: Comparison, labels = measureLabels(results.measurements), multiPair = false, context: VerdictContext = {}): Verdict {
  const v = verdictSentence(results, c, labels, multiPair, context);
  // Whatever the finding: a PPG that is not Aligned (or not confirmed) is not the placement asked for.
  const placement = caveatSentence(comparisonCaveats(results, c));
  // Whatever the finding: a baseline measured only in other waves (other hosts, another time).
  const waves = waveCaveatSentence(c);
  return {
    ...v,
    text: [v.text, placement, waves].filter(Boolean).join(" "),
    ...(placement ? { placement } : {}),
    ...(waves ? { waves } : {}),
  };
}

function verdictSentence(results: Pick<Results, "variants" | "measurements">, c: Comparison, labels: Map<number, string>, multiPair: boolean, context: VerdictContext): Verdict {
  const u = unitLabel(c.unit);
  const what = `${labels.get(c.measure) ?? c.tool} ${c.metric} (mean)${multiPair ? ` ${c.pair}` : ""}`;
  const change = changeLabel(results, c.variant, c.baseline);
  const head = `${change}${context.nameVariants ? ` (${c.variant} vs ${c.baseline})` : ""}: ${what}`;
  // Said with any finding on a target where it cannot be the cloud's.
  const said = context.run ? comparisonCaveat(context.run, c) : undefined;
  const caveat = said ? ` ${said.text}` : "";
  // The model's answer is one whether it finds a difference or none: said with both.
  const modelledNoDifference = said?.kind === "modelled" ? caveat : "";
  const base = { variant: c.variant, baseline: c.baseline, measure: c.measure, pair: c.pair };
  const d = c.diffMean;
  if (!d) {
    return { ...base, finding: "no CI", text: `${head}: ${fmt(c.baselineSummary.mean)} → ${fmt(c.variantSummary.mean)} ${u}; no confidence interval (too few samples or units a side), so no finding.` };
  }
  const pctValue = pctOf(c);
  const pct = pctValue === undefined ? "" : ` (${signed(pctValue)} %)`;
  const ci = `95 % CI [${fmt(d.ci95[0])}, ${fmt(d.ci95[1])}] ${u}`;
  const p = d.welch ? `, Welch p = ${formatP(d.welch.p)}` : "";
  if (d.ci95[0] <= 0 && d.ci95[1] >= 0) {
    return { ...base, finding: "no clear difference", text: `${head}: no clear difference — Δ ${signed(d.estimate)} ${u}${pct}, ${ci} includes 0, ${overWords(c)}${p}.${modelledNoDifference}` };
  }
  const finding = d.estimate < 0 ? "lower" : "higher";
  return { ...base, finding, text: `${head}: ${finding} by ${fmt(Math.abs(d.estimate))} ${u}${pct}, ${ci}, ${overWords(c)}${p}.${caveat}` };
}

/** Whether two comparisons of one measure and pair would read the same by their changed axes alone. */
export function changeLabelsClash(results: Pick<Results, "variants" | "comparisons">): boolean {
  const seen = new Set<string>();
  for (const c of results.comparisons) {
    const key = `${c.measure}|${c.pair}|${changeLabel(results, c.variant, c.baseline)}`;
    if (seen.has(key)) return true;
    seen.add(key);
  }
  return false;
}

/**
 * A row's verdict as a table cell: "baseline" on a baseline's row, the finding on a compared row
 * ("*" when it has a caveat — a PPG not Aligned, a baseline in another wave, a difference in what
 * the target does not emulate, latency not shaped — the caveat returned for a note under the
 * table), else "—". Where latlab's model made the measure (wording.ts modelledLabel: an RTT with
 * latency applied, a throughput capped on both ends), a finding reads "(modelled)" and its note
 * says whose model it is.
 */
export function verdictCell(results: Pick<Results, "variants" | "measurements" | "environment" | "target">, variant: Pick<Results["variants"][number], "id" | "baseline">, c: Comparison | undefined, labels: Map<number, string>, multiPair: boolean): { cell: string; caveat?: string } {
  if (!c) return { cell: variant.baseline === variant.id ? "baseline" : "—" };
  const v = verdictOf(results, c, labels, multiPair);
  // The same caveats as the report's verdict sentences (verdictOf): a marked cell, not a bare "lower".
  const said = comparisonCaveat(results, c);
  const finding = v.finding === "lower" || v.finding === "higher";
  const noise = said?.kind === "noise" || (said?.kind === "modelled" && v.finding !== "no CI") || (said?.kind === "machine" && finding) ? said.text : undefined;
  const cell = said?.kind === "modelled" && v.finding !== "no CI" ? `${v.finding} (modelled)` : v.finding;
  const caveat = [noise, v.placement, v.waves].filter(Boolean).join(" ");
  return caveat ? { cell: `${cell} *`, caveat } : { cell };
}

/** Every comparison's verdict, in the results' order. */
export function verdicts(results: Pick<Results, "variants" | "measurements" | "comparisons" | "environment" | "target">): Verdict[] {
  const labels = measureLabels(results.measurements);
  const pairsOf = new Map<number, Set<string>>();
  for (const c of results.comparisons) pairsOf.set(c.measure, (pairsOf.get(c.measure) ?? new Set()).add(c.pair));
  const context: VerdictContext = { run: results, nameVariants: changeLabelsClash(results) };
  return results.comparisons.map((c) => verdictOf(results, c, labels, (pairsOf.get(c.measure)?.size ?? 0) > 1, context));
}
