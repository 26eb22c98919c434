import { writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { Plan } from "../../../plan/types.ts";
import { LATENCY_ONLY, type ShapingStatus, type TeardownReport } from "../../../results/schema.ts";
import type { Environment, HandOver, HostEndpoint, Target, TargetContext, TargetWaveLimits } from "../../target.ts";
import { createPassphrase, destroyCommand, removeSpentRunFiles, runStackTags, statePath, workspaceDir, writeRunState, type AzureRunState } from "./destroyRun.ts";
import { remotePassphrase, runBackend, type RunBackend } from "./pulumiBackend.ts";
import { generateRunKeys, removeRunKeys, type RunKeys } from "../access/keys.ts";
import type { ComputeCapacity } from "../catalog/computeCapacity.ts";
import { checkCapacity, formatVcpuNeeds, liveLimits, publicIpIssues, publicIpNeeds, vcpuNeeds } from "../catalog/quota.ts";
import { azureReadyAndProbe } from "../access/probe.ts";
import { PULUMI_CLI_VERSION } from "./pulumiVersion.ts";
import { azureRunGroups, type RunGroups } from "./runGroups.ts";
import { attachPlacement, type PlacementReader } from "./placementEvidence.ts";
import { makeStateDir, runStateDir, writePointer } from "./runState.ts";
import { displayUrl, makeRedactor } from "./redact.ts";
import { PROJECT_NAME, stackNameFor, summarizeCommandError, type PulumiProgram, type StackDriver, type StackFactory } from "./stack.ts";
import { leftRecord, lineBuffer, startGroupDeletion, tearDownStack } from "./teardown.ts";
import { AzureOutputsSchema, githubRunFromEnv, hostName, namePrefix, type AzureOutputs, type AzureSettings } from "../program/types.ts";
import { checkTtl, recommendedExpiresAt, sizeIssues, sshFromProblem } from "../catalog/validateAzure.ts";
import { sizeFacts } from "../catalog/sizes/sizeFacts.ts";

/** What `createProgram` from ./program.ts looks like (injected: tests use a stub). */
export type ProgramFactory = (plan: Plan, settings: AzureSettings) => PulumiProgram;

/**
 * A rehearsal: latlab's ARM emulator plays Azure for this run (`--rehearse`). Started at up()
 * before anything else, stopped at down() after the destroy.
 */
export interface Rehearsal {
  /** The emulator's folder: its ARM state survives a crash there, for `latlab destroy` to resume. */
  emulatorHome: string;
  /** The runner's address as the emulated VMs see it: what `--ssh-from` would be. */
  sshFrom: string;
  /** The VNet address space the emulator hosts. */
  addressSpace: string;
  /** Environment of the Pulumi CLI: the emulator's provider plugin first on PATH, its socket. */
  env: Record<string, string>;
  /** How long a host may take to be ready (cloud-init done); emulated VMs boot in seconds. */
  readyTimeoutSeconds: number;
  facts: Record<string, string>;
  /** Is this an address the emulator handed out? A host anywhere else means the deploy did not go to the emulator. */
  owns(address: string): boolean;
  /** Deletes a resource group through the emulator's ARM (latlab destroy's fallback); resolves when it is gone. */
  groups: RunGroups;
  /** The emulated subscription's compute usages and SKUs, as Azure's APIs list them (the quota check reads them). */
  readCapacity(regions: readonly string[]): Promise<ComputeCapacity>;
  /** The placement evidence of the deployed run (PPG colocation status, VM instance views) as the emulator's ARM gives it. */
  readPlacement?: PlacementReader;
  /** Stops the emulator. Anything still in its ARM state (what a destroy missed) is an error, and is removed. */
  stop(): Promise<{ errors: string[]; removed: string[] }>;
  /** The latency shaping between its VMs once they are up (the model by their placement in ARM); absent: none (REHEARSAL_SHAPING). */
  shaping?(): ShapingStatus;
}
export type RehearsalFactory = (runDir: string, log: (message: string) => void) => Promise<Rehearsal>;

export interface AzureTargetOptions {
  /**
   * The subscription everything of this run talks to (lifecycle/subscription.ts): the program's
   * `azure-native:subscriptionId`, the ARM fallback of the teardown, state.json for `latlab destroy`.
   */
  subscriptionId?: string;
  /**
   * Reads the subscription's vCPU quotas and VM size restrictions in the plan's regions; the run
   * is refused before anything is created when they cannot hold it. A rehearsal reads its
   * emulator's instead. Absent (and no rehearsal): not checked.
   */
  readCapacity?: (regions: readonly string[]) => Promise<ComputeCapacity>;
  /**
   * Reads, once the stack is up, each host's placement evidence from ARM (its PPG's colocation
   * status, its VM's instance view: placementEvidence.ts), kept per host in results.json. A
   * rehearsal reads its emulator's instead. Absent (and no rehearsal): not read.
   */
  readPlacement?: PlacementReader;
  /** The cost line the preflight computed for the whole run, every wave (prices.ts costSummary), shown in the confirmation. */
  costSummary?: string;
  /**
   * The cost line of the plan up() is given, at the preflight's prices: a run in waves gives each
   * wave's up() that wave's plan, and its confirmation shows the wave's own cost beside the whole run's.
   */
  costOf?: (plan: Plan) => string;
  /** Rehearse against the emulator instead of Azure (no account, no cost). */
  rehearsal?: RehearsalFactory;
  stackFactory: StackFactory;
  createProgram: ProgramFactory;
  /** CIDR the runner's SSH comes from (`--ssh-from`); never "*" or 0.0.0.0/0. */
  sshFrom: string;
  /**
   * Pulumi backend (`--backend`); default LATLAB_PULUMI_BACKEND from `env`, else `file://<stateDir>`
   * (state in the run's state folder's `.pulumi/`, runState.ts). One outside the state folder takes
   * its passphrase from the environment (pulumiBackend.ts).
   */
  backendUrl?: string;
  /** The run's resource groups in ARM, for teardown's check and fallback (default: the rehearsal's emulator, or Azure's). */
  runGroups?: () => Promise<RunGroups>;
  /** Asked before anything is created (cost!); resolve false to stop. Absent = `--yes`. */
  confirm?: (summary: string) => Promise<boolean>;
  /**
   * Aborts an up() in flight (Ctrl-C / SIGTERM). The runner's TargetContext carries no signal
   * today: pass the run's signal here, or add `signal` to TargetContext (read when present).
   */
  signal?: AbortSignal;
  /** Folder the CLI keeps run folders in, for the printed `latlab destroy` command. */
  resultsRoot?: string;
  adminUsername?: string;
  /**
   * The expiresAt tag for a run created at `createdAt`. Default: validateAzure's
   * recommendedExpiresAt. Whatever it returns is checked with validateAzure's checkTtl, the same
   * check the program applies, so the target and the program never disagree about a TTL.
   */
  expiresAt?: (plan: Plan, createdAt: Date) => Date;
  /** Environment: PULUMI_CONFIG_PASSPHRASE, LATLAB_STATE_DIR / XDG_STATE_HOME (where the run's state folder is). */
  env?: NodeJS.ProcessEnv;
  now?: () => Date;
  /** How often a failed destroy is tried before the run is declared leaked (default 3). */
  destroyAttempts?: number;
  /** Pause before the n-th retry of a destroy: n × this (default 5 s). */
  destroyRetryDelayMs?: number;
}

export { displayUrl, makeRedactor };

export class AzureTargetError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "AzureTargetError";
  }
}

// ---------------------------------------------------------------------------------------------
// Pure helpers

const isoOrInvalid = (d: Date) => (Number.isNaN(d.getTime()) ? "(invalid date)" : d.toISOString());


/**
 * Checks `--ssh-from`: one IPv4 address or CIDR, never the whole Internet. IPv6 is refused: the
 * VMs have IPv4 public addresses only, and an NSG rule allowing an IPv6 source would let no SSH
 * through — the run would fail later, silently, on a timeout.
 */
export function checkSshFrom(value: string): string {
  // One rule set for the flag: the preflight's and the program's (validateAzure.sshFromProblem).
  const problem = sshFromProblem(value);
  if (problem) throw new AzureTargetError(`azure target: --ssh-from: ${problem}`);
  return value.trim();
}


/**
 * Turns the stack's outputs into what the runner needs: SSH to the public IP as the admin
 * user with the run's client key, pinned to the host key latlab generated for that host; a
 * readiness check (cloud-init done) and a probe of what the VM really is (./probe.ts).
 */
export function endpointsFromOutputs(plan: Plan, outputs: AzureOutputs, keys: Pick<RunKeys, "client" | "hosts">, username: string): HostEndpoint[] {
  const problems: string[] = [];
  const endpoints: HostEndpoint[] = [];
  for (const d of plan.deployments) {
    for (const h of d.hosts) {
      const name = hostName(d.index, h.role);
      const out = outputs.hosts.find((o) => (o.deployment === d.id || o.deployment === String(d.index)) && o.role === h.role);
      const key = keys.hosts[name];
      if (!out) {
        problems.push(`host ${h.role} of deployment ${d.id} (${name}) is missing from the stack outputs`);
        continue;
      }
      if (!key) {
        problems.push(`no host key was generated for ${name}`);
        continue;
      }
      const reported = out.hostKey.trim().split(/\s+/).slice(0, 2).join(" ");
      if (reported && reported !== key.publicKey) problems.push(`${name}: the stack reports a host key other than the one latlab generated`);
      if (!out.publicIp) problems.push(`${name}: no public IP in the stack outputs`);
      endpoints.push({
        deployment: d.id,
        role: h.role,
        ssh: { host: out.publicIp, port: 22, username, privateKey: keys.client.privateKey },
        hostKey: key.publicKey,
        privateAddress: out.privateIp,
        publicAddress: out.publicIp,
        // Azure translates the public IP to the NIC's private address: public-path traffic arrives there.
        publicPathArrivesAt: out.privateIp,
        workDir: "/tmp/latlab",
        actual: {},
        // Wait for cloud-init (packages, the marker), then read back what Azure really gave: IMDS + the VF.
        ...azureReadyAndProbe(),
      });
    }
  }
  if (problems.length > 0) throw new AzureTargetError(`azure target: the deployed stack does not match the plan:\n  ${problems.join("\n  ")}`);
  return endpoints;
}


/**
 * Refuses, before anything is created, a run (or a wave of one: the plan given is what is about
 * to be deployed) the subscription's vCPU quotas, Standard public IP quota or VM size
 * restrictions cannot hold: otherwise the first thing a user sees is a half-deployed stack failing
 * with QuotaExceeded. One message names every family, region, need and availability. Public IPs
 * are checked where the capacity read includes the Network usages.
 */
export async function checkSubscriptionCapacity(
  plan: Plan,
  readCapacity: (regions: readonly string[]) => Promise<ComputeCapacity>,
  log: (m: string) => void,
): Promise<NonNullable<AzureSettings["sizeFacts"]>> {
  const regions = [...new Set(plan.deployments.flatMap((d) => d.hosts.map((h) => h.region)))].sort();
  log(`azure: checking the subscription's vCPU quotas and VM sizes in ${regions.join(", ")}…`);
  let capacity: ComputeCapacity;
  try {
    capacity = await readCapacity(regions);
  } catch (e) {
    throw new AzureTargetError(`azure target: could not read the subscription's quotas and VM sizes (nothing was created): ${(e as Error).message}`, { cause: e });
  }
  // The subscription's own SKU list is the truth for every size: vCPUs and family for the quota,
  // Accelerated Networking, and what the VM must boot (image generation, disk controller).
  const live = Object.values(capacity.skus).flat();
  const needs = vcpuNeeds(plan, live);
  const issues = [
    ...checkCapacity(needs, capacity.usages, capacity.skus),
    ...(capacity.networkUsages ? publicIpIssues(plan, capacity.networkUsages) : []),
    ...sizeIssues(plan, live).map((i) => ({ message: `${i.path}: ${i.message}` })),
  ];
  if (issues.length > 0) {
    throw new AzureTargetError(`azure target: not deploying (nothing was created): the subscription cannot hold this run:\n  ${issues.map((i) => i.message).join("\n  ")}`);
  }
  const ips = [...publicIpNeeds(plan)].map(([region, n]) => `${region} ${n}`).join(", ");
  log(`azure: quotas and sizes ok — ${formatVcpuNeeds(needs)}${capacity.networkUsages ? `; Standard public IPs: ${ips}` : "; public IPs not checked (Network usages not read)"}`);
  const facts: NonNullable<AzureSettings["sizeFacts"]> = {};
  for (const size of new Set(plan.deployments.flatMap((d) => d.hosts.map((h) => h.size)))) {
    const f = sizeFacts(size, live);
    if (f.origin === "live") facts[size] = { hyperVGenerations: f.hyperVGenerations, diskControllerTypes: f.diskControllerTypes };
  }
  return facts;
}

/**
 * The cost lines of a confirmation: `own` the cost of the plan about to be deployed (a wave's, in
 * a run in waves), `whole` the whole run's, every wave. One line when they are the same (the run
 * in one deploy); only the whole run's, said to be that, when the deploy's own is not known.
 */
export function deployCostLines(cost: { own?: string | undefined; whole?: string | undefined }): string[] {
  const { own, whole } = cost;
  if (own !== undefined && (whole === undefined || own === whole)) return [`cost: ${own}`];
  if (own !== undefined) return [`cost of this wave: ${own}`, `cost of the whole run, every wave: ${whole}`];
  return whole !== undefined ? [`cost of the whole run (every wave, when it goes in waves): ${whole}`] : [];
}

export function deploySummary(plan: Plan, runId: string, expiresAt: Date, cost?: string | { own?: string | undefined; whole?: string | undefined }): string {
  const sizes = new Map<string, number>();
  const regions = new Set<string>();
  for (const d of plan.deployments) for (const h of d.hosts) {
    sizes.set(h.size, (sizes.get(h.size) ?? 0) + 1);
    regions.add(h.region);
  }
  const vms = [...sizes.values()].reduce((a, b) => a + b, 0);
  return (
    `azure: run ${runId} will create ${vms} VM${vms === 1 ? "" : "s"} (${[...sizes].map(([s, n]) => `${n}× ${s}`).join(", ")}) ` +
    `in ${[...regions].join(", ")} across ${plan.deployments.length} deployment${plan.deployments.length === 1 ? "" : "s"}; ` +
    `they are billed while they exist, tagged owner=latlab, expiresAt=${expiresAt.toISOString()}, and destroyed at the end of the run` +
    deployCostLines(typeof cost === "string" ? { own: cost } : (cost ?? {}))
      .map((l) => `\n  ${l}`)
      .join("")
  );
}

const AZURE_SHAPING: ShapingStatus = {
  latency: "not-applicable",
  bandwidth: "not-applicable",
  note: "shaping: not applicable — real Azure network paths, nothing emulated",
};

const REHEARSAL_SHAPING: ShapingStatus = {
  latency: "unavailable",
  bandwidth: "unavailable",
  note: "rehearsal: Azure played by latlab's emulator on this machine (ARM, VMs as network namespaces); no latency or bandwidth model — these numbers are this machine's kernel, not Azure's: the rehearsal checks the run, not the network",
};

// ---------------------------------------------------------------------------------------------

interface Session {
  runId: string;
  runDir: string;
  /** Keys, passphrase, Pulumi state and workspace: outside the results folder (runState.ts). */
  stateDir: string;
  log: (message: string) => void;
  redact: (line: string) => string;
  stackName: string;
  backendUrl: string;
  /** Set when the backend outlives the state folder (pulumiBackend.ts): passphrase from the environment, run tags on the stack. */
  remoteBackend?: RunBackend;
  abort: AbortController;
  pendingUp: Promise<unknown>;
  keys?: RunKeys;
  state?: AzureRunState;
  rehearsal?: Rehearsal;
  /** Set as soon as the stack is open: from then on down() destroys it. */
  driver?: StackDriver;
  downPromise?: Promise<TeardownReport>;
  /** Aborted by handOver(): the teardown in flight starts no Pulumi operation, retries nothing, and leaves the run state and the emulator to the hand-over. */
  handingOver: AbortController;
  /** The run's groups in ARM, opened once (the teardown's, and the hand-over's: its token then is warm). */
  groups?: Promise<RunGroups>;
  handOver?: Promise<HandOver>;
}

/**
 * Hosts as Azure VMs, deployed by the Pulumi program in ./program.ts through the StackDriver
 * seam. up() streams Pulumi's progress to the run log; down() always destroys the stack and
 * removes it — after success, a failed up() and an interrupted one — and reports a destroy that
 * failed as a leak with the exact command that finishes it.
 */
export class AzureTarget implements Target {
  readonly name = "azure";
  /**
   * Deployments are separate VMs: their cells run at the same time (Target). A rehearsal too,
   * although its VMs are network namespaces sharing this machine's CPUs: it checks the run
   * Azure would make — this concurrent path included — not the network, and its numbers are
   * already declared not Azure's (REHEARSAL_SHAPING); it also finishes sooner.
   */
  readonly concurrentDeployments = true;
  private session: Session | null = null;
  private readonly options: AzureTargetOptions;

  constructor(options: AzureTargetOptions) {
    this.options = options;
  }

  async up(plan: Plan, ctx: TargetContext): Promise<Environment> {
    if (this.session && !this.session.downPromise) throw new AzureTargetError("azure target: up() called while a previous run is still up; call down() first");
    const abort = new AbortController();
    const external = [this.options.signal, (ctx as TargetContext & { signal?: AbortSignal }).signal].filter((s): s is AbortSignal => s !== undefined);
    const signal = AbortSignal.any([abort.signal, ...external]);
    const runDir = resolve(ctx.runDir);
    const env = this.options.env ?? process.env;
    const stateDir = runStateDir(ctx.runId, env);
    // --backend, else LATLAB_PULUMI_BACKEND, else the state folder's. One that outlives the state
    // folder without a passphrase in the environment is refused here, before anything starts.
    let backend: RunBackend;
    try {
      backend = runBackend(this.options.backendUrl, stateDir, env);
      if (backend.remote) remotePassphrase(backend, env);
    } catch (e) {
      throw new AzureTargetError(`azure target: ${(e as Error).message}`, { cause: e });
    }
    const session: Session = {
      runId: ctx.runId,
      runDir,
      stateDir,
      log: ctx.log,
      redact: (l) => l,
      stackName: stackNameFor(ctx.runId),
      backendUrl: backend.url,
      ...(backend.remote ? { remoteBackend: backend } : {}),
      abort,
      pendingUp: Promise.resolve(),
      handingOver: new AbortController(),
    };
    this.session = session;
    const p = this.bringUp(plan, session, signal);
    session.pendingUp = p.catch(() => undefined);
    return p;
  }

  private async bringUp(plan: Plan, s: Session, signal: AbortSignal): Promise<Environment> {
    const o = this.options;
    const now = o.now ?? (() => new Date());
    const env = o.env ?? process.env;
    // Inside GitHub Actions, the run's tags name its GitHub run (a bad GITHUB_* value stops it before anything exists).
    const githubRun = githubRunFromEnv(env);
    const log = (m: string) => s.log(s.redact(m));
    const interrupted = () => new AzureTargetError("azure target: deploy interrupted");
    if (o.rehearsal) {
      log("azure: rehearsal — starting latlab's Azure emulator (nothing is created in Azure, nothing is billed)…");
      s.rehearsal = await o.rehearsal(s.runDir, log);
      if (signal.aborted) throw interrupted();
    }
    const sshFrom = checkSshFrom(s.rehearsal?.sshFrom ?? o.sshFrom);
    const adminUsername = o.adminUsername ?? "latlab";

    const createdAt = now();
    const expiresAt = (o.expiresAt ?? recommendedExpiresAt)(plan, createdAt);
    const ttlIssues = checkTtl(plan, expiresAt, createdAt);
    if (ttlIssues.length > 0) {
      throw new AzureTargetError(
        `azure target: run created at ${isoOrInvalid(createdAt)} with expiresAt ${isoOrInvalid(expiresAt)} refused (nothing was created): ${ttlIssues.map((i) => i.message).join("; ")}`,
      );
    }
    const readCapacity = s.rehearsal ? (regions: readonly string[]) => s.rehearsal!.readCapacity(regions) : o.readCapacity;
    const liveSizeFacts = readCapacity ? await checkSubscriptionCapacity(plan, readCapacity, log) : undefined;
    if (signal.aborted) throw interrupted();
    const summary = deploySummary(plan, s.runId, expiresAt, s.rehearsal ? undefined : { own: o.costOf?.(plan), whole: o.costSummary });
    if (s.rehearsal) {
      const rehearsed = `${summary} — rehearsed: by the emulator, at no cost`;
      // The real run's question, asked the same way (issue 23: a rehearsal refuses what the real
      // run refuses): a scripted run without --yes and no terminal is refused here too.
      if (o.confirm) {
        if (!(await o.confirm(rehearsed))) throw new AzureTargetError("azure target: deploy not confirmed; nothing was created (the rehearsal asks what the real run asks: --yes answers it)");
      } else log(rehearsed);
    } else if (o.confirm) {
      if (!(await o.confirm(summary))) throw new AzureTargetError("azure target: deploy not confirmed; nothing was created");
    } else {
      log(summary);
    }
    if (signal.aborted) throw interrupted();

    // Keys and the bookkeeping `latlab destroy` needs, before anything exists in Azure; in the
    // run's state folder, never in the results folder (shared, uploaded by CI), which gets a pointer.
    await makeStateDir(s.stateDir);
    const keys = await generateRunKeys(plan, s.stateDir);
    s.keys = keys;
    const { passphrase, source } = await createPassphrase(s.stateDir, env, s.remoteBackend);
    s.redact = makeRedactor([keys.client.privateKey, ...Object.values(keys.hosts).map((k) => k.privateKey)], { whole: [passphrase] });
    s.state = {
      runId: s.runId,
      projectName: PROJECT_NAME,
      stackName: s.stackName,
      backendUrl: s.backendUrl,
      passphrase: source,
      resourceGroup: null,
      createdAt: createdAt.toISOString(),
      expiresAt: expiresAt.toISOString(),
      status: "deploying",
      updatedAt: now().toISOString(),
      ...(s.rehearsal ? { rehearsal: { emulatorHome: s.rehearsal.emulatorHome } } : {}),
      ...(o.subscriptionId && !s.rehearsal ? { subscriptionId: o.subscriptionId } : {}),
      resultsDir: s.runDir,
    };
    await writeRunState(s.stateDir, s.state);
    await writePointer(s.runDir, { runId: s.runId, stateDir: s.stateDir });

    const settings: AzureSettings = {
      runId: s.runId,
      experiment: plan.experiment.name,
      sshFrom,
      adminUsername,
      sshPublicKey: keys.client.publicKey,
      hostKeys: keys.hosts,
      createdAt,
      expiresAt,
      ...(s.rehearsal ? { addressSpace: s.rehearsal.addressSpace } : {}),
      ...(liveSizeFacts ? { sizeFacts: liveSizeFacts } : {}),
      ...(githubRun ? { githubRun } : {}),
    };
    const program = o.createProgram(plan, settings);
    const location = plan.deployments[0]?.hosts[0]?.region;
    if (signal.aborted) throw interrupted();

    log(`azure: opening stack ${s.stackName} on ${displayUrl(s.backendUrl)}…`);
    s.driver = await o.stackFactory.open({
      runId: s.runId,
      projectName: PROJECT_NAME,
      stackName: s.stackName,
      program,
      backendUrl: s.backendUrl,
      passphrase,
      config: {
        ...(location ? { "azure-native:location": location } : {}),
        // The subscription the quota check read: the deploy must not land in another one.
        ...(o.subscriptionId && !s.rehearsal ? { "azure-native:subscriptionId": o.subscriptionId } : {}),
      },
      workDir: workspaceDir(s.stateDir),
      pulumiVersion: PULUMI_CLI_VERSION,
      // What `latlab destroy --backend` needs where this state folder is not (destroyRun.ts RUN_TAGS).
      ...(s.remoteBackend ? { tags: runStackTags(s.state) } : {}),
      ...(s.rehearsal ? { env: s.rehearsal.env } : {}),
    });
    // `latlab destroy` opens the stack with a CLI of this version's major.minor.
    if (s.driver.cliVersion) await this.saveState(s, { pulumiVersion: s.driver.cliVersion });
    if (signal.aborted) throw interrupted();

    log(`azure: deploying (pulumi up)…`);
    const lines = lineBuffer((l) => log(`azure: ${l}`));
    try {
      await s.driver.up({ onOutput: lines.push, signal });
    } catch (e) {
      lines.flush();
      if (signal.aborted) throw new AzureTargetError("azure target: deploy interrupted; the partial stack is destroyed at teardown", { cause: e });
      throw new AzureTargetError(`azure target: deploy failed: ${s.redact(summarizeCommandError(e))}`, { cause: e });
    }
    lines.flush();
    if (signal.aborted) throw interrupted();

    const raw = await s.driver.outputs();
    const parsed = AzureOutputsSchema.safeParse(raw);
    if (!parsed.success) {
      throw new AzureTargetError(`azure target: the stack outputs are not what latlab expects: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
    }
    const outputs = parsed.data;
    if (s.rehearsal) {
      // Never SSH to, nor measure, an address the emulator did not create: a host elsewhere means the
      // engine used another azure-native than the emulator's (teardown still destroys the stack).
      const foreign = outputs.hosts.flatMap((h) => [h.publicIp, h.privateIp]).filter((a) => a && !s.rehearsal!.owns(a));
      if (foreign.length) throw new AzureTargetError(`azure target: rehearsal: the stack reports addresses the emulator did not hand out (${foreign.join(", ")}): the deploy did not go to the emulator; nothing is contacted`);
    }
    s.state = { ...s.state, resourceGroup: outputs.resourceGroup, status: "up", updatedAt: now().toISOString() };
    await writeRunState(s.stateDir, s.state);
    const hosts = endpointsFromOutputs(plan, outputs, keys, adminUsername);
    // What ARM says of the placement (a PPG Azure did not align is said in the report, never a failure).
    const readPlacement = s.rehearsal ? s.rehearsal.readPlacement : o.readPlacement;
    if (readPlacement) await attachPlacement(plan, outputs, hosts, readPlacement, log);
    if (signal.aborted) throw interrupted();
    // The emulator's VMs have no Accelerated Networking VF and no size's bandwidth: say so next to what the probe finds.
    const shaping = s.rehearsal ? (s.rehearsal.shaping?.() ?? REHEARSAL_SHAPING) : AZURE_SHAPING;
    if (s.rehearsal) {
      for (const h of hosts) {
        // Nor placement: every VM of a VNet hangs off the same kind of bridge, whatever its zone, PPG or
        // availability set, and regions differ by a link, not a distance. Differences are noise here —
        // unless the emulator applied latlab's latency model by placement and Accelerated Networking:
        // then they are the model's, and the report labels them modelled. Sizes stay unemulated, and of
        // Accelerated Networking only its latency is modelled (the NIC's flag picks the model's row).
        const modelled = shaping.latency === "applied";
        Object.assign(h.actual, modelled ? { accelnetEmulated: LATENCY_ONLY, sizeEmulated: false } : { accelnetEmulated: false, sizeEmulated: false, ppgEmulated: false, zoneEmulated: false, regionEmulated: false, availabilitySetEmulated: false });
        if (h.ready) h.ready.timeoutSeconds = s.rehearsal.readyTimeoutSeconds;
      }
    }
    // For a person who wants to look around: ssh -i <stateDir>/client_rsa -o UserKnownHostsFile=<stateDir>/known_hosts
    await writeFile(join(s.stateDir, "known_hosts"), hosts.map((h) => `${h.ssh.host} ${h.hostKey}\n`).join(""), { mode: 0o600 });
    log(`azure: ${hosts.length} hosts up in resource group ${outputs.resourceGroup}`);
    return {
      hosts,
      shaping,
      facts: {
        ...(s.rehearsal ? s.rehearsal.facts : {}),
        target: s.rehearsal ? "azure (rehearsal: latlab's emulator on this machine)" : "azure",
        ...(s.driver.cliVersion ? { pulumiCli: s.driver.cliVersion } : {}),
        stack: s.stackName,
        backend: displayUrl(s.backendUrl),
        // Where the keys, passphrase and Pulumi state are: not in the results folder (`latlab destroy` reads this).
        stateDir: s.stateDir,
        resourceGroup: outputs.resourceGroup,
        expiresAt: expiresAt.toISOString(),
        sshFrom,
        adminUsername,
      },
    };
  }

  /**
   * The subscription's free quota in the plan's regions (Compute and Network usages: limit − in
   * use), which the run's waves are sized against (plan/waves.ts), read where the deploy goes:
   * Azure, or a rehearsal's emulator — started for the read and stopped again (each wave's up()
   * starts its own) — with the SKU entries read beside it (every region's, together), so each
   * size's vCPUs and family come from the subscription's own list, as each wave's check counts
   * them. Undefined when there is nothing to read. Creates nothing; each wave's up() still checks
   * its own deployments against the figures of that moment.
   */
  async waveLimits(plan: Plan, ctx: TargetContext): Promise<TargetWaveLimits | undefined> {
    const regions = [...new Set(plan.deployments.flatMap((d) => d.hosts.map((h) => h.region)))];
    const o = this.options;
    if (!o.rehearsal && !o.readCapacity) return undefined;
    ctx.log(`azure: reading the subscription's free quota in ${regions.join(", ")} (vCPUs, Standard public IPs) and its VM sizes to size the run's waves…`);
    try {
      if (o.rehearsal) {
        const rehearsal = await o.rehearsal(resolve(ctx.runDir), ctx.log);
        try {
          const capacity = await rehearsal.readCapacity(regions);
          return { ...liveLimits(regions, capacity.usages, capacity.networkUsages), skus: Object.values(capacity.skus).flat() };
        } finally {
          await rehearsal.stop().catch(() => undefined);
        }
      }
      const capacity = await o.readCapacity!(regions);
      return { ...liveLimits(regions, capacity.usages, capacity.networkUsages), skus: Object.values(capacity.skus).flat() };
    } catch (e) {
      throw new AzureTargetError(`azure target: could not read the subscription's quotas and VM sizes (nothing was created): ${(e as Error).message}`, { cause: e });
    }
  }

  async down(): Promise<TeardownReport> {
    const s = this.session;
    if (!s) return { status: "not-started", errors: [], removed: [] };
    s.downPromise ??= this.tearDown(s);
    const report = await s.downPromise;
    return { status: report.status, errors: [...report.errors], removed: [...report.removed] };
  }

  /**
   * The run must end within seconds (Target.handOver): ARM is asked to delete the run's resource
   * group (one per run: program/names.ts resourceGroupName) and goes on alone — the hand-over
   * returns once ARM accepted, without waiting for anything to go. Pulumi's operation in flight
   * gets SIGINT (it starts nothing new), the teardown in flight stops where it is, and state.json
   * says "handed-over": `latlab destroy` (or the workflow's `latlab sweep --github-run`) confirms
   * and finishes it. A rehearsal's emulator is left as it is, its ARM state on disk, for
   * `latlab destroy` to resume.
   */
  async handOver(options: { withinMs: number; signal?: NodeJS.Signals }): Promise<HandOver> {
    const s = this.session;
    if (!s) return { started: ["nothing to remove: nothing was brought up"], errors: [], finishWith: [] };
    s.handOver ??= this.startRemovingEverything(s, options.withinMs);
    return s.handOver;
  }

  private async startRemovingEverything(s: Session, withinMs: number): Promise<HandOver> {
    const until = Date.now() + withinMs;
    s.abort.abort();
    s.handingOver.abort();
    const group = s.state?.resourceGroup ?? namePrefix(s.runId);
    if (!s.driver || !s.state || s.state.status === "destroyed" || s.state.status === "not-deployed") {
      // The stack was never opened (or is gone): nothing of the run exists in Azure.
      return { started: ["nothing to remove: the run's Pulumi stack was never opened, so nothing exists in Azure"], errors: [], finishWith: [] };
    }
    const finishWith = this.finishCommands(s);
    let outcome: Awaited<ReturnType<typeof startGroupDeletion>>;
    try {
      outcome = await startGroupDeletion(await this.runGroupsOf(s), group, s.runId, until);
    } catch (e) {
      outcome = { error: `resource group ${group}: ARM could not be asked: ${(e as Error).message}` };
    }
    const at = (this.options.now ?? (() => new Date()))().toISOString();
    s.log(s.redact(`azure: teardown handed over: ${"started" in outcome ? outcome.started : "gone" in outcome ? outcome.gone : outcome.error}`));
    await this.saveState(s, {
      status: "handed-over",
      handedOver: { at, deleting: "started" in outcome ? [group] : [] },
      ...("error" in outcome ? { lastError: outcome.error } : {}),
    });
    return "error" in outcome ? { started: [], errors: [outcome.error], finishWith } : { started: ["started" in outcome ? outcome.started : outcome.gone], errors: [], finishWith };
  }

  /** What finishes a handed-over teardown: `latlab destroy`, and the sweep that finds the run's groups by their tags. */
  private finishCommands(s: Session): string[] {
    const commands = [destroyCommand(s.runId, s.runDir, this.options.resultsRoot)];
    let githubRunId: string | undefined;
    try {
      githubRunId = githubRunFromEnv(this.options.env ?? process.env)?.runId;
    } catch {
      // Tags the run could not have: up() refused it before creating anything.
    }
    if (s.rehearsal) commands.push("npx latlab sweep --rehearse --delete");
    else if (githubRunId) commands.push(`npx latlab sweep --github-run ${githubRunId} --delete`);
    return commands;
  }

  private runGroupsOf(s: Session): Promise<RunGroups> {
    const o = this.options;
    s.groups ??= o.runGroups ? o.runGroups() : s.rehearsal ? Promise.resolve(s.rehearsal.groups) : azureRunGroups(o.env ?? process.env, o.subscriptionId);
    return s.groups;
  }

  private async tearDown(s: Session): Promise<TeardownReport> {
    // An up() in flight stops (Pulumi gets SIGINT) and is waited for: nothing is created behind our back.
    s.abort.abort();
    // ARM's client and its token made now, not when a hand-over has 2 s left: one read of the group, its answer unused.
    if (s.driver && !s.rehearsal) {
      const group = s.state?.resourceGroup ?? namePrefix(s.runId);
      void this.runGroupsOf(s)
        .then((g) => g.tags(group))
        .catch(() => undefined);
    }
    await s.pendingUp;
    const report = await this.destroyStack(s);
    // Handed over: the emulator stays as it is (its ARM state on disk) for `latlab destroy` to resume.
    if (!s.rehearsal || s.handingOver.signal.aborted) return report;
    // The emulator goes last: whatever its ARM still holds is what a destroy on Azure would have left behind.
    const stopped = await s.rehearsal.stop().catch((e: Error) => ({ errors: [`stopping the emulator: ${e.message}`], removed: [] as string[] }));
    const errors = [...report.errors, ...stopped.errors];
    const removed = [...report.removed, ...stopped.removed];
    // A rehearsal recorded destroyed with its destroy's leak (destroyStack): the emulator has now
    // removed that too, so the keys and passphrase open nothing — they go, as after a clean destroy.
    if (stopped.errors.length === 0 && s.state?.status === "destroyed") for (const p of await removeSpentRunFiles(s.stateDir)) removed.push(`file ${p}`);
    return { status: errors.length ? "failed" : report.status === "not-started" ? "ok" : report.status, errors, removed };
  }

  private async destroyStack(s: Session): Promise<TeardownReport> {
    const cmd = destroyCommand(s.runId, s.runDir, this.options.resultsRoot);
    const driver = s.driver;
    if (!driver) {
      // The stack was never opened: nothing exists in Azure.
      if (!s.keys && !s.state) return { status: "not-started", errors: [], removed: [] };
      // Nothing exists in Azure: the keys, passphrase and workspace open nothing and go.
      const removed = (await removeSpentRunFiles(s.stateDir)).map((p) => `file ${p}`);
      if (s.state) await this.saveState(s, { status: "not-deployed" });
      return { status: "ok", errors: [], removed };
    }
    const o = this.options;
    s.log(s.redact(`azure: destroying stack ${s.stackName}${s.state?.resourceGroup ? ` (resource group ${s.state.resourceGroup})` : ""}…`));
    const outcome = await tearDownStack(
      {
        runId: s.runId,
        stackName: s.stackName,
        backendUrl: s.backendUrl,
        resourceGroup: s.state?.resourceGroup ?? namePrefix(s.runId),
        expiresAt: s.state?.expiresAt ?? "unknown",
        finishCommand: cmd,
        rehearsal: s.rehearsal !== undefined,
      },
      {
        open: async () => driver,
        groups: () => this.runGroupsOf(s),
        log: s.log,
        redact: s.redact,
        handedOver: s.handingOver.signal,
        // tearDownStack's own defaults (3 attempts, n × 5 s) unless a test asks otherwise.
        ...(o.destroyAttempts !== undefined ? { attempts: o.destroyAttempts } : {}),
        ...(o.destroyRetryDelayMs !== undefined ? { retryDelayMs: o.destroyRetryDelayMs } : {}),
      },
    );
    const errors = [...outcome.errors];
    const removed = [...outcome.removed];
    // Handed over: the run state is the hand-over's to write, and the keys and passphrase stay for `latlab destroy`.
    if (s.handingOver.signal.aborted) return { status: "failed", errors, removed };
    // What ARM still holds goes into results.json too.
    removed.push(leftRecord(s.state?.resourceGroup ?? namePrefix(s.runId), outcome));
    if (outcome.status === "destroyed" && errors.length === 0) for (const p of await removeSpentRunFiles(s.stateDir)) removed.push(`file ${p}`);
    await this.saveState(s, {
      // A rehearsal's emulator removes what is left when it stops (after this): nothing stays, nothing costs.
      status: outcome.status === "live" ? "leaked" : outcome.status === "leaked" && s.rehearsal ? "destroyed" : outcome.status,
      lastError: errors.length > 0 ? errors.join("\n") : undefined,
    });
    return { status: errors.length > 0 ? "failed" : "ok", errors, removed };
  }

  private async saveState(s: Session, patch: Partial<AzureRunState>): Promise<void> {
    if (!s.state) return;
    s.state = { ...s.state, ...patch, updatedAt: (this.options.now ?? (() => new Date()))().toISOString() };
    try {
      await writeRunState(s.stateDir, s.state);
    } catch (e) {
      s.log(`azure: could not write ${statePath(s.stateDir)}: ${(e as Error).message}`);
    }
  }
}
