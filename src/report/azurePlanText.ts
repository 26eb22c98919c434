import type { AzurePlanReport, AzureWaveCost, AzureWavesReport } from "../targets/azure/program/listing.ts";
import { costSummary } from "../targets/azure/catalog/prices.ts";
import { formatVcpuNeeds } from "../targets/azure/catalog/quota.ts";
import { describeProfile } from "../targets/azure/catalog/subscriptionProfile.ts";
import { formatWaves } from "./planText.ts";

const duration = (seconds: number) => (seconds >= 3600 ? `${(seconds / 3600).toFixed(1)} h` : `${Math.ceil(seconds / 60)} min`);

/** A wave's cost and wall time, as `latlab plan` and `latlab run` show them under the wave. */
export function waveCostLines(c: AzureWaveCost, livePrices = false): string[] {
  return [`cost: ${costSummary(c.cost, { expectedHours: c.expectedSeconds / 3600, worstCaseHours: c.worstCaseSeconds / 3600, livePrices })}`, `wall time: about ${duration(c.expectedSeconds)} (worst case ${duration(c.worstCaseSeconds)}), bring-up and teardown included`];
}

/** The waves under the default subscription profile: each with its cost and wall time, then the total. */
export function formatAzureWaves(w: AzureWavesReport, livePrices = false): string {
  const lines: string[] = [];
  if (!w.plan) {
    lines.push(`waves: none fit on a ${w.profile.name}: a deploy there would be refused — ${w.refusal}`);
    lines.push("  a subscription with higher quotas runs it: a real run sizes its waves against the subscription's own free quota, read before deploying");
  } else {
    const costs = new Map(w.costs.map((c) => [c.wave, c]));
    lines.push(
      formatWaves(w.plan, (wave) => {
        const c = costs.get(wave.index + 1);
        return c ? waveCostLines(c, livePrices) : [];
      }),
    );
    if (w.plan.waves.length > 1) {
      const usd = w.total.expectedUsd === null ? "cost UNKNOWN" : `about $${w.total.expectedUsd.toFixed(2)} (at most $${(w.total.worstCaseUsd ?? 0).toFixed(2)})`;
      lines.push(`  all ${w.plan.waves.length} waves: ${usd}, wall time about ${duration(w.total.expectedSeconds)} (worst case ${duration(w.total.worstCaseSeconds)})`);
    }
  }
  lines.push(`  quotas assumed: ${describeProfile(w.profile)}; a real run reads the subscription's own (Compute and Network usages)`);
  return lines.join("\n");
}

const typeName = (type: string) => type.split(":").pop() ?? type;

/** The offline Azure listing as a person reads it: resources with what matters, then the cost. */
export function formatAzureReport(report: AzurePlanReport): string {
  const lines = [`Azure resources (offline, under Pulumi mocks; nothing is created): ${report.resources.length}`];
  for (const r of report.resources) {
    const inputs = Object.entries(r.inputs)
      // Tags are the same on every resource but for deployment/role: shown once below.
      .filter(([k, v]) => k !== "tags" && v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0))
      .map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : String(v)}`)
      .join(" ");
    lines.push(`  ${typeName(r.type).padEnd(24)} ${r.name}${r.location ? ` (${r.location})` : ""}${inputs ? `  ${inputs}` : ""}`);
  }
  const c = report.cost;
  const hours = report.worstCase.seconds / 3600;
  lines.push(
    "",
    `cost: ${costSummary(c, { expectedHours: report.expected.seconds / 3600, worstCaseHours: hours, livePrices: report.livePrices.used })}`,
    `  prices: ${c.prices.source} (${c.prices.fetchedAt}${report.livePrices.used ? ", refreshed live" : ""})`,
  );
  for (const n of report.costNotes) lines.push(`  note: ${n}`);
  for (const r of report.refusals) lines.push(`  a deploy would be refused: ${r.message}`);
  if (c.excluded.length) lines.push(`  not in the estimate: ${c.excluded.join("; ")}`);
  lines.push(formatVcpuNeeds(report.vcpus));
  lines.push(formatAzureWaves(report.waves, report.livePrices.used));
  lines.push(`tags on every resource: owner=latlab, runId, experiment, createdAt ${report.tags.createdAt}, expiresAt ${report.tags.expiresAt} (the sweeper deletes after it)`);
  if (report.placeholders.length) lines.push(`placeholders in this listing (set at deploy time): ${report.placeholders.join(", ")}`);
  for (const w of report.warnings) lines.push(`warning: ${w}`);
  return lines.join("\n");
}
