import type { Plan } from "../plan/types.ts";

const place = (h: Plan["variants"][number]["hosts"][number]) =>
  [h.region, h.vnet ? `vnet ${h.vnet}` : null, h.zone ? `zone ${h.zone}` : "no zone", h.ppg ? `ppg ${h.ppg}` : null, h.availabilitySet ? `avset ${h.availabilitySet}` : null, h.size, h.accelnet ? "accelnet" : "no accelnet"]
    .filter(Boolean)
    .join(", ");

/** A plan as a person reads it: variants with their hosts, then cells and the time they take. */
export function formatPlan(plan: Plan): string {
  const lines = [`${plan.experiment.name}: ${plan.experiment.description}`, ""];
  for (const v of plan.variants) {
    // Group baselines: every variant that is its own baseline is one, not only the first.
    // Variants that differ only in what is measured (the path) are measured on the same hosts.
    const shared = plan.deployments.filter((d) => d.variants.includes(v.id) && d.variants.length > 1).flatMap((d) => d.variants.filter((o) => o !== v.id));
    lines.push(`variant ${v.id}${plan.baselineOf[v.id] === v.id ? " (baseline)" : ""}`);
    for (const h of v.hosts) lines.push(`  ${h.role.padEnd(10)} ${place(h)}`);
    if (shared.length) lines.push(`  (the same hosts as ${[...new Set(shared)].join(", ")})`);
  }
  lines.push("", `cells (${plan.cells.length}):`);
  for (const c of plan.cells) lines.push(`  ${c.id}  [${c.pathKind}, ${c.path}${c.crossesPeering ? ", across a VNet peering" : ""}]  ~${c.estimatedSeconds.toFixed(1)} s`);
  const minutes = plan.estimate.measurementSeconds / 60;
  lines.push(
    "",
    `${plan.deployments.length} deployments, ${plan.estimate.hosts} hosts, ${plan.estimate.cells} cells, estimated measurement time ${
      minutes >= 1 ? `${minutes.toFixed(1)} min` : `${Math.ceil(plan.estimate.measurementSeconds)} s`
    } (plus bring-up and teardown)`,
  );
  return lines.join("\n");
}
