/**
 * Writes a run's report beside its results.json: report.html (self-contained), report.md, and
 * each chart's Vega-Lite specification under charts/ for users to restyle. Called at the end of
 * every run and by `latlab report <run>` (older runs too).
 */
import { mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Results } from "../results/schema.ts";
import { reportCharts } from "./html/reportCharts.ts";
import { reportHtml } from "./html/reportHtml.ts";
import { reportMarkdown } from "./reportMarkdown.ts";
import { measureLabels } from "./wording.ts";

export const CHARTS_FOLDER = "charts";

export interface WrittenReport {
  html: string;
  markdown: string;
  specs: string[];
}

/** Whole files only: a report cut off by a crash is never left looking finished. */
function writeWhole(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, text);
    renameSync(tmp, file);
  } catch (error) {
    rmSync(tmp, { force: true });
    throw error;
  }
}

export async function writeReport(dir: string, results: Results, samplesOf: (cell: string) => number[]): Promise<WrittenReport> {
  // Each cell's samples are read once, for every chart and table that needs them.
  const cache = new Map<string, number[]>();
  const samples = (cell: string) => {
    let s = cache.get(cell);
    if (!s) cache.set(cell, (s = samplesOf(cell)));
    return s;
  };
  const charts = reportCharts(results, samples);
  mkdirSync(join(dir, CHARTS_FOLDER), { recursive: true });
  // Specs of an earlier report whose charts this one no longer has are not left to mislead.
  for (const old of readdirSync(join(dir, CHARTS_FOLDER))) if (old.endsWith(".vl.json")) rmSync(join(dir, CHARTS_FOLDER, old), { force: true });
  const specs: string[] = [];
  for (const chart of charts.flatMap((g) => g.charts)) {
    const file = join(dir, CHARTS_FOLDER, `${chart.id}.vl.json`);
    writeWhole(file, `${JSON.stringify(chart.spec, null, 1)}\n`);
    specs.push(file);
  }
  const html = join(dir, "report.html");
  writeWhole(html, await reportHtml(results, charts, measureLabels(results.measurements), { specPath: (id) => `${CHARTS_FOLDER}/${id}.vl.json` }));
  const markdown = join(dir, "report.md");
  writeWhole(markdown, reportMarkdown(results, samples));
  return { html, markdown, specs };
}
