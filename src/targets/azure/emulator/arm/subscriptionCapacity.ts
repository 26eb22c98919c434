import { z } from "zod";
import { regionCapability, VM_SIZES } from "../../catalog/capabilities.ts";
import { PREVIOUS_GEN_SOURCE } from "../../catalog/sizes/previousGeneration.ts";
import { knownSizeNames, sizeFacts, type SizeFacts } from "../../catalog/sizes/sizeFacts.ts";
import { skuSnapshot, snapshotSkus } from "../../catalog/sizes/skuSnapshot.ts";
import { NEW_SUBSCRIPTION_PROFILE } from "../../catalog/subscriptionProfile.ts";
import { STANDARD_PUBLIC_IPS } from "../../catalog/quota.ts";
import { checkAllocation } from "./allocation.ts";
import { ArmError } from "./armError.ts";
import { parseJsonSetting } from "./faults.ts";
import type { CloudView, TypeRules } from "./cloud.ts";

/**
 * What a subscription may create, as the emulator plays it. The default profile is a new
 * pay-as-you-go subscription, Microsoft's documented defaults (catalog/subscriptionProfile.ts:
 * 20 total regional vCPUs, 20 vCPUs per VM family, 10 Standard public IPv4 addresses, per region;
 * sources there) with the previous-generation series closed to it (catalog/sizes/
 * previousGeneration.ts: "New subscription | Can't deploy affected SKUs"). "unrestricted" is
 * the emulator's old, generous subscription, for tests of something else: the figures of an
 * Enterprise Agreement in the same footnotes (350 vCPUs, 1000 public IPs), nothing restricted.
 *
 * Served where Azure serves them — `GET …/providers/Microsoft.Compute/locations/{region}/usages`,
 * `GET …/providers/Microsoft.Compute/skus?$filter=location eq '{region}'` and
 * `GET …/providers/Microsoft.Network/locations/{region}/usages` — and enforced when a VM or a
 * public IP is created, with the error Azure gives: so a rehearsal meets a quota or a closed size
 * as a real run would, and latlab's preflight can be shown to refuse before anything is created.
 *
 * Sizes: those whose vCPUs, Accelerated Networking, generations and disk controllers latlab's
 * catalog knows (catalog/sizes/sizeFacts.ts: a full entry of the SKU snapshot, or a documented
 * size), offered in every zone of every region latlab's capability table knows. A size is counted
 * against the family and vCPUs sizeFacts gives.
 */

export const PROFILES = ["new-subscription", "unrestricted"] as const;
export type ProfileName = (typeof PROFILES)[number];

export const CapacitySchema = z
  .object({
    /** "new-subscription" (default): Microsoft's documented defaults of a new pay-as-you-go subscription; "unrestricted": 350 vCPUs, 1000 public IPs, every size. */
    profile: z.enum(PROFILES).default("new-subscription"),
    /** vCPU limits by usage name ("cores" = Total Regional vCPUs, or a family like "standardDSv5Family"), over the profile's; same in every region. */
    limits: z.record(z.string(), z.number().int().nonnegative()).default({}),
    /** Standard public IPv4 addresses per region, over the profile's. */
    publicIps: z.number().int().nonnegative().optional(),
    /** Sizes the subscription may not create: in a whole region, or only in some of its zones (besides the profile's). */
    restricted: z
      .array(z.object({ size: z.string(), region: z.string(), zones: z.array(z.enum(["1", "2", "3"])).min(1).optional() }).strict())
      .default([]),
  })
  .strict();
export type Capacity = z.infer<typeof CapacitySchema>;

export const TOTAL = "cores";
/** The Network usage of Standard public IPs: its `name.value` is catalog/quota.ts's (the sources are there), served with the portal's label (Azure/azure-rest-api-specs specification/quota/…/Microsoft.Quota/stable/2023-02-01/examples/getNetworkUsages.json @ 62cdc52: "StandardSkuPublicIpAddresses", "Public IP Addresses - Standard"). */
export { STANDARD_PUBLIC_IPS };
const STANDARD_PUBLIC_IPS_LABEL = "Public IP Addresses - Standard";

/** The figures of each profile (new-subscription: catalog/subscriptionProfile.ts; unrestricted: the Enterprise Agreement defaults its footnotes quote). */
export const PROFILE_LIMITS: Readonly<Record<ProfileName, { regionalVcpus: number; familyVcpus: number; publicIps: number; previousGenerationClosed: boolean }>> = {
  "new-subscription": { regionalVcpus: NEW_SUBSCRIPTION_PROFILE.regionalVcpus, familyVcpus: NEW_SUBSCRIPTION_PROFILE.familyVcpus, publicIps: NEW_SUBSCRIPTION_PROFILE.publicIps, previousGenerationClosed: true },
  unrestricted: { regionalVcpus: 350, familyVcpus: 350, publicIps: 1000, previousGenerationClosed: false },
};

const VM_TYPE = "microsoft.compute/virtualmachines";
const PUBLIC_IP_TYPE = "microsoft.network/publicipaddresses";

export const parseCapacity = (json: string, source = "LATLAB_EMULATOR_CAPACITY"): Capacity => parseJsonSetting(CapacitySchema, json, source);

/** "standardDSv2Family" → "Standard DSv2 Family vCPUs", as the portal names it. */
const familyLabel = (family: string) => `${family.replace(/^standard\s*/i, "Standard ").replace(/\s*Family$/i, " Family")} vCPUs`;

const lower = (s: string) => s.toLowerCase();
const sameRegion = (a: unknown, b: string) => typeof a === "string" && a.replace(/\s/g, "").toLowerCase() === b.replace(/\s/g, "").toLowerCase();

/** The limit of a Compute usage: the configured one, else the profile's. */
export function limitOf(capacity: Capacity, name: string): number {
  const set = Object.entries(capacity.limits).find(([k]) => lower(k) === lower(name));
  if (set) return set[1];
  const p = PROFILE_LIMITS[capacity.profile];
  return lower(name) === TOTAL ? p.regionalVcpus : p.familyVcpus;
}

export const publicIpLimitOf = (capacity: Capacity): number => capacity.publicIps ?? PROFILE_LIMITS[capacity.profile].publicIps;

/** Every fact the emulator plays a size with is known. */
export const isPlayable = (f: SizeFacts): boolean => f.vcpus !== null && f.family !== null && f.acceleratedNetworking !== null && f.hyperVGenerations !== null && f.diskControllerTypes !== null;

/** `RetirementDateUtc` ("09/03/2024", month first) is past. */
function retired(f: SizeFacts, now: number): boolean {
  const m = f.retirementDate ? /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(f.retirementDate.trim()) : null;
  return m !== null && Date.UTC(Number(m[3]), Number(m[1]) - 1, Number(m[2])) <= now;
}

/** Why the profile closes a size to the subscription (previous generation, or retired), or undefined. */
export function profileRestriction(capacity: Capacity, size: string, now = Date.now()): string | undefined {
  if (!PROFILE_LIMITS[capacity.profile].previousGenerationClosed) return undefined;
  const f = sizeFacts(size);
  const pg = f.previousGeneration;
  if (pg) return `${size} is a previous-generation size (${pg.series} series) a new subscription cannot deploy (${PREVIOUS_GEN_SOURCE.url})`;
  if (retired(f, now)) return `${size} retired on ${f.retirementDate} (its RetirementDateUtc)`;
  return undefined;
}

let playable: SizeFacts[] | undefined;
/** The sizes the emulator offers: the snapshot's and the documented ones whose facts are complete (cached: the catalog ships with latlab). */
function playableSizes(): SizeFacts[] {
  playable ??= [...new Set([...knownSizeNames(), ...skuSnapshot().skus.map((s) => s.name!).filter(Boolean), ...Object.keys(VM_SIZES)])]
    .map((n) => sizeFacts(n))
    .filter(isPlayable)
    .sort((a, b) => a.name.localeCompare(b.name));
  return playable;
}

/** Every quota family Azure lists: the snapshot's names' and the offered sizes'. */
function families(): string[] {
  const all = new Map<string, string>();
  for (const n of Object.values(skuSnapshot().names)) all.set(lower(n.family), n.family);
  for (const f of playableSizes()) all.set(lower(f.family!), f.family!);
  return [...all.values()].sort((a, b) => a.localeCompare(b));
}

/** vCPUs of the VMs ARM holds in a region, in total and per family (lower case); a VM being deleted still counts, as on Azure. */
function inUse(view: CloudView, region: string, except?: string): Map<string, number> {
  const used = new Map<string, number>([[TOTAL, 0]]);
  for (const vm of view.all(VM_TYPE)) {
    if (vm.key === except || !sameRegion(vm.body.location, region)) continue;
    const props = (vm.body.properties ?? {}) as { hardwareProfile?: { vmSize?: string } };
    const f = props.hardwareProfile?.vmSize ? sizeFacts(props.hardwareProfile.vmSize) : undefined;
    if (!f || f.vcpus === null || f.family === null) continue;
    used.set(TOTAL, used.get(TOTAL)! + f.vcpus);
    used.set(lower(f.family), (used.get(lower(f.family)) ?? 0) + f.vcpus);
  }
  return used;
}

/** The Compute usages list of one region (`Usage_List`). */
export function usagesOf(view: CloudView, region: string, capacity: Capacity): { value: unknown[] } {
  const used = inUse(view, region);
  const entry = (name: string, label: string) => ({ unit: "Count", currentValue: used.get(lower(name)) ?? 0, limit: limitOf(capacity, name), name: { value: name, localizedValue: label } });
  return { value: [entry(TOTAL, "Total Regional vCPUs"), ...families().map((f) => entry(f, familyLabel(f)))] };
}

/** A SKU entry for the region: the snapshot's own entry where there is one, else built from the documented facts. */
function skuEntry(f: SizeFacts, region: string, zones: readonly string[]): Record<string, unknown> {
  const where = { locations: [region], locationInfo: [{ location: region, zones: [...zones], zoneDetails: [] }] };
  const snap = snapshotSkus(f.name)[0];
  if (snap) return { ...structuredClone(snap), ...where };
  return {
    resourceType: "virtualMachines",
    name: f.name,
    tier: "Standard",
    size: f.name.replace(/^Standard_/, ""),
    family: f.family,
    ...where,
    capabilities: [
      { name: "vCPUs", value: String(f.vcpus) },
      ...(f.memoryGiB !== null ? [{ name: "MemoryGB", value: String(f.memoryGiB) }] : []),
      { name: "HyperVGenerations", value: f.hyperVGenerations!.map((g) => `V${g}`).join(",") },
      { name: "AcceleratedNetworkingEnabled", value: f.acceleratedNetworking ? "True" : "False" },
      // A SCSI size carries no DiskControllerTypes (as in the snapshot's entries); others list theirs.
      ...(f.diskControllerTypes!.includes("NVMe") ? [{ name: "DiskControllerTypes", value: f.diskControllerTypes!.join(",") }] : []),
    ],
  };
}

const locationRestriction = (region: string) => ({ type: "Location", values: [region], restrictionInfo: { locations: [region] }, reasonCode: "NotAvailableForSubscription" });

/** The virtualMachines SKUs of one region (`ResourceSkus_List` filtered by location), with the profile's and the configured restrictions. */
export function skusOf(region: string, capacity: Capacity): { value: unknown[] } {
  const cap = regionCapability(region);
  if (!cap) return { value: [] };
  const value = playableSizes().map((f) => {
    const restrictions = [
      ...(profileRestriction(capacity, f.name) ? [locationRestriction(region)] : []),
      ...capacity.restricted
        .filter((r) => lower(r.size) === lower(f.name) && lower(r.region) === lower(region))
        .map((r) =>
          r.zones ? { type: "Zone", values: [region], restrictionInfo: { locations: [region], zones: r.zones }, reasonCode: "NotAvailableForSubscription" } : locationRestriction(region),
        ),
    ];
    return { ...skuEntry(f, region, cap.zones), restrictions };
  });
  return { value };
}

/**
 * Refuses a VM the subscription may not create, with Azure's words:
 *  - a closed size: 409 SkuNotAvailable, "The requested VM size for resource 'Following SKUs have
 *    failed for Capacity Restrictions: Standard_B2s' is currently not available in location
 *    'eastus'. Please try another size or deploy to a different location or different zone. See
 *    https://aka.ms/azureskunotavailable for details." (Azure-Samples/azuresandbox issue 70: "409
 *    Conflict"; MicrosoftLearning/Configure-secure-access-to-workloads-with-Azure-virtual-networking-services issue 10);
 *  - past a vCPU quota: 409 OperationNotAllowed, "Operation could not be completed as it results in
 *    exceeding approved standardDASv5Family Cores quota. Additional details - Deployment Model:
 *    Resource Manager, Location: eastus, Current Limit: 100, Current Usage: 96, Additional
 *    Required: 64, (Minimum) New Limit Required: 160. Submit a request for Quota increase at …"
 *    (Azure/karpenter-provider-azure issue 192; "Total Regional Cores" in nforgeio/neonKUBE issue 1671).
 */
export function checkVmCapacity(view: CloudView, capacity: Capacity, vm: { key: string; name: string; region: string; size: string; zone?: string }): void {
  const f = sizeFacts(vm.size);
  if (!isPlayable(f)) return; // the VM rules refuse a size the emulator cannot play
  const blocked = capacity.restricted.find(
    (r) => lower(r.size) === lower(vm.size) && lower(r.region) === lower(vm.region) && (!r.zones || (vm.zone !== undefined && r.zones.includes(vm.zone as "1"))),
  );
  const closed = profileRestriction(capacity, vm.size);
  if (blocked || closed) {
    const zones = blocked?.zones && !closed ? ` zones '${blocked.zones.join(",")}'` : "";
    throw new ArmError(
      409,
      "SkuNotAvailable",
      `The requested VM size for resource 'Following SKUs have failed for Capacity Restrictions: ${vm.size}' is currently not available in location '${vm.region}'${zones}. Please try another size or deploy to a different location or different zone. See https://aka.ms/azureskunotavailable for details.`,
    );
  }
  const used = inUse(view, vm.region, vm.key);
  for (const [name, label] of [
    [f.family!, `${f.family} Cores`],
    [TOTAL, "Total Regional Cores"],
  ] as const) {
    const limit = limitOf(capacity, name);
    const current = used.get(lower(name)) ?? 0;
    if (current + f.vcpus! > limit) {
      throw new ArmError(
        409,
        "OperationNotAllowed",
        `Operation could not be completed as it results in exceeding approved ${label} quota. Additional details - Deployment Model: Resource Manager, Location: ${vm.region}, Current Limit: ${limit}, Current Usage: ${current}, Additional Required: ${f.vcpus}, (Minimum) New Limit Required: ${current + f.vcpus!}. Submit a request for Quota increase at https://aka.ms/ProdportalCRP/#blade/Microsoft_Azure_Capacity/UsageAndQuota.ReactView/Parameters/ by specifying parameters listed in the 'Details' section for deployment to succeed.`,
      );
    }
  }
}

const isStandardIp = (body: Record<string, unknown>) => {
  const sku = body.sku as { name?: unknown } | undefined;
  return typeof sku?.name === "string" && lower(sku.name) === "standard";
};

/** Standard public IPs ARM holds in a region (one being deleted still counts). */
function publicIpsInUse(view: CloudView, region: string, except?: string): number {
  return view.all(PUBLIC_IP_TYPE).filter((p) => p.key !== except && sameRegion(p.body.location, region) && isStandardIp(p.body)).length;
}

/** The Network usages list of one region (`Usages_List`, Network/stable/2024-07-01/usage.json): the Standard public IP entry. */
export function networkUsagesOf(view: CloudView, subscription: string, region: string, capacity: Capacity): { value: unknown[] } {
  return {
    value: [
      {
        id: `/subscriptions/${subscription}/providers/Microsoft.Network/locations/${region}/usages/${STANDARD_PUBLIC_IPS}`,
        unit: "Count",
        currentValue: publicIpsInUse(view, region),
        limit: publicIpLimitOf(capacity),
        name: { value: STANDARD_PUBLIC_IPS, localizedValue: STANDARD_PUBLIC_IPS_LABEL },
      },
    ],
  };
}

/**
 * Refuses a Standard public IP past the region's quota: 400 PublicIPCountLimitReached, "Cannot
 * create more than 20 public IP addresses for this subscription in this region." (a Standard SKU
 * address: evgenyb/aks-workshops issue 22; openshift/openshift-azure issue 2252; 400 as for
 * StaticPublicIPCountLimitReached in coreos/tectonic-installer issue 1454).
 */
export function checkPublicIpQuota(view: CloudView, capacity: Capacity, ip: { key: string; region: string; body: Record<string, unknown> }): void {
  if (!isStandardIp(ip.body)) return;
  const limit = publicIpLimitOf(capacity);
  if (publicIpsInUse(view, ip.region, ip.key) + 1 > limit) {
    throw new ArmError(400, "PublicIPCountLimitReached", `Cannot create more than ${limit} public IP addresses for this subscription in this region.`);
  }
}

/**
 * The type rules with the subscription's limits that are not the platform's own: a public IP's
 * quota when it is created, and allocation (arm/allocation.ts) when a VM's create operation runs.
 * (The vCPU quota and closed sizes are checked by the VM rules themselves: typeRules.ts calls
 * checkVmCapacity.)
 */
export function withSubscriptionLimits(rules: Readonly<Record<string, TypeRules>>, capacity: Capacity): Record<string, TypeRules> {
  return Object.fromEntries(
    Object.entries(rules).map(([type, r]): [string, TypeRules] => {
      if (lower(type) === PUBLIC_IP_TYPE) {
        return [
          type,
          {
            ...r,
            validate(body, id, view, existing) {
              r.validate?.(body, id, view, existing);
              if (!existing && typeof body.location === "string") checkPublicIpQuota(view, capacity, { key: id.key, region: body.location, body });
            },
          },
        ];
      }
      if (lower(type) === VM_TYPE) {
        return [
          type,
          {
            ...r,
            async provision(resource, view, faults) {
              checkAllocation(resource, view, faults);
              await r.provision?.(resource, view, faults);
            },
          },
        ];
      }
      return [type, r];
    }),
  );
}

export type CapacityRoute = { kind: "usages"; region: string } | { kind: "skus"; region: string | undefined } | { kind: "network-usages"; subscription: string; region: string };

/** `…/Microsoft.Compute/locations/{region}/usages`, `…/Microsoft.Compute/skus` or `…/Microsoft.Network/locations/{region}/usages`; undefined for any other path. */
export function capacityRoute(path: string, query: URLSearchParams): CapacityRoute | undefined {
  const usages = /^\/subscriptions\/[^/]+\/providers\/microsoft\.compute\/locations\/([^/]+)\/usages\/?$/i.exec(path);
  if (usages) return { kind: "usages", region: usages[1]!.toLowerCase() };
  const network = /^\/subscriptions\/([^/]+)\/providers\/microsoft\.network\/locations\/([^/]+)\/usages\/?$/i.exec(path);
  if (network) return { kind: "network-usages", subscription: network[1]!, region: network[2]!.replace(/\s/g, "").toLowerCase() };
  if (/^\/subscriptions\/[^/]+\/providers\/microsoft\.compute\/skus\/?$/i.test(path)) {
    const filter = /^location eq '([^']+)'$/i.exec(query.get("$filter")?.trim() ?? "");
    return { kind: "skus", region: filter?.[1]?.toLowerCase() };
  }
  return undefined;
}
