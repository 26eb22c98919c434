import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { z } from "zod";
import type { TeardownReport } from "../../../results/schema.ts";
import { CLIENT_KEY_FILE, HOST_KEYS_DIR, removeRunKeys } from "../access/keys.ts";
import { displayUrl, makeRedactor } from "./redact.ts";
import type { Rehearsal } from "./azureTarget.ts";
import { PROJECT_NAME, StackNotFoundError, stackNameFor, type StackDriver, type StackFactory } from "./stack.ts";
import { namePrefix } from "../program/types.ts";
import { azureRunGroups, type RunGroups } from "./runGroups.ts";
import { POINTER_FILE, RunPointerSchema, legacyStateDir, locateRun, runStateDir, stateRoot } from "./runState.ts";
import { BACKEND_ENV, checkBackendReachable, PASSPHRASE_ENV, PASSPHRASE_FILE_ENV, passphraseFromEnv, remotePassphrase, requestedBackend, type BackendSource, type RunBackend } from "./pulumiBackend.ts";
import { PULUMI_CLI_VERSION } from "./pulumiVersion.ts";
import { leftRecord, tearDownStack, type TeardownOutcome } from "./teardown.ts";

export type { RunGroups } from "./runGroups.ts";
export { LiveRunError, leakedMessage, lineBuffer, rehearsedLeakMessage } from "./teardown.ts";

/**
 * `<stateDir>/state.json` (the run's state folder, runState.ts; `<runDir>/.azure/` for runs made
 * before it moved): what `latlab destroy <runId>` needs to finish a teardown later (backend,
 * stack, where the passphrase is). Written 0600; holds no secret itself.
 */
export const AzureRunStateSchema = z.object({
  runId: z.string(),
  projectName: z.string(),
  stackName: z.string(),
  backendUrl: z.string(),
  /**
   * Where the stack's secrets passphrase is: `passphrase` beside this file, or the environment
   * (PULUMI_CONFIG_PASSPHRASE or PULUMI_CONFIG_PASSPHRASE_FILE; always, for a backend outside the state folder).
   */
  passphrase: z.enum(["file", "env"]),
  /** Known once the stack reported its outputs. */
  resourceGroup: z.string().nullable(),
  createdAt: z.string(),
  expiresAt: z.string(),
  /**
   * "stack-left": resources destroyed, the stack record not removed (harmless; destroy again removes it).
   * "handed-over": the run had to end during its teardown (AzureTarget.handOver): ARM was asked to
   * delete the groups in `handedOver` and goes on alone; `latlab destroy` confirms and finishes it.
   */
  status: z.enum(["deploying", "up", "destroyed", "stack-left", "leaked", "not-deployed", "handed-over"]),
  lastError: z.string().optional(),
  /** The hand-over, when there was one: when, and the resource groups ARM accepted to delete then. */
  handedOver: z.object({ at: z.string(), deleting: z.array(z.string()) }).optional(),
  updatedAt: z.string(),
  /** A rehearsal: its emulator's folder (ARM state, VMs), which `latlab destroy` resumes. */
  rehearsal: z.object({ emulatorHome: z.string() }).optional(),
  /** The run's results folder (absent in runs made before state moved out of it). */
  resultsDir: z.string().optional(),
  /** The Pulumi CLI version the stack was made with: `latlab destroy` uses the same major.minor. */
  pulumiVersion: z.string().optional(),
  /** The subscription the run deployed into: the ARM fallback asks there, whatever this shell's environment says. */
  subscriptionId: z.string().optional(),
});
export type AzureRunState = z.infer<typeof AzureRunStateSchema>;

/**
 * The stack tags of a run whose backend outlives its state folder (pulumiBackend.ts): what
 * `latlab destroy <runId> --backend <url>` needs on a machine without that folder. The stack's
 * own state holds the resources and their provider settings (destroy needs no program); these say
 * the rest: the rehearsal's emulator folder to resume, the subscription the ARM fallback asks, the
 * expiry the leak message names. Tags, not stack config: a DIY backend keeps no config (it lives in
 * the workspace's Pulumi.<stack>.yaml, which goes with the machine: pkg/backend/diy/stack.go
 * LoadRemoteConfig @ v3.259.0 returns ErrConfigNotSupported), but it keeps tags (stack.ts StackOpenOptions.tags).
 */
export const RUN_TAGS = { expiresAt: "latlab:expiresAt", rehearsalHome: "latlab:rehearsalHome", subscriptionId: "latlab:subscriptionId" } as const;
export const RunStackTagsSchema = z
  .object({
    [RUN_TAGS.expiresAt]: z.string().datetime().optional(),
    [RUN_TAGS.rehearsalHome]: z.string().startsWith("/").max(256).optional(),
    [RUN_TAGS.subscriptionId]: z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i).optional(),
  })
  // Pulumi's own tags (pulumi:project…) beside latlab's.
  .passthrough();
export type RunStackTags = z.infer<typeof RunStackTagsSchema>;

/** The stack tags of a run, from its state (checked against the schema: a value Pulumi would refuse fails here, before the deploy). */
export function runStackTags(state: Pick<AzureRunState, "expiresAt" | "rehearsal" | "subscriptionId">): Record<string, string> {
  const tags: Record<string, string> = { [RUN_TAGS.expiresAt]: state.expiresAt };
  if (state.rehearsal) tags[RUN_TAGS.rehearsalHome] = state.rehearsal.emulatorHome;
  if (state.subscriptionId) tags[RUN_TAGS.subscriptionId] = state.subscriptionId;
  const parsed = RunStackTagsSchema.safeParse(tags);
  if (!parsed.success) throw new Error(`the run's stack tags are not valid: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  return tags;
}

export const STATE_FILE = "state.json";
export const PASSPHRASE_FILE = "passphrase";
export const statePath = (stateDir: string) => join(stateDir, STATE_FILE);
/** The Pulumi workspace of a run (Pulumi.yaml, Pulumi.<stack>.yaml): fixed, so destroy sees what the deploy had. */
export const workspaceDir = (stateDir: string) => join(stateDir, "workspace");

/**
 * Once a run's resources and its stack are gone, what opened them goes too: the SSH keys, the
 * passphrase, the (empty) file backend and the workspace. state.json stays (no secret in it): it
 * is what lets a later `latlab destroy` say there is nothing left to do.
 */
export async function removeSpentRunFiles(stateDir: string): Promise<string[]> {
  const removed = await removeRunKeys(stateDir);
  for (const p of [join(stateDir, PASSPHRASE_FILE), join(stateDir, ".pulumi"), workspaceDir(stateDir)]) {
    if (!existsSync(p)) continue;
    await rm(p, { recursive: true, force: true });
    removed.push(p);
  }
  return removed;
}

export async function writeRunState(stateDir: string, state: AzureRunState): Promise<void> {
  const file = statePath(stateDir);
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.tmp`;
  await writeFile(tmp, `${JSON.stringify(AzureRunStateSchema.parse(state), null, 2)}\n`, { mode: 0o600 });
  await chmod(tmp, 0o600);
  await rename(tmp, file);
}

export async function readRunState(stateDir: string): Promise<AzureRunState> {
  const file = statePath(stateDir);
  const parsed = AzureRunStateSchema.safeParse(JSON.parse(await readFile(file, "utf8")));
  if (!parsed.success) throw new Error(`${file} is not a latlab run state: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  return parsed.data;
}

/**
 * The stack's secrets passphrase: the environment's (PULUMI_CONFIG_PASSPHRASE or
 * PULUMI_CONFIG_PASSPHRASE_FILE, recorded as "env") when it gives one, otherwise a random one
 * written 0600 into the run's state folder so a later `latlab destroy` can open the stack. A
 * backend that outlives the state folder (pulumiBackend.ts) takes the environment's or none: its
 * passphrase is never written by latlab, and a missing one is a PulumiBackendError.
 */
export async function createPassphrase(stateDir: string, env: NodeJS.ProcessEnv, backend?: RunBackend): Promise<{ passphrase: string; source: "file" | "env" }> {
  if (backend?.remote) return { passphrase: remotePassphrase(backend, env).passphrase, source: "env" };
  const fromEnv = passphraseFromEnv(env)?.passphrase;
  if (fromEnv) return { passphrase: fromEnv, source: "env" };
  const passphrase = randomBytes(32).toString("hex");
  const file = join(stateDir, PASSPHRASE_FILE);
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(file, `${passphrase}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
  return { passphrase, source: "file" };
}

export async function readPassphrase(stateDir: string, state: AzureRunState, env: NodeJS.ProcessEnv): Promise<string> {
  if (state.passphrase === "env") {
    const p = passphraseFromEnv(env)?.passphrase;
    if (!p) throw new Error(`run ${state.runId}: its stack was created with a passphrase from the environment; set ${PASSPHRASE_ENV} (or ${PASSPHRASE_FILE_ENV}) to the same value and try again`);
    return p;
  }
  return (await readFile(join(stateDir, PASSPHRASE_FILE), "utf8")).trim();
}

/** A word for a POSIX shell: as is when it can be, else single-quoted. */
const shellWord = (arg: string) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, "'\\''")}'`);

/** The command that finishes a teardown later. */
export function destroyCommand(runId: string, runDir: string, resultsRoot = "results"): string {
  const standard = resolve(runDir) === resolve(resultsRoot, runId);
  const arg = standard ? runId : resolve(runDir);
  return `npx latlab destroy ${shellWord(arg)}`;
}

/** Loaded only for a rehearsal's run: a real one never starts the emulator. */
const resumeRehearsalLazily: NonNullable<DestroyRunOptions["resumeRehearsal"]> = async (home, runDir, log) =>
  (await import("../emulator/rehearsal.ts")).resumeRehearsal(home, runDir, log);

/**
 * What is left on this machine of a rehearsal's emulator: its folder (`home`), and the network
 * namespaces of its VMs and fabric (every one starts with emulatorNamespacePrefix(home)).
 */
export interface EmulatorRemains {
  folder: boolean;
  namespaces: string[];
}

/** The emulator's folder and namespaces as this machine has them (`ip netns list`: no root needed to read). */
export async function emulatorRemains(home: string): Promise<EmulatorRemains> {
  const [{ emulatorNamespacePrefix }, { execCommand, mustExec }, { parseNetnsList }] = await Promise.all([
    import("../emulator/emulator.ts"),
    import("../../local/exec.ts"),
    import("../../local/network/names.ts"),
  ]);
  const prefix = emulatorNamespacePrefix(home);
  const listed = await mustExec(execCommand, ["ip", "netns", "list"], "listing the rehearsal emulator's namespaces");
  return { folder: existsSync(home), namespaces: parseNetnsList(listed.stdout).filter((n) => n.startsWith(prefix)) };
}

/**
 * The ARM a teardown asks what is left of the run: the caller's (tests), the rehearsal's emulator,
 * or Azure's. Never Azure's for a rehearsal (`rehearsalHome` set): a rehearsal never created
 * anything there, and one whose emulator could not be resumed has no ARM left to ask (issue 23).
 */
function runGroupsOf(options: Pick<DestroyRunOptions, "runGroups">, rehearsalHome: string | undefined, rehearsal: Rehearsal | undefined, env: NodeJS.ProcessEnv, subscriptionId: string | undefined): Promise<RunGroups> {
  if (options.runGroups) return options.runGroups();
  if (rehearsal) return Promise.resolve(rehearsal.groups);
  if (rehearsalHome !== undefined) {
    return Promise.reject(new Error(`the rehearsal's emulator (${rehearsalHome}) was not resumed, so its ARM cannot be asked; Azure is not asked: a rehearsal never created anything there`));
  }
  return azureRunGroups(env, subscriptionId);
}

export interface DestroyRunOptions {
  /**
   * `--backend`: the Pulumi backend of a run whose state folder is not on this machine (default
   * LATLAB_PULUMI_BACKEND). With a state folder, the backend it recorded is used; a different
   * `--backend` is refused.
   */
  backendUrl?: string;
  /** The run's resource groups in ARM (default: Azure's, or the rehearsal's emulator). */
  runGroups?: () => Promise<RunGroups>;
  /** Resumes a rehearsal's emulator (default: emulator/rehearsal.ts's; tests pass a fake). */
  resumeRehearsal?: (home: string, runDir: string, log: (message: string) => void) => Promise<Rehearsal>;
  /** What is left on this machine of a rehearsal's emulator that cannot be resumed (default: emulatorRemains; tests pass a fake). */
  emulatorRemains?: (home: string) => Promise<EmulatorRemains>;
  /** Folder run folders are in (default "results"). */
  resultsRoot?: string;
  stackFactory: StackFactory;
  log: (message: string) => void;
  env?: NodeJS.ProcessEnv;
  now?: () => Date;
  /** Destroys tried before giving up (default 3), and the pause before the n-th retry (n × this). */
  destroyAttempts?: number;
  destroyRetryDelayMs?: number;
}

/** A teardown's report, with what ARM still holds of the run (printed as "left: …"). */
export type DestroyRunReport = TeardownReport & Pick<TeardownOutcome, "left" | "leftUnknown">;

/**
 * `latlab destroy <runId|results folder>`: finishes the teardown of an Azure run whose destroy
 * failed or never ran (crash, power cut…), through the same teardown as the run's own
 * (teardown.ts). Finds the run's state folder from its id or its results folder (runState.ts),
 * records the outcome in state.json and in results.json's `teardown` (when the results folder is
 * known and has one), and removes the run's private keys once nothing is left. Safe to run again.
 */
export async function destroyRun(runIdOrDir: string, options: DestroyRunOptions): Promise<DestroyRunReport> {
  const resultsRoot = options.resultsRoot ?? "results";
  const env = options.env ?? process.env;
  const now = options.now ?? (() => new Date());
  const log = options.log;
  // A bad URL is refused before anything is looked at or touched.
  const backend = requestedBackend(options.backendUrl, env);
  const located = locateRun(runIdOrDir, resultsRoot, env);
  const neverDeployed = located ? undefined : resultsWithoutAzureState(runIdOrDir, resultsRoot);
  if (neverDeployed) {
    // latlab writes a run's state and the folder's pointer before it asks Azure for anything: a
    // results folder with neither never deployed (a run refused by its preflight, a local run).
    log(`azure: ${neverDeployed} records no Azure state (no ${POINTER_FILE}): nothing of this run was deployed; nothing left to tear down`);
    return { status: "ok", errors: [], removed: [], left: null, leftUnknown: `not asked: nothing left to tear down: ${neverDeployed} records no Azure state, so the run deployed nothing` };
  }
  // No state folder here (the runner that had it is gone): the stack itself, in the backend that outlived it.
  if (!located && backend) return destroyFromBackend(runIdOrDir, backend, { ...options, resultsRoot, env, now });
  if (!located) {
    let byId = join(stateRoot(env), runIdOrDir);
    try {
      byId = runStateDir(runIdOrDir, env);
    } catch {
      /* not a run id: the path above is only named */
    }
    throw new Error(
      `no Azure run state for "${runIdOrDir}" (looked for ${statePath(byId)}, and in ${resolve(resultsRoot, runIdOrDir)} and ${resolve(runIdOrDir)} for its pointer or results.json); ` +
        `resources latlab created are tagged owner=latlab: \`npx latlab sweep\` lists the expired ones; a run whose Pulumi backend outlived its machine is destroyed with --backend <url> (or ${BACKEND_ENV})`,
    );
  }
  const { stateDir } = located;
  const state = await readRunState(stateDir);
  if (backend?.from === "--backend" && backend.url !== state.backendUrl) {
    throw new Error(`--backend ${displayUrl(backend.url)}: run ${state.runId}'s state (${statePath(stateDir)}) records its stack in ${displayUrl(state.backendUrl)}; nothing was touched. Leave --backend out to use the recorded one`);
  }
  const runDir = located.runDir ?? (state.resultsDir && existsSync(state.resultsDir) ? state.resultsDir : undefined);
  const cmd = runDir ? destroyCommand(state.runId, runDir, resultsRoot) : `npx latlab destroy ${state.runId}`;
  if (state.status === "destroyed" || state.status === "not-deployed") {
    // Keys and passphrase a teardown left beside a destroyed run (a rehearsal's leak, which its
    // emulator removed when it stopped; a run of an older latlab) open nothing any more: they go.
    const removed = (await removeSpentRunFiles(stateDir)).map((p) => `file ${p}`);
    log(`azure: run ${state.runId}: stack ${state.stackName} already ${state.status === "destroyed" ? "destroyed" : "had nothing deployed"}; nothing to do${removed.length ? ` but remove its spent files (${removed.map((r) => r.slice(5)).join(", ")})` : ""}`);
    return { status: "ok", errors: [], removed, left: null, leftUnknown: `not asked: run ${state.runId}'s state says ${state.status} at ${state.updatedAt}` };
  }

  // A rehearsal whose emulator cannot be resumed (its folder gone, or without its ARM state): there
  // is no stack to destroy against and no ARM to ask — and never Azure's (issue 23).
  if (state.rehearsal && !existsSync(join(state.rehearsal.emulatorHome, "state.json"))) {
    return finishGoneRehearsal(state, state.rehearsal.emulatorHome, stateDir, runDir, { ...options, now });
  }

  // Pulumi's output and errors go to the terminal and into results.json: the run's secrets never do.
  const secretFiles = [join(stateDir, CLIENT_KEY_FILE), ...(existsSync(join(stateDir, HOST_KEYS_DIR)) ? readdirSync(join(stateDir, HOST_KEYS_DIR)).map((f) => join(stateDir, HOST_KEYS_DIR, f)) : [])];
  const passphrase = await readPassphrase(stateDir, state, env).catch(() => undefined);
  const redact = makeRedactor(
    secretFiles.filter((f) => existsSync(f)).map((f) => readFileSync(f, "utf8")),
    { whole: passphrase ? [passphrase] : [] },
  );
  const say = (m: string) => log(redact(m));

  let rehearsal: Rehearsal | undefined;
  const outcome = await tearDownStack(
    {
      runId: state.runId,
      stackName: state.stackName,
      backendUrl: state.backendUrl,
      resourceGroup: state.resourceGroup ?? namePrefix(state.runId),
      expiresAt: state.expiresAt,
      finishCommand: cmd,
      rehearsal: state.rehearsal !== undefined,
    },
    {
      open: async () => {
        // After the stale locks are gone: a live emulator means the run is still going (LiveRunError).
        if (state.rehearsal) rehearsal = await (options.resumeRehearsal ?? resumeRehearsalLazily)(state.rehearsal.emulatorHome, runDir ?? stateDir, say);
        const passphrase = await readPassphrase(stateDir, state, env);
        say(`azure: opening stack ${state.stackName} (backend ${displayUrl(state.backendUrl)})…`);
        return options.stackFactory.open({
          runId: state.runId,
          projectName: state.projectName || PROJECT_NAME,
          stackName: state.stackName,
          backendUrl: state.backendUrl,
          passphrase,
          config: {},
          workDir: workspaceDir(stateDir),
          pulumiVersion: state.pulumiVersion ?? PULUMI_CLI_VERSION,
          ...(rehearsal ? { env: rehearsal.env } : {}),
        });
      },
      groups: () => runGroupsOf(options, state.rehearsal?.emulatorHome, rehearsal, env, state.subscriptionId),
      log: say,
      redact,
      ...(options.destroyAttempts !== undefined ? { attempts: options.destroyAttempts } : {}),
      ...(options.destroyRetryDelayMs !== undefined ? { retryDelayMs: options.destroyRetryDelayMs } : {}),
    },
  );
  const settled = await settleTeardown(outcome, state.resourceGroup ?? namePrefix(state.runId), rehearsal, log);
  if ("status" in settled) return settled;
  const { errors, removed, ended } = settled;
  if (ended === "destroyed" && errors.length === 0) for (const p of await removeSpentRunFiles(stateDir)) removed.push(`file ${p}`);

  const report: DestroyRunReport = { status: errors.length > 0 ? "failed" : "ok", errors, removed, left: outcome.left, ...(outcome.leftUnknown ? { leftUnknown: outcome.leftUnknown } : {}) };
  await writeRunState(stateDir, {
    ...state,
    // A rehearsal's emulator removed everything when it stopped: nothing is left to finish.
    status: ended === "leaked" && rehearsal ? "destroyed" : ended,
    ...(errors.length > 0 ? { lastError: errors.join("\n") } : { lastError: undefined }),
    updatedAt: now().toISOString(),
  });
  if (runDir) await markResults(runDir, report, now(), log);
  return report;
}

/**
 * `latlab destroy` of a rehearsal whose emulator cannot be resumed: its folder is gone, or holds
 * no state.json (its ARM state) — e.g. the run's own teardown stopped the emulator after a second
 * Ctrl-C cancelled `pulumi destroy`, and stopping removes everything the emulator ran. Nothing of
 * a rehearsal was ever on Azure, so Azure is never asked. When nothing of the emulator is left on
 * this machine either (no folder, no namespace of its prefix) the run is destroyed: state.json
 * says so and the spent keys, passphrase, file backend and workspace go, as after any successful
 * destroy. When something is left, it is named with how to remove it, and nothing is touched.
 */
async function finishGoneRehearsal(
  state: AzureRunState,
  home: string,
  stateDir: string,
  runDir: string | undefined,
  options: DestroyRunOptions & { now: () => Date },
): Promise<DestroyRunReport> {
  const { log, now } = options;
  const gone = existsSync(home) ? `its emulator's folder ${home} holds no state.json (no ARM state to resume)` : `its emulator's folder ${home} is gone`;
  let remains: EmulatorRemains | undefined;
  let unknown: string | undefined;
  try {
    remains = await (options.emulatorRemains ?? emulatorRemains)(home);
  } catch (e) {
    unknown = (e as Error).message;
  }
  const noAzure = "nothing of it is on Azure: a rehearsal never touches Azure, and Azure was not asked";
  let report: DestroyRunReport;
  if (remains && !remains.folder && remains.namespaces.length === 0) {
    log(`azure: run ${state.runId} is a rehearsal: ${gone}, and none of its namespaces remain: the emulator and everything it ran are gone; ${noAzure}`);
    const removed = [`rehearsal ${state.runId}: its emulator (${home}) and everything it ran were already gone; ${noAzure}`];
    for (const p of await removeSpentRunFiles(stateDir)) removed.push(`file ${p}`);
    report = { status: "ok", errors: [], removed, left: [] };
    await writeRunState(stateDir, { ...state, status: "destroyed", lastError: undefined, updatedAt: now().toISOString() });
  } else {
    const left = remains
      ? [...(remains.folder ? [`its folder ${home} (remove it with \`rm -rf ${shellWord(home)}\` once no run uses it)`] : []), ...(remains.namespaces.length ? [`its namespaces ${remains.namespaces.join(", ")} (remove each with \`sudo ip netns delete <name>\`)`] : [])]
      : [`whether its namespaces remain could not be checked (${unknown})`];
    const error = `run ${state.runId} is a rehearsal: ${gone}, so it cannot be resumed and torn down through it; left on this machine: ${left.join("; ")}; ${noAzure}`;
    log(`azure: ${error}`);
    report = { status: "failed", errors: [error], removed: [], left: null, leftUnknown: `not asked: ${gone}` };
    await writeRunState(stateDir, { ...state, lastError: error, updatedAt: now().toISOString() });
  }
  if (runDir) await markResults(runDir, report, now(), log);
  return report;
}

/**
 * After tearDownStack, for both ways destroy finds a run: a run still going is reported as it is
 * (nothing more is touched); otherwise what ARM holds of the group is recorded, and a rehearsal's
 * emulator goes last — whatever its ARM still holds is listed (and removed).
 */
async function settleTeardown(outcome: TeardownOutcome, group: string, rehearsal: Rehearsal | undefined, log: (m: string) => void): Promise<DestroyRunReport | { errors: string[]; removed: string[]; ended: Exclude<TeardownOutcome["status"], "live"> }> {
  const errors = [...outcome.errors];
  const removed = [...outcome.removed];
  if (outcome.status === "live") {
    log(`azure: ${errors.join("\n")}`);
    return { status: "failed", errors, removed, left: null, ...(outcome.leftUnknown ? { leftUnknown: outcome.leftUnknown } : {}) };
  }
  removed.push(leftRecord(group, outcome));
  if (rehearsal) {
    const stopped = await rehearsal.stop().catch((e: Error) => ({ errors: [`stopping the emulator: ${e.message}`], removed: [] as string[] }));
    errors.push(...stopped.errors);
    removed.push(...stopped.removed);
  }
  return { errors, removed, ended: outcome.status };
}

/** The run a `latlab destroy` argument names when no state folder is here: a results folder's pointer, or a run id. */
function runOfRef(ref: string, resultsRoot: string): { runId: string; runDir?: string } {
  for (const dir of [resolve(resultsRoot, ref), resolve(ref)]) {
    const file = join(dir, POINTER_FILE);
    if (!existsSync(file)) continue;
    const pointer = RunPointerSchema.safeParse((() => {
      try {
        return JSON.parse(readFileSync(file, "utf8"));
      } catch {
        return undefined;
      }
    })());
    if (pointer.success) return { runId: pointer.data.runId, runDir: dir };
  }
  // runStateDir's rule for a run id: what the run's stack name was made from.
  try {
    runStateDir(ref, {});
  } catch {
    throw new Error(`"${ref}" is neither a run id nor a results folder with ${POINTER_FILE}: the stack of a run is found by its id (latlab-<runId>)`);
  }
  const dir = resolve(resultsRoot, ref);
  return { runId: ref, ...(existsSync(join(dir, "results.json")) ? { runDir: dir } : {}) };
}

/** Destroys after the Pulumi CLI reads the secrets manager from the stack's state, not from the (fresh) workspace's Pulumi.<stack>.yaml. */
const FROM_STATE_SECRETS = {
  // pulumi destroy always may (pkg/cmd/pulumi/operations/destroy.go @ v3.259.0: "Destroy is always
  // permitted to fall back to looking for secrets providers in state, since we explicitly want to
  // support use cases where a user is trying to destroy a stack they no longer have configuration
  // for"); refresh only when told (operations/refresh.go: NewStackSecretsManagerLoaderFromEnv,
  // sdk/go/common/env/env.go FallbackToStateSecretsManager).
  PULUMI_FALLBACK_TO_STATE_SECRETS_MANAGER: "true",
};

/**
 * `latlab destroy <runId> --backend <url>` on a machine without the run's state folder (its runner
 * vanished with it): finds the run's stack by name (latlab-<runId>) in the backend, reads what the
 * run recorded in its tags (RUN_TAGS: a rehearsal's emulator folder, the subscription), and tears
 * it down through the same teardown as ever — refresh, destroy from the stack's state (no program
 * needed), the ARM check and fallback, stack removed. The passphrase comes from the environment.
 * Nothing is written on this machine but the Pulumi workspace, a temp folder removed at the end
 * (and results.json's `teardown`, when the argument was the run's results folder).
 */
async function destroyFromBackend(
  ref: string,
  backend: { url: string; from: BackendSource },
  options: DestroyRunOptions & { resultsRoot: string; env: NodeJS.ProcessEnv; now: () => Date },
): Promise<DestroyRunReport> {
  const { env, log } = options;
  const { runId, runDir } = runOfRef(ref, options.resultsRoot);
  const stackName = stackNameFor(runId);
  checkBackendReachable(backend);
  let passphrase: string;
  try {
    passphrase = remotePassphrase(backend, env).passphrase;
  } catch (e) {
    throw new Error(`${(e as Error).message.replace(/\. Nothing was deployed$/, "")}. Nothing was touched`);
  }
  const redact = makeRedactor([], { whole: [passphrase] });
  const say = (m: string) => log(redact(m));
  const cmd = `npx latlab destroy ${runId} --backend ${shellWord(backend.url)}`;
  // A fresh workspace: no Pulumi.<stack>.yaml, so the secrets manager comes from the stack's state (FROM_STATE_SECRETS).
  const workDir = await mkdtemp(join(tmpdir(), "latlab-destroy-"));
  try {
    const base = {
      runId,
      projectName: PROJECT_NAME,
      stackName,
      backendUrl: backend.url,
      passphrase,
      config: {},
      workDir,
      pulumiVersion: PULUMI_CLI_VERSION,
      existing: true,
    };
    say(`azure: run ${runId}: no state folder on this machine; looking for stack ${stackName} in ${displayUrl(backend.url)} (${backend.from})…`);
    let found: StackDriver;
    try {
      found = await options.stackFactory.open({ ...base, env: FROM_STATE_SECRETS });
    } catch (e) {
      if (!(e instanceof StackNotFoundError)) throw e;
      throw new Error(
        `${displayUrl(backend.url)} holds no stack ${stackName}: run ${runId} was destroyed already, never deployed, or used another backend. ` +
          "Resources latlab created are tagged owner=latlab and runId: `npx latlab sweep` lists the expired ones",
        { cause: e },
      );
    }
    const parsedTags = RunStackTagsSchema.safeParse((await found.tags?.()) ?? {});
    if (!parsedTags.success) throw new Error(`stack ${stackName}'s tags are not what latlab wrote: ${parsedTags.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
    const tags = parsedTags.data;
    const home = tags[RUN_TAGS.rehearsalHome];
    const subscriptionId = tags[RUN_TAGS.subscriptionId];
    const group = namePrefix(runId);

    let rehearsal: Rehearsal | undefined;
    const outcome = await tearDownStack(
      { runId, stackName, backendUrl: backend.url, resourceGroup: group, expiresAt: tags[RUN_TAGS.expiresAt] ?? "unknown", finishCommand: cmd, rehearsal: home !== undefined },
      {
        open: async () => {
          if (!home) return found;
          // After the stale locks are gone: a live emulator means the run is still going (LiveRunError).
          rehearsal = await (options.resumeRehearsal ?? resumeRehearsalLazily)(home, runDir ?? workDir, say);
          // The emulator's provider plugin and socket are in the Pulumi CLI's environment, set when the workspace opens.
          return options.stackFactory.open({ ...base, env: { ...FROM_STATE_SECRETS, ...rehearsal.env } });
        },
        groups: () => runGroupsOf(options, home, rehearsal, env, subscriptionId),
        log: say,
        redact,
        ...(options.destroyAttempts !== undefined ? { attempts: options.destroyAttempts } : {}),
        ...(options.destroyRetryDelayMs !== undefined ? { retryDelayMs: options.destroyRetryDelayMs } : {}),
      },
    );
    const settled = await settleTeardown(outcome, group, rehearsal, log);
    if ("status" in settled) return settled;
    const { errors, removed } = settled;
    const report: DestroyRunReport = { status: errors.length > 0 ? "failed" : "ok", errors, removed, left: outcome.left, ...(outcome.leftUnknown ? { leftUnknown: outcome.leftUnknown } : {}) };
    if (runDir) await markResults(runDir, report, options.now(), log);
    return report;
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

/**
 * The results folder `ref` names (under resultsRoot, or as a path) when it is one — it has a
 * plan.json or results.json — and records no Azure state at all: no pointer, no
 * `environment.facts.stateDir`, no old-style `.azure/`. Undefined otherwise; a folder whose
 * pointer names a state folder that is missing (copied from another machine) is not this case:
 * its run may have deployed, and destroy must say it cannot find the state.
 */
function resultsWithoutAzureState(ref: string, resultsRoot: string): string | undefined {
  for (const dir of [resolve(resultsRoot, ref), resolve(ref)]) {
    if (!existsSync(join(dir, "plan.json")) && !existsSync(join(dir, "results.json"))) continue;
    if (existsSync(join(dir, POINTER_FILE)) || existsSync(legacyStateDir(dir))) return undefined;
    try {
      const facts = (JSON.parse(readFileSync(join(dir, "results.json"), "utf8")) as { environment?: { facts?: Record<string, unknown> } }).environment?.facts;
      if (facts?.stateDir !== undefined) return undefined;
    } catch {
      /* no results.json (a run stopped before writing it) or not JSON: the pointer is what counts */
    }
    return dir;
  }
  return undefined;
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
      // A hand-over stays on the record: the run's own teardown did not finish, this one did.
      ...(before?.handedOver ? { handedOver: before.handedOver } : {}),
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

