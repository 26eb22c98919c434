/**
 * The table a run prints in the terminal, from results. By default it fits the terminal
 * ({@link TableLayout}): the columns that answer the question — n, p50, p99, Δmean with its CI, a
 * verdict — cells wrapped and long variant names keyed with a legend; `--wide` prints every
 * column. results.json, report.md and report.html keep every figure either way. The words and
 * formats are the reports' shared ones (wording.ts).
 */
import Table from "cli-table3";
import { seedSizeLines } from "./seedSizes.ts";
import type { Comparison, Measurement, Results } from "../results/schema.ts";
import type { Summary } from "../results/summary.ts";
import { summarizeMany } from "../results/summarize.ts";
import { findTool } from "../tools/registry.ts";
import { sanitizeForTerminal } from "../tools/terminalText.ts";
import { comparisonCaveats, pairComparisonCaveats } from "../results/comparisons.ts";
import { caveatCell } from "../results/placement.ts";
import { displayWidth, fitTable, fitWidths, renderTable, wrapText } from "./renderTable.ts";
import { crossGroupWaveNote } from "../results/waveRecords.ts";
import { verdictCell } from "./verdicts.ts";
import { placementTable } from "./placementTable.ts";
import {
  delayLineRunLine,
  changeCell,
  ciCell,
  deltaCell,
  fmt,
  inferenceFooter,
  measureLabels,
  metricLabel,
  mismatchedHosts,
  notEmulatedNote,
  overLabel,
  pairOf,
  pCell,
  ratioCell,
  TAIL_HEADS,
  TAIL_NOTE,
  tailCells,
  teardownLine,
  timingLine,
  unitsLabel,
  variantLabel,
} from "./wording.ts";

/** How the table is laid out: `wide` every column, lines as long as they come; else at most `width` columns. */
export interface TableLayout {
  wide: boolean;
  width: number;
}
/** Every column (today's table, `--wide`): the layout callers get unless they ask for a width. */
export const WIDE: TableLayout = { wide: true, width: Number.POSITIVE_INFINITY };
/** What a terminal that cannot tell its width (not a TTY, CI) is taken to have. */
export const DEFAULT_COLUMNS = 80;

/**
 * The width to fit: the terminal's when stdout is one, else $COLUMNS when set (the shell
 * convention for "format for this width"), else {@link DEFAULT_COLUMNS}.
 */
export function terminalWidth(stream: { isTTY?: boolean; columns?: number } = process.stdout, env: NodeJS.ProcessEnv = process.env): number {
  if (stream.isTTY && stream.columns && stream.columns > 0) return stream.columns;
  const columns = Number(env.COLUMNS);
  return Number.isInteger(columns) && columns > 0 ? columns : DEFAULT_COLUMNS;
}

/** A line of text (wrapped to the width when there is one), or a table already laid out. */
type Block = string | { table: string };

/** One row of the table, before it is laid out: a variant × measure × pair and what it measured. */
type Row =
  | { variant: Results["variants"][number]; measure: number; label: string; pair: string; failed: number }
  | { variant: Results["variants"][number]; measure: number; label: string; pair: string; summary: Summary; cmp: Comparison | undefined };

/**
 * Per variant, measure and (when several) host pair: the samples of every run merged (what the
 * comparison is of), and a row of its own for each run that has only the tool's own summary.
 */
function rowsOf(results: Results, samplesOf: (cellId: string) => number[], labels: Map<number, string>): Row[] {
  const rows: Row[] = [];
  const measures = [...labels.keys()].sort((a, b) => a - b);
  for (const variant of results.variants) {
    for (const measure of measures) {
      const ofMeasure = results.measurements.filter((m) => m.variant === variant.id && m.measure === measure);
      for (const pair of new Set(ofMeasure.map(pairOf))) {
        const runs = ofMeasure.filter((m) => pairOf(m) === pair);
        const ok = runs.filter((m) => m.status === "ok" && m.summary);
        const label = labels.get(measure)!;
        if (!ok.length) {
          if (runs.length) rows.push({ variant, measure, label, pair, failed: runs.length });
          continue;
        }
        const withSamples = ok.map((m) => ({ m, samples: samplesOf(m.cell) }));
        const sampled = withSamples.filter((r) => r.samples.length);
        if (sampled.length) {
          const first = sampled[0]!.m.summary!;
          const merged = summarizeMany(first.metric, first.unit, sampled.map((r) => r.samples))!;
          const cmp = results.comparisons.find((c) => c.variant === variant.id && c.measure === measure && c.pair === pair);
          rows.push({ variant, measure, label, pair, summary: merged, cmp });
        }
        // A tool's own summary has no histogram to merge, and averaging its percentiles would
        // invent a distribution: each such measurement gets its own row.
        for (const { m } of withSamples.filter((r) => !r.samples.length)) {
          rows.push({ variant, measure, label: ok.length > 1 ? `${label} [${runOf(m, ok)}]` : label, pair, summary: m.summary!, cmp: undefined });
        }
      }
    }
  }
  return rows;
}

/**
 * The seeds' tables, from results. `--wide` ({@link WIDE}, the default here): per variant, measure
 * and (when several) host pair: n / mean / p50 / p95 / p99 / p99.9 / p99.99 / p99.999 (a tail
 * percentile "—" where the count does not support it), min / max, and against the variant's
 * baseline the ratio and %-change of the mean (all samples merged, descriptive) with a 95% CI of
 * the difference and p-values over independent units, the units named on the row ("over") and in
 * a footer. Fitted to a width: n / p50 / p99, Δmean with its CI, what the CI is over and the
 * verdict (verdicts.ts), every line at most `width` columns. Then pair comparisons, tool notes,
 * failures, teardown. `samplesOf` gives a measurement's samples (kept out of results.json, in samples/).
 */
export function comparisonTable(results: Results, samplesOf: (cellId: string) => number[], layout: TableLayout = WIDE): string {
  return comparisonLines(results, samplesOf, layout).join("\n");
}

/** {@link comparisonTable} as lines: with a width, none longer than it. */
export function comparisonLines(results: Results, samplesOf: (cellId: string) => number[], layout: TableLayout = WIDE): string[] {
  const labels = measureLabels(results.measurements);
  const multiPair = [...new Set(results.measurements.map((m) => `${m.variant}/${m.measure}`))].some(
    (k) => new Set(results.measurements.filter((m) => `${m.variant}/${m.measure}` === k).map(pairOf)).size > 1,
  );
  const rows = rowsOf(results, samplesOf, labels);
  const blocks: Block[] = [
    `${results.experiment.name} on ${results.target} — ${results.status}, run ${results.runId}`,
    ...seedSizeLines(results.experiment.seedSizes, results.variants.flatMap((v) => v.hosts.map((h) => h.size))),
    ...(layout.wide ? wideTables(results, rows, labels, multiPair) : fittedTables(results, rows, labels, multiPair, layout.width)),
    ...notes(results, rows, samplesOf, layout),
  ];
  return blocks.flatMap((b) => {
    if (typeof b !== "string") return b.table.split("\n");
    // With a width, notes and sentences wrap at it too, their continuation indented — made
    // terminal-safe first, so an escaped control character cannot push a line past the width.
    return layout.wide ? b.split("\n") : wrapText(sanitizeForTerminal(b, { maxLineLength: Number.MAX_SAFE_INTEGER }), layout.width, "  ");
  });
}

/** Every column, as `--wide` prints them: the variants' table, then the host pairs'. */
function wideTables(results: Results, rows: readonly Row[], labels: Map<number, string>, multiPair: boolean): Block[] {
  // A comparison resting on a PPG that is not Aligned says so on its row (column only when one does).
  const caveats = new Map(results.comparisons.map((c) => [c, caveatCell(comparisonCaveats(results, c))]));
  const placementColumn = [...caveats.values()].some(Boolean);
  const head = ["variant", "measure", ...(multiPair ? ["pair"] : []), "metric", "n", "mean", "p50", "p95", "p99", ...TAIL_HEADS, "min", "max", "vs baseline", "change", "95% CI of Δmean", "p Welch / rank", "over", ...(placementColumn ? ["placement"] : [])];
  const table = new Table({ head, style: { head: [], border: [], compact: true } });
  for (const row of rows) {
    const isBaseline = row.variant.baseline === row.variant.id;
    const lead = [variantLabel(row.variant), row.label, ...(multiPair ? [row.pair] : [])];
    if ("failed" in row) {
      table.push([...lead, "—", "0", { colSpan: 11 + TAIL_HEADS.length + (placementColumn ? 1 : 0), content: `all ${row.failed} failed` }]);
      continue;
    }
    const { summary, cmp } = row;
    table.push([
      ...lead,
      metricLabel(summary.metric, summary.unit),
      String(summary.count),
      fmt(summary.mean),
      fmt(summary.p50),
      summary.p95 === undefined ? "—" : fmt(summary.p95),
      fmt(summary.p99),
      ...tailCells(summary),
      fmt(summary.min),
      fmt(summary.max),
      isBaseline ? "1.00×" : cmp ? ratioCell(cmp.ratioMean) : "—",
      isBaseline ? "" : cmp ? changeCell(cmp.pctChangeMean) : "",
      ciCell(cmp),
      pCell(cmp),
      overLabel(cmp),
      ...(placementColumn ? [cmp ? (caveats.get(cmp) ?? "") : ""] : []),
    ]);
  }
  const lines: Block[] = [{ table: table.toString() }];
  if (results.pairComparisons.length) {
    const pairCaveats = results.pairComparisons.map((c) => caveatCell(pairComparisonCaveats(results, c)));
    const pairPlacement = pairCaveats.some(Boolean);
    const pairRows = results.pairComparisons.map((c, i) => [
      c.variant,
      labels.get(c.measure) ?? c.tool,
      c.pair,
      c.baselinePair,
      ratioCell(c.ratioMean),
      changeCell(c.pctChangeMean),
      ciCell(c),
      pCell(c),
      overLabel(c),
      ...(pairPlacement ? [pairCaveats[i]!] : []),
    ]);
    lines.push("host pairs compared:", { table: renderTable(["variant", "measure", "pair", "vs", "ratio (mean)", "change", "95% CI of Δmean", "p Welch / rank", "over", ...(pairPlacement ? ["placement"] : [])], pairRows, false) });
  }
  return lines;
}

/** "A", "B", … "Z", "AA", "AB", …: the key of the i-th variant when names are too long to show. */
const keyOf = (i: number): string => (i < 26 ? String.fromCharCode(65 + i) : `${keyOf(Math.floor(i / 26) - 1)}${keyOf(i % 26)}`);

/**
 * The columns that answer the question, at most `width` wide: variant, measure (with its metric
 * and unit), pair when several, n, p50, p99, Δmean with its 95% CI, what the CI is over (a column
 * only when rows differ, else said once under the table) and the verdict; "*" marks a verdict with
 * a caveat (a PPG not Aligned, a baseline in another wave), said under the table.
 */
function fittedTables(results: Results, rows: readonly Row[], labels: Map<number, string>, multiPair: boolean, width: number): Block[] {
  const overs = new Set(rows.flatMap((r) => ("cmp" in r && r.cmp ? [unitsLabel(r.cmp)] : [])));
  const overColumn = overs.size > 1;
  const caveatNotes: string[] = [];
  const cellsWith = (name: (v: Results["variants"][number]) => string, noting: boolean) =>
    rows.map((row) => {
      const lead = [name(row.variant), "summary" in row ? `${row.label} ${metricLabel(row.summary.metric, row.summary.unit)}` : row.label, ...(multiPair ? [row.pair] : [])];
      if ("failed" in row) return [...lead, "0", "—", "—", "", ...(overColumn ? [""] : []), `all ${row.failed} failed`];
      const { summary, cmp } = row;
      const verdict = verdictCell(results, row.variant, cmp, labels, multiPair);
      if (verdict.caveat && noting) caveatNotes.push(`* ${name(row.variant)} ${row.label}${multiPair ? ` ${row.pair}` : ""}: ${verdict.caveat}`);
      return [...lead, String(summary.count), fmt(summary.p50), fmt(summary.p99), deltaCell(cmp), ...(overColumn ? [cmp ? unitsLabel(cmp) : ""] : []), verdict.cell];
    });
  const head = ["variant", "measure", ...(multiPair ? ["pair"] : []), "n", "p50", "p99", "Δmean [95% CI]", ...(overColumn ? ["over"] : []), "verdict"];
  // Names are keyed (A, B, …) only when in full they would not fit on one line of their column.
  const full = cellsWith((v) => v.id, false);
  const fullWidth = Math.max(displayWidth(head[0]!), ...results.variants.map((v) => displayWidth(v.id)));
  const keyed = fitWidths(head, full, width)[0]! < fullWidth;
  const keys = new Map(results.variants.map((v, i) => [v.id, keyed ? keyOf(i) : v.id]));
  const name = (v: Pick<Results["variants"][number], "id">) => keys.get(v.id) ?? v.id;
  const cells = cellsWith(name, true);
  const lines: Block[] = [{ table: fitTable(head, cells, width) }];
  if (keyed) {
    const baselines = new Set(results.variants.map((v) => v.baseline));
    for (const v of results.variants) {
      const role = v.baseline === v.id ? " (baseline)" : baselines.size > 1 ? ` (vs ${name({ id: v.baseline })})` : "";
      lines.push(`${name(v)} = ${v.id}${role}`);
    }
  }
  if (overs.size === 1) lines.push(`Δmean: candidate − its baseline (mean), 95% CI over ${[...overs][0]}`);
  lines.push(...caveatNotes);
  if (results.pairComparisons.length) {
    const pairRows = results.pairComparisons.map((c) => [name({ id: c.variant }), labels.get(c.measure) ?? c.tool, c.pair, c.baselinePair, changeCell(c.pctChangeMean), deltaCell(c), overLabel(c)]);
    lines.push("host pairs compared:", { table: fitTable(["variant", "measure", "pair", "vs", "change", "Δmean [95% CI]", "over"], pairRows, width) });
    const flagged = results.pairComparisons.flatMap((c) => {
      const caveat = caveatCell(pairComparisonCaveats(results, c));
      return caveat ? [`${name({ id: c.variant })} ${labels.get(c.measure) ?? c.tool} ${c.pair}: ${caveat}`] : [];
    });
    lines.push(...flagged);
  }
  return lines;
}

/** What every layout says under the tables: footnotes, tools' notes, caveats, failures, teardown, time. */
function notes(results: Results, rows: readonly Row[], samplesOf: (cellId: string) => number[], layout: TableLayout): Block[] {
  const lines: Block[] = [];
  // The tail percentiles are columns of the wide table only.
  if (layout.wide && rows.some((r) => "summary" in r && tailCells(r.summary).includes("—"))) lines.push(TAIL_NOTE);
  lines.push(...inferenceFooter([...results.comparisons, ...results.pairComparisons]));
  const acrossWaves = crossGroupWaveNote(results);
  if (acrossWaves) lines.push(acrossWaves);

  // Notes of the first repetition only: ten copies of "0 retransmits" help nobody; all are in results.json.
  lines.push(
    ...results.measurements.flatMap((m) => {
      const tool = findTool(m.tool);
      if (m.status !== "ok" || !tool?.describe || m.repetition > 0) return [];
      const described = tool.describe(m.reported ?? {}, samplesOf(m.cell), m.warnings);
      return described.length ? [`${m.cell}:`, ...described.map((l) => `  ${l}`)] : [];
    }),
  );

  lines.push(results.environment.shaping.note);
  const delayLine = delayLineRunLine(results);
  if (delayLine) lines.push(delayLine);
  const notEmulated = notEmulatedNote(results);
  if (notEmulated) lines.push(notEmulated);
  const mismatched = mismatchedHosts(results);
  if (mismatched.length) lines.push(`hosts that did not get what was asked:\n  ${mismatched.join("\n  ")}`);
  const placement = placementTable(results);
  if (placement) lines.push(`${placement.title}:`, { table: layout.wide ? renderTable(placement.head, placement.rows, false) : fitTable(placement.head, placement.rows, layout.width) }, ...placement.notes);
  const failed = results.measurements.filter((m) => m.status === "failed");
  if (failed.length) {
    // Cells that failed for one reason (a deploy that failed, an unreachable deployment) share one line.
    const byError = new Map<string, string[]>();
    for (const m of failed) byError.set(m.error ?? "", [...(byError.get(m.error ?? "") ?? []), m.cell]);
    const byReason = [...byError].map(([error, cells]) => (cells.length === 1 ? `${cells[0]}: ${error}` : `${cells.length} cells (${cells.join(", ")}): ${error}`));
    lines.push(`${failed.length} failed cell(s):\n  ${byReason.join("\n  ")}`);
  }
  if (results.error) lines.push(`run failed: ${results.error}`);
  lines.push(teardownLine(results));
  const line = timingLine(results);
  if (line) lines.push(line);
  return lines;
}

/** Which run of several a measurement is: its replica and/or repetition, whichever tell them apart. */
function runOf(m: Measurement, all: readonly Measurement[]): string {
  const parts = [
    ...(new Set(all.map((o) => o.replica)).size > 1 ? [`r${m.replica}`] : []),
    ...(new Set(all.map((o) => o.repetition)).size > 1 ? [`rep${m.repetition}`] : []),
  ];
  return parts.length ? parts.join(" ") : m.cell;
}
