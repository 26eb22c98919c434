import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { spawn, spawnSync } from "node:child_process";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { buildPlan, defineExperiment, ResultsSchema } from "../../../../../src/index.ts";
import type { Progress } from "../../../../../src/runner/progress.ts";
import { runExperiment } from "../../../../../src/runner/runExperiment.ts";
import { AzureTarget } from "../../../../../src/targets/azure/lifecycle/azureTarget.ts";
import { AzureRunStateSchema, destroyCommand, destroyRun, writeRunState, type AzureRunState, type RunGroups } from "../../../../../src/targets/azure/lifecycle/destroyRun.ts";
import type { StackFactory, StackOpenOptions } from "../../../../../src/targets/azure/lifecycle/stack.ts";
import { POINTER_FILE } from "../../../../../src/targets/azure/lifecycle/runState.ts";
import { hostName, type AzureSettings } from "../../../../../src/targets/azure/program/types.ts";
import { abortAfterUp } from "../helpers.ts";
import { azureRunGroups } from "../../../../../src/targets/azure/lifecycle/runGroups.ts";

// Azure's ARM client, watched: a rehearsal's destroy must never construct it (issue 23). It does
// what it did otherwise (with no subscription in these tests' environments it refuses at once).
vi.mock("../../../../../src/targets/azure/lifecycle/runGroups.ts", async (original) => {
  const actual = await original<typeof import("../../../../../src/targets/azure/lifecycle/runGroups.ts")>();
  return { ...actual, azureRunGroups: vi.fn(actual.azureRunGroups) };
});

const experiment = defineExperiment({
  name: "leak",
  description: "x",
  defaults: { region: "uksouth" },
  hosts: { client: {}, server: {} },
  measure: [{ tool: "ping" }],
});
const plan = buildPlan(experiment);
const RUN_ID = "20260101-120000-beef";

/** A fake of the run's resource groups in ARM (never Azure's: unit tests reach no network). */
function fakeGroups(tags: Record<string, string> | undefined, deleteError?: Error) {
  const deleted: string[] = [];
  const exists = () => tags !== undefined && deleted.length === 0;
  return {
    deleted,
    groups: async (): Promise<RunGroups> => ({
      tags: async () => (exists() ? tags : undefined),
      delete: async (name) => {
        if (deleteError) throw deleteError;
        deleted.push(name);
      },
      resources: async (name) => (exists() ? [`/subscriptions/s/resourceGroups/${name}`] : []),
    }),
  };
}
/** ARM refusing the group's delete: a resource lock on it (409 ScopeLocked, as in tests/fixtures/azure/arm-errors/). */
const scopeLocked = () => Object.assign(new Error("The scope cannot perform delete operation because following scope(s) are locked"), { statusCode: 409, code: "ScopeLocked" });
const OWNED = { owner: "latlab", runId: RUN_ID };

function fakeFactory(b: { destroyError?: Error; removeError?: Error; destroyFailsTimes?: number } = {}) {
  let destroyFailures = 0;
  const calls: string[] = [];
  const opened: StackOpenOptions[] = [];
  const factory: StackFactory = {
    async open(o) {
      calls.push("open");
      opened.push(o);
      let outputs: unknown = {};
      return {
        stackName: o.stackName,
        async up() {
          calls.push("up");
          outputs = await o.program!();
        },
        async outputs() {
          return outputs as Record<string, unknown>;
        },
        async refresh() {
          calls.push("refresh");
        },
        async cancel() {
          calls.push("cancel");
        },
        async destroy({ onOutput }) {
          calls.push("destroy");
          onOutput("Destroying (leak):\n  - rg deleted\n");
          if (b.destroyError) throw b.destroyError;
          if (b.destroyFailsTimes && destroyFailures++ < b.destroyFailsTimes) throw new Error('code: 255\n stdout: \n stderr: error: deleting nic: Status=400 Code="NicInUse"\n err?: ');
        },
        async remove() {
          calls.push("remove");
          if (b.removeError) throw b.removeError;
        },
      };
    },
  };
  return { factory, calls, opened };
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tempRoot = () => {
  const d = mkdtempSync(join(tmpdir(), "latlab-destroy-"));
  dirs.push(d);
  return d;
};
const readState = (stateDir: string) => AzureRunStateSchema.parse(JSON.parse(readFileSync(join(stateDir, "state.json"), "utf8")));
const readResults = (runDir: string) => ResultsSchema.parse(JSON.parse(readFileSync(join(runDir, "results.json"), "utf8")));

/** A run whose teardown failed, through the real runner: results.json says leaked, state.json says leaked. */
async function leakedRun() {
  const root = tempRoot();
  const runDir = join(root, RUN_ID);
  const env = { LATLAB_STATE_DIR: join(root, "state") };
  const stateDir = join(root, "state", RUN_ID);
  const first = fakeFactory({ destroyError: new Error("code: 255\n stdout: \n stderr: error: 409 Conflict\n err?: ") });
  const target = new AzureTarget({
    stackFactory: first.factory,
    createProgram: (p, settings: AzureSettings) => async () => ({
      resourceGroup: "rg-leak",
      hosts: p.deployments.flatMap((d) =>
        d.hosts.map((h) => ({ deployment: d.id, role: h.role, publicIp: "198.19.0.1", privateIp: "10.0.0.4", hostKey: settings.hostKeys[hostName(d.index, h.role)]!.publicKey, vmName: "vm" })),
      ),
    }),
    sshFrom: "198.51.100.1/32",
    resultsRoot: root,
    env,
    runGroups: fakeGroups(OWNED, scopeLocked()).groups,
    destroyAttempts: 1,
  });
  const progress: Progress = { start() {}, cellStarted() {}, cellFinished() {}, log() {}, stop() {} };
  const controller = new AbortController(); // no SSH in unit tests: the runner stops right after up()
  const results = await runExperiment({ experiment, source: "leak.ts", plan, target: abortAfterUp(target, controller), runId: RUN_ID, runDir, progress, signal: controller.signal });
  expect(results.teardown.status).toBe("failed");
  expect(readState(stateDir).status).toBe("leaked");
  expect(readState(stateDir).resourceGroup).toBe("rg-leak");
  return { root, runDir, stateDir, env, first };
}

describe("destroyRun (latlab destroy <runId>)", () => {
  it("finishes a leaked run: same stack, backend, passphrase and workspace; refresh + destroy + remove; state, keys and results.json updated", async () => {
    const { root, runDir, stateDir, env, first } = await leakedRun();
    const later = fakeFactory();
    const lines: string[] = [];
    const report = await destroyRun(RUN_ID, { resultsRoot: root, stackFactory: later.factory, log: (m) => lines.push(m), env, runGroups: fakeGroups(undefined).groups, destroyAttempts: 1 });

    expect(later.calls).toEqual(["open", "refresh", "destroy", "remove"]);
    const o = later.opened[0]!;
    const firstOpen = first.opened[0]!;
    expect([o.stackName, o.backendUrl, o.passphrase, o.projectName, o.workDir]).toEqual([firstOpen.stackName, firstOpen.backendUrl, firstOpen.passphrase, firstOpen.projectName, firstOpen.workDir]);
    expect(o.backendUrl).toBe(`file://${stateDir}`);
    expect(o.workDir).toBe(join(stateDir, "workspace"));
    expect(report).toMatchObject({ status: "ok", errors: [], left: [] });
    expect(report.removed).toEqual(expect.arrayContaining([`Azure resources of stack latlab-${RUN_ID} (resource group rg-leak)`, `Pulumi stack latlab-${RUN_ID}`]));
    expect(lines).toContain("azure:   - rg deleted");
    expect(lines).toContain("azure: resource group rg-leak: left: none");

    expect(readState(stateDir).status).toBe("destroyed");
    expect(existsSync(join(stateDir, "client_rsa"))).toBe(false);
    const results = readResults(runDir);
    expect(results.teardown.status).toBe("ok");
    expect(results.teardown.errors).toEqual([]);
    expect(results.teardown.removed.join("\n")).toMatch(/teardown finished by `latlab destroy` at .* after a failed first attempt: .*409 Conflict/);

    // Again: nothing to do, no stack opened.
    const again = fakeFactory();
    expect((await destroyRun(RUN_ID, { resultsRoot: root, stackFactory: again.factory, log: () => undefined, env })).status).toBe("ok");
    expect(again.calls).toEqual([]);
  });

  it("finds the state from the run id alone (results folder moved away), from the results folder's pointer, or from results.json's facts.stateDir", async () => {
    const { root, runDir, stateDir, env } = await leakedRun();
    const elsewhere = join(tempRoot(), "shared-copy");
    renameSync(runDir, elsewhere);
    // By id: the state folder, even with results/<runId> gone (the results folder is not needed to destroy).
    const byId = fakeFactory({ destroyError: new Error("still 409") });
    await destroyRun(RUN_ID, { resultsRoot: root, stackFactory: byId.factory, log: () => undefined, env, runGroups: fakeGroups(OWNED, scopeLocked()).groups, destroyAttempts: 1 });
    expect(byId.opened[0]!.backendUrl).toBe(`file://${stateDir}`);
    // By the results folder's path, through its pointer.
    const byPointer = fakeFactory({ destroyError: new Error("still 409") });
    await destroyRun(elsewhere, { resultsRoot: root, stackFactory: byPointer.factory, log: () => undefined, env: {}, runGroups: fakeGroups(OWNED, scopeLocked()).groups, destroyAttempts: 1 });
    expect(byPointer.opened[0]!.backendUrl).toBe(`file://${stateDir}`);
    // Without the pointer: results.json's facts.stateDir.
    rmSync(join(elsewhere, POINTER_FILE));
    const results = JSON.parse(readFileSync(join(elsewhere, "results.json"), "utf8")) as { environment: { facts: Record<string, string> } };
    expect(results.environment.facts.stateDir).toBe(stateDir);
    const byFacts = fakeFactory();
    const report = await destroyRun(elsewhere, { resultsRoot: root, stackFactory: byFacts.factory, log: () => undefined, env: {}, runGroups: fakeGroups(undefined).groups, destroyAttempts: 1 });
    expect(report.status).toBe("ok");
    expect(byFacts.opened[0]!.backendUrl).toBe(`file://${stateDir}`);
    expect(readResults(elsewhere).teardown.status).toBe("ok");
  });

  it("opens the stack with the Pulumi CLI version the run recorded", async () => {
    const { root, stateDir, env } = await leakedRun();
    await writeRunState(stateDir, { ...readState(stateDir), pulumiVersion: "3.259.1" });
    const later = fakeFactory();
    await destroyRun(RUN_ID, { resultsRoot: root, stackFactory: later.factory, log: () => undefined, env, runGroups: fakeGroups(undefined).groups });
    expect(later.opened[0]!.pulumiVersion).toBe("3.259.1");
  });

  it("a destroy that fails again and a group ARM refuses to delete (409 ScopeLocked): still leaked, with the command, in state and results", async () => {
    const { root, runDir, stateDir, env } = await leakedRun();
    const later = fakeFactory({ destroyError: new Error("still 409") });
    const arm = fakeGroups(OWNED, scopeLocked());
    const report = await destroyRun(RUN_ID, { resultsRoot: root, stackFactory: later.factory, log: () => undefined, env, runGroups: arm.groups, destroyAttempts: 1 });
    expect(later.calls).toEqual(["open", "refresh", "destroy"]);
    expect(report.status).toBe("failed");
    expect(report.errors.join("\n")).toMatch(/still 409[\s\S]*409 ScopeLocked[\s\S]*leaked[\s\S]*npx latlab destroy 20260101-120000-beef/);
    expect(report.left).toEqual(["/subscriptions/s/resourceGroups/rg-leak"]);
    expect(readState(stateDir).status).toBe("leaked");
    const results = readResults(runDir);
    expect(results.teardown.status).toBe("failed");
    expect(results.teardown.errors.some((e) => e.startsWith("(earlier attempt)"))).toBe(true);
    expect(existsSync(join(stateDir, "passphrase"))).toBe(true);
  });

  it("the run's secrets never reach the log, the report or results.json, even when Pulumi's error quotes them", async () => {
    const { root, runDir, stateDir, env } = await leakedRun();
    const passphrase = readFileSync(join(stateDir, "passphrase"), "utf8").trim();
    const keyLine = readFileSync(join(stateDir, "client_rsa"), "utf8").split("\n")[3]!;
    const later = fakeFactory({ destroyError: new Error(`code: 255\n stdout: \n stderr: error: bad passphrase ${passphrase}; key ${keyLine}\n err?: `) });
    const lines: string[] = [];
    const report = await destroyRun(RUN_ID, { resultsRoot: root, stackFactory: later.factory, log: (m) => lines.push(m), env, runGroups: fakeGroups(OWNED, scopeLocked()).groups, destroyAttempts: 1 });
    const seen = [lines.join("\n"), JSON.stringify(report), readFileSync(join(runDir, "results.json"), "utf8"), readFileSync(join(stateDir, "state.json"), "utf8")].join("\n");
    expect(seen).toContain("bad passphrase [redacted]");
    expect(seen).not.toContain(passphrase);
    expect(seen).not.toContain(keyLine);
  });

  it("after a crash mid-deploy, Azure holds resources Pulumi never recorded: the run's own group is deleted through ARM, then destroy goes through", async () => {
    const { root, stateDir, env } = await leakedRun();
    const later = fakeFactory({ destroyFailsTimes: 1 });
    const arm = fakeGroups(OWNED);
    const lines: string[] = [];
    const report = await destroyRun(RUN_ID, { resultsRoot: root, stackFactory: later.factory, log: (m) => lines.push(m), env, runGroups: arm.groups, destroyAttempts: 1 });
    expect(later.calls).toEqual(["open", "refresh", "destroy", "destroy", "remove"]);
    expect(arm.deleted).toEqual(["rg-leak"]);
    expect(report).toMatchObject({ status: "ok", left: [] });
    expect(report.removed).toContain("resource group rg-leak (deleted through ARM)");
    expect(lines).toContain("azure: deleting the run's resource group rg-leak through ARM (pulumi destroy failed) and waiting for it…");
    expect(readState(stateDir).status).toBe("destroyed");
  });

  it("never deletes a group that is not this run's (tags), and says why", async () => {
    const { root, stateDir, env } = await leakedRun();
    const later = fakeFactory({ destroyFailsTimes: 1 });
    const arm = fakeGroups({ owner: "someone-else" });
    const report = await destroyRun(RUN_ID, { resultsRoot: root, stackFactory: later.factory, log: () => undefined, env, runGroups: arm.groups, destroyAttempts: 1 });
    expect(arm.deleted).toEqual([]);
    expect(later.calls).toEqual(["open", "refresh", "destroy"]);
    expect(report.status).toBe("failed");
    expect(report.errors.join("\n")).toMatch(/NicInUse[\s\S]*not tagged owner=latlab, runId=20260101-120000-beef: not deleting it/);
    expect(readState(stateDir).status).toBe("leaked");
  });

  it("a stale Pulumi lock (its process gone) is removed before the destroy; a live one elsewhere is kept", async () => {
    const { root, stateDir, env } = await leakedRun();
    const locks = join(stateDir, ".pulumi", "locks", "organization", "latlab", `latlab-${RUN_ID}`);
    mkdirSync(locks, { recursive: true });
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }).stdout; // a pid that has exited
    writeFileSync(join(locks, "stale.json"), JSON.stringify({ pid: Number(dead), username: "root", hostname: hostname(), timestamp: "2026-01-01T12:00:00Z" }));
    writeFileSync(join(locks, "stale.json.attrs"), "{}");
    writeFileSync(join(locks, "elsewhere.json"), JSON.stringify({ pid: 1, username: "root", hostname: "another-machine", timestamp: "2026-01-01T12:00:00Z" }));
    const lines: string[] = [];
    await destroyRun(RUN_ID, { resultsRoot: root, stackFactory: fakeFactory().factory, log: (m) => lines.push(m), env, runGroups: fakeGroups(undefined).groups });
    expect(existsSync(join(locks, "stale.json"))).toBe(false);
    expect(existsSync(join(locks, "stale.json.attrs"))).toBe(false);
    expect(existsSync(join(locks, "elsewhere.json"))).toBe(true);
    expect(lines.some((l) => l.includes(`removed a stale Pulumi lock of stack latlab-${RUN_ID} (pid ${dead} on ${hostname()} is gone)`))).toBe(true);
  });

  it("a run still going (its Pulumi lock's process alive here) is left alone: nothing opened, repaired or deleted", async () => {
    const { root, stateDir, env } = await leakedRun();
    const locks = join(stateDir, ".pulumi", "locks", "organization", "latlab", `latlab-${RUN_ID}`);
    mkdirSync(locks, { recursive: true });
    const live = spawn("sh", ["-c", "sleep 30", "pulumi-stand-in"], { stdio: "ignore" });
    try {
      writeFileSync(join(locks, "live.json"), JSON.stringify({ pid: live.pid, username: "root", hostname: hostname(), timestamp: "2026-01-01T12:00:00Z" }));
      const f = fakeFactory();
      const arm = fakeGroups(OWNED);
      const report = await destroyRun(RUN_ID, { resultsRoot: root, stackFactory: f.factory, log: () => undefined, env, runGroups: arm.groups });
      expect(report.status).toBe("failed");
      expect(report.errors.join("\n")).toMatch(new RegExp(`locked by a Pulumi process that may still be running \\(pid ${live.pid} on [^:]+: \\S+\\.json\\).*is the run still going.*delete the lock file named above`));
      expect(f.calls).toEqual([]);
      expect(arm.deleted).toEqual([]);
      expect(existsSync(join(locks, "live.json"))).toBe(true);
      expect(readState(stateDir).status).toBe("leaked");
    } finally {
      live.kill("SIGKILL");
    }
  });

  it("an old run (state in <results folder>/.azure/, before it moved out) given by path still works, and the printed command names that path", async () => {
    const root = tempRoot();
    const runDir = join(root, "elsewhere", "my-run");
    const legacy = join(runDir, ".azure");
    mkdirSync(legacy, { recursive: true });
    const state: AzureRunState = {
      runId: RUN_ID,
      projectName: "latlab",
      stackName: `latlab-${RUN_ID}`,
      backendUrl: "azblob://state",
      passphrase: "file",
      resourceGroup: null, // interrupted before the outputs were known
      createdAt: "2026-01-01T12:00:00.000Z",
      expiresAt: "2026-01-01T15:00:00.000Z",
      status: "deploying",
      updatedAt: "2026-01-01T12:00:00.000Z",
    };
    await writeRunState(legacy, state);
    writeFileSync(join(legacy, "passphrase"), "secret-pass\n");
    expect(destroyCommand(RUN_ID, runDir, join(root, "results"))).toBe(`npx latlab destroy ${runDir}`);
    expect(destroyCommand(RUN_ID, join(root, "results", RUN_ID), join(root, "results"))).toBe(`npx latlab destroy ${RUN_ID}`);

    const f = fakeFactory();
    const report = await destroyRun(runDir, { resultsRoot: join(root, "results"), stackFactory: f.factory, log: () => undefined, env: { LATLAB_STATE_DIR: join(root, "state") }, runGroups: fakeGroups(undefined).groups });
    expect(report.status).toBe("ok");
    expect(f.opened[0]).toMatchObject({ backendUrl: "azblob://state", passphrase: "secret-pass", stackName: `latlab-${RUN_ID}` });
    // Not a file backend: an update still in progress is cancelled first.
    expect(f.calls).toEqual(["open", "cancel", "refresh", "destroy", "remove"]);
    expect(readState(legacy).status).toBe("destroyed");
  });

  it("a passphrase that came from the environment must be there again; nothing is opened otherwise", async () => {
    const root = tempRoot();
    const env = { LATLAB_STATE_DIR: join(root, "state") };
    const stateDir = join(root, "state", RUN_ID);
    await writeRunState(stateDir, {
      runId: RUN_ID,
      projectName: "latlab",
      stackName: `latlab-${RUN_ID}`,
      backendUrl: `file://${stateDir}`,
      passphrase: "env",
      resourceGroup: "rg",
      createdAt: "2026-01-01T12:00:00.000Z",
      expiresAt: "2026-01-01T15:00:00.000Z",
      status: "leaked",
      updatedAt: "2026-01-01T12:00:00.000Z",
    });
    const f = fakeFactory();
    // ARM not reachable either (no subscription in this environment): nothing can be said about what is left.
    const report = await destroyRun(RUN_ID, { resultsRoot: root, stackFactory: f.factory, log: () => undefined, env });
    expect(f.calls).toEqual([]);
    expect(report.status).toBe("failed");
    expect(report.errors.join("\n")).toMatch(/PULUMI_CONFIG_PASSPHRASE[\s\S]*leaked/);
    expect(report.left).toBeNull();

    const ok = await destroyRun(RUN_ID, { resultsRoot: root, stackFactory: f.factory, log: () => undefined, env: { ...env, PULUMI_CONFIG_PASSPHRASE: "pp" }, runGroups: fakeGroups(undefined).groups });
    expect(ok.status).toBe("ok");
    expect(f.opened[0]!.passphrase).toBe("pp");
  });

  it("a results folder that records no Azure state (a run refused before it deployed, a local run): nothing left to tear down, ok, nothing opened", async () => {
    const root = tempRoot();
    const runDir = join(root, RUN_ID);
    mkdirSync(runDir);
    writeFileSync(join(runDir, "plan.json"), "{}\n");
    writeFileSync(join(runDir, "results.json"), `${JSON.stringify({ status: "failed", environment: { facts: {} } })}\n`);
    const f = fakeFactory();
    const logged: string[] = [];
    for (const ref of [RUN_ID, runDir]) {
      const report = await destroyRun(ref, { resultsRoot: root, stackFactory: f.factory, log: (m) => logged.push(m), env: { LATLAB_STATE_DIR: join(root, "state") } });
      expect(report).toMatchObject({ status: "ok", errors: [], removed: [], left: null });
      expect(report.leftUnknown).toMatch(/nothing left to tear down/);
    }
    expect(f.calls).toEqual([]);
    expect(logged.join("\n")).toContain(`${runDir} records no Azure state (no ${POINTER_FILE})`);

    // A pointer whose state folder is missing (results copied from another machine) may hide a
    // deployed run: that is still an error, not "nothing to do".
    writeFileSync(join(runDir, POINTER_FILE), JSON.stringify({ runId: RUN_ID, stateDir: join(root, "elsewhere") }));
    await expect(destroyRun(runDir, { resultsRoot: root, stackFactory: f.factory, log: () => undefined, env: { LATLAB_STATE_DIR: join(root, "state") } })).rejects.toThrow(/no Azure run state/);
    rmSync(join(runDir, POINTER_FILE));
    writeFileSync(join(runDir, "results.json"), `${JSON.stringify({ status: "failed", environment: { facts: { stateDir: join(root, "elsewhere") } } })}\n`);
    await expect(destroyRun(runDir, { resultsRoot: root, stackFactory: f.factory, log: () => undefined, env: { LATLAB_STATE_DIR: join(root, "state") } })).rejects.toThrow(/no Azure run state/);
  });

  it("an unknown run says so and points at the sweeper", async () => {
    const root = tempRoot();
    await expect(destroyRun("nope", { resultsRoot: root, stackFactory: fakeFactory().factory, log: () => undefined, env: { LATLAB_STATE_DIR: join(root, "state") } })).rejects.toThrow(
      /no Azure run state for "nope"[\s\S]*latlab sweep/,
    );
  });
});

describe("latlab destroy of a rehearsal whose emulator cannot be resumed (issue 23)", () => {
  /** A rehearsal's run that did not finish its teardown: a leaked run's state (keys, passphrase, stack), made a rehearsal's. */
  async function rehearsalRun(home: string) {
    const run = await leakedRun();
    await writeRunState(run.stateDir, { ...readState(run.stateDir), rehearsal: { emulatorHome: home } });
    vi.mocked(azureRunGroups).mockClear();
    return run;
  }
  const neverResumed = async () => {
    throw new Error("the emulator is not resumed when it has no state.json");
  };

  it("its folder gone and none of its namespaces left: destroyed, said plainly, spent files removed, Azure never asked", async () => {
    const home = join(tempRoot(), "latlab-azemu-gone");
    const { root, runDir, stateDir, env } = await rehearsalRun(home);
    for (const spent of ["client_rsa", "passphrase"]) expect(existsSync(join(stateDir, spent)), spent).toBe(true);
    const f = fakeFactory();
    const lines: string[] = [];
    const asked: string[] = [];
    const report = await destroyRun(RUN_ID, {
      resultsRoot: root,
      stackFactory: f.factory,
      log: (m) => lines.push(m),
      env,
      resumeRehearsal: neverResumed,
      emulatorRemains: async (h) => (asked.push(h), { folder: false, namespaces: [] }),
    });

    expect(vi.mocked(azureRunGroups)).not.toHaveBeenCalled();
    expect(f.calls).toEqual([]);
    expect(asked).toEqual([home]);
    expect(report).toMatchObject({ status: "ok", errors: [], left: [] });
    expect(lines.join("\n")).toContain(`run ${RUN_ID} is a rehearsal: its emulator's folder ${home} is gone, and none of its namespaces remain: the emulator and everything it ran are gone; nothing of it is on Azure`);
    expect(readState(stateDir).status).toBe("destroyed");
    for (const spent of ["client_rsa", "passphrase", ".pulumi", "workspace"]) expect(existsSync(join(stateDir, spent)), spent).toBe(false);
    expect(report.removed).toContain(`file ${join(stateDir, "client_rsa")}`);
    expect(readResults(runDir).teardown.status).toBe("ok");

    // Again: nothing to do.
    const again = await destroyRun(RUN_ID, { resultsRoot: root, stackFactory: f.factory, log: () => undefined, env, resumeRehearsal: neverResumed });
    expect(again.status).toBe("ok");
    expect(vi.mocked(azureRunGroups)).not.toHaveBeenCalled();
  });

  it("a rehearsal whose teardown leaked (its emulator removed the rest when it stopped) is recorded destroyed: latlab destroy removes the keys and passphrase it left, asks nothing", async () => {
    const home = join(tempRoot(), "latlab-azemu-stopped");
    const { root, stateDir, env } = await rehearsalRun(home);
    await writeRunState(stateDir, { ...readState(stateDir), status: "destroyed" });
    const f = fakeFactory();
    const lines: string[] = [];
    const report = await destroyRun(RUN_ID, { resultsRoot: root, stackFactory: f.factory, log: (m) => lines.push(m), env, resumeRehearsal: neverResumed });
    expect(report).toMatchObject({ status: "ok", errors: [] });
    expect(f.calls).toEqual([]);
    expect(vi.mocked(azureRunGroups)).not.toHaveBeenCalled();
    for (const spent of ["client_rsa", "passphrase", ".pulumi", "workspace"]) expect(existsSync(join(stateDir, spent)), spent).toBe(false);
    expect(report.removed).toContain(`file ${join(stateDir, "passphrase")}`);
    expect(lines.join("\n")).toContain(`already destroyed; nothing to do but remove its spent files (${join(stateDir, "client_rsa")}`);
    expect(readState(stateDir).status).toBe("destroyed");
  });

  it("its folder without state.json, or namespaces of it still there: what is left is named with how to remove it; nothing touched, not destroyed, Azure never asked", async () => {
    const home = join(tempRoot(), "latlab-azemu-half");
    mkdirSync(home);
    const { root, stateDir, env } = await rehearsalRun(home);
    const before = readState(stateDir).status;
    const f = fakeFactory();
    const report = await destroyRun(RUN_ID, {
      resultsRoot: root,
      stackFactory: f.factory,
      log: () => undefined,
      env,
      resumeRehearsal: neverResumed,
      emulatorRemains: async () => ({ folder: true, namespaces: ["azabcde-vm0"] }),
    });
    expect(vi.mocked(azureRunGroups)).not.toHaveBeenCalled();
    expect(f.calls).toEqual([]);
    expect(report.status).toBe("failed");
    expect(report.errors.join("\n")).toMatch(new RegExp(`folder ${home} holds no state.json .*left on this machine: its folder ${home} .*its namespaces azabcde-vm0 \\(remove each with \`sudo ip netns delete <name>\`\\); nothing of it is on Azure`));
    expect(readState(stateDir).status).toBe(before);
    expect(existsSync(join(stateDir, "client_rsa"))).toBe(true);

    // Whether namespaces remain cannot be told: not destroyed either, and says why.
    const unknown = await destroyRun(RUN_ID, { resultsRoot: root, stackFactory: f.factory, log: () => undefined, env, resumeRehearsal: neverResumed, emulatorRemains: async () => Promise.reject(new Error("ip: not found")) });
    expect(unknown.errors.join("\n")).toContain("could not be checked (ip: not found)");
    expect(readState(stateDir).status).toBe(before);
    expect(vi.mocked(azureRunGroups)).not.toHaveBeenCalled();
  });

  it("an emulator that has its state but fails to resume: its ARM cannot be asked, and Azure's is not asked instead", async () => {
    const home = join(tempRoot(), "latlab-azemu-broken");
    mkdirSync(home);
    writeFileSync(join(home, "state.json"), "{}\n");
    const { root, env } = await rehearsalRun(home);
    const report = await destroyRun(RUN_ID, {
      resultsRoot: root,
      stackFactory: fakeFactory().factory,
      log: () => undefined,
      env,
      resumeRehearsal: async () => {
        throw new Error("startEmulator: nft missing");
      },
    });
    expect(vi.mocked(azureRunGroups)).not.toHaveBeenCalled();
    expect(report.status).toBe("failed");
    expect(report.leftUnknown).toMatch(/the rehearsal's emulator \(.*latlab-azemu-broken\) was not resumed, so its ARM cannot be asked; Azure is not asked/);
  });
});
