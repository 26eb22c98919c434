/**
 * The words and number formats every report shares — the terminal table (table.ts), the Markdown
 * summary (markdownSummary.ts), report.html (html/) and the verdicts — so a figure, a label or a
 * caveat reads the same wherever a user meets it. Pure: no table layout here.
 */
import { LATENCY_ONLY, type Comparison, type Measurement, type Results } from "../results/schema.ts";
import { TAIL_PERCENTILES, tailSupported, type Summary, type TailPercentile } from "../results/summary.ts";
import { waveCaveatCell } from "../results/waveRecords.ts";

/** A figure with three significant digits or so: 1234, 56.7, 8.90. */
export const fmt = (v: number) => (Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2));
/** A %-change with its sign: +26.3%, -4.9%. */
export const pct = (v: number) => `${v >= 0 ? "+" : ""}${v.toFixed(1)}%`;
/** A p-value: below ~1e-300 a double underflows to 0, so "<1e-15" rather than a false "0". */
export const formatP = (p: number) => (p < 1e-15 ? "<1e-15" : p < 0.001 ? p.toExponential(1) : p.toFixed(3));
export const unitLabel = (unit: string) => (unit === "us" ? "µs" : unit);
/** "rtt µs", "throughput Mbit/s"; a metric that is its own unit ("hops") once. */
export const metricLabel = (metric: string, unit: string) => (metric === unit ? metric : `${metric} ${unitLabel(unit)}`);
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

/** A variant as the tables name it: its id, "(baseline)" when it is its own baseline. */
export const variantLabel = (v: Pick<Results["variants"][number], "id" | "baseline">) => (v.baseline === v.id ? `${v.id} (baseline)` : v.id);

type Compared = Pick<Comparison, "diffMean" | "inference">;
/** The ratio of means: 0.95×. */
export const ratioCell = (v: number | undefined) => (v === undefined ? "—" : `${v.toFixed(2)}×`);
/** The %-change of the mean: -4.9%. */
export const changeCell = (v: number | undefined) => (v === undefined ? "—" : pct(v));
/** The 95% CI of Δmean: [-6.12, -0.90]; "" without one. */
export const ciCell = (c: Compared | undefined) => (c?.diffMean ? `[${fmt(c.diffMean.ci95[0])}, ${fmt(c.diffMean.ci95[1])}]` : "");
/** Δmean with its 95% CI: -3.51 [-6.12, -0.90]; "" without one. */
export const deltaCell = (c: Compared | undefined) => (c?.diffMean ? `${fmt(c.diffMean.estimate)} ${ciCell(c)}` : "");
/** Welch's p / the rank test's p over units; none over sample blocks (they are not independent). */
export const pCell = (c: Compared | undefined) => {
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
  const over = unitsLabel(c);
  const waves = waveCaveatCell(c);
  return waves ? `${over}, ${waves}` : over;
}

/** The units alone: "3+3 replicas", "5+5 reps (same hosts)", "sample blocks". */
export function unitsLabel(c: Pick<Comparison, "inference">): string {
  const { unit, units } = c.inference;
  const n = `${units.baseline}+${units.candidate}`;
  return unit === "replica" ? `${n} replicas` : unit === "repetition" ? `${n} reps (same hosts)` : "sample blocks";
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
 * The measures latlab's latency model shapes: round trips. A hop count is the target's routing
 * (its routers per zone and region), not the latency model; throughput is the bandwidth caps'.
 */
export const isLatencyMetric = (metric: string) => metric === "rtt";

/** Host features whose `actual.<field>Emulated` is `value`, that the experiment varies or asks for. */
function axesRecordedAs(results: Pick<Results, "variants">, value: unknown): string[] {
  const fields = new Set<string>();
  for (const v of results.variants) {
    for (const h of v.hosts) {
      for (const [key, recorded] of Object.entries(h.actual)) {
        const field = /^(\w+)Emulated$/.exec(key)?.[1];
        if (!field || recorded !== value) continue;
        const asked = (h as Record<string, unknown>)[field];
        if (field in v.axes || (asked !== null && asked !== false && asked !== undefined)) fields.add(field);
      }
    }
  }
  return [...fields].sort();
}

/**
 * Host features a target records as not emulated (`actual.<field>Emulated: false`) that the
 * experiment varies or asks for: the reader must not take their effect from this target. Given a
 * measure's metric, also the features only whose latency is modelled (LATENCY_ONLY: Accelerated
 * Networking where latency is applied) when the metric is not a latency: their throughput or hop
 * count is not emulated either.
 */
export function notEmulatedAxes(results: Pick<Results, "variants">, metric?: string): string[] {
  const none = axesRecordedAs(results, false);
  if (metric === undefined || isLatencyMetric(metric)) return none;
  return [...new Set([...none, ...axesRecordedAs(results, LATENCY_ONLY)])].sort();
}

/** Features whose latency alone is modelled on this target (LATENCY_ONLY), and not recorded as unemulated elsewhere. */
export function latencyOnlyAxes(results: Pick<Results, "variants">): string[] {
  const none = new Set(axesRecordedAs(results, false));
  return axesRecordedAs(results, LATENCY_ONLY).filter((f) => !none.has(f));
}

/** The caveat under every table when the target did not emulate (all of) what the variants differ in. */
export function notEmulatedNote(results: Pick<Results, "variants" | "target">): string | undefined {
  const axes = notEmulatedAxes(results);
  const latencyOnly = latencyOnlyAxes(results);
  const notes = [
    ...(axes.length ? [`not emulated on ${results.target}: ${axes.join(", ")} — differences between variants that differ only in these are noise here, not findings`] : []),
    ...(latencyOnly.length
      ? [
          `modelled for latency only on ${results.target}: ${latencyOnly.join(", ")} — RTT differences between variants that differ only in these are latlab's latency model's (Accelerated Networking: its per-RTT saving); nothing else of them (throughput, CPU) is emulated: other measures' differences are noise here`,
        ]
      : []),
  ];
  return notes.length ? notes.join("; ") : undefined;
}

/** Said of a difference on a target that could not shape latency (no netem, and no delay line: its packages missing). */
export const UNSHAPED_CAVEAT = "Latency was not shaped on this target (no netem, no delay line): the difference is this machine's, not the cloud's.";
/** Said of a throughput difference on latlab's own hosts where the pair's ends were not both capped at their size's bandwidth. */
export const BANDWIDTH_UNMODELLED_CAVEAT = "Bandwidth was not modelled between these hosts (no size's cap on both ends): this throughput difference is this machine's, noise here, not a finding.";
/** Said of a hop count's difference on latlab's own hosts (the local target, a rehearsal). */
export const HOPS_EMULATED_CAVEAT = "Hop counts here are the emulated network's routers, not Azure's: not a finding about Azure.";
export const MODELLED_LOCAL = "modelled: the local target applies latlab's latency model (sources in results.json); not a finding about Azure";
export const MODELLED_REHEARSAL =
  "modelled: the rehearsal applies latlab's latency model between the emulator's VMs by their placement in ARM (sources in results.json); the shape of the answer, not measured on Azure";
export const MODELLED_BANDWIDTH =
  "modelled: both ends capped at their VM size's documented bandwidth (sources in results.json: each host's bandwidthNote); not a finding about Azure";

/** Which differences a comparison is about: its metric, and the variants and pair it compares. */
type Compares = Pick<Comparison, "metric" | "variant" | "baseline" | "pair">;

/** The run's hosts are latlab's (the local target, or a rehearsal that applied the model): not Azure's network. */
export const emulatedTarget = (results: Pick<Results, "target" | "environment">) => results.target === "local" || results.environment.shaping.latency === "applied";

/**
 * Whether the pair's ends had a bandwidth cap on both sides of the comparison (results.json's
 * shaping.bandwidth "applied", and each host of the pair a bandwidthCapMbit in both variants).
 */
export function bandwidthModelled(results: Pick<Results, "environment" | "variants">, c: Compares): boolean {
  if (results.environment.shaping.bandwidth !== "applied") return false;
  const roles = c.pair.split("->");
  const hosts = results.variants.filter((v) => v.id === c.variant || v.id === c.baseline).flatMap((v) => v.hosts.filter((h) => roles.includes(h.role)));
  return hosts.length > 0 && hosts.every((h) => typeof h.actual.bandwidthCapMbit === "number");
}

/**
 * The label of a run's differences that are latlab's model: a latency (RTT) measure where the
 * target applied the latency model between its hosts (results.json's shaping.latency "applied",
 * netem or the delay line) — the local target, or any other target that applied latency: Azure
 * itself never does ("not-applicable"), so that is a rehearsal on the emulator; a throughput
 * measure whose pair was capped at its sizes' bandwidth on both sides (the local target). Never a
 * hop count (the emulated routing, not the model). Without a comparison: the latency label (the
 * placement table's). Undefined when the model did not make the measure.
 */
export function modelledLabel(results: Pick<Results, "target" | "environment" | "variants">, c?: Compares): string | undefined {
  if (c && c.metric === "throughput") return bandwidthModelled(results, c) ? MODELLED_BANDWIDTH : undefined;
  if (c && !isLatencyMetric(c.metric)) return undefined;
  if (results.environment.shaping.latency !== "applied") return undefined;
  return results.target === "local" ? MODELLED_LOCAL : MODELLED_REHEARSAL;
}

/**
 * What the delay line did with the run's own traffic (results.json's teardown.delayLine), beside
 * the bring-up precision the shaping line states: that was measured on pings of an idle path.
 * Undefined when the run had no delay line.
 */
export function delayLineRunLine(results: Pick<Results, "teardown">): string | undefined {
  const d = results.teardown.delayLine;
  if (!d) return undefined;
  const drops = d.dropped === 0 ? (d.kernelDropsCounted ? "none dropped" : "none dropped that the helpers could count (the kernel's counts were not readable)") : `${d.dropped.toLocaleString("en-US")} dropped (kernel queue full ${d.droppedQueueFull}, not delivered ${d.droppedUndelivered}, helper full ${d.droppedHelperFull})`;
  const missing = [
    ...(d.unsummarized.length ? [`no summary from ${d.unsummarized.join(", ")} (killed or died: their packets are not counted)`] : []),
    ...(d.failed.length ? [`stopped on an error: ${d.failed.join(", ")}`] : []),
  ];
  return (
    `delay line during the run: ${d.released.toLocaleString("en-US")} packets released by ${d.helpers} helper(s), ${drops}; ` +
    `release late by at most p50 ${Math.round(d.worstHelperLateP50Us)} µs, p99 ${Math.round(d.worstHelperLateP99Us)} µs (the worst helper's), max ${Math.round(d.lateMaxUs)} µs` +
    (d.heldBehind ? `; ${d.heldBehind.toLocaleString("en-US")} held behind the packet ahead (no reordering), by up to ${Math.round(d.heldBehindMaxUs)} µs` : "") +
    (missing.length ? `; ${missing.join("; ")}` : "")
  );
}

/** "teardown: ok", or its status and errors. */
export const teardownLine = (results: Pick<Results, "teardown">) =>
  `teardown: ${results.teardown.status}${results.teardown.errors.length ? ` — ${results.teardown.errors.join("; ")}` : ""}`;

/** Hosts that did not get what was asked: "variant/role: what differs". */
export const mismatchedHosts = (results: Pick<Results, "variants">) =>
  results.variants.flatMap((v) => v.hosts.filter((h) => h.mismatches.length).map((h) => `${v.id}/${h.role}: ${h.mismatches.join("; ")}`));

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
