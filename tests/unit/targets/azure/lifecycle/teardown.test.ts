import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { RunGroups } from "../../../../../src/targets/azure/lifecycle/runGroups.ts";
import { absoluteBackendUrl, type StackDriver, type StackOperationOptions } from "../../../../../src/targets/azure/lifecycle/stack.ts";
import { formatLeft, tearDownStack, type TeardownSubject } from "../../../../../src/targets/azure/lifecycle/teardown.ts";
import { tempDirs } from "../../../../tempDirs.ts";

const tempDir = tempDirs();
const RUN_ID = "20260101-120000-f00d";
const GROUP = `latlab-${RUN_ID}`;
const SUB = "/subscriptions/00000000-0000-0000-0000-000000000000";
const GROUP_ID = `${SUB}/resourceGroups/${GROUP}`;
const VM_ID = `${GROUP_ID}/providers/Microsoft.Compute/virtualMachines/${GROUP}-d0-client`;
const CMD = `npx latlab destroy ${RUN_ID}`;

/** A recorded ARM error (tests/fixtures/azure/arm-errors/, sources in its README) as @azure/core-rest-pipeline throws it. */
function armError(file: string): Error {
  const { status, body } = JSON.parse(readFileSync(join(import.meta.dirname, "../../../../fixtures/azure/arm-errors", file), "utf8")) as {
    status: number;
    body: { error: { code: string; message: string } };
  };
  return Object.assign(new Error(body.error.message), { name: "RestError", statusCode: status, code: body.error.code, details: body });
}

/** The same error as azure-native reports it inside a failed `pulumi destroy` (a CommandError's stderr). */
function destroyFailure(file: string): Error {
  const e = armError(file) as Error & { statusCode: number; code: string };
  return new Error(
    `code: 255\n stdout: \n stderr: Destroying (s):\n\nDiagnostics:\n  azure-native:network:Subnet (${GROUP}-vnet-d0):\n    error: deleting ${GROUP_ID}/providers/Microsoft.Network/virtualNetworks/${GROUP}-vnet/subnets/d0: Status=${e.statusCode} Code="${e.code}" Message="${e.message}"\n\n err?: `,
  );
}

interface DriverBehaviour {
  /** destroy() throws these, in turn, then succeeds. */
  destroyErrors?: Error[];
  refreshError?: Error;
}

function fakeDriver(b: DriverBehaviour = {}) {
  const calls: string[] = [];
  const errors = [...(b.destroyErrors ?? [])];
  const driver: StackDriver = {
    stackName: `latlab-${RUN_ID}`,
    up: async () => void calls.push("up"),
    outputs: async () => ({}),
    async refresh({ onOutput }: StackOperationOptions) {
      calls.push("refresh");
      onOutput("Refreshing (s):\n");
      if (b.refreshError) throw b.refreshError;
    },
    cancel: async () => void calls.push("cancel"),
    async destroy({ onOutput }: StackOperationOptions) {
      calls.push("destroy");
      onOutput("Destroying (s):\n");
      const e = errors.shift();
      if (e) throw e;
    },
    remove: async () => void calls.push("remove"),
  };
  return { driver, calls };
}

/** ARM as the fake sees it: the run's group (with its tags and resources) or nothing. */
function fakeArm(o: { tags?: Record<string, string>; resources?: string[]; deleteError?: Error; goneAfterDestroy?: boolean } = {}) {
  let exists = o.tags !== undefined;
  const calls: string[] = [];
  const groups: RunGroups = {
    async tags(name) {
      calls.push(`tags ${name}`);
      return exists ? o.tags : undefined;
    },
    async delete(name) {
      calls.push(`delete ${name}`);
      if (o.deleteError) throw o.deleteError;
      exists = false;
    },
    async resources(name) {
      calls.push(`resources ${name}`);
      return exists ? [GROUP_ID, ...(o.resources ?? [])] : [];
    },
  };
  return { groups, calls, markGone: () => (exists = false) };
}

const OWNED = { owner: "latlab", runId: RUN_ID, expiresAt: "2026-01-01T15:00:00Z" };

function subject(over: Partial<TeardownSubject> = {}): TeardownSubject {
  return {
    runId: RUN_ID,
    stackName: `latlab-${RUN_ID}`,
    backendUrl: `file://${tempDir("latlab-teardown-")}`,
    resourceGroup: GROUP,
    expiresAt: "2026-01-01T15:00:00.000Z",
    finishCommand: CMD,
    ...over,
  };
}

describe("tearDownStack: the one teardown (AzureTarget's and latlab destroy's)", () => {
  it("a stale file-backend lock is removed, then refresh, destroy, remove; ARM holds nothing: left: none", async () => {
    const s = subject();
    const backend = s.backendUrl.slice("file://".length);
    const locks = join(backend, ".pulumi", "locks", "organization", "latlab", s.stackName);
    mkdirSync(locks, { recursive: true });
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }).stdout;
    writeFileSync(join(locks, "stale.json"), JSON.stringify({ pid: Number(dead), username: "u", hostname: hostname(), timestamp: "2026-01-01T12:00:00Z" }));
    const { driver, calls } = fakeDriver();
    const arm = fakeArm();
    const lines: string[] = [];
    const out = await tearDownStack(s, { open: async () => (calls.push("open"), driver), groups: async () => arm.groups, log: (m) => lines.push(m), retryDelayMs: 1 });
    expect(existsSync(join(locks, "stale.json"))).toBe(false);
    // The lock goes before the stack is even opened; refresh before destroy.
    expect(calls).toEqual(["open", "refresh", "destroy", "remove"]);
    expect(out).toMatchObject({ status: "destroyed", errors: [], left: [] });
    expect(out.removed[0]).toMatch(/^stale Pulumi lock .*stale\.json$/);
    expect(formatLeft(out)).toBe("left: none");
    expect(lines).toContain(`azure: resource group ${GROUP}: left: none`);
  });

  it("a file backend latlab cannot read (file://~ as Pulumi spells it) still gets refresh, destroy and the ARM check: a teardown never stops before it tried", async () => {
    const { driver, calls } = fakeDriver();
    const out = await tearDownStack(subject({ backendUrl: "file://~/somewhere" }), { open: async () => driver, groups: async () => fakeArm().groups, log: () => undefined });
    expect(calls).toEqual(["refresh", "destroy", "remove"]);
    expect(out.left).toEqual([]);
    expect(out.errors.join("\n")).toMatch(/could not look for stale Pulumi locks in file:\/\/~\/somewhere/);
  });

  it("--backend file://~/x and file://./x become absolute: latlab reads the folder, and a later destroy may run elsewhere", () => {
    expect(absoluteBackendUrl("file://~/state", "/cwd", "/home/u")).toBe("file:///home/u/state");
    expect(absoluteBackendUrl("file://~", "/cwd", "/home/u")).toBe("file:///home/u");
    expect(absoluteBackendUrl("file://./state", "/cwd", "/home/u")).toBe("file:///cwd/state");
    expect(absoluteBackendUrl("file:///abs/state", "/cwd", "/home/u")).toBe("file:///abs/state");
    expect(absoluteBackendUrl("azblob://container", "/cwd", "/home/u")).toBe("azblob://container");
  });

  it("another backend: an update still in progress is cancelled (pulumi cancel) before refresh and destroy", async () => {
    const { driver, calls } = fakeDriver();
    const out = await tearDownStack(subject({ backendUrl: "azblob://state" }), { open: async () => driver, groups: async () => fakeArm().groups, log: () => undefined });
    expect(calls).toEqual(["cancel", "refresh", "destroy", "remove"]);
    expect(out.status).toBe("destroyed");
  });

  it("destroy fails (409 AnotherOperationInProgress, every retry): the owned group is deleted through ARM and waited for, destroy clears the state, left: none", async () => {
    const failure = destroyFailure("another-operation-in-progress.409.json");
    const { driver, calls } = fakeDriver({ destroyErrors: [failure, failure] });
    const arm = fakeArm({ tags: OWNED, resources: [VM_ID] });
    const lines: string[] = [];
    const out = await tearDownStack(subject(), { open: async () => driver, groups: async () => arm.groups, log: (m) => lines.push(m), attempts: 2, retryDelayMs: 1 });
    expect(calls).toEqual(["refresh", "destroy", "destroy", "destroy", "remove"]);
    expect(arm.calls).toContain(`delete ${GROUP}`);
    expect(out.status).toBe("destroyed");
    expect(out.errors).toEqual([]);
    expect(out.removed).toContain(`resource group ${GROUP} (deleted through ARM)`);
    expect(out.left).toEqual([]);
    expect(lines.some((l) => /destroy attempt 1 of 2 failed .*AnotherOperationInProgress/.test(l))).toBe(true);
    expect(lines).toContain(`azure: deleting the run's resource group ${GROUP} through ARM (pulumi destroy failed) and waiting for it…`);
  });

  it("destroy succeeds but ARM still holds the group (a VM Pulumi never recorded): the group is deleted, left: none", async () => {
    const { driver } = fakeDriver();
    const arm = fakeArm({ tags: OWNED, resources: [VM_ID] });
    const out = await tearDownStack(subject(), { open: async () => driver, groups: async () => arm.groups, log: () => undefined });
    expect(arm.calls).toContain(`delete ${GROUP}`);
    expect(out).toMatchObject({ status: "destroyed", errors: [], left: [] });
  });

  it("a group not tagged as this run's is never deleted: the failure and what is left are reported", async () => {
    const failure = destroyFailure("another-operation-in-progress.409.json");
    const { driver, calls } = fakeDriver({ destroyErrors: [failure] });
    const arm = fakeArm({ tags: { owner: "latlab", runId: "another-run" }, resources: [VM_ID] });
    const out = await tearDownStack(subject(), { open: async () => driver, groups: async () => arm.groups, log: () => undefined, attempts: 1 });
    expect(arm.calls.filter((c) => c.startsWith("delete"))).toEqual([]);
    expect(calls).not.toContain("remove");
    expect(out.status).toBe("leaked");
    const text = out.errors.join("\n");
    expect(text).toContain(`resource group ${GROUP} is not tagged owner=latlab, runId=${RUN_ID}: not deleting it`);
    expect(text).toContain(`Finish the teardown with: ${CMD}`);
    expect(out.left).toEqual([GROUP_ID, VM_ID]);
    expect(formatLeft(out)).toBe(`left:\n  ${GROUP_ID}\n  ${VM_ID}`);
  });

  it("the group's delete refused (409 ScopeLocked): leaked, with ARM's reason, what is left and the command that finishes it", async () => {
    const { driver } = fakeDriver({ destroyErrors: [destroyFailure("scope-locked.409.json")] });
    const arm = fakeArm({ tags: OWNED, resources: [VM_ID], deleteError: armError("scope-locked.409.json") });
    const lines: string[] = [];
    const out = await tearDownStack(subject(), { open: async () => driver, groups: async () => arm.groups, log: (m) => lines.push(m), attempts: 1 });
    expect(out.status).toBe("leaked");
    const text = out.errors.join("\n");
    expect(text).toMatch(new RegExp(`deleting resource group ${GROUP} through ARM failed: 409 ScopeLocked: The scope .* cannot perform delete operation because following scope\\(s\\) are locked`));
    expect(text).toContain("leaked (they keep costing money)");
    expect(text).toContain(`Finish the teardown with: ${CMD}`);
    expect(out.left).toEqual([GROUP_ID, VM_ID]);
    expect(lines.some((l) => l.includes(`run ${RUN_ID} is leaked; finish with: ${CMD}`))).toBe(true);
  });

  it("a group ARM no longer knows (404 ResourceGroupNotFound on delete) counts as gone", async () => {
    const failure = destroyFailure("another-operation-in-progress.409.json");
    const { driver } = fakeDriver({ destroyErrors: [failure] });
    const arm = fakeArm({ tags: OWNED, deleteError: armError("resource-group-not-found.404.json") });
    // ARM deleted it meanwhile: the delete answers 404, the listing is empty.
    const groups: RunGroups = { ...arm.groups, resources: async () => (arm.calls.some((c) => c.startsWith("delete")) ? [] : [GROUP_ID]) };
    const out = await tearDownStack(subject(), { open: async () => driver, groups: async () => groups, log: () => undefined, attempts: 1 });
    expect(out).toMatchObject({ status: "destroyed", errors: [], left: [] });
  });

  it("a refresh that fails is not fatal: destroy goes on from the recorded state", async () => {
    const { driver, calls } = fakeDriver({ refreshError: new Error("code: 1\n stdout: \n stderr: error: refresh failed\n err?: ") });
    const lines: string[] = [];
    const out = await tearDownStack(subject(), { open: async () => driver, groups: async () => fakeArm().groups, log: (m) => lines.push(m) });
    expect(calls).toEqual(["refresh", "destroy", "remove"]);
    expect(out.status).toBe("destroyed");
    expect(lines.some((l) => /pulumi refresh of stack .* failed .*destroying from the recorded state/.test(l))).toBe(true);
  });

  it("ARM cannot be asked (no subscription): a clean destroy is still clean, and says it could not check", async () => {
    const { driver } = fakeDriver();
    const out = await tearDownStack(subject(), { open: async () => driver, groups: async () => Promise.reject(new Error("no subscription")), log: () => undefined });
    expect(out.status).toBe("destroyed");
    expect(out.left).toBeNull();
    expect(formatLeft(out)).toBe("left: unknown (ARM could not be asked: no subscription)");
  });
});
