import { spawnSync } from "node:child_process";

/**
 * The one Azure subscription a run uses, decided once before anything is created and then handed
 * to everything that talks to Azure: the quota check, the Pulumi program (`azure-native:
 * subscriptionId`), the ARM fallback of the teardown and `latlab destroy` (from state.json).
 * Each reading the environment on its own could check quotas in one subscription and deploy into
 * another — or look for a leaked group where it is not and call it gone.
 */

export interface Subscription {
  id: string;
  /** Where it came from, for the log line. */
  source: string;
}

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `az account show`: the Azure CLI's default subscription, which azure-native would fall back to. */
export type AzCliDefault = () => string | undefined;

const azAccountShow: AzCliDefault = () => {
  const r = spawnSync("az", ["account", "show", "--query", "id", "-o", "tsv"], { encoding: "utf8", timeout: 30_000 });
  return r.status === 0 ? r.stdout.trim() || undefined : undefined;
};

/**
 * ARM_SUBSCRIPTION_ID (what azure-native reads), else AZURE_SUBSCRIPTION_ID (what the Azure SDKs
 * read), else the Azure CLI's default. Two different ids in the two variables are refused: which
 * one would the deploy use?
 */
export function resolveSubscription(env: NodeJS.ProcessEnv = process.env, azCli: AzCliDefault = azAccountShow): Subscription {
  const arm = env.ARM_SUBSCRIPTION_ID?.trim();
  const azure = env.AZURE_SUBSCRIPTION_ID?.trim();
  if (arm && azure && arm.toLowerCase() !== azure.toLowerCase()) {
    throw new Error(`ARM_SUBSCRIPTION_ID (${arm}) and AZURE_SUBSCRIPTION_ID (${azure}) name different subscriptions: set one, or make them agree`);
  }
  const picked: Subscription | undefined = arm ? { id: arm, source: "ARM_SUBSCRIPTION_ID" } : azure ? { id: azure, source: "AZURE_SUBSCRIPTION_ID" } : undefined;
  const found = picked ?? ((id) => (id ? { id, source: "the Azure CLI's default (az account show)" } : undefined))(azCli());
  if (!found) throw new Error("no Azure subscription: set ARM_SUBSCRIPTION_ID (or AZURE_SUBSCRIPTION_ID) to the subscription to use, or `az login` and `az account set --subscription <id>`");
  if (!GUID.test(found.id)) throw new Error(`subscription "${found.id}" (from ${found.source}) is not a subscription id (a GUID)`);
  return found;
}
