import { getMaxListeners, setMaxListeners } from "node:events";
import { release } from "node:os";
import { join } from "node:path";
import type { NodeSSH } from "node-ssh";
import type { Experiment } from "../dsl/experiment.ts";
import type { Cell, Plan } from "../plan/types.ts";
import { comparePairs, compareVariants, type SampledMeasurement } from "../results/comparisons.ts";
import { hostRecords } from "../results/hostRecords.ts";
import { RunFiles } from "../results/runFiles.ts";
import type { Results, ShapingStatus, TeardownReport } from "../results/schema.ts";
import type { Environment, HandOver, HostEndpoint, Target } from "../targets/target.ts";
import { runOrder, type RunStep } from "../plan/schedule.ts";
import { waveOfDeployment, wavePlan, type WavePlan } from "../plan/waves.ts";
import { mergeTeardown, withWaveNotes, type WaveRun } from "../results/waveRecords.ts";
import { findTool } from "../tools/registry.ts";
import { BASE_PORT, cellSlug, cellWorkDir, failedCell, runCell } from "./cellRunner.ts";
import type { DetachedState } from "./detachedState.ts";
import type { Progress } from "./progress.ts";
import { serverExit, startServer, stopServer, stopServers, type RunningServer } from "./servers.ts";
import { ensureAssets } from "./assets.ts";
import { connectHost, execWithTimeout, lostDuring, shellQuote } from "./ssh.ts";
import { DETACHED_RECONNECT_DELAYS_MS, HostConnections, type Connect } from "./connections.ts";
import { LATLAB_VERSION } from "../version.ts";
import { planHash } from "../plan/planHash.ts";
import { eventOfFacts } from "../results/runEvent.ts";
import { formatMinutes, RunStop, stopOf } from "./runStop.ts";

export interface RunOptions {
  /** @deprecated Unused (the plan carries what the run needs); accepted so callers still compile. */
  experiment?: Experiment;
  source: string;
  plan: Plan;
  target: Target;
  runId: string;
  runDir: string;
  progress: Progress;
  /**
   * Aborted on Ctrl-C / SIGTERM, or at the run's --time-limit: in-flight work stops, teardown
   * still runs. Aborted with a RunStop (runStop.ts), results.json says which (`stopped`); a
   * time limit makes the run partial (what was measured is kept), not interrupted.
   */
  signal: AbortSignal;
  /**
   * Aborted when the run must end within seconds (a second, different signal during teardown:
   * GitHub's runner sends SIGTERM 7.5 s after SIGINT and SIGKILL 2.5 s after that). With a target
   * that has handOver(), the teardown in flight is given up: the target starts removing what the
   * run holds without waiting, results.json is written at once (teardown.handedOver says what was
   * started and how to finish) and runExperiment returns. Without handOver(), teardown goes on.
   */
  handOver?: AbortSignal;
  /** How hosts are reached; connectHost unless a test passes a fake. */
  connect?: Connect;
  /** Pauses before each attempt of a detached client's collection to reconnect (DETACHED_RECONNECT_DELAYS_MS unless a test passes others). */
  detachedReconnectDelaysMs?: readonly number[];
  /** Pauses before each attempt to re-establish a dropped connection (RECONNECT_DELAYS_MS unless a test passes others). */
  reconnectDelaysMs?: readonly number[];
  /** Facts about where the run was made from (git commit, CI run), recorded beside the target's. */
  facts?: Record<string, string>;
  /**
   * Where the run's files go: runDir, with a rescue folder when runDir fails (a full disk…). The
   * caller reads from it where results.json went; made from runDir when absent.
   */
  files?: RunFiles;
  /**
   * `latlab resume` on the hosts the run left up: cells whose detached client the dead runner
   * started are collected where that runner stopped (their raw files in earlierRunDir), their
   * servers kept running, instead of being measured again.
   */
  reattach?: { cells: ReadonlyMap<string, DetachedState>; earlierRunDir: string };
  /**
   * "deployments" (the default): on a target whose deployments are separate machines
   * (Target.concurrentDeployments), each deployment's cells run in a chain of their own, the
   * chains at the same time; "serial" (`--serial`): one step at a time in runOrder's order, as on
   * targets without the capability — for an experiment whose deployments must not measure over
   * each other.
   */
  concurrency?: "deployments" | "serial";
  /**
   * Work the caller needs after the run (loading the report's chart renderer, say), done while
   * the hosts come up — when nothing measures — and finished before the first cell starts, so
   * that it never runs beside a measurement. Its failure is left for the caller to meet again.
   */
  whileBringingUp?: () => Promise<unknown>;
  /**
   * The deployments in waves (plan/waves.ts), when the quota or --max-vcpus cannot hold them at
   * once: each wave is brought up, measured and torn down before the next (the target sees a plan
   * of that wave's deployments and cells, under the run id `<runId>-w<n>`). A teardown that fails
   * stops the run before the next wave. Absent or one wave: every deployment at once, as ever.
   * A function is called once the run has started (plan.json written): reading a subscription's
   * free quota takes a moment, and what it throws (a deployment that cannot fit even alone) fails
   * the run before anything is brought up, with results.json saying why.
   */
  waves?: WavePlan | (() => Promise<WavePlan | undefined>);
}

/** What a deployment's session needs besides the run's options: where files go, and a call after each finished cell. */
type SessionOptions = RunOptions & { files: RunFiles; cellFinished: () => void };

/**
 * While the run goes on, results.json is rewritten after every finished cell — up to 200 of
 * them; past that after every n/200-th, so that a run of thousands of cells does not spend its
 * time rewriting a file that grows with it (at most ~200 rewrites per doubling of cells).
 */
export const checkpointDue = (finished: number, lastWritten: number) => finished - lastWritten >= Math.max(1, Math.floor(finished / 200));

/**
 * How long a target's handOver() may take: GitHub's runner sends SIGKILL 2.5 s after its SIGTERM
 * (actions/runner src/Runner.Sdk/ProcessInvoker.cs @ 258d6c857db3519913f7deb6004b60172f8043ae,
 * lines 32-33: `_sigintTimeout` 7500 ms, `_sigtermTimeout` 2500 ms; CancelAndKillProcessTree,
 * lines 443-465), and results.json, the run state and the exit must fit in what is left.
 */
export const HAND_OVER_BUDGET_MS = 1500;

/** The target's handOver(), held to its budget (plus a little): a target that does not answer in time is said to, not waited for. */
async function handOverWithin(target: Target, withinMs: number, signal: NodeJS.Signals | undefined): Promise<HandOver> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<HandOver>((resolve) => {
    timer = setTimeout(() => resolve({ started: [], errors: [`${target.name}: the hand-over did not answer within ${withinMs + 250} ms; what it started, if anything, is unknown`], finishWith: [] }), withinMs + 250);
  });
  try {
    return await Promise.race([
      target.handOver!({ withinMs, ...(signal ? { signal } : {}) }).catch((e: unknown): HandOver => ({ started: [], errors: [`${target.name}: the hand-over failed: ${(e as Error).message}`], finishWith: [] })),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The shaping a run reports when no host came up (its target said nothing). */
export const NO_SHAPING: ShapingStatus = { latency: "not-applicable", bandwidth: "not-applicable", note: "no hosts were brought up" };

const cellLabel = (c: Cell) => `${c.variant}${c.replica ? `#r${c.replica}` : ""} ${c.tool} ${c.from}->${c.to}${c.repetition ? ` rep${c.repetition}` : ""}`;

/**
 * Brings the plan's hosts up on the target, runs every cell, and always tears down — on
 * success, on error and on interruption — then writes results.json with whatever was
 * measured. A failed cell is recorded and the others go on.
 *
 * results.json is written as cells finish (status "running", the finished cells, no
 * comparisons yet), so a crash keeps every finished cell. A file that cannot be written in
 * runDir goes to the rescue folder (RunFiles) and the run goes on; a results.json that can be
 * written nowhere is said and the results are still returned.
 */
export async function runExperiment(options: RunOptions): Promise<Results> {
  const { plan, target, runDir, progress, signal } = options;
  const files = options.files ?? new RunFiles(runDir, { runId: options.runId, warn: (m) => progress.log(m) });
  const startedAt = new Date().toISOString();
  const clock = { start: performance.now(), bringUp: 0, cells: 0, teardown: 0 };
  const concurrent = target.concurrentDeployments === true && options.concurrency !== "serial";
  /** Per deployment reached: seconds connecting until ready, seconds running its cells. */
  const deploymentClock = new Map<string, { readySeconds: number; cellsSeconds: number }>();
  const sampled: SampledMeasurement[] = [];
  const toolVersions: Record<string, string> = {};
  let environment: Environment | undefined;
  let runError: string | undefined;
  let teardown: TeardownReport = { status: "not-started", errors: [], removed: [] };
  let abortedBeforeTeardown = false;
  /** What stopped the run before its teardown (a signal, the time limit), when a RunStop did. */
  let stoppedBy: RunStop | undefined;
  /** Set once the final results.json is written: nothing writes over it after (a hand-over and the teardown it gave up race). */
  let sealed = false;
  let finalResults: Results | undefined;
  /** What makes this run comparable with others (planHash.ts), from the plan: the checkpoints' results.json hold only the cells finished so far. */
  const runPlanHash = planHash({ target: target.name, variants: plan.variants, cells: plan.cells });

  const resultsWith = (fields: Pick<Results, "status" | "error" | "measurements" | "comparisons" | "pairComparisons" | "teardown" | "timing">): Results => ({
    schemaVersion: 1,
    runId: options.runId,
    experiment: { name: plan.experiment.name, description: plan.experiment.description, source: options.source, ...(plan.experiment.seedSizes ? { seedSizes: plan.experiment.seedSizes } : {}) },
    target: target.name,
    planHash: runPlanHash,
    startedAt,
    finishedAt: new Date().toISOString(),
    status: fields.status,
    ...(fields.error ? { error: fields.error } : {}),
    environment: {
      latlabVersion: LATLAB_VERSION,
      node: process.version,
      kernel: release(),
      toolVersions: { ...toolVersions },
      shaping: environment?.shaping ?? NO_SHAPING,
      facts: { ...options.facts, ...environment?.facts },
      event: eventOfFacts(options.facts ?? {}),
    },
    baseline: plan.baseline,
    variants: plan.variants.map((v) => ({ id: v.id, axes: v.axes, baseline: plan.baselineOf[v.id]!, hosts: hostRecords(plan, v.id, environment?.hosts ?? []) })),
    measurements: fields.measurements,
    comparisons: fields.comparisons,
    pairComparisons: fields.pairComparisons,
    teardown: fields.teardown,
    ...(stoppedBy ? { stopped: stoppedBy.record() } : {}),
    ...(fields.timing ? { timing: fields.timing } : {}),
    // Declared below, read when results are written (at the first checkpoint, after them).
    ...(planned ? { waves: { limits: planned.limits.source, reasons: planned.reasons, planned: waves.length, plannedWaves: waves.map((w) => [...w.deployments]), runs: waveRuns.map((r) => ({ ...r, facts: { ...r.facts } })) } } : {}),
  });
  // results.json while the run goes on: a crash keeps every finished cell (see checkpointDue).
  let checkpointed = 0;
  const checkpoint = (force = false) => {
    if (sealed) return;
    if (!force && !checkpointDue(sampled.length, checkpointed)) return;
    checkpointed = sampled.length;
    const byCell = new Map(sampled.map((s) => [s.measurement.cell, s.measurement]));
    const measurements = plan.cells.flatMap((c) => byCell.get(c.id) ?? []);
    // Never fails the run: a storage failure is said by RunFiles, a validation bug at the end.
    try {
      files.writeResults(
        resultsWith({
          status: "running",
          error: `in progress: ${measurements.length} of ${plan.cells.length} cells finished when this was written; comparisons come at the end. A results.json still "running" after its run ended is what a run that stopped without finishing (a crash, kill -9, a power cut) kept.`,
          measurements,
          comparisons: [],
          pairComparisons: [],
          teardown,
        }),
      );
    } catch (error) {
      progress.log(`results.json not updated after cell ${sampled.length}: ${(error as Error).message.split("\n")[0]}`);
    }
  };
  const sessionOptions: SessionOptions = { ...options, files, cellFinished: checkpoint };

  // Waves: one (every deployment at once) unless the caller plans more (set in the try below).
  let waves: Pick<WavePlan["waves"][number], "deployments" | "variants" | "replicas">[] = [{ deployments: plan.deployments.map((d) => d.id), variants: plan.variants.map((v) => v.id), replicas: [] }];
  let planned: WavePlan | undefined;
  let inWaves = false;
  const waveRuns: WaveRun[] = [];
  const allHosts: HostEndpoint[] = [];
  /** The wave whose hosts are up (its down() not yet called); null before the first and between waves. */
  let waveUp: number | null = null;
  let waveStarted = false;
  /** When the down() in flight started (undefined when none is): a hand-over counts its time as teardown. */
  let downStartedAt: number | undefined;
  /** Tears down the wave that is up (or, before any wave, whatever the target holds: nothing). */
  const tearDownWave = async () => {
    const w = waveUp;
    waveUp = null;
    progress.log(inWaves && w !== null ? `wave ${w + 1} of ${waves.length}: tearing down…` : "tearing down…");
    let report: TeardownReport;
    const downStarted = performance.now();
    downStartedAt = downStarted;
    try {
      report = await target.down();
    } catch (error) {
      report = { status: "failed", errors: [`teardown threw: ${(error as Error).message}`], removed: [] };
    }
    downStartedAt = undefined;
    const seconds = (performance.now() - downStarted) / 1000;
    clock.teardown += seconds;
    teardown = mergeTeardown(teardown, report, inWaves && w !== null ? `wave ${w + 1}: ` : "");
    const record = w !== null ? waveRuns[w] : undefined;
    if (record) Object.assign(record, { teardownSeconds: seconds, teardown: report.status });
    if (report.status === "failed") progress.log(`teardown FAILED:\n  ${report.errors.join("\n  ")}`);
  };

  /**
   * The run's last word, however it ends (its teardown done, or handed over): the cells it did
   * not reach recorded as not run, the comparisons, results.json (written once: nothing after).
   */
  const finish = (): Results => {
    if (finalResults) return finalResults;
    const timeLimit = abortedBeforeTeardown && stoppedBy?.stop.by === "time-limit" ? stoppedBy.stop.minutes : undefined;
    // Cells never reached (error, interruption, the time limit) are recorded as failed: nothing is silently missing.
    const done = new Set(sampled.map((s) => s.measurement.cell));
    const notRun = plan.cells.filter((c) => !done.has(c.id));
    const reason =
      timeLimit !== undefined
        ? `not run: the run stopped at its time limit (--time-limit ${formatMinutes(timeLimit)}) before this cell ran`
        : abortedBeforeTeardown
          ? "interrupted before this cell ran"
          : runError
            ? "not run: the run failed before this cell ran (see the run's error)"
            : "not run";
    const waveOf = waveOfDeployment(waves);
    // A copy: a teardown given up by a hand-over may still be finishing cells behind this.
    const all = [...sampled, ...notRun.map((c) => failedCell(c, reason))];

    const ok = all.filter((s) => s.measurement.status === "ok").length;
    // A time limit is the run's own plan, not an interruption: what was measured makes it partial (exit 2).
    const status = runStatus({ aborted: abortedBeforeTeardown && timeLimit === undefined, runError, ok, cells: plan.cells.length });
    // A run that failed without throwing (every deployment unreachable) still says why. At the
    // time limit, what the stop made fail (an up() interrupted…) is said as the time limit's doing.
    const error =
      timeLimit !== undefined
        ? status === "failed" || runError
          ? `the run stopped at its time limit (--time-limit ${formatMinutes(timeLimit)})${status === "failed" ? " before any cell was measured" : ""}${runError ? `: ${runError}` : ""}`
          : undefined
        : (runError ?? (status === "failed" ? `no cell was measured; first failure: ${all.find((s) => s.measurement.error)?.measurement.error ?? "unknown"}` : undefined));
    const byCell = new Map(all.map((s) => [s.measurement.cell, s.measurement]));
    const measurementSeconds = all.reduce((sum, s) => sum + (s.measurement.timing?.measurementSeconds ?? 0), 0);
    const totalSeconds = (performance.now() - clock.start) / 1000;
    const results = resultsWith({
      timing: {
        bringUpSeconds: clock.bringUp,
        cellsSeconds: clock.cells,
        teardownSeconds: clock.teardown,
        totalSeconds,
        measurementSeconds,
        ...(measurementSeconds > 0 ? { overhead: totalSeconds / measurementSeconds } : {}),
        concurrentDeployments: concurrent,
        deployments: plan.deployments.flatMap((d) => {
          const c = deploymentClock.get(d.id);
          return c ? [{ deployment: d.id, ...c }] : [];
        }),
      },
      status,
      error,
      measurements: plan.cells.map((c) => byCell.get(c.id)!),
      comparisons: inWaves
        ? withWaveNotes(compareVariants(plan.baselineOf, plan.variants.map((v) => v.id), all, plan.cells), all.map((s) => s.measurement), waveOf)
        : compareVariants(plan.baselineOf, plan.variants.map((v) => v.id), all, plan.cells),
      pairComparisons: comparePairs(all, plan.cells),
      teardown,
    });
    // Where it went is files.resultsFile; one that could go nowhere was said (RunFiles), and the
    // results are still returned for the caller to print.
    sealed = true;
    finalResults = results;
    files.writeResults(results, true);
    return results;
  };

  /**
   * The run as it ends, or — once `handOver` is aborted — at once: the target starts removing
   * what the run holds without waiting (Target.handOver), the teardown in flight is given up, and
   * results.json says so (teardown.handedOver; status "failed": it did not finish here).
   */
  const untilHandedOver = (toEnd: Promise<Results>, handOver: AbortSignal): Promise<Results> =>
    new Promise<Results>((resolve, reject) => {
      let settled = false;
      const handOverNow = async () => {
        if (settled || sealed) return;
        stopAt();
        progress.stop();
        const signalName = handOver.reason instanceof RunStop && handOver.reason.stop.by === "signal" ? handOver.reason.stop.signal : undefined;
        progress.log(`${signalName ?? "hand-over"}: handing the teardown over to ${target.name}: starting the removal of everything the run holds, without waiting for it…`);
        const started = performance.now();
        const report = await handOverWithin(target, HAND_OVER_BUDGET_MS, signalName);
        if (settled || sealed) return;
        if (downStartedAt !== undefined) clock.teardown += (performance.now() - downStartedAt) / 1000;
        else clock.teardown += (performance.now() - started) / 1000;
        teardown = {
          status: "failed",
          errors: [
            ...teardown.errors,
            `teardown handed over${signalName ? ` on ${signalName}` : ""}: it did not finish in this process${report.started.length ? `; going on without it: ${report.started.join("; ")}` : "; nothing could be started"}${report.finishWith.length ? `; finish it with ${report.finishWith.map((c) => `\`${c}\``).join(" or ")}` : ""}`,
            ...report.errors,
          ],
          removed: [...teardown.removed],
          handedOver: { at: new Date().toISOString(), ...(signalName ? { signal: signalName } : {}), started: report.started, finishWith: report.finishWith },
        };
        settled = true;
        resolve(finish());
      };
      handOver.addEventListener("abort", () => void handOverNow().catch((e: unknown) => (settled ? undefined : ((settled = true), reject(e)))), { once: true });
      if (handOver.aborted) void handOverNow().catch((e: unknown) => (settled ? undefined : ((settled = true), reject(e))));
      toEnd.then(
        (results) => {
          if (settled) return;
          settled = true;
          resolve(results);
        },
        (error: unknown) => {
          if (settled) return;
          settled = true;
          reject(error);
        },
      );
    });

  /** What stopped the run, taken once, when it stops measuring: a signal during teardown changes nothing. */
  let measuringEnded = false;
  const stopAt = () => {
    if (measuringEnded) return;
    measuringEnded = true;
    abortedBeforeTeardown = signal.aborted;
    stoppedBy = stopOf(signal);
  };

  const toEnd = (async (): Promise<Results> => {
    try {
      // Inside the try: a plan.json that can be written nowhere fails the run before anything is brought up.
      files.write("plan.json", `${JSON.stringify(plan, null, 2)}\n`);
      const asked = typeof options.waves === "function" ? await options.waves() : options.waves;
      if (asked && asked.waves.length > 1) {
        planned = asked;
        waves = asked.waves;
        inWaves = true;
        const placed = waves.flatMap((w) => w.deployments);
        const missing = plan.deployments.filter((d) => !placed.includes(d.id)).map((d) => d.id);
        if (missing.length || placed.length !== new Set(placed).size || placed.length !== plan.deployments.length) {
          throw new Error(`runExperiment: the waves must hold every deployment of the plan exactly once (missing: ${missing.join(", ") || "none"})`);
        }
      }
      // A results.json from the start: a run killed at any point after this can be resumed, and
      // once the hosts are up it says which they are.
      checkpoint(true);
      for (const [w, wave] of waves.entries()) {
        if (signal.aborted) break;
        const sub = inWaves ? wavePlan(plan, wave.deployments) : plan;
        const targetRunId = inWaves ? `${options.runId}-w${w + 1}` : options.runId;
        const waveLabel = inWaves ? `wave ${w + 1} of ${waves.length} (${sub.deployments.length} deployment${sub.deployments.length === 1 ? "" : "s"}: ${wave.variants.join(", ")}; replica${wave.replicas.length === 1 ? "" : "s"} ${wave.replicas.join(", ")}): ` : "";
        const record: WaveRun = { wave: w + 1, deployments: [...wave.deployments], variants: [...wave.variants], replicas: [...wave.replicas], targetRunId, startedAt: new Date().toISOString(), bringUpSeconds: 0, cellsSeconds: 0, teardownSeconds: 0, teardown: "not-started", facts: {} };
        if (inWaves) waveRuns.push(record);
        waveUp = w;
        waveStarted = true;
        progress.log(`${waveLabel}bringing up ${sub.estimate.hosts} hosts on ${target.name}…`);
        const upStarted = performance.now();
        // Started on the next tick, so that even a callback that throws at once fails nothing.
        const sideWork = Promise.resolve()
          .then(() => (w === 0 ? options.whileBringingUp?.() : undefined))
          .catch(() => undefined);
        const waveEnvironment = await target.up(sub, { runId: targetRunId, runDir, log: (m) => progress.log(m), signal }).finally(async () => {
          await sideWork;
          const seconds = (performance.now() - upStarted) / 1000;
          clock.bringUp += seconds;
          record.bringUpSeconds = seconds;
        });
        record.facts = { ...waveEnvironment.facts };
        allHosts.push(...waveEnvironment.hosts);
        // Every wave's hosts, for results.json; the first wave's shaping, the latest facts over the earlier.
        environment = { hosts: allHosts, shaping: environment?.shaping ?? waveEnvironment.shaping, facts: { ...environment?.facts, ...waveEnvironment.facts } };
        const cellsStarted = performance.now();
        checkpoint(true);
        if (w === 0) {
          progress.log(waveEnvironment.shaping.note);
          progress.start(plan.cells.length);
        }
        // Round by round (runOrder): repetition 0 of every variant, then repetition 1, … so that a
        // drift over the run does not pass for a difference. A deployment's hosts stay connected
        // from its first step to its last.
        const steps = runOrder(sub.cells);
        const lastStep = new Map(steps.map((s, i) => [s.deployment, i]));
        const sessions = new Map<string, DeploymentSession>();
        const failDeployment = (deploymentId: string, error: unknown) => {
          // One deployment that cannot be reached fails its own cells, not the others'.
          const done = new Set(sampled.map((s) => s.measurement.cell));
          for (const c of plan.cells.filter((c) => c.deployment === deploymentId && !done.has(c.id))) {
            const failed = failedCell(c, (error as Error).message);
            sampled.push(failed);
            progress.cellFinished(cellLabel(c), "failed", failed.measurement.error);
          }
          checkpoint();
        };
        const timed = async (deploymentId: string, part: "readySeconds" | "cellsSeconds", work: () => Promise<void>) => {
          const t = performance.now();
          try {
            await work();
          } finally {
            const c = deploymentClock.get(deploymentId) ?? { readySeconds: 0, cellsSeconds: 0 };
            c[part] += (performance.now() - t) / 1000;
            deploymentClock.set(deploymentId, c);
          }
        };
        /** Connects a deployment (and warms it: versions, assets, servers). Throws as open() does. */
        const openSession = async (deploymentId: string): Promise<DeploymentSession> => {
          const opening = new DeploymentSession(deploymentId, environment!.hosts, sessionOptions, sampled, toolVersions);
          sessions.set(deploymentId, opening);
          await timed(deploymentId, "readySeconds", () => opening.open());
          return opening;
        };
        /** One step: connect the deployment at its first, run its groups, close it after its last. "stop": interrupted. */
        const runStep = async (step: RunStep, last: boolean): Promise<"next" | "stop"> => {
          let session = sessions.get(step.deployment);
          if (session?.dead) return "next";
          try {
            session ??= await openSession(step.deployment);
            const running = session;
            await timed(step.deployment, "cellsSeconds", () => running.run(step.groups));
          } catch (error) {
            // The session in the map: one whose open() threw is there too, and must be closed (dead).
            await sessions.get(step.deployment)?.close();
            // Ctrl-C while connecting is an interruption, not this deployment's failure.
            if (signal.aborted) return "stop";
            failDeployment(step.deployment, error);
          }
          if (last) await sessions.get(step.deployment)?.close();
          return "next";
        };
        try {
          if (!concurrent) {
            // Every deployment connected and warmed before the first cell, all at once: nothing
            // measures yet, so the parallel work perturbs nothing, and no connecting or server start
            // is left between one deployment's last cell and the next one's first. A deployment that
            // cannot be opened fails its own cells, as it would at its first step.
            await Promise.all(
              [...new Set(steps.map((s) => s.deployment))].map(async (id) => {
                try {
                  await openSession(id);
                } catch (error) {
                  await sessions.get(id)?.close();
                  if (!signal.aborted) failDeployment(id, error);
                }
              }),
            );
            for (const [index, step] of steps.entries()) {
              if (signal.aborted) break;
              if ((await runStep(step, lastStep.get(step.deployment) === index)) === "stop") break;
            }
          } else {
            // One chain per deployment, in runOrder's order within it; the chains at the same time.
            const chains = new Map<string, RunStep[]>();
            for (const step of steps) chains.set(step.deployment, [...(chains.get(step.deployment) ?? []), step]);
            // Every chain's in-flight commands listen on the signal at once: not a leak.
            const listeners = getMaxListeners(signal);
            if (listeners > 0) setMaxListeners(Math.max(listeners, 10 + 20 * chains.size), signal);
            const settled = await Promise.allSettled(
              [...chains.values()].map(async (own) => {
                for (const [index, step] of own.entries()) {
                  if (signal.aborted) break;
                  if ((await runStep(step, index === own.length - 1)) === "stop") break;
                }
              }),
            );
            // Every chain has ended (allSettled, not all): nothing still runs when the sessions close below.
            const thrown = settled.find((r): r is PromiseRejectedResult => r.status === "rejected");
            if (thrown) throw thrown.reason;
          }
        } finally {
          for (const s of sessions.values()) await s.close();
          const seconds = (performance.now() - cellsStarted) / 1000;
          clock.cells += seconds;
          record.cellsSeconds = seconds;
        }
        // Down before the next wave comes up (the last one is torn down below, on every path).
        if (inWaves && w < waves.length - 1) {
          await tearDownWave();
          if (teardown.status === "failed") {
            throw new Error(`wave ${w + 1} of ${waves.length}: its teardown failed, so the later waves were not started (their cells were not run): finish that teardown first (see the teardown errors)`);
          }
        }
      }
    } catch (error) {
      // Said once, in the final report (comparisonTable's "run failed:"), not here and not per cell.
      runError = (error as Error).message;
      progress.log(`error: ${runError.split("\n")[0]} (the whole message follows the results)`);
    } finally {
      // A Ctrl-C during teardown does not make a run whose every cell was measured "interrupted".
      stopAt();
      progress.stop();
      // The wave still up — or, when none came up, whatever up() may have left (down() is safe then).
      if (waveUp !== null || !waveStarted) await tearDownWave();
    }
    return finish();
  })();
  return options.handOver && target.handOver ? untilHandedOver(toEnd, options.handOver) : toEnd;

}

/**
 * One deployment's hosts as the runner uses them across its steps: the connections (every host
 * connected and ready, or none left open — see connectAll), the servers started on them, the
 * assets shipped. close() stops the servers and closes the connections; it is safe to call twice.
 */
class DeploymentSession {
  /** Set when the deployment failed as a whole: its later steps are skipped. */
  dead = false;
  private connections: HostConnections | null = null;
  private readonly servers: { role: string; server: RunningServer }[] = [];
  /** By `${role}/${measure}`: the server, and the host's connection generation it was last seen running in. */
  private readonly started = new Map<string, { server: RunningServer | undefined; generation: number }>();
  private readonly shipped = new Set<string>();
  /** Cells' work directories made by warm(). */
  private readonly madeDirs = new Set<string>();
  private readonly abortAll = () => this.connections?.close();
  private closed = false;
  private readonly deploymentId: string;
  private readonly endpoints: HostEndpoint[];
  private readonly options: SessionOptions;
  private readonly sampled: SampledMeasurement[];
  private readonly toolVersions: Record<string, string>;

  constructor(deploymentId: string, endpoints: HostEndpoint[], options: SessionOptions, sampled: SampledMeasurement[], toolVersions: Record<string, string>) {
    this.deploymentId = deploymentId;
    this.endpoints = endpoints;
    this.options = options;
    this.sampled = sampled;
    this.toolVersions = toolVersions;
  }

  async open(): Promise<void> {
    const { progress, signal } = this.options;
    const hosts = this.endpoints.filter((e) => e.deployment === this.deploymentId);
    const reconnectDelaysMs = this.options.reconnectDelaysMs;
    this.connections = await HostConnections.connectAll(
      this.deploymentId,
      hosts,
      { connect: this.options.connect ?? connectHost, signal, log: (m) => progress.log(m), ...(reconnectDelaysMs ? { reconnectDelaysMs } : {}) },
      readyAndProbe,
    );
    signal.addEventListener("abort", this.abortAll, { once: true });
    await this.warm();
  }

  /**
   * Before any of this deployment's cells measures: every tool's version, assets and servers, all
   * tools at once. Nothing measures on these hosts yet, so the parallel work perturbs nothing, and
   * each cell then starts with only its own client left to run (idle servers wait in accept or
   * select). One chain per tool: tools share no version, asset or server entry, so the chains
   * never race on one. A failure here is left for the cell's own prepare() to meet again and
   * report as that cell's error.
   */
  private async warm(): Promise<void> {
    const connections = this.connections!;
    const byTool = new Map<string, Cell[]>();
    const dirsByClient = new Map<string, string[]>();
    for (const cell of this.options.plan.cells) {
      if (cell.deployment !== this.deploymentId) continue;
      byTool.set(cell.tool, [...(byTool.get(cell.tool) ?? []), cell]);
      let workDir: string;
      try {
        workDir = cellWorkDir(connections.endpoint(cell.from).workDir, cell.id);
      } catch {
        continue; // A role the target did not bring up: that cell's own prepare() says so, no other cell's.
      }
      dirsByClient.set(cell.from, [...(dirsByClient.get(cell.from) ?? []), workDir]);
    }
    // Every cell's work directory, one command per client host (rather than one per cell, between measurements).
    const made = [...dirsByClient].map(async ([role, dirs]) => {
      const mk = await execWithTimeout(connections.get(role), `mkdir -p ${dirs.map(shellQuote).join(" ")}`, 30, this.options.signal).catch(() => undefined);
      if (mk?.exitCode === 0) for (const d of dirs) this.madeDirs.add(d);
    });
    const prepared = [...byTool.values()].map(async (cells) => {
      // A server that would not start here is tried once, not once per cell of its measure: the
      // cells' own prepare() tries again and reports it (a server that never listens costs 15 s).
      const failed = new Set<string>();
      for (const cell of cells) {
        if (this.options.signal.aborted) return;
        const server = `${cell.to}/${cell.measure}/${cell.path}`;
        if (failed.has(server)) continue;
        await this.prepare(cell).catch(() => failed.add(server));
      }
    });
    await Promise.all([...made, ...prepared]);
  }

  /** Versions, assets and the server a cell needs; one cell at a time, so nothing starts twice. */
  private async prepare(cell: Cell): Promise<() => Promise<SampledMeasurement>> {
    const { signal, progress } = this.options;
    const connections = this.connections!;
    const tool = findTool(cell.tool);
    if (!tool) throw new Error(`${this.deploymentId}: unknown tool "${cell.tool}"`);
    const client = connections.endpoint(cell.from);
    const server = connections.endpoint(cell.to);
    // A dropped connection is re-established here, before the cell (or the host is given up).
    const clientSsh = await connections.use(cell.from);
    const serverSsh = await connections.use(cell.to);
    // A connection lost on the way fails this cell, saying which host, when and during what.
    const on = async <T>(host: HostEndpoint, side: string, step: () => Promise<T>): Promise<T> =>
      step().catch((error: unknown) => {
        const lost = lostDuring(host, error, `${tool.name} ${side}`);
        throw lost ? new Error(lost, { cause: error }) : error;
      });
    if (!(tool.name in this.toolVersions)) {
      const v = await on(client, "client", () => execWithTimeout(clientSsh, tool.versionCommand, 10, signal));
      const version = tool.parseVersion(`${v.stdout}\n${v.stderr}`);
      // Deployments opening at once may each ask: a version found is never replaced by "unknown".
      if (version !== undefined || !(tool.name in this.toolVersions)) this.toolVersions[tool.name] = version ?? "unknown";
    }
    const clientAssets = await on(client, "client", () => ensureAssets(clientSsh, client, tool, this.shipped, signal));
    const serverAssets = await on(server, "server", () => ensureAssets(serverSsh, server, tool, this.shipped, signal));
    // The server listens on the address the cell's path reaches it at, not on every interface
    // (the management network included): a cell of each path gets a server of its own.
    const bindAddress = cell.path === "public" ? (server.publicPathArrivesAt ?? server.publicAddress ?? server.privateAddress) : server.privateAddress;
    const key = `${cell.to}/${cell.measure}/${tool.serverListensOnAll ? "*" : bindAddress}`;
    const known = this.started.get(key);
    const generation = connections.generation(cell.to);
    const notes: string[] = [];
    if (known?.server) {
      // Before every cell (servers outlive cells and repetitions): a server may have died since
      // the last one (killed, crashed) or gone with its host's replaced connection.
      const s = known.server;
      const exited = await on(server, "server", () => serverExit(serverSsh, s, signal));
      if (exited === undefined) known.generation = generation;
      else {
        progress.log(`${this.deploymentId}/${cell.to}: ${exited}; restarting it`);
        notes.push(`${exited} before this cell; restarted`);
        // Gone, or alive but no longer listening: either way it must not linger beside its successor.
        await stopServer(serverSsh, s).catch(() => undefined);
        this.started.delete(key);
        const at = this.servers.findIndex((e) => e.server === s);
        if (at >= 0) this.servers.splice(at, 1);
      }
    }
    const reattach = this.options.reattach;
    // Offered only when this very host runs the client the dead runner started (runCell checks the files).
    const offered = reattach?.cells.get(cell.id);
    const again = offered?.hostKey === client.hostKey ? offered : undefined;
    if (!this.started.has(key)) {
      // A server a re-attached client is connected to stays, whichever cell of its measure comes first.
      const serves = (id: string) => {
        const c = this.options.plan.cells.find((x) => x.id === id);
        const state = reattach?.cells.get(id);
        return c !== undefined && c.deployment === cell.deployment && c.to === cell.to && c.measure === cell.measure && c.path === cell.path && state?.hostKey === connections.endpoint(c.from).hostKey;
      };
      const reuse = reattach !== undefined && [...reattach.cells.keys()].some(serves);
      const s = await on(server, "server", () => startServer(serverSsh, server, tool, cell.params, BASE_PORT + cell.measure, serverAssets, signal, bindAddress, { reuse }));
      this.started.set(key, { server: s, generation });
      if (s) this.servers.push({ role: cell.to, server: s });
    }
    return () =>
      runCell(
        {
          cell,
          client: { endpoint: client, ssh: connections.get(cell.from), assetsDir: clientAssets },
          server: { endpoint: server, ssh: connections.get(cell.to), process: this.started.get(key)?.server },
          // One interface for every target: the local one restores routes a link flap dropped; a target without it has nothing to check.
          ...(this.options.target.checkHosts ? { checkNetwork: () => this.options.target.checkHosts!(cell.deployment) } : {}),
          notes,
          runDir: this.options.runDir,
          files: this.options.files,
          signal,
          // Replaces only the connection this cell saw drop; parallel cells share one reconnect.
          // Only detached clients reconnect mid-cell: their collection waits out a longer outage.
          reconnectClient: (failed) => connections.reconnect(cell.from, failed, this.options.detachedReconnectDelaysMs ?? DETACHED_RECONNECT_DELAYS_MS),
          log: (m) => progress.log(m),
          workDirReady: this.madeDirs.has(cellWorkDir(client.workDir, cell.id)),
          ...(again ? { reattach: { state: again, earlierRawDir: join(this.options.reattach!.earlierRunDir, "raw", cellSlug(cell.id)) } } : {}),
        },
        tool,
      );
  }

  /** Runs schedule groups one after another; a failed cell is recorded and the others go on. */
  async run(groups: Cell[][]): Promise<void> {
    const { progress, signal } = this.options;
    for (const group of groups) {
      if (signal.aborted) return;
      const runs: (() => Promise<SampledMeasurement>)[] = [];
      const setupSeconds: number[] = [];
      for (const cell of group) {
        progress.cellStarted(cellLabel(cell));
        const t = performance.now();
        try {
          runs.push(await this.prepare(cell));
        } catch (error) {
          const message = (error as Error).message;
          runs.push(async () => failedCell(cell, message));
        }
        setupSeconds.push((performance.now() - t) / 1000);
      }
      // A group is one cell, or every pair of a measure whose tool wants them at the same time.
      await Promise.all(
        runs.map(async (run, i) => {
          const cell = group[i]!;
          const result = await run().catch((error: Error) => failedCell(cell, error.message));
          const timing = result.measurement.timing;
          // What the runner spent preparing the cell (tool version, assets, its server) is the cell's setup too.
          if (timing) timing.setupSeconds += setupSeconds[i]!;
          this.sampled.push(result);
          progress.cellFinished(cellLabel(cell), result.measurement.status, result.measurement.error);
          this.options.cellFinished();
        }),
      );
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.dead = true;
    this.options.signal.removeEventListener("abort", this.abortAll);
    const connections = this.connections;
    if (!connections) return;
    // On the role's current connection (the one the server was started on may have been
    // replaced); every host at once, its servers in one command.
    const byRole = new Map<string, RunningServer[]>();
    for (const { role, server } of this.servers) byRole.set(role, [...(byRole.get(role) ?? []), server]);
    await Promise.all(
      [...byRole].map(([role, servers]) =>
        stopServers(connections.get(role), servers).catch(() => {
          // Closed or dropped: teardown removes the host and its processes.
        }),
      ),
    );
    connections.close();
  }
}

/**
 * What a run's results say overall. A run in which no cell measured anything failed — also when
 * nothing threw (every deployment unreachable) — unless it was interrupted.
 */
export function runStatus(run: { aborted: boolean; runError?: string | undefined; ok: number; cells: number }): Results["status"] {
  if (run.aborted) return "interrupted";
  if (run.ok === 0 && (run.runError !== undefined || run.cells > 0)) return "failed";
  return run.ok === run.cells ? "complete" : "partial";
}


/**
 * Waits until the host says it is ready (cloud-init done…), then asks it what it really is and
 * records that in `actual`, where the results compare it with what was asked.
 */
async function readyAndProbe(host: HostEndpoint, ssh: NodeSSH, signal: AbortSignal): Promise<void> {
  const where = `${host.deployment}/${host.role}`;
  if (host.ready) {
    const r = await execWithTimeout(ssh, host.ready.command, host.ready.timeoutSeconds, signal);
    if (r.exitCode !== 0) throw new Error(`${where}: not ready after ${host.ready.timeoutSeconds} s (${r.timedOut ? "timed out" : `exit ${r.exitCode}`}): ${(r.stderr || r.stdout).trim().slice(0, 300)}`);
  }
  if (host.probe) {
    const r = await execWithTimeout(ssh, host.probe.command, 60, signal);
    Object.assign(host.actual, host.probe.parse(r.stdout));
  }
}
