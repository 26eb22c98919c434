/**
 * `latlab gate <runId|dir>`: a finished run judged against its comparable previous runs in the
 * history (src/history/gate.ts: one value per previous run, a 99 % prediction band, a threshold
 * on top; "learning (n of k)" below k runs). The run itself, when already recorded, is never its
 * own baseline, and runs started after it are never considered, so a run is judged as it would
 * have been when it finished. Exit 0: no regression (learning included, and said so); 3: at least
 * one regression or changed path; 1: an error, or nothing to judge.
 */
import type { Command } from "commander";
import { comparableRuns } from "../../history/comparable.ts";
import { ALERT_VERDICTS, gate, headlinesOf, measureKey } from "../../history/gate.ts";
import type { GateCheck, GateReport, GateRun } from "../../history/gateSchema.ts";
import { historyRecords } from "../../history/historyRecords.ts";
import type { RunRow, SummaryRow } from "../../history/historySchema.ts";
import { historyFile, loadHistory } from "../../history/historyStore.ts";
import { displayWidth, fitTable, fitWidths, renderTable, wrapText } from "../../report/renderTable.ts";
import { terminalWidth } from "../../report/table.ts";
import { unitLabel } from "../../report/wording.ts";
import { completeRunFolder } from "../input/compareInputs.ts";
import { HISTORY_HELP, parseMinRuns, parsePercent } from "../input/options.ts";
import { findRunFolder } from "../input/runSources.ts";
import { jsonForTerminal, sanitizeForTerminal } from "../output/terminalText.ts";
import { existsSync } from "node:fs";
import { REGRESSION_EXIT_CODE } from "./compareCommand.ts";

/** Exit code of a gate that found a regression (or a changed path): the same 3 as `compare --fail-on-regression`. */
export const GATE_REGRESSION_EXIT_CODE = REGRESSION_EXIT_CODE;

/** What `--json` prints (the lead's interface: the workflow's alert job reads it). */
export interface GateOutput {
  experiment: string;
  runId: string;
  /** The GitHub Actions run the run was made in, when it was made in one. */
  runUrl?: string;
  /** Checks whose verdict is one an alert is for (ALERT_VERDICTS: regression, changed). */
  regressions: number;
  /** Whether any check had fewer than k previous runs: "learning (n of k)", not judged. */
  learning: boolean;
  report: GateReport;
  comparable: { used: string[]; excluded: { runId: string; why: string[] }[] };
}

/** The run to judge: its run row and summaries, from its results folder or else from the history. */
interface GatedRun {
  run: RunRow;
  summaries: readonly SummaryRow[];
}

async function gatedRun(ref: string, file: string): Promise<GatedRun> {
  const dir = findRunFolder(ref);
  if (dir) {
    const { results, samplesOf } = completeRunFolder(ref, dir);
    const records = historyRecords(results, samplesOf);
    return { run: records.run, summaries: records.summaries };
  }
  const data = await loadHistory(file);
  const run = data.runs.find((r) => r.runId === ref);
  if (!run) throw new Error(`"${ref}": no results folder (looked for ${ref} and results/${ref}) and no run with that id in the history ${file}`);
  return { run, summaries: data.summaries.filter((s) => s.runId === run.runId) };
}


/** https://github.com/<repo>/actions/runs/<id> from the run's provenance facts, when it was made in GitHub Actions. */
export function runUrlOf(run: Pick<RunRow, "facts">, serverUrl = process.env.GITHUB_SERVER_URL || "https://github.com"): string | undefined {
  const repo = run.facts["github.repository"];
  const id = run.facts["github.runId"];
  return repo && id ? `${serverUrl}/${repo}/actions/runs/${id}` : undefined;
}

/** The gate's verdicts for the run `ref` against its comparable previous runs in the history `file`. */
export async function gateRun(ref: string, file: string, settings: { thresholdPct?: number; minRuns?: number }): Promise<{ output: GateOutput; labels: Map<string, string> }> {
  if (!existsSync(file)) throw new Error(`the history ${file} does not exist: there are no previous runs to judge against (record runs with \`latlab run --history\`)`);
  const { run, summaries } = await gatedRun(ref, file);
  const data = await loadHistory(file, run.experiment);
  const { runs: used, excluded } = comparableRuns(data, run);
  const toGateRun = (r: Pick<RunRow, "runId" | "startedAt">, rows: readonly SummaryRow[]): GateRun => ({ runId: r.runId, startedAt: r.startedAt, headlines: headlinesOf(rows, measureKey) });
  const previous = used.map((r) => toGateRun(r, data.summaries.filter((s) => s.runId === r.runId)));
  const minRuns = settings.minRuns ?? 5;
  const report = gate(toGateRun(run, summaries), previous, {
    ...(settings.thresholdPct === undefined ? {} : { thresholdPct: settings.thresholdPct }),
    minRuns,
    // The window (20 by default) may not be smaller than k.
    maxRuns: Math.max(20, minRuns),
  });
  // How a measure is shown: its index and tool in this run (an identity is a hash).
  const labels = new Map<string, string>();
  for (const s of [...data.summaries.filter((s) => used.some((u) => u.runId === s.runId)), ...summaries]) labels.set(measureKey(s), `m${s.measure} ${s.tool}`);
  const runUrl = runUrlOf(run);
  return {
    output: {
      experiment: run.experiment,
      runId: run.runId,
      ...(runUrl ? { runUrl } : {}),
      regressions: report.checks.filter((c) => ALERT_VERDICTS.includes(c.verdict)).length,
      learning: report.checks.some((c) => c.verdict === "learning"),
      report,
      comparable: { used: used.map((r) => r.runId), excluded },
    },
    labels,
  };
}

const fmt = (v: number) => String(Number(v.toPrecision(4)));
const pctText = (v: number | null) => (v === null ? "—" : `${v >= 0 ? "+" : "−"}${Math.abs(v).toFixed(1)} %`);
const verdictText = (c: GateCheck) => (c.verdict === "learning" ? `learning (${c.n} of ${c.minRuns})` : c.verdict);

/** One line: the verdict of the whole run, for the summary line and the Markdown title. */
export function headlineVerdict(o: GateOutput): string {
  const checks = o.report.checks;
  if (o.regressions) return `regression (${o.regressions} of ${checks.length} figures)`;
  const learning = checks.filter((c) => c.verdict === "learning");
  if (learning.length) {
    const n = Math.min(...learning.map((c) => c.n));
    const k = o.report.config.minRuns;
    const judged = checks.length - learning.length;
    return `learning (${n} of ${k}): ${k} comparable previous runs make the band, ${n} so far; ${judged ? `${judged} of ${checks.length} figures judged, no regression` : "not judged, not a pass"}`;
  }
  return `no regression (${checks.length} figures)`;
}

/** The lines above the table: what the band is over (the unit), the method, what was left out and why. */
function preamble(o: GateOutput, labels: ReadonlyMap<string, string>): string[] {
  const c = o.report.config;
  const thresholds = Object.entries(c.thresholdPctByMetric).map(([metric, t]) => `${metric}: ${t === 0 ? "any change" : `${t} %`}`);
  const lines = [
    `unit: previous runs, one value each (every run an independent draw of hosts); ${o.comparable.used.length} comparable previous run(s) used${o.comparable.used.length > c.maxRuns ? ` (the most recent ${c.maxRuns})` : ""}, ${o.comparable.excluded.length} excluded`,
    `method: ${Math.round((1 - c.alpha) * 1000) / 10} % prediction band for one new run (Student t over the previous runs' values; log scale for RTT and throughput), flagged when also beyond ${c.thresholdPct} % of their centre${thresholds.length ? ` (${thresholds.join(", ")})` : ""}; no band below ${c.minRuns} runs`,
  ];
  for (const e of o.comparable.excluded) lines.push(`excluded ${e.runId}: ${e.why.join("; ")}`);
  for (const m of o.report.missing) lines.push(`not in this run: ${m.variant} ${labels.get(m.measure) ?? m.measure} ${m.pair} ${m.metric} ${m.statistic} (${m.n} previous run(s) had it)`);
  return lines;
}

/** "A", "B", … "Z", "AA", …: a variant's key when names are too long for their column (as the run's own table does). */
const keyOf = (i: number): string => (i < 26 ? String.fromCharCode(65 + i) : `${keyOf(Math.floor(i / 26) - 1)}${keyOf(i % 26)}`);

function rows(o: GateOutput, labels: ReadonlyMap<string, string>, markdown: boolean, variantName: (variant: string) => string = (v) => v): string[][] {
  return o.report.checks.map((c) => {
    const verdict = verdictText(c);
    return [
      variantName(c.variant),
      `${labels.get(c.measure) ?? c.measure} ${c.pair}`,
      `${c.metric} ${c.statistic} (${unitLabel(c.unit)})`,
      fmt(c.value),
      c.band ? `${fmt(c.band.low)}–${fmt(c.band.high)}` : "—",
      pctText(c.pctChange),
      markdown && ALERT_VERDICTS.includes(c.verdict) ? `**${verdict}**` : verdict,
    ];
  });
}

const HEAD = ["variant", "measure", "figure", "this run", "99 % band", "vs centre", "verdict"];

/**
 * The table fitted to `width`; variant names keyed (A, B, …) with a legend below when in full they
 * would not fit on one line of their column.
 */
function table(o: GateOutput, labels: ReadonlyMap<string, string>, head: string[], width: number): string[] {
  if (!o.report.checks.length) return ["nothing to judge: the run has no headline figure"];
  const variants = [...new Set(o.report.checks.map((c) => c.variant))];
  const full = rows(o, labels, false);
  const keyed = fitWidths(head, full, width)[0]! < Math.max(displayWidth(head[0]!), ...variants.map(displayWidth));
  if (!keyed) return [fitTable(head, full, width)];
  const keys = new Map(variants.map((v, i) => [v, keyOf(i)]));
  return [fitTable(head, rows(o, labels, false, (v) => keys.get(v)!), width), ...variants.map((v) => wrapText(`${keys.get(v)} = ${v}`, width, "  ").join("\n"))];
}

/** The terminal text: the verdict, the unit and method, what was excluded, a table fitted to `width`, the flagged checks in words. */
export function gateText(o: GateOutput, labels: ReadonlyMap<string, string>, width: number): string {
  const head = HEAD.map((h) => (h === "99 % band" ? `${Math.round((1 - o.report.config.alpha) * 1000) / 10} % band` : h));
  const flagged = o.report.checks.filter((c) => ALERT_VERDICTS.includes(c.verdict));
  // Prose wraps to the width like the table (continuation lines indented): no line the terminal wraps.
  const wrap = (line: string) => wrapText(line, width, "  ").join("\n");
  return [
    wrap(`${o.experiment}: run ${o.runId}: ${headlineVerdict(o)}`),
    ...preamble(o, labels).map(wrap),
    ...table(o, labels, head, width),
    ...flagged.map((c) => wrap(`${c.variant} ${labels.get(c.measure) ?? c.measure} ${c.pair} ${c.metric} ${c.statistic}: ${c.text}`)),
  ].join("\n");
}

/** A Markdown section for an issue body or $GITHUB_STEP_SUMMARY. */
export function gateMarkdown(o: GateOutput, labels: ReadonlyMap<string, string>): string {
  const head = HEAD.map((h) => (h === "99 % band" ? `${Math.round((1 - o.report.config.alpha) * 1000) / 10} % band` : h));
  const flagged = o.report.checks.filter((c) => ALERT_VERDICTS.includes(c.verdict));
  return [
    `### ${o.experiment}: ${headlineVerdict(o)}`,
    "",
    `run ${o.runUrl ? `[${o.runId}](${o.runUrl})` : `\`${o.runId}\``}`,
    "",
    ...preamble(o, labels).map((l) => `- ${l}`),
    "",
    o.report.checks.length ? renderTable(head, rows(o, labels, true), true) : "nothing to judge: the run has no headline figure",
    ...(flagged.length ? ["", ...flagged.map((c) => `- **${c.variant} ${labels.get(c.measure) ?? c.measure} ${c.pair} ${c.metric} ${c.statistic}**: ${c.text}`)] : []),
  ].join("\n");
}

export function registerGateCommand(program: Command, setExitCode: (code: number) => void): void {
  program
    .command("gate")
    .description("judge a finished run against its comparable previous runs in the history: a regression when a headline figure is outside their 99% prediction band and beyond the threshold")
    .argument("<runId|dir>", "the run: its results folder, or its id (under ./results, else in the history)")
    .option("--history <file>", HISTORY_HELP)
    .option("--json", "print the verdicts as JSON")
    .option("--markdown", "print a GitHub Markdown section (an issue body, $GITHUB_STEP_SUMMARY)")
    .option("--threshold <percent>", "a figure outside the band is flagged only when also more than this far from the previous runs' centre (RTT and throughput; hop counts: any change)", parsePercent, 5)
    .option("--min-runs <k>", "previous comparable runs needed before a band is made; fewer: learning (n of k)", parseMinRuns, 5)
    .action(async (ref: string, opts: { history?: string; json?: boolean; markdown?: boolean; threshold: number; minRuns: number }) => {
      const { output, labels } = await gateRun(ref, historyFile(opts.history), { thresholdPct: opts.threshold, minRuns: opts.minRuns });
      if (opts.json) process.stdout.write(`${jsonForTerminal(output)}\n`);
      else if (opts.markdown) process.stdout.write(`${sanitizeForTerminal(gateMarkdown(output, labels), { maxLineLength: 100_000 })}\n`);
      else process.stdout.write(`${sanitizeForTerminal(gateText(output, labels, terminalWidth()), { maxLineLength: 100_000 })}\n`);
      // A gate that judged nothing must not pass.
      if (!output.report.checks.length) {
        process.stderr.write(`latlab gate: run ${output.runId} has no headline figure to judge: the gate cannot pass\n`);
        setExitCode(1);
      } else if (output.regressions) setExitCode(GATE_REGRESSION_EXIT_CODE);
    });
}
