import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ResultsSchema, type Results } from "../../src/results/schema.ts";
import type { CloudSnapshot, OperationLogEntry } from "../../src/targets/azure/emulator/arm/cloud.ts";
import { emulatorNamespacePrefix } from "../../src/targets/azure/emulator/emulator.ts";
import { AzureRunStateSchema, type AzureRunState } from "../../src/targets/azure/lifecycle/destroyRun.ts";
import { processesMentioning } from "./azureEmulatorHelpers.ts";
import { pulumiBinDir } from "./pulumiCli.ts";

/**
 * How `latlab run --target azure --rehearse` ends when GitHub Actions ends it: at its own
 * --time-limit (stops measuring, tears down in full), and under the runner's cancellation —
 * SIGINT, SIGTERM 7.5 s later, SIGKILL 2.5 s after that (actions/runner
 * src/Runner.Sdk/ProcessInvoker.cs @ 258d6c857db3519913f7deb6004b60172f8043ae, lines 32-33 and
 * 443-465) — where latlab hands its teardown over to ARM and exits before the kill, and `latlab
 * destroy` finishes it. The real Pulumi CLI, latlab's emulator, VMs as namespaces: root, the lock.
 */

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "bin/latlab.js");
const PULUMI = pulumiBinDir();
const work = mkdtempSync(join(tmpdir(), "latlab-signals-test-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const STATE_ROOT = join(work, "state");

/**
 * One deployment of two hosts measuring many short ping cells one after another: long enough
 * (hundreds of cells) that a time limit or a signal always lands while it measures, whatever the
 * bring-up took on a loaded machine.
 */
const EXPERIMENT = join(work, "many-cells.ts");
writeFileSync(
  EXPERIMENT,
  `import { defineExperiment } from "latlab";
export default defineExperiment({
  name: "many-cells",
  description: "two hosts, many short ping cells (latlab's signal tests)",
  defaults: { region: "eastus", zone: "1", size: "Standard_D2s_v5" },
  hosts: { client: {}, server: {} },
  repetitions: 300,
  measure: [{ tool: "ping", params: { count: 5, interval: 0.2 } }],
});
`,
);

const GITHUB_RUN_ID = "4242424242";
const env = (extra: Record<string, string> = {}) => ({
  ...process.env,
  PATH: `${PULUMI}:${process.env.PATH ?? ""}`,
  CI: "true",
  LATLAB_STATE_DIR: STATE_ROOT,
  GITHUB_ACTIONS: "true",
  GITHUB_RUN_ID,
  GITHUB_RUN_ATTEMPT: "1",
  GITHUB_REPOSITORY: "latlab-tests/signals",
  ...extra,
});

interface Started {
  child: ChildProcess;
  dir: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output: () => string;
}

/** `latlab run` in a process group of its own, as the runner's step shell would start it. */
function start(name: string, args: string[], extraEnv: Record<string, string> = {}): Started {
  const dir = join(work, name);
  const child = spawn(process.execPath, [BIN, "run", EXPERIMENT, "--target", "azure", "--rehearse", "--yes", "--quiet", "--no-history", "--out", dir, ...args], {
    cwd: ROOT,
    env: env(extraEnv),
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once("exit", (code, signal) => r({ code, signal })));
  return { child, dir, exited, output: () => output };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const readJson = (file: string): unknown => JSON.parse(readFileSync(file, "utf8"));
const resultsOf = (dir: string): Results => ResultsSchema.parse(readJson(join(dir, "results.json")));
const stateDirOf = (dir: string) => (readJson(join(dir, "azure-state.json")) as { stateDir: string }).stateDir;
const stateOf = (dir: string): AzureRunState => AzureRunStateSchema.parse(readJson(join(stateDirOf(dir), "state.json")));

/** What the run's emulator left on this machine: its namespaces, its folder, processes naming either. */
function emulatorLeftovers(home: string): string[] {
  const prefix = emulatorNamespacePrefix(home);
  const ns = spawnSync("ip", ["netns", "list"], { encoding: "utf8" }).stdout.split("\n").filter((l) => l.startsWith(prefix));
  return [...ns.map((n) => `namespace ${n}`), ...(existsSync(home) ? [`folder ${home}`] : []), ...processesMentioning(home).map((p) => `process ${p}`)];
}

/** Waits (polling) until `done()` holds or the process has exited; says which. */
async function until(run: Started, done: () => boolean): Promise<boolean> {
  while (run.child.exitCode === null && run.child.signalCode === null) {
    if (done()) return true;
    await sleep(100);
  }
  return done();
}

const measuredCells = (dir: string) => {
  try {
    return resultsOf(dir).measurements.length;
  } catch {
    return 0; // not written yet, or being replaced
  }
};

describe("a rehearsal ended as GitHub Actions ends a step", () => {
  it("--time-limit: stops measuring as on Ctrl-C, keeps what was measured, tears everything down, exits 2 and says it was the time limit", async () => {
    const run = start("time-limit", ["--time-limit", "1"]);
    const { code, signal } = await run.exited;
    expect({ code, signal }, run.output()).toEqual({ code: 2, signal: null });
    const results = resultsOf(run.dir);
    expect(results.stopped).toMatchObject({ by: "time-limit", timeLimitMinutes: 1 });
    expect(results.status).toBe("partial");
    const ok = results.measurements.filter((m) => m.status === "ok");
    const notRun = results.measurements.filter((m) => m.error === "not run: the run stopped at its time limit (--time-limit 1 min) before this cell ran");
    expect(ok.length, run.output()).toBeGreaterThan(0);
    expect(notRun.length).toBeGreaterThan(0);
    // Every measured cell's samples are where results.json says.
    for (const m of ok) expect(existsSync(join(run.dir, m.samplesFile!)), m.cell).toBe(true);
    expect(results.teardown).toMatchObject({ status: "ok", errors: [] });
    expect(results.teardown.handedOver).toBeUndefined();
    expect(run.output()).toMatch(/time limit of 1 min reached \(--time-limit\)/);
    const state = stateOf(run.dir);
    expect(state.status).toBe("destroyed");
    expect(emulatorLeftovers(state.rehearsal!.emulatorHome)).toEqual([]);
  }, 900_000);

  it("SIGINT, SIGTERM 7.5 s later, SIGKILL 2.5 s after: latlab hands the teardown over to ARM and exits before the kill; `latlab destroy` finishes it", async () => {
    // Every ARM operation of this emulator takes 2 s: the destroy of a dozen resources, a few
    // levels deep, outlasts the 7.5 s between SIGINT and SIGTERM (checked below) on any machine.
    const run = start("cancelled", [], { LATLAB_EMULATOR_DELAY_MS: "2000" });
    // The hosts are up and measuring: the first cells are in results.json.
    expect(await until(run, () => measuredCells(run.dir) >= 2), run.output()).toBe(true);

    run.child.kill("SIGINT");
    await sleep(7500);
    expect(run.child.exitCode, `latlab ended within 7.5 s of SIGINT: its teardown did not last long enough to test the hand-over\n${run.output()}`).toBeNull();
    run.child.kill("SIGTERM");
    await sleep(2500);
    const aliveAtKill = run.child.exitCode === null && run.child.signalCode === null;
    // The runner's SIGKILL; then its orphan-process cleanup at the job's end (Runner.Worker/JobExtension.cs
    // @ 258d6c8, "Cleaning up orphan processes"): whatever of the process group is left.
    try {
      process.kill(-run.child.pid!, "SIGKILL");
    } catch {
      // The group is gone already.
    }
    const { code, signal } = await run.exited;
    expect(aliveAtKill, run.output()).toBe(false);
    expect({ code, signal }, run.output()).toEqual({ code: 1, signal: null });
    expect(run.output()).toMatch(/SIGTERM after SIGINT: the process is about to be killed; handing the teardown over/);

    // results.json: what was measured, the interruption, the hand-over and how to finish it.
    const results = resultsOf(run.dir);
    expect(results.status).toBe("interrupted");
    expect(results.stopped).toMatchObject({ by: "signal", signal: "SIGINT" });
    expect(results.measurements.filter((m) => m.status === "ok").length).toBeGreaterThanOrEqual(2);
    expect(results.teardown.status).toBe("failed");
    const group = results.environment.facts.resourceGroup!;
    expect(results.teardown.handedOver).toMatchObject({
      signal: "SIGTERM",
      started: [`resource group ${group}: deletion accepted by ARM, which goes on deleting it and everything in it`],
      finishWith: [`npx latlab destroy ${run.dir}`, "npx latlab sweep --rehearse --delete"],
    });
    const state = stateOf(run.dir);
    expect(state).toMatchObject({ status: "handed-over", handedOver: { deleting: [group] } });

    // The emulator's ARM accepted the group's DELETE, and its state on disk says so (it outlives the process).
    const home = state.rehearsal!.emulatorHome;
    const ops = readFileSync(join(home, "operations.jsonl"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as OperationLogEntry);
    expect(ops).toContainEqual(expect.objectContaining({ method: "DELETE", type: "Microsoft.Resources/resourceGroups", name: group, status: 202, outcome: "Accepted" }));
    const snapshot = readJson(join(home, "state.json")) as CloudSnapshot;
    const groupLeft = snapshot.resources.find((r) => r.type === "Microsoft.Resources/resourceGroups" && r.name === group);
    // Deleting when the process ended in the middle of it; gone when ARM finished before.
    if (groupLeft) expect(groupLeft.state).toBe("Deleting");

    // `latlab destroy` resumes the emulator and finishes the teardown: nothing of the run is left.
    const destroy = spawnSync(process.execPath, [BIN, "destroy", run.dir], { cwd: ROOT, env: env(), encoding: "utf8", timeout: 600_000 });
    expect(destroy.status, `${destroy.stdout}\n${destroy.stderr}`).toBe(0);
    expect(destroy.stdout).toContain("teardown: ok");
    expect(destroy.stdout).toContain("left: none");
    expect(stateOf(run.dir).status).toBe("destroyed");
    const after = resultsOf(run.dir);
    expect(after.teardown.status).toBe("ok");
    expect(after.teardown.handedOver).toEqual(results.teardown.handedOver);
    // The provider plugin the killed engine started (a process group of its own) goes once its engine is gone.
    for (let i = 0; i < 100 && emulatorLeftovers(home).length > 0; i++) await sleep(100);
    expect(emulatorLeftovers(home)).toEqual([]);
  }, 900_000);

  it("Ctrl-C in the terminal (SIGINT to the whole process group) during deploy, twice more during destroy: Pulumi hears one cancel, the destroy is never cancelled, nothing is left (issue 23, faults 5 and 6)", async () => {
    // Every ARM operation takes 1.5 s: both `pulumi up` and `pulumi destroy` are in flight long enough to be hit.
    const dir = join(work, "terminal");
    const child = spawn(process.execPath, [BIN, "run", EXPERIMENT, "--target", "azure", "--rehearse", "--yes", "--no-history", "--out", dir], {
      cwd: ROOT,
      env: env({ LATLAB_EMULATOR_DELAY_MS: "1500" }),
      stdio: ["ignore", "pipe", "pipe"],
      detached: true, // latlab leads its group, as the foreground job of a terminal does
    });
    let output = "";
    child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
    const exited = new Promise<{ code: number | null }>((r) => child.once("exit", (code) => r({ code })));
    const run: Started = { child, dir, exited: exited.then((e) => ({ ...e, signal: null })), output: () => output };
    // Pulumi's processes the terminal's Ctrl-C would reach: those in latlab's process group. The
    // group is what decides (two SIGINTs sent close together may reach Pulumi as one).
    const pulumiInGroup = () =>
      spawnSync("ps", ["-e", "-o", "pgid=,comm="], { encoding: "utf8" })
        .stdout.split("\n")
        .map((l) => l.trim().split(/\s+/))
        .filter(([pgid, comm]) => Number(pgid) === child.pid && comm?.startsWith("pulumi"))
        .map(([, comm]) => comm);
    const ctrlC = () => process.kill(-child.pid!, "SIGINT");

    expect(await until(run, () => / creating \(/.test(output)), output).toBe(true);
    expect(pulumiInGroup(), "pulumi up").toEqual([]);
    ctrlC();
    expect(await until(run, () => /Destroying \(/.test(output)), output).toBe(true);
    expect(pulumiInGroup(), "pulumi destroy").toEqual([]);
    ctrlC();
    await sleep(500);
    ctrlC();
    expect((await exited).code, output).toBe(130);

    // One cancel of `pulumi up`, never Pulumi's "terminating" (which abandons what it was creating).
    expect(output.match(/\^C received; cancelling/g) ?? [], output).toHaveLength(1);
    expect(output).not.toContain("^C received; terminating");
    expect(output).not.toContain("destroy cancelled");
    expect(output).not.toMatch(/destroy attempt \d+ of \d+ failed/);
    const results = resultsOf(dir);
    expect(results.teardown).toMatchObject({ status: "ok", errors: [] });
    const stateDir = stateDirOf(dir);
    const state = stateOf(dir);
    expect(state.status).toBe("destroyed");
    for (const spent of ["client_rsa", "passphrase"]) expect(existsSync(join(stateDir, spent)), spent).toBe(false);
    expect(emulatorLeftovers(state.rehearsal!.emulatorHome)).toEqual([]);
  }, 900_000);
});
