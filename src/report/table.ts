import Table from "cli-table3";
import type { Results } from "../results/schema.ts";
import { summarizeMany } from "../results/summarize.ts";
import type { Summary } from "../results/summary.ts";

const fmt = (v: number) => (Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2));
// Below ~1e-300 a double underflows to 0: say "<1e-15" rather than a false "0".
const formatP = (p: number) => (p < 1e-15 ? "<1e-15" : p < 0.001 ? p.toExponential(1) : p.toFixed(3));
const pct = (v: number) => `${v >= 0 ? "+" : ""}${v.toFixed(1)}%`;

/**
 * The seeds' table, from results: per variant and tool, n / mean / p50 / p99, and the ratio and
 * %-change of the mean against the baseline with a 95% CI of the difference and a rank test.
 * `samplesOf` gives a measurement's samples (kept out of results.json, in samples/).
 */
export function comparisonTable(results: Results, samplesOf: (cellId: string) => number[]): string {
  const table = new Table({
    head: ["variant", "tool", "metric", "n", "mean", "p50", "p99", "vs baseline", "change", "95% CI of Δmean", "MWU p"],
    style: { head: [], border: [], compact: true },
  });
  const tools = [...new Set(results.measurements.map((m) => `${m.tool}`))];
  for (const variant of results.variants) {
    for (const tool of tools) {
      const ms = results.measurements.filter((m) => m.variant === variant.id && m.tool === tool && m.status === "ok" && m.summary);
      if (!ms.length) {
        const failed = results.measurements.filter((m) => m.variant === variant.id && m.tool === tool).length;
        if (failed) table.push([variant.id, tool, "—", "0", { colSpan: 7, content: `all ${failed} failed` }]);
        continue;
      }
      const first = ms[0]!.summary!;
      const sampleSets = ms.map((m) => samplesOf(m.cell));
      const merged: Summary | undefined = summarizeMany(first.metric, first.unit, sampleSets) ?? (ms.length === 1 ? first : undefined);
      if (!merged) continue;
      const unit = merged.unit === "us" ? "µs" : merged.unit;
      const cmp = results.comparisons.find((c) => c.variant === variant.id && c.tool === tool);
      const isBaseline = variant.id === results.baseline;
      table.push([
        isBaseline ? `${variant.id} (baseline)` : variant.id,
        tool,
        `${merged.metric} ${unit}`,
        String(merged.count),
        fmt(merged.mean),
        fmt(merged.p50),
        fmt(merged.p99),
        isBaseline ? "1.00×" : cmp ? `${cmp.ratioMean.toFixed(2)}×` : "—",
        isBaseline ? "" : cmp ? pct(cmp.pctChangeMean) : "",
        cmp?.diffMean ? `[${fmt(cmp.diffMean.ci95[0])}, ${fmt(cmp.diffMean.ci95[1])}]` : "",
        cmp?.mannWhitney ? formatP(cmp.mannWhitney.p) : "",
      ]);
    }
  }
  const failed = results.measurements.filter((m) => m.status === "failed");
  const lines = [
    `${results.experiment.name} on ${results.target} — ${results.status}, run ${results.runId}`,
    table.toString(),
    results.environment.shaping.note,
  ];
  const mismatched = results.variants.flatMap((v) => v.hosts.filter((h) => h.mismatches.length).map((h) => `${v.id}/${h.role}: ${h.mismatches.join("; ")}`));
  if (mismatched.length) lines.push(`hosts that did not get what was asked:\n  ${mismatched.join("\n  ")}`);
  if (failed.length) lines.push(`${failed.length} failed cell(s):\n  ${failed.map((m) => `${m.cell}: ${m.error}`).join("\n  ")}`);
  lines.push(`teardown: ${results.teardown.status}${results.teardown.errors.length ? ` — ${results.teardown.errors.join("; ")}` : ""}`);
  return lines.join("\n");
}
