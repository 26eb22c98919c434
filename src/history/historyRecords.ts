/**
 * What one run adds to the history, from its results.json and samples. Pure: the caller reads
 * the files. Summaries are made from the samples the way the run made its own (histograms merged,
 * never averaged) at three levels (see SummaryRowSchema); without samples (a results folder
 * copied without samples/) a tool run's own summary is kept; the levels above it merge the runs
 * that kept samples, and are left out when none did, rather than guessed.
 */
import { identityOf, measureIdentities, planContent, planHashOfContent, type PlanContent } from "../plan/planHash.ts";
import { GITHUB_EVENT_FACT } from "../results/runEvent.ts";
import type { Results } from "../results/schema.ts";
import { summarizeMany } from "../results/summarize.ts";
import type { Summary } from "../results/summary.ts";
import { unitStatistics } from "../results/unitInference.ts";
import { RunRowSchema, type ComparisonRow, type HistoryRecords, type HostRow, type SummaryRow } from "./historySchema.ts";

/** Provenance facts latlab adds to a run's environment facts (src/cli/run/provenance.ts writes them). */
export const GIT_COMMIT_FACT = "git.commit";

const pairOf = (m: { from: string; to: string }) => `${m.from}->${m.to}`;

interface RunSamples {
  replica: number;
  repetition: number;
  summary: Summary;
  samples: number[];
}

type RowBase = Pick<SummaryRow, "runId" | "variant" | "measure" | "measureId" | "tool" | "pair">;

function summaryRow(
  base: RowBase,
  level: SummaryRow["level"],
  replica: number | null,
  repetition: number | null,
  s: Summary,
  unit: { mean: number; p50: number } | null,
): SummaryRow {
  return {
    ...base,
    level,
    replica,
    repetition,
    metric: s.metric,
    unit: s.unit,
    n: s.count,
    mean: s.mean,
    stddev: s.stddev,
    min: s.min,
    p50: s.p50,
    p90: s.p90,
    p95: s.p95 ?? null,
    p99: s.p99,
    p999: s.p999,
    p9999: s.p9999 ?? null,
    p99999: s.p99999 ?? null,
    max: s.max,
    unitMean: unit?.mean ?? null,
    unitP50: unit?.p50 ?? null,
  };
}

const exactUnit = (samples: readonly number[]) => {
  if (!samples.length) return null;
  const u = unitStatistics([samples]);
  return { mean: u.mean[0]!, p50: u.p50[0]! };
};

function summaries(results: Results, samplesOf: (cell: string) => number[]): SummaryRow[] {
  const groups = new Map<string, { base: RowBase; runs: RunSamples[] }>();
  // From every cell, failed and not run ones too: a measure's identity is what was planned, not what succeeded.
  const identities = measureIdentities(results.measurements);
  for (const m of results.measurements) {
    if (m.status !== "ok" || !m.summary) continue;
    const base = { runId: results.runId, variant: m.variant, measure: m.measure, measureId: identityOf(identities, m.variant, m.measure) ?? null, tool: m.tool, pair: pairOf(m) };
    const key = JSON.stringify([base.variant, base.measure, base.pair]);
    const group = groups.get(key) ?? { base, runs: [] };
    group.runs.push({ replica: m.replica, repetition: m.repetition, summary: m.summary, samples: samplesOf(m.cell) });
    groups.set(key, group);
  }
  const rows: SummaryRow[] = [];
  for (const { base, runs } of groups.values()) {
    runs.sort((a, b) => a.replica - b.replica || a.repetition - b.repetition);
    const { metric, unit } = runs[0]!.summary;
    // Merged levels come from the runs that kept samples (as comparisons.ts' groupBy does), so a
    // comparison from the history and one from the folders stand on the same runs.
    const merged = (of: readonly RunSamples[]) => {
      const sampled = of.filter((r) => r.samples.length);
      return sampled.length ? { summary: summarizeMany(metric, unit, sampled.map((r) => r.samples))!, unit: exactUnit(sampled.flatMap((r) => r.samples)) } : undefined;
    };
    for (const r of runs) rows.push(summaryRow(base, "run", r.replica, r.repetition, r.summary, exactUnit(r.samples)));
    for (const replica of [...new Set(runs.map((r) => r.replica))]) {
      const own = runs.filter((r) => r.replica === replica);
      if (own.length === 1) {
        rows.push(summaryRow(base, "replica", replica, null, own[0]!.summary, exactUnit(own[0]!.samples)));
        continue;
      }
      const m = merged(own);
      if (m) rows.push(summaryRow(base, "replica", replica, null, m.summary, m.unit));
    }
    if (runs.length === 1) rows.push(summaryRow(base, "all", null, null, runs[0]!.summary, null));
    else {
      const m = merged(runs);
      if (m) rows.push(summaryRow(base, "all", null, null, m.summary, null));
    }
  }
  return rows;
}

function comparisonRows(results: Results): ComparisonRow[] {
  const rows: ComparisonRow[] = [];
  const add = (
    kind: ComparisonRow["kind"],
    c: Results["comparisons"][number] | Results["pairComparisons"][number],
    ids: Pick<ComparisonRow, "variant" | "baseline" | "pair" | "baselinePair">,
  ) => {
    for (const [statistic, d] of [
      ["mean", c.diffMean],
      ["p50", c.diffP50],
    ] as const) {
      if (!d) continue;
      rows.push({
        runId: results.runId,
        kind,
        ...ids,
        measure: c.measure,
        tool: c.tool,
        metric: c.metric as ComparisonRow["metric"],
        unit: c.unit as ComparisonRow["unit"],
        statistic,
        estimate: d.estimate,
        ciLow: d.ci95[0],
        ciHigh: d.ci95[1],
        method: d.method,
        inferenceUnit: c.inference.unit,
        unitsBaseline: c.inference.units.baseline,
        unitsCandidate: c.inference.units.candidate,
        pWelch: d.welch?.p ?? null,
        pRank: d.rankTest?.p ?? null,
      });
    }
  };
  for (const c of results.comparisons) add("variant", c, { variant: c.variant, baseline: c.baseline, pair: c.pair, baselinePair: c.pair });
  for (const c of results.pairComparisons) add("pair", c, { variant: c.variant, baseline: c.variant, pair: c.pair, baselinePair: c.baselinePair });
  return rows;
}

function hosts(results: Results): HostRow[] {
  return results.variants.flatMap((v) =>
    v.hosts.map(({ deployment, actual, mismatches, placement, ...requested }) => ({
      runId: results.runId,
      variant: v.id,
      host: requested.role,
      deployment,
      requested,
      // Placement evidence (Azure's colocation status, instance view) is what the host got, not what it asked.
      actual: placement ? { ...actual, placement } : actual,
      mismatches,
    })),
  );
}

/**
 * The run's plan hash and the content it is the hash of, made from results.json (a finished
 * run's measurements hold every planned cell). A results.json made before the hash was recorded
 * gets the derived one. Content that does not give the recorded hash (results.json edited by
 * hand, or a host record missing) is not stored: it would explain a plan other than the run's.
 */
function comparablePlan(results: Results): { planHash: string; plan: PlanContent | null } {
  const content = planContent({ target: results.target, variants: results.variants, cells: results.measurements });
  const derived = planHashOfContent(content);
  const planHash = results.planHash ?? derived;
  return { planHash, plan: planHash === derived ? content : null };
}

/** The rows one run adds to the history; `samplesOf(cell)` gives a cell's samples ([] when none were kept). */
export function historyRecords(results: Results, samplesOf: (cell: string) => number[]): HistoryRecords {
  if (results.status === "running") {
    throw new Error(
      `run ${results.runId} has not finished (results.json says "running": written while the run went on; if that run no longer runs, it stopped before its end and its comparisons were never made): not recorded`,
    );
  }
  const facts = results.environment.facts;
  const plan = comparablePlan(results);
  const checked = RunRowSchema.safeParse({
    runId: results.runId,
    experiment: results.experiment.name,
    target: results.target,
    startedAt: results.startedAt,
    finishedAt: results.finishedAt,
    status: results.status,
    latlabVersion: results.environment.latlabVersion,
    gitCommit: facts[GIT_COMMIT_FACT] ?? null,
    node: results.environment.node,
    kernel: results.environment.kernel,
    toolVersions: results.environment.toolVersions,
    shaping: results.environment.shaping.note,
    facts,
    ...plan,
    event: results.environment.event ?? facts[GITHUB_EVENT_FACT] ?? null,
  });
  if (!checked.success) throw new Error(`run ${results.runId}: cannot be recorded in the history: ${checked.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  const run = checked.data;
  return {
    run,
    variants: results.variants.map((v) => ({ runId: results.runId, variant: v.id, baseline: v.baseline, axes: v.axes })),
    hosts: hosts(results),
    summaries: summaries(results, samplesOf),
    comparisons: comparisonRows(results),
  };
}
