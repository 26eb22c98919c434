/**
 * `latlab resume`: finishes a run that stopped before every cell was measured (Ctrl-C, a crash,
 * kill -9, a lost machine): the cells not measured are run on hosts brought up again, into the
 * same results folder, and results.json is made again from every cell — the earlier ones as
 * they were measured, the new ones beside them — with the comparisons over all of them.
 *
 * The hosts are the run's own when it left them up and the target can re-attach to them
 * (TargetFactory.reattach): detached clients the dead runner started are then collected where it
 * stopped, not started again. Otherwise they are new: a resumed deployment is a different draw of
 * hosts from the one its earlier cells ran on. results.json says which (a `resume.N` fact; new
 * hosts keep the earlier ones under "<deployment> (before resume N)"), and comparisons are over
 * the same units as ever.
 *
 * A run made in waves (plan/waves.ts: the quota or --max-vcpus could not hold every deployment at
 * once) is resumed in its own waves: each wave keeps only its deployments with cells left, and
 * they come up one wave after another, as the run was sized; the comparisons keep their wave notes
 * (each deployment counted in the wave the run planned it in). A deployment results.json names
 * no wave for is refused, saying so, rather than brought up beside the others.
 */
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import type { Cell, Plan } from "../plan/types.ts";
import { PlanSchema } from "../plan/types.ts";
import { comparePairs, compareVariants, type SampledMeasurement } from "../results/comparisons.ts";
import { waveOfDeployment, type WavePlan } from "../plan/waves.ts";
import { withWaveNotes, type WavesRecord } from "../results/waveRecords.ts";
import { ResultsSchema, type Measurement, type Results } from "../results/schema.ts";
import type { Target } from "../targets/target.ts";
import type { Connect } from "./connections.ts";
import type { Progress } from "./progress.ts";
import { NO_SHAPING, runExperiment, runStatus } from "./runExperiment.ts";
import { RunFiles } from "../results/runFiles.ts";
import { cellSlug } from "./cellRunner.ts";
import { readDetachedState, type DetachedState } from "./detachedState.ts";

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

/**
 * Whether a failed measurement was never really measured — the run stopped before it, or it was
 * cut off (interrupted, its connection lost) — rather than failed for a reason of its own, which
 * would fail again on a resume and whose raw output is evidence to keep.
 */
export function cutOff(m: Pick<Measurement, "status" | "error">): boolean {
  return m.status === "failed" && /^(interrupted|not run)|connection to .* lost|interrupted$/.test(m.error ?? "");
}

/**
 * The cells a resume runs: those the run has no measurement of, and those cut off (see
 * {@link cutOff}); with `retryFailed`, every cell not measured successfully.
 */
export function cellsToResume(plan: Plan, results: Pick<Results, "measurements">, options: { retryFailed?: boolean } = {}): Cell[] {
  const byCell = new Map(results.measurements.map((m) => [m.cell, m]));
  return plan.cells.filter((c) => {
    const m = byCell.get(c.id);
    return !m || (m.status === "failed" && (options.retryFailed || cutOff(m)));
  });
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

/**
 * The deployments of each wave the run planned, in order (0-based by position): results.json's
 * `plannedWaves`, or — in results written before latlab recorded them — those of the waves it
 * reached (a wave never reached is then empty: which deployments it held is not known).
 */
function plannedWaves(waves: WavesRecord): string[][] {
  if (waves.plannedWaves) return waves.plannedWaves.map((w) => [...w]);
  const out: string[][] = Array.from({ length: waves.planned }, () => []);
  for (const r of waves.runs) if (r.wave >= 1 && r.wave <= waves.planned) out[r.wave - 1] = [...r.deployments];
  return out;
}

/**
 * The waves a resume of a run made in waves goes in: the run's own waves, each keeping only its
 * deployments in `sub` (those with cells left: a part of a wave that fitted fits), empty ones
 * left out; `runWaves` their numbers in the run (1-based). Undefined for a run in one wave.
 * Throws ResumeError when a deployment of `sub` is in no wave results.json records: bringing it
 * up beside the others could exceed what the waves were sized against.
 */
export function resumeWaves(sub: Plan, waves: WavesRecord | undefined, runDir: string): { plan: WavePlan; runWaves: number[] } | undefined {
  if (!waves || waves.planned < 2) return undefined;
  const planned = plannedWaves(waves);
  const known = new Set(planned.flat());
  const orphans = sub.deployments.filter((d) => !known.has(d.id)).map((d) => d.id);
  if (orphans.length) {
    throw new ResumeError(
      `cannot resume ${runDir} in its waves: the run went in ${waves.planned} waves (sized against ${waves.limits}), but its results.json (written before latlab recorded every planned wave) does not say which wave deployment(s) ${orphans.join(", ")} were planned in — ` +
        "the run stopped before reaching it — and bringing them up beside the others could exceed what the waves were sized against. Nothing was brought up; `latlab run` measures the experiment again (in waves of its own).",
    );
  }
  const variantOrder = new Map(sub.variants.map((v, i) => [v.id, i]));
  const kept = planned
    .map((ids, i) => ({ number: i + 1, deployments: sub.deployments.filter((d) => ids.includes(d.id)) }))
    .filter((w) => w.deployments.length > 0);
  return {
    runWaves: kept.map((w) => w.number),
    plan: {
      limits: { source: `${waves.limits} (the run's own waves, kept by the resume)`, regions: {} },
      reasons: [...waves.reasons],
      unknown: [],
      waves: kept.map((w, index) => ({
        index,
        deployments: w.deployments.map((d) => d.id),
        variants: [...new Set(w.deployments.flatMap((d) => d.variants))].sort((a, b) => (variantOrder.get(a) ?? 0) - (variantOrder.get(b) ?? 0)),
        replicas: [...new Set(w.deployments.map((d) => d.replica))].sort((a, b) => a - b),
        regions: [],
        vcpus: 0,
      })),
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
export function mergeResumed(
  plan: Plan,
  earlier: Results,
  resumed: Results,
  samplesOf: (cell: string) => number[],
  at: string,
  /** The resume ran on the hosts the run left up, re-attached: no new draw of hosts. */
  options: { sameHosts?: boolean; reattachedCells?: number; /** The run's waves (1-based) the resume brought up again, one after another. */ inWaves?: readonly number[] } = {},
): Results {
  const n = resumesIn(earlier) + 1;
  const byCell = new Map<string, Measurement>(earlier.measurements.map((m) => [m.cell, m]));
  // A resumed cell replaces the earlier one only when it was measured, or tried and failed; a
  // cell the resume never reached (interrupted before it) keeps what the run knew of it.
  const taken = resumed.measurements.filter((m) => m.status === "ok" || !cutOff(m) || !byCell.has(m.cell));
  for (const m of taken) byCell.set(m.cell, m);
  const measurements = plan.cells.map((c) => byCell.get(c.id)).filter((m): m is Measurement => m !== undefined);
  const sampled: SampledMeasurement[] = measurements.map((measurement) => ({ measurement, samples: measurement.status === "ok" ? samplesOf(measurement.cell) : [] }));
  const hostsUp = resumed.environment.shaping.note !== NO_SHAPING.note;
  // Deployments whose resumed cells were measured or tried there: their hosts are a new draw.
  const redeployed = new Set(hostsUp ? taken.map((m) => m.deployment) : []);
  const ok = measurements.filter((m) => m.status === "ok").length;
  const status = runStatus({ aborted: resumed.status === "interrupted", runError: resumed.error, ok, cells: plan.cells.length });
  const variants = earlier.variants.map((v) => {
    const now = resumed.variants.find((r) => r.id === v.id);
    // The same hosts re-attached: one record of each (the resume's, read back as the run's were).
    const before = options.sameHosts
      ? v.hosts.filter((h) => !redeployed.has(h.deployment))
      : v.hosts.map((h) => (redeployed.has(h.deployment) ? { ...h, deployment: `${h.deployment} (before resume ${n})` } : h));
    // Host records of a resume whose hosts never came up say nothing about hosts: not added.
    return { ...v, hosts: [...before, ...(now?.hosts ?? []).filter((h) => redeployed.has(h.deployment))] };
  });
  const measuredNow = taken.filter((m) => m.status === "ok").length;
  const reattachedNote = options.reattachedCells ? `; ${options.reattachedCells} detached client(s) the run had started were collected where its runner stopped` : "";
  const error = resumed.error ? `resume ${n}: ${resumed.error}` : status === "failed" ? `no cell was measured; first failure: ${measurements.find((m) => m.error)?.error ?? "unknown"}` : undefined;
  const what = !hostsUp
    ? `no hosts came up, nothing was measured${resumed.error ? `: ${resumed.error}` : ""}`
    : options.sameHosts
      ? `${measuredNow} of ${resumed.measurements.length} cell(s) not measured before were measured on the hosts the run left up, re-attached (deployments ${[...redeployed].join(", ")}; the same hosts, not a new draw)${reattachedNote}`
      : `${measuredNow} of ${resumed.measurements.length} cell(s) not measured before were measured on hosts brought up again (deployments ${[...redeployed].join(", ")}; a new draw of hosts: their earlier cells' hosts are listed as "<deployment> (before resume ${n})")` +
        (options.inWaves?.length ? `, in the run's own wave${options.inWaves.length === 1 ? "" : "s"} ${options.inWaves.join(", ")}${options.inWaves.length > 1 ? ", one after another" : ""}` : "");
  // The resume's own target facts (kernel features, CPUs…) and provenance, kept apart from the earlier run's.
  const resumedFacts = Object.fromEntries(Object.entries(resumed.environment.facts).map(([k, v]) => [`resume.${n}.${k}`, v]));
  const earlierHadHosts = earlier.environment.shaping.note !== NO_SHAPING.note;
  const { error: _earlierError, ...rest } = earlier;
  return {
    ...rest,
    finishedAt: resumed.finishedAt,
    status,
    ...(error ? { error } : {}),
    environment: {
      ...earlier.environment,
      // A run stopped before any host came up has no shaping of its own to report.
      shaping: earlierHadHosts || !hostsUp ? earlier.environment.shaping : resumed.environment.shaping,
      toolVersions: { ...earlier.environment.toolVersions, ...resumed.environment.toolVersions },
      facts: {
        ...earlier.environment.facts,
        ...resumedFacts,
        [`resume.${n}`]: `${at}: ${what}; run ${resumed.runId} on ${resumed.target}, shaping: ${resumed.environment.shaping.note}`,
      },
    },
    variants,
    measurements,
    // A run made in waves keeps its wave notes (a FLAGGED comparison stays flagged): each
    // deployment counted in the wave the run planned it in (a resume brings it up in that wave's place).
    comparisons: earlier.waves && earlier.waves.planned > 1
      ? withWaveNotes(compareVariants(plan.baselineOf, plan.variants.map((v) => v.id), sampled, plan.cells), measurements, waveOfDeployment(plannedWaves(earlier.waves).map((deployments) => ({ deployments }))))
      : compareVariants(plan.baselineOf, plan.variants.map((v) => v.id), sampled, plan.cells),
    pairComparisons: comparePairs(sampled, plan.cells),
    teardown: resumed.teardown,
  };
}

/**
 * Moves the resumed cells' raw/ and samples/ entries into the run folder. A cell's earlier raw
 * folder is kept beside the new one as `<cell>.before-resume-N` (what a cut-off cell printed, what
 * a detached client collected before its hosts were cleaned away) unless `carried` has it: a
 * re-attached cell's new folder holds the earlier files already.
 */
function moveInto(from: string, runDir: string, keepEarlier?: { n: number; carried: ReadonlySet<string> }): void {
  for (const sub of ["raw", "samples"]) {
    const src = join(from, sub);
    if (!existsSync(src)) continue;
    mkdirSync(join(runDir, sub), { recursive: true });
    for (const entry of readdirSync(src)) {
      const target = join(runDir, sub, entry);
      if (existsSync(target)) {
        if (sub === "raw" && keepEarlier && !keepEarlier.carried.has(entry)) {
          // A number taken already (a resume whose results.json could not be written): never overwritten.
          let kept = `${target}.before-resume-${keepEarlier.n}`;
          for (let i = 2; existsSync(kept); i++) kept = `${target}.before-resume-${keepEarlier.n}-${i}`;
          renameSync(target, kept);
        } else rmSync(target, { recursive: true, force: true });
      }
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
  /** Re-run cells that failed for a reason of their own too (default: only those never measured or cut off). */
  retryFailed?: boolean;
  /** Provenance of the resume (git commit, CI run), kept under resume.N.* in the facts. */
  facts?: Record<string, string>;
  /** The clock the resume is dated by (tests pass their own). */
  now?: () => Date;
  /** `target` holds the hosts the run left up (TargetFactory.reattach): detached clients it started are collected, not started again. */
  reattached?: boolean;
}

export interface ResumeOutcome {
  results: Results;
  resumedCells: number;
  /** Where the merged results.json and the cells' files went (a rescue folder when the run folder refused them). */
  files: RunFiles;
}

/**
 * A resume that died (SIGKILL) left its measurements in RESUME_FOLDER: they are folded into the
 * run first — its finished cells, so a second resume neither measures them again nor loses them,
 * and the raw files of every cell it began (a detached client's detached.json and collected copy
 * among them, for a resume on its hosts to re-attach to), the run's earlier ones kept beside them.
 */
function salvage(runDir: string, plan: Plan, earlier: Results, log: (m: string) => void): Results {
  const work = join(runDir, RESUME_FOLDER);
  if (!existsSync(join(work, "results.json")) && !existsSync(join(work, "raw"))) return earlier;
  let dead: Results | undefined;
  try {
    dead = ResultsSchema.parse(JSON.parse(readFileSync(join(work, "results.json"), "utf8")));
  } catch {
    dead = undefined;
  }
  const ok = dead?.measurements.filter((m) => m.status === "ok") ?? [];
  const begun = existsSync(join(work, "raw")) ? readdirSync(join(work, "raw")).length : 0;
  if (!ok.length && !begun) return earlier;
  const n = resumesIn(earlier) + 1;
  moveInto(work, runDir, { n, carried: new Set() });
  log(`a resume of this run stopped before it finished: its ${ok.length} measured cell(s) are kept${begun ? `, and the raw files of the ${begun} cell(s) it began` : ""}`);
  const what = `a resume${dead ? ` (run ${dead.runId})` : ""} stopped before it finished; ${ok.length} cell(s) it measured are kept${begun ? `, and the raw files of the ${begun} cell(s) it began (the run's earlier ones as <cell>.before-resume-${n})` : ""}`;
  return {
    ...earlier,
    measurements: [...earlier.measurements.filter((m) => !ok.some((o) => o.cell === m.cell)), ...ok],
    environment: { ...earlier.environment, facts: { ...earlier.environment.facts, [`resume.${n}`]: `${dead?.startedAt ?? new Date().toISOString()}: ${what}` } },
  };
}

/** Runs what the run did not measure and writes the merged results.json. */
export async function resumeRun(options: ResumeOptions): Promise<ResumeOutcome> {
  const { runDir } = options;
  const log = (m: string) => options.progress.log(m);
  const read = readRunToResume(runDir);
  const { plan } = read;
  const earlier = salvage(runDir, plan, read.results, log);
  const cells = cellsToResume(plan, earlier, { retryFailed: Boolean(options.retryFailed) });
  if (!cells.length) {
    const failed = earlier.measurements.filter((m) => m.status === "failed").length;
    throw new ResumeError(
      `nothing to resume in ${runDir}: every one of its ${plan.cells.length} cells was measured${failed ? ` or failed for a reason of its own (${failed}; --retry-failed runs them again)` : ""} (status ${earlier.status})`,
    );
  }
  const sub = resumePlan(plan, cells);
  // A run made in waves: its own waves again (hosts re-attached to are up already: no wave to bring up).
  const waves = options.reattached ? undefined : resumeWaves(sub, earlier.waves, runDir);
  const work = join(runDir, RESUME_FOLDER);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  // Detached clients the dead runner started: on its own hosts they are collected, not started again.
  const detached = new Map<string, DetachedState>();
  if (options.reattached) {
    for (const c of cells) {
      const state = readDetachedState(join(runDir, "raw", cellSlug(c.id)));
      if (state?.cell === c.id) detached.set(c.id, state);
    }
  }
  log(
    `resuming run ${earlier.runId}: ${cells.length} of ${plan.cells.length} cells to measure, ${options.reattached ? "on the hosts it left up" : "on hosts brought up again"}` +
      (waves ? `, in the run's own wave${waves.runWaves.length === 1 ? "" : "s"} ${waves.runWaves.join(", ")} of ${earlier.waves!.planned}${waves.runWaves.length > 1 ? " (one after another, as the run was sized: each torn down before the next)" : ""}` : "") +
      (options.reattached && earlier.waves && earlier.waves.planned > 1 ? ` (the run went in ${earlier.waves.planned} waves; the hosts re-attached to are all up already, so none is brought up)` : "") +
      (detached.size ? `; ${detached.size} detached client(s) it started are collected where it stopped` : ""),
  );
  const workFiles = new RunFiles(work, { runId: options.resumeRunId, warn: log });
  const resumed = await runExperiment({
    source: earlier.experiment.source,
    plan: sub,
    target: options.target,
    runId: options.resumeRunId,
    runDir: work,
    progress: options.progress,
    signal: options.signal,
    ...(options.connect ? { connect: options.connect } : {}),
    ...(options.facts ? { facts: options.facts } : {}),
    files: workFiles,
    ...(detached.size ? { reattach: { cells: detached, earlierRunDir: runDir } } : {}),
    ...(waves ? { waves: waves.plan } : {}),
  });
  const n = resumesIn(earlier) + 1;
  moveInto(work, runDir, { n, carried: new Set([...detached.keys()].map(cellSlug)) });
  const files = new RunFiles(runDir, { runId: earlier.runId, warn: log });
  const samplesFiles = new Map<string, string>();
  for (const m of [...earlier.measurements, ...resumed.measurements]) if (m.samplesFile) samplesFiles.set(m.cell, m.samplesFile);
  const samplesOf = (cell: string) => {
    const rel = samplesFiles.get(cell);
    // In the run folder, or in a rescue folder the run (or the resume) had to use.
    const path = rel ? (files.locate(rel) ?? workFiles.locate(rel)) : undefined;
    return path && existsSync(path) && statSync(path).isFile() ? readFileSync(path, "utf8").split("\n").filter(Boolean).map(Number) : [];
  };
  const merged = mergeResumed(plan, earlier, resumed, samplesOf, (options.now?.() ?? new Date()).toISOString(), {
    sameHosts: Boolean(options.reattached),
    reattachedCells: resumed.measurements.filter((m) => detached.has(m.cell) && m.status === "ok").length,
    ...(waves ? { inWaves: waves.runWaves } : {}),
  });
  files.writeResults(merged, true);
  rmSync(work, { recursive: true, force: true });
  return { results: merged, resumedCells: cells.length, files };
}
