import { resolveSubscription } from "./subscription.ts";
/**
 * A run's resource group as ARM has it: what teardown falls back on when Pulumi's destroy fails
 * because ARM holds resources Pulumi's state does not (a run killed in the middle of `up`: VMs
 * being created are in Azure, not in the state, and keep the NICs and subnets Pulumi tries to
 * delete "in use"), and what it asks at the end to report what is left.
 */
export interface RunGroups {
  /** The group's tags, or undefined when ARM has no such group. */
  tags(name: string): Promise<Record<string, string> | undefined>;
  /** Deletes the group and everything in it; resolves when it is gone. */
  delete(name: string): Promise<void>;
  /**
   * Starts deleting the group and everything in it; resolves once ARM has accepted the request
   * (202), without waiting for the group to go (a teardown handed over: teardown.ts
   * startGroupDeletion). Rejects as ARM answers (404 when there is no such group, 409…).
   */
  startDelete?(name: string): Promise<void>;
  /**
   * What ARM holds of the group: the group's own id first, then the id of every resource in it;
   * empty when there is no such group.
   */
  resources(name: string): Promise<string[]>;
}

/** An ARM error as @azure/core-rest-pipeline's RestError (or the emulator's client) carries it. */
interface ArmErrorLike {
  statusCode?: number;
  status?: number;
  code?: string;
  message?: string;
}

/** "409 ScopeLocked: The scope … is locked…": status, ARM's code and its message, on one line. */
export function describeArmError(error: unknown): string {
  const e = (error ?? {}) as ArmErrorLike;
  const status = e.statusCode ?? e.status;
  const message = (e.message ?? String(error)).split("\n")[0]!.trim();
  const head = [status, e.code].filter((x) => x !== undefined && x !== "").join(" ");
  return head && !message.includes(String(e.code ?? status)) ? `${head}: ${message}` : message;
}

/** The group is gone already: what a delete of a deleted group answers (404 ResourceGroupNotFound). */
export function isGroupNotFound(error: unknown): boolean {
  const e = (error ?? {}) as ArmErrorLike;
  return (e.statusCode ?? e.status) === 404 || e.code === "ResourceGroupNotFound";
}
/** Azure tag names are case-insensitive. */
const tagValue = (tags: Record<string, string>, name: string) => Object.entries(tags).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];

/** Is this group latlab's, of this run? Only such a group is ever deleted through ARM. */
export function ownedByRun(tags: Record<string, string>, runId: string): boolean {
  return tagValue(tags, "owner") === "latlab" && tagValue(tags, "runId") === runId;
}

/**
 * RunGroups over Azure itself: latlab's own credential (access/armCredential.ts: GitHub OIDC when
 * ARM_USE_OIDC=true, else DefaultAzureCredential); subscription from the environment. The ARM
 * client's bearer-token policy asks the credential before each request, including each poll of a
 * group's delete, so a teardown hours into a run gets a renewed token.
 */
export async function azureRunGroups(env: NodeJS.ProcessEnv = process.env, pinned?: string): Promise<RunGroups> {
  // The run's own subscription when known (state.json); else as the deploy would pick it.
  const subscriptionId = pinned ?? resolveSubscription(env).id;
  const [{ latlabAzureCredential }, { ResourceManagementClient }] = await Promise.all([import("../access/armCredential.ts"), import("@azure/arm-resources")]);
  const arm = new ResourceManagementClient(latlabAzureCredential(env), subscriptionId);
  const group = async (name: string) => {
    try {
      return await arm.resourceGroups.get(name);
    } catch (e) {
      if (isGroupNotFound(e)) return undefined;
      throw e;
    }
  };
  return {
    async tags(name) {
      const g = await group(name);
      return g ? (g.tags ?? {}) : undefined;
    },
    // The poller resolves when ARM says the group is gone.
    delete: async (name) => void (await arm.resourceGroups.delete(name)),
    // The poller sends the DELETE at once; submitted() resolves on ARM's first answer (202), and nothing polls after it.
    startDelete: async (name) => void (await arm.resourceGroups.delete(name).submitted()),
    async resources(name) {
      const g = await group(name);
      if (!g) return [];
      const ids = [g.id ?? `resourceGroups/${name}`];
      try {
        for await (const r of arm.resources.listByResourceGroup(name)) if (r.id) ids.push(r.id);
      } catch (e) {
        // Deleted between the two calls: nothing is left.
        if (isGroupNotFound(e)) return [];
        throw e;
      }
      return ids;
    },
  };
}
