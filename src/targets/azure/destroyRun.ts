import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { z } from "zod";
import type { TeardownReport } from "../../results/schema.ts";
import { azureDir, removeRunKeys } from "./keys.ts";
import type { Rehearsal } from "./azureTarget.ts";
import { PROJECT_NAME, summarizeCommandError, type StackFactory } from "./stack.ts";
import { namePrefix } from "./types.ts";
import { removeStaleLocks, repairCheckpoint } from "./fileBackendRecovery.ts";

/**
 * `<runDir>/.azure/state.json`: what `latlab destroy <runId>` needs to finish a teardown
 * later (backend, stack, where the passphrase is). Written 0600; holds no secret itself.
 */
export const AzureRunStateSchema = z.object({
  runId: z.string(),
  projectName: z.string(),
  stackName: z.string(),
  backendUrl: z.string(),
  /** Where the stack's secrets passphrase is: `.azure/passphrase`, or PULUMI_CONFIG_PASSPHRASE. */
  passphrase: z.enum(["file", "env"]),
  /** Known once the stack reported its outputs. */
  resourceGroup: z.string().nullable(),
  createdAt: z.string(),
  expiresAt: z.string(),
  /** "stack-left": resources destroyed, the stack record not removed (harmless; destroy again removes it). */
  status: z.enum(["deploying", "up", "destroyed", "stack-left", "leaked", "not-deployed"]),
  lastError: z.string().optional(),
  updatedAt: z.string(),
  /** A rehearsal: its emulator's folder (ARM state, VMs), which `latlab destroy` resumes. */
  rehearsal: z.object({ emulatorHome: z.string() }).optional(),
});
export type AzureRunState = z.infer<typeof AzureRunStateSchema>;

export const STATE_FILE = "state.json";
export const PASSPHRASE_FILE = "passphrase";
export const statePath = (runDir: string) => join(azureDir(runDir), STATE_FILE);

export async function writeRunState(runDir: string, state: AzureRunState): Promise<void> {
  const file = statePath(runDir);
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.tmp`;
  await writeFile(tmp, `${JSON.stringify(AzureRunStateSchema.parse(state), null, 2)}\n`, { mode: 0o600 });
  await chmod(tmp, 0o600);
  await rename(tmp, file);
}

export async function readRunState(runDir: string): Promise<AzureRunState> {
  return AzureRunStateSchema.parse(JSON.parse(await readFile(statePath(runDir), "utf8")));
}

/**
 * The stack's secrets passphrase: PULUMI_CONFIG_PASSPHRASE when set (recorded as "env"),
 * otherwise a random one written 0600 to `.azure/passphrase` so a later `latlab destroy` can
 * open the stack.
 */
export async function createPassphrase(runDir: string, env: NodeJS.ProcessEnv): Promise<{ passphrase: string; source: "file" | "env" }> {
  const fromEnv = env.PULUMI_CONFIG_PASSPHRASE;
  if (fromEnv) return { passphrase: fromEnv, source: "env" };
  const passphrase = randomBytes(32).toString("hex");
  const file = join(azureDir(runDir), PASSPHRASE_FILE);
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(file, `${passphrase}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
  return { passphrase, source: "file" };
}

export async function readPassphrase(runDir: string, state: AzureRunState, env: NodeJS.ProcessEnv): Promise<string> {
  if (state.passphrase === "env") {
    const p = env.PULUMI_CONFIG_PASSPHRASE;
    if (!p) throw new Error(`run ${state.runId}: its stack was created with PULUMI_CONFIG_PASSPHRASE from the environment; set it to the same value and try again`);
    return p;
  }
  return (await readFile(join(azureDir(runDir), PASSPHRASE_FILE), "utf8")).trim();
}

/** The command that finishes a teardown later. */
export function destroyCommand(runId: string, runDir: string, resultsRoot = "results"): string {
  const standard = resolve(runDir) === resolve(resultsRoot, runId);
  const arg = standard ? runId : resolve(runDir);
  return `npx latlab destroy ${/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, "'\\''")}'`}`;
}

/** Finds a run's folder from a run id (under resultsRoot) or a path to the folder itself. */
export function findRunDir(runIdOrDir: string, resultsRoot: string): string | undefined {
  for (const dir of [resolve(resultsRoot, runIdOrDir), resolve(runIdOrDir)]) {
    if (existsSync(statePath(dir))) return dir;
  }
  return undefined;
}

/** The run is still going (a live Pulumi lock, a live emulator): `latlab destroy` touches nothing. */
export class LiveRunError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LiveRunError";
  }
}

/**
 * A run's resource group as ARM has it: what `latlab destroy` falls back on when Pulumi's
 * destroy fails because ARM holds resources Pulumi's state does not (a run killed in the
 * middle of `up`: VMs being created are in Azure, not in the state, and keep the NICs and
 * subnets Pulumi tries to delete "in use").
 */
export interface RunGroups {
  /** The group's tags, or undefined when ARM has no such group. */
  tags(name: string): Promise<Record<string, string> | undefined>;
  /** Deletes the group and everything in it; resolves when it is gone. */
  delete(name: string): Promise<void>;
}

/** RunGroups over Azure itself (credentials as for `latlab sweep`). */
async function azureRunGroups(): Promise<RunGroups> {
  const { createAzureResourceGroupsClient, LATLAB_FILTER } = await import("./sweeper.ts");
  const client = await createAzureResourceGroupsClient();
  return {
    async tags(name) {
      for await (const g of client.list(LATLAB_FILTER)) if (g.name.toLowerCase() === name.toLowerCase()) return g.tags ?? {};
      return undefined;
    },
    delete: (name) => client.beginDeleteAndWait(name),
  };
}

/** Loaded only for a rehearsal's run: a real one never starts the emulator. */
const resumeRehearsalLazily: NonNullable<DestroyRunOptions["resumeRehearsal"]> = async (home, runDir, log) =>
  (await import("./emulator/rehearsal.ts")).resumeRehearsal(home, runDir, log);

export interface DestroyRunOptions {
  /** The run's resource groups in ARM, for the fallback (default: Azure's, or the rehearsal's emulator). */
  runGroups?: () => Promise<RunGroups>;
  /** Resumes a rehearsal's emulator (default: emulator/rehearsal.ts's; tests pass a fake). */
  resumeRehearsal?: (home: string, runDir: string, log: (message: string) => void) => Promise<Rehearsal>;
  /** Folder run folders are in (default "results"). */
  resultsRoot?: string;
  stackFactory: StackFactory;
  log: (message: string) => void;
  env?: NodeJS.ProcessEnv;
  now?: () => Date;
}

/**
 * `latlab destroy <runId>`: finishes the teardown of an Azure run whose destroy failed or never
 * ran (crash, power cut…). Destroys and removes the stack named in `.azure/state.json`, records
 * the outcome there and in results.json's `teardown` (when results.json exists), and removes
 * the run's private keys once nothing is left. Safe to run again.
 */
export async function destroyRun(runIdOrDir: string, options: DestroyRunOptions): Promise<TeardownReport> {
  const resultsRoot = options.resultsRoot ?? "results";
  const env = options.env ?? process.env;
  const now = options.now ?? (() => new Date());
  const log = options.log;
  const runDir = findRunDir(runIdOrDir, resultsRoot);
  if (!runDir) {
    throw new Error(
      `no Azure run state for "${runIdOrDir}" (looked for ${statePath(resolve(resultsRoot, runIdOrDir))}); ` +
        "resources latlab created are tagged owner=latlab: `npx latlab sweep` lists the expired ones",
    );
  }
  const state = await readRunState(runDir);
  const cmd = destroyCommand(state.runId, runDir, resultsRoot);
  if (state.status === "destroyed" || state.status === "not-deployed") {
    log(`azure: run ${state.runId}: stack ${state.stackName} already ${state.status === "destroyed" ? "destroyed" : "had nothing deployed"}; nothing to do`);
    const report: TeardownReport = { status: "ok", errors: [], removed: [] };
    return report;
  }

  const errors: string[] = [];
  const removed: string[] = [];
  const lines = lineBuffer((l) => log(`azure: ${l}`));
  let destroyed = false;
  let rehearsal: Rehearsal | undefined;
  try {
    // A run killed in the middle of an operation leaves Pulumi's lock behind: only a dead owner's lock goes.
    const locks = await removeStaleLocks(state.backendUrl, state.stackName);
    for (const l of locks.removed) {
      log(`azure: removed a stale Pulumi lock of stack ${state.stackName} (pid ${l.pid} on ${l.hostname} is gone): ${l.path}`);
      removed.push(`stale Pulumi lock ${l.path}`);
    }
    // A live owner means the run (or another destroy) is still going: touching anything now would
    // tear its resources out from under it. Nothing is repaired, resumed or deleted.
    if (locks.kept.length > 0) {
      throw new LiveRunError(
        `stack ${state.stackName} is locked by a Pulumi process that is still running (${locks.kept.map((l) => `pid ${l.pid ?? "?"} on ${l.hostname ?? "?"}`).join(", ")}): ` +
          "is the run still going? Wait for it to end (or stop it), then run this again",
      );
    }
    for (const repair of await repairCheckpoint(state.backendUrl, state.stackName)) {
      log(`azure: ${repair}`);
      removed.push(repair);
    }
    if (state.rehearsal) rehearsal = await (options.resumeRehearsal ?? resumeRehearsalLazily)(state.rehearsal.emulatorHome, runDir, log);
    const passphrase = await readPassphrase(runDir, state, env);
    const driver = await options.stackFactory.open({
      runId: state.runId,
      projectName: state.projectName || PROJECT_NAME,
      stackName: state.stackName,
      backendUrl: state.backendUrl,
      passphrase,
      config: {},
      ...(rehearsal ? { env: rehearsal.env } : {}),
    });
    log(`azure: destroying stack ${state.stackName} (backend ${state.backendUrl})…`);
    const group = state.resourceGroup ?? namePrefix(state.runId);
    try {
      await driver.destroy({ onOutput: lines.push });
    } catch (e) {
      lines.flush();
      // Resources Pulumi never recorded may hold the ones it knows "in use": delete the run's
      // group through ARM (only if its tags say it is this run's), then destroy again — the
      // deletes of what is already gone succeed.
      const why = summarizeCommandError(e).split("\n")[0];
      log(`azure: pulumi destroy failed (${why}); deleting the run's resource group ${group} through ARM, then destroying again`);
      try {
        const groups = await (options.runGroups ?? (async () => (rehearsal ? rehearsal.groups : azureRunGroups())))();
        const tags = await groups.tags(group);
        if (tags !== undefined) {
          const tag = (name: string) => Object.entries(tags).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
          if (tag("owner") !== "latlab" || tag("runId") !== state.runId) throw new Error(`resource group ${group} is not tagged owner=latlab, runId=${state.runId}: not deleting it`);
          await groups.delete(group);
          removed.push(`resource group ${group} (deleted through ARM)`);
        }
      } catch (fallback) {
        throw new Error(`${summarizeCommandError(e)}; deleting the resource group through ARM did not work either: ${(fallback as Error).message}`, { cause: e });
      }
      await driver.destroy({ onOutput: lines.push });
    } finally {
      lines.flush();
    }
    destroyed = true;
    removed.push(`Azure resources of stack ${state.stackName}${state.resourceGroup ? ` (resource group ${state.resourceGroup})` : ""}`);
    try {
      await driver.remove();
      removed.push(`Pulumi stack ${state.stackName}`);
    } catch (e) {
      errors.push(`resources destroyed, but removing stack ${state.stackName} failed: ${summarizeCommandError(e)}; run \`${cmd}\` again`);
    }
  } catch (e) {
    if (e instanceof LiveRunError) {
      log(`azure: ${e.message}`);
      return { status: "failed", errors: [e.message], removed };
    }
    errors.push(`destroy of stack ${state.stackName} failed: ${summarizeCommandError(e)}`);
  }
  if (rehearsal) {
    // The emulator goes last; whatever its ARM still holds is listed (and removed).
    const stopped = await rehearsal.stop().catch((e: Error) => ({ errors: [`stopping the emulator: ${e.message}`], removed: [] as string[] }));
    errors.push(...stopped.errors);
    removed.push(...stopped.removed);
  }
  if (!destroyed) errors.push(rehearsal ? rehearsedLeakMessage(state.runId) : leakedMessage(state, cmd));
  else if (errors.length === 0) for (const p of await removeRunKeys(runDir)) removed.push(`key file ${p}`);

  const report: TeardownReport = { status: errors.length > 0 ? "failed" : "ok", errors, removed };
  await writeRunState(runDir, {
    ...state,
    // A rehearsal's emulator removed everything when it stopped: nothing is left to finish.
    status: destroyed ? (errors.length > 0 ? "stack-left" : "destroyed") : rehearsal ? "destroyed" : "leaked",
    ...(errors.length > 0 ? { lastError: errors.join("\n") } : { lastError: undefined }),
    updatedAt: now().toISOString(),
  });
  await markResults(runDir, report, now(), log);
  return report;
}

/** A rehearsal's failed destroy: what Azure would have left, and that the emulator removed it. */
export function rehearsedLeakMessage(runId: string): string {
  return `rehearsal ${runId}: pulumi destroy did not remove everything — on Azure these resources would now be leaked (and billed); the emulator removed them when it stopped (listed above)`;
}

/** The sentence every failed destroy carries. */
export function leakedMessage(state: Pick<AzureRunState, "runId" | "resourceGroup" | "expiresAt">, command: string): string {
  return (
    `the Azure resources of run ${state.runId} are leaked (they keep costing money)` +
    `${state.resourceGroup ? `: resource group ${state.resourceGroup}` : ""}, tagged owner=latlab, expiresAt=${state.expiresAt}. ` +
    `Finish the teardown with: ${command}`
  );
}

/** Records a later teardown in results.json, when the run wrote one; keeps the first attempt's errors. */
async function markResults(runDir: string, report: TeardownReport, at: Date, log: (m: string) => void): Promise<void> {
  const file = join(runDir, "results.json");
  if (!existsSync(file)) return;
  try {
    const results = JSON.parse(await readFile(file, "utf8")) as Record<string, unknown>;
    const before = results.teardown as Partial<TeardownReport> | undefined;
    const earlier = (before?.errors ?? []).map((e) => `(earlier attempt) ${e}`);
    results.teardown = {
      status: report.status,
      errors: report.status === "ok" ? [] : [...report.errors, ...earlier],
      removed: [
        ...(before?.removed ?? []),
        ...report.removed,
        ...(report.status === "ok" ? [`teardown finished by \`latlab destroy\` at ${at.toISOString()}${earlier.length ? ` after a failed first attempt: ${(before?.errors ?? []).join("; ")}` : ""}`] : []),
      ],
    };
    const tmp = `${file}.tmp`;
    await writeFile(tmp, `${JSON.stringify(results, null, 2)}\n`);
    await rename(tmp, file);
  } catch (e) {
    log(`azure: could not update ${file}: ${(e as Error).message}`);
  }
}

/** Splits streamed output into lines. */
export function lineBuffer(onLine: (line: string) => void): { push: (chunk: string) => void; flush: () => void } {
  let pending = "";
  return {
    push: (chunk: string) => {
      pending += chunk;
      const parts = pending.split(/\r?\n|\r/);
      pending = parts.pop() ?? "";
      for (const p of parts) if (p.trim()) onLine(p.trimEnd());
    },
    flush: () => {
      if (pending.trim()) onLine(pending.trimEnd());
      pending = "";
    },
  };
}
