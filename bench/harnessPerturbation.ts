// How much latlab's harness perturbs what it measures: one sockperf cell (tcp, 64 B, 5 s) run by
// runExperiment on the local target, against the same sockperf command run by hand
// (`ip netns exec <ns> sockperf …`) in the very same namespaces, alternated (latlab, hand, latlab,
// hand, …) so that a drift does not pass for a difference. Both sides are parsed by latlab's
// sockperf parser and summarised the same way; the figure is the ratio of the medians of their p50s.
//
// The LocalTarget is brought up once here; runExperiment is handed a Target whose up() gives that
// environment and whose down() does nothing, so every latlab round measures in the same namespaces
// as the hand rounds. The real teardown runs once, at the end, on every path. Builds namespaces:
// run under `flock /tmp/latlab-ns.lock`.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineExperiment } from "../src/dsl/experiment.ts";
import { buildPlan } from "../src/plan/buildPlan.ts";
import type { Cell, Plan } from "../src/plan/types.ts";
import { summarize } from "../src/results/summarize.ts";
import type { TeardownReport } from "../src/results/schema.ts";
import { BASE_PORT } from "../src/runner/cellRunner.ts";
import type { Progress } from "../src/runner/progress.ts";
import { runExperiment } from "../src/runner/runExperiment.ts";
import { LocalTarget } from "../src/targets/local/localTarget.ts";
import { checkLocalPrerequisites } from "../src/targets/local/preflight.ts";
import type { Environment, HostEndpoint, Target } from "../src/targets/target.ts";
import { sockperf, type SockperfParams } from "../src/tools/sockperf/index.ts";

const LABEL = "sockperf p50 through latlab vs by hand (same namespaces)";
const ROUNDS = 3;
/** The hand run's port: not the one latlab's server had (BASE_PORT + measure), so a closing socket of latlab's never stands in its way. */
const HAND_PORT = BASE_PORT + 100;

const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs argv to its end (killed at timeoutMs or on abort), collecting its output. */
function run(argv: readonly string[], timeoutMs: number, signal: AbortSignal): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ["ignore", "pipe", "pipe"], timeout: timeoutMs, signal, killSignal: "SIGKILL" });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", (e) => (e.name === "AbortError" ? undefined : reject(e)));
    child.on("close", (code, sig) => resolve({ code, signal: sig, stdout, stderr }));
  });
}

/** `ip netns exec <ns>`, pinned to the CPUs latlab pinned that host's sshd (and so its tools) to. */
const inHost = (host: HostEndpoint, command: string) => {
  const cpus = typeof host.actual.cpus === "string" ? host.actual.cpus : null;
  return [...(cpus ? ["taskset", "-c", cpus] : []), "ip", "netns", "exec", String(host.actual.namespace), "sh", "-c", `exec ${command}`];
};

/** One sockperf cell by hand: latlab's own server and client command lines, run with `ip netns exec`; its p50 (µs) by latlab's parser. */
async function handRound(env: Environment, cell: Cell, round: number, signal: AbortSignal, started: Set<number>): Promise<number> {
  const client = env.hosts.find((h) => h.role === cell.from)!;
  const server = env.hosts.find((h) => h.role === cell.to)!;
  const params = cell.params as SockperfParams;
  const spec = sockperf.server({ bindAddress: server.privateAddress, port: HAND_PORT, workDir: server.workDir, assetsDir: server.workDir }, params);
  const [file, ...args] = inHost(server, spec.command);
  const srv = spawn(file!, args, { stdio: ["ignore", "ignore", "pipe"] });
  let srvErr = "";
  srv.stderr.on("data", (d) => (srvErr += d));
  if (srv.pid) started.add(srv.pid);
  const ns = String(server.actual.namespace);
  try {
    // Listening: the same readiness latlab's runner waits for.
    for (let waited = 0; ; waited += 50) {
      if (signal.aborted) throw new Error("interrupted");
      if (srv.exitCode !== null || srv.signalCode !== null) throw new Error(`hand-run sockperf server exited at start: ${srvErr.trim() || "(no output)"}`);
      const ss = await run(["ip", "netns", "exec", ns, "ss", "-Hltn", `sport = :${HAND_PORT}`], 5000, signal);
      if (ss.stdout.trim()) break;
      if (waited > 15_000) throw new Error(`hand-run sockperf server not listening on ${server.privateAddress}:${HAND_PORT} after 15 s`);
      await sleep(50);
    }
    const workDir = join(client.workDir, `hand-${round}`);
    mkdirSync(workDir, { recursive: true });
    const c = sockperf.client({ targetAddress: server.privateAddress, port: HAND_PORT, workDir, assetsDir: workDir }, params);
    const out = await run(inHost(client, c.command), c.timeoutSeconds * 1000, signal);
    if (signal.aborted) throw new Error("interrupted");
    const files = Object.fromEntries(c.files.map((f) => [f, readFileSync(f, "utf8")]));
    const result = sockperf.parse({ stdout: out.stdout, stderr: out.stderr, exitCode: out.code, files }, params);
    const p50 = summarize(result)?.p50;
    if (p50 === undefined) throw new Error(`hand-run sockperf gave no p50 (exit ${out.code}): ${out.stdout.slice(-300)}`);
    return p50;
  } finally {
    if (srv.pid && srv.exitCode === null && srv.signalCode === null) {
      srv.kill("SIGTERM");
      await Promise.race([new Promise((r) => srv.once("close", r)), sleep(2000)]);
      if (srv.exitCode === null && srv.signalCode === null) srv.kill("SIGKILL");
    }
    if (srv.pid) started.delete(srv.pid);
  }
}

export async function harnessPerturbationBench(): Promise<void> {
  const experiment = defineExperiment({
    name: "harness-perturbation",
    description: "bench: latlab's sockperf vs the same sockperf by hand in the same namespaces",
    defaults: { region: "uksouth", zone: "1" },
    hosts: { client: {}, server: {} },
    measure: [{ tool: "sockperf", params: { protocol: "tcp", messageSize: 64, duration: 5 } }],
  });
  const plan: Plan = buildPlan(experiment);
  const cell = plan.cells[0]!;

  // Not root, no `ip netns`, no sockperf: said in one line, not thrown.
  try {
    await checkLocalPrerequisites({ plan, binaries: sockperf.binaries, install: false, log: () => {} });
  } catch (error) {
    console.log(`${LABEL.padEnd(56)}   skipped: ${(error as Error).message.split("\n")[0]}`);
    return;
  }

  const t0 = performance.now();
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const runId = `bench-perturb-${process.pid}-${Date.now()}`;
  const scratch = mkdtempSync(join(tmpdir(), "latlab-bench-perturb-"));
  const logs: string[] = [];
  const log = (m: string) => logs.push(m);
  const local = new LocalTarget();
  const handPids = new Set<number>();
  let teardown: TeardownReport | undefined;
  const latlab: number[] = [];
  const hand: number[] = [];
  let cpus = "";
  let bringUp = 0;
  try {
    const upStarted = performance.now();
    const env = await local.up(plan, { runId, runDir: scratch, log, signal: controller.signal });
    bringUp = (performance.now() - upStarted) / 1000;
    cpus = env.hosts.map((h) => `${h.role} ${h.actual.cpus ?? "?"}`).join(", ");
    // The runner's view of the hosts already up: its up() gives them, its down() leaves them (torn down below, once).
    const alreadyUp: Target = {
      name: local.name,
      up: async () => ({ ...env, hosts: env.hosts.map((h) => ({ ...h, actual: { ...h.actual } })) }),
      down: async () => ({ status: "ok", errors: [], removed: [] }),
    };
    const progress: Progress = { start() {}, cellStarted() {}, cellFinished: (label, status, detail) => log(`${status} ${label}${detail ? `: ${detail}` : ""}`), log, stop() {} };
    for (let round = 0; round < ROUNDS; round++) {
      if (controller.signal.aborted) break;
      const runDir = join(scratch, `latlab-${round}`);
      mkdirSync(runDir);
      const results = await runExperiment({ source: "bench/harnessPerturbation.ts", plan, target: alreadyUp, runId: `${runId}-${round}`, runDir, progress, signal: controller.signal });
      if (controller.signal.aborted) break;
      const m = results.measurements[0];
      if (m?.status !== "ok" || m.summary?.p50 === undefined) throw new Error(`latlab's sockperf cell failed (round ${round + 1}): ${m?.error ?? results.error ?? "no p50"}\n${logs.slice(-10).join("\n")}`);
      latlab.push(m.summary.p50);
      hand.push(await handRound(env, cell, round, controller.signal, handPids));
    }
  } catch (error) {
    // A Ctrl-C's own aftermath (a killed client, a refused step) is the interruption, said below.
    if (!controller.signal.aborted) throw error;
  } finally {
    for (const pid of handPids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        /* gone */
      }
    }
    teardown = await local.down().catch((e: Error) => ({ status: "failed" as const, errors: [e.message], removed: [] }));
    rmSync(scratch, { recursive: true, force: true });
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
  if (teardown.status === "failed") console.log(`${LABEL}: teardown FAILED: ${teardown.errors.join("; ")}`);
  if (controller.signal.aborted) {
    console.log(`${LABEL.padEnd(56)}   interrupted after ${latlab.length} latlab and ${hand.length} hand rounds; torn down`);
    process.exitCode = 130;
    return;
  }
  const l = median(latlab);
  const h = median(hand);
  const seconds = (performance.now() - t0) / 1000;
  console.log(`${LABEL.padEnd(56)}   latlab ${l.toFixed(1)} µs, by hand ${h.toFixed(1)} µs: ${(l / h).toFixed(2)}× (reference: hand-run tool)`);
  console.log(
    `  medians of ${ROUNDS} alternated rounds each (latlab/hand p50 µs: ${latlab.map((x, i) => `${x.toFixed(1)}/${hand[i]!.toFixed(1)}`).join(", ")}); tcp 64 B, 5 s; both pinned to latlab's CPUs (${cpus}); bring-up ${bringUp.toFixed(1)} s, total ${seconds.toFixed(0)} s`,
  );
}
