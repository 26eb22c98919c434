import { z } from "zod";
import type { DefinitionIssue } from "../../../dsl/errors.ts";
import type { Zone } from "../../../dsl/placement.ts";
import type { Plan } from "../../../plan/types.ts";
import { sizeCapability } from "./capabilities.ts";

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

/** `ResourceSkuRestrictions` (Skus/stable/2021-07-01/skus.json). */
export const SkuRestrictionSchema = z.object({
  /** "Location" or "Zone". */
  type: z.string().optional(),
  values: z.array(z.string()).optional(),
  restrictionInfo: z.object({ locations: z.array(z.string()).optional(), zones: z.array(z.string()).optional() }).optional(),
  /** "NotAvailableForSubscription" or "QuotaId" (the subscription's offer type excludes the size). */
  reasonCode: z.string().optional(),
});
export type SkuRestriction = z.infer<typeof SkuRestrictionSchema>;

/** `ResourceSku`: the fields the check reads. */
export const ResourceSkuSchema = z.object({
  resourceType: z.string().optional(),
  name: z.string().optional(),
  family: z.string().optional(),
  locations: z.array(z.string()).optional(),
  locationInfo: z
    .array(
      z.object({
        location: z.string().optional(),
        zones: z.array(z.string()).optional(),
        /** "EdgeZone" for an extended location; absent for the region itself. */
        type: z.string().optional(),
      }),
    )
    .optional(),
  capabilities: z.array(z.object({ name: z.string().optional(), value: z.string().optional() })).optional(),
  restrictions: z.array(SkuRestrictionSchema).optional(),
});
export type ResourceSku = z.infer<typeof ResourceSkuSchema>;

export const ResourceSkuListSchema = z.object({
  value: z.array(ResourceSkuSchema),
  nextLink: z.string().nullish(),
});
export type ResourceSkuList = z.infer<typeof ResourceSkuListSchema>;

/** The usage entry of the region's total: `{ value: "cores", localizedValue: "Total Regional vCPUs" }`. */
export const TOTAL_REGIONAL_VCPUS = "cores";

// ---------------------------------------------------------------------------------------------
// What the plan needs

export interface SizeNeed {
  size: string;
  vcpusEach: number;
  count: number;
  /** The zones hosts of this size are pinned to (a Zone restriction matters only there). */
  zones: Zone[];
}

export interface FamilyNeed {
  /** The quota family from capabilities.ts (the usages API's `name.value`). */
  family: string;
  vcpus: number;
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
 * vCPUs per region and quota family. Every deployment of the plan is one Pulumi stack brought up
 * at once (program.ts), so the quota must hold all of them together, not one variant at a time.
 * A size missing from capabilities.ts throws: validateForAzure refuses such a plan first.
 */
export function vcpuNeeds(plan: Plan): RegionNeed[] {
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
      const cap = sizeCapability(size);
      if (!cap) throw new Error(`vcpuNeeds: VM size "${size}" is not in latlab's capability table (src/targets/azure/capabilities.ts); validateForAzure refuses it`);
      const family = families.get(cap.quotaFamily) ?? { family: cap.quotaFamily, vcpus: 0, sizes: [] };
      families.set(cap.quotaFamily, family);
      family.vcpus += count * cap.vcpus;
      family.sizes.push({ size, vcpusEach: cap.vcpus, count, zones: [...zones].sort() });
    }
    const list = [...families.values()].sort(byKey((f) => f.family));
    for (const f of list) f.sizes.sort(byKey((s) => s.size));
    regions.push({ region, totalVcpus: list.reduce((sum, f) => sum + f.vcpus, 0), families: list });
  }
  return regions.sort(byKey((r) => r.region));
}

const sizeList = (sizes: readonly SizeNeed[]) => sizes.map((s) => `${s.count}× ${s.size} = ${s.count * s.vcpusEach}`).join(", ");

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
  family: "https://learn.microsoft.com/azure/quotas/per-vm-quota-requests",
  regional: "https://learn.microsoft.com/azure/quotas/regional-quota-requests",
  skuAccess: "https://learn.microsoft.com/troubleshoot/azure/general/region-access-request-process",
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
    return [{ ...base, path, zones: null, message: `${need.size} is not offered in ${region}: the Resource SKUs API lists no virtualMachines SKU of that name there (\`az vm list-skus --location ${region} --size ${need.size} --all\`); pick another size or region` }];
  }
  const restrictions = found.flatMap((s) => s.restrictions ?? []).filter((r) => appliesTo(r, region));
  // A Location restriction closes the region; any other (Zone, or a type this code does not know) is read as closing its zones.
  const regionWide = restrictions.find((r) => r.type === "Location" || (r.type !== "Zone" && !r.restrictionInfo?.zones?.length));
  if (regionWide) {
    return [{ ...base, path, zones: null, message: `${need.size} is ${reason(regionWide)} in ${region} (restriction type ${regionWide.type ?? "not given"}); pick another size or region, or ask Azure support for access (${QUOTA_DOCS.skuAccess})` }];
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

function quotaIssue(region: string, quota: string, needed: number, detail: string, usages: readonly Usage[], regional: boolean): QuotaShortfall | QuotaUnknown | undefined {
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
    : `request it in the Azure portal: Quotas → Compute → select ${quota} in ${region} → New Quota Request (${QUOTA_DOCS.family}); an approved family increase raises the regional total with it`;
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
      const needed = sizes.reduce((sum, s) => sum + s.count * s.vcpusEach, 0);
      const issue = quotaIssue(r.region, family, needed, sizeList(sizes), regionUsages, false);
      if (issue) issues.push(issue);
    }
    const total = quotaIssue(r.region, TOTAL_REGIONAL_VCPUS, r.totalVcpus, `all ${r.families.reduce((n, f) => n + f.sizes.reduce((m, s) => m + s.count, 0), 0)} VMs in ${r.region}`, regionUsages, true);
    if (total) issues.push(total);
  }
  return issues;
}
