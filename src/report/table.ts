import Table from "cli-table3";
import type { Measurement, Results } from "../results/schema.ts";
import { summarizeMany } from "../results/summarize.ts";
import { findTool } from "../tools/registry.ts";

const fmt = (v: number) => (Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2));
const pct = (v: number) => `${v >= 0 ? "+" : ""}${v.toFixed(1)}%`;
// Below ~1e-300 a double underflows to 0: say "<1e-15" rather than a false "0".
const formatP = (p: number) => (p < 1e-15 ? "<1e-15" : p < 0.001 ? p.toExponential(1) : p.toFixed(3));
const unitLabel = (unit: string) => (unit === "us" ? "µs" : unit);
const metricLabel = (metric: string, unit: string) => (metric === unit ? metric : `${metric} ${unitLabel(unit)}`);
const pairOf = (m: { from: string; to: string }) => `${m.from}->${m.to}`;

/**
 * A name per measure: the tool, plus the parameters that tell it apart from other measures of
 * the same tool (`iperf3 window=32M`), so two entries of one tool never share a row.
 */
export function measureLabels(measurements: readonly Measurement[]): Map<number, string> {
  const params = new Map<number, { tool: string; params: Record<string, unknown> }>();
  for (const m of measurements) if (!params.has(m.measure)) params.set(m.measure, { tool: m.tool, params: m.params });
  const labels = new Map<number, string>();
  for (const [index, { tool, params: p }] of params) {
    const siblings = [...params.values()].filter((o) => o.tool === tool);
    if (siblings.length === 1) {
      labels.set(index, tool);
      continue;
    }
    const keys = [...new Set(siblings.flatMap((o) => Object.keys(o.params)))].filter(
      (k) => new Set(siblings.map((o) => JSON.stringify(o.params[k]))).size > 1,
    );
    labels.set(index, `${tool} ${keys.map((k) => `${k}=${p[k] === undefined ? "-" : String(p[k])}`).join(" ")}`.trim());
  }
  return labels;
}

/**
 * The seeds' tables, from results: per variant, measure and (when several) host pair: n / mean /
 * p50 / p95 / p99, and against the variant's baseline the ratio and %-change of the mean with a
 * 95% CI of the difference and a rank test; then pair ratios, tool notes, failures, teardown.
 * `samplesOf` gives a measurement's samples (kept out of results.json, in samples/).
 */
export function comparisonTable(results: Results, samplesOf: (cellId: string) => number[]): string {
  const labels = measureLabels(results.measurements);
  const multiPair = [...new Set(results.measurements.map((m) => `${m.variant}/${m.measure}`))].some(
    (k) => new Set(results.measurements.filter((m) => `${m.variant}/${m.measure}` === k).map(pairOf)).size > 1,
  );
  const table = new Table({
    head: ["variant", "measure", ...(multiPair ? ["pair"] : []), "metric", "n", "mean", "p50", "p95", "p99", "min", "max", "vs baseline", "change", "95% CI of Δmean", "MWU p"],
    style: { head: [], border: [], compact: true },
  });
  const measures = [...labels.keys()].sort((a, b) => a - b);
  for (const variant of results.variants) {
    const isBaseline = variant.baseline === variant.id;
    for (const measure of measures) {
      const ofMeasure = results.measurements.filter((m) => m.variant === variant.id && m.measure === measure);
      const pairs = multiPair ? [...new Set(ofMeasure.map(pairOf))] : [undefined];
      for (const pair of pairs) {
        const rows = ofMeasure.filter((m) => pair === undefined || pairOf(m) === pair);
        const ok = rows.filter((m) => m.status === "ok" && m.summary);
        const head = [isBaseline ? `${variant.id} (baseline)` : variant.id, labels.get(measure)!, ...(pair ? [pair] : [])];
        if (!ok.length) {
          if (rows.length) table.push([...head, "—", "0", { colSpan: 10, content: `all ${rows.length} failed` }]);
          continue;
        }
        const first = ok[0]!.summary!;
        const merged = summarizeMany(first.metric, first.unit, ok.map((m) => samplesOf(m.cell))) ?? (ok.length === 1 ? first : undefined);
        if (!merged) continue;
        const cmp = pairs.length === 1 ? results.comparisons.find((c) => c.variant === variant.id && c.measure === measure) : undefined;
        table.push([
          ...head,
          metricLabel(merged.metric, merged.unit),
          String(merged.count),
          fmt(merged.mean),
          fmt(merged.p50),
          merged.p95 === undefined ? "—" : fmt(merged.p95),
          fmt(merged.p99),
          fmt(merged.min),
          fmt(merged.max),
          isBaseline ? "1.00×" : cmp ? `${cmp.ratioMean.toFixed(2)}×` : "—",
          isBaseline ? "" : cmp ? pct(cmp.pctChangeMean) : "",
          cmp?.diffMean ? `[${fmt(cmp.diffMean.ci95[0])}, ${fmt(cmp.diffMean.ci95[1])}]` : "",
          cmp?.mannWhitney ? formatP(cmp.mannWhitney.p) : "",
        ]);
      }
    }
  }
  const lines = [`${results.experiment.name} on ${results.target} — ${results.status}, run ${results.runId}`, table.toString()];

  if (results.pairComparisons.length) {
    const pairs = new Table({ head: ["variant", "measure", "pair", "vs", "ratio (mean)", "change", "95% CI of Δmean", "MWU p"], style: { head: [], border: [], compact: true } });
    for (const c of results.pairComparisons) {
      pairs.push([
        c.variant,
        labels.get(c.measure) ?? c.tool,
        c.pair,
        c.baselinePair,
        `${c.ratioMean.toFixed(2)}×`,
        pct(c.pctChangeMean),
        c.diffMean ? `[${fmt(c.diffMean.ci95[0])}, ${fmt(c.diffMean.ci95[1])}]` : "",
        c.mannWhitney ? formatP(c.mannWhitney.p) : "",
      ]);
    }
    lines.push("host pairs compared:", pairs.toString());
  }

  // Notes of the first repetition only: ten copies of "0 retransmits" help nobody; all are in results.json.
  const notes = results.measurements.flatMap((m) => {
    const tool = findTool(m.tool);
    if (m.status !== "ok" || !tool?.describe || m.repetition > 0) return [];
    const described = tool.describe(m.reported ?? {}, samplesOf(m.cell), m.warnings);
    return described.length ? [`${m.cell}:`, ...described.map((l) => `  ${l}`)] : [];
  });
  if (notes.length) lines.push(...notes);

  lines.push(results.environment.shaping.note);
  const notEmulated = notEmulatedAxes(results);
  if (notEmulated.length) {
    lines.push(`not emulated on ${results.target}: ${notEmulated.join(", ")} — differences between variants that differ only in these are noise here, not findings`);
  }
  const mismatched = results.variants.flatMap((v) => v.hosts.filter((h) => h.mismatches.length).map((h) => `${v.id}/${h.role}: ${h.mismatches.join("; ")}`));
  if (mismatched.length) lines.push(`hosts that did not get what was asked:\n  ${mismatched.join("\n  ")}`);
  const failed = results.measurements.filter((m) => m.status === "failed");
  if (failed.length) lines.push(`${failed.length} failed cell(s):\n  ${failed.map((m) => `${m.cell}: ${m.error}`).join("\n  ")}`);
  lines.push(`teardown: ${results.teardown.status}${results.teardown.errors.length ? ` — ${results.teardown.errors.join("; ")}` : ""}`);
  return lines.join("\n");
}

/**
 * Host features a target records as not emulated (`actual.<field>Emulated: false`) that the
 * experiment varies or asks for: the reader must not take their effect from this target.
 */
export function notEmulatedAxes(results: Results): string[] {
  const fields = new Set<string>();
  for (const v of results.variants) {
    for (const h of v.hosts) {
      for (const [key, value] of Object.entries(h.actual)) {
        const field = /^(\w+)Emulated$/.exec(key)?.[1];
        if (!field || value !== false) continue;
        const asked = (h as Record<string, unknown>)[field];
        if (field in v.axes || (asked !== null && asked !== false && asked !== undefined)) fields.add(field);
      }
    }
  }
  return [...fields].sort();
}
