import { describePreviousGeneration, previousGeneration } from "./sizes/previousGeneration.ts";
import { sizeFacts } from "./sizes/sizeFacts.ts";

/**
 * What to do about a VM family's vCPU quota that cannot hold a run: the tail of quota.ts's
 * shortfall message ("a limit of at least N is needed: <this>"). For a current series, ask Azure
 * for more quota. For a previous-generation series that advice would be false: since July 2026
 * "Existing subscription requesting additional quota | Additional quota isn't approved" and
 * "New subscription | Can't deploy affected SKUs" (MicrosoftDocs/azure-compute-docs
 * articles/virtual-machines/migration/sizes/previous-gen-series-capacity-limitations.md @ 3afc713,
 * ms.date 08/18/2026; sizes/previousGeneration.ts). The advice is then the current replacement.
 */

/** Where Microsoft says how to ask for more quota. */
export const QUOTA_REQUEST_DOCS = {
  family: "https://learn.microsoft.com/azure/quotas/per-vm-quota-requests",
  regional: "https://learn.microsoft.com/azure/quotas/regional-quota-requests",
} as const;

/** A size of the family, as quota.ts's SizeNeed has it (vCPUs pick the suggested replacement). */
export type FamilySize = string | { size: string; vcpusEach?: number | null };

/**
 * The advice for a shortfall of `family` in `region`, given the plan's sizes in that family:
 * a quota request, or — when any of them is a previous-generation size — that no request will be
 * approved, and which current size to use instead (one sentence per restricted size).
 */
export function familyQuotaAdvice(family: string, sizes: readonly FamilySize[], region: string): string {
  const restricted = new Map<string, string>();
  for (const s of sizes) {
    // The catalog's spelling: Azure takes "standard_ds13_v2" as DS13_v2, the naming convention does not.
    const facts = sizeFacts(typeof s === "string" ? s : s.size);
    const vcpus = typeof s === "string" ? facts.vcpus : (s.vcpusEach ?? facts.vcpus);
    const pg = previousGeneration(facts.name, vcpus);
    if (pg && !restricted.has(facts.name)) restricted.set(facts.name, describePreviousGeneration(facts.name, pg));
  }
  if (!restricted.size) {
    return `request it in the Azure portal: Quotas → Compute → select ${family} in ${region} → New Quota Request (${QUOTA_REQUEST_DOCS.family}); an approved family increase raises the regional total with it`;
  }
  // Each sentence says the restriction (since when, new subscriptions, no more quota), the replacement and the source.
  return `Azure will not approve more ${family} quota, so change the size instead: ${[...restricted.values()].join("; ")}`;
}
