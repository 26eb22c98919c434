/**
 * The report's charts as Vega-Lite specifications, data inline (already reduced: chartData.ts).
 * Saved beside the report so that users can restyle them; rendered to SVG by renderSvg.ts. Pure.
 */
import type { TopLevelSpec } from "vega-lite";
import type { FiveNumbers, QuantilePoint, WindowPoint } from "./chartData.ts";

const WIDTH = 620;
const NINES_LABELS = ["p0", "p90", "p99", "p99.9", "p99.99", "p99.999", "p99.9999", "p99.99999"];

export interface ChartSpec {
  /** File-name-safe id, unique in a report. */
  id: string;
  title: string;
  /** One sentence under the chart: what is drawn and what it is reduced from. */
  caption: string;
  spec: TopLevelSpec;
}

const axisTitle = (metric: string, unit: string) => (metric === unit ? metric : `${metric} (${unit === "us" ? "µs" : unit})`);

/** Series colours and legend: 20 colours past 10 series, every entry listed. */
const seriesColor = (count: number) => ({
  field: "series",
  type: "nominal" as const,
  title: null,
  legend: { labelLimit: 320, symbolLimit: 0 },
  ...(count > 10 ? { scale: { scheme: "category20" } } : {}),
});

export function cdfSpec(
  id: string,
  title: string,
  metric: string,
  unit: string,
  series: { series: string; points: QuantilePoint[]; marks: { label: string; nines: number; value: number }[] }[],
): ChartSpec {
  const maxNines = Math.max(1, ...series.flatMap((s) => s.points.map((p) => p.nines)));
  const ticks = Array.from({ length: Math.min(NINES_LABELS.length, Math.ceil(maxNines) + 1) }, (_, i) => i);
  const positive = series.every((s) => s.points.every((p) => p.value > 0));
  const x = { field: "value", type: "quantitative" as const, title: axisTitle(metric, unit), scale: positive ? { type: "log" as const } : { zero: false } };
  const y = {
    field: "nines",
    type: "quantitative" as const,
    title: "percentile",
    scale: { domain: [0, Math.ceil(maxNines)] },
    axis: { values: ticks, labelExpr: `[${NINES_LABELS.map((l) => `'${l}'`).join(",")}][datum.value]` },
  };
  const color = seriesColor(series.length);
  return {
    id,
    title,
    caption: `Distribution of every sample, per series: the value${positive ? " (log scale)" : ""} below which a share of the samples lies, on a scale that opens up the tail (p90, p99, p99.9…). Drawn from quantiles (every 0.5 % to p99, 20 a decade beyond, and the maximum); marked percentiles only where the count supports them.`,
    spec: {
      $schema: "https://vega.github.io/schema/vega-lite/v6.json",
      width: WIDTH,
      height: 300,
      layer: [
        {
          data: { values: series.flatMap((s) => s.points.map((p) => ({ series: s.series, value: p.value, nines: p.nines, q: p.q }))) },
          mark: { type: "line", interpolate: "step-after", clip: true },
          encoding: { x, y, color, tooltip: [{ field: "series" }, { field: "q", format: ".5f" }, { field: "value", format: ".1f" }] },
        },
        {
          data: { values: series.flatMap((s) => s.marks.map((m) => ({ series: s.series, value: m.value, nines: m.nines, label: m.label }))) },
          mark: { type: "point", filled: true, size: 40 },
          encoding: { x, y, color, shape: { field: "label", type: "nominal", title: "marked", sort: ["p50", "p99", "p99.9", "p99.99"] }, tooltip: [{ field: "series" }, { field: "label" }, { field: "value", format: ".1f" }] },
        },
      ],
    } as TopLevelSpec,
  };
}

export function boxSpec(id: string, title: string, metric: string, unit: string, boxes: ({ series: string; group: string } & FiveNumbers)[]): ChartSpec {
  const x = { field: "group", type: "nominal" as const, title: null, sort: null, axis: { labelAngle: -30, labelLimit: 180 } };
  // Whiskers reach the maximum, often far out: a log scale keeps the boxes readable.
  const positive = boxes.every((b) => b.min > 0);
  const y = (field: string) => ({ field, type: "quantitative" as const, title: axisTitle(metric, unit), scale: positive ? { type: "log" as const } : { zero: false } });
  const color = seriesColor(new Set(boxes.map((b) => b.series)).size);
  // Boxes narrow as they grow in number, never overlapping.
  const barSize = Math.max(2, Math.min(14, Math.floor((0.6 * WIDTH) / Math.max(1, boxes.length))));
  return {
    id,
    title,
    caption: "Per variant and replica (and repetition): the box spans the middle half of the samples (p25–p75), the tick is the median, the whisker min to max.",
    spec: {
      $schema: "https://vega.github.io/schema/vega-lite/v6.json",
      width: WIDTH,
      height: 260,
      data: { values: boxes },
      layer: [
        { mark: { type: "rule" }, encoding: { x, y: y("min"), y2: { field: "max" }, color } },
        { mark: { type: "bar", size: barSize }, encoding: { x, y: y("q1"), y2: { field: "q3" }, color, tooltip: [{ field: "group" }, { field: "count" }, { field: "q1" }, { field: "median" }, { field: "q3" }] } },
        { mark: { type: "tick", color: "black", size: barSize + 2 }, encoding: { x, y: y("median") } },
      ],
    } as TopLevelSpec,
  };
}

export function timeSpec(id: string, title: string, metric: string, unit: string, lines: { series: string; points: WindowPoint[] }[], xTitle: string, caption: string): ChartSpec {
  return {
    id,
    title,
    caption,
    spec: {
      $schema: "https://vega.github.io/schema/vega-lite/v6.json",
      width: WIDTH,
      height: 240,
      data: { values: lines.flatMap((l) => l.points.map((p) => ({ series: l.series, t: p.t, mean: p.mean, count: p.count }))) },
      mark: { type: "line", point: false },
      encoding: {
        x: { field: "t", type: "quantitative", title: xTitle },
        y: { field: "mean", type: "quantitative", title: `${axisTitle(metric, unit)}, window mean`, scale: { zero: false } },
        color: seriesColor(lines.length),
        tooltip: [{ field: "series" }, { field: "t", format: ".1f" }, { field: "mean", format: ".1f" }, { field: "count" }],
      },
    } as TopLevelSpec,
  };
}

export function deltaSpec(id: string, title: string, unit: string, rows: { label: string; estimate: number; lo: number; hi: number; over: string }[]): ChartSpec {
  const y = { field: "label", type: "nominal" as const, title: null, sort: null, axis: { labelLimit: 320 } };
  return {
    id,
    title,
    caption: "Δ of the means (candidate − baseline) with its 95 % confidence interval, over the unit each row names; an interval that crosses the zero line is no clear difference.",
    spec: {
      $schema: "https://vega.github.io/schema/vega-lite/v6.json",
      width: WIDTH - 200,
      height: { step: 28 },
      data: { values: rows },
      layer: [
        { mark: { type: "rule", strokeDash: [4, 4], color: "#888" }, data: { values: [{ zero: 0 }] }, encoding: { x: { field: "zero", type: "quantitative" } } },
        { mark: { type: "rule", strokeWidth: 2 }, encoding: { y, x: { field: "lo", type: "quantitative", title: `Δ mean (${unit === "us" ? "µs" : unit})` }, x2: { field: "hi" } } },
        { mark: { type: "point", filled: true, size: 60 }, encoding: { y, x: { field: "estimate", type: "quantitative" }, tooltip: [{ field: "label" }, { field: "estimate", format: ".2f" }, { field: "lo", format: ".2f" }, { field: "hi", format: ".2f" }, { field: "over" }] } },
      ],
    } as TopLevelSpec,
  };
}

export function pairMatrixSpec(id: string, title: string, cells: { pair: string; baselinePair: string; ratio: number; text: string }[]): ChartSpec {
  return {
    id,
    title,
    caption: "Within one variant, each host pair against each earlier pair (as seed 000's table): the ratio of the means, candidate ÷ baseline.",
    spec: {
      $schema: "https://vega.github.io/schema/vega-lite/v6.json",
      width: { step: 110 },
      height: { step: 36 },
      data: { values: cells },
      encoding: {
        x: { field: "baselinePair", type: "nominal", title: "baseline pair", axis: { labelAngle: 0 } },
        y: { field: "pair", type: "nominal", title: "pair" },
      },
      layer: [
        { mark: "rect", encoding: { color: { field: "ratio", type: "quantitative", title: "ratio", scale: { scheme: "blueorange", domainMid: 1 } } } },
        { mark: { type: "text", fontSize: 12 }, encoding: { text: { field: "text" } } },
      ],
    } as TopLevelSpec,
  };
}
