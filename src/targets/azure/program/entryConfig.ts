import * as pulumi from "@pulumi/pulumi";
import { loadExperiment } from "../../../cli/experiments/loadExperiment.ts";
import type { Experiment } from "../../../dsl/experiment.ts";
import { buildPlan, type PlanOptions } from "../../../plan/buildPlan.ts";
import type { Plan } from "../../../plan/types.ts";
import { deriveHostKeys } from "../access/hostKeys.ts";
import type { SshKeyPair } from "../access/keys.ts";
import { createProgram, type AzureProgramOutputs } from "./program.ts";
import { githubRunFromEnv, hostName, type AzureSettings } from "./types.ts";
import { recommendedExpiresAt } from "../catalog/validateAzure.ts";

/**
 * The config of latlab's Azure program as an ordinary Pulumi project (Pulumi.yaml `main:` points
 * at azureEntry.ts, which only default-exports the program: Pulumi's Node.js runtime refuses an
 * entry module with both a default export and named ones):
 *
 *   pulumi config set latlab:sshFrom 203.0.113.7/32
 *   pulumi config set latlab:sshPublicKey "$(cat ~/.ssh/id_rsa.pub)"
 *   pulumi config set --secret latlab:hostKeySeed "$(openssl rand -hex 32)"
 *   pulumi up -c latlab:experiment=ppg-vs-zone
 *
 * builds the same resources as `latlab run <experiment> --target azure` (same plan, same
 * program); the stack outputs are the hosts with their pinned host keys. Config keys
 * (namespace `latlab`):
 *   experiment    required: a name in experiments/ or a path
 *   sshFrom       required: the address SSH is allowed from (never "*")
 *   sshPublicKey  required: OpenSSH "ssh-rsa" public key line for the admin user
 *   hostKeySeed   secret, ≥ 32 characters: host keys are derived from it (stable across `up`s)
 *   hostKeys      secret JSON {"d0-client": {"privateKey", "publicKey"}, …}: instead of the seed
 *   adminUsername default "latlab"
 *   runId         default: the stack name (lower case, [a-z0-9-], ≤ 30)
 *   duration      seconds per tool run ("30") or a factor ("2x"); default the experiment's own for azure
 *   createdAt     ISO date-time; default now (tags)
 *   expiresAt     ISO date-time; default comfortably past the worst-case run (validated: must exceed it)
 *   addressSpace  CIDR the VNets are cut from; default 10.0.0.0/8 (latlab's emulator needs 198.18.0.0/16)
 *
 * Not config: inside GitHub Actions (GITHUB_ACTIONS=true in the environment of `pulumi up`) every
 * resource also carries the run's githubRunId, githubRunAttempt and githubRepository tags, as with
 * `latlab run` (types.ts githubRunFromEnv); an `up` from a later workflow run re-tags them with
 * that run, whose `latlab sweep --github-run` then selects them.
 */

/** Reads one `latlab:` key; undefined when unset. */
export type ConfigSource = (key: string) => string | undefined;

/**
 * Raw config through the runtime (no "use getSecret" warning for the seed: its value is used
 * to derive keys, and the private halves only ever reach Azure inside a Pulumi secret).
 */
export const pulumiConfigSource: ConfigSource = (key) => pulumi.runtime.getConfig(`latlab:${key}`);

function required(source: ConfigSource, key: string, hint: string): string {
  const value = source(key);
  if (value === undefined || value === "") throw new Error(`missing config latlab:${key}: ${hint}`);
  return value;
}

/** `30` (seconds per tool run) or `2x` (scale each tool's own duration). */
export function parseDurationConfig(value: string): NonNullable<PlanOptions["duration"]> {
  const factor = /^(\d+(?:\.\d+)?)x$/i.exec(value);
  if (factor && Number(factor[1]) > 0) return { factor: Number(factor[1]) };
  if (/^\d+(?:\.\d+)?$/.test(value) && Number(value) > 0) return { seconds: Number(value) };
  throw new Error(`config latlab:duration: expected seconds (e.g. 30) or a factor (e.g. 2x), got "${value}"`);
}

/** The plan options `latlab run --target azure` would use: --duration, else the experiment's azure default. */
export function azurePlanOptions(experiment: Experiment, duration?: string): PlanOptions {
  if (duration) return { duration: parseDurationConfig(duration) };
  const seconds = experiment.durationByTarget.azure;
  return seconds ? { duration: { seconds } } : {};
}

/** A stack name as a run id Azure names accept. */
export function runIdFromStack(stack: string): string {
  const id = stack.toLowerCase().replace(/[^a-z0-9-]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 30);
  return id || "stack";
}

function parseDate(source: ConfigSource, key: string): Date | undefined {
  const value = source(key);
  if (value === undefined) return undefined;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw new Error(`config latlab:${key}: not an ISO date-time: "${value}"`);
  return date;
}

/** The plan and the settings for a stack, from its config (and, for the GitHub run tags, the environment). */
export async function planAndSettingsFromConfig(source: ConfigSource, stack: string, now: Date = new Date(), env: NodeJS.ProcessEnv = process.env): Promise<{ plan: Plan; settings: AzureSettings }> {
  // Before the experiment is loaded: a bad GITHUB_* value stops the program before anything is declared.
  const githubRun = githubRunFromEnv(env);
  const ref = required(source, "experiment", "the experiment to deploy, e.g. `-c latlab:experiment=ppg-vs-zone`");
  const { experiment } = await loadExperiment(ref);
  const plan = buildPlan(experiment, azurePlanOptions(experiment, source("duration")));
  const names = plan.deployments.flatMap((d) => d.hosts.map((h) => hostName(d.index, h.role)));

  let hostKeys: Record<string, SshKeyPair>;
  const keysJson = source("hostKeys");
  if (keysJson !== undefined) {
    try {
      hostKeys = JSON.parse(keysJson) as Record<string, SshKeyPair>;
    } catch {
      throw new Error("config latlab:hostKeys: not valid JSON (expected {\"d0-client\": {\"privateKey\": …, \"publicKey\": …}, …})");
    }
  } else {
    const seed = required(source, "hostKeySeed", "set it once, as a secret: `pulumi config set --secret latlab:hostKeySeed \"$(openssl rand -hex 32)\"`");
    hostKeys = deriveHostKeys(seed, names);
  }

  const createdAt = parseDate(source, "createdAt") ?? now;
  const settings: AzureSettings = {
    runId: source("runId") ?? runIdFromStack(stack),
    experiment: experiment.name,
    sshFrom: required(source, "sshFrom", "the runner's address, e.g. 203.0.113.7/32 (never *)"),
    adminUsername: source("adminUsername") ?? "latlab",
    sshPublicKey: required(source, "sshPublicKey", "an OpenSSH ssh-rsa public key line"),
    hostKeys,
    createdAt,
    expiresAt: parseDate(source, "expiresAt") ?? recommendedExpiresAt(plan, createdAt),
    ...(source("addressSpace") ? { addressSpace: source("addressSpace")! } : {}),
    ...(githubRun ? { githubRun } : {}),
    // Defaults computed from "now" differ at every `pulumi up`: keep the first ones.
    ...(source("createdAt") === undefined ? { keepTags: source("expiresAt") === undefined ? (["createdAt", "expiresAt"] as const).slice() : ["createdAt" as const] } : {}),
  };
  return { plan, settings };
}

/** The program for a config source (tests pass their own). */
export async function runAzureEntry(source: ConfigSource): Promise<AzureProgramOutputs> {
  const { plan, settings } = await planAndSettingsFromConfig(source, pulumi.getStack());
  return createProgram(plan, settings)();
}
