/**
 * report.html: one self-contained page per run — no script, no CDN, no web font; the charts are
 * SVG drawn in Node — that opens from disk offline. What was asked and what was got, one sentence
 * per comparison, the comparison table, the waves of a run made in waves, the charts, the
 * placement of every host, and what failed.
 */
import type { Results } from "../../results/schema.ts";
import { seedSizeLines } from "../seedSizes.ts";
import { delayLineRunLine, fmt, formatP, notEmulatedNote, overLabel, timingLine, unitLabel } from "../wording.ts";
import { placementTable } from "../placementTable.ts";
import { comparisonCaveats } from "../../results/comparisons.ts";
import { caveatCell } from "../../results/placement.ts";
import { verdicts } from "../verdicts.ts";
import { crossGroupWaveNote } from "../../results/waveRecords.ts";
import type { MeasureCharts } from "./reportCharts.ts";
import { escapeHtml } from "./escapeHtml.ts";
import { renderSvg } from "./renderSvg.ts";
import { topologyHtml } from "./topology.ts";


const STYLE = `
:root { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1b1f24; background: #fff; }
body { margin: 0 auto; max-width: 1100px; padding: 16px; line-height: 1.45; }
h1 { font-size: 1.5rem; margin: 0 0 4px; } h2 { font-size: 1.2rem; margin-top: 28px; border-bottom: 1px solid #d0d7de; } h3 { font-size: 1.05rem; }
.status { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: .85rem; background: #ddf4ff; }
.status.complete { background: #dafbe1; } .status.failed { background: #ffebe9; } .status.partial, .status.interrupted, .status.running { background: #fff8c5; }
.meta { color: #57606a; font-size: .9rem; }
table { border-collapse: collapse; font-size: .85rem; margin: 8px 0; display: block; overflow-x: auto; max-width: 100%; }
th, td { border: 1px solid #d0d7de; padding: 3px 7px; text-align: left; white-space: nowrap; vertical-align: top; }
th { background: #f6f8fa; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.mismatch td, .mismatch { background: #ffebe9; }
ul.verdicts li { margin: 4px 0; } ul.verdicts li.placement-caveat, ul.verdicts li.wave-caveat { border-left: 3px solid #cf222e; padding-left: 6px; } .finding-lower, .finding-higher { font-weight: 600; } .finding-no-clear-difference, .finding-no-CI { color: #57606a; }
figure { margin: 16px 0 24px; } figure svg { max-width: 100%; height: auto; } figcaption { font-size: .85rem; color: #57606a; max-width: 760px; }
.note { background: #fff8c5; padding: 6px 10px; border-radius: 6px; font-size: .9rem; }
.topology { display: flex; flex-wrap: wrap; gap: 10px; }
.topo { border: 1px solid #8c959f; border-radius: 6px; padding: 4px 6px; margin: 4px; }
.topo-label { font-size: .75rem; color: #57606a; } .topo-body { display: flex; flex-wrap: wrap; align-items: flex-start; }
.topo.d0 { background: #f6f8fa; } .topo.d1 { background: #fff; } .topo.d3 { border-style: dashed; }
.host { border: 1px solid #0969da; border-radius: 4px; padding: 2px 6px; margin: 3px; background: #ddf4ff; font-size: .8rem; display: flex; flex-direction: column; }
.host em { color: #cf222e; font-style: normal; }
details { margin: 8px 0; } summary { cursor: pointer; }
@media (max-width: 600px) { body { padding: 8px; } h1 { font-size: 1.25rem; } }
`;

const row = (cells: string[], cls = "") => `<tr${cls ? ` class="${cls}"` : ""}>${cells.join("")}</tr>`;
const td = (v: string, num = false) => `<td${num ? ' class="num"' : ""}>${escapeHtml(v)}</td>`;
const th = (v: string) => `<th>${escapeHtml(v)}</th>`;
const ASKED = ["region", "zone", "ppg", "availabilitySet", "vnet", "size", "accelnet"] as const;

function hostsTable(results: Results): string {
  const rows = results.variants.flatMap((v) =>
    v.hosts.map((h) =>
      row(
        [
          td(v.id),
          td(h.deployment),
          td(h.role),
          ...ASKED.map((k) => {
            const asked = h[k];
            const got = h.actual[k];
            return td(got === undefined || String(got) === String(asked) ? String(asked ?? "–") : `${String(asked ?? "–")} → ${String(got)}`);
          }),
          td(h.mismatches.join("; ") || "as asked"),
        ],
        h.mismatches.length ? "mismatch" : "",
      ),
    ),
  );
  return `<table><thead>${row(["variant", "deployment", "host", ...ASKED, "asked vs got"].map(th))}</thead><tbody>${rows.join("")}</tbody></table>`;
}

/** Per deployment and PPG: the PPG asked vs the colocation status ARM gave (placementTable.ts). */
function placementHtml(results: Results): string {
  const t = placementTable(results);
  if (!t) return "";
  const rows = t.rows.map((r, i) => row(r.map((v, j) => (j >= 3 ? `<td style="white-space:normal">${escapeHtml(v)}</td>` : td(v))), t.unaligned[i] ? "mismatch placement-unaligned" : ""));
  return `<h3>Placement evidence</h3><p>${escapeHtml(`${t.title[0]!.toUpperCase()}${t.title.slice(1)}.`)}</p><table class="placement"><thead>${row(t.head.map(th))}</thead><tbody>${rows.join("")}</tbody></table>${t.notes.map((n) => `<p class="note">${escapeHtml(n)}</p>`).join("")}`;
}

function comparisonTableHtml(results: Results, labels: Map<number, string>): string {
  if (!results.comparisons.length) return "<p>No comparisons (one variant, or no variant measured against its baseline).</p>";
  // A comparison resting on a PPG that is not Aligned says so on its row (column only when one does).
  const caveats = results.comparisons.map((c) => caveatCell(comparisonCaveats(results, c)));
  const placementColumn = caveats.some(Boolean);
  const rows = results.comparisons.map((c, i) =>
    row([
      td(c.variant),
      td(c.baseline),
      td(labels.get(c.measure) ?? c.tool),
      td(c.pair),
      td(`${c.metric} ${unitLabel(c.unit)}`),
      td(`${c.baselineSummary.count} / ${c.variantSummary.count}`, true),
      td(fmt(c.baselineSummary.mean), true),
      td(fmt(c.variantSummary.mean), true),
      td(c.ratioMean === undefined ? "—" : `${c.ratioMean.toFixed(2)}×`, true),
      td(c.diffMean ? `${fmt(c.diffMean.estimate)} [${fmt(c.diffMean.ci95[0])}, ${fmt(c.diffMean.ci95[1])}]` : "—", true),
      td(c.diffMean?.welch ? formatP(c.diffMean.welch.p) : "—", true),
      td(overLabel(c)),
      ...(placementColumn ? [td(caveats[i]!)] : []),
    ], caveats[i] ? "mismatch placement-caveat" : ""),
  );
  return `<table><thead>${row(["variant", "baseline", "measure", "pair", "metric", "n (base / cand)", "mean base", "mean cand", "ratio", "Δmean [95% CI]", "p Welch", "over", ...(placementColumn ? ["placement"] : [])].map(th))}</thead><tbody>${rows.join("")}</tbody></table>`;
}

/**
 * A run made in waves (quota, --max-vcpus): which variants and replicas each wave held, what each
 * took, and what reading across waves means. Empty for a run in one wave.
 */
function wavesHtml(results: Results): string {
  const w = results.waves;
  if (!w || w.planned < 2) return "";
  const ran = new Map(w.runs.map((r) => [r.wave, r]));
  const s = (v: number) => v.toFixed(1);
  const rows = Array.from({ length: w.planned }, (_, i) => {
    const r = ran.get(i + 1);
    if (!r) {
      const planned = w.plannedWaves?.[i];
      return row([td(`${i + 1}`, true), td("—"), td("—"), td(planned ? planned.join(", ") : "—"), td("not reached"), td("—"), td("—")], "mismatch");
    }
    return row([
      td(`${r.wave}`, true),
      td(r.variants.join(", ")),
      td(r.replicas.join(", ")),
      `<td style="white-space:normal">${escapeHtml(r.deployments.join(", "))}</td>`,
      td(r.startedAt),
      td(`${s(r.bringUpSeconds)} / ${s(r.cellsSeconds)} / ${s(r.teardownSeconds)}`, true),
      td(r.teardown),
    ], r.teardown === "failed" ? "mismatch" : "");
  });
  const across = crossGroupWaveNote(results);
  return [
    `<h2>Waves</h2>`,
    `<p>This run went in ${w.planned} waves, sized against ${escapeHtml(w.limits)}: each was brought up, measured and torn down before the next, so each wave had hosts of its own, at its own time. A comparison whose sides ran in the same wave compares hosts measured side by side; across waves, the waves differ too.</p>`,
    w.reasons.length ? `<ul class="wave-reasons">${w.reasons.map((r) => `<li>${escapeHtml(r)}</li>`).join("")}</ul>` : "",
    `<table class="waves"><thead>${row(["wave", "variants", "replicas", "deployments", "started", "bring-up / cells / teardown (s)", "teardown"].map(th))}</thead><tbody>${rows.join("")}</tbody></table>`,
    across ? `<p class="note wave-groups">${escapeHtml(across)}</p>` : "",
  ].join("\n");
}

export interface ReportHtmlOptions {
  /** Each chart's spec file, relative to report.html (the specs are saved beside it). */
  specPath?: (chartId: string) => string;
}

export async function reportHtml(results: Results, charts: MeasureCharts[], labels: Map<number, string>, options: ReportHtmlOptions = {}): Promise<string> {
  const facts = results.environment.facts;
  const title = `${results.experiment.name} — latlab run ${results.runId}`;
  const list = verdicts(results);
  // What the target did not emulate, and what it modelled for latency only (wording.ts notEmulatedNote).
  const notEmulated = notEmulatedNote(results);
  const failed = results.measurements.filter((m) => m.status === "failed");
  const warned = results.measurements.filter((m) => m.warnings.length);
  const figures: string[] = [];
  for (const group of charts) {
    figures.push(`<h3>${escapeHtml(group.label)}</h3>`);
    for (const chart of group.charts) {
      const svg = await renderSvg(chart.spec);
      const spec = options.specPath ? ` <a href="${escapeHtml(options.specPath(chart.id))}">Vega-Lite spec</a>` : "";
      figures.push(`<figure class="chart" id="${escapeHtml(chart.id)}" data-chart="${escapeHtml(chart.id)}"><div class="chart-title"><b>${escapeHtml(chart.title)}</b></div>${svg}<figcaption>${escapeHtml(chart.caption)}${spec}</figcaption></figure>`);
    }
  }
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body>
<header>
<h1>${escapeHtml(results.experiment.name)} <span class="status ${escapeHtml(results.status)}">${escapeHtml(results.status)}</span></h1>
<p>${escapeHtml(results.experiment.description)}</p>
${seedSizeLines(results.experiment.seedSizes, results.variants.flatMap((v) => v.hosts.map((h) => h.size))).map((l) => `<p class="note seed-size">${escapeHtml(l)}</p>`).join("\n")}
<p class="meta">run <code>${escapeHtml(results.runId)}</code> on <b>${escapeHtml(results.target)}</b>, ${escapeHtml(results.startedAt)} → ${escapeHtml(results.finishedAt)}; latlab ${escapeHtml(results.environment.latlabVersion)}${facts["git.commit"] ? `, commit <code>${escapeHtml(facts["git.commit"])}</code>` : ""}; node ${escapeHtml(results.environment.node)}, kernel ${escapeHtml(results.environment.kernel)}; tools: ${escapeHtml(Object.entries(results.environment.toolVersions).map(([k, v]) => `${k} ${v}`).join(", ") || "–")}</p>
${results.error ? `<p class="note">${escapeHtml(results.error)}</p>` : ""}
</header>
<h2>Verdicts</h2>
${list.length ? `<ul class="verdicts">${list.map((v) => `<li class="verdict finding-${v.finding.replace(/ /g, "-")}${v.placement ? " placement-caveat" : ""}${v.waves ? " wave-caveat" : ""}" data-variant="${escapeHtml(v.variant)}" data-measure="${v.measure}" data-pair="${escapeHtml(v.pair)}">${escapeHtml(v.text)}</li>`).join("")}</ul>` : "<p>No comparisons to state.</p>"}
${list.some((v) => v.placement) ? `<p class="note">${list.filter((v) => v.placement).length} comparison(s) rest on a proximity placement group that ARM did not report Aligned: their verdicts, their rows in the comparison table and the placement evidence below say which.</p>` : ""}
${notEmulated ? `<p class="note">${escapeHtml(notEmulated[0]!.toUpperCase() + notEmulated.slice(1))}.</p>` : ""}
<p class="note">${escapeHtml(results.environment.shaping.note)}</p>
${delayLineRunLine(results) ? `<p class="note">${escapeHtml(delayLineRunLine(results)!)}</p>` : ""}
${list.some((v) => v.waves) ? `<p class="note">${list.filter((v) => v.waves).length} comparison(s) are FLAGGED: the baseline ran only in another wave than the candidate (other hosts, another time); their verdicts, their rows in the comparison table ("over") and the Waves section say which.</p>` : ""}
<h2>Comparisons</h2>
${comparisonTableHtml(results, labels)}
${wavesHtml(results)}
<h2>Charts</h2>
${figures.join("\n") || "<p>No samples to draw.</p>"}
<h2>What was asked and what was got</h2>
${topologyHtml(results)}
${hostsTable(results)}
${placementHtml(results)}
<details><summary>Environment facts (${Object.keys(facts).length})</summary><table><tbody>${Object.entries(facts)
    .map(([k, v]) => row([td(k), `<td style="white-space:normal">${escapeHtml(v)}</td>`]))
    .join("")}</tbody></table></details>
<h2>Measurements</h2>
<p>${results.measurements.length - failed.length} of ${results.measurements.length} cells measured; teardown ${escapeHtml(results.teardown.status)}.${timingLine(results) ? ` ${escapeHtml(timingLine(results)!)}.` : ""}</p>
${failed.length ? `<h3>Failed</h3><table><tbody>${failed.map((m) => row([td(m.cell), `<td style="white-space:normal">${escapeHtml(m.error ?? "")}</td>`])).join("")}</tbody></table>` : ""}
${warned.length ? `<details><summary>Warnings (${warned.length} cells)</summary><table><tbody>${warned.map((m) => row([td(m.cell), `<td style="white-space:normal">${m.warnings.map(escapeHtml).join("<br>")}</td>`])).join("")}</tbody></table></details>` : ""}
</body></html>
`;
}
