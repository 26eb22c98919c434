import Table from "cli-table3";
import { seedSizeLines } from "./seedSizes.ts";
import type { Comparison, Measurement, Results } from "../results/schema.ts";
import { TAIL_PERCENTILES, tailSupported, type Summary, type TailPercentile } from "../results/summary.ts";
import { summarizeMany } from "../results/summarize.ts";
import { findTool } from "../tools/registry.ts";
import { comparisonCaveats, pairComparisonCaveats } from "../results/comparisons.ts";
import { caveatCell, placementByDeployment, ppgDetail, vmDetail } from "../results/placement.ts";
import { renderTable } from "./renderTable.ts";
import { crossGroupWaveNote, waveCaveatCell } from "../results/waveRecords.ts";

/** A figure with three significant digits or so: 1234, 56.7, 8.90. Shared by every report. */
export const fmt = (v: number) => (Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2));
const pct = (v: number) => `${v >= 0 ? "+" : ""}${v.toFixed(1)}%`;
// Below ~1e-300 a double underflows to 0: say "<1e-15" rather than a false "0".
const formatP = (p: number) => (p < 1e-15 ? "<1e-15" : p < 0.001 ? p.toExponential(1) : p.toFixed(3));
export const unitLabel = (unit: string) => (unit === "us" ? "µs" : unit);
const metricLabel = (metric: string, unit: string) => (metric === unit ? metric : `${metric} ${unitLabel(unit)}`);
export const pairOf = (m: { from: string; to: string }) => `${m.from}->${m.to}`;

const TAILS = Object.keys(TAIL_PERCENTILES) as TailPercentile[];
/** The tail percentile columns every table shows, after p99: p99.9, p99.99, p99.999. */
export const TAIL_HEADS: readonly string[] = TAILS.map((k) => TAIL_PERCENTILES[k].label);
/**
 * A summary's tail percentiles as table cells: "—" where the count does not support one
 * ({@link tailSupported}: it would be the maximum under another name) or where it is absent.
 */
export const tailCells = (s: Summary): string[] =>
  TAILS.map((k) => {
    const v = s[k];
    return v === undefined || !tailSupported(s.count, k) ? "—" : fmt(v);
  });
/** The footnote for a table where a tail percentile reads "—". */
export const TAIL_NOTE = `${TAIL_HEADS.join(" / ")}: "—" with fewer than ${TAILS.map((k) => (TAIL_PERCENTILES[k].den / (TAIL_PERCENTILES[k].den - TAIL_PERCENTILES[k].num)).toLocaleString("en-US")).join(" / ")} samples (the nearest rank would be the maximum), or when the tool's own summary has none`;

/**
 * A name per measure: the tool, plus what tells it apart from other measures of the same tool
 * — parameters (`iperf3 window=32M`), path (`path=public`) or host pairs (`pairs=a->server`) —
 * so two entries of one tool never share a label.
 */
export function measureLabels(measurements: readonly Measurement[]): Map<number, string> {
  const traits = new Map<number, { tool: string; values: Map<string, string> }>();
  for (const m of measurements) {
    let t = traits.get(m.measure);
    if (!t) {
      t = { tool: m.tool, values: new Map(Object.entries(m.params).map(([k, v]) => [k, v === undefined ? "-" : String(v)])) };
      traits.set(m.measure, t);
    }
    // A path axis or several pairs give one measure several values: the label shows them all.
    for (const [key, value] of [["path", m.path], ["pairs", pairOf(m)]] as const) {
      const seen = t.values.get(` ${key}`);
      const all = new Set(seen ? seen.split(",") : []).add(String(value));
      t.values.set(` ${key}`, [...all].sort().join(","));
    }
  }
  const labels = new Map<number, string>();
  for (const [index, { tool, values }] of traits) {
    const siblings = [...traits.values()].filter((o) => o.tool === tool);
    if (siblings.length === 1) {
      labels.set(index, tool);
      continue;
    }
    // Parameter keys first, then path and pairs (kept apart from parameters by a leading space).
    const keys = [...new Set(siblings.flatMap((o) => [...o.values.keys()]))]
      .sort((a, b) => Number(a.startsWith(" ")) - Number(b.startsWith(" ")))
      .filter((k) => new Set(siblings.map((o) => o.values.get(k) ?? "-")).size > 1);
    labels.set(index, `${tool} ${keys.map((k) => `${k.trim()}=${values.get(k) ?? "-"}`).join(" ")}`.trim());
  }
  return labels;
}

const ratio = (v: number | undefined) => (v === undefined ? "—" : `${v.toFixed(2)}×`);
const change = (v: number | undefined) => (v === undefined ? "—" : pct(v));

type Compared = Pick<Comparison, "diffMean" | "inference">;
const ci = (c: Compared | undefined) => (c?.diffMean ? `[${fmt(c.diffMean.ci95[0])}, ${fmt(c.diffMean.ci95[1])}]` : "");
/** Welch's p / the rank test's p over units; none over sample blocks (they are not independent). */
const pOf = (c: Compared | undefined) => {
  const d = c?.diffMean;
  if (!d || d.method !== "welch-t") return c ? "—" : "";
  return `${d.welch ? formatP(d.welch.p) : "—"} / ${d.rankTest ? formatP(d.rankTest.p) : "—"}`;
};
/**
 * What the CI and p of a row are over: "3+3 replicas", "5+5 reps (same hosts)", "sample blocks";
 * with ", FLAGGED: baseline in wave 1, candidate in wave 2" when the sides never shared a wave.
 */
export function overLabel(c: Compared | undefined): string {
  if (!c) return "";
  const { unit, units } = c.inference;
  const n = `${units.baseline}+${units.candidate}`;
  const over = unit === "replica" ? `${n} replicas` : unit === "repetition" ? `${n} reps (same hosts)` : "sample blocks";
  const waves = waveCaveatCell(c);
  return waves ? `${over}, ${waves}` : over;
}

/** One line per kind of unit the comparisons used, saying what their CI and p are over. */
export function inferenceFooter(comparisons: readonly Compared[]): string[] {
  const lines: string[] = [];
  const units = new Set(comparisons.map((c) => c.inference.unit));
  if (units.has("replica") || units.has("repetition")) {
    lines.push(
      "CI and p over independent units, per side as in \"over\" (baseline+candidate): each unit's mean; CI: Welch t interval of the difference of unit means; p: Welch t-test / exact Mann–Whitney over units",
    );
  }
  for (const note of new Set(comparisons.flatMap((c) => (c.inference.note ? [c.inference.note] : [])))) lines.push(note);
  return lines;
}

/**
 * The seeds' tables, from results: per variant, measure and (when several) host pair: n / mean /
 * p50 / p95 / p99 / p99.9 / p99.99 / p99.999 (a tail percentile "—" where the count does not
 * support it), min / max, and against the variant's baseline the ratio and %-change of the mean (all
 * samples merged, descriptive) with a 95% CI of the difference and p-values over independent
 * units, the units named on the row ("over") and in a footer; then pair ratios, tool notes,
 * failures, teardown.
 * `samplesOf` gives a measurement's samples (kept out of results.json, in samples/).
 */
export function comparisonTable(results: Results, samplesOf: (cellId: string) => number[]): string {
  const labels = measureLabels(results.measurements);
  const multiPair = [...new Set(results.measurements.map((m) => `${m.variant}/${m.measure}`))].some(
    (k) => new Set(results.measurements.filter((m) => `${m.variant}/${m.measure}` === k).map(pairOf)).size > 1,
  );
  // A comparison resting on a PPG that is not Aligned says so on its row (column only when one does).
  const caveats = new Map(results.comparisons.map((c) => [c, caveatCell(comparisonCaveats(results, c))]));
  const placementColumn = [...caveats.values()].some(Boolean);
  const table = new Table({
    head: ["variant", "measure", ...(multiPair ? ["pair"] : []), "metric", "n", "mean", "p50", "p95", "p99", ...TAIL_HEADS, "min", "max", "vs baseline", "change", "95% CI of Δmean", "p Welch / rank", "over", ...(placementColumn ? ["placement"] : [])],
    style: { head: [], border: [], compact: true },
  });
  const measures = [...labels.keys()].sort((a, b) => a - b);
  let tailDash = false;
  for (const variant of results.variants) {
    const isBaseline = variant.baseline === variant.id;
    for (const measure of measures) {
      const ofMeasure = results.measurements.filter((m) => m.variant === variant.id && m.measure === measure);
      const pairs = [...new Set(ofMeasure.map(pairOf))];
      for (const pair of pairs) {
        const rows = ofMeasure.filter((m) => pairOf(m) === pair);
        const ok = rows.filter((m) => m.status === "ok" && m.summary);
        const head = (suffix = "") => [isBaseline ? `${variant.id} (baseline)` : variant.id, `${labels.get(measure)!}${suffix}`, ...(multiPair ? [pair] : [])];
        if (!ok.length) {
          if (rows.length) table.push([...head(), "—", "0", { colSpan: 11 + TAIL_HEADS.length + (placementColumn ? 1 : 0), content: `all ${rows.length} failed` }]);
          continue;
        }
        const push = (suffix: string, summary: Summary, cmp: Comparison | undefined) => {
          const tails = tailCells(summary);
          tailDash ||= tails.includes("—");
          table.push([
            ...head(suffix),
            metricLabel(summary.metric, summary.unit),
            String(summary.count),
            fmt(summary.mean),
            fmt(summary.p50),
            summary.p95 === undefined ? "—" : fmt(summary.p95),
            fmt(summary.p99),
            ...tails,
            fmt(summary.min),
            fmt(summary.max),
            isBaseline ? "1.00×" : cmp ? ratio(cmp.ratioMean) : "—",
            isBaseline ? "" : cmp ? change(cmp.pctChangeMean) : "",
            ci(cmp),
            pOf(cmp),
            overLabel(cmp),
            ...(placementColumn ? [cmp ? (caveats.get(cmp) ?? "") : ""] : []),
          ]);
        };
        const withSamples = ok.map((m) => ({ m, samples: samplesOf(m.cell) }));
        const sampled = withSamples.filter((r) => r.samples.length);
        if (sampled.length) {
          const first = sampled[0]!.m.summary!;
          const merged = summarizeMany(first.metric, first.unit, sampled.map((r) => r.samples))!;
          const cmp = results.comparisons.find((c) => c.variant === variant.id && c.measure === measure && c.pair === pair);
          push("", merged, cmp);
        }
        // A tool's own summary has no histogram to merge, and averaging its percentiles would
        // invent a distribution: each such measurement gets its own row.
        const summaryOnly = withSamples.filter((r) => !r.samples.length).map((r) => r.m);
        for (const m of summaryOnly) push(ok.length > 1 ? ` [${runOf(m, ok)}]` : "", m.summary!, undefined);
      }
    }
  }
  const lines = [
    `${results.experiment.name} on ${results.target} — ${results.status}, run ${results.runId}`,
    ...seedSizeLines(results.experiment.seedSizes, results.variants.flatMap((v) => v.hosts.map((h) => h.size))),
    table.toString(),
  ];

  if (results.pairComparisons.length) {
    const pairCaveats = results.pairComparisons.map((c) => caveatCell(pairComparisonCaveats(results, c)));
    const pairPlacement = pairCaveats.some(Boolean);
    const pairs = new Table({ head: ["variant", "measure", "pair", "vs", "ratio (mean)", "change", "95% CI of Δmean", "p Welch / rank", "over", ...(pairPlacement ? ["placement"] : [])], style: { head: [], border: [], compact: true } });
    for (const [i, c] of results.pairComparisons.entries()) {
      pairs.push([
        c.variant,
        labels.get(c.measure) ?? c.tool,
        c.pair,
        c.baselinePair,
        ratio(c.ratioMean),
        change(c.pctChangeMean),
        ci(c),
        pOf(c),
        overLabel(c),
        ...(pairPlacement ? [pairCaveats[i]!] : []),
      ]);
    }
    lines.push("host pairs compared:", pairs.toString());
  }
  if (tailDash) lines.push(TAIL_NOTE);
  lines.push(...inferenceFooter([...results.comparisons, ...results.pairComparisons]));
  const acrossWaves = crossGroupWaveNote(results);
  if (acrossWaves) lines.push(acrossWaves);

  // Notes of the first repetition only: ten copies of "0 retransmits" help nobody; all are in results.json.
  const notes = results.measurements.flatMap((m) => {
    const tool = findTool(m.tool);
    if (m.status !== "ok" || !tool?.describe || m.repetition > 0) return [];
    const described = tool.describe(m.reported ?? {}, samplesOf(m.cell), m.warnings);
    return described.length ? [`${m.cell}:`, ...described.map((l) => `  ${l}`)] : [];
  });
  if (notes.length) lines.push(...notes);

  lines.push(results.environment.shaping.note);
  const notEmulated = notEmulatedAxes(results);
  if (notEmulated.length) {
    lines.push(`not emulated on ${results.target}: ${notEmulated.join(", ")} — differences between variants that differ only in these are noise here, not findings`);
  }
  const mismatched = results.variants.flatMap((v) => v.hosts.filter((h) => h.mismatches.length).map((h) => `${v.id}/${h.role}: ${h.mismatches.join("; ")}`));
  if (mismatched.length) lines.push(`hosts that did not get what was asked:\n  ${mismatched.join("\n  ")}`);
  const placement = placementTable(results);
  if (placement) lines.push(`${placement.title}:`, renderTable(placement.head, placement.rows, false), ...placement.notes);
  const failed = results.measurements.filter((m) => m.status === "failed");
  if (failed.length) {
    // Cells that failed for one reason (a deploy that failed, an unreachable deployment) share one line.
    const byError = new Map<string, string[]>();
    for (const m of failed) byError.set(m.error ?? "", [...(byError.get(m.error ?? "") ?? []), m.cell]);
    const rows = [...byError].map(([error, cells]) => (cells.length === 1 ? `${cells[0]}: ${error}` : `${cells.length} cells (${cells.join(", ")}): ${error}`));
    lines.push(`${failed.length} failed cell(s):\n  ${rows.join("\n  ")}`);
  }
  if (results.error) lines.push(`run failed: ${results.error}`);
  lines.push(`teardown: ${results.teardown.status}${results.teardown.errors.length ? ` — ${results.teardown.errors.join("; ")}` : ""}`);
  const line = timingLine(results);
  if (line) lines.push(line);
  return lines.join("\n");
}

/** Which run of several a measurement is: its replica and/or repetition, whichever tell them apart. */
function runOf(m: Measurement, all: readonly Measurement[]): string {
  const parts = [
    ...(new Set(all.map((o) => o.replica)).size > 1 ? [`r${m.replica}`] : []),
    ...(new Set(all.map((o) => o.repetition)).size > 1 ? [`rep${m.repetition}`] : []),
  ];
  return parts.length ? parts.join(" ") : m.cell;
}

/**
 * Host features a target records as not emulated (`actual.<field>Emulated: false`) that the
 * experiment varies or asks for: the reader must not take their effect from this target.
 */
export function notEmulatedAxes(results: Results): string[] {
  const fields = new Set<string>();
  for (const v of results.variants) {
    for (const h of v.hosts) {
      for (const [key, value] of Object.entries(h.actual)) {
        const field = /^(\w+)Emulated$/.exec(key)?.[1];
        if (!field || value !== false) continue;
        const asked = (h as Record<string, unknown>)[field];
        if (field in v.axes || (asked !== null && asked !== false && asked !== undefined)) fields.add(field);
      }
    }
  }
  return [...fields].sort();
}

/** "time: 33.9 s = bring-up 1.8 s + cells 30.1 s + teardown 2.0 s; the tools were asked to measure 20.0 s: 1.69×" (runs that recorded it). */
export function timingLine(results: Pick<Results, "timing">): string | undefined {
  const t = results.timing;
  if (!t) return undefined;
  const s = (v: number) => `${v.toFixed(1)} s`;
  // Attempts that were killed (a resumed run) recorded no parts: their time is said as theirs, not as "the rest".
  const killed = (t.attempts ?? []).filter((a) => !a.finished).reduce((sum, a) => sum + a.totalSeconds, 0);
  const rest = t.totalSeconds - t.bringUpSeconds - t.cellsSeconds - t.teardownSeconds - killed;
  return (
    `time: ${s(t.totalSeconds)} = bring-up ${s(t.bringUpSeconds)} + cells ${s(t.cellsSeconds)} + teardown ${s(t.teardownSeconds)}${killed > 0 ? ` + killed attempts ${s(killed)}` : ""}${rest >= 0.05 ? ` + the rest ${s(rest)}` : ""}` +
    `; the tools were asked to measure ${s(t.measurementSeconds)}${t.overhead !== undefined ? `: ${t.overhead.toFixed(2)}× that` : ""}` +
    // Cells of several deployments at once: what one after another would have taken instead.
    (t.concurrentDeployments && t.deployments && t.deployments.length > 1
      ? `; ${t.deployments.length} deployments at the same time (one after another: ${s(t.deployments.reduce((sum, d) => sum + d.readySeconds + d.cellsSeconds, 0))})`
      : "") +
    // A resumed run: its time is every attempt's; one that was killed recorded no parts of its own.
    (t.attempts && t.attempts.length > 1
      ? `; over ${t.attempts.length} attempts: ${t.attempts.map((a) => `${a.attempt} ${s(a.totalSeconds)}${a.finished ? "" : " (killed: at least that, its parts not recorded)"}, ${a.cellsMeasured} cell(s) measured`).join("; ")}`
      : "")
  );
}

/** Per deployment and PPG: the PPG asked vs the colocation status got, and the VMs' instance views. */
export interface PlacementTable {
  title: string;
  head: string[];
  rows: string[][];
  /** Per row: whether its PPG is not Aligned (NotAligned or Unknown). */
  unaligned: boolean[];
  /** Lines under the table: what the statuses mean, and the comparisons that rest on one not Aligned. */
  notes: string[];
}

/**
 * The placement evidence of a run (hosts' `placement`, read from ARM after the deploy), one row
 * per deployment and PPG asked; undefined when no host has any (a local run, an older run).
 */
export function placementTable(results: Results): PlacementTable | undefined {
  const groups = placementByDeployment(results.variants);
  if (!groups.length) return undefined;
  const emulator = groups.some((g) => g.source === "emulator");
  const rows = groups.map((g) => [
    g.deployment,
    g.variants.join(", "),
    g.ppg === null ? "none" : `'${g.ppg}'`,
    g.ppg === null ? "—" : g.evidence ? ppgDetail(g.evidence) : "Unknown — not read",
    g.hosts.map((h) => `${h.role}: ${h.vm ? vmDetail(h.vm) : "not read"}`).join("; "),
  ]);
  const unaligned = groups.map((g) => g.ppg !== null && (g.evidence?.status ?? "Unknown") !== "Aligned");
  const relying = results.comparisons.filter((c) => comparisonCaveats(results, c).length).length;
  const notes = [
    ...(unaligned.some(Boolean)
      ? [
          `a PPG not Aligned: NotAligned — at least one VM is not where the PPG is (Azure moved it or placed it elsewhere); Unknown — a member VM is deallocated, or latlab could not read the status. Its hosts are not the colocated hosts the experiment asked for${relying ? `: ${relying} comparison(s) rest on one, and their rows and verdicts say so` : ""}`,
        ]
      : []),
    ...(emulator ? ["rehearsal: the colocation status is the emulator's (Aligned unless a ppg-not-aligned fault is injected), not Azure's"] : []),
  ];
  return { title: "placement (read from ARM after the deploy): PPG asked vs colocation status got", head: ["deployment", "variants", "PPG asked", "colocation got", "VMs (fault / update domain, power state)"], rows, unaligned, notes };
}
