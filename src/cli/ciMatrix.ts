import type { Experiment } from "../dsl/experiment.ts";
import { buildPlan, type PlanOptions } from "../plan/buildPlan.ts";
import { worstCaseRun } from "../targets/azure/catalog/validateAzure.ts";
import { listExperiments, loadExperiment } from "./loadExperiment.ts";
import { guardPlanSize, planOptions } from "./main.ts";

/**
 * `latlab ci-matrix`: the matrix of the scheduled GitHub workflow (.github/workflows/scheduled.yml)
 * — one job per experiment, each with the timeout its worst case needs.
 */

/**
 * Minutes a measure job spends around the run that worstCaseRun (bring-up, every cell at its
 * timeout, teardown) does not count: checkout and `npm ci`, the Azure login, restoring the history
 * and downloading the previous run's results, latlab installing the Pulumi CLI, the report and the
 * comparison, the upload, and the cleanup (`latlab destroy`, then `latlab sweep --delete` over the
 * subscription's expired groups). A few minutes each; 20 leaves room for a slow runner or a slow
 * package mirror without letting a stuck job run on for hours.
 */
export const CI_SETUP_MARGIN_MINUTES = 20;

/**
 * The longest a job may run on a GitHub-hosted runner (360 minutes): a longer timeout is not
 * honoured there, the job is stopped at 6 h. Self-hosted runners allow more.
 */
export const GITHUB_HOSTED_JOB_LIMIT_MINUTES = 360;

/** The only target the scheduled workflow runs on: worstCaseRun is Azure's (bring-up and teardown allowances). */
export const CI_MATRIX_TARGETS = ["azure"] as const;

export interface CiMatrixEntry {
  /** The name `latlab run` takes (the file's name in ./experiments or latlab's own). */
  experiment: string;
  /** The job's timeout-minutes: ceil(worst-case run / 60 s) + CI_SETUP_MARGIN_MINUTES. */
  timeoutMinutes: number;
}

export interface CiMatrix {
  include: CiMatrixEntry[];
}

export interface CiMatrixOptions {
  duration?: PlanOptions["duration"];
  /** Default "azure", the only one accepted. */
  target?: string;
  /** Jobs longer than this (default GITHUB_HOSTED_JOB_LIMIT_MINUTES) are left out of the default list, and named ones warned about. */
  maxMinutes?: number;
}

export interface CiExperiment {
  name: string;
  experiment: Experiment;
  /** Named on the command line (kept even when too long, with a warning), or found by listing (left out when too long). */
  named: boolean;
}

/** A name that can be a matrix value, an artifact name (`latlab-<name>`) and a folder name (`results/<name>-<run id>`). */
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** One job: the experiment's worst case on Azure, in whole minutes, plus the margin. */
export function matrixEntry(name: string, experiment: Experiment, options: CiMatrixOptions = {}): CiMatrixEntry {
  const target = options.target ?? "azure";
  const plan = planOptions(experiment, target, options.duration);
  // An absurd plan is refused here as `latlab run` would refuse it, before it is built.
  guardPlanSize(experiment, plan);
  const worst = worstCaseRun(buildPlan(experiment, plan));
  return { experiment: name, timeoutMinutes: Math.ceil(worst.seconds / 60) + CI_SETUP_MARGIN_MINUTES };
}

/**
 * The matrix for these experiments (pure: they are loaded already). An experiment found by
 * listing whose job would be longer than `maxMinutes` is left out, with a warning (on
 * GitHub-hosted runners it would be stopped at 6 h, mid-run, every week); one named explicitly is
 * kept, with a warning (its caller may run on a self-hosted runner, or asked for it knowingly).
 */
export function ciMatrix(experiments: readonly CiExperiment[], options: CiMatrixOptions = {}): { matrix: CiMatrix; warnings: string[] } {
  const target = options.target ?? "azure";
  if (!(CI_MATRIX_TARGETS as readonly string[]).includes(target)) {
    throw new Error(`ci-matrix: --target ${target}: the scheduled workflow runs on ${CI_MATRIX_TARGETS.join(", ")} only (the timeouts are Azure's worst cases)`);
  }
  const maxMinutes = options.maxMinutes ?? GITHUB_HOSTED_JOB_LIMIT_MINUTES;
  const include: CiMatrixEntry[] = [];
  const warnings: string[] = [];
  const seen = new Set<string>();
  for (const { name, experiment, named } of experiments) {
    if (seen.has(name)) continue;
    seen.add(name);
    if (!SAFE_NAME.test(name)) throw new Error(`ci-matrix: experiment "${name}": a name for the workflow may hold only letters, digits, ".", "_" and "-" (it names a job, an artifact and a results folder)`);
    let entry: CiMatrixEntry;
    try {
      entry = matrixEntry(name, experiment, { ...options, target });
    } catch (error) {
      throw new Error(`ci-matrix: experiment "${name}": ${(error as Error).message}`, { cause: error });
    }
    if (entry.timeoutMinutes > maxMinutes) {
      const why = `its job needs up to ${entry.timeoutMinutes} min (worst case on Azure + ${CI_SETUP_MARGIN_MINUTES} min of setup and cleanup), more than the ${maxMinutes} min a job may run${maxMinutes === GITHUB_HOSTED_JOB_LIMIT_MINUTES ? " on a GitHub-hosted runner" : ""}`;
      if (!named) {
        warnings.push(`${name} left out: ${why}; name it to run it anyway (a self-hosted runner), or give a shorter --duration`);
        continue;
      }
      warnings.push(`${name}: ${why}; it will be stopped before it ends unless its runner allows that long`);
    }
    include.push(entry);
  }
  return { matrix: { include }, warnings };
}

/**
 * The experiments to put in the matrix: those named (looked up as `latlab run` does: ./experiments,
 * then latlab's own; a path is refused, the workflow needs names), or, with none named, every one
 * `latlab list` shows (./experiments, then latlab's own that are not shadowed).
 */
export async function loadCiExperiments(names: readonly string[], cwd = process.cwd()): Promise<CiExperiment[]> {
  if (names.length === 0) {
    const { project = [], latlab } = listExperiments(cwd);
    const listed = [...project, ...latlab.filter((e) => !e.shadowedBy)];
    return Promise.all(listed.map(async (e) => ({ name: e.name, experiment: (await loadExperiment(e.file, cwd)).experiment, named: false })));
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
