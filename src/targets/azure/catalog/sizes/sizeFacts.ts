import { closestName } from "../../../../dsl/suggest.ts";
import { sizeCapability } from "../capabilities.ts";
import type { ResourceSku } from "./resourceSku.ts";
import { previousGeneration, type PreviousGeneration } from "./previousGeneration.ts";
import { vcpusFromName } from "./sizeName.ts";
import { skuSnapshot, snapshotName, snapshotSkus, type SkuSnapshot } from "./skuSnapshot.ts";

/**
 * What latlab knows of a VM size, and from where. Any size is accepted: what is not known offline
 * is null (UNKNOWN) and is read from Azure's Resource SKUs API before anything is deployed.
 * Sources, strongest first:
 *  - live: the subscription's own `Microsoft.Compute/skus` answer (computeCapacity.ts);
 *  - snapshot: a full SKU entry in the shipped snapshot (skuSnapshot.ts, made from data Azure's
 *    Karpenter provider generated from the same API);
 *  - documented: a size Microsoft's size pages describe (capabilities.ts DOCUMENTED_SIZES: the
 *    sizes the seeds used, from before the snapshot);
 *  - name: the family from the snapshot's name list and the vCPUs from the name (sizeName.ts).
 */
export type FactOrigin = "live" | "snapshot" | "documented" | "name" | "unknown";

export type DiskController = "SCSI" | "NVMe";

export interface SizeFacts {
  name: string;
  /** Quota family: `name.value` of the Compute usages API, `family` of the SKU. */
  family: string | null;
  vcpus: number | null;
  memoryGiB: number | null;
  /** The SKU capability AcceleratedNetworkingEnabled. */
  acceleratedNetworking: boolean | null;
  /** HyperVGenerations: which image generation the size boots. */
  hyperVGenerations: (1 | 2)[] | null;
  /**
   * DiskControllerTypes. A full SKU entry without that capability is SCSI only: in the snapshot,
   * the SCSI sizes (D2_v5, D2s_v3…) carry none and the NVMe-only ones (D2as_v6, D128ds_v6) say "NVMe".
   */
  diskControllerTypes: DiskController[] | null;
  /** Where the capabilities above came from (the weakest field's source when mixed). */
  origin: FactOrigin;
  vcpusOrigin: FactOrigin;
  /** Azure's own RetirementDateUtc capability, when the SKU carries one. */
  retirementDate: string | null;
  previousGeneration: PreviousGeneration | null;
}

const capability = (skus: readonly ResourceSku[], name: string): string | undefined => {
  for (const s of skus) {
    const c = s.capabilities?.find((x) => x.name === name);
    if (c?.value !== undefined) return c.value;
  }
  return undefined;
};

const numberOf = (v: string | undefined) => (v === undefined || !Number.isFinite(Number(v)) ? null : Number(v));

/** Facts from full SKU entries (live or snapshot) of one size. */
export function factsFromSkus(skus: readonly ResourceSku[]): Omit<SizeFacts, "name" | "origin" | "vcpusOrigin" | "previousGeneration"> {
  const gens = capability(skus, "HyperVGenerations");
  const controllers = capability(skus, "DiskControllerTypes");
  const accel = capability(skus, "AcceleratedNetworkingEnabled");
  return {
    family: skus.find((s) => s.family)?.family ?? null,
    vcpus: numberOf(capability(skus, "vCPUs")),
    memoryGiB: numberOf(capability(skus, "MemoryGB")),
    acceleratedNetworking: accel === undefined ? null : accel.toLowerCase() === "true",
    hyperVGenerations:
      gens === undefined
        ? null
        : gens
            .split(",")
            .map((g) => Number(g.trim().replace(/^V/i, "")))
            .filter((g): g is 1 | 2 => g === 1 || g === 2),
    diskControllerTypes:
      controllers === undefined
        ? // Absent from an entry that lists capabilities: SCSI only. An entry listing none says nothing.
          skus.some((s) => s.capabilities?.length)
          ? ["SCSI"]
          : null
        : controllers
            .split(",")
            .map((c) => c.trim())
            .filter((c): c is DiskController => c === "SCSI" || c === "NVMe"),
    retirementDate: capability(skus, "RetirementDateUtc") ?? null,
  };
}

/**
 * Everything known of `size`. `live` are the subscription's SKU entries of that size (any region),
 * when read; they win over every offline source.
 */
export function sizeFacts(size: string, live?: readonly ResourceSku[], snapshot: SkuSnapshot = skuSnapshot()): SizeFacts {
  const withPg = (f: Omit<SizeFacts, "previousGeneration">): SizeFacts => ({ ...f, previousGeneration: previousGeneration(f.name, f.vcpus) });
  const liveSkus = (live ?? []).filter((s) => s.name?.toLowerCase() === size.toLowerCase());
  if (liveSkus.length) {
    // Azure's answer wins field by field; what it leaves out, the offline sources still say.
    const offline = sizeFacts(size, undefined, snapshot);
    const got = factsFromSkus(liveSkus);
    const pick = <K extends keyof typeof got>(k: K) => (got[k] ?? offline[k]) as (typeof got)[K];
    return withPg({
      name: liveSkus[0]!.name!,
      family: pick("family"),
      vcpus: pick("vcpus"),
      memoryGiB: pick("memoryGiB"),
      acceleratedNetworking: pick("acceleratedNetworking"),
      hyperVGenerations: pick("hyperVGenerations"),
      diskControllerTypes: pick("diskControllerTypes"),
      retirementDate: pick("retirementDate"),
      origin: "live",
      vcpusOrigin: got.vcpus === null ? offline.vcpusOrigin : "live",
    });
  }
  const snap = snapshotSkus(size, snapshot);
  if (snap.length) return withPg({ name: snap[0]!.name!, ...factsFromSkus(snap), origin: "snapshot", vcpusOrigin: "snapshot" });
  const named = snapshotName(size, snapshot);
  const name = named?.name ?? size;
  const documented = sizeCapability(name);
  if (documented) {
    return withPg({
      name,
      family: named?.family ?? documented.quotaFamily,
      vcpus: documented.vcpus,
      memoryGiB: documented.memoryGiB,
      acceleratedNetworking: documented.acceleratedNetworking !== "unsupported",
      hyperVGenerations: [...documented.generations],
      diskControllerTypes: ["SCSI"],
      origin: "documented",
      vcpusOrigin: "documented",
      retirementDate: null,
    });
  }
  const vcpus = vcpusFromName(name);
  return withPg({
    name,
    family: named?.family ?? null,
    vcpus,
    memoryGiB: null,
    acceleratedNetworking: null,
    hyperVGenerations: null,
    diskControllerTypes: null,
    origin: named ? "name" : "unknown",
    vcpusOrigin: vcpus === null ? "unknown" : "name",
    retirementDate: null,
  });
}

/** Whether any source knows the name (a typo is not a size). */
export const isKnownSize = (facts: SizeFacts) => facts.origin !== "unknown";

/**
 * The known size a misspelled one most likely means: first one that differs only in "_" or case
 * ("Standard_D4sv5" → "Standard_D4s_v5", where plain edit distance would tie with D4_v5), else the
 * closest by edit distance.
 */
export function suggestSize(input: string, snapshot: SkuSnapshot = skuSnapshot()): string | undefined {
  const names = knownSizeNames(snapshot);
  const squash = (n: string) => n.replace(/_/g, "").toLowerCase();
  return names.find((n) => squash(n) === squash(input)) ?? closestName(input, names);
}

/** Every size name the offline catalog knows (for did-you-mean). */
export function knownSizeNames(snapshot: SkuSnapshot = skuSnapshot()): string[] {
  return Object.keys(snapshot.names);
}

/**
 * How a VM of this size must boot: the Ubuntu image generation and, where the size has no SCSI
 * controller, `storageProfile.diskControllerType: NVMe`. Unknown facts keep Azure's defaults
 * (generation 2 where both would do; SCSI): the live check fills them before a real deploy.
 */
export function vmBoot(facts: Pick<SizeFacts, "hyperVGenerations" | "diskControllerTypes">): { generation: 1 | 2; diskControllerType: DiskController | null } {
  const gens = facts.hyperVGenerations;
  const generation: 1 | 2 = gens && gens.length && !gens.includes(2) ? 1 : 2;
  const controllers = facts.diskControllerTypes;
  const diskControllerType = controllers && controllers.length && !controllers.includes("SCSI") ? "NVMe" : null;
  return { generation, diskControllerType };
}
