import { ExperimentDefinitionError, type DefinitionIssue } from "../../dsl/errors.ts";
import { closestName } from "../../dsl/suggest.ts";
import type { Plan } from "../../plan/types.ts";
import { REGIONS, regionCapability } from "../azure/catalog/capabilities.ts";
import { accelnetProblem, zoneProblem } from "../azure/catalog/hostRules.ts";
import { isKnownSize, knownSizeNames, sizeFacts } from "../azure/catalog/sizes/sizeFacts.ts";
import { didYouMeanSize, SKU_SNAPSHOT_PATH } from "../azure/catalog/sizes/unknownSize.ts";
import { bandwidthForSize } from "./model/latencyModel.ts";

/**
 * What the local target checks of a plan before anything is brought up. The local target
 * emulates Azure hosts by Azure's names: a size or region Azure's catalogue (capabilities.ts)
 * does not know would run as an uncapped host in an arbitrary place — a typo that still
 * "measures". The DSL stays free of the catalogue; the targets check it.
 */

const hostPath = (variant: string, role: string, field: string) => `variants[${JSON.stringify(variant)}].hosts.${role}.${field}`;

/** " — did you mean "x"?" when one name is close, else nothing (the catalogues are long). */
const suggestion = (input: string, known: readonly string[]) => {
  const match = closestName(input, known);
  return match ? ` — did you mean "${match}"?` : "";
};

/**
 * Unknown VM sizes and regions, and what Azure refuses of a host (a zone in a region without
 * zones, AccelNet on a size without it), naming the variant, host and field.
 */
export function validateLocalPlan(plan: Plan): DefinitionIssue[] {
  const issues: DefinitionIssue[] = [];
  const sizes = knownSizeNames();
  const regions = Object.keys(REGIONS);
  for (const v of plan.variants) {
    for (const h of v.hosts) {
      if (!regionCapability(h.region)) {
        issues.push({
          path: hostPath(v.id, h.role, "region"),
          message: `variant ${v.id}, host ${h.role}: unknown region "${h.region}"${suggestion(h.region, regions)} (the local target emulates the Azure regions latlab knows: see \`latlab plan --target azure\` or docs/dsl-reference.md)`,
        });
      }
      if (!isKnownSize(sizeFacts(h.size))) {
        issues.push({
          path: hostPath(v.id, h.role, "size"),
          message: `variant ${v.id}, host ${h.role}: unknown VM size "${h.size}"${didYouMeanSize(h.size)} (not among the ${sizes.length} sizes of latlab's Azure SKU snapshot, ${SKU_SNAPSHOT_PATH})`,
        });
      }
      // What Azure refuses of the host by the catalog's facts (hostRules.ts, the Azure target's
      // own rules): a local run of a plan Azure refuses would measure hosts that cannot exist.
      const zone = zoneProblem(h.region, h.zone);
      if (zone) issues.push({ path: hostPath(v.id, h.role, "zone"), message: `variant ${v.id}, host ${h.role}: ${zone} (the Azure target refuses it too)` });
      const accelnet = h.accelnet ? accelnetProblem(h.size, sizeFacts(h.size)) : undefined;
      if (accelnet) issues.push({ path: hostPath(v.id, h.role, "accelnet"), message: `variant ${v.id}, host ${h.role}: ${accelnet} (the Azure target refuses it too)` });
    }
  }
  return issues;
}

/** Throws an ExperimentDefinitionError listing every issue, or returns. */
export function assertLocalPlan(plan: Plan): void {
  const issues = validateLocalPlan(plan);
  if (issues.length) throw new ExperimentDefinitionError(issues, plan.experiment.name);
}

export interface UncappedSize {
  size: string;
  /** `variant/role` of every host of that size. */
  hosts: string[];
  /** Why there is no cap. */
  note: string;
}

/**
 * Sizes of the plan the local target runs without a bandwidth cap (no documented figure, as for
 * the B-series): such a host is not that size here, and a comparison of sizes means nothing.
 */
export function uncappedSizes(plan: Plan): UncappedSize[] {
  const bySize = new Map<string, UncappedSize>();
  for (const v of plan.variants) {
    for (const h of v.hosts) {
      const b = bandwidthForSize(h.size);
      if (b.mbit !== null) continue;
      const entry = bySize.get(h.size) ?? { size: h.size, hosts: [], note: b.note };
      entry.hosts.push(`${v.id}/${h.role}`);
      bySize.set(h.size, entry);
    }
  }
  return [...bySize.values()];
}

/** One line for the plan output and the results, or null when every size is capped. */
export function uncappedLine(plan: Plan): string | null {
  const list = uncappedSizes(plan);
  if (!list.length) return null;
  return `uncapped on the local target (no documented bandwidth figure, so no egress cap — these hosts are not their size here, and comparing sizes is meaningless): ${list
    .map((u) => `${u.size} (${u.hosts.join(", ")})`)
    .join("; ")}`;
}
