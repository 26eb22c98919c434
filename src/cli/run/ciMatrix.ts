import { existsSync, realpathSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";
import type { Experiment } from "../../dsl/experiment.ts";
import { buildPlan, type PlanOptions } from "../../plan/buildPlan.ts";
import { estimateCost, loadPriceSnapshot, missingLabels, type CostEstimate, type KnownCostEstimate, type PriceSnapshot } from "../../targets/azure/catalog/prices.ts";
import { worstCaseRun, type WorstCase } from "../../targets/azure/catalog/validateAzure.ts";
import { EXPERIMENTS_DIR, listExperiments, loadExperiment } from "../experiments/loadExperiment.ts";
import { guardPlanSize } from "./planGuard.ts";
import { planOptions } from "../input/options.ts";

/**
 * `latlab ci-matrix`: the matrix of the scheduled GitHub workflows (.github/workflows/
 * latlab-measure.yml's plan job) — one job per experiment, each with three nested limits and its
 * worst-case cost, and the experiments that may not run, each with the reason.
 *
 * The three limits, innermost first, so that whatever stops a run, latlab's own teardown has its
 * allowance and the job's cleanup steps still run:
 *   timeLimitMinutes   `latlab run --time-limit`: bring-up + every cell at its timeout. There
 *                      latlab stops measuring, as on Ctrl-C, and tears down.
 *   stepTimeoutMinutes the run step's timeout-minutes: the time limit + the teardown allowance +
 *                      CI_STEP_MARGIN_MINUTES. latlab's teardown ends before GitHub cancels the step.
 *   timeoutMinutes     the job's timeout-minutes: the step's + CI_SETUP_MARGIN_MINUTES for the
 *                      steps around it (setup before, upload and cleanup after).
 */

/**
 * Minutes of the run step that are neither latlab's measuring (the time limit) nor its teardown
 * allowance: `npx` starting latlab and its checks before the deploy (the offline resource listing
 * may take up to 5 minutes, LISTING_TIMEOUT_MS in lifecycle/preflight.ts; the Pulumi CLI is
 * installed if missing), stopping the cell in flight when the time limit comes, and after the
 * teardown writing results.json, the report and the history record. 10 covers these with room.
 * It errs long on purpose: a step that reaches its timeout is cancelled by GitHub, and latlab's
 * teardown with it (the cleanup job then deletes the run's groups by tag, later and blind).
 */
export const CI_STEP_MARGIN_MINUTES = 10;

/**
 * Minutes a measure job spends outside the run step: checkout and `npm ci`, restoring the history
 * and downloading the previous run's results before it (a few minutes); after it the uploads, the
 * report and the comparison (a few more), and the "Clean up" step's `latlab destroy`, whose own
 * timeout-minutes is 30 (.github/workflows/latlab-measure.yml). 40 holds all of them, so that after
 * a run step that timed out (which fails the step without cancelling the job) the cleanup still
 * ends before the job's timeout cancels it.
 */
export const CI_SETUP_MARGIN_MINUTES = 40;

/**
 * The longest a job may run on a GitHub-hosted runner: "Each job in a workflow can run for up to
 * 6 hours of execution time. If a job reaches this limit, the job is terminated and fails."
 * (github/docs content/actions/reference/limits.md @ 0bad049d4175f6154caaf108c2d69413dae16b4c,
 * "All GitHub-hosted runners | Job execution time | 6 hours"). A longer timeout-minutes is not
 * honoured there.
 */
export const GITHUB_HOSTED_JOB_LIMIT_MINUTES = 6 * 60;

/**
 * The longest a job may run on a self-hosted runner: "Each job in a workflow can run for up to
 * 5 days of execution time" (the same file, "Self-hosted | Job execution time | 5 days").
 */
export const GITHUB_SELF_HOSTED_JOB_LIMIT_MINUTES = 5 * 24 * 60;

/** The only target the scheduled workflow runs on: worstCaseRun is Azure's (bring-up and teardown allowances), the costs Azure's list prices. */
export const CI_MATRIX_TARGETS = ["azure"] as const;

/** A name that can be a matrix value, an artifact name (`latlab-<name>`) and a folder name (`results/<name>-<run id>`). */
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

const minutes = z.number().int().positive();

/** One job of the matrix, as the workflow reads it (`matrix.<field>`). */
export const CiMatrixEntrySchema = z
  .object({
    /** The name `latlab run` takes (a file's name in ./experiments, or one of latlab's own). */
    experiment: z.string().regex(SAFE_NAME),
    /** The job's timeout-minutes: stepTimeoutMinutes + CI_SETUP_MARGIN_MINUTES. */
    timeoutMinutes: minutes,
    /** The run step's timeout-minutes: timeLimitMinutes + the teardown allowance + CI_STEP_MARGIN_MINUTES. */
    stepTimeoutMinutes: minutes,
    /** `latlab run --time-limit`: bring-up + every cell at its timeout. */
    timeLimitMinutes: minutes,
    /**
     * The run's worst-case cost in USD at list prices, rounded up to the cent: every VM and public
     * IP of the plan for bring-up + measuring + teardown (what `latlab run --max-cost` checks;
     * disks and traffic are not in it, prices.ts EXCLUDED_FROM_ESTIMATE). With `--time-limit
     * timeLimitMinutes` the run keeps to it: it never holds more than the plan's resources (waves
     * hold fewer), for at most the time limit and then its teardown.
     */
    maxCostUsd: z.number().nonnegative(),
  })
  .strict()
  .refine((e) => e.timeLimitMinutes < e.stepTimeoutMinutes && e.stepTimeoutMinutes < e.timeoutMinutes, {
    message: "the limits must nest: timeLimitMinutes < stepTimeoutMinutes < timeoutMinutes",
  });
export type CiMatrixEntry = z.infer<typeof CiMatrixEntrySchema>;

export const CiMatrixSchema = z.object({ include: z.array(CiMatrixEntrySchema) }).strict();
export type CiMatrix = z.infer<typeof CiMatrixSchema>;

/** An entry's limits and the parts they are made of, in whole minutes (each part rounded up). */
export interface JobMinutes {
  bringUp: number;
  /** Every cell at its timeout, and each deployment's overhead (worstCaseRun's cellsSeconds). */
  measurement: number;
  teardown: number;
  timeLimit: number;
  stepTimeout: number;
  timeout: number;
}

/** The three nested limits of a run whose worst case is `worst` (see the module comment). */
export function jobMinutes(worst: WorstCase): JobMinutes {
  const bringUp = Math.ceil(worst.bringUpSeconds / 60);
  const measurement = Math.ceil(worst.cellsSeconds / 60);
  const teardown = Math.ceil(worst.teardownSeconds / 60);
  const timeLimit = bringUp + measurement;
  const stepTimeout = timeLimit + teardown + CI_STEP_MARGIN_MINUTES;
  return { bringUp, measurement, teardown, timeLimit, stepTimeout, timeout: stepTimeout + CI_SETUP_MARGIN_MINUTES };
}

export interface CiMatrixOptions {
  duration?: PlanOptions["duration"];
  /** Default "azure", the only one accepted. */
  target?: string;
  /** The jobs run on a self-hosted runner: 5 days per job, not 6 hours. */
  selfHosted?: boolean;
  /** --max-cost: an experiment whose worst-case cost is above this many USD is refused. */
  maxCostUsd?: number;
  /** --max-total-cost: when the entries' worst-case costs add up to more, nothing runs. */
  maxTotalCostUsd?: number;
  /** The prices (default: the bundled snapshot, as `latlab run --target azure` uses). */
  snapshot?: PriceSnapshot;
}

/** One experiment as the matrix sees it: its limits and its worst-case cost. */
export interface PlannedEntry {
  experiment: string;
  minutes: JobMinutes;
  /** For the worst case's hours (as `latlab run --max-cost` computes it). */
  cost: CostEstimate;
}

/** The experiment's worst case on Azure (as `latlab run --target azure` would plan it), its limits and cost. */
export function planEntry(name: string, experiment: Experiment, options: CiMatrixOptions = {}): PlannedEntry {
  const target = options.target ?? "azure";
  const plan = planOptions(experiment, target, options.duration);
  // An absurd plan is refused here as `latlab run` would refuse it, before it is built.
  guardPlanSize(experiment, plan);
  const built = buildPlan(experiment, plan);
  const worst = worstCaseRun(built);
  // The preflight's own estimate (lifecycle/preflight.ts): the whole plan for the worst case's hours.
  const cost = estimateCost(built, options.snapshot ?? loadPriceSnapshot(), worst.seconds / 3600);
  return { experiment: name, minutes: jobMinutes(worst), cost };
}

/** USD rounded up to the cent: a bound stays a bound (and `latlab run --max-cost` accepts it). */
const centsUp = (usd: number) => Math.ceil(Math.round(usd * 1e6) / 1e4) / 100;
const usd = (value: number) => `$${value.toFixed(2)}`;

/** What the matrix entry of a planned experiment is (its cost must be known). */
export function matrixEntry(planned: Omit<PlannedEntry, "cost"> & { cost: KnownCostEstimate }): CiMatrixEntry {
  const m = planned.minutes;
  return CiMatrixEntrySchema.parse({
    experiment: planned.experiment,
    timeoutMinutes: m.timeout,
    stepTimeoutMinutes: m.stepTimeout,
    timeLimitMinutes: m.timeLimit,
    maxCostUsd: centsUp(planned.cost.totalUsd),
  });
}

/** An experiment that may not run, and why (one line, naming it). */
export interface CiRefusal {
  experiment: string;
  reason: string;
}

export interface CiMatrixResult {
  /** What runs. Empty when `overBudget` (nothing runs). */
  matrix: CiMatrix;
  /** Experiments left out, each with its reason; the others still run. */
  refused: CiRefusal[];
  warnings: string[];
  /** --max-total-cost refused the whole matrix: why, with every entry's cost. */
  overBudget?: string;
}

/** Why an entry's job does not fit its runner, or undefined. */
function runnerRefusal(m: JobMinutes, selfHosted: boolean): string | undefined {
  const limit = selfHosted ? GITHUB_SELF_HOSTED_JOB_LIMIT_MINUTES : GITHUB_HOSTED_JOB_LIMIT_MINUTES;
  if (m.timeout <= limit) return undefined;
  const parts =
    `run step ${m.stepTimeout} min: bring-up ${m.bringUp} + measurement ${m.measurement} + teardown ${m.teardown} + ${CI_STEP_MARGIN_MINUTES} of margin; ` +
    `then ${CI_SETUP_MARGIN_MINUTES} min of setup, upload and cleanup`;
  return selfHosted
    ? `its job needs up to ${m.timeout} min (${parts}), more than the ${limit} min (5 days) a job may run on a self-hosted runner; give a shorter --duration`
    : `its job needs up to ${m.timeout} min (${parts}), more than the ${limit} min (6 h) a job may run on a GitHub-hosted runner; run it on a self-hosted runner (the workflow's \`runner\` input, ci-matrix --self-hosted) or give a shorter --duration`;
}

/** Why an entry's cost refuses it, or undefined. An UNKNOWN cost is always refused: an unattended run needs a cost to budget. */
function costRefusal(name: string, cost: CostEstimate, maxCostUsd: number | undefined): string | undefined {
  if (!cost.known) {
    return `its cost is UNKNOWN: no price for ${missingLabels(cost).join(", ")} in the prices of ${cost.prices.fetchedAt}, so neither --max-cost nor --max-total-cost can be checked; use sizes and regions latlab's price snapshot has (\`latlab plan ${name} --target azure\` shows the cost)`;
  }
  if (maxCostUsd !== undefined && centsUp(cost.totalUsd) > maxCostUsd) {
    return `its worst-case cost ${usd(centsUp(cost.totalUsd))} (${cost.hours.toFixed(1)} h at list prices of ${cost.prices.fetchedAt}) is above --max-cost ${usd(maxCostUsd)}`;
  }
  return undefined;
}

function checkUsd(flag: string, value: number | undefined): void {
  if (value !== undefined && !(Number.isFinite(value) && value >= 0)) throw new RangeError(`ci-matrix: ${flag} must be a non-negative number of USD, got ${value}`);
}

/**
 * The matrix for these experiments (pure but for the price snapshot it reads: they are loaded
 * already). An experiment whose job does not fit its runner (6 h hosted, 5 days self-hosted), or
 * whose worst-case cost is above --max-cost or UNKNOWN, is refused, and the others still run — but
 * one that was only listed (no names given) and is too long for its runner is left out with a
 * warning instead. Then, if the costs of those that would run add up to more than
 * --max-total-cost, nothing runs.
 */
export function ciMatrix(experiments: readonly CiExperiment[], options: CiMatrixOptions = {}): CiMatrixResult {
  const target = options.target ?? "azure";
  if (!(CI_MATRIX_TARGETS as readonly string[]).includes(target)) {
    throw new Error(`ci-matrix: --target ${target}: the scheduled workflow runs on ${CI_MATRIX_TARGETS.join(", ")} only (the timeouts are Azure's worst cases)`);
  }
  checkUsd("--max-cost", options.maxCostUsd);
  checkUsd("--max-total-cost", options.maxTotalCostUsd);
  const snapshot = options.snapshot ?? loadPriceSnapshot();
  const include: CiMatrixEntry[] = [];
  const refused: CiRefusal[] = [];
  const warnings: string[] = [];
  const seen = new Set<string>();
  for (const { name, experiment, named } of experiments) {
    if (seen.has(name)) continue;
    seen.add(name);
    if (!SAFE_NAME.test(name)) throw new Error(`ci-matrix: experiment "${name}": a name for the workflow may hold only letters, digits, ".", "_" and "-" (it names a job, an artifact and a results folder)`);
    let planned: PlannedEntry;
    try {
      planned = planEntry(name, experiment, { ...options, target, snapshot });
    } catch (error) {
      throw new Error(`ci-matrix: experiment "${name}": ${(error as Error).message}`, { cause: error });
    }
    const { cost } = planned;
    const tooLong = runnerRefusal(planned.minutes, Boolean(options.selfHosted));
    const tooCostly = costRefusal(name, cost, options.maxCostUsd);
    if (tooLong && !named && !tooCostly) {
      warnings.push(`${name} left out (not named): ${tooLong}; name it to ask for it`);
      continue;
    }
    const reasons = [tooLong, tooCostly].filter((r) => r !== undefined);
    if (reasons.length || !cost.known) {
      refused.push({ experiment: name, reason: `${name} refused: ${reasons.join("; and ")}` });
      continue;
    }
    include.push(matrixEntry({ ...planned, cost }));
  }
  if (options.maxTotalCostUsd !== undefined && include.length) {
    const totalCents = include.reduce((sum, e) => sum + Math.round(e.maxCostUsd * 100), 0);
    if (totalCents > Math.round(options.maxTotalCostUsd * 100)) {
      const each = include.map((e) => `${e.experiment} ${usd(e.maxCostUsd)}`).join(", ");
      const overBudget = `nothing runs: the experiments' worst-case costs add up to ${usd(totalCents / 100)}, above --max-total-cost ${usd(options.maxTotalCostUsd)} (${each}); name fewer experiments, give a shorter --duration or a larger --max-total-cost`;
      return { matrix: { include: [] }, refused, warnings, overBudget };
    }
  }
  if (!include.length && !refused.length) warnings.push("no experiment to run: the matrix is empty");
  return { matrix: CiMatrixSchema.parse({ include }), refused, warnings };
}

export interface CiExperiment {
  name: string;
  experiment: Experiment;
  /**
   * Named by the caller. A listed one (no names given) whose job does not fit the runner is left
   * out with a warning — the default list must not turn every scheduled run red for an experiment
   * nobody asked for; a named one is refused (an ::error::): someone asked for it.
   */
  named?: boolean;
}

/** Is ./experiments under cwd latlab's own (cwd is latlab's checkout), not a project's? */
function isLatlabsOwnCheckout(cwd: string): boolean {
  const dir = resolve(cwd, "experiments");
  return existsSync(dir) && statSync(dir).isDirectory() && realpathSync(dir) === realpathSync(EXPERIMENTS_DIR);
}

/**
 * The experiments to put in the matrix. Named ones are looked up as `latlab run` does
 * (./experiments, then latlab's own; a path is refused: the workflow needs names). With none
 * named: in a project (a ./experiments that is not latlab's, as `latlab init` makes), the
 * project's own only — latlab's built-ins run there when named, a project pays for what it wrote;
 * in latlab's own checkout (its ./experiments are the built-ins), the built-ins. Anywhere else
 * there is nothing to list, which is refused rather than guessed.
 */
export async function loadCiExperiments(names: readonly string[], cwd = process.cwd()): Promise<CiExperiment[]> {
  if (names.length === 0) {
    const { project, latlab } = listExperiments(cwd);
    if (!project && !isLatlabsOwnCheckout(cwd)) {
      throw new Error(
        `ci-matrix: no ./experiments in ${cwd}: with no names it lists a project's own experiments (./experiments, as \`latlab init\` makes it), or the built-ins in latlab's own checkout; name experiments to run latlab's built-ins from here`,
      );
    }
    const listed = project ?? latlab;
    return Promise.all(listed.map(async (e) => ({ name: e.name, experiment: (await loadExperiment(e.file, cwd)).experiment })));
  }
  const out: CiExperiment[] = [];
  for (const name of names) {
    if (name.includes("/") || /\.(ts|mts|js|mjs)$/.test(name)) {
      throw new Error(`ci-matrix: "${name}" is a path: give experiment names (files in ./experiments or latlab's own), as the workflow runs \`latlab run <name>\``);
    }
    out.push({ name, experiment: (await loadExperiment(name, cwd)).experiment, named: true });
  }
  return out;
}
