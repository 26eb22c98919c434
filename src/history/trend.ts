/**
 * `latlab trend`: one metric of each variant × measure × host pair across an experiment's runs,
 * from the history's merged (`all`) summaries. Pure.
 */
import type { HistoryData } from "./historyStore.ts";
import type { RunRow, SummaryRow } from "./historySchema.ts";

export const TREND_METRICS = ["mean", "p50", "p90", "p95", "p99", "p999", "min", "max", "stddev", "n"] as const;
export type TrendMetric = (typeof TREND_METRICS)[number];

export interface TrendSeries {
  /** The measure's index in the latest run that has it (an edit of the file may have moved it). */
  measure: number;
  /** Its identity (planHash.ts): what the series follows across runs; undefined for runs recorded before identities (followed by index). */
  measureId?: string;
  tool: string;
  variant: string;
  pair: string;
  unit: SummaryRow["unit"];
  /** One value per run of `runs` (same order); null where that run has no figure. */
  values: (number | null)[];
}

/** Where the runs stop being like the run before: its plan hash or latlab version changed. */
export interface TrendChange {
  /** Index into `runs` of the first run after the change. */
  at: number;
  runId: string;
  /** What changed, in words ("plan 1a2b3c4d → 5e6f7a8b", "latlab 0.1.0 → 0.2.0"). */
  what: string[];
}

export interface Trend {
  metric: TrendMetric;
  runs: Pick<RunRow, "runId" | "startedAt" | "status" | "gitCommit" | "latlabVersion" | "planHash" | "event">[];
  series: TrendSeries[];
  /** Markers: a series read across one of these compares runs that did not run the same plan, or the same latlab. */
  changes: TrendChange[];
}

const short = (hash: string | null) => (hash ? hash.slice(0, 8) : "unknown");

/** Each run whose plan hash or latlab version is not its predecessor's. */
export function trendChanges(runs: readonly Pick<RunRow, "runId" | "latlabVersion" | "planHash">[]): TrendChange[] {
  const changes: TrendChange[] = [];
  for (let i = 1; i < runs.length; i++) {
    const before = runs[i - 1]!;
    const now = runs[i]!;
    const what: string[] = [];
    if (before.planHash !== now.planHash) what.push(`plan ${short(before.planHash)} → ${short(now.planHash)}`);
    if (before.latlabVersion !== now.latlabVersion) what.push(`latlab ${before.latlabVersion} → ${now.latlabVersion}`);
    if (what.length) changes.push({ at: i, runId: now.runId, what });
  }
  return changes;
}

/**
 * The series follow a measure by its identity, not its index: a measure moved in the file stays
 * one series, a changed one (other parameters, pairs, path) starts a new one. A history with
 * runs recorded before identities follows every measure by index (one scheme for all rows).
 */
export function trend(data: HistoryData, metric: TrendMetric, measure?: number): Trend {
  const rows = data.summaries.filter((s) => s.level === "all" && (measure === undefined || s.measure === measure));
  const runs = data.runs.filter((r) => rows.some((s) => s.runId === r.runId));
  const byIndex = rows.some((s) => !s.measureId);
  const series = new Map<string, TrendSeries>();
  // Oldest run first, so a series keeps the index and tool of the latest run that has it.
  const order = new Map(runs.map((r, i) => [r.runId, i]));
  for (const s of [...rows].sort((x, y) => order.get(x.runId)! - order.get(y.runId)!)) {
    const key = JSON.stringify([byIndex || !s.measureId ? s.measure : s.measureId, s.variant, s.pair]);
    const entry = series.get(key) ?? { measure: s.measure, ...(byIndex || !s.measureId ? {} : { measureId: s.measureId }), tool: s.tool, variant: s.variant, pair: s.pair, unit: s.unit, values: runs.map(() => null) };
    entry.measure = s.measure;
    entry.values[order.get(s.runId)!] = s[metric] ?? null;
    series.set(key, entry);
  }
  return {
    metric,
    runs: runs.map(({ runId, startedAt, status, gitCommit, latlabVersion, planHash, event }) => ({ runId, startedAt, status, gitCommit, latlabVersion, planHash, event })),
    series: [...series.values()].sort((a, b) => a.measure - b.measure || a.variant.localeCompare(b.variant) || a.pair.localeCompare(b.pair) || (a.measureId ?? "").localeCompare(b.measureId ?? "")),
    changes: trendChanges(runs),
  };
}

/** The measures (by index in the experiment's measure list) the runs of `data` have figures for, with their tools. */
export function measuresIn(data: HistoryData): { measure: number; tools: string[] }[] {
  const tools = new Map<number, Set<string>>();
  for (const s of data.summaries) if (s.level === "all") tools.set(s.measure, (tools.get(s.measure) ?? new Set()).add(s.tool));
  return [...tools].sort(([a], [b]) => a - b).map(([measure, t]) => ({ measure, tools: [...t].sort() }));
}

/**
 * Why `--measure N` selects nothing in runs that do have figures: the experiment has no measure N
 * (an experiment's measures are numbered from 0), said with the ones it has, so an index out of
 * range is not read as an empty history. Undefined when N is one of them, not given, or the runs
 * have no figures at all (that is the history's answer, not the flag's).
 */
export function unknownMeasure(data: HistoryData, measure: number | undefined): string | undefined {
  if (measure === undefined) return undefined;
  const known = measuresIn(data);
  if (!known.length || known.some((m) => m.measure === measure)) return undefined;
  return `have no measure ${measure}; their measures are ${known.map((m) => `${m.measure} (${m.tools.join(", ")})`).join(", ")}`;
}
