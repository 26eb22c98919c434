/**
 * The placement evidence of a run as a table every report shows (terminal, report.md,
 * report.html): per deployment and PPG, the PPG asked vs the colocation status ARM reported.
 */
import type { Results } from "../results/schema.ts";
import { comparisonCaveats } from "../results/comparisons.ts";
import { placementByDeployment, ppgDetail, vmDetail } from "../results/placement.ts";
import { modelledLabel } from "./wording.ts";

/** Per deployment and PPG: the PPG asked vs the colocation status got, and the VMs' instance views. */
export interface PlacementTable {
  title: string;
  head: string[];
  rows: string[][];
  /** Per row: whether its PPG is not Aligned (NotAligned or Unknown). */
  unaligned: boolean[];
  /** Lines under the table: what the statuses mean, and the comparisons that rest on one not Aligned. */
  notes: string[];
}

/**
 * The placement evidence of a run (hosts' `placement`, read from ARM after the deploy), one row
 * per deployment and PPG asked; undefined when no host has any (a local run, an older run).
 */
export function placementTable(results: Results): PlacementTable | undefined {
  const groups = placementByDeployment(results.variants);
  if (!groups.length) return undefined;
  const emulator = groups.some((g) => g.source === "emulator");
  const rows = groups.map((g) => [
    g.deployment,
    g.variants.join(", "),
    g.ppg === null ? "none" : `'${g.ppg}'`,
    g.ppg === null ? "—" : g.evidence ? ppgDetail(g.evidence) : "Unknown — not read",
    g.hosts.map((h) => `${h.role}: ${h.vm ? vmDetail(h.vm) : "not read"}`).join("; "),
  ]);
  const unaligned = groups.map((g) => g.ppg !== null && (g.evidence?.status ?? "Unknown") !== "Aligned");
  const relying = results.comparisons.filter((c) => comparisonCaveats(results, c).length).length;
  const notes = [
    ...(unaligned.some(Boolean)
      ? [
          `a PPG not Aligned: NotAligned — at least one VM is not where the PPG is (Azure moved it or placed it elsewhere); Unknown — a member VM is deallocated, or latlab could not read the status. Its hosts are not the colocated hosts the experiment asked for${relying ? `: ${relying} comparison(s) rest on one, and their rows and verdicts say so` : ""}`,
        ]
      : []),
    ...(emulator ? ["rehearsal: the colocation status is the emulator's (Aligned unless a ppg-not-aligned fault is injected), not Azure's"] : []),
    // The latency between these VMs followed this placement: the model's, by the rows above.
    ...(emulator && modelledLabel(results) ? [`latency by this placement — ${modelledLabel(results)}`] : []),
  ];
  return { title: "placement (read from ARM after the deploy): PPG asked vs colocation status got", head: ["deployment", "variants", "PPG asked", "colocation got", "VMs (fault / update domain, power state)"], rows, unaligned, notes };
}
