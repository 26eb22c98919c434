/**
 * Which charts a run gets, from its results and samples: per measure a CDF per variant, a box
 * per variant and replica, a time series per cell, the Δ of each comparison with its CI, and
 * seed 000's pair matrix where pairs were compared. Pure (samples come through `samplesOf`).
 */
import type { Measurement, Results } from "../../results/schema.ts";
import { measureLabels, pairOf } from "../wording.ts";
import { cdfPoints, fiveNumbers, percentileMarks, sortedCopy, windowSeries } from "./chartData.ts";
import { boxSpec, cdfSpec, deltaSpec, pairMatrixSpec, timeSpec, type ChartSpec } from "./chartSpecs.ts";
import { changeLabel, changeLabelsClash } from "../verdicts.ts";

/** Lines a time-series chart shows at most (the first cells in run order; the caption says how many were left out). */
export const MAX_TIME_LINES = 24;

const slug = (s: string) => s.replace(/[^A-Za-z0-9]+/g, "-").replace(/^-|-$/g, "").toLowerCase();

export interface MeasureCharts {
  measure: number;
  label: string;
  charts: ChartSpec[];
}

function concat(sets: number[][]): Float64Array {
  const out = new Float64Array(sets.reduce((n, s) => n + s.length, 0));
  let at = 0;
  for (const s of sets) {
    out.set(s, at);
    at += s.length;
  }
  return out;
}

export function reportCharts(results: Results, samplesOf: (cell: string) => number[]): MeasureCharts[] {
  const labels = measureLabels(results.measurements);
  const out: MeasureCharts[] = [];
  for (const measure of [...labels.keys()].sort((a, b) => a - b)) {
    const label = labels.get(measure)!;
    const ok = results.measurements.filter((m) => m.measure === measure && m.status === "ok" && m.summary);
    if (!ok.length) continue;
    const { metric, unit } = ok[0]!.summary!;
    const multiPair = new Set(ok.map(pairOf)).size > 1;
    const seriesOf = (m: Measurement) => (multiPair ? `${m.variant} ${pairOf(m)}` : m.variant);
    // Repetitions numbered wherever an experiment has them (rep0 too), replicas always.
    const repeated = ok.some((m) => m.repetition > 0);
    const unitOf = (m: Measurement) => `${seriesOf(m)} r${m.replica}${repeated ? ` rep${m.repetition}` : ""}`;
    const samples = new Map(ok.map((m) => [m.cell, samplesOf(m.cell)]));
    // Each cell sorted once, for its box and (when a series is that one cell) its CDF.
    const sortedCells = new Map<string, Float64Array>();
    const sortedOf = (cell: string) => {
      let s = sortedCells.get(cell);
      if (!s) sortedCells.set(cell, (s = sortedCopy(samples.get(cell)!)));
      return s;
    };
    const charts: ChartSpec[] = [];
    const id = (kind: string) => `m${measure}-${slug(label)}-${kind}`;

    // CDF per series, all its cells' samples together.
    const bySeries = new Map<string, string[]>();
    for (const m of ok) if (samples.get(m.cell)!.length) bySeries.set(seriesOf(m), [...(bySeries.get(seriesOf(m)) ?? []), m.cell]);
    if (bySeries.size) {
      const series = [...bySeries].map(([name, cells]) => {
        const sorted = cells.length === 1 ? sortedOf(cells[0]!) : sortedCopy(concat(cells.map((c) => samples.get(c)!)));
        return { series: `${name} (n=${sorted.length})`, points: cdfPoints(sorted), marks: percentileMarks(sorted) };
      });
      charts.push(cdfSpec(id("cdf"), `${label}: distribution per ${multiPair ? "variant and pair" : "variant"}`, metric, unit, series));
      // Boxes per variant, replica and repetition.
      const boxes = ok
        .filter((m) => samples.get(m.cell)!.length)
        .map((m) => ({
          series: seriesOf(m),
          group: unitOf(m),
          ...fiveNumbers(sortedOf(m.cell)),
        }));
      charts.push(boxSpec(id("box"), `${label}: per variant and replica`, metric, unit, boxes));
      // Over time, cell by cell.
      const timed = ok.filter((m) => samples.get(m.cell)!.length >= 2);
      // The samples span what the tool was asked to measure, not the cell's setup and collection
      // (nor, for a re-attached cell, the time no runner was there).
      const duration = (m: Measurement) => m.timing?.measurementSeconds || (Date.parse(m.finishedAt) - Date.parse(m.startedAt)) / 1000;
      // Without a cell's times (a results.json made by hand), the axis is the sample's number instead.
      const timesKnown = timed.every((m) => Number.isFinite(duration(m)) && duration(m) > 0);
      const lines = timed.slice(0, MAX_TIME_LINES).map((m) => {
        const n = samples.get(m.cell)!.length;
        return { series: unitOf(m), points: windowSeries(samples.get(m.cell)!, timesKnown ? duration(m) : n) };
      });
      if (lines.length) {
        const left = timed.length - lines.length;
        charts.push(
          timeSpec(
            id("time"),
            `${label}: over each cell's time`,
            metric,
            unit,
            lines,
            timesKnown ? "seconds into the cell" : "sample number",
            `Means of consecutive windows (at most 200 a cell) in the order measured, a sample's time taken as its place in that order over the cell's duration: drift, steps and outages show here.${left ? ` ${left} more cell(s) not drawn.` : ""}`,
          ),
        );
      }
    }
    // Δ with its CI.
    const nameVariants = changeLabelsClash(results);
    const deltas = results.comparisons
      .filter((c) => c.measure === measure && c.diffMean)
      .map((c) => ({
        label: `${changeLabel(results, c.variant, c.baseline)}${nameVariants ? ` (${c.variant})` : ""}${multiPair ? ` ${c.pair}` : ""}`,
        estimate: c.diffMean!.estimate,
        lo: c.diffMean!.ci95[0],
        hi: c.diffMean!.ci95[1],
        over: c.inference.unit,
      }));
    if (deltas.length) charts.push(deltaSpec(id("delta"), `${label}: Δ mean vs baseline, 95 % CI`, unit, deltas));
    // Seed 000's matrix: pairs against pairs, within each variant.
    for (const variant of results.variants) {
      const cells = results.pairComparisons
        .filter((p) => p.measure === measure && p.variant === variant.id && p.ratioMean !== undefined)
        .map((p) => ({ pair: p.pair, baselinePair: p.baselinePair, ratio: p.ratioMean!, text: `${p.ratioMean!.toFixed(2)}×` }));
      if (cells.length) charts.push(pairMatrixSpec(id(`pairs-${slug(variant.id)}`), `${label}: pair against pair (${variant.id})`, cells));
    }
    out.push({ measure, label, charts });
  }
  return out;
}
