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
