/**
 * Text for `latlab history`, `latlab trend` and `latlab compare`: terminal tables, or GitHub
 * Markdown (`--markdown`, for $GITHUB_STEP_SUMMARY and pull-request comments).
 */
import type { RunsCompared } from "../history/compareRuns.ts";
import type { HistoryData } from "../history/historyStore.ts";
import type { Finding } from "../history/regression.ts";
import type { Trend } from "../history/trend.ts";
import { fmt, overLabel, unitLabel } from "./wording.ts";
import { renderTable } from "./renderTable.ts";

const signedPct = (v: number | undefined) => (v === undefined ? "—" : `${v >= 0 ? "+" : ""}${v.toFixed(1)}%`);
const short = (commit: string | null) => (commit ? commit.replace(/^([0-9a-f]{10})[0-9a-f]*/, "$1") : "—");
/** A plan hash's first 8 hex digits: enough to tell an experiment's plans apart by eye. */
const shortPlan = (hash: string | null) => (hash ? hash.slice(0, 8) : "—");
const when = (iso: string) => iso.replace("T", " ").replace(/:\d\d(\.\d+)?Z$/, "Z");

/** Each run with its headline: the p50 (and unit) of every variant × measure × pair, merged over replicas. */
export function formatHistory(data: HistoryData, file: string, markdown = false): string {
  if (!data.runs.length) return `no runs recorded in ${file}`;
  const rows = data.runs.map((run) => {
    const all = data.summaries.filter((s) => s.runId === run.runId && s.level === "all");
    const headline = all.map((s) => `${s.variant}${all.some((o) => o.variant === s.variant && o.pair !== s.pair) ? ` ${s.pair}` : ""} m${s.measure} ${s.tool} p50 ${fmt(s.p50)} ${unitLabel(s.unit)}`).join("; ");
    return [run.runId, when(run.startedAt), run.experiment, run.target, run.status, run.latlabVersion, short(run.gitCommit), run.event ?? "—", shortPlan(run.planHash), headline || "(no measurement)"];
  });
  return `${renderTable(["run", "started", "experiment", "target", "status", "latlab", "commit", "event", "plan", "headline (p50, all replicas merged)"], rows, markdown)}\n${data.runs.length} run(s) in ${file}`;
}

/** Runs down, one column per variant × measure × pair. */
export function formatTrend(t: Trend, experiment: string, markdown = false): string {
  if (!t.runs.length) return `no runs of "${experiment}" with measurements in the history`;
  const multiPair = new Set(t.series.map((s) => `${s.measure}/${s.variant}`)).size < t.series.length;
  const head = ["run", "started", "commit", ...t.series.map((s) => `m${s.measure} ${s.tool} ${s.variant}${multiPair ? ` ${s.pair}` : ""} (${t.metric === "n" ? "samples" : unitLabel(s.unit)})`)];
  // A run after a change of plan or latlab is marked "▲ n": the note below says what changed.
  const marks = new Map(t.changes.map((c, n) => [c.at, n + 1]));
  const rows = t.runs.map((run, i) => [`${run.runId}${marks.has(i) ? ` ▲${marks.get(i)}` : ""}`, when(run.startedAt), short(run.gitCommit), ...t.series.map((s) => (s.values[i] === null || s.values[i] === undefined ? "—" : t.metric === "n" ? String(s.values[i]) : fmt(s.values[i]!)))]);
  const notes = t.changes.map((c, n) => `▲${n + 1} from run ${c.runId}: ${c.what.join(", ")} — the runs before and after did not measure the same way`);
  return [`${experiment}: ${t.metric} per run (every replica and repetition of a run merged)`, renderTable(head, rows, markdown), ...notes.map((n) => (markdown ? `- ${n}` : n))].join("\n");
}

/** With no threshold asked, a change whose CI excludes 0 is "worse" or "better", not a regression. */
const verdictText = (f: Finding, thresholdPct: number | undefined, markdown: boolean) => {
  const base = thresholdPct !== undefined ? f.verdict : f.verdict === "regression" ? "worse" : f.verdict === "improvement" ? "better" : f.verdict;
  const text = f.confounded && (f.verdict === "regression" || f.verdict === "improvement") ? `${base} (hosts confounded)` : base;
  return markdown && f.verdict === "regression" ? `**${text}**` : text;
};

const ciText = (f: Finding) => (f.ci95 ? `${fmt(f.estimate!)} [${fmt(f.ci95[0])}, ${fmt(f.ci95[1])}]` : "—");

/** The comparison of two runs, each figure's verdict, and what the CIs are over. */
export function formatRunComparison(compared: RunsCompared, findings: readonly Finding[], thresholdPct: number | undefined, markdown = false): string {
  const c0 = compared.comparisons[0];
  const lines: string[] = [];
  // What changed between the runs comes first: it decides how far the figures can be trusted.
  for (const n of compared.notes) lines.push(markdown ? `- ${n}` : n);
  for (const d of compared.plan.differences) lines.push(markdown ? `- plan: ${d}` : `  plan: ${d}`);
  if (!c0) lines.push("nothing to compare: the runs have no variant × measure × host pair measured in both");
  else {
    lines.push(`${markdown ? "### " : ""}run ${c0.candidateRun} against run ${c0.baselineRun}${thresholdPct === undefined ? "" : ` — regression: worse by more than ${thresholdPct}% with a 95% CI excluding 0`}`);
    const multiPair = new Set(compared.comparisons.map((c) => `${c.measure}/${c.variant}`)).size < compared.comparisons.length;
    const rows = findings.map((f) => {
      const c = f.comparison;
      const s = f.statistic;
      return [
        c.variant,
        `m${c.measure} ${c.tool}`,
        ...(multiPair ? [c.pair] : []),
        `${s} ${unitLabel(c.unit)}`,
        fmt(s === "mean" ? c.baselineSummary.mean : c.baselineSummary.p50),
        fmt(s === "mean" ? c.variantSummary.mean : c.variantSummary.p50),
        ciText(f),
        signedPct(f.pctChange),
        overLabel(c) + (c.source === "summaries" ? " (history)" : ""),
        verdictText(f, thresholdPct, markdown),
      ];
    });
    lines.push(renderTable(["variant", "measure", ...(multiPair ? ["pair"] : []), "statistic", "run A", "run B", "Δ [95% CI]", "change", "over", "verdict"], rows, markdown));
    const notes = new Set(compared.comparisons.flatMap((c) => (c.inference.note ? [c.inference.note] : [])));
    if (compared.comparisons.some((c) => c.inference.unit !== "sample-blocks")) notes.add("over replicas/reps: Δ is of the unit means (or medians) with Welch's 95% CI; change is Δ relative to run A's unit average");
    for (const n of notes) lines.push(markdown ? `- ${n}` : n);
  }
  for (const k of compared.notComparable) lines.push(`not compared: ${k}`);
  for (const k of compared.onlyInBaseline) lines.push(`only in run A: ${k}`);
  for (const k of compared.onlyInCandidate) lines.push(`only in run B: ${k}`);
  const regressions = findings.filter((f) => f.verdict === "regression");
  const confounded = regressions.filter((f) => f.confounded).length;
  if (thresholdPct !== undefined) {
    lines.push(
      regressions.length
        ? `${regressions.length} regression(s) beyond ${thresholdPct}%${confounded ? `, ${confounded} of them over one deployment a run: they may be the hosts drawn, not a change of the cloud (replicas ≥ 2 tell them apart)` : ""}`
        : `no regression beyond ${thresholdPct}%`,
    );
  }
  return lines.join("\n");
}
