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
import { copyFileSync, existsSync, readdirSync, readFileSync, renameSync, rmSync, mkdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { z } from "zod";
import type { Cell, Plan } from "../plan/types.ts";
import { PlanSchema } from "../plan/types.ts";
import { comparePairs, compareVariants, type SampledMeasurement } from "../results/comparisons.ts";
import { waveOfDeployment, type WavePlan } from "../plan/waves.ts";
import { mergeTeardown, withWaveNotes, type WavesRecord } from "../results/waveRecords.ts";
import { ResultsSchema, type AttemptTiming, type Measurement, type Results, type RunTiming, type TeardownReport } from "../results/schema.ts";
import { describeFsError } from "../results/fsErrors.ts";
import { writeResults } from "../results/writeResults.ts";
import type { Target } from "../targets/target.ts";
import type { TargetFactory, TargetOptions } from "../targets/registry.ts";
import type { Connect } from "./connections.ts";
import type { Progress } from "./progress.ts";
import { NO_SHAPING, runExperiment, runStatus } from "./runExperiment.ts";
import { findRescueFolders, RunFiles } from "../results/runFiles.ts";
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

const secondsBetween = (from: string, to: string) => Math.max(0, (Date.parse(to) - Date.parse(from)) / 1000) || 0;
const okCells = (measurements: readonly Measurement[]) => measurements.filter((m) => m.status === "ok");
const measuredSeconds = (measurements: readonly Measurement[]) => measurements.reduce((s, m) => s + (m.timing?.measurementSeconds ?? 0), 0);

/**
 * The attempts a run's results account for: those recorded (a run resumed before), else the run
 * itself — with its timing when it wrote one; killed (status still running), with what its last
 * results.json shows: its start to that write, and the cells it had measured.
 */
export function attemptsOf(results: Results): AttemptTiming[] {
  const t = results.timing;
  if (t?.attempts) return t.attempts.map((a) => ({ ...a }));
  const ok = okCells(results.measurements);
  const base = { attempt: "run", runId: results.runId, startedAt: results.startedAt, endedAt: results.finishedAt, cellsMeasured: ok.length };
  if (t) return [{ ...base, finished: true, totalSeconds: t.totalSeconds, measurementSeconds: t.measurementSeconds, bringUpSeconds: t.bringUpSeconds, cellsSeconds: t.cellsSeconds, teardownSeconds: t.teardownSeconds }];
  // No timing: killed before its end (or made by a latlab that did not record it).
  return [{ ...base, finished: results.status !== "running", totalSeconds: secondsBetween(results.startedAt, results.finishedAt), measurementSeconds: measuredSeconds(ok) }];
}

/**
 * A run's timing over all its attempts: every second summed (bring-up, cells and teardown over
 * the attempts that recorded theirs), each deployment's seconds summed over the timings that
 * name it, and the attempts themselves. Never the first attempt's alone.
 */
export function timingOver(attempts: readonly AttemptTiming[], timings: readonly (RunTiming | undefined)[]): RunTiming {
  const sum = (of: (a: AttemptTiming) => number | undefined) => attempts.reduce((s, a) => s + (of(a) ?? 0), 0);
  const totalSeconds = sum((a) => a.totalSeconds);
  const measurementSeconds = sum((a) => a.measurementSeconds);
  const deployments = new Map<string, { readySeconds: number; cellsSeconds: number }>();
  for (const t of timings) {
    for (const d of t?.deployments ?? []) {
      const c = deployments.get(d.deployment) ?? { readySeconds: 0, cellsSeconds: 0 };
      deployments.set(d.deployment, { readySeconds: c.readySeconds + d.readySeconds, cellsSeconds: c.cellsSeconds + d.cellsSeconds });
    }
  }
  const concurrent = timings.map((t) => t?.concurrentDeployments).filter((c): c is boolean => c !== undefined).at(-1);
  return {
    bringUpSeconds: sum((a) => a.bringUpSeconds),
    cellsSeconds: sum((a) => a.cellsSeconds),
    teardownSeconds: sum((a) => a.teardownSeconds),
    totalSeconds,
    measurementSeconds,
    ...(measurementSeconds > 0 ? { overhead: totalSeconds / measurementSeconds } : {}),
    ...(concurrent !== undefined ? { concurrentDeployments: concurrent } : {}),
    ...(deployments.size ? { deployments: [...deployments].map(([deployment, c]) => ({ deployment, ...c })) } : {}),
    attempts: [...attempts],
  };
}

/** The comparisons over `measurements`, with the run's wave notes when it went in waves. */
function comparisonsOver(plan: Plan, waves: WavesRecord | undefined, measurements: Measurement[], sampled: SampledMeasurement[]): Results["comparisons"] {
  const comparisons = compareVariants(plan.baselineOf, plan.variants.map((v) => v.id), sampled, plan.cells);
  // A run made in waves keeps its wave notes (a FLAGGED comparison stays flagged): each
  // deployment counted in the wave the run planned it in (a resume brings it up in that wave's place).
  return waves && waves.planned > 1 ? withWaveNotes(comparisons, measurements, waveOfDeployment(plannedWaves(waves).map((deployments) => ({ deployments })))) : comparisons;
}

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
    comparisons: comparisonsOver(plan, earlier.waves, measurements, sampled),
    pairComparisons: comparePairs(sampled, plan.cells),
    teardown: resumed.teardown,
    // Every attempt's time, this one's added: not the first attempt's alone.
    timing: timingOver(
      [
        ...attemptsOf(earlier),
        {
          attempt: `resume ${n}`,
          runId: resumed.runId,
          startedAt: resumed.startedAt,
          endedAt: resumed.finishedAt,
          finished: true,
          cellsMeasured: measuredNow,
          totalSeconds: resumed.timing?.totalSeconds ?? secondsBetween(resumed.startedAt, resumed.finishedAt),
          measurementSeconds: resumed.timing?.measurementSeconds ?? measuredSeconds(okCells(resumed.measurements)),
          ...(resumed.timing ? { bringUpSeconds: resumed.timing.bringUpSeconds, cellsSeconds: resumed.timing.cellsSeconds, teardownSeconds: resumed.timing.teardownSeconds } : {}),
        },
      ],
      [earlier.timing, resumed.timing],
    ),
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
  /**
   * Where the cells are measured; with `reattached`, the hosts the run left up (torn down at the
   * end). Null only when the caller found nothing to measure (see {@link pendingWork}): a run is
   * then finished without any host.
   */
  target: Target | null;
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
  /** Where the run's rescue folders may be (RunFiles' rescueRoots; default: where RunFiles puts them). */
  rescueRoots?: readonly string[];
  /**
   * Finishing with no hosts re-attached (see {@link hostsLeftBy}): removes what is left of the run
   * (its teardown stopped half-way) — the finish's teardown report. Absent: nothing to remove.
   */
  removeLeftovers?: () => Promise<TeardownReport>;
}

/** What a resume goes on with of what the run left up: its hosts re-attached, or a way to remove what is left of them. */
export interface HostsLeft {
  reattached: Target | null;
  removeLeftovers?: () => Promise<TeardownReport>;
}

/**
 * The hosts the run (or a dead resume of it) left up, through its target: re-attached when they
 * are whole (the same hosts; detached clients collected). Finishing a run (every cell measured)
 * whose hosts cannot be re-attached to — killed in the middle of its teardown, some of them gone
 * — needs none of them: what is left is removed instead (TargetFactory.cleanupRun, only the run's
 * own), so one resume finishes it. A target without cleanupRun says what to run first; cells
 * still to measure never lose hosts silently (a detached client's data goes with them): the
 * target's error stands.
 */
export async function hostsLeftBy(
  factory: Pick<TargetFactory, "reattach" | "cleanupRun">,
  run: { runId: string; runDir: string; ref: string; action: PendingWork["action"] },
  plan: Plan,
  options: TargetOptions,
): Promise<HostsLeft> {
  if (!factory.reattach) return { reattached: null };
  const removeLeftovers = run.action === "finish" && factory.cleanupRun ? () => factory.cleanupRun!(run.runId, run.runDir, { log: options.log }) : undefined;
  try {
    const reattached = await factory.reattach(run.runId, run.runDir, plan, options);
    // Nothing whole is up: whatever the run still has (a stale record, a key folder) goes too.
    return reattached ? { reattached } : { reattached: null, ...(removeLeftovers ? { removeLeftovers } : {}) };
  } catch (error) {
    const why = (error as Error).message;
    if (run.action !== "finish") throw error;
    if (!removeLeftovers) {
      throw new Error(
        `cannot finish run ${run.runId} yet (every cell was measured, but it stopped before its results were final, in its teardown): ${why} (after that, \`latlab resume ${run.ref}\` finishes the run: nothing is measured again)`,
      );
    }
    // The target's advice (clean up, then resume) is what happens next, in this resume.
    options.log(`${why.split(/ `latlab cleanup`/)[0]!.replace(/\.$/, "")}; every cell was measured, so nothing is needed of them: what is left of run ${run.runId}'s hosts is removed (only its own)`);
    return { reattached: null, removeLeftovers };
  }
}

export interface ResumeOutcome {
  results: Results;
  resumedCells: number;
  /** Where the merged results.json and the cells' files went (a rescue folder when the run folder refused them). */
  files: RunFiles;
}

/** What a dead resume left in RESUME_FOLDER: its results.json (if readable), its measured cells, how many cells it began. */
function deadResume(runDir: string): { dead: Results | undefined; ok: Measurement[]; begun: number } {
  const work = join(runDir, RESUME_FOLDER);
  if (!existsSync(join(work, "results.json")) && !existsSync(join(work, "raw"))) return { dead: undefined, ok: [], begun: 0 };
  let dead: Results | undefined;
  try {
    dead = ResultsSchema.parse(JSON.parse(readFileSync(join(work, "results.json"), "utf8")));
  } catch {
    dead = undefined;
  }
  const begun = existsSync(join(work, "raw")) ? readdirSync(join(work, "raw")).length : 0;
  return { dead, ok: okCells(dead?.measurements ?? []), begun };
}

/**
 * A resume that died (SIGKILL) left its measurements in RESUME_FOLDER: they are folded into the
 * run first — its finished cells, so a second resume neither measures them again nor loses them,
 * and the raw files of every cell it began (a detached client's detached.json and collected copy
 * among them, for a resume on its hosts to re-attach to), the run's earlier ones kept beside them.
 * Its time is one attempt of the run's (killed: up to its last results.json).
 */
function salvage(runDir: string, earlier: Results, log: (m: string) => void): Results {
  const work = join(runDir, RESUME_FOLDER);
  const { dead, ok, begun } = deadResume(runDir);
  if (!ok.length && !begun) return earlier;
  const n = resumesIn(earlier) + 1;
  moveInto(work, runDir, { n, carried: new Set() });
  log(`a resume of this run stopped before it finished: its ${ok.length} measured cell(s) are kept${begun ? `, and the raw files of the ${begun} cell(s) it began` : ""}`);
  const what = `a resume${dead ? ` (run ${dead.runId})` : ""} stopped before it finished; ${ok.length} cell(s) it measured are kept${begun ? `, and the raw files of the ${begun} cell(s) it began (the run's earlier ones as <cell>.before-resume-${n})` : ""}`;
  const attempts = [
    ...attemptsOf(earlier),
    ...(dead
      ? [{ attempt: `resume ${n}`, runId: dead.runId, startedAt: dead.startedAt, endedAt: dead.finishedAt, finished: false, cellsMeasured: ok.length, totalSeconds: secondsBetween(dead.startedAt, dead.finishedAt), measurementSeconds: measuredSeconds(ok) }]
      : []),
  ];
  return {
    ...earlier,
    measurements: [...earlier.measurements.filter((m) => !ok.some((o) => o.cell === m.cell)), ...ok],
    environment: { ...earlier.environment, facts: { ...earlier.environment.facts, [`resume.${n}`]: `${dead?.startedAt ?? new Date().toISOString()}: ${what}` } },
    timing: timingOver(attempts, [earlier.timing]),
  };
}

/**
 * Of two results.json of one run (its folder's and a rescue folder's), the one to go on from: a
 * final one over one still "running", else the later written; two "running" ones are merged
 * cell by cell (the later's measurement of a cell over the earlier's), in the plan's order.
 */
function newerResults(plan: Plan, a: Results, b: Results): Results {
  const rank = (r: Results) => [r.status === "running" ? 0 : 1, Date.parse(r.finishedAt) || 0] as const;
  const [ra, rb] = [rank(a), rank(b)];
  const [older, newer] = ra[0] < rb[0] || (ra[0] === rb[0] && ra[1] <= rb[1]) ? [a, b] : [b, a];
  if (newer.status !== "running") return newer;
  const byCell = new Map(older.measurements.map((m) => [m.cell, m]));
  for (const m of newer.measurements) byCell.set(m.cell, m);
  return { ...newer, measurements: plan.cells.flatMap((c) => byCell.get(c.id) ?? []) };
}

/** The files under `dir`, relative to it. */
const filesUnder = (dir: string): string[] => (readdirSync(dir, { recursive: true }) as string[]).filter((rel) => statSync(join(dir, rel)).isFile()).sort();

/** The run's rescue folders, and the results.json they hold merged with the run folder's (in memory: nothing moved). */
function readRescued(runDir: string, plan: Plan, earlier: Results, roots: readonly string[] | undefined): { folders: string[]; results: Results } {
  const folders = findRescueFolders(earlier.runId, roots).filter((f) => resolve(f) !== resolve(runDir));
  let results = earlier;
  for (const rescue of folders) {
    const file = join(rescue, "results.json");
    if (!existsSync(file)) continue;
    let theirs: Results;
    try {
      theirs = ResultsSchema.parse(JSON.parse(readFileSync(file, "utf8")));
    } catch (error) {
      throw new ResumeError(`cannot resume ${runDir}: its rescue folder ${rescue} holds a results.json latlab cannot read (${(error as Error).message.split("\n")[0]}); move that folder away (its cells are then measured again) and resume`);
    }
    if (theirs.runId !== earlier.runId) throw new ResumeError(`cannot resume ${runDir}: ${file} is run ${theirs.runId}'s, not run ${earlier.runId}'s; move that folder away and resume`);
    results = newerResults(plan, results, theirs);
  }
  return { folders, results };
}

/**
 * Brings what the run could not write in its folder (a full disk, a folder gone read-only) back
 * from its rescue folders (RunFiles): every file (the later written where both folders have one),
 * and results.json merged with the folder's (newerResults), written into the run folder; then the
 * rescue folders are removed. So a resume measures only what no folder holds. Throws a
 * ResumeError naming the path and the cause when the run folder still cannot take them; nothing
 * is removed then.
 */
function bringRescueHome(runDir: string, plan: Plan, earlier: Results, roots: readonly string[] | undefined, at: string, log: (m: string) => void): { results: Results; folders: string[] } {
  const { folders, results: merged } = readRescued(runDir, plan, earlier, roots);
  if (!folders.length) return { results: earlier, folders };
  let results = merged;
  let copied = 0;
  for (const rescue of folders) {
    for (const rel of filesUnder(rescue)) {
      if (rel === "results.json" || rel === "results.json.tmp") continue;
      const from = join(rescue, rel);
      const to = join(runDir, rel);
      // The run folder's copy was written after the rescue folder's (the folder took files again).
      const here = statSync(to, { throwIfNoEntry: false });
      if (here?.isFile() && here.mtimeMs > statSync(from).mtimeMs) continue;
      try {
        mkdirSync(dirname(to), { recursive: true });
        // A copy, not a rename: the rescue folder is on another file system as a rule.
        copyFileSync(from, to);
      } catch (error) {
        throw new ResumeError(`cannot resume ${runDir}: cannot bring ${from} back to ${to}: ${describeFsError(error)}; the rescue folder ${rescue} is kept as it is`);
      }
      copied++;
    }
  }
  // Cells' warnings that a file is in the rescue folder: it is back where results.json says.
  const home = (w: string) => {
    const m = /^(\S+) is in (\S+): the results folder could not take it$/.exec(w);
    return m && folders.some((f) => m[2]!.startsWith(`${f}/`)) ? `${m[1]} was kept in ${m[2]} (the results folder could not take it), brought back by latlab resume` : w;
  };
  results = {
    ...results,
    measurements: results.measurements.map((m) => ({ ...m, warnings: m.warnings.map(home) })),
    environment: {
      ...results.environment,
      facts: { ...results.environment.facts, rescued: `${at}: ${copied} file(s)${folders.some((f) => existsSync(join(f, "results.json"))) ? " and results.json" : ""} brought back from the rescue folder ${folders.join(", ")} (the results folder could not take them when they were written)` },
    },
  };
  try {
    writeResults(runDir, results);
  } catch (error) {
    throw new ResumeError(`cannot resume ${runDir}: ${(error as Error).message}; the rescue folder ${folders.join(", ")} is kept as it is`);
  }
  for (const f of folders) rmSync(f, { recursive: true, force: true });
  log(`brought back ${copied} file(s) and the cells they hold from the rescue folder ${folders.join(", ")} into ${runDir}`);
  return { results, folders };
}

/** What `latlab resume` has to do for a run, found without changing anything. */
export interface PendingWork {
  plan: Plan;
  /** The run's results as a resume will go on from them (its rescue folders' and a dead resume's cells in). */
  results: Results;
  /** The cells to measure. */
  cells: Cell[];
  /**
   * "measure": cells to measure. "finish": every cell measured, but the run (or a resume of it)
   * stopped before its results were final — in its teardown, say: the teardown is checked, the
   * comparisons, status and report made. "bring-home": the final results are in a rescue folder:
   * brought back. "nothing": the results are final.
   */
  action: "measure" | "finish" | "bring-home" | "nothing";
}

/** See {@link PendingWork}. */
export function pendingWork(runDir: string, options: { retryFailed?: boolean; rescueRoots?: readonly string[] } = {}): PendingWork {
  const { plan, results: inFolder } = readRunToResume(runDir);
  const rescued = readRescued(runDir, plan, inFolder, options.rescueRoots);
  const { dead, ok, begun } = deadResume(runDir);
  const results = ok.length ? { ...rescued.results, measurements: [...rescued.results.measurements.filter((m) => !ok.some((o) => o.cell === m.cell)), ...ok] } : rescued.results;
  const cells = cellsToResume(plan, results, { retryFailed: Boolean(options.retryFailed) });
  const action = cells.length ? "measure" : results.status === "running" || ok.length || begun || dead ? "finish" : rescued.folders.length ? "bring-home" : "nothing";
  return { plan, results, cells, action };
}

/**
 * A run whose every cell was measured but whose results are not final (killed in its teardown,
 * or a resume of it killed): finished without measuring — what it left up torn down (`target`,
 * the hosts re-attached to; null: the caller found nothing of it left up), then results.json as
 * the run's own end writes it: status from the cells, comparisons, the teardown, every attempt's time.
 */
async function finishRun(runDir: string, plan: Plan, earlier: Results, options: ResumeOptions, log: (m: string) => void): Promise<ResumeOutcome> {
  const startedAt = (options.now?.() ?? new Date()).toISOString();
  const clock = performance.now();
  const n = resumesIn(earlier) + 1;
  const target = options.reattached ? options.target : null;
  log(`run ${earlier.runId}: every one of its ${plan.cells.length} cells was measured, but it stopped before its results were final: finishing it without measuring anything${target ? ", tearing down what it left up" : options.removeLeftovers ? ", removing whatever is left of its hosts" : ""}`);
  let report: TeardownReport = { status: "ok", errors: [], removed: [] };
  const tearDown = target ? () => target.down() : options.removeLeftovers;
  if (tearDown) {
    try {
      report = await tearDown();
    } catch (error) {
      report = { status: "failed", errors: [`teardown threw: ${(error as Error).message}`], removed: [] };
    }
    if (report.status === "failed") log(`teardown FAILED:\n  ${report.errors.join("\n  ")}`);
    else if (!target && report.removed.length) log(`removed what was left of run ${earlier.runId}'s hosts: ${report.removed.length} item(s)`);
  }
  const teardownSeconds = (performance.now() - clock) / 1000;
  const teardown = earlier.teardown.status === "not-started" ? report : mergeTeardown(earlier.teardown, report, `resume ${n}: `);
  const files = new RunFiles(runDir, { runId: earlier.runId, warn: log, ...(options.rescueRoots ? { rescueRoots: options.rescueRoots } : {}) });
  const byCell = new Map(earlier.measurements.map((m) => [m.cell, m]));
  const measurements = plan.cells.flatMap((c) => byCell.get(c.id) ?? []);
  const samplesOf = (m: Measurement) => {
    const path = m.samplesFile ? files.locate(m.samplesFile) : undefined;
    return path ? readFileSync(path, "utf8").split("\n").filter(Boolean).map(Number) : [];
  };
  const sampled: SampledMeasurement[] = measurements.map((measurement) => ({ measurement, samples: measurement.status === "ok" ? samplesOf(measurement) : [] }));
  const ok = okCells(measurements).length;
  const status = runStatus({ aborted: false, ok, cells: plan.cells.length });
  const error = status === "failed" ? `no cell was measured; first failure: ${measurements.find((m) => m.error)?.error ?? "unknown"}` : undefined;
  const finishedAt = (options.now?.() ?? new Date()).toISOString();
  const torn = target
    ? `the hosts it left up torn down (${report.status}${report.removed.length ? `, ${report.removed.length} item(s) removed` : ""})`
    : report.status === "failed"
      ? `what was left of its hosts (its teardown stopped half-way) could not all be removed (${report.removed.length} item(s) removed; see teardown.errors)`
      : report.removed.length
        ? `what was left of its hosts (its teardown stopped half-way, they could not be re-attached to) removed (${report.removed.length} item(s), listed in teardown.removed)`
        : "nothing of its hosts was left up (checked before the resume)";
  const { error: _inProgress, ...rest } = earlier;
  const results: Results = {
    ...rest,
    finishedAt,
    status,
    ...(error ? { error } : {}),
    environment: {
      ...earlier.environment,
      facts: {
        ...earlier.environment.facts,
        ...Object.fromEntries(Object.entries(options.facts ?? {}).map(([k, v]) => [`resume.${n}.${k}`, v])),
        [`resume.${n}`]: `${startedAt}: every cell had been measured, but the run stopped before its results were final (in its teardown, or a resume of it was stopped); finished without measuring anything: ${torn}; status, comparisons and report made from its ${measurements.length} cells; run ${options.resumeRunId}`,
      },
    },
    measurements,
    comparisons: comparisonsOver(plan, earlier.waves, measurements, sampled),
    pairComparisons: comparePairs(sampled, plan.cells),
    teardown,
    timing: timingOver(
      [
        ...attemptsOf(earlier),
        { attempt: `resume ${n}`, runId: options.resumeRunId, startedAt, endedAt: finishedAt, finished: true, cellsMeasured: 0, totalSeconds: secondsBetween(startedAt, finishedAt) || teardownSeconds, measurementSeconds: 0, bringUpSeconds: 0, cellsSeconds: 0, teardownSeconds },
      ],
      [earlier.timing],
    ),
  };
  files.writeResults(results, true);
  rmSync(join(runDir, RESUME_FOLDER), { recursive: true, force: true });
  return { results, resumedCells: 0, files };
}

/**
 * Runs what the run did not measure and writes the merged results.json. First brings back what
 * its rescue folders hold and what a dead resume measured: only what no folder holds is measured.
 * With nothing to measure, a run whose results are not final is finished (finishRun); results
 * brought back final are the run's; final results, nothing else, are "nothing to resume".
 */
export async function resumeRun(options: ResumeOptions): Promise<ResumeOutcome> {
  const { runDir } = options;
  const log = (m: string) => options.progress.log(m);
  const read = readRunToResume(runDir);
  const { plan } = read;
  const home = bringRescueHome(runDir, plan, read.results, options.rescueRoots, (options.now?.() ?? new Date()).toISOString(), log);
  const earlier = salvage(runDir, home.results, log);
  const cells = cellsToResume(plan, earlier, { retryFailed: Boolean(options.retryFailed) });
  if (!cells.length) {
    if (earlier.status === "running" || earlier !== home.results) return finishRun(runDir, plan, earlier, options, log);
    if (home.folders.length) {
      // The final results were in a rescue folder: now in the run folder, the run's as they were.
      const files = new RunFiles(runDir, { runId: earlier.runId, warn: log });
      files.resultsFile = join(runDir, "results.json");
      return { results: earlier, resumedCells: 0, files };
    }
    const failed = earlier.measurements.filter((m) => m.status === "failed").length;
    throw new ResumeError(
      `nothing to resume in ${runDir}: every one of its ${plan.cells.length} cells was measured${failed ? ` or failed for a reason of its own (${failed}; --retry-failed runs them again)` : ""} (status ${earlier.status})`,
    );
  }
  if (!options.target) throw new ResumeError(`cannot resume ${runDir}: ${cells.length} cell(s) to measure, and no target to measure them on`);
  const target = options.target;
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
    target,
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
