/**
 * `latlab sweep`: finds resource groups latlab created (tag owner=latlab) and — only with
 * `--delete` — deletes the ones it selects:
 *   - by default, those whose `expiresAt` tag has passed: the safety net for runs whose teardown
 *     never happened (a CI runner lost with its file:// backend, a killed process);
 *   - with a GitHub run (`--github-run <id>`), every group of that run, whatever its expiry: the
 *     workflow's cleanup job, which needs no Pulumi state. A group of another run, or without the
 *     run's tags, is never selected.
 * A group whose expiry cannot be read is listed, never deleted by expiry.
 */
import { GITHUB_RUN_TAGS } from "../program/names.ts";

/** The little of an Azure resource group the sweeper reads. */
export interface ResourceGroupInfo {
  name: string;
  location?: string;
  tags?: Record<string, string>;
  /** "Succeeded", "Deleting"… */
  provisioningState?: string;
}

/** The narrow slice of @azure/arm-resources the sweeper uses (faked in tests; a rehearsal's emulator: emulator/sweepRehearsals.ts). */
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
/**
 * Resource Groups - List filters by one tag name and value: "to filter for a tag name and value,
 * use $filter=tagName eq 'tag1' and tagValue eq 'Value1'" (@azure/arm-resources 8.0.0
 * dist/esm/api/resourceGroups/options.d.ts, ResourceGroupsListOptionalParams.filter). The owner
 * tag is the one asked for; the GitHub run tags are checked here, on what comes back.
 */
export const LATLAB_FILTER = `tagName eq '${OWNER_TAG}' and tagValue eq '${OWNER_VALUE}'`;

/** Which GitHub run's groups to select (`--github-run`, `--github-attempt`, `--github-repository`). */
export interface GithubRunSelector {
  /** GITHUB_RUN_ID: digits. */
  runId: string;
  /** Only this attempt's groups (GITHUB_RUN_ATTEMPT); absent: every attempt of the run. */
  attempt?: string;
  /**
   * Only groups of this repository (owner/name): a run id is unique "within a repository"
   * (program/types.ts cites GitHub's words), so two repositories sharing a subscription could
   * share one. Absent: any repository.
   */
  repository?: string;
}

export interface SweptGroup {
  name: string;
  location?: string;
  runId?: string;
  /** ISO time, or null when the tag is missing or unreadable. */
  expiresAt: string | null;
  state: "expired" | "not-expired" | "unknown-expiry" | "deleting";
  /** The GitHub run tags, when the group has them. */
  github?: { runId?: string; runAttempt?: string; repository?: string };
  /** Chosen for deletion (deleted only with --delete). */
  selected: boolean;
  /** Why it is selected or kept, in words. */
  why: string;
}

export interface SweepReport {
  dryRun: boolean;
  /** The GitHub run whose groups were selected; null: expired groups were. */
  githubRun: GithubRunSelector | null;
  groups: SweptGroup[];
  /** Names of the groups deleted (only with delete: true). */
  deleted: string[];
  failed: { name: string; error: string }[];
  /**
   * After --delete: what ARM still holds of the groups the sweep answers for — the selected ones,
   * and with --github-run the run's groups Azure was already deleting — (ids; [] = nothing left),
   * or null when not asked (a dry run, or a client that cannot list).
   */
  left: string[] | null;
  /** Why some of `left` could not be read. */
  leftErrors: string[];
}

export interface SweepOptions {
  client: ResourceGroupsClient;
  now: Date;
  /** Really delete the selected groups; false (the default of the CLI) only lists them. */
  delete: boolean;
  /** Select every group of this GitHub run, whatever its expiry (and nothing else); absent: the expired ones. */
  githubRun?: GithubRunSelector;
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

type Classified = Omit<SweptGroup, "selected" | "why">;

export function classify(group: ResourceGroupInfo, now: Date): Classified {
  const raw = tag(group.tags, EXPIRES_TAG);
  const expiry = parseExpiry(raw);
  const runId = tag(group.tags, "runId");
  const github = { runId: tag(group.tags, GITHUB_RUN_TAGS.runId), runAttempt: tag(group.tags, GITHUB_RUN_TAGS.runAttempt), repository: tag(group.tags, GITHUB_RUN_TAGS.repository) };
  const githubTags = Object.fromEntries(Object.entries(github).filter(([, v]) => v !== undefined));
  const base = {
    name: group.name,
    ...(group.location ? { location: group.location } : {}),
    ...(runId ? { runId } : {}),
    expiresAt: expiry?.toISOString() ?? null,
    ...(Object.keys(githubTags).length ? { github: githubTags } : {}),
  };
  if (group.provisioningState?.toLowerCase() === "deleting") return { ...base, state: "deleting" };
  if (!expiry) return { ...base, state: "unknown-expiry" };
  return { ...base, state: expiry.getTime() <= now.getTime() ? "expired" : "not-expired" };
}

/** "GitHub run 123 attempt 2 of owner/name", as reports say it. */
export function describeGithubRun(run: GithubRunSelector): string {
  return `GitHub run ${run.runId}${run.attempt ? ` attempt ${run.attempt}` : ""}${run.repository ? ` of ${run.repository}` : ""}`;
}

/**
 * Whether the sweep selects a group (deletes it with --delete), and why (or why not). `watch`:
 * what ARM still holds of it is reported after --delete.
 */
export function selectGroup(group: Classified, githubRun?: GithubRunSelector): { selected: boolean; watch: boolean; why: string } {
  if (githubRun) {
    const g = group.github ?? {};
    const wanted = describeGithubRun(githubRun);
    if (g.runId === undefined) return { selected: false, watch: false, why: `not of ${wanted}: no ${GITHUB_RUN_TAGS.runId} tag` };
    if (g.runId !== githubRun.runId) return { selected: false, watch: false, why: `another GitHub run (${GITHUB_RUN_TAGS.runId}=${g.runId})` };
    if (githubRun.attempt !== undefined && g.runAttempt !== githubRun.attempt) {
      return { selected: false, watch: false, why: `another attempt of the run (${GITHUB_RUN_TAGS.runAttempt}=${g.runAttempt ?? "none"})` };
    }
    // Compared exactly, as GITHUB_REPOSITORY gave it to the run and gives it to the cleanup job.
    if (githubRun.repository !== undefined && g.repository !== githubRun.repository) {
      return { selected: false, watch: false, why: `another repository's run (${GITHUB_RUN_TAGS.repository}=${g.repository ?? "none"})` };
    }
    // A second DELETE on a group ARM is deleting can restart its deletion (crossplane-contrib/provider-azure#141): watched, not deleted again.
    if (group.state === "deleting") return { selected: false, watch: true, why: `${wanted}; Azure is already deleting it` };
    const expiry = group.state === "expired" ? `expired ${group.expiresAt}` : group.state === "not-expired" ? `expires ${group.expiresAt}` : "unknown expiry";
    return { selected: true, watch: true, why: `${wanted} (${expiry}: the run's groups go whatever their expiry)` };
  }
  switch (group.state) {
    case "expired":
      return { selected: true, watch: true, why: `expired ${group.expiresAt}` };
    case "not-expired":
      return { selected: false, watch: false, why: `not expired: expires ${group.expiresAt}` };
    case "unknown-expiry":
      return { selected: false, watch: false, why: "unknown expiry (no readable expiresAt tag): never deleted by the sweeper; check it by hand" };
    case "deleting":
      return { selected: false, watch: false, why: "Azure is already deleting it" };
  }
}

export async function sweep(options: SweepOptions): Promise<SweepReport> {
  const { client, now, log, githubRun } = options;
  const groups: SweptGroup[] = [];
  const watched: string[] = [];
  for await (const g of client.list(LATLAB_FILTER)) {
    // The filter is Azure's; check the tag again rather than trust it blindly.
    if (tag(g.tags, OWNER_TAG)?.toLowerCase() !== OWNER_VALUE) continue;
    const classified = classify(g, now);
    const { selected, watch, why } = selectGroup(classified, githubRun);
    groups.push({ ...classified, selected, why });
    if (watch) watched.push(g.name);
  }
  const report: SweepReport = { dryRun: !options.delete, githubRun: githubRun ?? null, groups, deleted: [], failed: [], left: null, leftErrors: [] };
  const chosen = groups.filter((g) => g.selected);
  const what = githubRun ? `of ${describeGithubRun(githubRun)}` : "expired";
  for (const g of groups) {
    const where = `${g.name}${g.location ? ` (${g.location})` : ""}${g.runId ? ` run ${g.runId}` : ""}`;
    if (g.selected) log(`${githubRun ? "selected" : "expired "}  ${where}: ${g.why}${options.delete ? "" : " — would delete (pass --delete)"}`);
    else if (g.state === "deleting") log(`deleting  ${where}: ${g.why}`);
    else log(`kept      ${where}: ${g.why}`);
  }
  if (!options.delete) {
    log(`${chosen.length} ${what} of ${groups.length} latlab resource groups (dry run: nothing deleted)`);
    return report;
  }
  // All at once: each deletion takes minutes, and a sweep cut short (a cancelled job's few minutes,
  // its timeout) must have asked for every one, not only the first few.
  const outcomes = await Promise.all(
    chosen.map(async (g) => {
      log(`deleting ${g.name}…`);
      try {
        await client.beginDeleteAndWait(g.name);
        log(`deleted ${g.name}`);
        return { name: g.name };
      } catch (e) {
        const error = (e as Error).message ?? String(e);
        log(`FAILED to delete ${g.name}: ${error}`);
        return { name: g.name, error };
      }
    }),
  );
  // In the order they were found, whatever order they finished in.
  for (const o of outcomes) {
    if (o.error === undefined) report.deleted.push(o.name);
    else report.failed.push({ name: o.name, error: o.error });
  }
  // What is left, as ARM has it: a delete that "succeeded" is not taken on trust.
  if (client.resources) {
    report.left = [];
    for (const name of watched) {
      try {
        report.left.push(...(await client.resources(name)));
      } catch (e) {
        report.leftErrors.push(`${name}: ${(e as Error).message ?? String(e)}`);
      }
    }
  }
  log(`deleted ${report.deleted.length} of ${chosen.length} ${what} latlab resource groups${report.failed.length ? `; ${report.failed.length} failed` : ""}`);
  return report;
}

/**
 * The real client: latlab's Azure credential (access/armCredential.ts: GitHub's OIDC token,
 * renewed, under ARM_USE_OIDC; DefaultAzureCredential otherwise) and @azure/arm-resources. Loaded
 * on demand.
 */
export async function createAzureResourceGroupsClient(subscriptionId: string | undefined = process.env.AZURE_SUBSCRIPTION_ID ?? process.env.ARM_SUBSCRIPTION_ID): Promise<ResourceGroupsClient> {
  if (!subscriptionId) {
    throw new Error("latlab sweep: no subscription: set AZURE_SUBSCRIPTION_ID (or ARM_SUBSCRIPTION_ID), or pass --subscription <id>");
  }
  const [{ latlabAzureCredential }, { ResourceManagementClient }] = await Promise.all([import("../access/armCredential.ts"), import("@azure/arm-resources")]);
  const arm = new ResourceManagementClient(latlabAzureCredential(), subscriptionId);
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
