import { seedSizeLines } from "./seedSizes.ts";
import type { Plan } from "../plan/types.ts";
import type { WavePlan } from "../plan/waves.ts";
import type { ModelledPair } from "../targets/local/model/regionLatencyPlan.ts";

const place = (h: Plan["variants"][number]["hosts"][number]) =>
  [h.region, h.vnet ? `vnet ${h.vnet}` : null, h.zone ? `zone ${h.zone}` : "no zone", h.ppg ? `ppg ${h.ppg}` : null, h.availabilitySet ? `avset ${h.availabilitySet}` : null, h.size, h.accelnet ? "accelnet" : "no accelnet"]
    .filter(Boolean)
    .join(", ");

/** A plan as a person reads it: variants with their hosts, then cells and the time they take. */
export function formatPlan(plan: Plan): string {
  const seeds = seedSizeLines(plan.experiment.seedSizes, plan.variants.flatMap((v) => v.hosts.map((h) => h.size)));
  const lines = [`${plan.experiment.name}: ${plan.experiment.description}`, ...seeds, ""];
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

const regionText = (r: WavePlan["waves"][number]["regions"][number]) =>
  `${r.region}: ${r.families.map((f) => `${f.family} ${f.vcpus}${f.unknownSizes.length ? ` + UNKNOWN (${f.unknownSizes.join(", ")})` : ""}`).join(", ")} vCPUs, total regional ${r.vcpus}, ${r.publicIps} public IP${r.publicIps === 1 ? "" : "s"}`;

/**
 * The waves a run goes in (plan/waves.ts), as `latlab plan` and `latlab run` show them: per wave
 * its deployments, variants and replicas, vCPUs per region and family, public IPs, and whatever
 * `more` adds (Azure: cost and wall time).
 */
export function formatWaves(waves: WavePlan, more: (wave: WavePlan["waves"][number]) => string[] = () => []): string {
  const n = waves.waves.length;
  const cap = waves.limits.maxVcpus !== undefined && !waves.limits.source.includes("--max-vcpus") ? ` and --max-vcpus ${waves.limits.maxVcpus}` : "";
  const lines = [
    n === 1
      ? `waves: 1 — every deployment at once fits ${waves.limits.source}${cap}`
      : `waves: ${n}, one after another (each brought up, measured and torn down before the next), sized against ${waves.limits.source}${cap}`,
  ];
  for (const r of waves.reasons) lines.push(`  why: ${r}`);
  for (const w of waves.waves) {
    if (n > 1) lines.push(`  wave ${w.index + 1} of ${n}: ${w.deployments.length} deployment${w.deployments.length === 1 ? "" : "s"} (${w.deployments.join(", ")}); variants ${w.variants.join(", ")}; replica${w.replicas.length === 1 ? "" : "s"} ${w.replicas.join(", ")}`);
    const indent = n > 1 ? "    " : "  ";
    for (const r of w.regions) lines.push(`${indent}${regionText(r)}`);
    for (const m of more(w)) lines.push(`${indent}${m}`);
  }
  for (const u of waves.unknown) lines.push(`  ${u}`);
  return lines.join("\n");
}

/** A cross-region pair as the local target would emulate it. */
export type ModelledPairLine = ModelledPair;

/**
 * The local target's modelled round trip for each cross-region pair of a plan, with its source
 * (Microsoft's table and its month, or the fallback rule), so a reader sees what a run would
 * emulate before it runs. No lines when the plan has no cross-region pair.
 */
export function formatModelledPairs(pairs: readonly ModelledPairLine[]): string[] {
  if (!pairs.length) return [];
  return [
    "modelled cross-region round trips (local target):",
    ...pairs.map(
      (p) => `  ${p.regionA} ↔ ${p.regionB}${p.accelnet ? " (Accelerated Networking)" : ""}: ${p.rttUs.toLocaleString("en-US")} µs${p.basis === "fallback" ? " (fallback)" : ""} — ${p.source}`,
    ),
  ];
}
