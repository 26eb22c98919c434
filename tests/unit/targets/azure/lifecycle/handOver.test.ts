import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { buildPlan, defineExperiment } from "../../../../../src/index.ts";
import type { Plan } from "../../../../../src/plan/types.ts";
import { AzureTarget, type ProgramFactory } from "../../../../../src/targets/azure/lifecycle/azureTarget.ts";
import { AzureRunStateSchema } from "../../../../../src/targets/azure/lifecycle/destroyRun.ts";
import type { RunGroups } from "../../../../../src/targets/azure/lifecycle/runGroups.ts";
import type { StackDriver, StackFactory, StackOperationOptions } from "../../../../../src/targets/azure/lifecycle/stack.ts";
import { startGroupDeletion } from "../../../../../src/targets/azure/lifecycle/teardown.ts";
import { hostName, type AzureOutputs, type AzureSettings } from "../../../../../src/targets/azure/program/types.ts";
import type { TargetContext } from "../../../../../src/targets/target.ts";

const plan: Plan = buildPlan(
  defineExperiment({ name: "handover", description: "hand-over", defaults: { region: "uksouth" }, hosts: { client: {}, server: {} }, measure: [{ tool: "ping" }] }),
);
const RUN_ID = "20260101-120000-abcd";
const GROUP = `latlab-${RUN_ID}`;

const outputsFor = (p: Plan, settings: AzureSettings): AzureOutputs => ({
  resourceGroup: GROUP,
  hosts: p.deployments.flatMap((d) =>
    d.hosts.map((h, i) => ({ deployment: d.id, role: h.role, publicIp: `198.19.${d.index}.${10 + i}`, privateIp: `10.${d.index}.0.${4 + i}`, hostKey: settings.hostKeys[hostName(d.index, h.role)]!.publicKey, vmName: `vm-${hostName(d.index, h.role)}` })),
  ),
});
const program: ProgramFactory = (p, settings) => async () => outputsFor(p, settings);

/** A stack whose destroy takes as long as an Azure one: it ends only when its signal (Pulumi's SIGINT) is aborted. */
function slowStack() {
  const destroys: StackOperationOptions[] = [];
  let destroyBegan: () => void = () => {};
  const destroyStarted = new Promise<void>((r) => (destroyBegan = r));
  const factory: StackFactory = {
    async open(o) {
      let result: unknown;
      const driver: StackDriver = {
        stackName: o.stackName,
        up: async () => void (result = await o.program!()),
        outputs: async () => result as Record<string, unknown>,
        refresh: async () => {},
        cancel: async () => {},
        destroy: (opts) => {
          destroys.push(opts);
          destroyBegan();
          return new Promise<void>((_, reject) => {
            const cancelled = () => reject(new Error("code: 255\n stdout: \n stderr: error: destroy canceled\n err?: "));
            if (opts.signal?.aborted) cancelled();
            opts.signal?.addEventListener("abort", cancelled);
          });
        },
        remove: async () => {},
      };
      return driver;
    },
  };
  return { factory, destroys, destroyStarted };
}

/** ARM: the run's group, owned by the run unless told otherwise; a delete refused with 409 `conflicts` times first. */
function arm(options: { owner?: string; conflicts?: number; gone?: boolean } = {}) {
  const calls: string[] = [];
  let conflicts = options.conflicts ?? 0;
  const groups: RunGroups = {
    tags: async (name) => (calls.push(`tags ${name}`), options.gone ? undefined : { owner: options.owner ?? "latlab", runId: RUN_ID }),
    delete: async (name) => void calls.push(`delete ${name}`),
    resources: async () => [],
    startDelete: async (name) => {
      calls.push(`startDelete ${name}`);
      if (conflicts-- > 0) throw Object.assign(new Error(`Resource group '${name}' cannot be deleted now: a NIC is deleting`), { statusCode: 409, code: "AnotherOperationInProgress" });
    },
  };
  return { groups, calls };
}

const GITHUB = { GITHUB_ACTIONS: "true", GITHUB_RUN_ID: "1658821493", GITHUB_RUN_ATTEMPT: "1", GITHUB_REPOSITORY: "octocat/Hello-World" };
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function setup(groups: RunGroups, signal?: AbortSignal) {
  const root = mkdtempSync(join(tmpdir(), "latlab-handover-"));
  dirs.push(root);
  const stack = slowStack();
  const target = new AzureTarget({
    stackFactory: stack.factory,
    createProgram: program,
    sshFrom: "203.0.113.7/32",
    resultsRoot: root,
    runGroups: async () => groups,
    ...(signal ? { signal } : {}),
    env: { LATLAB_STATE_DIR: join(root, "state"), ...GITHUB },
  });
  const ctx: TargetContext = { runId: RUN_ID, runDir: join(root, RUN_ID), log: () => {} };
  const stateDir = join(root, "state", RUN_ID);
  const state = () => AzureRunStateSchema.parse(JSON.parse(readFileSync(join(stateDir, "state.json"), "utf8")));
  return { target, stack, ctx, stateDir, state };
}

describe("AzureTarget.handOver: SIGTERM during a teardown of minutes", () => {
  it("stops Pulumi, has ARM accept the run's group deletion (asking again after a 409), records it, and leaves the rest to `latlab destroy` / the sweep", async () => {
    const a = arm({ conflicts: 2 });
    const { target, stack, ctx, stateDir, state } = setup(a.groups);
    await target.up(plan, ctx);
    const down = target.down();
    await stack.destroyStarted;

    const handed = await target.handOver({ withinMs: 1500, signal: "SIGTERM" });
    expect(handed).toEqual({
      started: [`resource group ${GROUP}: deletion accepted by ARM, which goes on deleting it and everything in it`],
      errors: [],
      finishWith: [`npx latlab destroy ${RUN_ID}`, "npx latlab sweep --github-run 1658821493 --delete"],
    });
    // Pulumi's destroy got its SIGINT (it starts nothing new); ARM was asked until it accepted.
    expect(stack.destroys[0]!.signal?.aborted).toBe(true);
    expect(a.calls.filter((c) => c.startsWith("startDelete"))).toEqual([`startDelete ${GROUP}`, `startDelete ${GROUP}`, `startDelete ${GROUP}`]);
    expect(state()).toMatchObject({ status: "handed-over", handedOver: { deleting: [GROUP] } });

    // The teardown it gave up ends at once, without a retry, an ARM wait, or a word over the run state.
    const report = await down;
    expect(report.status).toBe("failed");
    expect(stack.destroys).toHaveLength(1);
    expect(a.calls).not.toContain(`delete ${GROUP}`);
    expect(state().status).toBe("handed-over");
    // What `latlab destroy` needs to finish it is still there.
    expect(existsSync(join(stateDir, "passphrase"))).toBe(true);
    expect(existsSync(join(stateDir, "client_rsa"))).toBe(true);
    // Asked twice, it starts nothing twice.
    expect(await target.handOver({ withinMs: 1500 })).toBe(handed);
  });

  it("a second Ctrl-C does not stop Pulumi's destroy: only a hand-over does", async () => {
    const run = new AbortController();
    const { target, stack, ctx } = setup(arm().groups, run.signal);
    await target.up(plan, ctx);
    run.abort();
    const down = target.down();
    await stack.destroyStarted;
    run.abort();
    await new Promise((r) => setTimeout(r, 20));
    expect(stack.destroys[0]!.signal?.aborted).toBe(false);
    await target.handOver({ withinMs: 1500 });
    expect(stack.destroys[0]!.signal?.aborted).toBe(true);
    await down;
  });

  it("never deletes a group that is not tagged as this run's", async () => {
    const a = arm({ owner: "someone-else" });
    const { target, ctx, state } = setup(a.groups);
    await target.up(plan, ctx);
    const handed = await target.handOver({ withinMs: 1500 });
    expect(handed.started).toEqual([]);
    expect(handed.errors).toEqual([`resource group ${GROUP} is not tagged owner=latlab, runId=${RUN_ID}: not deleting it`]);
    expect(a.calls.some((c) => c.startsWith("startDelete"))).toBe(false);
    expect(state()).toMatchObject({ status: "handed-over", handedOver: { deleting: [] }, lastError: handed.errors[0] });
  });

  it("before anything was deployed there is nothing to hand over", async () => {
    const a = arm();
    const { target } = setup(a.groups);
    expect((await target.handOver({ withinMs: 1500 })).started).toEqual(["nothing to remove: nothing was brought up"]);
    expect(a.calls).toEqual([]);
  });
});

describe("startGroupDeletion", () => {
  it("a group ARM keeps refusing (409) is given up when the time is out, saying why", async () => {
    const a = arm({ conflicts: 1_000 });
    const outcome = await startGroupDeletion(a.groups, GROUP, RUN_ID, Date.now() + 300);
    expect(outcome).toEqual({ error: expect.stringMatching(new RegExp(`^resource group ${GROUP}: ARM refused its deletion until the time ran out \\(409 AnotherOperationInProgress: .*\\); its deletion was not started$`)) });
    expect(a.calls.filter((c) => c.startsWith("startDelete")).length).toBeGreaterThan(1);
  });

  it("a group already gone is said, not deleted; an ARM that does not answer is given up at the deadline", async () => {
    expect(await startGroupDeletion(arm({ gone: true }).groups, GROUP, RUN_ID, Date.now() + 1000)).toEqual({ gone: `resource group ${GROUP}: not in ARM (nothing of the run was created there, or it is gone already)` });
    const silent: RunGroups = { ...arm().groups, tags: () => new Promise(() => {}) };
    expect(await startGroupDeletion(silent, GROUP, RUN_ID, Date.now() + 100)).toEqual({ error: `resource group ${GROUP}: ARM (reading the group's tags) did not answer in time; its deletion was not started` });
  });

  it("an ARM client that can only delete and wait is not used for a hand-over", async () => {
    const { startDelete: _, ...waitOnly } = arm().groups;
    expect(await startGroupDeletion(waitOnly, GROUP, RUN_ID, Date.now() + 1000)).toEqual({ error: `resource group ${GROUP}: this ARM client cannot start a deletion without waiting for it` });
  });
});
