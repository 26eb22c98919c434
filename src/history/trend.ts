/**
 * `latlab trend`: one metric of each variant × measure × host pair across an experiment's runs,
 * from the history's merged (`all`) summaries. Pure.
 */
import type { HistoryData } from "./historyStore.ts";
import type { RunRow, SummaryRow } from "./historySchema.ts";

export const TREND_METRICS = ["mean", "p50", "p90", "p95", "p99", "p999", "min", "max", "stddev", "n"] as const;
export type TrendMetric = (typeof TREND_METRICS)[number];

export interface TrendSeries {
  measure: number;
  tool: string;
  variant: string;
  pair: string;
  unit: SummaryRow["unit"];
  /** One value per run of `runs` (same order); null where that run has no figure. */
  values: (number | null)[];
}

export interface Trend {
  metric: TrendMetric;
  runs: Pick<RunRow, "runId" | "startedAt" | "status" | "gitCommit" | "latlabVersion">[];
  series: TrendSeries[];
}

export function trend(data: HistoryData, metric: TrendMetric, measure?: number): Trend {
  const rows = data.summaries.filter((s) => s.level === "all" && (measure === undefined || s.measure === measure));
  const runs = data.runs.filter((r) => rows.some((s) => s.runId === r.runId));
  const series = new Map<string, TrendSeries>();
  for (const s of rows) {
    const key = JSON.stringify([s.measure, s.variant, s.pair]);
    const entry = series.get(key) ?? { measure: s.measure, tool: s.tool, variant: s.variant, pair: s.pair, unit: s.unit, values: runs.map(() => null) };
    const at = runs.findIndex((r) => r.runId === s.runId);
    const value = s[metric];
    entry.values[at] = value ?? null;
    series.set(key, entry);
  }
  return {
    metric,
    runs: runs.map(({ runId, startedAt, status, gitCommit, latlabVersion }) => ({ runId, startedAt, status, gitCommit, latlabVersion })),
    series: [...series.values()].sort((a, b) => a.measure - b.measure || a.variant.localeCompare(b.variant) || a.pair.localeCompare(b.pair)),
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
