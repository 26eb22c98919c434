import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { main } from "../../../../../src/cli/main.ts";
import { buildPlan, defineExperiment } from "../../../../../src/index.ts";
import { AzureTarget, AzureTargetError, type Rehearsal } from "../../../../../src/targets/azure/lifecycle/azureTarget.ts";
import { destroyRun, RUN_TAGS, runStackTags, writeRunState, type RunGroups } from "../../../../../src/targets/azure/lifecycle/destroyRun.ts";
import {
  BACKEND_ENV,
  isStateFolderBackend,
  passphraseFromEnv,
  PulumiBackendError,
  remotePassphrase,
  requestedBackend,
  runBackend,
} from "../../../../../src/targets/azure/lifecycle/pulumiBackend.ts";
import { StackNotFoundError, type StackFactory, type StackOpenOptions } from "../../../../../src/targets/azure/lifecycle/stack.ts";
import { hostName, type AzureSettings } from "../../../../../src/targets/azure/program/types.ts";
import type { TargetContext } from "../../../../../src/targets/target.ts";
import { tempDirs } from "../../../../tempDirs.ts";

const tempDir = tempDirs();
const RUN_ID = "20260101-120000-f00d";
const AZBLOB = "azblob://latlab-state?storage_account=latlabstate";

describe("the backend a command asks for (--backend, else LATLAB_PULUMI_BACKEND)", () => {
  it("--backend wins over the environment; the environment is used without it; an empty variable is unset", () => {
    expect(requestedBackend(AZBLOB, { [BACKEND_ENV]: "file:///elsewhere" })).toEqual({ url: AZBLOB, from: "--backend" });
    expect(requestedBackend(undefined, { [BACKEND_ENV]: AZBLOB })).toEqual({ url: AZBLOB, from: BACKEND_ENV });
    // An unset repository variable reaches the step as "": the default backend, not an error.
    expect(requestedBackend(undefined, { [BACKEND_ENV]: "" })).toBeUndefined();
    expect(requestedBackend(undefined, { [BACKEND_ENV]: "  " })).toBeUndefined();
    expect(requestedBackend(undefined, {})).toBeUndefined();
  });

  it("a value that is not a backend URL is refused, naming where it came from", () => {
    expect(() => requestedBackend("latlab-state", {})).toThrow(/^--backend: "latlab-state" is not a Pulumi backend URL: expected a Pulumi backend URL such as azblob:/);
    expect(() => requestedBackend(undefined, { [BACKEND_ENV]: "latlabstate/container" })).toThrow(/^LATLAB_PULUMI_BACKEND: "latlabstate\/container" is not/);
    expect(() => requestedBackend("azblob://?storage_account=x", {})).toThrow(/azblob:\/\/ needs a container/);
    expect(() => requestedBackend("azblob://", {})).toThrow(PulumiBackendError);
  });

  it("file://~/x and file://./x become absolute (a later destroy may run from another folder)", () => {
    expect(requestedBackend("file://~/pulumi-state", {})!.url).toBe(`file://${join(homedir(), "pulumi-state")}`);
    expect(requestedBackend("file://./st", {})!.url).toBe(`file://${join(process.cwd(), "st")}`);
  });

  it("only a file backend in (or under) the run's state folder goes with the machine; anything else outlives it", () => {
    const stateDir = "/var/lib/latlab/runs/r1";
    expect(isStateFolderBackend(`file://${stateDir}`, stateDir)).toBe(true);
    expect(isStateFolderBackend(`file://${stateDir}/`, stateDir)).toBe(true);
    expect(isStateFolderBackend(`file://${stateDir}/sub?no_tmp_dir=true`, stateDir)).toBe(true);
    expect(isStateFolderBackend(`file://${stateDir}-other`, stateDir)).toBe(false);
    expect(isStateFolderBackend("file:///var/lib/latlab/runs", stateDir)).toBe(false);
    expect(isStateFolderBackend("file:///srv/pulumi", stateDir)).toBe(false);
    expect(isStateFolderBackend(AZBLOB, stateDir)).toBe(false);

    expect(runBackend(undefined, stateDir, {})).toEqual({ url: `file://${stateDir}`, remote: false });
    expect(runBackend(`file://${stateDir}`, stateDir, {})).toEqual({ url: `file://${stateDir}`, remote: false, from: "--backend" });
    expect(runBackend(undefined, stateDir, { [BACKEND_ENV]: AZBLOB })).toEqual({ url: AZBLOB, remote: true, from: BACKEND_ENV });
    const elsewhere = tempDir("latlab-backend-");
    expect(runBackend(`file://${elsewhere}`, stateDir, {})).toMatchObject({ url: `file://${elsewhere}`, remote: true });
    // Pulumi does not make a file backend's folder: said before anything starts.
    expect(() => runBackend(`file://${elsewhere}/missing`, stateDir, {})).toThrow(new RegExp(`^--backend: ${elsewhere}/missing does not exist: a Pulumi file backend is a folder that must exist`));
  });
});

describe("the stack passphrase from the environment (as the Pulumi CLI reads it)", () => {
  it("PULUMI_CONFIG_PASSPHRASE first, else the file PULUMI_CONFIG_PASSPHRASE_FILE names, trimmed, relative to the working folder", () => {
    const dir = tempDir("latlab-pass-");
    writeFileSync(join(dir, "pass.txt"), "  from-the-file\n");
    expect(passphraseFromEnv({ PULUMI_CONFIG_PASSPHRASE: "direct", PULUMI_CONFIG_PASSPHRASE_FILE: join(dir, "pass.txt") })).toEqual({ passphrase: "direct", from: "PULUMI_CONFIG_PASSPHRASE" });
    expect(passphraseFromEnv({ PULUMI_CONFIG_PASSPHRASE_FILE: join(dir, "pass.txt") })).toEqual({ passphrase: "from-the-file", from: "PULUMI_CONFIG_PASSPHRASE_FILE" });
    expect(passphraseFromEnv({ PULUMI_CONFIG_PASSPHRASE_FILE: "pass.txt" }, dir)!.passphrase).toBe("from-the-file");
    // A workflow's unset secret is "": not a passphrase.
    expect(passphraseFromEnv({ PULUMI_CONFIG_PASSPHRASE: "", PULUMI_CONFIG_PASSPHRASE_FILE: join(dir, "pass.txt") })!.from).toBe("PULUMI_CONFIG_PASSPHRASE_FILE");
    expect(passphraseFromEnv({ PULUMI_CONFIG_PASSPHRASE: "" })).toBeUndefined();
    expect(passphraseFromEnv({})).toBeUndefined();
  });

  it("a file that cannot be read, or is empty, is an error naming the variable and the file", () => {
    const dir = tempDir("latlab-pass-");
    writeFileSync(join(dir, "empty"), "\n \n");
    expect(() => passphraseFromEnv({ PULUMI_CONFIG_PASSPHRASE_FILE: join(dir, "missing") })).toThrow(new RegExp(`^PULUMI_CONFIG_PASSPHRASE_FILE: cannot read ${join(dir, "missing")}`));
    expect(() => passphraseFromEnv({ PULUMI_CONFIG_PASSPHRASE_FILE: join(dir, "empty") })).toThrow(/PULUMI_CONFIG_PASSPHRASE_FILE: .*empty is empty/);
  });

  it("a backend that outlives the machine without one: refused, naming both variables, without the URL's credentials", () => {
    const backend = { url: `${AZBLOB}&sig=SECRETSAS`, from: BACKEND_ENV } as const;
    expect(() => remotePassphrase(backend, {})).toThrow(PulumiBackendError);
    const message = (() => {
      try {
        remotePassphrase(backend, { PULUMI_CONFIG_PASSPHRASE: "" });
      } catch (e) {
        return (e as Error).message;
      }
      return "";
    })();
    expect(message).toMatch(/azblob:\/\/latlab-state \(LATLAB_PULUMI_BACKEND\) outlives this machine/);
    expect(message).toMatch(/PULUMI_CONFIG_PASSPHRASE .*PULUMI_CONFIG_PASSPHRASE_FILE/);
    expect(message).toMatch(/never writes the passphrase .* to disk\. Nothing was deployed$/);
    expect(message).not.toContain("SECRETSAS");
    expect(remotePassphrase(backend, { PULUMI_CONFIG_PASSPHRASE: "pp" })).toEqual({ passphrase: "pp", from: "PULUMI_CONFIG_PASSPHRASE" });
  });
});

// ---------------------------------------------------------------------------------------------
// The run and `latlab destroy` with such a backend, against fakes of the stack, ARM and the emulator.

const plan = buildPlan(defineExperiment({ name: "remote", description: "x", defaults: { region: "uksouth" }, hosts: { client: {}, server: {} }, measure: [{ tool: "ping" }] }));

/** A fake StackFactory over one "backend" (a map of stack name → tags); `existing` opens only what is there. */
function fakeBackend(stacks: Map<string, Record<string, string>> = new Map()) {
  const opened: StackOpenOptions[] = [];
  const calls: string[] = [];
  const factory: StackFactory = {
    async open(o) {
      opened.push(o);
      calls.push("open");
      if (o.existing && !stacks.has(o.stackName)) throw new StackNotFoundError(o.stackName, o.backendUrl, new Error(`error: no stack named '${o.stackName}' found`));
      if (!stacks.has(o.stackName)) stacks.set(o.stackName, {});
      Object.assign(stacks.get(o.stackName)!, o.tags ?? {});
      let outputs: unknown = {};
      return {
        stackName: o.stackName,
        async up() {
          calls.push("up");
          outputs = await o.program!();
        },
        outputs: async () => outputs as Record<string, unknown>,
        async refresh() {
          calls.push("refresh");
        },
        async cancel() {
          calls.push("cancel");
          throw new Error("no update in progress");
        },
        async destroy() {
          calls.push("destroy");
        },
        async remove() {
          calls.push("remove");
          stacks.delete(o.stackName);
        },
        tags: async () => ({ "pulumi:project": "latlab", ...(stacks.get(o.stackName) ?? {}) }),
      };
    },
  };
  return { factory, opened, calls, stacks };
}

const goneGroups = async (): Promise<RunGroups> => ({ tags: async () => undefined, delete: async () => undefined, resources: async () => [] });

function target(root: string, fake: StackFactory, env: NodeJS.ProcessEnv, over: { backendUrl?: string; rehearsal?: () => Promise<Rehearsal> } = {}) {
  return new AzureTarget({
    stackFactory: fake,
    createProgram: (p, settings: AzureSettings) => async () => ({
      resourceGroup: `latlab-${settings.runId}`,
      hosts: p.deployments.flatMap((d) => d.hosts.map((h) => ({ deployment: d.id, role: h.role, publicIp: "198.19.0.1", privateIp: "10.0.0.4", hostKey: settings.hostKeys[hostName(d.index, h.role)]!.publicKey, vmName: "vm" }))),
    }),
    sshFrom: "203.0.113.7/32",
    resultsRoot: root,
    runGroups: goneGroups,
    destroyAttempts: 1,
    env: { LATLAB_STATE_DIR: join(root, "state"), ...env },
    subscriptionId: "00000000-1111-2222-3333-444444444444",
    ...(over.backendUrl ? { backendUrl: over.backendUrl } : {}),
    ...(over.rehearsal ? { rehearsal: over.rehearsal } : {}),
  });
}

describe("a run with a backend that outlives its state folder", () => {
  it("without a passphrase in the environment: refused before anything starts (no emulator, no state folder, no stack)", async () => {
    const root = tempDir("latlab-remote-");
    mkdirSync(join(root, "backend"));
    const fake = fakeBackend();
    let rehearsals = 0;
    const t = target(root, fake.factory, { [BACKEND_ENV]: `file://${join(root, "backend")}` }, {
      rehearsal: async () => {
        rehearsals++;
        throw new Error("must not start");
      },
    });
    const ctx: TargetContext = { runId: RUN_ID, runDir: join(root, RUN_ID), log: () => undefined };
    await expect(t.up(plan, ctx)).rejects.toThrow(AzureTargetError);
    await expect(t.up(plan, ctx)).rejects.toThrow(/^azure target: the Pulumi backend file:\/\/.* \(LATLAB_PULUMI_BACKEND\) outlives this machine.*Nothing was deployed$/s);
    expect(rehearsals).toBe(0);
    expect(fake.calls).toEqual([]);
    expect(existsSync(join(root, "state"))).toBe(false);
    expect(existsSync(join(root, RUN_ID))).toBe(false);
    expect((await t.down()).status).toBe("not-started");
  });

  it("with PULUMI_CONFIG_PASSPHRASE_FILE: the stack gets that passphrase and the run's tags; no passphrase is written to the state folder", async () => {
    const root = tempDir("latlab-remote-");
    writeFileSync(join(root, "pass"), "the-secret-passphrase\n");
    const fake = fakeBackend();
    const t = target(root, fake.factory, { PULUMI_CONFIG_PASSPHRASE_FILE: join(root, "pass") }, { backendUrl: AZBLOB });
    const ctx: TargetContext = { runId: RUN_ID, runDir: join(root, RUN_ID), log: () => undefined };
    await t.up(plan, ctx);
    const o = fake.opened[0]!;
    expect([o.backendUrl, o.passphrase]).toEqual([AZBLOB, "the-secret-passphrase"]);
    expect(o.tags).toEqual({ [RUN_TAGS.expiresAt]: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), [RUN_TAGS.subscriptionId]: "00000000-1111-2222-3333-444444444444" });
    const stateDir = join(root, "state", RUN_ID);
    expect(readdirSync(stateDir)).not.toContain("passphrase");
    expect((await t.down()).status).toBe("ok");
    expect(readdirSync(stateDir)).not.toContain("passphrase");
  });

  it("the default backend (and an explicit file:// in the state folder) keeps the stack untagged and its random passphrase in the state folder", async () => {
    const root = tempDir("latlab-remote-");
    const fake = fakeBackend();
    const t = target(root, fake.factory, {}, { backendUrl: `file://${join(root, "state", RUN_ID)}` });
    await t.up(plan, { runId: RUN_ID, runDir: join(root, RUN_ID), log: () => undefined });
    expect(fake.opened[0]!.tags).toBeUndefined();
    expect(readdirSync(join(root, "state", RUN_ID))).toContain("passphrase");
    await t.down();
  });

  it("a rehearsal's stack tags name its emulator's folder; values Pulumi would refuse fail before the deploy", () => {
    expect(runStackTags({ expiresAt: "2026-01-01T12:00:00.000Z", rehearsal: { emulatorHome: "/tmp/latlab-azemu-abc" } })).toEqual({
      [RUN_TAGS.expiresAt]: "2026-01-01T12:00:00.000Z",
      [RUN_TAGS.rehearsalHome]: "/tmp/latlab-azemu-abc",
    });
    expect(() => runStackTags({ expiresAt: "2026-01-01T12:00:00.000Z", rehearsal: { emulatorHome: `/${"x".repeat(300)}` } })).toThrow(/latlab:rehearsalHome/);
  });
});

describe("latlab destroy <runId> --backend <url> on a machine without the run's state folder", () => {
  const tagsOfRun = (over: Record<string, string> = {}) => ({ [RUN_TAGS.expiresAt]: "2026-01-01T20:00:00.000Z", ...over });

  it("finds the stack latlab-<runId> in the backend (never creating one), destroys it from its state and removes it; nothing written here", async () => {
    const root = tempDir("latlab-remote-destroy-");
    const fake = fakeBackend(new Map([[`latlab-${RUN_ID}`, tagsOfRun()]]));
    const env = { LATLAB_STATE_DIR: join(root, "state"), PULUMI_CONFIG_PASSPHRASE: "pp" };
    const logs: string[] = [];
    const report = await destroyRun(RUN_ID, { backendUrl: AZBLOB, resultsRoot: join(root, "results"), stackFactory: fake.factory, env, log: (m) => logs.push(m), runGroups: goneGroups });
    expect(report.status).toBe("ok");
    expect(report.left).toEqual([]);
    // A blob backend's lock cannot be checked for a live process: a vanished runner's update is cancelled (teardown.ts).
    expect(fake.calls).toEqual(["open", "cancel", "refresh", "destroy", "remove"]);
    expect(fake.opened[0]).toMatchObject({ stackName: `latlab-${RUN_ID}`, backendUrl: AZBLOB, passphrase: "pp", existing: true, config: {}, env: { PULUMI_FALLBACK_TO_STATE_SECRETS_MANAGER: "true" } });
    expect(fake.stacks.size).toBe(0);
    // Its workspace was a temp folder, gone; no state folder made.
    expect(existsSync(fake.opened[0]!.workDir!)).toBe(false);
    expect(existsSync(join(root, "state"))).toBe(false);
    expect(logs.join("\n")).toMatch(/no state folder on this machine; looking for stack latlab-20260101-120000-f00d in azblob:\/\/latlab-state \(--backend\)/);
  });

  it("LATLAB_PULUMI_BACKEND stands for --backend; a rehearsal's tag resumes its emulator, whose environment the stack is reopened with", async () => {
    const root = tempDir("latlab-remote-destroy-");
    const home = join(root, "latlab-azemu-x");
    mkdirSync(join(root, "backend"));
    const fake = fakeBackend(new Map([[`latlab-${RUN_ID}`, tagsOfRun({ [RUN_TAGS.rehearsalHome]: home })]]));
    const resumed: string[] = [];
    let stopped = 0;
    const rehearsal = {
      emulatorHome: home,
      env: { LATLAB_EMULATOR_SOCKET: join(home, "arm.sock") },
      groups: await goneGroups(),
      stop: async () => {
        stopped++;
        return { errors: [], removed: [`directory ${home}`] };
      },
    } as unknown as Rehearsal;
    const report = await destroyRun(RUN_ID, {
      resultsRoot: join(root, "results"),
      stackFactory: fake.factory,
      env: { [BACKEND_ENV]: `file://${join(root, "backend")}`, PULUMI_CONFIG_PASSPHRASE: "pp", LATLAB_STATE_DIR: join(root, "state") },
      log: () => undefined,
      resumeRehearsal: async (h) => {
        resumed.push(h);
        return rehearsal;
      },
    });
    expect(report.status).toBe("ok");
    expect(resumed).toEqual([home]);
    expect(stopped).toBe(1);
    expect(report.removed).toContain(`directory ${home}`);
    expect(fake.opened.map((o) => o.env)).toEqual([
      { PULUMI_FALLBACK_TO_STATE_SECRETS_MANAGER: "true" },
      { PULUMI_FALLBACK_TO_STATE_SECRETS_MANAGER: "true", LATLAB_EMULATOR_SOCKET: join(home, "arm.sock") },
    ]);
    expect(fake.opened.every((o) => o.existing === true && o.backendUrl === `file://${join(root, "backend")}`)).toBe(true);
  });

  it("without a passphrase in the environment: refused, nothing opened", async () => {
    const root = tempDir("latlab-remote-destroy-");
    const fake = fakeBackend(new Map([[`latlab-${RUN_ID}`, tagsOfRun()]]));
    await expect(destroyRun(RUN_ID, { backendUrl: AZBLOB, resultsRoot: root, stackFactory: fake.factory, env: { LATLAB_STATE_DIR: join(root, "state") }, log: () => undefined })).rejects.toThrow(
      /PULUMI_CONFIG_PASSPHRASE .*PULUMI_CONFIG_PASSPHRASE_FILE.*Nothing was touched$/s,
    );
    expect(fake.calls).toEqual([]);
  });

  it("a backend without the run's stack: a clear error naming the stack and the backend; none is created", async () => {
    const root = tempDir("latlab-remote-destroy-");
    const fake = fakeBackend();
    await expect(
      destroyRun(RUN_ID, { backendUrl: AZBLOB, resultsRoot: root, stackFactory: fake.factory, env: { LATLAB_STATE_DIR: join(root, "state"), PULUMI_CONFIG_PASSPHRASE: "pp" }, log: () => undefined }),
    ).rejects.toThrow(/^azblob:\/\/latlab-state holds no stack latlab-20260101-120000-f00d: run 20260101-120000-f00d was destroyed already, never deployed, or used another backend/);
    expect(fake.stacks.size).toBe(0);
    await expect(destroyRun("not/a/run", { backendUrl: AZBLOB, resultsRoot: root, stackFactory: fake.factory, env: { PULUMI_CONFIG_PASSPHRASE: "pp" }, log: () => undefined })).rejects.toThrow(
      /"not\/a\/run" is neither a run id nor a results folder/,
    );
    expect(fake.calls).toEqual(["open"]);
  });

  it("where the state folder is: its recorded backend is used; a different --backend is refused before anything", async () => {
    const root = tempDir("latlab-remote-destroy-");
    const stateDir = join(root, "state", RUN_ID);
    mkdirSync(stateDir, { recursive: true });
    await writeRunState(stateDir, {
      runId: RUN_ID,
      projectName: "latlab",
      stackName: `latlab-${RUN_ID}`,
      backendUrl: AZBLOB,
      passphrase: "env",
      resourceGroup: null,
      createdAt: "2026-01-01T12:00:00.000Z",
      expiresAt: "2026-01-01T20:00:00.000Z",
      status: "deploying",
      updatedAt: "2026-01-01T12:00:00.000Z",
    });
    const fake = fakeBackend(new Map([[`latlab-${RUN_ID}`, tagsOfRun()]]));
    const env = { LATLAB_STATE_DIR: join(root, "state"), PULUMI_CONFIG_PASSPHRASE: "pp" };
    await expect(destroyRun(RUN_ID, { backendUrl: "azblob://other?storage_account=x", resultsRoot: root, stackFactory: fake.factory, env, log: () => undefined })).rejects.toThrow(
      /^--backend azblob:\/\/other: run 20260101-120000-f00d's state .* records its stack in azblob:\/\/latlab-state; nothing was touched/,
    );
    expect(fake.calls).toEqual([]);
    const report = await destroyRun(RUN_ID, { backendUrl: AZBLOB, resultsRoot: root, stackFactory: fake.factory, env, log: () => undefined, runGroups: goneGroups });
    expect(report.status).toBe("ok");
    expect(fake.opened[0]).toMatchObject({ backendUrl: AZBLOB, passphrase: "pp", workDir: join(stateDir, "workspace") });
  });
});

describe("latlab destroy's --backend (the CLI, before any Pulumi CLI is needed)", () => {
  afterEach(() => vi.unstubAllEnvs());
  async function cli(args: string[]): Promise<{ code: number; stderr: string }> {
    let stderr = "";
    const out = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    const err = vi.spyOn(process.stderr, "write").mockImplementation((c: string | Uint8Array) => ((stderr += String(c)), true));
    try {
      return { code: await main(args), stderr };
    } finally {
      out.mockRestore();
      err.mockRestore();
    }
  }

  it("a --backend that is not a URL, or LATLAB_PULUMI_BACKEND without a passphrase, is refused naming the flag or variable", async () => {
    const root = tempDir("latlab-cli-remote-");
    vi.stubEnv("LATLAB_STATE_DIR", join(root, "state"));
    vi.stubEnv("PULUMI_CONFIG_PASSPHRASE", "");
    vi.stubEnv("PULUMI_CONFIG_PASSPHRASE_FILE", "");
    const bad = await cli(["destroy", RUN_ID, "--backend", "latlabstate"]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/--backend: "latlabstate" is not a Pulumi backend URL/);

    vi.stubEnv("LATLAB_PULUMI_BACKEND", `file://${root}`);
    const noPass = await cli(["destroy", RUN_ID]);
    expect(noPass.code).not.toBe(0);
    expect(noPass.stderr).toMatch(/\(LATLAB_PULUMI_BACKEND\) outlives this machine.*Nothing was touched/s);
    expect(existsSync(join(root, "state"))).toBe(false);
  });
});
