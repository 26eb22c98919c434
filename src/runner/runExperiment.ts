import { mkdirSync, writeFileSync } from "node:fs";
import { release } from "node:os";
import { join } from "node:path";
import type { NodeSSH } from "node-ssh";
import type { Experiment } from "../dsl/experiment.ts";
import type { Cell, Plan } from "../plan/types.ts";
import { comparePairs, compareVariants, type SampledMeasurement } from "../results/comparisons.ts";
import { hostRecords } from "../results/hostRecords.ts";
import type { Results, ShapingStatus, TeardownReport } from "../results/schema.ts";
import { writeResults } from "../results/writeResults.ts";
import type { Environment, HostEndpoint, Target } from "../targets/target.ts";
import { findTool } from "../tools/registry.ts";
import { BASE_PORT, failedCell, runCell } from "./cellRunner.ts";
import type { Progress } from "./progress.ts";
import { startServer, stopServer, type RunningServer } from "./servers.ts";
import { ensureAssets } from "./assets.ts";
import { connectHost, execWithTimeout } from "./ssh.ts";
import { LATLAB_VERSION } from "../version.ts";

export interface RunOptions {
  experiment: Experiment;
  source: string;
  plan: Plan;
  target: Target;
  runId: string;
  runDir: string;
  progress: Progress;
  /** Aborted on Ctrl-C / SIGTERM: in-flight work stops, teardown still runs. */
  signal: AbortSignal;
}

const NO_SHAPING: ShapingStatus = { latency: "not-applicable", bandwidth: "not-applicable", note: "no hosts were brought up" };

const cellLabel = (c: Cell) => `${c.variant}${c.replica ? `#r${c.replica}` : ""} ${c.tool} ${c.from}->${c.to}${c.repetition ? ` rep${c.repetition}` : ""}`;

/**
 * Brings the plan's hosts up on the target, runs every cell, and always tears down — on
 * success, on error and on interruption — then writes results.json with whatever was
 * measured. A failed cell is recorded and the others go on.
 */
export async function runExperiment(options: RunOptions): Promise<Results> {
  const { plan, target, runDir, progress, signal } = options;
  mkdirSync(runDir, { recursive: true });
  writeFileSync(join(runDir, "plan.json"), `${JSON.stringify(plan, null, 2)}\n`);
  const startedAt = new Date().toISOString();
  const sampled: SampledMeasurement[] = [];
  const toolVersions: Record<string, string> = {};
  let environment: Environment | undefined;
  let runError: string | undefined;
  let teardown: TeardownReport = { status: "not-started", errors: [], removed: [] };

  try {
    progress.log(`bringing up ${plan.estimate.hosts} hosts on ${target.name}…`);
    environment = await target.up(plan, { runId: options.runId, runDir, log: (m) => progress.log(m), signal });
    progress.log(environment.shaping.note);
    progress.start(plan.cells.length);
    for (const deployment of plan.deployments) {
      if (signal.aborted) break;
      const cells = plan.cells.filter((c) => c.deployment === deployment.id);
      try {
        await runDeployment(deployment.id, cells, environment.hosts, options, sampled, toolVersions);
      } catch (error) {
        // One deployment that cannot be reached fails its own cells, not the others'.
        const done = new Set(sampled.map((s) => s.measurement.cell));
        for (const c of cells.filter((c) => !done.has(c.id))) {
          const failed = failedCell(c, (error as Error).message);
          sampled.push(failed);
          progress.cellFinished(cellLabel(c), "failed", failed.measurement.error);
        }
      }
    }
  } catch (error) {
    runError = (error as Error).message;
    progress.log(`error: ${runError}`);
  } finally {
    progress.stop();
    progress.log("tearing down…");
    try {
      teardown = await target.down();
    } catch (error) {
      teardown = { status: "failed", errors: [`teardown threw: ${(error as Error).message}`], removed: [] };
    }
    if (teardown.status === "failed") progress.log(`teardown FAILED:\n  ${teardown.errors.join("\n  ")}`);
  }

  // Cells never reached (error or interruption) are recorded as failed: nothing is silently missing.
  const done = new Set(sampled.map((s) => s.measurement.cell));
  const notRun = plan.cells.filter((c) => !done.has(c.id));
  const reason = signal.aborted ? "interrupted before this cell ran" : runError ? `not run: ${runError}` : "not run";
  for (const c of notRun) sampled.push(failedCell(c, reason));

  const ok = sampled.filter((s) => s.measurement.status === "ok").length;
  const results: Results = {
    schemaVersion: 1,
    runId: options.runId,
    experiment: { name: plan.experiment.name, description: plan.experiment.description, source: options.source },
    target: target.name,
    startedAt,
    finishedAt: new Date().toISOString(),
    status: signal.aborted ? "interrupted" : runError && ok === 0 ? "failed" : ok === plan.cells.length ? "complete" : "partial",
    ...(runError ? { error: runError } : {}),
    environment: {
      latlabVersion: LATLAB_VERSION,
      node: process.version,
      kernel: release(),
      toolVersions,
      shaping: environment?.shaping ?? NO_SHAPING,
      facts: environment?.facts ?? {},
    },
    baseline: plan.baseline,
    variants: plan.variants.map((v) => ({ id: v.id, axes: v.axes, baseline: plan.baselineOf[v.id]!, hosts: hostRecords(plan, v.id, environment?.hosts ?? []) })),
    measurements: plan.cells.map((c) => sampled.find((s) => s.measurement.cell === c.id)!.measurement),
    comparisons: compareVariants(plan.baselineOf, plan.variants.map((v) => v.id), sampled, plan.cells),
    pairComparisons: comparePairs(sampled, plan.cells),
    teardown,
  };
  writeResults(runDir, results);
  return results;
}

async function runDeployment(
  deploymentId: string,
  cells: Cell[],
  endpoints: HostEndpoint[],
  options: RunOptions,
  sampled: SampledMeasurement[],
  toolVersions: Record<string, string>,
): Promise<void> {
  const { progress, signal } = options;
  const hosts = endpoints.filter((e) => e.deployment === deploymentId);
  const connections = new Map<string, NodeSSH>();
  const servers: { ssh: NodeSSH; server: RunningServer }[] = [];
  const abortAll = () => connections.forEach((c) => c.dispose());
  signal.addEventListener("abort", abortAll, { once: true });
  try {
    await Promise.all(
      hosts.map(async (h) => {
        const ssh = await connectHost(h, { signal, log: (m) => progress.log(m) });
        connections.set(h.role, ssh);
        await readyAndProbe(h, ssh, signal);
      }),
    );
    const started = new Map<string, RunningServer | undefined>();
    const shipped = new Set<string>();

    /** Versions, assets and the server a cell needs; one cell at a time, so nothing starts twice. */
    const prepare = async (cell: Cell) => {
      const tool = findTool(cell.tool)!;
      const client = hosts.find((h) => h.role === cell.from)!;
      const server = hosts.find((h) => h.role === cell.to)!;
      const clientSsh = connections.get(cell.from)!;
      const serverSsh = connections.get(cell.to)!;
      if (!(tool.name in toolVersions)) {
        const v = await execWithTimeout(clientSsh, tool.versionCommand, 10, signal);
        toolVersions[tool.name] = tool.parseVersion(`${v.stdout}\n${v.stderr}`) ?? "unknown";
      }
      const clientAssets = await ensureAssets(clientSsh, client, tool, shipped);
      const serverAssets = await ensureAssets(serverSsh, server, tool, shipped);
      const key = `${cell.to}/${cell.measure}`;
      if (!started.has(key)) {
        const s = await startServer(serverSsh, server, tool, cell.params, BASE_PORT + cell.measure, serverAssets, signal);
        started.set(key, s);
        if (s) servers.push({ ssh: serverSsh, server: s });
      }
      return () =>
        runCell({
          cell,
          client: { endpoint: client, ssh: connections.get(cell.from)!, assetsDir: clientAssets },
          server: { endpoint: server, ssh: serverSsh },
          runDir: options.runDir,
          signal,
          reconnectClient: async () => {
            connections.get(cell.from)?.dispose();
            const fresh = await connectHost(client, { signal, log: (m) => progress.log(m) });
            connections.set(cell.from, fresh);
            return fresh;
          },
          log: (m) => progress.log(m),
        });
    };

    for (const group of scheduleGroups(cells)) {
      if (signal.aborted) return;
      const runs: (() => Promise<SampledMeasurement>)[] = [];
      for (const cell of group) {
        progress.cellStarted(cellLabel(cell));
        try {
          runs.push(await prepare(cell));
        } catch (error) {
          const message = (error as Error).message;
          runs.push(async () => failedCell(cell, message));
        }
      }
      // A group is one cell, or every pair of a measure whose tool wants them at the same time.
      await Promise.all(
        runs.map(async (run, i) => {
          const cell = group[i]!;
          const result = await run().catch((error: Error) => failedCell(cell, error.message));
          sampled.push(result);
          progress.cellFinished(cellLabel(cell), result.measurement.status, result.measurement.error);
        }),
      );
    }
  } finally {
    signal.removeEventListener("abort", abortAll);
    for (const { ssh, server } of servers) await stopServer(ssh, server).catch(() => undefined);
    connections.forEach((c) => c.dispose());
  }
}

/**
 * Cells in the order they run: one at a time, except that consecutive cells of one measure and
 * repetition whose tool runs its pairs in parallel (a long-lived probe watched from several
 * places at the same moment, like seed 000's three clients) form one group.
 */
export function scheduleGroups(cells: readonly Cell[]): Cell[][] {
  const groups: Cell[][] = [];
  for (const cell of cells) {
    const last = groups.at(-1);
    const head = last?.[0];
    if (head && findTool(cell.tool)?.pairsInParallel && head.measure === cell.measure && head.repetition === cell.repetition && head.deployment === cell.deployment) {
      last.push(cell);
    } else groups.push([cell]);
  }
  return groups;
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
