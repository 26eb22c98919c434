/**
 * A run's summary in GitHub Markdown (`latlab report <run> --markdown`): for $GITHUB_STEP_SUMMARY
 * and pull-request comments. The same figures and the same choice of columns as the terminal
 * table (table.ts), one row per variant × measure × host pair, with what the CIs are over: `wide`
 * (report.md) every column — tail percentiles (p99.9, p99.99, p99.999) "—" where the count does
 * not support them (tailSupported in summary.ts) —, else the columns that answer the question.
 */
import type { Results } from "../results/schema.ts";
import type { Summary } from "../results/summary.ts";
import { summarizeMany } from "../results/summarize.ts";
import { changeCell, delayLineRunLine, deltaCell, fmt, inferenceFooter, measureLabels, metricLabel, mismatchedHosts, notEmulatedNote, overLabel, pairOf, TAIL_HEADS, TAIL_NOTE, tailCells, teardownLine, unitLabel, unitsLabel, variantLabel } from "./wording.ts";
import { placementTable } from "./placementTable.ts";
import { verdictCell } from "./verdicts.ts";
import { comparisonCaveats } from "../results/comparisons.ts";
import { caveatCell } from "../results/placement.ts";
import { renderTable } from "./renderTable.ts";
import { crossGroupWaveNote } from "../results/waveRecords.ts";
import { seedSizeLines } from "./seedSizes.ts";

const STATUS_MARK: Record<Results["status"], string> = { complete: "✅", partial: "⚠️", failed: "❌", interrupted: "⏹️", running: "⏳" };

export interface SummaryColumns {
  /** Every column (report.md); else n, p50, p99, Δmean with its CI, over and the verdict. */
  wide: boolean;
}

export function markdownSummary(results: Results, samplesOf: (cell: string) => number[], { wide }: SummaryColumns = { wide: true }): string {
  const labels = measureLabels(results.measurements);
  const multiPair = [...new Set(results.measurements.map((m) => `${m.variant}/${m.measure}`))].some(
    (k) => new Set(results.measurements.filter((m) => `${m.variant}/${m.measure}` === k).map(pairOf)).size > 1,
  );
  const lines = [
    `## ${STATUS_MARK[results.status]} ${results.experiment.name} on ${results.target}: ${results.status}`,
    "",
    `${results.experiment.description}`,
    "",
    ...seedSizeLines(results.experiment.seedSizes, results.variants.flatMap((v) => v.hosts.map((h) => h.size))).flatMap((l) => [`> ${l}`, ""]),
    `run \`${results.runId}\`, ${results.startedAt} → ${results.finishedAt}, latlab ${results.environment.latlabVersion}${results.environment.facts["git.commit"] ? `, commit \`${results.environment.facts["git.commit"]}\`` : ""}`,
    "",
  ];
  const rows: string[][] = [];
  const narrow: string[][] = [];
  const caveatNotes: string[] = [];
  let tailDash = false;
  // A comparison resting on a PPG that is not Aligned says so on its row (column only when one does).
  const caveats = new Map(results.comparisons.map((c) => [c, caveatCell(comparisonCaveats(results, c))]));
  const placementColumn = [...caveats.values()].some(Boolean);
  for (const variant of results.variants) {
    for (const measure of [...labels.keys()].sort((a, b) => a - b)) {
      const of = results.measurements.filter((m) => m.variant === variant.id && m.measure === measure);
      for (const pair of new Set(of.map(pairOf))) {
        const runs = of.filter((m) => pairOf(m) === pair);
        const ok = runs.filter((m) => m.status === "ok" && m.summary);
        const head = [variantLabel(variant), labels.get(measure)!, pair];
        if (!ok.length) {
          rows.push([...head, "—", "0", "—", "—", "—", ...TAIL_HEADS.map(() => "—"), "—", "—", `all ${runs.length} failed`, ...(placementColumn ? [""] : [])]);
          narrow.push([variant.id, head[1]!, ...(multiPair ? [pair] : []), "0", "—", "—", "", "", `all ${runs.length} failed`]);
          continue;
        }
        const c = results.comparisons.find((k) => k.variant === variant.id && k.measure === measure && k.pair === pair);
        const row = (label: string, s: Summary, cmp: typeof c) => {
          const change = cmp?.pctChangeMean === undefined ? "" : changeCell(cmp.pctChangeMean);
          const tails = tailCells(s);
          if (wide) tailDash ||= tails.includes("—");
          rows.push([head[0]!, `${head[1]}${label}`, head[2]!, `${s.metric} ${unitLabel(s.unit)}`, String(s.count), fmt(s.mean), fmt(s.p50), fmt(s.p99), ...tails, change, deltaCell(cmp), overLabel(cmp), ...(placementColumn ? [cmp ? (caveats.get(cmp) ?? "") : ""] : [])]);
          const verdict = verdictCell(results, variant, cmp, labels, multiPair);
          if (verdict.caveat) caveatNotes.push(`* ${variant.id} ${head[1]}${label}${multiPair ? ` ${pair}` : ""}: ${verdict.caveat}`);
          narrow.push([variant.id, `${head[1]}${label} ${metricLabel(s.metric, s.unit)}`, ...(multiPair ? [pair] : []), String(s.count), fmt(s.p50), fmt(s.p99), deltaCell(cmp), cmp ? unitsLabel(cmp) : "", verdict.cell]);
        };
        // As the terminal table: the runs with samples merged (what the comparison is of), and a
        // row of its own for each run that has only the tool's own summary (nothing to merge).
        const withSamples = ok.map((m) => ({ m, samples: samplesOf(m.cell) }));
        const sampled = withSamples.filter((r) => r.samples.length);
        if (sampled.length) row("", summarizeMany(sampled[0]!.m.summary!.metric, sampled[0]!.m.summary!.unit, sampled.map((r) => r.samples))!, c);
        for (const { m } of withSamples.filter((r) => !r.samples.length)) row(ok.length > 1 ? ` [r${m.replica} rep${m.repetition}]` : "", m.summary!, undefined);
      }
    }
  }
  if (wide) lines.push(renderTable(["variant", "measure", "pair", "metric", "n", "mean", "p50", "p99", ...TAIL_HEADS, "vs baseline (mean)", "Δmean [95% CI]", "over", ...(placementColumn ? ["placement"] : [])], rows, true), "");
  else lines.push(renderTable(["variant", "measure", ...(multiPair ? ["pair"] : []), "n", "p50", "p99", "Δmean [95% CI]", "over", "verdict"], narrow, true), "", ...caveatNotes.map((n) => `- ${n}`));
  if (tailDash) lines.push(`- ${TAIL_NOTE}`);
  for (const note of inferenceFooter([...results.comparisons, ...results.pairComparisons])) lines.push(`- ${note}`);
  const acrossWaves = crossGroupWaveNote(results);
  if (acrossWaves) lines.push(`- ${acrossWaves}`);
  lines.push(`- ${results.environment.shaping.note}`);
  const delayLine = delayLineRunLine(results);
  if (delayLine) lines.push(`- ${delayLine}`);
  const notEmulated = notEmulatedNote(results);
  if (notEmulated) lines.push(`- ${notEmulated}`);
  for (const m of mismatchedHosts(results)) lines.push(`- placement not as asked: ${m}`);
  const placement = placementTable(results);
  if (placement) {
    const unaligned = placement.rows.filter((_, i) => placement.unaligned[i]);
    for (const r of unaligned) lines.push(`- ⚠️ deployment ${r[0]}: PPG ${r[2]} is ${r[3]}`);
  }
  const failed = results.measurements.filter((m) => m.status === "failed");
  for (const m of failed) lines.push(`- failed: \`${m.cell}\`: ${m.error ?? "unknown"}`);
  if (results.error) lines.push(`- run failed: ${results.error}`);
  lines.push(`- ${teardownLine(results)}`);
  if (placement) lines.push("", `### Placement evidence`, "", `${placement.title[0]!.toUpperCase()}${placement.title.slice(1)}.`, "", renderTable(placement.head, placement.rows, true), "", ...placement.notes.map((n) => `- ${n}`));
  return `${lines.join("\n")}\n`;
}
