/**
 * `latlab sweep`: finds resource groups latlab created (tag owner=latlab) whose `expiresAt`
 * tag has passed, and — only with `--delete` — deletes them. The safety net for runs whose
 * teardown never happened (a CI runner lost with its file:// backend, a killed process).
 * A group whose expiry cannot be read is listed, never deleted.
 */

/** The little of an Azure resource group the sweeper reads. */
export interface ResourceGroupInfo {
  name: string;
  location?: string;
  tags?: Record<string, string>;
  /** "Succeeded", "Deleting"… */
  provisioningState?: string;
}

/** The narrow slice of @azure/arm-resources the sweeper uses (faked in tests). */
export interface ResourceGroupsClient {
  /** Resource groups matching an OData `$filter`. */
  list(filter: string): AsyncIterable<ResourceGroupInfo>;
  /** Deletes a group and everything in it; resolves when Azure says it is gone. */
  beginDeleteAndWait(name: string): Promise<void>;
  /** What ARM holds of a group: its id first, then every resource in it; [] when it is gone. */
  resources?(name: string): Promise<string[]>;
}

export const OWNER_TAG = "owner";
export const OWNER_VALUE = "latlab";
export const EXPIRES_TAG = "expiresAt";
export const LATLAB_FILTER = `tagName eq '${OWNER_TAG}' and tagValue eq '${OWNER_VALUE}'`;

export interface SweptGroup {
  name: string;
  location?: string;
  runId?: string;
  /** ISO time, or null when the tag is missing or unreadable. */
  expiresAt: string | null;
  state: "expired" | "not-expired" | "unknown-expiry" | "deleting";
}

export interface SweepReport {
  dryRun: boolean;
  groups: SweptGroup[];
  /** Names of the groups deleted (only with delete: true). */
  deleted: string[];
  failed: { name: string; error: string }[];
  /**
   * After --delete: what ARM still holds of the expired groups (ids; [] = nothing left), or null
   * when not asked (a dry run, or a client that cannot list).
   */
  left: string[] | null;
  /** Why some of `left` could not be read. */
  leftErrors: string[];
}

export interface SweepOptions {
  client: ResourceGroupsClient;
  now: Date;
  /** Really delete the expired groups; false (the default of the CLI) only lists them. */
  delete: boolean;
  log: (message: string) => void;
}

/** Azure tag names are case-insensitive. */
const tag = (tags: Record<string, string> | undefined, name: string): string | undefined => {
  if (!tags) return undefined;
  const key = Object.keys(tags).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : tags[key];
};

/** An ISO 8601 date-time with a zone (what latlab writes); anything else is "unknown". */
export function parseExpiry(value: string | undefined): Date | null {
  if (value === undefined) return null;
  const v = value.trim();
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/.test(v)) return null;
  const t = Date.parse(v);
  return Number.isNaN(t) ? null : new Date(t);
}

export function classify(group: ResourceGroupInfo, now: Date): SweptGroup {
  const raw = tag(group.tags, EXPIRES_TAG);
  const expiry = parseExpiry(raw);
  const runId = tag(group.tags, "runId");
  const base = { name: group.name, ...(group.location ? { location: group.location } : {}), ...(runId ? { runId } : {}), expiresAt: expiry?.toISOString() ?? null };
  if (group.provisioningState?.toLowerCase() === "deleting") return { ...base, state: "deleting" };
  if (!expiry) return { ...base, state: "unknown-expiry" };
  return { ...base, state: expiry.getTime() <= now.getTime() ? "expired" : "not-expired" };
}

export async function sweep(options: SweepOptions): Promise<SweepReport> {
  const { client, now, log } = options;
  const groups: SweptGroup[] = [];
  for await (const g of client.list(LATLAB_FILTER)) {
    // The filter is Azure's; check the tag again rather than trust it blindly.
    if (tag(g.tags, OWNER_TAG)?.toLowerCase() !== OWNER_VALUE) continue;
    groups.push(classify(g, now));
  }
  const report: SweepReport = { dryRun: !options.delete, groups, deleted: [], failed: [], left: null, leftErrors: [] };
  for (const g of groups) {
    const where = `${g.name}${g.location ? ` (${g.location})` : ""}${g.runId ? ` run ${g.runId}` : ""}`;
    switch (g.state) {
      case "expired":
        log(`expired   ${where}: expiresAt ${g.expiresAt}${options.delete ? "" : " — would delete (pass --delete)"}`);
        break;
      case "not-expired":
        log(`kept      ${where}: expires ${g.expiresAt}`);
        break;
      case "unknown-expiry":
        log(`kept      ${where}: unknown expiry (no readable expiresAt tag) — never deleted by the sweeper; check it by hand`);
        break;
      case "deleting":
        log(`deleting  ${where}: Azure is already deleting it`);
        break;
    }
  }
  if (!options.delete) {
    log(`${groups.filter((g) => g.state === "expired").length} expired of ${groups.length} latlab resource groups (dry run: nothing deleted)`);
    return report;
  }
  for (const g of groups.filter((x) => x.state === "expired")) {
    log(`deleting ${g.name}…`);
    try {
      await client.beginDeleteAndWait(g.name);
      report.deleted.push(g.name);
      log(`deleted ${g.name}`);
    } catch (e) {
      const error = (e as Error).message ?? String(e);
      report.failed.push({ name: g.name, error });
      log(`FAILED to delete ${g.name}: ${error}`);
    }
  }
  // What is left, as ARM has it: a delete that "succeeded" is not taken on trust.
  if (client.resources) {
    report.left = [];
    for (const g of groups.filter((x) => x.state === "expired")) {
      try {
        report.left.push(...(await client.resources(g.name)));
      } catch (e) {
        report.leftErrors.push(`${g.name}: ${(e as Error).message ?? String(e)}`);
      }
    }
  }
  log(`deleted ${report.deleted.length} of ${groups.filter((g) => g.state === "expired").length} expired latlab resource groups${report.failed.length ? `; ${report.failed.length} failed` : ""}`);
  return report;
}

/**
 * The real client: @azure/identity's DefaultAzureCredential (env vars, workload identity /
 * OIDC, managed identity, Azure CLI…) and @azure/arm-resources. Loaded on demand.
 */
export async function createAzureResourceGroupsClient(subscriptionId: string | undefined = process.env.AZURE_SUBSCRIPTION_ID ?? process.env.ARM_SUBSCRIPTION_ID): Promise<ResourceGroupsClient> {
  if (!subscriptionId) {
    throw new Error("latlab sweep: no subscription: set AZURE_SUBSCRIPTION_ID (or ARM_SUBSCRIPTION_ID), or pass --subscription <id>");
  }
  const [{ DefaultAzureCredential }, { ResourceManagementClient }] = await Promise.all([import("@azure/identity"), import("@azure/arm-resources")]);
  const arm = new ResourceManagementClient(new DefaultAzureCredential(), subscriptionId);
  return {
    async *list(filter) {
      for await (const g of arm.resourceGroups.list({ filter })) {
        if (!g.name) continue;
        yield {
          name: g.name,
          location: g.location,
          ...(g.tags ? { tags: g.tags } : {}),
          ...(g.properties?.provisioningState ? { provisioningState: g.properties.provisioningState } : {}),
        };
      }
    },
    async beginDeleteAndWait(name) {
      // The poller resolves when the group is gone.
      await arm.resourceGroups.delete(name);
    },
    async resources(name) {
      const { isGroupNotFound } = await import("./runGroups.ts");
      try {
        const group = await arm.resourceGroups.get(name);
        const ids = [group.id ?? name];
        for await (const r of arm.resources.listByResourceGroup(name)) if (r.id) ids.push(r.id);
        return ids;
      } catch (e) {
        if (isGroupNotFound(e)) return [];
        throw e;
      }
    },
  };
}
