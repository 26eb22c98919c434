import { buildPlan, defineExperiment } from "../../../src/index.ts";
import type { Cell } from "../../../src/plan/types.ts";
import { comparePairs, compareVariants } from "../../../src/results/comparisons.ts";
import { hostRecords } from "../../../src/results/hostRecords.ts";
import type { Measurement, Results } from "../../../src/results/schema.ts";
import { summarizeMany } from "../../../src/results/summarize.ts";

/** A two-variant experiment (accelnet off/on), ping between client and server. */
export const twoVariants = (replicas = 1, repetitions = 1) =>
  defineExperiment({
    name: "hist",
    description: "history test",
    axes: { accelnet: [false, true] },
    hosts: { server: {}, client: {} },
    measure: [{ tool: "ping" }],
    replicas,
    repetitions,
  });

/**
 * Results of a run whose cells measured `samplesOf(cell)`, made with latlab's own comparison
 * code (as runExperiment does), and a reader of the samples by cell id.
 */
export function fakeRun(runId: string, samplesOf: (c: Cell) => number[], opts: { replicas?: number; repetitions?: number; startedAt?: string; facts?: Record<string, string>; experiment?: ReturnType<typeof twoVariants> } = {}) {
  const plan = buildPlan(opts.experiment ?? twoVariants(opts.replicas, opts.repetitions));
  const samples = new Map(plan.cells.map((c) => [c.id, samplesOf(c)]));
  const measurements: Measurement[] = plan.cells.map((c) => ({
    cell: c.id, measure: c.measure, variant: c.variant, deployment: c.deployment, tool: c.tool, params: c.params, from: c.from, to: c.to,
    path: c.path, pathKind: c.pathKind, replica: c.replica, repetition: c.repetition, status: "ok", startedAt: "", finishedAt: "", warnings: [], raw: [],
    summary: summarizeMany("rtt", "us", [samples.get(c.id)!])!,
    samplesFile: `samples/${encodeURIComponent(c.id)}.txt`,
  }));
  const sampled = measurements.map((measurement) => ({ measurement, samples: samples.get(measurement.cell)! }));
  const startedAt = opts.startedAt ?? "2026-11-01T10:00:00.000Z";
  const results: Results = {
    schemaVersion: 1, runId, experiment: { name: plan.experiment.name, description: "history test", source: "hist.ts" }, target: "local", startedAt, finishedAt: startedAt, status: "complete",
    environment: { latlabVersion: "0.1.0", node: "v24", kernel: "k", toolVersions: { ping: "20240117" }, shaping: { latency: "unavailable", bandwidth: "applied", note: "shaping: test" }, facts: opts.facts ?? {} },
    baseline: plan.baseline,
    variants: plan.variants.map((v) => ({ id: v.id, axes: v.axes, baseline: plan.baselineOf[v.id]!, hosts: hostRecords(plan, v.id, []) })),
    measurements,
    comparisons: compareVariants(plan.baselineOf, plan.variants.map((v) => v.id), sampled, plan.cells),
    pairComparisons: comparePairs(sampled, plan.cells),
    teardown: { status: "ok", errors: [], removed: [] },
  };
  return { results, plan, sampled, samplesOf: (cell: string) => samples.get(cell) ?? [] };
}

/** `n` samples around `centre` with a small deterministic spread (no two runs alike unless asked). */
export const around = (centre: number, n = 50, seed = 1) => Array.from({ length: n }, (_, i) => centre + ((i * 7919 + seed * 104729) % 13) / 10);
