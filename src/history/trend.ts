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
