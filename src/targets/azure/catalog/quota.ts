import { z } from "zod";
import type { DefinitionIssue } from "../../../dsl/errors.ts";
import type { Zone } from "../../../dsl/placement.ts";
import type { Plan } from "../../../plan/types.ts";
import { sizeFacts } from "./sizes/sizeFacts.ts";
import { unknownSizeNote } from "./sizes/unknownSize.ts";
import { describePreviousGeneration, previousGeneration } from "./sizes/previousGeneration.ts";
import { familyQuotaAdvice, QUOTA_REQUEST_DOCS } from "./quotaAdvice.ts";
import type { DeploymentDemand, RegionLimits, WaveLimits } from "../../../plan/waves.ts";
import { NEW_SUBSCRIPTION_PROFILE, type SubscriptionProfile } from "./subscriptionProfile.ts";

/**
 * Will Azure let this plan's VMs exist? Two questions Azure answers only per subscription and
 * region, checked here before anything is created so a run fails in seconds with numbers, not
 * half-deployed with QuotaExceeded or SkuNotAvailable:
 *  - vCPU quota: every VM counts against its size family's quota and the region's total
 *    ("The first tier is the Total Regional vCPUs, and the second tier is the various VM size
 *    family cores"; "Check vCPU quotas", MicrosoftDocs/azure-compute-docs
 *    articles/virtual-machines/quotas.md @ 0277390);
 *  - SKU restrictions: a size may be closed to the subscription in a region or in some zones.
 * Pure: the responses come from computeCapacity.ts (or a test's recordings).
 */

// ---------------------------------------------------------------------------------------------
// The ARM responses, as Azure/azure-rest-api-specs describes them. Lenient where Azure is:
// fields are read-only and optional in the specs; unknown fields are dropped.

/** One entry of `GET …/providers/Microsoft.Compute/locations/{location}/usages` (ComputeRP `Usage`). */
export const UsageSchema = z.object({
  unit: z.string().optional(),
  currentValue: z.number(),
  limit: z.number(),
  /** `value` is what to match on ("cores", "standardDSv2Family"); `localizedValue` is for people. */
  name: z.object({ value: z.string().optional(), localizedValue: z.string().optional() }),
});
export type Usage = z.infer<typeof UsageSchema>;

export const UsageListSchema = z.object({
  value: z.array(UsageSchema),
  nextLink: z.string().nullish(),
});
export type UsageList = z.infer<typeof UsageListSchema>;

// The SKU shapes live beside the size catalog (which reads them from its snapshot too).
export { SkuRestrictionSchema, ResourceSkuSchema, ResourceSkuListSchema } from "./sizes/resourceSku.ts";
export type { SkuRestriction, ResourceSku, ResourceSkuList } from "./sizes/resourceSku.ts";
import type { ResourceSku, SkuRestriction } from "./sizes/resourceSku.ts";

/** The usage entry of the region's total: `{ value: "cores", localizedValue: "Total Regional vCPUs" }`. */
export const TOTAL_REGIONAL_VCPUS = "cores";

// ---------------------------------------------------------------------------------------------
// What the plan needs

export interface SizeNeed {
  size: string;
  /** null: latlab's offline catalog does not know (sizes/sizeFacts.ts); Azure's SKU list is asked before deploying. */
  vcpusEach: number | null;
  count: number;
  /** The zones hosts of this size are pinned to (a Zone restriction matters only there). */
  zones: Zone[];
}

export interface FamilyNeed {
  /** The quota family (the usages API's `name.value`), or "UNKNOWN(<size>)" where the catalog has none. */
  family: string;
  /** vCPUs of the sizes whose count is known. */
  vcpus: number;
  /** Sizes whose vCPU count is not known offline. */
  unknownSizes?: string[];
  sizes: SizeNeed[];
}

export interface RegionNeed {
  region: string;
  /** Counted against "Total Regional vCPUs". */
  totalVcpus: number;
  families: FamilyNeed[];
}

const byKey = <T>(key: (t: T) => string) => (a: T, b: T) => key(a).localeCompare(key(b));

/**
 * vCPUs per region and quota family of the given deployments (every deployment of the plan when
 * none are given): all of them are brought up at once, so the quota must hold them together.
 * Sizes come from the catalog (sizes/sizeFacts.ts), or from the subscription's live SKU list
 * when `live` is given; a size whose vCPUs are unknown is listed as such, never guessed.
 */
export function vcpuNeeds(plan: Pick<Plan, "deployments">, live?: readonly ResourceSku[]): RegionNeed[] {
  const sizes = new Map<string, Map<string, { count: number; zones: Set<Zone> }>>();
  for (const d of plan.deployments) {
    for (const h of d.hosts) {
      const inRegion = sizes.get(h.region) ?? new Map<string, { count: number; zones: Set<Zone> }>();
      sizes.set(h.region, inRegion);
      const entry = inRegion.get(h.size) ?? { count: 0, zones: new Set<Zone>() };
      inRegion.set(h.size, entry);
      entry.count++;
      if (h.zone !== null) entry.zones.add(h.zone);
    }
  }
  const regions: RegionNeed[] = [];
  for (const [region, inRegion] of sizes) {
    const families = new Map<string, FamilyNeed>();
    for (const [size, { count, zones }] of inRegion) {
      const facts = sizeFacts(size, live);
      const familyName = facts.family ?? `UNKNOWN(${size})`;
      const family = families.get(familyName.toLowerCase()) ?? { family: familyName, vcpus: 0, sizes: [] };
      families.set(familyName.toLowerCase(), family);
      if (facts.vcpus === null) family.unknownSizes = [...(family.unknownSizes ?? []), size];
      else family.vcpus += count * facts.vcpus;
      family.sizes.push({ size, vcpusEach: facts.vcpus, count, zones: [...zones].sort() });
    }
    const list = [...families.values()].sort(byKey((f) => f.family));
    for (const f of list) f.sizes.sort(byKey((s) => s.size));
    regions.push({ region, totalVcpus: list.reduce((sum, f) => sum + f.vcpus, 0), families: list });
  }
  return regions.sort(byKey((r) => r.region));
}

const sizeList = (sizes: readonly SizeNeed[]) => sizes.map((s) => `${s.count}× ${s.size} = ${s.vcpusEach === null ? "UNKNOWN" : s.count * s.vcpusEach}`).join(", ");

/** One line per region, e.g. "vCPUs: northeurope standardDSv2Family 96 (4× Standard_DS13_v2 = 32, 4× Standard_DS14_v2 = 64), total regional 96". */
export function formatVcpuNeeds(needs: readonly RegionNeed[]): string {
  if (!needs.length) return "vCPUs: none";
  return needs
    .map((r) => `vCPUs: ${r.region} ${r.families.map((f) => `${f.family} ${f.vcpus} (${sizeList(f.sizes)})`).join(", ")}, total regional ${r.totalVcpus}`)
    .join("\n");
}

// ---------------------------------------------------------------------------------------------
// Against what Azure says

interface IssueBase extends DefinitionIssue {
  region: string;
}
/** Not enough quota: the numbers, so the message and a caller agree. */
export interface QuotaShortfall extends IssueBase {
  kind: "quota";
  /** The usages API's `name.value`: a family, or "cores" for the region's total. */
  quota: string;
  needed: number;
  /** limit − current, never below 0. */
  available: number;
  limit: number;
  current: number;
}
/** The region lists no usage for the family: latlab cannot tell whether the VMs fit. */
export interface QuotaUnknown extends IssueBase {
  kind: "quota-unknown";
  quota: string;
  needed: number;
}
/** A size Azure will not create where the plan puts it. */
export interface SizeUnavailable extends IssueBase {
  kind: "size-unavailable";
  size: string;
  /** The plan's zones that are refused; null when the whole region is. */
  zones: Zone[] | null;
}
export type CapacityIssue = QuotaShortfall | QuotaUnknown | SizeUnavailable;

const QUOTA_DOCS = {
  ...QUOTA_REQUEST_DOCS,
  skuAccess: "https://learn.microsoft.com/troubleshoot/azure/general/region-access-request-process",
  network: "https://learn.microsoft.com/azure/quotas/networking-quota-requests",
};

const same = (a: string | undefined, b: string) => a !== undefined && a.toLowerCase() === b.toLowerCase();

/** The SKU entries for a size in a region (names and locations compared as Azure does: without case). */
function skusFor(skus: readonly ResourceSku[], size: string, region: string): ResourceSku[] {
  return skus.filter((s) => same(s.resourceType, "virtualMachines") && same(s.name, size) && (s.locations ?? []).some((l) => same(l, region)));
}

function appliesTo(r: SkuRestriction, region: string): boolean {
  const where = r.restrictionInfo?.locations ?? r.values ?? [];
  return where.length === 0 || where.some((l) => same(l, region));
}

function reason(r: SkuRestriction): string {
  if (r.reasonCode === "QuotaId") return "not offered to this subscription's offer type (reason QuotaId)";
  return `not available for this subscription (reason ${r.reasonCode ?? "not given"})`;
}

function sizeIssues(need: SizeNeed, region: string, skus: readonly ResourceSku[]): SizeUnavailable[] {
  const path = `sku(${region}).${need.size}`;
  const base = { kind: "size-unavailable" as const, region, size: need.size };
  const found = skusFor(skus, need.size, region);
  if (!found.length) {
    // A name no source knows is most likely a typo: say so, with the closest size, before the advice.
    const unknown = unknownSizeNote(need.size);
    return [
      {
        ...base,
        path,
        zones: null,
        message: `${need.size} is not offered in ${region}: the Resource SKUs API lists no virtualMachines SKU of that name there (\`az vm list-skus --location ${region} --size ${need.size} --all\`)${unknown ? `; ${unknown}` : ""}; pick another size or region`,
      },
    ];
  }
  const restrictions = found.flatMap((s) => s.restrictions ?? []).filter((r) => appliesTo(r, region));
  // A Location restriction closes the region; any other (Zone, or a type this code does not know) is read as closing its zones.
  const regionWide = restrictions.find((r) => r.type === "Location" || (r.type !== "Zone" && !r.restrictionInfo?.zones?.length));
  if (regionWide) {
    // A previous-generation size is closed to new subscriptions for good: no access request will open it.
    const canonical = sizeFacts(need.size).name;
    const pg = previousGeneration(canonical, need.vcpusEach);
    const how = pg ? describePreviousGeneration(canonical, pg) : `pick another size or region, or ask Azure support for access (${QUOTA_DOCS.skuAccess})`;
    return [{ ...base, path, zones: null, message: `${need.size} is ${reason(regionWide)} in ${region} (restriction type ${regionWide.type ?? "not given"}); ${how}` }];
  }
  const restrictedZones = new Set(restrictions.flatMap((r) => r.restrictionInfo?.zones ?? []));
  const offeredZones = new Set(found.flatMap((s) => (s.locationInfo ?? []).filter((li) => !li.type && (li.location === undefined || same(li.location, region))).flatMap((li) => li.zones ?? [])));
  const issues: SizeUnavailable[] = [];
  const refused = need.zones.filter((z) => restrictedZones.has(z));
  if (refused.length) {
    const r = restrictions.find((x) => refused.some((z) => x.restrictionInfo?.zones?.includes(z)))!;
    issues.push({
      ...base,
      path: `${path}.zone`,
      zones: refused,
      message: `${need.size} is ${reason(r)} in ${region} zone${refused.length > 1 ? "s" : ""} ${refused.join(", ")} (restriction type Zone); place those hosts in another zone, or make them regional (zone: null), or ask Azure support for access (${QUOTA_DOCS.skuAccess})`,
    });
  }
  const missing = need.zones.filter((z) => !restrictedZones.has(z) && !offeredZones.has(z));
  if (missing.length) {
    issues.push({
      ...base,
      path: `${path}.zone`,
      zones: missing,
      message: `${need.size} is not offered in ${region} zone${missing.length > 1 ? "s" : ""} ${missing.join(", ")} (the Resource SKUs API lists zones ${[...offeredZones].sort().join(", ") || "none"}); place those hosts in one of those zones or make them regional (zone: null)`,
    });
  }
  return issues;
}

function quotaIssue(region: string, quota: string, needed: number, detail: string, usages: readonly Usage[], regional: boolean, sizes: readonly SizeNeed[] = []): QuotaShortfall | QuotaUnknown | undefined {
  const usage = usages.find((u) => same(u.name.value, quota));
  const label = regional ? `total regional vCPUs ("${TOTAL_REGIONAL_VCPUS}")` : `${quota}${usage?.name.localizedValue ? ` ("${usage.name.localizedValue}")` : ""}`;
  const path = `quota(${region}).${quota}`;
  if (!usage) {
    return { kind: "quota-unknown", region, quota, needed, path, message: `${region}: the Compute usages API lists no quota "${quota}", so latlab cannot check the ${needed} vCPUs ${detail} need; see \`az vm list-usage --location ${region} -o table\`` };
  }
  const available = Math.max(0, usage.limit - usage.currentValue);
  if (needed <= available) return undefined;
  const how = regional
    ? `request a higher total regional vCPU limit in the Azure portal (Quotas → Compute; ${QUOTA_DOCS.regional})`
    : familyQuotaAdvice(quota, sizes, region);
  return {
    kind: "quota",
    region,
    quota,
    needed,
    available,
    limit: usage.limit,
    current: usage.currentValue,
    path,
    message:
      `${region}: ${label} needed ${needed} (${detail}), available ${available} (limit ${usage.limit}, in use ${usage.currentValue}); ` +
      `a limit of at least ${usage.currentValue + needed} is needed: ${how}; current usage: \`az vm list-usage --location ${region} -o table\``,
  };
}

/**
 * Every reason Azure would refuse the plan's VMs, given each region's usages and SKUs (keyed by
 * region name, as `readComputeCapacity` returns them). Quotas are counted by the family Azure's
 * SKU list gives each size, falling back to capabilities.ts: Azure is the live truth.
 */
export function checkCapacity(needs: readonly RegionNeed[], usages: Readonly<Record<string, readonly Usage[]>>, skus: Readonly<Record<string, readonly ResourceSku[]>>): CapacityIssue[] {
  const issues: CapacityIssue[] = [];
  for (const r of needs) {
    const regionSkus = skus[r.region];
    const regionUsages = usages[r.region];
    // A region not read is a caller's mistake, not "no quota" or "size not offered".
    if (!regionSkus || !regionUsages) throw new Error(`checkCapacity: no ${regionUsages ? "SKU list" : "usages"} for ${r.region}; read every region of the plan (readComputeCapacity)`);
    const byFamily = new Map<string, SizeNeed[]>();
    for (const f of r.families) {
      for (const s of f.sizes) {
        issues.push(...sizeIssues(s, r.region, regionSkus));
        const family = skusFor(regionSkus, s.size, r.region).find((x) => x.family)?.family ?? f.family;
        byFamily.set(family, [...(byFamily.get(family) ?? []), s]);
      }
    }
    for (const [family, sizes] of [...byFamily].sort(([a], [b]) => a.localeCompare(b))) {
      const needed = sizes.reduce((sum, s) => sum + s.count * (s.vcpusEach ?? 0), 0);
      const issue = quotaIssue(r.region, family, needed, sizeList(sizes), regionUsages, false, sizes);
      if (issue) issues.push(issue);
    }
    const total = quotaIssue(r.region, TOTAL_REGIONAL_VCPUS, r.totalVcpus, `all ${r.families.reduce((n, f) => n + f.sizes.reduce((m, s) => m + s.count, 0), 0)} VMs in ${r.region}`, regionUsages, true);
    if (total) issues.push(total);
  }
  return issues;
}

// ---------------------------------------------------------------------------------------------
// Waves: what each deployment needs, and what a subscription has free (plan/waves.ts splits a
// plan whose deployments do not fit at once).

/**
 * The Network usages entry of Standard SKU public IPs (`GET …/providers/Microsoft.Network/
 * locations/{location}/usages`, `Usages_List`). Its `name.value` as the Microsoft.Quota API lists
 * it for Microsoft.Network — `{ "value": "StandardSkuPublicIpAddresses", "localizedValue": "Public
 * IP Addresses - Standard" }` (Azure/azure-rest-api-specs specification/quota/resource-manager/
 * Microsoft.Quota/stable/2023-02-01/examples/getNetworkQuotaLimits.json @ db9788d); the network
 * spec's own UsageList.json example predates Standard IPs and lists only "PublicIPAddresses".
 * Matched without case; newer listings spell it "IPv4StandardSkuPublicIpAddresses".
 */
export const STANDARD_PUBLIC_IPS = "StandardSkuPublicIpAddresses";
const STANDARD_PUBLIC_IP_NAMES = [STANDARD_PUBLIC_IPS, "IPv4StandardSkuPublicIpAddresses"].map((n) => n.toLowerCase());
const STANDARD_PUBLIC_IP_LABEL = "public ip addresses - standard";

/** The Standard public IP entry of a region's Network usages, if it lists one. */
export function standardPublicIpUsage(usages: readonly Usage[]): Usage | undefined {
  return (
    usages.find((u) => STANDARD_PUBLIC_IP_NAMES.includes((u.name.value ?? "").toLowerCase())) ??
    usages.find((u) => (u.name.localizedValue ?? "").trim().toLowerCase() === STANDARD_PUBLIC_IP_LABEL)
  );
}

/** Public IPs per region of the given deployments: one Standard static IPv4 address per host (program.ts). */
export function publicIpNeeds(plan: Pick<Plan, "deployments">): Map<string, number> {
  const out = new Map<string, number>();
  for (const d of plan.deployments) for (const h of d.hosts) out.set(h.region, (out.get(h.region) ?? 0) + 1);
  return out;
}

/** What each deployment needs while it is up: vCPUs per region and family (sizeFacts, or `live` SKUs), public IPs. */
export function deploymentDemands(plan: Pick<Plan, "deployments">, live?: readonly ResourceSku[]): DeploymentDemand[] {
  return plan.deployments.map((d) => {
    const ips = publicIpNeeds({ deployments: [d] });
    return {
      deployment: d.id,
      variants: d.variants,
      replica: d.replica,
      regions: vcpuNeeds({ deployments: [d] }, live).map((r) => ({
        region: r.region,
        vcpus: r.totalVcpus,
        families: r.families.map((f) => ({ family: f.family, vcpus: f.vcpus, unknownSizes: f.unknownSizes ?? [] })),
        publicIps: ips.get(r.region) ?? 0,
      })),
    };
  });
}

/** The limits of a subscription profile (the same in every region): what `latlab plan` sizes waves against. */
export function profileLimits(profile: SubscriptionProfile = NEW_SUBSCRIPTION_PROFILE, maxVcpus?: number): WaveLimits {
  return {
    source: profile.name,
    regions: {},
    otherRegions: { regionalVcpus: profile.regionalVcpus, familyVcpus: {}, otherFamilies: profile.familyVcpus, publicIps: profile.publicIps },
    ...(maxVcpus !== undefined ? { maxVcpus } : {}),
  };
}

/** Only `--max-vcpus` (a target without quotas: the local one). */
export const maxVcpusLimits = (maxVcpus: number): WaveLimits => ({ source: `--max-vcpus ${maxVcpus}`, regions: {}, maxVcpus });

const free = (u: Usage | undefined) => (u ? Math.max(0, u.limit - u.currentValue) : null);

/**
 * What the subscription has free in each region, from its Compute usages (every family it lists,
 * and "cores") and Network usages (Standard public IPs): limit − in use. A family or entry the
 * region does not list is not limited here (null); the check before each wave deploys
 * (checkCapacity) refuses a family Azure lists no quota for.
 */
export function liveLimits(regions: readonly string[], usages: Readonly<Record<string, readonly Usage[]>>, networkUsages: Readonly<Record<string, readonly Usage[]>> | undefined, maxVcpus?: number): WaveLimits {
  const out: Record<string, RegionLimits> = {};
  for (const region of regions) {
    const compute = usages[region] ?? [];
    const familyVcpus: Record<string, number> = {};
    for (const u of compute) {
      const name = u.name.value;
      if (name && /family$/i.test(name)) familyVcpus[name] = free(u)!;
    }
    out[region] = {
      regionalVcpus: free(compute.find((u) => (u.name.value ?? "").toLowerCase() === TOTAL_REGIONAL_VCPUS)),
      familyVcpus,
      otherFamilies: null,
      publicIps: networkUsages?.[region] ? free(standardPublicIpUsage(networkUsages[region]!)) : null,
    };
  }
  return { source: "the subscription's free quota, read live (limit − in use)", regions: out, ...(maxVcpus !== undefined ? { maxVcpus } : {}) };
}

/** Refusals for public IPs the regions' Network usages cannot hold (a region not read, or listing no Standard entry, is not checked). */
export function publicIpIssues(plan: Pick<Plan, "deployments">, networkUsages: Readonly<Record<string, readonly Usage[]>>): QuotaShortfall[] {
  const issues: QuotaShortfall[] = [];
  for (const [region, needed] of publicIpNeeds(plan)) {
    const listed = networkUsages[region];
    const usage = listed ? standardPublicIpUsage(listed) : undefined;
    if (!usage) continue;
    const available = Math.max(0, usage.limit - usage.currentValue);
    if (needed <= available) continue;
    issues.push({
      kind: "quota",
      region,
      quota: usage.name.value ?? STANDARD_PUBLIC_IPS,
      needed,
      available,
      limit: usage.limit,
      current: usage.currentValue,
      path: `quota(${region}).${usage.name.value ?? STANDARD_PUBLIC_IPS}`,
      message:
        `${region}: Standard public IPv4 addresses ("${usage.name.localizedValue ?? usage.name.value}") needed ${needed} (one per VM), available ${available} (limit ${usage.limit}, in use ${usage.currentValue}); ` +
        `request a higher limit in the Azure portal (Quotas → Networking; ${QUOTA_DOCS.network}); current usage: \`az network list-usages --location ${region} -o table\``,
    });
  }
  return issues;
}
