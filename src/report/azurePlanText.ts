import type { AzurePlanReport } from "../targets/azure/listing.ts";

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
    `cost: $${c.hourlyUsd.toFixed(3)}/h; at most $${c.totalUsd.toFixed(2)} for the worst case of ${hours.toFixed(1)} h (prices: ${c.prices.source}, ${c.prices.fetchedAt}${report.livePrices.used ? ", refreshed live" : ""})`,
  );
  if (c.missing.length) lines.push(`  no price for: ${[...new Set(c.missing.map((m) => `${m.sku} in ${m.region}`))].join(", ")} (left out of the total; try --live-prices)`);
  if (c.excluded.length) lines.push(`  not in the estimate: ${c.excluded.join("; ")}`);
  lines.push(`tags on every resource: owner=latlab, runId, experiment, createdAt ${report.tags.createdAt}, expiresAt ${report.tags.expiresAt} (the sweeper deletes after it)`);
  if (report.placeholders.length) lines.push(`placeholders in this listing (set at deploy time): ${report.placeholders.join(", ")}`);
  for (const w of report.warnings) lines.push(`warning: ${w}`);
  return lines.join("\n");
}
