/**
 * The trend page's HTML: one self-contained page (no script, no CDN, no web font; the charts are
 * SVG drawn in Node) from the page model (trendModel.ts), as report.html is for one run. Every
 * text from the history (experiment, variant, pair, tool names, run ids, versions) is escaped.
 */
import { escapeHtml } from "../html/escapeHtml.ts";
import { renderSvg } from "../html/renderSvg.ts";
import { unitLabel } from "../wording.ts";
import { trendChart } from "./trendCharts.ts";
import type { TrendExperiment, TrendMeasure, TrendPageModel } from "./trendPageSchema.ts";

const STYLE = `
:root { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1b1f24; background: #fff; }
body { margin: 0 auto; max-width: 1100px; padding: 16px; line-height: 1.45; overflow-wrap: anywhere; }
h1 { font-size: 1.5rem; margin: 0 0 4px; } h2 { font-size: 1.2rem; margin-top: 32px; border-bottom: 1px solid #d0d7de; } h3 { font-size: 1.05rem; }
.meta { color: #57606a; font-size: .9rem; }
table { border-collapse: collapse; font-size: .85rem; margin: 8px 0; display: block; overflow-x: auto; max-width: 100%; }
th, td { border: 1px solid #d0d7de; padding: 3px 7px; text-align: left; white-space: nowrap; vertical-align: top; }
th { background: #f6f8fa; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.alert td { background: #ffebe9; }
ul.alerts li { margin: 4px 0; border-left: 3px solid #cf222e; padding-left: 6px; }
ul.changes li { margin: 4px 0; border-left: 3px dashed #8250df; padding-left: 6px; }
.ok { color: #1a7f37; }
figure { margin: 16px 0 24px; } figure svg { max-width: 100%; height: auto; } figcaption { font-size: .85rem; color: #57606a; max-width: 760px; }
.note { background: #fff8c5; padding: 6px 10px; border-radius: 6px; font-size: .9rem; }
details { margin: 8px 0; } summary { cursor: pointer; }
@media (max-width: 600px) { body { padding: 8px; } h1 { font-size: 1.25rem; } }
`;

const td = (v: string, num = false) => `<td${num ? ' class="num"' : ""}>${escapeHtml(v)}</td>`;
const th = (v: string) => `<th>${escapeHtml(v)}</th>`;
const tr = (cells: string[], cls = "") => `<tr${cls ? ` class="${cls}"` : ""}>${cells.join("")}</tr>`;
const short = (hash: string | null) => (hash ? hash.slice(0, 8) : "none");
/** Four significant figures: enough to tell a value from its band's edges. */
const num = (v: number) => String(Number(v.toPrecision(4)));
const slug = (s: string) => s.replace(/[^A-Za-z0-9]+/g, "-").replace(/^-|-$/g, "").toLowerCase();

function method(model: TrendPageModel): string {
  const g = model.gate;
  const byMetric = Object.entries(g.thresholdPctByMetric).map(([metric, pct]) => `${pct} % for ${metric}`);
  return `<p>Each point is one run's headline figure for one variant (and host pair) of a measure: the median (p50) round trip, the mean throughput, the median hop count, over all the run's samples. The history keeps each run's summary but no interval for it: <b>no CI recorded</b>, none drawn. The band at a run is the regression gate's (<code>latlab gate</code>): a ${escapeHtml(num(g.level * 100))} % prediction interval for one new run made from that run's previous comparable runs (same plan, latlab version, event and ref; each run one unit; log scale for RTT and throughput; at most the latest ${g.maxRuns}). A run is flagged when it is outside the band <i>and</i> changed by more than ${escapeHtml(num(g.thresholdPct))} %${byMetric.length ? ` (${escapeHtml(byMetric.join(", "))})` : ""}; with fewer than ${g.minRuns} previous comparable runs it is still learning and has no band.</p>`;
}

function alertsHtml(e: TrendExperiment): string {
  if (!e.alerts.length) return `<p class="ok no-alerts">No regression and no changed hop count in ${e.runs.length} run(s).</p>`;
  const items = e.alerts.map(
    (a) =>
      `<li class="alert verdict-${escapeHtml(a.verdict)}" data-run="${escapeHtml(a.runId)}" data-variant="${escapeHtml(a.variant)}" data-measure="${a.measure}" data-pair="${escapeHtml(a.pair)}">run <code>${escapeHtml(a.runId)}</code> (${escapeHtml(a.startedAt)}), ${escapeHtml(a.variant)}, measure ${a.measure} (${escapeHtml(a.tool)}) ${escapeHtml(a.pair)}, ${escapeHtml(a.statistic)}: ${escapeHtml(a.text)}</li>`,
  );
  return `<h3>Alerts (${e.alerts.length})</h3><ul class="alerts">${items.join("")}</ul>`;
}

function changesHtml(e: TrendExperiment): string {
  if (!e.changes.length) return "";
  const items = e.changes.map((c) => `<li class="change" data-run="${escapeHtml(c.runId)}">from run <code>${escapeHtml(c.runId)}</code> (${escapeHtml(c.startedAt)}): ${escapeHtml(c.what.join("; "))} — the runs before and after did not measure the same way</li>`);
  return `<h3>Changes</h3><ul class="changes">${items.join("")}</ul>`;
}

function pointsTable(m: TrendMeasure): string {
  const unit = unitLabel(m.unit);
  const rows = m.points.map((p) =>
    tr(
      [td(p.runId), td(p.startedAt), td(p.series), td(num(p.value), true), td("no CI recorded"), td(p.band ? `${num(p.band.low)}–${num(p.band.high)}` : "—", true), td(p.band ? String(p.n) : `${p.n} of ${p.minRuns} (learning)`, true), td(p.verdict)],
      p.verdict === "regression" || p.verdict === "changed" ? "alert" : "",
    ),
  );
  return `<details><summary>Figures (${m.points.length})</summary><table><thead>${tr(["run", "started", "series", `${m.statistic} (${unit})`, "CI", `band (${unit})`, "previous runs", "verdict"].map(th))}</thead><tbody>${rows.join("")}</tbody></table></details>`;
}

/** The earlier runs left out, by reason with a count: listing each would grow with the square of the history. */
function leftOut(excluded: TrendExperiment["runs"][number]["excluded"]): string {
  if (!excluded.length) return "—";
  const reasons = new Map<string, number>();
  for (const x of excluded) for (const why of x.why) reasons.set(why, (reasons.get(why) ?? 0) + 1);
  return `${excluded.length}: ${[...reasons].map(([why, n]) => `${why} ×${n}`).join("; ")}`;
}

function runsTable(e: TrendExperiment): string {
  const rows = e.runs.map((r) =>
    tr([
      td(r.runId),
      td(r.startedAt),
      td(r.status),
      td(r.event ?? "unknown"),
      td(r.latlabVersion),
      td(short(r.planHash)),
      td(String(r.comparable), true),
      `<td style="white-space:normal">${escapeHtml(r.gateError ? `gate error: ${r.gateError}` : leftOut(r.excluded))}</td>`,
    ]),
  );
  return `<details><summary>Runs (${e.runs.length}): each one's previous comparable runs, and why the others were left out</summary><table><thead>${tr(["run", "started", "status", "event", "latlab", "plan", "comparable before", "left out (or the gate's error)"].map(th))}</thead><tbody>${rows.join("")}</tbody></table></details>`;
}

async function experimentHtml(e: TrendExperiment): Promise<string> {
  const latest = e.runs.at(-1)!;
  const figures: string[] = [];
  for (const [i, m] of e.measures.entries()) {
    const chart = trendChart(e, m, i);
    const svg = await renderSvg(chart.spec);
    figures.push(
      `<figure class="chart" id="${escapeHtml(chart.id)}" data-chart="${escapeHtml(chart.id)}" data-measure="${m.measure}"><div class="chart-title"><b>${escapeHtml(chart.title)}</b></div>${svg}<figcaption>${escapeHtml(chart.caption)}</figcaption></figure>${pointsTable(m)}`,
    );
  }
  return `<section class="experiment" id="experiment-${escapeHtml(slug(e.experiment))}" data-experiment="${escapeHtml(e.experiment)}">
<h2>${escapeHtml(e.experiment)}</h2>
<p class="meta">${e.runs.length} run(s), ${escapeHtml(e.runs[0]!.startedAt)} → ${escapeHtml(latest.startedAt)}; latest <code>${escapeHtml(latest.runId)}</code> (${escapeHtml(latest.status)}, latlab ${escapeHtml(latest.latlabVersion)}, plan ${escapeHtml(short(latest.planHash))})</p>
${alertsHtml(e)}
${changesHtml(e)}
${figures.join("\n") || "<p>No figures: no run of this experiment has a measured cell.</p>"}
${runsTable(e)}
</section>`;
}

/** The whole page. */
export async function trendPageHtml(model: TrendPageModel): Promise<string> {
  const sections: string[] = [];
  for (const e of model.experiments) sections.push(await experimentHtml(e));
  const runs = model.experiments.reduce((n, e) => n + e.runs.length, 0);
  const alerts = model.experiments.reduce((n, e) => n + e.alerts.length, 0);
  const index = model.experiments.map((e) => `<li><a href="#experiment-${escapeHtml(slug(e.experiment))}">${escapeHtml(e.experiment)}</a>: ${e.runs.length} run(s)${e.alerts.length ? `, <b>${e.alerts.length} alert(s)</b>` : ""}</li>`);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>latlab trend</title><style>${STYLE}</style></head>
<body>
<header>
<h1>latlab trend</h1>
<p class="meta">${runs} run(s) of ${model.experiments.length} experiment(s) from <code>${escapeHtml(model.history)}</code>; made ${escapeHtml(model.generatedAt)}${alerts ? `; <b>${alerts} alert(s)</b>` : ""}</p>
${method(model)}
${index.length ? `<ul class="experiments">${index.join("")}</ul>` : "<p class=\"note\">No runs recorded in this history yet.</p>"}
</header>
${sections.join("\n")}
</body></html>
`;
}

