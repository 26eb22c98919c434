/**
 * The trend page's charts as Vega-Lite specifications, data inline; rendered to SVG in Node by
 * renderSvg.ts, like the run report's. One chart per experiment × measure: each run's headline
 * statistic per series (a line through the runs), the gate's band at each run it had one (a pale
 * bar), the alerts ringed, and a dashed rule where the plan hash or latlab version changed. Pure.
 */
import type { TopLevelSpec } from "vega-lite";
import { ALERT_VERDICTS } from "../../history/gate.ts";
import type { ChartSpec } from "../html/chartSpecs.ts";
import { metricLabel } from "../wording.ts";
import type { TrendExperiment, TrendMeasure } from "./trendPageSchema.ts";

const WIDTH = 620;

/** Layer names: vega gives each layer's mark group this class, which is what the browser test and a reader's stylesheet find. */
export const TREND_LAYERS = { band: "trend_band", value: "trend_value", alert: "trend_alert", change: "trend_change" } as const;

const slug = (s: string) => s.replace(/[^A-Za-z0-9]+/g, "-").replace(/^-|-$/g, "").toLowerCase();

/** A chart's id, unique on the page: the experiment, the measure's index and tool, and a hash-free tail of its identity. */
export const trendChartId = (experiment: string, m: Pick<TrendMeasure, "measure" | "tool" | "measureId">, index: number) => `${slug(experiment) || "experiment"}-m${m.measure}-${slug(m.tool)}-${index}`;

export const statisticLabel = (m: Pick<TrendMeasure, "statistic">) => (m.statistic === "p50" ? "median (p50)" : "mean");

export function trendChart(experiment: TrendExperiment, m: TrendMeasure, index: number): ChartSpec {
  const alerts = new Set<string>(ALERT_VERDICTS);
  const points = m.points.map((p) => ({
    t: p.startedAt,
    run: p.runId,
    series: p.series,
    value: p.value,
    verdict: p.verdict,
    low: p.band?.low ?? null,
    high: p.band?.high ?? null,
    alert: alerts.has(p.verdict),
  }));
  // Only the changes inside this chart's span of runs: a marker elsewhere would stretch its axis.
  const times = points.map((p) => Date.parse(p.t));
  const [first, last] = [Math.min(...times), Math.max(...times)];
  const changes = experiment.changes.filter((c) => Date.parse(c.startedAt) >= first && Date.parse(c.startedAt) <= last).map((c) => ({ t: c.startedAt, run: c.runId, what: c.what.join("; ") }));
  // UTC, as the runs' times are written everywhere else (a page built on a runner has no reader's time zone to guess).
  const x = { field: "t", type: "temporal" as const, title: "run started (UTC)", scale: { type: "utc" as const }, axis: { format: "%b %d %H:%M", labelAngle: -30, labelOverlap: true } };
  const y = { field: "value", type: "quantitative" as const, title: `${statisticLabel(m)} ${metricLabel(m.metric, m.unit)}`, scale: { zero: false } };
  const count = new Set(points.map((p) => p.series)).size;
  const color = { field: "series", type: "nominal" as const, title: null, legend: { orient: "bottom" as const, direction: "vertical" as const, labelLimit: 300, symbolLimit: 0, symbolOpacity: 1 }, ...(count > 10 ? { scale: { scheme: "category20" } } : {}) };
  const banded = points.filter((p) => p.low !== null);
  const flagged = points.filter((p) => p.alert);
  const layer: object[] = [];
  if (banded.length) {
    layer.push({
      name: TREND_LAYERS.band,
      data: { values: banded },
      mark: { type: "rule", strokeWidth: 7, opacity: 0.25, strokeCap: "round" },
      encoding: { x, y: { ...y, field: "low" }, y2: { field: "high" }, color },
    });
  }
  layer.push({
    name: TREND_LAYERS.value,
    data: { values: points },
    mark: { type: "line", point: { filled: true, size: 36 } },
    encoding: { x, y, color, tooltip: [{ field: "run" }, { field: "series" }, { field: "value", format: ".4~g" }, { field: "verdict" }] },
  });
  if (flagged.length) {
    layer.push({
      name: TREND_LAYERS.alert,
      data: { values: flagged },
      mark: { type: "point", shape: "circle", size: 260, filled: false, strokeWidth: 2.5, color: "#cf222e" },
      encoding: { x, y, tooltip: [{ field: "run" }, { field: "series" }, { field: "verdict" }] },
    });
  }
  if (changes.length) {
    layer.push({
      name: TREND_LAYERS.change,
      data: { values: changes },
      mark: { type: "rule", strokeDash: [4, 4], color: "#8250df", strokeWidth: 1.5 },
      encoding: { x: { field: "t", type: "temporal", scale: { type: "utc" } }, tooltip: [{ field: "run" }, { field: "what" }] },
    });
  }
  const level = m.points.find((p) => p.band)?.band?.level;
  const banding = level !== undefined
    ? `Pale bars: the gate's ${Math.round(level * 1000) / 10} % prediction band each run was judged against, made from its previous comparable runs (one unit each)`
    : "No band yet: every run here is still learning (fewer previous comparable runs than the gate needs)";
  return {
    id: trendChartId(experiment.experiment, m, index),
    title: `Measure ${m.measure} (${m.tool}): ${statisticLabel(m)} ${metricLabel(m.metric, m.unit)} per run`,
    caption:
      `One point per run and series: the run's ${statisticLabel(m)} over all its samples (replicas and repetitions merged); no CI recorded (the history keeps each run's summary, not an interval for it). ` +
      `${banding}. ${flagged.length ? `Red rings: ${flagged.length} alert(s) (regression, or a changed hop count). ` : "No alert. "}` +
      `${changes.length ? `Dashed violet rules: the plan hash or latlab version changed (${changes.length}); runs either side were not measured the same way.` : "No plan or latlab change in these runs."}`,
    spec: {
      $schema: "https://vega.github.io/schema/vega-lite/v6.json",
      width: WIDTH,
      height: 260,
      layer,
    } as TopLevelSpec,
  };
}
