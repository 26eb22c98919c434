/**
 * `latlab resume`: finishes a run that stopped before every cell was measured (Ctrl-C, a crash,
 * kill -9, a lost machine): the cells not measured are run on hosts brought up again, into the
 * same results folder, and results.json is made again from every cell — the earlier ones as
 * they were measured, the new ones beside them — with the comparisons over all of them.
 *
 * The hosts are new: a resumed deployment is a different draw of hosts from the one its earlier
 * cells ran on. results.json says so (a `resume.N` fact, and the earlier hosts kept under
 * "<deployment> (before resume N)"), and comparisons are over the same units as ever.
 */
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import type { Cell, Plan } from "../plan/types.ts";
import { PlanSchema } from "../plan/types.ts";
import { comparePairs, compareVariants, type SampledMeasurement } from "../results/comparisons.ts";
import { ResultsSchema, type Measurement, type Results } from "../results/schema.ts";
import type { Target } from "../targets/target.ts";
import type { Connect } from "./connections.ts";
import type { Progress } from "./progress.ts";
import { runExperiment, runStatus } from "./runExperiment.ts";
import { RunFiles } from "../results/runFiles.ts";

/** Where the resumed cells are measured before they join the run's folder. */
export const RESUME_FOLDER = ".resume";

export class ResumeError extends Error {}

/** The run's plan and results as written; errors name the file. */
export function readRunToResume(runDir: string): { plan: Plan; results: Results } {
  const read = <T>(name: string, schema: z.ZodType<T>): T => {
    const file = join(runDir, name);
    if (!existsSync(file)) throw new ResumeError(`cannot resume ${runDir}: no ${name} (not a run's results folder, or the run stopped before it wrote it)`);
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(file, "utf8"));
    } catch (error) {
      throw new ResumeError(`cannot resume ${runDir}: ${file} is not JSON (${(error as Error).message})`);
    }
    const checked = schema.safeParse(raw);
    if (!checked.success) throw new ResumeError(`cannot resume ${runDir}: ${file} does not match its schema:\n${z.prettifyError(checked.error)}`);
    return checked.data;
  };
  return { plan: read("plan.json", PlanSchema), results: read("results.json", ResultsSchema) };
}

/** The cells a resume runs: every cell of the plan without a measurement that succeeded. */
export function cellsToResume(plan: Plan, results: Pick<Results, "measurements">): Cell[] {
  const ok = new Set(results.measurements.filter((m) => m.status === "ok").map((m) => m.cell));
  return plan.cells.filter((c) => !ok.has(c.id));
}

/** The plan of only those cells, and of the deployments they need. */
export function resumePlan(plan: Plan, cells: readonly Cell[]): Plan {
  const ids = new Set(cells.map((c) => c.deployment));
  const deployments = plan.deployments.filter((d) => ids.has(d.id));
  return {
    ...plan,
    deployments,
    cells: [...cells],
    estimate: {
      ...plan.estimate,
      hosts: deployments.reduce((n, d) => n + d.hosts.length, 0),
      measurementSeconds: cells.reduce((s, c) => s + c.estimatedSeconds, 0),
    },
  };
}

/** How many times the run was resumed before (its `resume.N` facts). */
const resumesIn = (results: Results) => Object.keys(results.environment.facts).filter((k) => /^resume\.\d+$/.test(k)).length;

/**
 * The run's results with the resumed cells in: every plan cell's measurement (the resumed one
 * where there is one), comparisons made again over all samples, the status of the whole, the
 * earlier hosts of resumed deployments kept apart, and what was resumed when.
 */
export function mergeResumed(plan: Plan, earlier: Results, resumed: Results, samplesOf: (cell: string) => number[], at: string): Results {
  const n = resumesIn(earlier) + 1;
  const byCell = new Map<string, Measurement>(earlier.measurements.map((m) => [m.cell, m]));
  for (const m of resumed.measurements) byCell.set(m.cell, m);
  const measurements = plan.cells.map((c) => byCell.get(c.id)).filter((m): m is Measurement => m !== undefined);
  const sampled: SampledMeasurement[] = measurements.map((measurement) => ({ measurement, samples: measurement.status === "ok" ? samplesOf(measurement.cell) : [] }));
  const redeployed = new Set(resumed.measurements.map((m) => m.deployment));
  const ok = measurements.filter((m) => m.status === "ok").length;
  const status = runStatus({ aborted: resumed.status === "interrupted", runError: resumed.error, ok, cells: plan.cells.length });
  const variants = earlier.variants.map((v) => {
    const now = resumed.variants.find((r) => r.id === v.id);
    const before = v.hosts.map((h) => (redeployed.has(h.deployment) ? { ...h, deployment: `${h.deployment} (before resume ${n})` } : h));
    return { ...v, hosts: [...before, ...(now?.hosts ?? [])] };
  });
  const resumedCells = resumed.measurements.length;
  const error = status === "failed" ? (resumed.error ?? `no cell was measured; first failure: ${measurements.find((m) => m.error)?.error ?? "unknown"}`) : resumed.status === "interrupted" ? resumed.error : undefined;
  const { error: _earlierError, ...rest } = earlier;
  return {
    ...rest,
    finishedAt: resumed.finishedAt,
    status,
    ...(error ? { error } : {}),
    environment: {
      ...earlier.environment,
      toolVersions: { ...earlier.environment.toolVersions, ...resumed.environment.toolVersions },
      facts: {
        ...earlier.environment.facts,
        [`resume.${n}`]: `${at}: ${resumedCells} cell(s) not measured before were run on hosts brought up again (deployments ${[...redeployed].join(", ")}; a new draw of hosts: their earlier cells' hosts are listed as "<deployment> (before resume ${n})"); run ${resumed.runId} on ${resumed.target}, shaping: ${resumed.environment.shaping.note}`,
      },
    },
    variants,
    measurements,
    comparisons: compareVariants(plan.baselineOf, plan.variants.map((v) => v.id), sampled, plan.cells),
    pairComparisons: comparePairs(sampled, plan.cells),
    teardown: resumed.teardown,
  };
}

/** Moves the resumed cells' raw/ and samples/ entries into the run folder (replacing a cell's earlier partial files). */
function moveInto(from: string, runDir: string): void {
  for (const sub of ["raw", "samples"]) {
    const src = join(from, sub);
    if (!existsSync(src)) continue;
    mkdirSync(join(runDir, sub), { recursive: true });
    for (const entry of readdirSync(src)) {
      const target = join(runDir, sub, entry);
      if (existsSync(target)) rmSync(target, { recursive: true, force: true });
      renameSync(join(src, entry), target);
    }
  }
}

export interface ResumeOptions {
  runDir: string;
  /** The run id the resumed hosts are brought up under (a new one: the earlier run's names may still be taken). */
  resumeRunId: string;
  target: Target;
  progress: Progress;
  signal: AbortSignal;
  connect?: Connect;
  /** The clock the resume is dated by (tests pass their own). */
  now?: () => Date;
}

/** Runs what the run did not measure and writes the merged results.json; returns it. */
export async function resumeRun(options: ResumeOptions): Promise<{ results: Results; resumedCells: number }> {
  const { runDir } = options;
  const { plan, results: earlier } = readRunToResume(runDir);
  const cells = cellsToResume(plan, earlier);
  if (!cells.length) throw new ResumeError(`nothing to resume in ${runDir}: every one of its ${plan.cells.length} cells was measured (status ${earlier.status})`);
  const work = join(runDir, RESUME_FOLDER);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  options.progress.log(`resuming run ${earlier.runId}: ${cells.length} of ${plan.cells.length} cells to measure, on hosts brought up again`);
  const resumed = await runExperiment({
    source: earlier.experiment.source,
    plan: resumePlan(plan, cells),
    target: options.target,
    runId: options.resumeRunId,
    runDir: work,
    progress: options.progress,
    signal: options.signal,
    ...(options.connect ? { connect: options.connect } : {}),
    files: new RunFiles(work, { runId: options.resumeRunId, warn: (m) => options.progress.log(m) }),
  });
  moveInto(work, runDir);
  const samplesFiles = new Map<string, string>();
  for (const m of [...earlier.measurements, ...resumed.measurements]) if (m.samplesFile) samplesFiles.set(m.cell, m.samplesFile);
  const samplesOf = (cell: string) => {
    const file = samplesFiles.get(cell);
    const path = file ? join(runDir, file) : undefined;
    return path && existsSync(path) && statSync(path).isFile() ? readFileSync(path, "utf8").split("\n").filter(Boolean).map(Number) : [];
  };
  const merged = mergeResumed(plan, earlier, resumed, samplesOf, (options.now?.() ?? new Date()).toISOString());
  const files = new RunFiles(runDir, { runId: earlier.runId, warn: (m) => options.progress.log(m) });
  files.writeResults(merged, true);
  rmSync(work, { recursive: true, force: true });
  return { results: merged, resumedCells: cells.length };
}
