import { z } from "zod";
import { regionCapability, sizeCapability, VM_SIZES } from "../../catalog/capabilities.ts";
import { ArmError } from "./armError.ts";
import { parseJsonSetting } from "./faults.ts";
import type { CloudView } from "./cloud.ts";

/**
 * What a subscription may create, as the emulator plays it: vCPU quotas per region (the total and
 * one per VM family) and sizes the subscription may not use in a region or zone. Served where
 * Azure serves them — `GET …/providers/Microsoft.Compute/locations/{region}/usages` and
 * `GET …/providers/Microsoft.Compute/skus?$filter=location eq '{region}'` — and enforced when a VM
 * is created, with the error Azure gives: so a rehearsal meets a quota as a real run would, and
 * latlab's preflight can be shown to refuse before anything is created.
 */

export const CapacitySchema = z
  .object({
    /** vCPU limits by usage name ("cores" = Total Regional vCPUs, or a family like "standardDSv2Family"); same in every region. */
    limits: z.record(z.string(), z.number().int().nonnegative()).default({}),
    /** Sizes the subscription may not create: in a whole region, or only in some of its zones. */
    restricted: z
      .array(z.object({ size: z.string(), region: z.string(), zones: z.array(z.enum(["1", "2", "3"])).min(1).optional() }).strict())
      .default([]),
  })
  .strict();
export type Capacity = z.infer<typeof CapacitySchema>;

/** Limits where the configuration names none: room for every shipped experiment (public-vs-peered needs 96 DSv2 vCPUs). */
export const DEFAULT_VCPU_LIMIT = 350;
export const TOTAL = "cores";

const VM_TYPE = "microsoft.compute/virtualmachines";

export const parseCapacity = (json: string, source = "LATLAB_EMULATOR_CAPACITY"): Capacity => parseJsonSetting(CapacitySchema, json, source);

/** "standardDSv2Family" → "Standard DSv2 Family vCPUs", as the portal names it. */
const familyLabel = (family: string) => `${family.replace(/^standard/, "Standard ").replace(/Family$/, " Family")} vCPUs`;

const limitOf = (capacity: Capacity, name: string) => capacity.limits[name] ?? DEFAULT_VCPU_LIMIT;

const sameRegion = (a: unknown, b: string) => typeof a === "string" && a.replace(/\s/g, "").toLowerCase() === b.toLowerCase();

/** vCPUs of the VMs ARM holds in a region, in total and per family (a VM being deleted still counts, as on Azure). */
function inUse(view: CloudView, region: string, except?: string): Map<string, number> {
  const used = new Map<string, number>([[TOTAL, 0]]);
  for (const vm of view.all(VM_TYPE)) {
    if (vm.key === except || !sameRegion(vm.body.location, region)) continue;
    const props = (vm.body.properties ?? {}) as { hardwareProfile?: { vmSize?: string } };
    const cap = props.hardwareProfile?.vmSize ? sizeCapability(props.hardwareProfile.vmSize) : undefined;
    if (!cap) continue;
    used.set(TOTAL, used.get(TOTAL)! + cap.vcpus);
    used.set(cap.quotaFamily, (used.get(cap.quotaFamily) ?? 0) + cap.vcpus);
  }
  return used;
}

/** The Compute usages list of one region (`Usage_List`). */
export function usagesOf(view: CloudView, region: string, capacity: Capacity): { value: unknown[] } {
  const used = inUse(view, region);
  const families = [...new Set(Object.values(VM_SIZES).map((s) => s.quotaFamily))].sort();
  const entry = (name: string, label: string) => ({ unit: "Count", currentValue: used.get(name) ?? 0, limit: limitOf(capacity, name), name: { value: name, localizedValue: label } });
  return { value: [entry(TOTAL, "Total Regional vCPUs"), ...families.map((f) => entry(f, familyLabel(f)))] };
}

/** The virtualMachines SKUs of one region (`ResourceSkus_List` filtered by location), with the configured restrictions. */
export function skusOf(region: string, capacity: Capacity): { value: unknown[] } {
  const zones = regionCapability(region)?.zones ?? [];
  if (!regionCapability(region)) return { value: [] };
  const value = Object.entries(VM_SIZES).map(([name, cap]) => {
    const restrictions = capacity.restricted
      .filter((r) => r.size.toLowerCase() === name.toLowerCase() && r.region.toLowerCase() === region.toLowerCase())
      .map((r) =>
        r.zones
          ? { type: "Zone", values: [region], restrictionInfo: { locations: [region], zones: r.zones }, reasonCode: "NotAvailableForSubscription" }
          : { type: "Location", values: [region], restrictionInfo: { locations: [region] }, reasonCode: "NotAvailableForSubscription" },
      );
    return {
      resourceType: "virtualMachines",
      name,
      tier: "Standard",
      size: name.replace(/^Standard_/, ""),
      family: cap.quotaFamily,
      locations: [region],
      locationInfo: [{ location: region, zones: [...zones], zoneDetails: [] }],
      capabilities: [
        { name: "vCPUs", value: String(cap.vcpus) },
        { name: "MemoryGB", value: String(cap.memoryGiB) },
        { name: "AcceleratedNetworkingEnabled", value: cap.acceleratedNetworking === "unsupported" ? "False" : "True" },
      ],
      restrictions,
    };
  });
  return { value };
}

/**
 * Refuses a VM the subscription may not create: a restricted size (SkuNotAvailable, as Azure says
 * it) or one past a vCPU quota (OperationNotAllowed with the figures Azure gives).
 */
export function checkVmCapacity(view: CloudView, capacity: Capacity, vm: { key: string; name: string; region: string; size: string; zone?: string }): void {
  const cap = sizeCapability(vm.size);
  if (!cap) return; // the VM rules refuse an unknown size
  const blocked = capacity.restricted.find(
    (r) => r.size.toLowerCase() === vm.size.toLowerCase() && r.region.toLowerCase() === vm.region.toLowerCase() && (!r.zones || (vm.zone !== undefined && r.zones.includes(vm.zone as "1"))),
  );
  if (blocked) {
    throw new ArmError(
      409,
      "SkuNotAvailable",
      `The requested VM size for resource 'Following SKUs have failed for Capacity Restrictions: ${vm.size}' is currently not available in location '${vm.region}'${blocked.zones ? ` zones '${blocked.zones.join(",")}'` : ""}. Please try another size or deploy to a different location or different zone. See https://aka.ms/azureskunotavailable for details.`,
    );
  }
  const used = inUse(view, vm.region, vm.key);
  for (const [name, label] of [
    [cap.quotaFamily, `${cap.quotaFamily} Cores`],
    [TOTAL, "Total Regional Cores"],
  ] as const) {
    const limit = limitOf(capacity, name);
    const current = used.get(name) ?? 0;
    if (current + cap.vcpus > limit) {
      throw new ArmError(
        409,
        "OperationNotAllowed",
        `Operation could not be completed as it results in exceeding approved ${label} quota. Additional details - Deployment Model: Resource Manager, Location: ${vm.region}, Current Limit: ${limit}, Current Usage: ${current}, Additional Required: ${cap.vcpus}, (Minimum) New Limit Required: ${current + cap.vcpus}. Submit a request for Quota increase at https://aka.ms/ProdportalCRP/#blade/Microsoft_Azure_Capacity/UsageAndQuota.ReactView/Parameters/ by specifying parameters listed in the 'Details' section for deployment to succeed.`,
      );
    }
  }
}

/** `/subscriptions/{s}/providers/Microsoft.Compute/locations/{region}/usages` or `…/Microsoft.Compute/skus`; undefined for any other path. */
export function capacityRoute(path: string, query: URLSearchParams): { kind: "usages"; region: string } | { kind: "skus"; region: string | undefined } | undefined {
  const usages = /^\/subscriptions\/[^/]+\/providers\/microsoft\.compute\/locations\/([^/]+)\/usages\/?$/i.exec(path);
  if (usages) return { kind: "usages", region: usages[1]!.toLowerCase() };
  if (/^\/subscriptions\/[^/]+\/providers\/microsoft\.compute\/skus\/?$/i.test(path)) {
    const filter = /^location eq '([^']+)'$/i.exec(query.get("$filter")?.trim() ?? "");
    return { kind: "skus", region: filter?.[1]?.toLowerCase() };
  }
  return undefined;
}
