import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { buildPlan, defineExperiment, ResultsSchema } from "../../../../src/index.ts";
import type { Plan } from "../../../../src/plan/types.ts";
import type { Progress } from "../../../../src/runner/progress.ts";
import { runExperiment } from "../../../../src/runner/runExperiment.ts";
import {
  AzureTarget,
  checkSshFrom,
  endpointsFromOutputs,
  makeRedactor,
  type AzureTargetOptions,
  type ProgramFactory,
} from "../../../../src/targets/azure/azureTarget.ts";
import { AzureRunStateSchema } from "../../../../src/targets/azure/destroyRun.ts";
import { AZURE_PROBE_COMMAND, AZURE_READY_COMMAND, parseAzureProbe } from "../../../../src/targets/azure/probe.ts";
import {
  createPulumiStackFactory,
  PulumiCliMissingError,
  summarizeCommandError,
  diagnosticErrors,
  type StackDriver,
  type StackFactory,
  type StackOpenOptions,
  type StackOperationOptions,
} from "../../../../src/targets/azure/stack.ts";
import { hostName, type AzureOutputs, type AzureSettings } from "../../../../src/targets/azure/types.ts";
import { checkTtl, recommendedExpiresAt, validateSettings, worstCaseRun } from "../../../../src/targets/azure/validateAzure.ts";
import type { TargetContext } from "../../../../src/targets/target.ts";
import { abortAfterUp } from "./helpers.ts";

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
        publicIp: `20.0.${d.index}.${10 + i}`,
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

function setup(b: Behaviour = {}, over: Partial<AzureTargetOptions> = {}) {
  const root = mkdtempSync(join(tmpdir(), "latlab-azure-"));
  dirs.push(root);
  const runDir = join(root, RUN_ID);
  const fake = fakeStack(b);
  const lines: string[] = [];
  const target = new AzureTarget({
    stackFactory: fake.factory,
    createProgram: stubProgram,
    sshFrom: "203.0.113.7/32",
    resultsRoot: root,
    env: {},
    // The fakes' failures are permanent: one attempt each, unless a test asks for retries.
    destroyAttempts: 1,
    ...over,
  });
  const ctx: TargetContext = { runId: RUN_ID, runDir, log: (m) => lines.push(m) };
  return { target, fake, ctx, runDir, root, lines };
}

const readState = (runDir: string) => AzureRunStateSchema.parse(JSON.parse(readFileSync(join(runDir, ".azure", "state.json"), "utf8")));

/** Every secret a run holds: no log line may contain any line of them. */
function secretsOf(runDir: string, settings: AzureSettings): string[] {
  const client = readFileSync(join(runDir, ".azure", "client_rsa"), "utf8");
  const pass = readFileSync(join(runDir, ".azure", "passphrase"), "utf8").trim();
  return [client, ...Object.values(settings.hostKeys).map((k) => k.privateKey), pass];
}
const leaks = (text: string, secrets: string[]) =>
  secrets.flatMap((s) => s.split("\n").filter((l) => l.length >= 16 && !l.startsWith("-----"))).filter((piece) => text.includes(piece));

// ---------------------------------------------------------------------------------------------

describe("AzureTarget: deploy and teardown against a fake stack", () => {
  it("success: opens the run's stack on file://<runDir>, streams progress, maps outputs, then destroys and removes", async () => {
    const { target, fake, ctx, runDir, lines } = setup();
    const env = await target.up(plan, ctx);

    expect(fake.calls).toEqual(["open", "up", "outputs"]);
    const o = fake.opened[0]!;
    expect(o.backendUrl).toBe(`file://${runDir}`);
    expect(o.stackName).toBe(`latlab-${RUN_ID}`);
    expect(o.projectName).toBe("latlab");
    expect(o.config).toEqual({ "azure-native:location": "uksouth" });
    expect(o.passphrase).toBe(readFileSync(join(runDir, ".azure", "passphrase"), "utf8").trim());

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
    const clientKey = readFileSync(join(runDir, ".azure", "client_rsa"), "utf8");
    expect(env.hosts).toHaveLength(4);
    const h = env.hosts.find((e) => e.deployment === plan.deployments[1]!.id && e.role === "server")!;
    expect(h).toEqual({
      deployment: plan.deployments[1]!.id,
      role: "server",
      ssh: { host: "20.0.1.11", port: 22, username: "latlab", privateKey: clientKey },
      hostKey: settings.hostKeys["d1-server"]!.publicKey,
      privateAddress: "10.1.0.5",
      publicAddress: "20.0.1.11",
      workDir: "/tmp/latlab",
      actual: {},
      ready: { command: AZURE_READY_COMMAND, timeoutSeconds: 15 * 60 },
      probe: { command: AZURE_PROBE_COMMAND, parse: parseAzureProbe },
    });
    // Each host gets its own `actual` (the runner merges the probe's fields into it).
    expect(new Set(env.hosts.map((e) => e.actual)).size).toBe(env.hosts.length);
    expect(env.facts).toMatchObject({ target: "azure", resourceGroup: `rg-${RUN_ID}`, stack: `latlab-${RUN_ID}`, backend: `file://${runDir}` });
    expect(env.shaping.latency).toBe("not-applicable");
    expect(readFileSync(join(runDir, ".azure", "known_hosts"), "utf8")).toContain(`20.0.1.11 ${settings.hostKeys["d1-server"]!.publicKey}`);

    // Progress streamed line by line, across chunk boundaries.
    expect(lines).toContain("azure: Updating (flow):");
    expect(lines).toContain("azure:   + azure-native:resources:ResourceGroup rg creating (0s)");
    expect(readState(runDir)).toMatchObject({ runId: RUN_ID, status: "up", resourceGroup: `rg-${RUN_ID}`, backendUrl: `file://${runDir}`, stackName: `latlab-${RUN_ID}`, passphrase: "file" });

    const secrets = secretsOf(runDir, settings);
    const report = await target.down();
    expect(fake.calls).toEqual(["open", "up", "outputs", "destroy", "remove"]);
    expect(report.status).toBe("ok");
    expect(report.errors).toEqual([]);
    expect(report.removed).toEqual(expect.arrayContaining([`Azure resources of stack latlab-${RUN_ID} (resource group rg-${RUN_ID})`, `Pulumi stack latlab-${RUN_ID}`]));
    expect(lines).toContain("azure:   - azure-native:resources:ResourceGroup rg deleted");
    // A second Ctrl-C must not be able to cancel the teardown from our side.
    expect(fake.destroyOptions[0]!.signal).toBeUndefined();
    // Nothing left that opens anything; the state says so.
    expect(existsSync(join(runDir, ".azure", "client_rsa"))).toBe(false);
    expect(existsSync(join(runDir, ".azure", "hostkeys"))).toBe(false);
    expect(readState(runDir).status).toBe("destroyed");
    expect(leaks(lines.join("\n") + JSON.stringify(env.facts) + JSON.stringify(report), secrets)).toEqual([]);
  });

  it("no private key or passphrase reaches the log, even when Pulumi's output or error echoes them", async () => {
    let echo: string[] = [];
    const { target, ctx, runDir, lines } = setup({ upOutput: [] }, {
      stackFactory: {
        async open(o) {
          const settings = programCalls[0]!.settings;
          const client = readFileSync(join(runDir, ".azure", "client_rsa"), "utf8");
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
    expect(leaks(readFileSync(join(runDir, ".azure", "state.json"), "utf8"), echo)).toEqual([]);
  });

  it("up fails: the error says why, and down() still destroys the partial stack and removes it", async () => {
    const { target, fake, ctx, runDir } = setup({
      upError: new Error("code: 255\n stdout: Updating…\n stderr: error: 1 error occurred:\n\t* OverconstrainedAllocationRequest: no capacity for Standard_D2s_v5 in the PPG\n err?: "),
    });
    await expect(target.up(plan, ctx)).rejects.toThrow(/deploy failed: [\s\S]*OverconstrainedAllocationRequest[\s\S]*exit code 255/);
    expect(readState(runDir).status).toBe("deploying");
    const report = await target.down();
    expect(fake.calls).toEqual(["open", "up", "destroy", "remove"]);
    expect(report.status).toBe("ok");
    expect(readState(runDir).status).toBe("destroyed");
  });

  it("SIGINT mid-deploy (the run's signal): up() rejects as interrupted, down() destroys the partial stack", async () => {
    const controller = new AbortController();
    const { target, fake, ctx } = setup({ upHangs: true }, { signal: controller.signal });
    const up = target.up(plan, ctx);
    await fake.upStarted;
    controller.abort();
    await expect(up).rejects.toThrow(/deploy interrupted/);
    const report = await target.down();
    expect(fake.calls).toEqual(["open", "up", "up:aborted", "destroy", "remove"]);
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
    expect(fake.calls).toEqual(["open", "up", "up:aborted", "destroy", "remove"]);
  }, 15_000);

  it("down() while up() is still running aborts the deploy, waits for it, then destroys", async () => {
    const { target, fake, ctx } = setup({ upHangs: true });
    const up = target.up(plan, ctx).catch((e: Error) => e);
    await fake.upStarted;
    const report = await target.down();
    expect((await up) as Error).toBeInstanceOf(Error);
    expect(fake.calls).toEqual(["open", "up", "up:aborted", "destroy", "remove"]);
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
    expect(fake.calls).toEqual(["open", "up", "up:aborted", "destroy", "remove"]);
    expect(ResultsSchema.parse(JSON.parse(readFileSync(join(runDir, "results.json"), "utf8"))).teardown.status).toBe("ok");
  }, 15_000);

  it("destroy fails: report failed, the run is leaked, the exact command is given, the stack is kept (remove not called)", async () => {
    const { target, fake, ctx, runDir, lines } = setup({
      destroyError: new Error("code: 255\n stdout: \n stderr: error: deleting resource group rg: StatusCode=409 Conflict\n err?: "),
    });
    await target.up(plan, ctx);
    const report = await target.down();
    expect(fake.calls).toEqual(["open", "up", "outputs", "destroy"]);
    expect(report.status).toBe("failed");
    const text = report.errors.join("\n");
    expect(text).toMatch(/destroy of stack latlab-20260101-120000-abcd failed: .*409 Conflict/);
    expect(text).toContain("leaked");
    expect(text).toContain(`npx latlab destroy ${RUN_ID}`);
    expect(text).toContain(`resource group rg-${RUN_ID}`);
    expect(lines.some((l) => l.includes(`npx latlab destroy ${RUN_ID}`))).toBe(true);
    // What `latlab destroy` needs is kept.
    expect(readState(runDir)).toMatchObject({ status: "leaked", resourceGroup: `rg-${RUN_ID}` });
    expect(existsSync(join(runDir, ".azure", "passphrase"))).toBe(true);
    expect(existsSync(join(runDir, ".azure", "client_rsa"))).toBe(true);
  });

  it("a destroy that fails now and then (Azure's 409s) is tried again: the run is not leaked", async () => {
    const { target, fake, ctx, lines } = setup({ destroyFailsTimes: 2 }, { destroyAttempts: 3, destroyRetryDelayMs: 1 });
    await target.up(plan, ctx);
    const report = await target.down();
    expect(fake.calls).toEqual(["open", "up", "outputs", "destroy", "destroy", "destroy", "remove"]);
    expect(report.status).toBe("ok");
    expect(lines.filter((l) => /destroy attempt \d of 3 failed .*Conflict/.test(l))).toHaveLength(2);
  });

  it("a destroy that keeps failing is tried as often as allowed, then reported leaked once", async () => {
    const { target, fake, ctx } = setup({ destroyFailsTimes: 5 }, { destroyAttempts: 2, destroyRetryDelayMs: 1 });
    await target.up(plan, ctx);
    const report = await target.down();
    expect(fake.calls).toEqual(["open", "up", "outputs", "destroy", "destroy"]);
    expect(report.status).toBe("failed");
    expect(report.errors.filter((e) => e.includes("failed 2 times"))).toHaveLength(1);
  });

  it("destroy fails inside the real runner: results.json carries the leak and the command", async () => {
    const { target, runDir } = setup({ destroyError: new Error("boom") });
    const progress: Progress = { start() {}, cellStarted() {}, cellFinished() {}, log() {}, stop() {} };
    // No SSH here: outputs point nowhere, so stop the run right after a successful up().
    const controller = new AbortController();
    const results = await runExperiment({ experiment, source: "flow.ts", plan, target: abortAfterUp(target, controller), runId: RUN_ID, runDir, progress, signal: controller.signal });
    const onDisk = ResultsSchema.parse(JSON.parse(readFileSync(join(runDir, "results.json"), "utf8")));
    expect(results.teardown.status).toBe("failed");
    expect(onDisk.teardown.errors.join("\n")).toMatch(/leaked[\s\S]*npx latlab destroy 20260101-120000-abcd/);
  });

  it("destroy succeeds but stack removal fails: failed, not leaked, command to finish given", async () => {
    const { target, fake, ctx, runDir } = setup({ removeError: new Error("stack has resources") });
    await target.up(plan, ctx);
    const report = await target.down();
    expect(fake.calls.slice(-2)).toEqual(["destroy", "remove"]);
    expect(report.status).toBe("failed");
    expect(report.errors.join("\n")).not.toContain("leaked");
    expect(report.errors.join("\n")).toContain(`npx latlab destroy ${RUN_ID}`);
    expect(readState(runDir).status).toBe("stack-left");
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
    const { target, fake, ctx, runDir } = setup({ openError: new PulumiCliMissingError("spawn pulumi ENOENT") });
    await expect(target.up(plan, ctx)).rejects.toThrow(/Pulumi CLI .*not found[\s\S]*--install-pulumi/);
    const report = await target.down();
    expect(fake.calls).toEqual(["open"]);
    expect(report.status).toBe("ok");
    expect(existsSync(join(runDir, ".azure", "client_rsa"))).toBe(false);
    expect(readState(runDir).status).toBe("not-deployed");
  });

  it("a declined confirmation creates nothing; a wide-open --ssh-from is refused before anything", async () => {
    const declined = setup({}, { confirm: async (summary) => (expect(summary).toMatch(/4 VMs .* expiresAt=/), false) });
    await expect(declined.target.up(plan, declined.ctx)).rejects.toThrow(/not confirmed/);
    expect(declined.fake.calls).toEqual([]);
    expect(existsSync(join(declined.runDir, ".azure"))).toBe(false);
    expect((await declined.target.down()).status).toBe("not-started");

    const open = setup({}, { sshFrom: "0.0.0.0/0" });
    await expect(open.target.up(plan, open.ctx)).rejects.toThrow(/never opened to everyone/);
    expect(open.fake.calls).toEqual([]);
  });

  it("an expiresAt the program's checkTtl would refuse is refused by the target first, naming the times; nothing is created", async () => {
    const createdAt = new Date("2026-01-01T12:00:00Z");
    const { target, fake, ctx, runDir } = setup({}, { now: () => createdAt, expiresAt: (_p, c) => new Date(c.getTime() + 3600_000) });
    const err = (await target.up(plan, ctx).catch((e: unknown) => e)) as Error;
    expect(err.name).toBe("AzureTargetError");
    expect(err.message).toContain("created at 2026-01-01T12:00:00.000Z");
    expect(err.message).toContain("expiresAt 2026-01-01T13:00:00.000Z");
    expect(err.message).toMatch(/TTL 1 h 0 min is not longer than the run's worst case 1 h \d+ min/);
    expect(err.message).toContain(`Set expiresAt after ${recommendedExpiresAt(plan, createdAt).toISOString()}`);
    expect(fake.calls).toEqual([]);
    expect(programCalls).toHaveLength(0);
    expect(existsSync(join(runDir, ".azure"))).toBe(false);
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
    const { target, fake, ctx, runDir } = setup({}, { backendUrl: "https://user:tok@api.example.com/x?k=v", env: { PULUMI_CONFIG_PASSPHRASE: "from-env-passphrase" } });
    const env = await target.up(plan, ctx);
    expect(fake.opened[0]!.backendUrl).toBe("https://user:tok@api.example.com/x?k=v");
    expect(fake.opened[0]!.passphrase).toBe("from-env-passphrase");
    expect(existsSync(join(runDir, ".azure", "passphrase"))).toBe(false);
    expect(readState(runDir).passphrase).toBe("env");
    expect(env.facts.backend).toBe("https://api.example.com/x");
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
    expect(checkSshFrom("2001:db8::1/128")).toBe("2001:db8::1/128");
    for (const bad of ["*", "0.0.0.0/0", "::/0", "Internet", "any", "300.1.1.1", "1.2.3.4/33", "example.com"]) expect(() => checkSshFrom(bad)).toThrow(/--ssh-from/);
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
    const message = readFileSync(join(import.meta.dirname, "../../../fixtures/pulumi/destroy-conflict.commanderror.txt"), "utf8");
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
