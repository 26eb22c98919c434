/**
 * The trend page's content from the history. Pure: the caller reads the history
 * (historyStore.ts loadHistory) and draws the result (trendPage.ts).
 *
 * Each run is judged the way `latlab gate` judges a new run: against its previous comparable runs
 * (comparable.ts: same plan hash, latlab version, event and ref, complete), each one unit, by
 * gate() with its default settings. So the band drawn at a run is the band that run was (or would
 * have been) judged against, and a run with fewer than k comparable predecessors has none
 * ("learning"). Points are matched across runs by measure identity (as trend.ts follows them); a
 * run recorded before identities is matched by its measure's index, and since it has no plan hash
 * it is never comparable with a later run either.
 */
import { comparableRuns } from "../../history/comparable.ts";
import { ALERT_VERDICTS, gate, headlinesOf, measureKey } from "../../history/gate.ts";
import { GateConfigSchema, type GateConfigInput, type GateReport, type GateRun, type HeadlineStatistic } from "../../history/gateSchema.ts";
import type { HistoryData } from "../../history/historyStore.ts";
import type { RunRow, SummaryRow } from "../../history/historySchema.ts";
import { trendChanges } from "../../history/trend.ts";
import type { Metric } from "../../results/summary.ts";
import type { TrendAlert, TrendExperiment, TrendMeasure, TrendPageModel, TrendPageRun, TrendPoint } from "./trendPageSchema.ts";

/**
 * The statistic each chart follows, one of the gate's headlines (HEADLINE_STATISTICS): the median
 * round trip (the typical one, robust to a few outliers), the mean throughput (volume over time),
 * the median hop count. The gate's verdicts on the other headlines (RTT mean) are listed, not drawn.
 */
export const CHART_STATISTIC: Record<Metric, HeadlineStatistic> = { rtt: "p50", throughput: "mean", hops: "p50" };


function gateRunOf(run: RunRow, summaries: readonly SummaryRow[]): GateRun {
  return { runId: run.runId, startedAt: run.startedAt, headlines: headlinesOf(summaries, measureKey) };
}

function experimentModel(experiment: string, runs: readonly RunRow[], summaries: readonly SummaryRow[], settings: GateConfigInput): TrendExperiment {
  const byRun = new Map<string, SummaryRow[]>();
  for (const s of summaries) if (s.level === "all") byRun.set(s.runId, [...(byRun.get(s.runId) ?? []), s]);
  const gateRuns = new Map(runs.map((r) => [r.runId, gateRunOf(r, byRun.get(r.runId) ?? [])]));
  // A measure's index and tool as the latest run that has it names them (runs are oldest first).
  const labels = new Map<string, { measure: number; tool: string }>();
  for (const r of runs) for (const s of byRun.get(r.runId) ?? []) labels.set(measureKey(s), { measure: s.measure, tool: s.tool });

  const pageRuns: TrendPageRun[] = [];
  const reports: { run: RunRow; report: GateReport }[] = [];
  for (const run of runs) {
    // Strictly earlier runs only, as gate() takes them.
    const { runs: previous, excluded } = comparableRuns({ runs }, run);
    const entry: TrendPageRun = {
      runId: run.runId,
      startedAt: run.startedAt,
      status: run.status,
      latlabVersion: run.latlabVersion,
      planHash: run.planHash,
      event: run.event,
      gitCommit: run.gitCommit,
      comparable: previous.length,
      excluded,
    };
    try {
      reports.push({ run, report: gate(gateRuns.get(run.runId)!, previous.map((p) => gateRuns.get(p.runId)!), settings) });
    } catch (error) {
      entry.gateError = error instanceof Error ? error.message : String(error);
    }
    pageRuns.push(entry);
  }

  const measures = new Map<string, TrendMeasure>();
  const alerts: TrendAlert[] = [];
  for (const { run, report } of reports) {
    for (const c of report.checks) {
      const label = labels.get(c.measure)!;
      if (ALERT_VERDICTS.includes(c.verdict)) {
        alerts.push({ runId: run.runId, startedAt: run.startedAt, variant: c.variant, measure: label.measure, tool: label.tool, pair: c.pair, statistic: c.statistic, verdict: c.verdict, text: c.text });
      }
      if (c.statistic !== CHART_STATISTIC[c.metric]) continue;
      const m = measures.get(c.measure) ?? { measureId: c.measure, ...label, metric: c.metric, unit: c.unit, statistic: c.statistic, points: [] };
      const band = c.band ? { low: c.band.low, high: c.band.high, center: c.band.center, level: c.band.level, scale: c.band.scale } : null;
      m.points.push({ runId: run.runId, startedAt: run.startedAt, series: c.variant, variant: c.variant, pair: c.pair, value: c.value, ci: null, verdict: c.verdict, band, n: c.n, minRuns: c.minRuns, text: c.text });
      measures.set(c.measure, m);
    }
  }
  for (const m of measures.values()) {
    // The pair joins the series' name only where a measure has several.
    if (new Set(m.points.map((p) => p.pair)).size > 1) for (const p of m.points) p.series = `${p.variant} ${p.pair}`;
  }
  const at = new Map(runs.map((r) => [r.runId, r.startedAt]));
  return {
    experiment,
    runs: pageRuns,
    measures: [...measures.values()].sort((a, b) => a.measure - b.measure || a.measureId.localeCompare(b.measureId)),
    alerts,
    changes: trendChanges(runs).map((c) => ({ runId: c.runId, startedAt: at.get(c.runId)!, what: c.what })),
  };
}

/** The page's content: every experiment of `data` (by name), each run judged by the gate against its previous comparable runs. */
export function trendPageModel(data: HistoryData, options: { history: string; generatedAt: string; gate?: GateConfigInput }): TrendPageModel {
  const config = GateConfigSchema.parse(options.gate ?? {});
  const names = [...new Set(data.runs.map((r) => r.experiment))].sort();
  const experiments = names.map((name) => {
    // Oldest first (as loadHistory reads them): a change marker and "previous" depend on the order.
    const runs = data.runs.filter((r) => r.experiment === name).sort((a, b) => Date.parse(a.startedAt) - Date.parse(b.startedAt) || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0));
    const ids = new Set(runs.map((r) => r.runId));
    return experimentModel(name, runs, data.summaries.filter((s) => ids.has(s.runId)), options.gate ?? {});
  });
  return {
    history: options.history,
    generatedAt: options.generatedAt,
    gate: { level: 1 - config.alpha, minRuns: config.minRuns, maxRuns: config.maxRuns, thresholdPct: config.thresholdPct, thresholdPctByMetric: { ...config.thresholdPctByMetric } },
    experiments,
  };
}
