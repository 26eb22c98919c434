/**
 * One plain sentence per comparison — what changed, by how much, with its 95 % CI and what the CI
 * is over — for the HTML report and report.md. A CI that includes 0 is said to be no clear
 * difference; a CI over one deployment a side says the hosts drawn may explain it. Pure.
 */
import type { Comparison, Results } from "../results/schema.ts";
import { fmt, measureLabels, unitLabel } from "./table.ts";

export interface Verdict {
  variant: string;
  baseline: string;
  measure: number;
  pair: string;
  /** The sentence. */
  text: string;
  /** "lower", "higher", "no clear difference", or "no CI" (too few samples). */
  finding: "lower" | "higher" | "no clear difference" | "no CI";
}

/** "ppg false → true" (the axes that differ), or the variant ids when no axis tells them apart. */
export function changeLabel(results: Pick<Results, "variants">, variant: string, baseline: string): string {
  const v = results.variants.find((x) => x.id === variant)?.axes ?? {};
  const b = results.variants.find((x) => x.id === baseline)?.axes ?? {};
  const keys = [...new Set([...Object.keys(v), ...Object.keys(b)])].filter((k) => JSON.stringify(v[k]) !== JSON.stringify(b[k]));
  return keys.length ? keys.map((k) => `${k} ${String(b[k])} → ${String(v[k])}`).join(", ") : `${baseline} → ${variant}`;
}

const signed = (v: number) => `${v >= 0 ? "+" : "-"}${fmt(Math.abs(v))}`;

function overWords(c: Comparison): string {
  const { unit, units } = c.inference;
  if (unit === "replica") return `over ${units.baseline} + ${units.candidate} replicas (independent deployments)`;
  if (unit === "repetition") return `over ${units.baseline} + ${units.candidate} repetitions on the same hosts (the draw of hosts is not covered)`;
  return "over sample blocks of one deployment a side (the hosts drawn may explain it; no p-value)";
}

export function verdictOf(results: Pick<Results, "variants" | "measurements">, c: Comparison, labels = measureLabels(results.measurements), multiPair = false): Verdict {
  const u = unitLabel(c.unit);
  const what = `${labels.get(c.measure) ?? c.tool} ${c.metric} (mean)${multiPair ? ` ${c.pair}` : ""}`;
  const head = `${changeLabel(results, c.variant, c.baseline)}: ${what}`;
  const base = { variant: c.variant, baseline: c.baseline, measure: c.measure, pair: c.pair };
  const d = c.diffMean;
  if (!d) {
    return { ...base, finding: "no CI", text: `${head}: ${fmt(c.baselineSummary.mean)} → ${fmt(c.variantSummary.mean)} ${u}; no confidence interval (too few samples or units a side), so no finding.` };
  }
  const pct = c.pctChangeMean === undefined ? "" : ` (${signed(c.pctChangeMean)} %)`;
  const ci = `95 % CI [${fmt(d.ci95[0])}, ${fmt(d.ci95[1])}] ${u}`;
  const p = d.welch ? `, Welch p = ${d.welch.p < 0.001 ? d.welch.p.toExponential(1) : d.welch.p.toFixed(3)}` : "";
  if (d.ci95[0] <= 0 && d.ci95[1] >= 0) {
    return { ...base, finding: "no clear difference", text: `${head}: no clear difference — Δ ${signed(d.estimate)} ${u}${pct}, ${ci} includes 0, ${overWords(c)}${p}.` };
  }
  const finding = d.estimate < 0 ? "lower" : "higher";
  return { ...base, finding, text: `${head}: ${finding} by ${fmt(Math.abs(d.estimate))} ${u}${pct}, ${ci}, ${overWords(c)}${p}.` };
}

/** Every comparison's verdict, in the results' order. */
export function verdicts(results: Pick<Results, "variants" | "measurements" | "comparisons">): Verdict[] {
  const labels = measureLabels(results.measurements);
  const pairsOf = new Map<number, Set<string>>();
  for (const c of results.comparisons) pairsOf.set(c.measure, (pairsOf.get(c.measure) ?? new Set()).add(c.pair));
  return results.comparisons.map((c) => verdictOf(results, c, labels, (pairsOf.get(c.measure)?.size ?? 0) > 1));
}
