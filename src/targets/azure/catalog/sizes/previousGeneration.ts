import type { Source } from "../capabilities.ts";
import { parseSizeName, seriesOf } from "./sizeName.ts";
import { snapshotName } from "./skuSnapshot.ts";

/**
 * Previous-generation series Azure no longer lets a new subscription deploy. Source:
 * "Previous-generation VM size series capacity growth restrictions and migration guidance",
 * MicrosoftDocs/azure-compute-docs articles/virtual-machines/migration/sizes/
 * previous-gen-series-capacity-limitations.md @ 3afc713 (ms.date 08/18/2026): "certain
 * previous-generation VM series are subject to capacity growth restrictions starting in July
 * 2026"; "New subscription | Can't deploy affected SKUs"; "Existing subscription requesting
 * additional quota | Additional quota isn't approved". Impacted: F, Fs, Fsv2; D, Ds, Dv2, Dsv2,
 * Dv3, Dsv3, Dv4, Dsv4, Ddv4, Ddsv4, Dav4, Dasv4, B, Bs, Av2, Amv2; Ev3, Esv3, Ev4, Esv4, Edv4,
 * Edsv4, Eav4, Easv4, G, Gs; Ls, Lsv2.
 *
 * Planned retirement dates: "Retired Azure VM size series", articles/virtual-machines/sizes/
 * retirement/retired-sizes-list.md @ 0bdc5d3 (D, Ds, Dv2, Dsv2, Ls: 05/01/28; Av2/Amv2, B (V1),
 * F, Fs, Fsv2, G, Gs, Lsv2: 11/15/28). The v3/v4 series have no published retirement ("This
 * restriction is about capacity growth, not retirement").
 */

export const PREVIOUS_GEN_SOURCE: Source = {
  title: "Previous-generation VM size series capacity growth restrictions (Microsoft Learn)",
  url: "https://learn.microsoft.com/azure/virtual-machines/migration/sizes/previous-gen-series-capacity-limitations",
  says: "From July 2026 new subscriptions can't deploy the affected series, and existing subscriptions get no additional quota for them (MicrosoftDocs/azure-compute-docs articles/virtual-machines/migration/sizes/previous-gen-series-capacity-limitations.md @ 3afc713, ms.date 08/18/2026)",
};
export const RETIREMENT_SOURCE: Source = {
  title: "Retired Azure VM size series (Microsoft Learn)",
  url: "https://learn.microsoft.com/azure/virtual-machines/sizes/retirement/retired-sizes-list",
  says: "Planned retirement dates per series (MicrosoftDocs/azure-compute-docs articles/virtual-machines/sizes/retirement/retired-sizes-list.md @ 0bdc5d3)",
};

/** When the restriction began, as the source states it (a month). */
export const RESTRICTED_SINCE = "2026-07";

export interface PreviousGeneration {
  /** The series as the source names it, e.g. "Dv2", "Dsv4", "B". */
  series: string;
  since: typeof RESTRICTED_SINCE;
  /** Planned retirement date (ISO), where one is published. */
  retires: string | null;
  /** The series Microsoft's migration guidance recommends, e.g. "Dsv5 or Dsv6". */
  migrateTo: string;
  /** A current size of the same vCPUs, where the vCPU count is known. */
  suggestion: string | null;
}

interface Rule {
  /** Family letter after DS→D, GS→G. */
  family: string;
  /** Series versions affected; 1 = no "_vN" suffix. */
  versions: number[];
  retires: Partial<Record<number, string>>;
  migrateTo: string;
}

// Migration targets as the source gives them: "Recommended migration targets generally include v5,
// v6, and v7 VM series"; for Dv3…Dasv4 "Dv5, Dv6, Dv7", for Ev3…Eav4 "Ev5, Esv6, Esv7"; "The
// recommended VM series for these VMs are D(d)sv5 or newer and E(d)s v5 and newer". The page names
// no series for the other families: they get its general sentence and the migration guide.
const GENERAL = "a v5, v6 or v7 series (Microsoft's VM migration guidance)";
const RULES: readonly Rule[] = [
  { family: "D", versions: [1, 2, 3, 4], retires: { 1: "2028-05-01", 2: "2028-05-01" }, migrateTo: "Dv5, Dv6 or Dv7 (D(d)sv5 or newer)" },
  { family: "E", versions: [3, 4], retires: {}, migrateTo: "Ev5, Esv6 or Esv7 (E(d)s v5 or newer)" },
  { family: "B", versions: [1], retires: { 1: "2028-11-15" }, migrateTo: GENERAL },
  { family: "A", versions: [2], retires: { 2: "2028-11-15" }, migrateTo: GENERAL },
  { family: "F", versions: [1, 2], retires: { 1: "2028-11-15", 2: "2028-11-15" }, migrateTo: GENERAL },
  { family: "G", versions: [1], retires: { 1: "2028-11-15" }, migrateTo: GENERAL },
  { family: "L", versions: [1, 2], retires: { 1: "2028-05-01", 2: "2028-11-15" }, migrateTo: GENERAL },
];

/** D11_v2…D15_v2 and DS11_v2…DS15_v2 are Dv2's memory-optimized sizes (Microsoft: "Memory optimized Dv2 and Dsv2-series"). */
const isMemoryDv2 = (family: string, number: number, version: number | null) => family === "D" && version === 2 && number >= 11 && number <= 15;

/**
 * The restriction a size falls under, or null for a current size. `size` is Azure's spelling
 * (sizeFacts passes the catalog's canonical name: Azure compares names without case, the naming
 * convention's letters do not). `vcpus` (when known) picks a suggested current size of the same
 * vCPU count: a general-purpose or memory-optimized Dsv5/Esv5 that the SKU snapshot lists (the
 * series the source recommends for D and E); none when no such size exists.
 */
export function previousGeneration(size: string, vcpus: number | null = null, known: (name: string) => boolean = (n) => snapshotName(n) !== undefined): PreviousGeneration | null {
  const n = parseSizeName(size);
  if (!n || n.accelerator !== null) return null;
  const family = /^(DS|GS)$/.test(n.family) ? n.family[0]! : n.family;
  const version = n.version ?? 1;
  const rule = RULES.find((r) => r.family === family && r.versions.includes(version));
  if (!rule) return null;
  const series = seriesOf(size)!.replace(/v1$/, "");
  const memory = isMemoryDv2(family, n.number, n.version) || family === "E" || family === "G";
  const candidate = vcpus !== null && vcpus >= 2 ? `Standard_${memory ? "E" : "D"}${vcpus}s_v5` : null;
  const suggestion = candidate && known(candidate) ? candidate : null;
  const migrateTo = memory && family === "D" ? "Ev5, Esv6 or Esv7 (E(d)s v5 or newer: these are Dv2's memory-optimized sizes)" : rule.migrateTo;
  return { series, since: RESTRICTED_SINCE, retires: rule.retires[version] ?? null, migrateTo, suggestion };
}

/** One sentence for plans, refusals and reports. */
export function describePreviousGeneration(size: string, pg: PreviousGeneration): string {
  return (
    `${size} is a previous-generation size (${pg.series} series): since ${pg.since} Azure does not let new subscriptions deploy it and approves no more quota for it` +
    `${pg.retires ? `; the series retires on ${pg.retires}` : ""}. Use ${pg.suggestion ?? "a current size"} (${pg.migrateTo}) instead (${PREVIOUS_GEN_SOURCE.url})`
  );
}
