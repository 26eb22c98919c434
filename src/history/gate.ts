/**
 * The regression gate over the history: is a new run's headline figure (per variant × measure ×
 * host pair: mean and p50 of RTT, mean throughput, median hop count) out of line with the
 * previous comparable runs of the same experiment? Pure: the caller selects the runs
 * (comparability is issue 24 item 2) and reads the history.
 *
 * Method. Every scheduled run deploys its own hosts, so the previous runs are independent draws:
 * each gives one value of each headline statistic, and those n values (one unit per run, never
 * the samples inside a run, which are serially correlated and share one host draw) are the
 * observations. For one new observation from the same distribution, the prediction interval
 *
 *     x̄ ± t_{1−α/2, n−1} · s · √(1 + 1/n)
 *
 * (x̄, s: mean and sample standard deviation of the n previous values) covers it with
 * probability exactly 1 − α when the values are independent and normal: the new value minus x̄
 * has variance σ²(1 + 1/n), and s estimates σ with n − 1 degrees of freedom.
 *
 * Why on log scale for RTT and throughput: both are positive, and what changes them from one
 * host draw to the next (a farther rack, a busier host, a different path) multiplies rather than
 * adds, so across runs they are right-skewed and their spread grows with their level; their
 * logarithms are much closer to normal with a constant spread. The interval is made on ln(value)
 * and mapped back: asymmetric, never below zero, and a change is judged relative to the level.
 * Hop counts are small integers that are usually identical from run to run: linear scale (a
 * zero spread then gives a band of one value, and any other count is a change).
 *
 * A flag needs both: the value outside the band (not explained by the run-to-run spread seen so
 * far) and a change beyond the threshold (big enough to matter), so a very stable series does
 * not alarm on a 1 % move. With fewer than k previous runs there is no band: "learning (n of k)".
 */
import tQuantile from "@stdlib/stats-base-dists-t-quantile";
import type { Metric } from "../results/summary.ts";
import {
  GateConfigSchema,
  GateRunSchema,
  type GateBand,
  type GateCheck,
  type GateConfig,
  type GateConfigInput,
  type GateMissing,
  type GateReport,
  type GateRun,
  type GateVerdict,
  type Headline,
  type HeadlineStatistic,
} from "./gateSchema.ts";
import type { SummaryRow } from "./historySchema.ts";

/**
 * The statistics the gate watches per metric. RTT: the mean (what a request costs on average,
 * tail included) and the median (the typical round trip, robust to a few outliers). Throughput:
 * the mean of the interval rates (the volume moved over the time). Hops: the median of the
 * traces' counts (one count per trace; a single rerouted trace among repetitions is not a new path).
 */
export const HEADLINE_STATISTICS: Record<Metric, readonly HeadlineStatistic[]> = { rtt: ["mean", "p50"], throughput: ["mean"], hops: ["p50"] };

/** Which side is worse; `either` when a change either way is what to report (a different path). */
export const GATE_DIRECTION: Record<Metric, "higher is worse" | "lower is worse" | "either"> = {
  rtt: "higher is worse",
  throughput: "lower is worse",
  hops: "either",
};

/** What the band's values are transformed by before the interval is made (see the module's comment). */
export const GATE_SCALE: Record<Metric, GateBand["scale"]> = { rtt: "log", throughput: "log", hops: "linear" };

/** A summary row's measure as runs are matched: its identity (comparable.ts), else — recorded before identities — its index. */
export const measureKey = (row: Pick<SummaryRow, "measure" | "measureId">): string => row.measureId ?? `#${row.measure}`;

/**
 * A run's headline figures from its history summaries: the merged (`all`) rows only, one figure per
 * statistic of {@link HEADLINE_STATISTICS}. `measureId` names a row's measure as runs are matched;
 * by default its index (until measures have an identity, issue 24 item 2).
 */
export function headlinesOf(summaries: readonly SummaryRow[], measureId: (row: SummaryRow) => string = (row) => String(row.measure)): Headline[] {
  const out: Headline[] = [];
  for (const row of summaries) {
    if (row.level !== "all" || row.n === 0) continue;
    for (const statistic of HEADLINE_STATISTICS[row.metric]) {
      out.push({ variant: row.variant, measure: measureId(row), pair: row.pair, metric: row.metric, unit: row.unit, statistic, value: row[statistic] });
    }
  }
  return out;
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/**
 * The two-sided (1 − α) prediction interval for one new value from `values` (the previous runs,
 * at least 2), on `scale`. On log scale every value must be positive.
 */
export function predictionBand(values: readonly number[], alpha: number, scale: GateBand["scale"]): GateBand {
  const n = values.length;
  if (n < 2) throw new RangeError(`a prediction band needs at least 2 previous values, got ${n}`);
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`alpha must be in (0, 1), got ${alpha}`);
  if (scale === "log" && values.some((v) => !(v > 0))) throw new RangeError("a band on log scale needs positive values");
  const xs = scale === "log" ? values.map(Math.log) : [...values];
  const m = mean(xs);
  const s = Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (n - 1));
  const t = tQuantile(1 - alpha / 2, n - 1);
  const half = t * s * Math.sqrt(1 + 1 / n);
  const back = scale === "log" ? Math.exp : (x: number) => x;
  return { low: back(m - half), high: back(m + half), center: back(m), level: 1 - alpha, scale, t };
}

const keyOf = (h: Pick<Headline, "variant" | "measure" | "pair" | "metric" | "statistic">) => JSON.stringify([h.variant, h.measure, h.pair, h.metric, h.statistic]);

/** Significant figures enough to tell the value from the band's edges in a line of text. */
const fmt = (v: number) => String(Number(v.toPrecision(4)));
const pct = (v: number) => `${v >= 0 ? "+" : "−"}${fmt(Math.abs(v))} %`;

function verdictOf(metric: Metric, value: number, band: GateBand, pctChange: number | null, thresholdPct: number): GateVerdict {
  if (value >= band.low && value <= band.high) return "within band";
  // A centre of 0 (linear scale only) makes any other value an unbounded relative change.
  const beyond = pctChange === null ? value !== band.center : Math.abs(pctChange) > thresholdPct;
  if (!beyond) return "within threshold";
  const direction = GATE_DIRECTION[metric];
  if (direction === "either") return "changed";
  const higher = value > band.center;
  return higher === (direction === "higher is worse") ? "regression" : "improvement";
}

function textOf(c: Omit<GateCheck, "text">): string {
  if (!c.band) return `learning (${c.n} of ${c.minRuns}): ${c.minRuns} previous comparable runs make the band, ${c.n} so far`;
  const b = c.band;
  const centre = b.scale === "log" ? "geometric mean" : "mean";
  return (
    `${c.verdict}: ${fmt(c.value)} ${c.unit}, ${Math.round(b.level * 1000) / 10} % prediction band ${fmt(b.low)}–${fmt(b.high)} ${c.unit} ` +
    `from ${c.n} previous runs (one unit each${b.scale === "log" ? ", log scale" : ""})` +
    (c.pctChange === null ? "" : `; ${pct(c.pctChange)} vs their ${centre} ${fmt(b.center)}`) +
    `; threshold ${fmt(c.thresholdPct)} %`
  );
}

function check(head: Headline, history: { runId: string; value: number }[], config: GateConfig): GateCheck {
  const n = history.length;
  const thresholdPct = config.thresholdPctByMetric[head.metric] ?? config.thresholdPct;
  const base = { ...head, basis: "previous runs" as const, runs: history.map((h) => h.runId), n, minRuns: config.minRuns, thresholdPct };
  if (n < config.minRuns) {
    const learning = { ...base, verdict: "learning" as const, band: null, pctChange: null };
    return { ...learning, text: textOf(learning) };
  }
  const values = history.map((h) => h.value);
  // A non-positive previous value has no logarithm (a throughput of 0): that series falls back to linear scale, and says so.
  const scale = GATE_SCALE[head.metric] === "log" && values.every((v) => v > 0) ? "log" : "linear";
  const band = predictionBand(values, config.alpha, scale);
  const pctChange = band.center === 0 ? null : ((head.value - band.center) / Math.abs(band.center)) * 100;
  const judged = { ...base, band, pctChange, verdict: verdictOf(head.metric, head.value, band, pctChange, thresholdPct) };
  return { ...judged, text: textOf(judged) };
}

function headlineMap(run: GateRun): Map<string, Headline> {
  const map = new Map<string, Headline>();
  for (const h of run.headlines) {
    const key = keyOf(h);
    if (map.has(key)) throw new Error(`run ${run.runId} has two ${h.statistic} figures for ${h.variant} measure ${h.measure} ${h.pair} (${h.metric}): which one is the headline is ambiguous`);
    map.set(key, h);
  }
  return map;
}

/**
 * The gate's verdicts for `newRun` against `previous`, the comparable runs of the same experiment
 * that started before it (any order; they are sorted by start). Each headline of the new run is
 * checked against the values the most recent `maxRuns` previous runs that have it give.
 */
export function gate(newRun: GateRun, previous: readonly GateRun[], settings: GateConfigInput = {}): GateReport {
  const config = GateConfigSchema.parse(settings);
  const run = GateRunSchema.parse(newRun);
  const prior = previous.map((p) => GateRunSchema.parse(p)).sort((a, b) => Date.parse(a.startedAt) - Date.parse(b.startedAt));
  const ids = new Set<string>();
  for (const p of prior) {
    if (p.runId === run.runId) throw new Error(`run ${run.runId} is among its own previous runs`);
    if (ids.has(p.runId)) throw new Error(`run ${p.runId} is given twice among the previous runs: each run is one unit`);
    ids.add(p.runId);
    if (Date.parse(p.startedAt) >= Date.parse(run.startedAt)) throw new Error(`run ${p.runId} started ${p.startedAt}, not before run ${run.runId} (${run.startedAt}): not a previous run`);
  }
  const priorMaps = prior.map((p) => ({ runId: p.runId, headlines: headlineMap(p) }));
  const current = headlineMap(run);
  const historyOf = (key: string) =>
    priorMaps
      .flatMap((p) => {
        const h = p.headlines.get(key);
        return h ? [{ runId: p.runId, value: h.value }] : [];
      })
      .slice(-config.maxRuns);
  const checks = [...current].map(([key, head]) => check(head, historyOf(key), config));
  const missing: GateMissing[] = [];
  const seen = new Set<string>();
  for (const p of priorMaps) {
    for (const [key, h] of p.headlines) {
      if (current.has(key) || seen.has(key)) continue;
      seen.add(key);
      const { value: _value, unit: _unit, ...identity } = h;
      missing.push({ ...identity, n: historyOf(key).length });
    }
  }
  return { runId: run.runId, config, previousRuns: prior.map((p) => p.runId), checks, missing };
}

/** Verdicts someone should hear about: the ones an alert is for. */
export const ALERT_VERDICTS: readonly GateVerdict[] = ["regression", "changed"];
