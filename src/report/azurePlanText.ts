import type { AzurePlanReport } from "../targets/azure/program/listing.ts";
import { costSummary } from "../targets/azure/catalog/prices.ts";
import { formatVcpuNeeds } from "../targets/azure/catalog/quota.ts";

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
  lines.push(`tags on every resource: owner=latlab, runId, experiment, createdAt ${report.tags.createdAt}, expiresAt ${report.tags.expiresAt} (the sweeper deletes after it)`);
  if (report.placeholders.length) lines.push(`placeholders in this listing (set at deploy time): ${report.placeholders.join(", ")}`);
  for (const w of report.warnings) lines.push(`warning: ${w}`);
  return lines.join("\n");
}
