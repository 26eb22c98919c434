import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { buildPlan, defineExperiment, ResultsSchema } from "../../../../../src/index.ts";
import type { Plan } from "../../../../../src/plan/types.ts";
import type { Progress } from "../../../../../src/runner/progress.ts";
import { runExperiment } from "../../../../../src/runner/runExperiment.ts";
import { wavePlan } from "../../../../../src/plan/waves.ts";
import {
  AzureTarget,
  checkSshFrom,
  endpointsFromOutputs,
  makeRedactor,
  type AzureTargetOptions,
  type ProgramFactory,
  type Rehearsal,
} from "../../../../../src/targets/azure/lifecycle/azureTarget.ts";
import { AzureRunStateSchema } from "../../../../../src/targets/azure/lifecycle/destroyRun.ts";
import type { RunGroups } from "../../../../../src/targets/azure/lifecycle/runGroups.ts";
import { POINTER_FILE } from "../../../../../src/targets/azure/lifecycle/runState.ts";
import { AZURE_PROBE_COMMAND, AZURE_READY_COMMAND, parseAzureProbe } from "../../../../../src/targets/azure/access/probe.ts";
import {
  createPulumiStackFactory,
  PulumiCliMissingError,
  summarizeCommandError,
  diagnosticErrors,
  type StackDriver,
  type StackFactory,
  type StackOpenOptions,
  type StackOperationOptions,
} from "../../../../../src/targets/azure/lifecycle/stack.ts";
import { hostName, type AzureOutputs, type AzureSettings } from "../../../../../src/targets/azure/program/types.ts";
import { checkTtl, recommendedExpiresAt, validateSettings, worstCaseRun } from "../../../../../src/targets/azure/catalog/validateAzure.ts";
import type { TargetContext } from "../../../../../src/targets/target.ts";
import { abortAfterUp } from "../helpers.ts";

// ---------------------------------------------------------------------------------------------
// Fixtures: a plan of 2 deployments × 2 hosts, a stub program, a fake stack recording calls.

const experiment = defineExperiment({
  name: "flow",
  description: "deploy/teardown flow",
  defaults: { region: "uksouth" },
  axes: { accelnet: [false, true] },
  hosts: { client: {}, server: {} },
  measure: [{ tool: "ping" }],
});
const plan: Plan = buildPlan(experiment);

/** What the real program would output: one entry per host, the generated host key echoed back. */
function outputsFor(p: Plan, settings: AzureSettings): AzureOutputs {
  return {
    resourceGroup: `rg-${settings.runId}`,
    hosts: p.deployments.flatMap((d) =>
      d.hosts.map((h, i) => ({
        deployment: d.id,
        role: h.role,
        publicIp: `198.19.${d.index}.${10 + i}`,
        privateIp: `10.${d.index}.0.${4 + i}`,
        hostKey: settings.hostKeys[hostName(d.index, h.role)]!.publicKey,
        vmName: `vm-${hostName(d.index, h.role)}`,
      })),
    ),
  };
}

interface Behaviour {
  /** destroy() fails this many times (a transient 409), then works. */
  destroyFailsTimes?: number;
  /** Chunks up() streams before finishing. */
  upOutput?: string[];
  upError?: Error;
  /** up() waits for its signal, then rejects like Pulumi after SIGINT. */
  upHangs?: boolean;
  destroyError?: Error;
  removeError?: Error;
  openError?: Error;
  outputs?: (fromProgram: unknown) => unknown;
}

interface Fake {
  factory: StackFactory;
  calls: string[];
  opened: StackOpenOptions[];
  destroyOptions: StackOperationOptions[];
  upStarted: Promise<void>;
}

function fakeStack(b: Behaviour = {}): Fake {
  const calls: string[] = [];
  const opened: StackOpenOptions[] = [];
  const destroyOptions: StackOperationOptions[] = [];
  let started!: () => void;
  const upStarted = new Promise<void>((r) => (started = r));
  let destroyFailures = 0;
  const factory: StackFactory = {
    async open(o) {
      calls.push("open");
      opened.push(o);
      if (b.openError) throw b.openError;
      let programResult: unknown;
      const driver: StackDriver = {
        stackName: o.stackName,
        async up({ onOutput, signal }) {
          calls.push("up");
          started();
          for (const c of b.upOutput ?? ["Updating (flow):\n", "  + azure-native:resources:ResourceGroup rg creat", "ing (0s)\n"]) onOutput(c);
          if (b.upHangs) {
            await new Promise<void>((_, reject) => {
              if (signal?.aborted) reject(new Error("code: 255\n stdout: \n stderr: error: update canceled\n err?: "));
              signal?.addEventListener("abort", () => {
                calls.push("up:aborted");
                reject(new Error("code: 255\n stdout: \n stderr: error: update canceled\n err?: "));
              });
            });
          }
          if (b.upError) throw b.upError;
          programResult = await o.program!();
        },
        async outputs() {
          calls.push("outputs");
          return (b.outputs ? b.outputs(programResult) : programResult) as Record<string, unknown>;
        },
        async refresh({ onOutput }) {
          calls.push("refresh");
          onOutput("Refreshing (flow):\n");
        },
        async cancel() {
          calls.push("cancel");
        },
        async destroy(opts) {
          calls.push("destroy");
          destroyOptions.push(opts);
          opts.onOutput("Destroying (flow):\n  - azure-native:resources:ResourceGroup rg deleted\n");
          if (b.destroyError) throw b.destroyError;
          if (b.destroyFailsTimes && destroyFailures++ < b.destroyFailsTimes) throw new Error("code: 255\n stdout: \n stderr: error: deleting nsg: Status=409 Code=\"Conflict\"\n err?: ");
        },
        async remove() {
          calls.push("remove");
          if (b.removeError) throw b.removeError;
        },
      };
      return driver;
    },
  };
  return { factory, calls, opened, destroyOptions, upStarted };
}

const programCalls: { plan: Plan; settings: AzureSettings }[] = [];
const stubProgram: ProgramFactory = (p, settings) => {
  programCalls.push({ plan: p, settings });
  return async () => outputsFor(p, settings);
};

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  programCalls.length = 0;
});

const RUN_ID = "20260101-120000-abcd";

/** ARM after the destroy: the run's group gone (default), or still there — owned, with a delete ARM refuses (409 ScopeLocked). */
function armGroups(kind: "gone" | "locked" = "gone"): () => Promise<RunGroups> {
  const locked = Object.assign(new Error("The scope cannot perform delete operation because following scope(s) are locked"), { statusCode: 409, code: "ScopeLocked" });
  return async () => ({
    tags: async () => (kind === "gone" ? undefined : { owner: "latlab", runId: RUN_ID }),
    delete: async () => {
      throw locked;
    },
    resources: async (name) => (kind === "gone" ? [] : [`/subscriptions/s/resourceGroups/${name}`]),
  });
}

/** A rehearsal's emulator, faked: room for the run in every region; `stop` says it was called. */
const fakeRehearsal = (stops: string[]) => async (): Promise<Rehearsal> => ({
  emulatorHome: join(tmpdir(), "latlab-azemu-fake"),
  sshFrom: "203.0.113.7/32",
  addressSpace: "10.0.0.0/8",
  env: {},
  readyTimeoutSeconds: 1,
  facts: {},
  owns: () => true,
  groups: await armGroups("locked")(),
  // Room for the run: 100 vCPUs of the family in every region asked.
  readCapacity: async (r) => ({
    usages: Object.fromEntries(r.map((x) => [x, [{ name: { value: "cores", localizedValue: "Total Regional vCPUs" }, currentValue: 0, limit: 100 }, { name: { value: "standardDSv5Family", localizedValue: "Standard DSv5 Family vCPUs" }, currentValue: 0, limit: 100 }]])),
    skus: Object.fromEntries(r.map((x) => [x, [{ resourceType: "virtualMachines", name: "Standard_D2s_v5", family: "standardDSv5Family", locations: [x], locationInfo: [{ location: x, zones: ["1", "2", "3"] }], restrictions: [] }]])),
  }),
  stop: async () => (stops.push("stop"), { errors: [], removed: ["emulator: removed what the destroy left"] }),
});

function setup(b: Behaviour = {}, over: Partial<AzureTargetOptions> = {}) {
  const root = mkdtempSync(join(tmpdir(), "latlab-azure-"));
  dirs.push(root);
  const runDir = join(root, RUN_ID);
  const stateDir = join(root, "state", RUN_ID);
  const fake = fakeStack(b);
  const lines: string[] = [];
  const target = new AzureTarget({
    stackFactory: fake.factory,
    createProgram: stubProgram,
    sshFrom: "203.0.113.7/32",
    resultsRoot: root,
    runGroups: armGroups(),
    // The fakes' failures are permanent: one attempt each, unless a test asks for retries.
    destroyAttempts: 1,
    ...over,
    // Never the user's ~/.local/state: the run's state folder goes under the test's temp root.
    env: { LATLAB_STATE_DIR: join(root, "state"), ...(over.env ?? {}) },
  });
  const ctx: TargetContext = { runId: RUN_ID, runDir, log: (m) => lines.push(m) };
  return { target, fake, ctx, runDir, stateDir, root, lines };
}

const readState = (stateDir: string) => AzureRunStateSchema.parse(JSON.parse(readFileSync(join(stateDir, "state.json"), "utf8")));

/** Every file under a folder, relative paths. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else out.push(join(d, e.name).slice(dir.length + 1));
    }
  };
  if (existsSync(dir)) walk(dir);
  return out;
}

/** Every secret a run holds: no log line may contain any line of them. */
function secretsOf(stateDir: string, settings: AzureSettings): string[] {
  const client = readFileSync(join(stateDir, "client_rsa"), "utf8");
  const pass = readFileSync(join(stateDir, "passphrase"), "utf8").trim();
  return [client, ...Object.values(settings.hostKeys).map((k) => k.privateKey), pass];
}
const leaks = (text: string, secrets: string[]) =>
  secrets.flatMap((s) => s.split("\n").filter((l) => l.length >= 16 && !l.startsWith("-----"))).filter((piece) => text.includes(piece));

// ---------------------------------------------------------------------------------------------

describe("AzureTarget: deploy and teardown against a fake stack", () => {
  it("success: opens the run's stack on file://<runDir>, streams progress, maps outputs, then destroys and removes", async () => {
    const { target, fake, ctx, stateDir, lines } = setup();
    const env = await target.up(plan, ctx);

    expect(fake.calls).toEqual(["open", "up", "outputs"]);
    const o = fake.opened[0]!;
    expect(o.backendUrl).toBe(`file://${stateDir}`);
    expect(o.stackName).toBe(`latlab-${RUN_ID}`);
    expect(o.projectName).toBe("latlab");
    expect(o.config).toEqual({ "azure-native:location": "uksouth" });
    expect(o.passphrase).toBe(readFileSync(join(stateDir, "passphrase"), "utf8").trim());

    // Settings handed to the program.
    const { settings } = programCalls[0]!;
    expect(settings.sshFrom).toBe("203.0.113.7/32");
    expect(settings.adminUsername).toBe("latlab");
    expect(settings.sshPublicKey).toMatch(/^ssh-rsa /);
    expect(Object.keys(settings.hostKeys).sort()).toEqual(["d0-client", "d0-server", "d1-client", "d1-server"]);
    expect(settings.expiresAt.getTime()).toBe(recommendedExpiresAt(plan, settings.createdAt).getTime());
    expect(settings.expiresAt.getTime() - settings.createdAt.getTime()).toBeGreaterThan(worstCaseRun(plan).seconds * 1000);
    // The program's own check (createProgram → validateSettings) agrees with the target's.
    expect(checkTtl(plan, settings.expiresAt, settings.createdAt)).toEqual([]);
    expect(validateSettings(plan, settings).filter((i) => i.path === "settings.expiresAt")).toEqual([]);

    // Outputs → endpoints.
    const clientKey = readFileSync(join(stateDir, "client_rsa"), "utf8");
    expect(env.hosts).toHaveLength(4);
    const h = env.hosts.find((e) => e.deployment === plan.deployments[1]!.id && e.role === "server")!;
    expect(h).toEqual({
      deployment: plan.deployments[1]!.id,
      role: "server",
      ssh: { host: "198.19.1.11", port: 22, username: "latlab", privateKey: clientKey },
      hostKey: settings.hostKeys["d1-server"]!.publicKey,
      privateAddress: "10.1.0.5",
      publicAddress: "198.19.1.11",
      // Azure translates the public IP to the private one: public-path servers listen there.
      publicPathArrivesAt: "10.1.0.5",
      workDir: "/tmp/latlab",
      actual: {},
      ready: { command: AZURE_READY_COMMAND, timeoutSeconds: 15 * 60 },
      probe: { command: AZURE_PROBE_COMMAND, parse: parseAzureProbe },
    });
    // Each host gets its own `actual` (the runner merges the probe's fields into it).
    expect(new Set(env.hosts.map((e) => e.actual)).size).toBe(env.hosts.length);
    expect(env.facts).toMatchObject({ target: "azure", resourceGroup: `rg-${RUN_ID}`, stack: `latlab-${RUN_ID}`, backend: `file://${stateDir}`, stateDir });
    expect(env.shaping.latency).toBe("not-applicable");
    expect(readFileSync(join(stateDir, "known_hosts"), "utf8")).toContain(`198.19.1.11 ${settings.hostKeys["d1-server"]!.publicKey}`);

    // Progress streamed line by line, across chunk boundaries.
    expect(lines).toContain("azure: Updating (flow):");
    expect(lines).toContain("azure:   + azure-native:resources:ResourceGroup rg creating (0s)");
    expect(readState(stateDir)).toMatchObject({ runId: RUN_ID, status: "up", resourceGroup: `rg-${RUN_ID}`, backendUrl: `file://${stateDir}`, stackName: `latlab-${RUN_ID}`, passphrase: "file" });

    const secrets = secretsOf(stateDir, settings);
    const report = await target.down();
    expect(fake.calls).toEqual(["open", "up", "outputs", "refresh", "destroy", "remove"]);
    expect(report.status).toBe("ok");
    expect(report.errors).toEqual([]);
    expect(report.removed).toEqual(expect.arrayContaining([`Azure resources of stack latlab-${RUN_ID} (resource group rg-${RUN_ID})`, `Pulumi stack latlab-${RUN_ID}`]));
    expect(lines).toContain("azure:   - azure-native:resources:ResourceGroup rg deleted");
    // A second Ctrl-C must not be able to cancel the teardown from our side (only a hand-over stops Pulumi's destroy: handOver.test.ts).
    expect(fake.destroyOptions[0]!.signal?.aborted).not.toBe(true);
    // Nothing left that opens anything; the state says so.
    expect(existsSync(join(stateDir, "client_rsa"))).toBe(false);
    expect(existsSync(join(stateDir, "hostkeys"))).toBe(false);
    expect(readState(stateDir).status).toBe("destroyed");
    // Nor the passphrase, the backend or the workspace: the stack is gone; only the (secret-free) state stays.
    expect(filesUnder(stateDir)).toEqual(["state.json"]);
    expect(leaks(lines.join("\n") + JSON.stringify(env.facts) + JSON.stringify(report), secrets)).toEqual([]);
  });

  it("no private key or passphrase reaches the log, even when Pulumi's output or error echoes them", async () => {
    let echo: string[] = [];
    const { target, ctx, stateDir, lines } = setup({ upOutput: [] }, {
      stackFactory: {
        async open(o) {
          const settings = programCalls[0]!.settings;
          const client = readFileSync(join(stateDir, "client_rsa"), "utf8");
          const host = settings.hostKeys["d0-client"]!.privateKey;
          echo = [client, host, o.passphrase];
          return {
            stackName: o.stackName,
            async up({ onOutput }) {
              onOutput(`diagnostic: customData = ${JSON.stringify(host)}\n`);
              onOutput(`${client}\n`);
              onOutput(`passphrase ${o.passphrase}\n`);
              throw new Error(`code: 1\n stdout: \n stderr: error: bad key ${JSON.stringify(client)}\n err?: `);
            },
            outputs: async () => ({}),
            refresh: async ({ onOutput }) => onOutput(`${client}\n`),
            cancel: async () => undefined,
            destroy: async ({ onOutput }) => onOutput(`${host}\n`),
            remove: async () => undefined,
          };
        },
      },
    });
    const err = await target.up(plan, ctx).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    const report = await target.down();
    expect(report.status).toBe("ok");
    expect(echo).toHaveLength(3);
    const all = [...lines, (err as Error).message, JSON.stringify(report)].join("\n");
    expect(leaks(all, echo)).toEqual([]);
    expect(all).not.toMatch(/BEGIN [A-Z ]*PRIVATE KEY/);
    expect(all).toContain("[redacted");
    // state.json holds no secret either
    expect(leaks(readFileSync(join(stateDir, "state.json"), "utf8"), echo)).toEqual([]);
  });

  it("up fails: the error says why, and down() still destroys the partial stack and removes it", async () => {
    const { target, fake, ctx, stateDir } = setup({
      upError: new Error("code: 255\n stdout: Updating…\n stderr: error: 1 error occurred:\n\t* OverconstrainedAllocationRequest: no capacity for Standard_D2s_v5 in the PPG\n err?: "),
    });
    await expect(target.up(plan, ctx)).rejects.toThrow(/deploy failed: [\s\S]*OverconstrainedAllocationRequest[\s\S]*exit code 255/);
    expect(readState(stateDir).status).toBe("deploying");
    const report = await target.down();
    expect(fake.calls).toEqual(["open", "up", "refresh", "destroy", "remove"]);
    expect(report.status).toBe("ok");
    expect(readState(stateDir).status).toBe("destroyed");
  });

  it("SIGINT mid-deploy (the run's signal): up() rejects as interrupted, down() destroys the partial stack", async () => {
    const controller = new AbortController();
    const { target, fake, ctx } = setup({ upHangs: true }, { signal: controller.signal });
    const up = target.up(plan, ctx);
    await fake.upStarted;
    controller.abort();
    await expect(up).rejects.toThrow(/deploy interrupted/);
    const report = await target.down();
    expect(fake.calls).toEqual(["open", "up", "up:aborted", "refresh", "destroy", "remove"]);
    expect(report.status).toBe("ok");
  }, 15_000);

  it("SIGINT mid-deploy through a signal on the TargetContext (when the runner passes one)", async () => {
    const controller = new AbortController();
    const { target, fake, ctx } = setup({ upHangs: true });
    const up = target.up(plan, { ...ctx, signal: controller.signal } as TargetContext);
    await fake.upStarted;
    controller.abort();
    await expect(up).rejects.toThrow(/interrupted/);
    expect((await target.down()).status).toBe("ok");
    expect(fake.calls).toEqual(["open", "up", "up:aborted", "refresh", "destroy", "remove"]);
  }, 15_000);

  it("down() while up() is still running aborts the deploy, waits for it, then destroys", async () => {
    const { target, fake, ctx } = setup({ upHangs: true });
    const up = target.up(plan, ctx).catch((e: Error) => e);
    await fake.upStarted;
    const report = await target.down();
    expect((await up) as Error).toBeInstanceOf(Error);
    expect(fake.calls).toEqual(["open", "up", "up:aborted", "refresh", "destroy", "remove"]);
    expect(report.status).toBe("ok");
  }, 15_000);

  it("with the real runner: Ctrl-C mid-deploy → results.json interrupted, teardown ok, stack destroyed", async () => {
    const controller = new AbortController();
    const { target, fake, runDir } = setup({ upHangs: true }, { signal: controller.signal });
    const logs: string[] = [];
    const progress: Progress = { start() {}, cellStarted() {}, cellFinished() {}, log: (m) => logs.push(m), stop() {} };
    const run = runExperiment({ experiment, source: "flow.ts", plan, target, runId: RUN_ID, runDir, progress, signal: controller.signal });
    await fake.upStarted;
    controller.abort();
    const results = await run;
    expect(results.status).toBe("interrupted");
    expect(results.teardown.status).toBe("ok");
    expect(fake.calls).toEqual(["open", "up", "up:aborted", "refresh", "destroy", "remove"]);
    expect(ResultsSchema.parse(JSON.parse(readFileSync(join(runDir, "results.json"), "utf8"))).teardown.status).toBe("ok");
  }, 15_000);

  it("destroy fails: report failed, the run is leaked, the exact command is given, the stack is kept (remove not called)", async () => {
    const { target, fake, ctx, stateDir, lines } = setup(
      { destroyError: new Error("code: 255\n stdout: \n stderr: error: deleting resource group rg: StatusCode=409 Conflict\n err?: ") },
      { runGroups: armGroups("locked") },
    );
    await target.up(plan, ctx);
    const report = await target.down();
    expect(fake.calls).toEqual(["open", "up", "outputs", "refresh", "destroy"]);
    expect(report.status).toBe("failed");
    const text = report.errors.join("\n");
    expect(text).toMatch(/destroy of stack latlab-20260101-120000-abcd failed: .*409 Conflict/);
    expect(text).toContain("leaked");
    expect(text).toContain(`npx latlab destroy ${RUN_ID}`);
    expect(text).toContain(`resource group rg-${RUN_ID}`);
    expect(lines.some((l) => l.includes(`npx latlab destroy ${RUN_ID}`))).toBe(true);
    // What `latlab destroy` needs is kept.
    expect(readState(stateDir)).toMatchObject({ status: "leaked", resourceGroup: `rg-${RUN_ID}` });
    expect(existsSync(join(stateDir, "passphrase"))).toBe(true);
    expect(existsSync(join(stateDir, "client_rsa"))).toBe(true);
  });

  it("a rehearsal whose destroy leaked: once its emulator has stopped (removing the rest) the run is destroyed and its keys and passphrase are gone (issue 23)", async () => {
    const stops: string[] = [];
    const rehearsal = fakeRehearsal(stops);
    const { target, ctx, stateDir } = setup({ destroyError: new Error("code: 255\n stdout: \n stderr: error: destroy cancelled\n err?: ") }, { runGroups: armGroups("locked"), rehearsal });
    await target.up(plan, ctx);
    const report = await target.down();
    expect(stops).toEqual(["stop"]);
    expect(report.errors.join("\n")).toContain("on Azure these resources would now be leaked");
    expect(readState(stateDir).status).toBe("destroyed");
    for (const spent of ["client_rsa", "passphrase"]) expect(existsSync(join(stateDir, spent)), spent).toBe(false);
    expect(report.removed).toContain(`file ${join(stateDir, "passphrase")}`);
  });

  it("a rehearsal asks the real run's question: not confirmed (no terminal, no --yes), nothing is deployed (issue 23)", async () => {
    const asked: string[] = [];
    const stops: string[] = [];
    const { target, fake, ctx } = setup({}, { rehearsal: fakeRehearsal(stops), confirm: async (summary) => (asked.push(summary), false) });
    await expect(target.up(plan, ctx)).rejects.toThrow("azure target: deploy not confirmed; nothing was created (the rehearsal asks what the real run asks: --yes answers it)");
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatch(/^azure: run .* will create \d+ VMs .* — rehearsed: by the emulator, at no cost$/s);
    expect(fake.calls).not.toContain("up");
    await target.down();
    expect(stops).toEqual(["stop"]);
  });

  it("a destroy that fails now and then (Azure's 409s) is tried again: the run is not leaked", async () => {
    const { target, fake, ctx, lines } = setup({ destroyFailsTimes: 2 }, { destroyAttempts: 3, destroyRetryDelayMs: 1 });
    await target.up(plan, ctx);
    const report = await target.down();
    expect(fake.calls).toEqual(["open", "up", "outputs", "refresh", "destroy", "destroy", "destroy", "remove"]);
    expect(report.status).toBe("ok");
    expect(lines.filter((l) => /destroy attempt \d of 3 failed .*Conflict/.test(l))).toHaveLength(2);
  });

  it("a destroy that keeps failing is tried as often as allowed, then reported leaked once", async () => {
    const { target, fake, ctx } = setup({ destroyFailsTimes: 5 }, { destroyAttempts: 2, destroyRetryDelayMs: 1, runGroups: armGroups("locked") });
    await target.up(plan, ctx);
    const report = await target.down();
    expect(fake.calls).toEqual(["open", "up", "outputs", "refresh", "destroy", "destroy"]);
    expect(report.status).toBe("failed");
    expect(report.errors.filter((e) => e.includes("failed 2 times"))).toHaveLength(1);
  });

  it("destroy fails inside the real runner: results.json carries the leak and the command", async () => {
    const { target, runDir } = setup({ destroyError: new Error("boom") }, { runGroups: armGroups("locked") });
    const progress: Progress = { start() {}, cellStarted() {}, cellFinished() {}, log() {}, stop() {} };
    // No SSH here: outputs point nowhere, so stop the run right after a successful up().
    const controller = new AbortController();
    const results = await runExperiment({ experiment, source: "flow.ts", plan, target: abortAfterUp(target, controller), runId: RUN_ID, runDir, progress, signal: controller.signal });
    const onDisk = ResultsSchema.parse(JSON.parse(readFileSync(join(runDir, "results.json"), "utf8")));
    expect(results.teardown.status).toBe("failed");
    expect(onDisk.teardown.errors.join("\n")).toMatch(/leaked[\s\S]*npx latlab destroy 20260101-120000-abcd/);
  });

  it("destroy succeeds but stack removal fails: failed, not leaked, command to finish given", async () => {
    const { target, fake, ctx, stateDir } = setup({ removeError: new Error("stack has resources") });
    await target.up(plan, ctx);
    const report = await target.down();
    expect(fake.calls.slice(-2)).toEqual(["destroy", "remove"]);
    expect(report.status).toBe("failed");
    expect(report.errors.join("\n")).not.toContain("leaked");
    expect(report.errors.join("\n")).toContain(`npx latlab destroy ${RUN_ID}`);
    expect(readState(stateDir).status).toBe("stack-left");
  });

  it("down() twice (or concurrently) is harmless: one destroy, the same report", async () => {
    const { target, fake, ctx } = setup();
    await target.up(plan, ctx);
    const [a, b] = await Promise.all([target.down(), target.down()]);
    const c = await target.down();
    expect(fake.calls.filter((x) => x === "destroy")).toHaveLength(1);
    expect(a).toEqual(b);
    expect(c).toEqual(a);
  });

  it("down() before up() reports not-started", async () => {
    const { target, fake } = setup();
    expect(await target.down()).toEqual({ status: "not-started", errors: [], removed: [] });
    expect(fake.calls).toEqual([]);
  });

  it("a stack that cannot be opened (e.g. no Pulumi CLI): up() says how to fix it, down() has nothing to destroy", async () => {
    const { target, fake, ctx, stateDir } = setup({ openError: new PulumiCliMissingError("spawn pulumi ENOENT") });
    await expect(target.up(plan, ctx)).rejects.toThrow(/Pulumi CLI .*not found[\s\S]*--install-pulumi/);
    const report = await target.down();
    expect(fake.calls).toEqual(["open"]);
    expect(report.status).toBe("ok");
    expect(existsSync(join(stateDir, "client_rsa"))).toBe(false);
    expect(readState(stateDir).status).toBe("not-deployed");
  });

  it("a declined confirmation creates nothing; a wide-open --ssh-from is refused before anything", async () => {
    const declined = setup({}, { confirm: async (summary) => (expect(summary).toMatch(/4 VMs .* expiresAt=/), false) });
    await expect(declined.target.up(plan, declined.ctx)).rejects.toThrow(/not confirmed/);
    expect(declined.fake.calls).toEqual([]);
    expect(existsSync(declined.stateDir)).toBe(false);
    expect((await declined.target.down()).status).toBe("not-started");

    const open = setup({}, { sshFrom: "0.0.0.0/0" });
    await expect(open.target.up(plan, open.ctx)).rejects.toThrow(/opens SSH to everyone/);
    expect(open.fake.calls).toEqual([]);
  });

  it("the subscription the preflight settled on is the deploy's (azure-native:subscriptionId) and is kept in state.json for latlab destroy", async () => {
    const sub = "11111111-1111-4111-8111-111111111111";
    const { target, fake, ctx, stateDir } = setup({}, { subscriptionId: sub });
    await target.up(plan, ctx);
    expect(fake.opened[0]!.config).toEqual({ "azure-native:location": "uksouth", "azure-native:subscriptionId": sub });
    expect(readState(stateDir).subscriptionId).toBe(sub);
    await target.down();
  });

  it("placement evidence is read once the stack is up, kept on each host, and reaches results.json; a reader that throws fails nothing", async () => {
    const reads: AzureOutputs[] = [];
    const placement = { readAt: "2026-01-01T12:00:00.000Z", source: "azure" as const, ppg: { name: "p", status: "NotAligned" as const }, vm: { name: "vm", read: "ok" as const, platformFaultDomain: 1 } };
    const controller = new AbortController();
    const { target, fake, runDir } = setup({}, {
      readPlacement: async (p, outputs) => {
        reads.push(outputs);
        return Object.fromEntries(p.deployments.flatMap((d) => d.hosts.map((h) => [`${d.id}/${h.role}`, placement])));
      },
    });
    const logs: string[] = [];
    const progress: Progress = { start() {}, cellStarted() {}, cellFinished() {}, log: (m) => logs.push(m), stop() {} };
    // The run stops once the hosts are up (no SSH to the fake addresses): results.json still records them.
    const results = await runExperiment({ experiment, source: "flow.ts", plan, target: abortAfterUp(target, controller), runId: RUN_ID, runDir, progress, signal: controller.signal });
    expect(fake.calls.slice(0, 3)).toEqual(["open", "up", "outputs"]);
    expect(reads).toHaveLength(1);
    expect(reads[0]!.resourceGroup).toBe(`rg-${RUN_ID}`);
    const saved = ResultsSchema.parse(JSON.parse(readFileSync(join(runDir, "results.json"), "utf8")));
    for (const r of [results, saved]) expect(r.variants.flatMap((v) => v.hosts.map((h) => h.placement))).toEqual(Array(4).fill(placement));
    expect(logs.some((l) => /^azure: placement: deployment .*, PPG 'p': NotAligned .*comparisons on these hosts will say so$/.test(l))).toBe(true);

    const failing = setup({}, { readPlacement: async () => Promise.reject(new Error("ARM down")) });
    const env = await failing.target.up(plan, failing.ctx);
    expect(env.hosts.every((h) => h.placement === undefined)).toBe(true);
    expect(failing.lines).toContain("azure: placement evidence not read: ARM down");
    await failing.target.down();
  });

  it("a subscription whose quota cannot hold the run: refused before any key, state or stack, naming family, region, need and availability", async () => {
    const usages = (limit: number) => [
      { name: { value: "cores", localizedValue: "Total Regional vCPUs" }, currentValue: 0, limit: 100 },
      { name: { value: "standardDSv5Family", localizedValue: "Standard DSv5 Family vCPUs" }, currentValue: 2, limit },
    ];
    const sku = (region: string) => ({ resourceType: "virtualMachines", name: "Standard_D2s_v5", family: "standardDSv5Family", locations: [region], locationInfo: [{ location: region, zones: ["1", "2", "3"] }], restrictions: [] });
    const regions: string[][] = [];
    const short = setup({}, { readCapacity: async (r) => (regions.push([...r]), { usages: Object.fromEntries(r.map((x) => [x, usages(4)])), skus: Object.fromEntries(r.map((x) => [x, [sku(x)]])) }) });
    const err = (await short.target.up(plan, short.ctx).catch((e: unknown) => e)) as Error;
    expect(err.message).toContain("the subscription cannot hold this run");
    expect(err.message).toMatch(/needed 8 .*available 2 \(limit 4, in use 2\)/);
    expect(regions).toEqual([[plan.deployments[0]!.hosts[0]!.region]]);
    expect(short.fake.calls).toEqual([]);
    expect(existsSync(short.stateDir)).toBe(false);

    // Enough quota: the confirmation shows the cost the preflight computed — of the whole run, said so.
    const summaries: string[] = [];
    const capacity = async (r: readonly string[]) => ({ usages: Object.fromEntries(r.map((x) => [x, usages(100)])), skus: Object.fromEntries(r.map((x) => [x, [sku(x)]])) });
    const enough = setup({}, { costSummary: "$0.404/h: about $0.12 for the expected 0.3 h", readCapacity: capacity, confirm: async (s) => (summaries.push(s), false) });
    await expect(enough.target.up(plan, enough.ctx)).rejects.toThrow(/not confirmed/);
    expect(summaries[0]).toContain("\n  cost of the whole run (every wave, when it goes in waves): $0.404/h: about $0.12 for the expected 0.3 h");
    expect(enough.lines.join("\n")).toMatch(/quotas and sizes ok — vCPUs: \S+ standardDSv5Family 8/);

    // A wave's confirmation: the wave's own cost, then the whole run's, each said to be what it is.
    const costOf = (p: Plan) => `$${(0.101 * p.deployments.length * 2).toFixed(3)}/h for ${p.deployments.length} deployment(s)`;
    const wave = wavePlan(plan, [plan.deployments[0]!.id]);
    const waved = setup({}, { costSummary: costOf(plan), costOf, readCapacity: capacity, confirm: async (s) => (summaries.push(s), false) });
    await expect(waved.target.up(wave, waved.ctx)).rejects.toThrow(/not confirmed/);
    expect(summaries[1]).toContain("\n  cost of this wave: $0.202/h for 1 deployment(s)\n  cost of the whole run, every wave: $0.404/h for 2 deployment(s)");
    // The whole run at once: one cost line.
    const whole = setup({}, { costSummary: costOf(plan), costOf, readCapacity: capacity, confirm: async (s) => (summaries.push(s), false) });
    await expect(whole.target.up(plan, whole.ctx)).rejects.toThrow(/not confirmed/);
    expect(summaries[2]).toMatch(/\n  cost: \$0\.404\/h for 2 deployment\(s\)$/);
  });

  it("waveLimits: the free quota read live, and the SKU entries read with it (each size's vCPUs and family for the waves); nothing is created", async () => {
    const sku = (region: string) => ({ resourceType: "virtualMachines", name: "Standard_D2s_v5", family: "standardDSv5Family", locations: [region], capabilities: [{ name: "vCPUs", value: "2" }] });
    const usages = [
      { name: { value: "cores", localizedValue: "Total Regional vCPUs" }, currentValue: 0, limit: 100 },
      { name: { value: "standardDSv5Family", localizedValue: "Standard DSv5 Family vCPUs" }, currentValue: 2, limit: 10 },
    ];
    const { target, ctx, fake } = setup({}, { readCapacity: async (r) => ({ usages: Object.fromEntries(r.map((x) => [x, usages])), skus: Object.fromEntries(r.map((x) => [x, [sku(x)]])) }) });
    const read = await target.waveLimits(plan, ctx);
    const region = plan.deployments[0]!.hosts[0]!.region;
    expect(read?.regions[region]).toMatchObject({ regionalVcpus: 100, familyVcpus: { standardDSv5Family: 8 } });
    expect(read?.skus).toEqual([sku(region)]);
    expect(fake.calls).toEqual([]);
  });

  it("an expiresAt the program's checkTtl would refuse is refused by the target first, naming the times; nothing is created", async () => {
    const createdAt = new Date("2026-01-01T12:00:00Z");
    const { target, fake, ctx, stateDir } = setup({}, { now: () => createdAt, expiresAt: (_p, c) => new Date(c.getTime() + 3600_000) });
    const err = (await target.up(plan, ctx).catch((e: unknown) => e)) as Error;
    expect(err.name).toBe("AzureTargetError");
    expect(err.message).toContain("created at 2026-01-01T12:00:00.000Z");
    expect(err.message).toContain("expiresAt 2026-01-01T13:00:00.000Z");
    expect(err.message).toMatch(/TTL 1 h 0 min is not longer than the run's worst case 1 h \d+ min/);
    expect(err.message).toContain(`Set expiresAt after ${recommendedExpiresAt(plan, createdAt).toISOString()}`);
    expect(fake.calls).toEqual([]);
    expect(programCalls).toHaveLength(0);
    expect(existsSync(stateDir)).toBe(false);
    expect((await target.down()).status).toBe("not-started");

    // Just past the worst case is accepted by both the target and the program.
    const edge = setup({}, { now: () => createdAt, expiresAt: (p, c) => new Date(c.getTime() + (worstCaseRun(p).seconds + 1) * 1000) });
    await edge.target.up(plan, edge.ctx);
    expect(validateSettings(plan, programCalls[0]!.settings).filter((i) => i.path === "settings.expiresAt")).toEqual([]);
    await edge.target.down();
  });

  it("outputs that do not match the plan fail up(); the stack is still destroyed", async () => {
    const { target, fake, ctx } = setup({
      outputs: (o) => ({ ...(o as AzureOutputs), hosts: (o as AzureOutputs).hosts.slice(1) }),
    });
    await expect(target.up(plan, ctx)).rejects.toThrow(/missing from the stack outputs/);
    expect((await target.down()).status).toBe("ok");
    expect(fake.calls.slice(-2)).toEqual(["destroy", "remove"]);
  });

  it("--backend URL and PULUMI_CONFIG_PASSPHRASE are used as given (and only a credential-free URL reaches facts)", async () => {
    const { target, fake, ctx, stateDir } = setup({}, { backendUrl: "https://user:tok@api.example.com/x?k=v", env: { PULUMI_CONFIG_PASSPHRASE: "from-env-passphrase" } });
    const env = await target.up(plan, ctx);
    expect(fake.opened[0]!.backendUrl).toBe("https://user:tok@api.example.com/x?k=v");
    expect(fake.opened[0]!.passphrase).toBe("from-env-passphrase");
    expect(existsSync(join(stateDir, "passphrase"))).toBe(false);
    expect(readState(stateDir).passphrase).toBe("env");
    expect(env.facts.backend).toBe("https://api.example.com/x");
    await target.down();
  });
});

describe("the run's state lives apart from its results", () => {
  it("after a run the results folder holds no private key, no passphrase, no Pulumi state: they are in the state folder (0700, files 0600), which results.json names", async () => {
    const { target, fake, runDir, stateDir } = setup({}, { runGroups: armGroups("locked") });
    // A leaked run keeps everything `latlab destroy` needs: the worst case for what sits where.
    const progress: Progress = { start() {}, cellStarted() {}, cellFinished() {}, log() {}, stop() {} };
    const controller = new AbortController();
    const results = await runExperiment({ experiment, source: "flow.ts", plan, target: abortAfterUp(target, controller), runId: RUN_ID, runDir, progress, signal: controller.signal });
    expect(fake.opened[0]!.backendUrl).toBe(`file://${stateDir}`);

    const inResults = filesUnder(runDir);
    expect(inResults.filter((f) => f.startsWith(".azure") || f.startsWith(".pulumi") || /passphrase|client_rsa|hostkeys|known_hosts/.test(f))).toEqual([]);
    for (const f of inResults) {
      const text = readFileSync(join(runDir, f), "utf8");
      expect(text, f).not.toMatch(/PRIVATE KEY/);
      expect(text, f).not.toContain(readFileSync(join(stateDir, "passphrase"), "utf8").trim());
    }
    // Where the state is: a pointer (no secret) and results.json's facts.
    expect(JSON.parse(readFileSync(join(runDir, POINTER_FILE), "utf8"))).toMatchObject({ runId: RUN_ID, stateDir });
    expect(results.environment.facts.stateDir).toBe(stateDir);

    expect(statSync(stateDir).mode & 0o777).toBe(0o700);
    for (const f of ["state.json", "passphrase", "client_rsa", "known_hosts", join("hostkeys", "d0-client_ed25519")]) expect(statSync(join(stateDir, f)).mode & 0o777, f).toBe(0o600);
    expect(readState(stateDir)).toMatchObject({ status: "leaked", resultsDir: runDir });
  });

  it("the Pulumi workspace is a fixed folder in the state folder, and the CLI version is pinned and recorded for destroy", async () => {
    const { target, fake, ctx, stateDir } = setup({}, {
      stackFactory: {
        async open(o) {
          const driver = await fakeStack().factory.open(o);
          fake.opened.push(o);
          return { ...driver, cliVersion: "3.259.0" };
        },
      },
    });
    await target.up(plan, ctx);
    expect(fake.opened[0]).toMatchObject({ workDir: join(stateDir, "workspace"), pulumiVersion: "3.259.0" });
    expect(readState(stateDir).pulumiVersion).toBe("3.259.0");
    await target.down();
  });
});

describe("pure helpers", () => {
  it("endpointsFromOutputs refuses a host key other than the generated one", () => {
    const keys = { client: { privateKey: "k", publicKey: "ssh-rsa AAAA" }, hosts: { "d0-a": { privateKey: "p", publicKey: "ssh-ed25519 AAAAgood" } } };
    const p = { ...plan, deployments: [{ ...plan.deployments[0]!, hosts: [{ ...plan.deployments[0]!.hosts[0]!, role: "a" }] }] };
    const out = (hostKey: string): AzureOutputs => ({ resourceGroup: "rg", hosts: [{ deployment: p.deployments[0]!.id, role: "a", publicIp: "1.2.3.4", privateIp: "10.0.0.4", hostKey, vmName: "v" }] });
    expect(endpointsFromOutputs(p, out("ssh-ed25519 AAAAgood comment"), keys, "latlab")[0]!.hostKey).toBe("ssh-ed25519 AAAAgood");
    expect(() => endpointsFromOutputs(p, out("ssh-ed25519 AAAAevil"), keys, "latlab")).toThrow(/host key other than/);
  });

  it("checkSshFrom accepts an address or CIDR and refuses the whole Internet", () => {
    expect(checkSshFrom("203.0.113.7")).toBe("203.0.113.7");
    expect(checkSshFrom("203.0.113.0/24")).toBe("203.0.113.0/24");
    for (const bad of ["*", "0.0.0.0/0", "::/0", "Internet", "any", "300.1.1.1", "1.2.3.4/33", "example.com"]) expect(() => checkSshFrom(bad)).toThrow(/--ssh-from/);
  });

  it("checkSshFrom refuses IPv6: the VMs' NSG rule could not let it in (IPv4 public addresses only)", () => {
    for (const v6 of ["2001:db8::1", "2001:db8::1/128", "2001:db8::/64", "::ffff:203.0.113.7"]) {
      expect(() => checkSshFrom(v6)).toThrow(/--ssh-from: "[^"]+" is IPv6, and the VMs have IPv4 public addresses only/);
    }
  });

  it("the TTL exceeds the worst case and grows with the plan", () => {
    const t0 = new Date("2026-01-01T00:00:00Z");
    const ttl = (p: Plan) => recommendedExpiresAt(p, t0).getTime() - t0.getTime();
    const small = ttl(plan);
    expect(small).toBeGreaterThan(worstCaseRun(plan).seconds * 1000);
    expect(small).toBeGreaterThanOrEqual(2 * 3600 * 1000);
    // recommendedExpiresAt rounds up to whole hours: a little longer may keep the TTL, a lot longer grows it.
    const bigger = buildPlan(experiment, { duration: { seconds: 600 } });
    const much = buildPlan(experiment, { duration: { seconds: 3600 } });
    expect(worstCaseRun(bigger).seconds).toBeGreaterThan(worstCaseRun(plan).seconds);
    expect(ttl(bigger)).toBeGreaterThanOrEqual(small);
    expect(ttl(much)).toBeGreaterThan(small);
    for (const p of [plan, bigger, much]) expect(checkTtl(p, recommendedExpiresAt(p, t0), t0)).toEqual([]);
  });

  it("summarizeCommandError gives the failed resources' errors from Pulumi's diagnostics (a real captured CommandError)", () => {
    const message = readFileSync(join(import.meta.dirname, "../../../../fixtures/pulumi/destroy-conflict.commanderror.txt"), "utf8");
    const summary = summarizeCommandError(new Error(message));
    expect(summary.split("\n")).toHaveLength(1);
    expect(summary).toMatch(/^azure-native:network:NetworkSecurityGroup latlab-\S+-nsg: deleting \/subscriptions\/\S+: Status=409 Code="Conflict"/);
    expect(summary).not.toContain("update failed");
    expect(summary).not.toContain("warning:");
  });

  it("diagnosticErrors keeps a provider's multi-line reason (\"1 error occurred:\" and a tab-indented bullet) on the resource's line", () => {
    const out = [
      "Updating (x):",
      "Diagnostics:",
      "  azure-native:compute:VirtualMachine (vm1):",
      "    error: 1 error occurred:",
      '    \t* creating/updating /subscriptions/s/vm1: Status=200 Code="AllocationFailed" Message="no capacity"',
      "",
      "  pulumi:pulumi:Stack (s):",
      "    warning: using pulumi-resource-azure-native from $PATH",
      "    error: update failed",
      "",
      "Resources:",
    ].join("\n");
    expect(diagnosticErrors(out)).toEqual(['azure-native:compute:VirtualMachine vm1: creating/updating /subscriptions/s/vm1: Status=200 Code="AllocationFailed" Message="no capacity"']);
  });

  it("summarizeCommandError keeps stderr's tail and the exit code", () => {
    const e = new Error("code: 255\n stdout: lots\nof\nstdout\n stderr: warning: x\nerror: the reason\n err?: ");
    expect(summarizeCommandError(e)).toBe("warning: x\nerror: the reason (exit code 255)");
    expect(summarizeCommandError(new Error("plain"))).toBe("plain");
  });

  it("the redactor removes PEM blocks and known secret pieces", () => {
    const r = makeRedactor(["-----BEGIN X PRIVATE KEY-----\nAAAABBBBCCCCDDDDEEEE\n-----END X PRIVATE KEY-----\n", "0123456789abcdef0123"]);
    expect(r("a AAAABBBBCCCCDDDDEEEE b 0123456789abcdef0123")).toBe("a [redacted] b [redacted]");
    expect(r("x -----BEGIN OPENSSH PRIVATE KEY-----\\nzzz\\n-----END OPENSSH PRIVATE KEY----- y")).toBe("x [redacted private key] y");
  });
});

describe("the real StackFactory without a Pulumi CLI", () => {
  const pulumiOnPath = (() => {
    try {
      execFileSync("pulumi", ["version"], { stdio: "ignore" });
      return true;
    } catch (e) {
      return (e as NodeJS.ErrnoException).code !== "ENOENT";
    }
  })();
  const openOptions: StackOpenOptions = { runId: RUN_ID, projectName: "latlab", stackName: "s", backendUrl: "file:///nonexistent", passphrase: "p", config: {} };

  it("fails with how to install it (no CLI in an empty install root, PATH not searched)", async () => {
    const root = mkdtempSync(join(tmpdir(), "latlab-nopulumi-"));
    dirs.push(root);
    const err = await createPulumiStackFactory({ searchPath: false, installRoot: root })
      .open(openOptions)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PulumiCliMissingError);
    const msg = (err as Error).message;
    expect(msg).toContain("pulumi.com/docs/install");
    expect(msg).toContain("--install-pulumi");
    expect(msg).toContain("PulumiCommand.install()");
  });

  it.skipIf(pulumiOnPath)("fails the same way with the defaults on this machine (no pulumi on PATH)", async () => {
    const err = await createPulumiStackFactory({ installRoot: join(tmpdir(), "latlab-no-such-root") })
      .open(openOptions)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PulumiCliMissingError);
    expect((err as Error).message).toMatch(/`pulumi`\) was not found on PATH[\s\S]*--install-pulumi/);
  });
});
