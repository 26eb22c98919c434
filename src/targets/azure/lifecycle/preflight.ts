import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { createInterface } from "node:readline/promises";
import { fileURLToPath } from "node:url";
import type { PlanOptions } from "../../../plan/buildPlan.ts";
import type { Plan } from "../../../plan/types.ts";
import type { TargetOptions } from "../../registry.ts";
import type { Target } from "../../target.ts";
import { AzureTarget } from "./azureTarget.ts";
import { addressPlanIssues } from "../program/network.ts";
import { detectRunnerAddress } from "../access/runnerAddress.ts";
import { costSummary, deployCostGate, estimateCost, fetchLivePrices, loadPriceSnapshot, mergeSnapshots, type PriceSnapshot } from "../catalog/prices.ts";
import { createPulumiStackFactory, locatePulumiCli } from "./stack.ts";
import { resolveSubscription } from "./subscription.ts";
import { AzureValidationError, expectedRun, recommendedExpiresAt, sshFromProblem, validateForAzure, worstCaseRun } from "../catalog/validateAzure.ts";

const BIN = fileURLToPath(new URL("../../../../bin/latlab.js", import.meta.url));

/** The listing is offline (mocks) but may fetch live prices: generous, yet never a hang. */
export const LISTING_TIMEOUT_MS = 5 * 60_000;
/** Large experiments list thousands of resources with their inputs (JSON): far above 1 MiB. */
export const LISTING_MAX_BUFFER = 256 * 1024 * 1024;

export type AzurePreflightOptions = TargetOptions;

/** The `latlab plan … --target azure` arguments that list the same run: same duration, same prices. */
export function listingArgs(source: string, options: Pick<AzurePreflightOptions, "duration" | "livePrices" | "replicas">): string[] {
  const args = ["plan", source, "--target", "azure"];
  const d = options.duration;
  if (d) args.push("--duration", "seconds" in d ? String(d.seconds) : `${d.factor}x`);
  if (options.replicas !== undefined) args.push("--replicas", String(options.replicas));
  if (options.livePrices) args.push("--live-prices");
  return args;
}

/** Why a listing subprocess did not succeed, in words; undefined when it did. */
export function listingFailure(r: Pick<SpawnSyncReturns<string>, "status" | "signal" | "stdout" | "stderr" | "error">, timeoutMs = LISTING_TIMEOUT_MS): string | undefined {
  const code = (r.error as NodeJS.ErrnoException | undefined)?.code;
  if (code === "ETIMEDOUT") return `the offline Azure listing did not finish within ${Math.round(timeoutMs / 1000)} s`;
  if (code === "ENOBUFS") return `the offline Azure listing printed more than ${LISTING_MAX_BUFFER / 1024 / 1024} MiB`;
  if (r.error) return `the offline Azure listing could not run: ${r.error.message}`;
  if (r.status !== 0) return `the offline Azure listing failed${r.signal ? ` (${r.signal})` : ""}:\n${r.stderr || r.stdout}`;
  return undefined;
}

/**
 * The resource listing of `latlab plan --target azure`, printed before anything is deployed. In a
 * separate process: Pulumi's mocks are process-wide and must not meet a real deploy.
 */
function printListing(options: AzurePreflightOptions): void {
  const listing = spawnSync(process.execPath, [BIN, ...listingArgs(options.source, options)], {
    encoding: "utf8",
    timeout: LISTING_TIMEOUT_MS,
    killSignal: "SIGKILL",
    maxBuffer: LISTING_MAX_BUFFER,
  });
  const failure = listingFailure(listing);
  if (failure) throw new Error(failure);
  options.log(listing.stdout.trimEnd());
}

/**
 * The cost line of a run, or of a part of it (a wave's plan: its own bring-up, cells and
 * teardown), at the given prices: the preflight's line for the whole run, and each wave's at its
 * confirmation.
 */
export function costOfPart(snapshot: PriceSnapshot, livePrices: boolean): (part: Plan) => string {
  return (part) => {
    const worst = worstCaseRun(part).seconds / 3600;
    return costSummary(estimateCost(part, snapshot, worst), { expectedHours: expectedRun(part).seconds / 3600, worstCaseHours: worst, livePrices });
  };
}

/**
 * Everything checked before a real deploy, cheapest first and all offline until the last step:
 * the SSH source, the plan against Azure's rules, the cost against --max-cost, the resource
 * listing (in a separate process: Pulumi's mocks are process-wide and must not meet a real
 * deploy), and finally the Pulumi CLI.
 */
export async function azurePreflight(plan: Plan, options: AzurePreflightOptions, detect: () => Promise<{ cidr: string; source: string }> = detectRunnerAddress): Promise<void> {
  if (options.rehearse) return rehearsalPreflight(plan, options);
  if (!options.sshFrom) {
    throw new Error(
      "--ssh-from CIDR is required with --target azure: the address your SSH comes from (e.g. 203.0.113.7/32), " +
        "or `--ssh-from auto` to ask a public what-is-my-IP service. The VMs accept SSH from it only.",
    );
  }
  if (options.sshFrom === "auto") {
    const detected = await detect();
    options.log(`--ssh-from auto: this machine's public address is ${detected.cidr} (asked ${detected.source})`);
    // The target is created from the same options: it must see the address, not "auto".
    options.sshFrom = detected.cidr;
  }
  const sshProblem = sshFromProblem(options.sshFrom);
  if (sshProblem) throw new Error(`--ssh-from: ${sshProblem}`);

  const issues = validateForAzure(plan);
  if (issues.length) throw new AzureValidationError(issues, plan.experiment.name);

  // One subscription for the quota check, the deploy and the teardown (lifecycle/subscription.ts).
  const subscription = resolveSubscription();
  options.subscriptionId = subscription.id;
  options.log(`azure: subscription ${subscription.id} (from ${subscription.source})`);

  await checkCost(plan, options);

  printListing(options);

  await locatePulumiCli({ installPulumi: options.installPulumi ?? false, log: options.log });
}

/**
 * The run's cost at the prices the run is given (the list prices latlab ships, merged with live
 * ones under --live-prices) for its worst case, against --max-cost: a cost above it, or one that
 * cannot be estimated without --max-cost, is refused before anything is deployed. One function for
 * the real run and its rehearsal, so that a rehearsal refuses the very budget the real run refuses
 * (issue 23). Sets the cost lines the deploy's confirmation shows.
 */
export async function checkCost(plan: Plan, options: Pick<AzurePreflightOptions, "livePrices" | "maxCost" | "log" | "costOf" | "costSummary" | "rehearse">, fetchLive: typeof fetchLivePrices = fetchLivePrices): Promise<void> {
  let snapshot = loadPriceSnapshot();
  if (options.livePrices) {
    const regions = [...new Set(plan.deployments.flatMap((d) => d.hosts.map((h) => h.region)))];
    const sizes = [...new Set(plan.deployments.flatMap((d) => d.hosts.map((h) => h.size)))];
    snapshot = mergeSnapshots(snapshot, (await fetchLive(regions, sizes)).snapshot);
  }
  const hours = worstCaseRun(plan).seconds / 3600;
  const cost = estimateCost(plan, snapshot, hours);
  const livePrices = Boolean(options.livePrices);
  options.costOf = costOfPart(snapshot, livePrices);
  options.costSummary = options.costOf(plan);
  options.log(options.rehearse ? `estimated cost of this run on Azure (the rehearsal itself costs nothing): ${options.costSummary}` : `estimated cost: ${options.costSummary}`);
  const gate = deployCostGate(cost, { livePrices, ...(options.maxCost !== undefined ? { maxCostUsd: options.maxCost } : {}) });
  if (!gate.ok) {
    // Named by the flag it is about (--max-cost), where it is about one.
    const why = gate.refusals.map((r) => (r.path.startsWith("--") ? `${r.path}: ${r.message}` : r.message)).join("; ");
    // A rehearsal refuses what the real run would: a rehearsal that passes must mean the run can start.
    throw new Error(options.rehearse ? `--rehearse: not rehearsing (nothing was started): the real run refuses this: ${why}` : `not deploying: ${why}`);
  }
  for (const n of gate.notes) options.log(`note: ${n}`);
}

/**
 * `--ssh-from` in a rehearsal: an address is refused (the emulated VMs accept SSH from the
 * emulator's own runner address, not from it); `auto` — "wherever this machine's SSH comes from" —
 * is that address, so it is accepted and dropped, and a CI job (.github/workflows/scheduled.yml)
 * rehearses with the very command it runs on Azure. Returns the line to log, if any.
 */
export function rehearsalSshFrom(options: Pick<AzurePreflightOptions, "sshFrom">): string | undefined {
  if (options.sshFrom === undefined) return undefined;
  if (options.sshFrom !== "auto") throw new Error("--ssh-from does not apply to --rehearse: the emulated VMs accept SSH from the emulator's own runner address");
  delete options.sshFrom;
  return "--ssh-from auto: a rehearsal's VMs accept SSH from the emulator's own runner address (no what-is-my-IP service asked)";
}

/**
 * A rehearsal needs what the emulator needs (root for namespaces; sshd, nft, sudo, the tools
 * the hosts run: this machine's packages play the VMs' ones) and the Pulumi CLI; no account and
 * no --ssh-from (the emulator's own address). Every other check of the real run is made the same
 * way, before anything is started: the plan against Azure's rules, the cost against --max-cost
 * (checkCost: a rehearsal must refuse what the real run refuses), the offline listing.
 */
async function rehearsalPreflight(plan: Plan, options: AzurePreflightOptions): Promise<void> {
  const sshNote = rehearsalSshFrom(options);
  if (sshNote) options.log(sshNote);
  const issues = validateForAzure(plan);
  // The emulator hosts VNets in a /16 (Azure runs get a /8): a plan too large for it is refused now, not after it started.
  const { ALLOWED_VNET_SPACE } = await import("../emulator/fabric/vnetRuleset.ts");
  for (const i of addressPlanIssues(plan, ALLOWED_VNET_SPACE)) issues.push({ path: i.path, message: `${i.message} (a rehearsal's VNets live in ${ALLOWED_VNET_SPACE}; rehearse a smaller part of the experiment)` });
  if (issues.length) throw new AzureValidationError(issues, plan.experiment.name);
  // The budget of the real run, not of the rehearsal's seconds: a rehearsal that passes means the run can start.
  await checkCost(options.realPlan ?? plan, options);
  const { checkLocalPrerequisites } = await import("../../local/preflight.ts");
  const { EMULATOR_BINARIES } = await import("../emulator/prerequisites.ts");
  await checkLocalPrerequisites({ binaries: [...new Set([...options.binaries, ...EMULATOR_BINARIES])], install: options.install, log: options.log });
  printListing(options);
  await locatePulumiCli({ installPulumi: options.installPulumi ?? false, log: options.log });
}

export interface PromptIo {
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  output: NodeJS.WritableStream;
  /** Where stop signals arrive while the question waits (default: this process). */
  signals: Pick<NodeJS.EventEmitter, "on" | "off">;
  /** Makes the run stop as interrupted (default: the SIGINT the terminal swallowed, re-raised). */
  interrupt: () => void;
}

/**
 * At the prompt the terminal is in raw mode: Ctrl-C reaches readline as a key, not the process
 * as SIGINT, so the run's own handler would never hear of it. Hand it on.
 */
function raiseSigint(): void {
  if (process.listenerCount("SIGINT") > 0) process.emit("SIGINT", "SIGINT");
  else process.kill(process.pid, "SIGINT");
}

const PROMPT_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/**
 * Asks on the terminal; without one (CI) the answer is no unless --yes was given. Ctrl-C at the
 * prompt answers no and interrupts the run (exit 130, not a failure); Ctrl-D, a stop signal or a
 * terminal that goes away answer no.
 */
export async function confirmOnTerminal(summary: string, io: Partial<PromptIo> = {}): Promise<boolean> {
  const { input = process.stdin, output = process.stderr, signals = process, interrupt = raiseSigint } = io;
  if (!input.isTTY) {
    output.write(`${summary}\nnot a terminal and no --yes: not deploying\n`);
    return false;
  }
  const rl = createInterface({ input, output });
  let ctrlC = false;
  // Ctrl-C as a key (raw mode): with a listener readline reports it instead of just closing.
  rl.on("SIGINT", () => {
    ctrlC = true;
    rl.close();
  });
  // A signal while asking (kill, hang-up, or Ctrl-C on a cooked terminal): the run's own
  // handler stops the run; the question must not wait for an answer that never comes.
  const stop = () => rl.close();
  for (const s of PROMPT_SIGNALS) signals.on(s, stop);
  const closed = new Promise<undefined>((resolve) => rl.once("close", () => resolve(undefined)));
  let answer: string | undefined;
  try {
    answer = await Promise.race([
      rl.question(`${summary}\nDeploy? [y/N] `).catch((error: unknown) => {
        // Node rejects a pending question with AbortError "Aborted with Ctrl+C" (or "+D").
        if ((error as Error)?.name === "AbortError" && /Ctrl\+C/i.test((error as Error).message)) ctrlC = true;
        return undefined;
      }),
      closed,
    ]);
  } finally {
    for (const s of PROMPT_SIGNALS) signals.off(s, stop);
    rl.close();
  }
  if (ctrlC) {
    output.write("\n");
    interrupt();
    return false;
  }
  return answer !== undefined && /^y(es)?$/i.test(answer.trim());
}

export async function createAzureTarget(options: TargetOptions): Promise<Target> {
  const { createProgram } = await import("../program/program.ts");
  if (options.rehearse) {
    const { startRehearsal } = await import("../emulator/rehearsal.ts");
    return new AzureTarget({
      stackFactory: createPulumiStackFactory({ installPulumi: options.installPulumi ?? false, log: options.log }),
      createProgram,
      sshFrom: "rehearsal",
      rehearsal: startRehearsal,
      ...(options.backend ? { backendUrl: options.backend } : {}),
      ...(options.yes ? {} : { confirm: confirmOnTerminal }),
      resultsRoot: options.resultsRoot,
      expiresAt: recommendedExpiresAt,
    });
  }
  const { readComputeCapacity } = await import("../catalog/computeCapacity.ts");
  const { readPlacementEvidence } = await import("./placementEvidence.ts");
  return new AzureTarget({
    stackFactory: createPulumiStackFactory({ installPulumi: options.installPulumi ?? false, log: options.log }),
    createProgram,
    sshFrom: options.sshFrom!,
    readCapacity: (regions) => readComputeCapacity(regions, options.subscriptionId ? { subscriptionId: options.subscriptionId } : {}),
    readPlacement: (plan, outputs) => readPlacementEvidence(plan, outputs),
    ...(options.subscriptionId ? { subscriptionId: options.subscriptionId } : {}),
    ...(options.costSummary ? { costSummary: options.costSummary } : {}),
    ...(options.costOf ? { costOf: options.costOf } : {}),
    ...(options.backend ? { backendUrl: options.backend } : {}),
    ...(options.yes ? {} : { confirm: confirmOnTerminal }),
    resultsRoot: options.resultsRoot,
    expiresAt: recommendedExpiresAt,
  });
}
