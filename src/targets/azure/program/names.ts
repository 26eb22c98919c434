import { createHash } from "node:crypto";
import { namePrefix, type AzureSettings, type GithubRun } from "./types.ts";

/**
 * Every Azure name (and tag) the program gives a resource, in one place: program.ts builds its
 * resources with these functions, and catalog/resourceNames.ts checks the very same names against
 * Azure's naming rules before anything is deployed. Pure; no Pulumi here.
 *
 * `prefix` is namePrefix(runId) (`latlab-<runId>`), `host` is hostName(deployment index, role)
 * (`d<index>-<role>`), `key` a VNet key (network.ts vnetKey: `<region>` or `<region>-<vnet>`).
 */

/**
 * `name` unchanged when it has at most `max` characters; else its first characters, a "-" and 8 hex
 * digits of its SHA-256: deterministic (the same inputs give the same name on every `pulumi up`),
 * distinct for distinct long names, and ending with a letter or digit. Only names that would be
 * too long change, and Azure refuses those anyway: no name it has accepted ever moves.
 */
export function fitName(name: string, max: number): string {
  if (name.length <= max) return name;
  const hash = createHash("sha256").update(name).digest("hex").slice(0, 8);
  return `${name.slice(0, max - hash.length - 1).replace(/[-._]+$/, "")}-${hash}`;
}

/**
 * The longest VNet name Azure accepts: "virtualNetworks | resource group | 2-64" (MicrosoftDocs/
 * azure-docs articles/azure-resource-manager/management/resource-name-rules.md @ 849e815;
 * catalog/resourceNames.ts holds the rule and a test ties the two). A VNet name reaches 70
 * characters with names latlab accepts (a 30-character run id, germanywestcentral, an 8-letter
 * VNet name), so this one is fitted (fitName) rather than refused.
 */
export const VNET_NAME_MAX_LENGTH = 64;

/** The resource group of a run: exactly the prefix (the sweeper and teardown find it by that name and its tags). */
export const resourceGroupName = (runId: string): string => namePrefix(runId);

/** A VNet of the run: `${prefix}-vnet-${key}`, fitted to Azure's 64 characters. */
export function vnetName(prefix: string, key: string): string {
  return fitName(`${prefix}-vnet-${key}`, VNET_NAME_MAX_LENGTH);
}

/** A deployment's subnet in a VNet. */
export const subnetName = (deploymentIndex: number): string => `d${deploymentIndex}`;
/** The peering from a VNet to the VNet with key `toKey` (a child of the local VNet). */
export const peeringName = (toKey: string): string => `to-${toKey}`;
export const publicIpName = (prefix: string, host: string): string => `${prefix}-${host}-pip`;
export const nsgName = (prefix: string, host: string): string => `${prefix}-${host}-nsg`;
export const nicName = (prefix: string, host: string): string => `${prefix}-${host}-nic`;
export const vmName = (prefix: string, host: string): string => `${prefix}-${host}`;
/** The VM's host name (osProfile.computerName): the short host name, also written by cloud-init. */
export const computerName = (host: string): string => host;
/** A deployment's proximity placement group `group` (replicas never share one). */
export const ppgName = (prefix: string, deploymentIndex: number, group: string): string => `${prefix}-d${deploymentIndex}-ppg-${group}`;
export const availabilitySetName = (prefix: string, deploymentIndex: number, group: string): string => `${prefix}-d${deploymentIndex}-avset-${group}`;
/** The NIC's one IP configuration. */
export const IP_CONFIGURATION_NAME = "ipconfig1";

/** The tags naming the GitHub Actions run a run was made in (types.ts GithubRun): `latlab sweep --github-run` selects by them. */
export const GITHUB_RUN_TAGS = { runId: "githubRunId", runAttempt: "githubRunAttempt", repository: "githubRepository" } as const satisfies Record<keyof GithubRun, string>;

/**
 * Tags on the resource group and on every taggable resource: the sweeper reads owner + expiresAt,
 * and, for a run made in GitHub Actions, the GitHub run tags (nothing of GitHub outside it).
 */
export function runTags(settings: AzureSettings): Record<string, string> {
  const github = settings.githubRun;
  return {
    owner: "latlab",
    runId: settings.runId,
    experiment: settings.experiment,
    createdAt: settings.createdAt.toISOString(),
    expiresAt: settings.expiresAt.toISOString(),
    ...(github ? { [GITHUB_RUN_TAGS.runId]: github.runId, [GITHUB_RUN_TAGS.runAttempt]: github.runAttempt, [GITHUB_RUN_TAGS.repository]: github.repository } : {}),
  };
}

/** Tags of a deployment's PPGs and availability sets. */
export const deploymentTags = (tags: Record<string, string>, deployment: string): Record<string, string> => ({ ...tags, deployment });
/** Tags of a host's public IP, NSG, NIC and VM. */
export const hostTags = (tags: Record<string, string>, deployment: string, role: string): Record<string, string> => ({ ...tags, deployment, role });
