import type { SizeFacts } from "../catalog/sizes/sizeFacts.ts";
import { z } from "zod";

/**
 * What the Azure program needs besides the plan. Secrets (private keys) are inputs to the
 * program only; they are never printed, never written into results.
 */
export interface AzureSettings {
  runId: string;
  experiment: string;
  /** Where the runner's SSH comes from: a CIDR, never "*" or 0.0.0.0/0. */
  sshFrom: string;
  adminUsername: string;
  /** The run's client key, RSA (Azure's safe choice), OpenSSH public key line. */
  sshPublicKey: string;
  /** Host keys latlab generated, by host name (see hostName()), written by cloud-init. */
  hostKeys: Record<string, { privateKey: string; publicKey: string }>;
  createdAt: Date;
  /** Tag value past which the sweeper may delete the run: must exceed the worst-case run time. */
  expiresAt: Date;
  /**
   * Where the VNets' addresses come from (default network.ts's AZURE_ADDRESS_SPACE, 10.0.0.0/8).
   * A rehearsal asks for the emulator's 198.18.0.0/16: nothing on the machine that rehearses
   * may send to a private range it does not own.
   */
  addressSpace?: string;
  /** Tags set at creation and not changed by later updates (`ignoreChanges`): the time tags a project stack did not configure. */
  keepTags?: ("createdAt" | "expiresAt")[];
  /**
   * What the subscription's Resource SKUs API says of each size (read before deploying): decides
   * the image generation and disk controller. Absent: the offline catalog (sizes/sizeFacts.ts).
   */
  sizeFacts?: Record<string, Pick<SizeFacts, "hyperVGenerations" | "diskControllerTypes">>;
  /**
   * The GitHub Actions run this run is made in (githubRunFromEnv): tagged on every resource, so
   * the workflow's cleanup job finds the run's groups through ARM alone (`latlab sweep
   * --github-run`), with or without the Pulumi state. Absent outside GitHub Actions.
   */
  githubRun?: GithubRun;
}

/*
 * The GitHub Actions run, as the runner's default environment variables give it (github/docs
 * content/actions/reference/workflows-and-actions/variables.md @ 742d1a7): GITHUB_ACTIONS "always
 * set to true when GitHub Actions is running the workflow"; GITHUB_RUN_ID "a unique number for each
 * workflow run within a repository" that "does not change if you re-run the workflow run";
 * GITHUB_RUN_ATTEMPT "begins at 1 … and increments with each re-run"; GITHUB_REPOSITORY "the owner
 * and repository name. For example, octocat/Hello-World".
 *
 * Each becomes an Azure tag value: at most 256 characters (MicrosoftDocs/azure-docs
 * articles/azure-resource-manager/management/tag-resources.md @ 000024f4, "Limitations"); the
 * patterns below keep every value far shorter, and plain ASCII.
 */

/** Digits (a run id is a database id: at most 19 digits, an int64), no leading zero. */
const RUN_ID = /^[1-9][0-9]{0,18}$/;
/** Digits from 1. */
const RUN_ATTEMPT = /^[1-9][0-9]{0,8}$/;
/**
 * `owner/name`. Owner: letters, digits and dashes, at most 39 characters; a managed user's name
 * ends in `_SHORT-CODE` (github/docs content/admin/managing-iam/iam-configuration-reference/
 * username-considerations-for-external-authentication.md @ 8dc9c0a). Name: ASCII letters, digits,
 * `-`, `_`, `.`, at most 100, never `.` or `..` (GitHub documents no rule for it: as collected in
 * dead-claudia/github-limits README.md @ 3bec2ee, "Repository names").
 */
const REPOSITORY = /^[A-Za-z0-9][A-Za-z0-9_-]{0,38}\/(?!\.\.?$)[A-Za-z0-9._-]{1,100}$/;

export const GithubRunSchema = z.object({
  runId: z.string().regex(RUN_ID, "expected a GitHub run id: digits, e.g. 1658821493"),
  runAttempt: z.string().regex(RUN_ATTEMPT, "expected a run attempt: a whole number from 1"),
  repository: z.string().regex(REPOSITORY, "expected owner/name, e.g. octocat/Hello-World"),
});
export type GithubRun = z.infer<typeof GithubRunSchema>;

/** The environment variable each field comes from: errors name it. */
export const GITHUB_RUN_ENV = { runId: "GITHUB_RUN_ID", runAttempt: "GITHUB_RUN_ATTEMPT", repository: "GITHUB_REPOSITORY" } as const satisfies Record<keyof GithubRun, string>;

/**
 * The GitHub Actions run latlab runs in (GITHUB_ACTIONS=true), else undefined. Throws, naming the
 * variable, when one is missing or not what GitHub sets: a run tagged with a wrong id would be
 * missed by its own cleanup job.
 */
export function githubRunFromEnv(env: NodeJS.ProcessEnv): GithubRun | undefined {
  if (env.GITHUB_ACTIONS !== "true") return undefined;
  const raw = Object.fromEntries(Object.entries(GITHUB_RUN_ENV).map(([field, name]) => [field, env[name] ?? ""]));
  const parsed = GithubRunSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((i) => {
    const name = GITHUB_RUN_ENV[i.path[0] as keyof GithubRun];
    const value = env[name];
    return `${name}: ${value === undefined || value === "" ? "not set" : `${i.message}, got ${JSON.stringify(value.slice(0, 80))}`}`;
  });
  throw new Error(`GITHUB_ACTIONS=true, but the run cannot be tagged with its GitHub run (latlab's cleanup job finds a run's Azure resources by these tags): ${problems.join("; ")}`);
}

/** One host as the deployed stack reports it: what the runner needs to reach it. */
export const AzureHostOutputSchema = z.object({
  deployment: z.string(),
  role: z.string(),
  publicIp: z.string(),
  privateIp: z.string(),
  /** The host public key latlab generated for this host (pinned by the runner). */
  hostKey: z.string(),
  vmName: z.string(),
  /** The VM's ARM id (its instance view is read after the deploy: lifecycle/placementEvidence.ts). Absent in stacks of older latlabs. */
  vmId: z.string().optional(),
  /** The ARM id of the host's PPG (its own, or its availability set's); absent when it asked for none. */
  ppgId: z.string().optional(),
});
export type AzureHostOutput = z.infer<typeof AzureHostOutputSchema>;

/** The stack's outputs. */
export const AzureOutputsSchema = z.object({
  resourceGroup: z.string(),
  hosts: z.array(AzureHostOutputSchema),
});
export type AzureOutputs = z.infer<typeof AzureOutputsSchema>;

/** Every Azure name of a run starts with this; the resource group is called exactly this. */
export const namePrefix = (runId: string) => `latlab-${runId}`;

/** Azure-safe, unique-per-deployment host name: `d<deployment index>-<role>`. */
export const hostName = (deploymentIndex: number, role: string) => `d${deploymentIndex}-${role}`;
