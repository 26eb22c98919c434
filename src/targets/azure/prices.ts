import { readFileSync } from "node:fs";
import { z } from "zod";
import type { DefinitionIssue } from "../../dsl/errors.ts";
import type { Plan } from "../../plan/types.ts";
import { hostName } from "./types.ts";

/**
 * Cost of a run: VM and public IP hours from a price snapshot kept as data
 * (prices.snapshot.json, with its date and the source of every figure), or from the anonymous
 * Azure Retail Prices API when asked (--live-prices). Nothing is guessed: a size or region
 * without a price is listed as missing, and --max-cost refuses while anything is missing.
 */

export const RETAIL_PRICES_URL = "https://prices.azure.com/api/retail/prices";
export const RETAIL_PRICES_API_VERSION = "2023-01-01-preview";

export const PriceEntrySchema = z.object({
  usdPerHour: z.number().nonnegative(),
  basis: z.enum(["documented", "derived", "assumed", "live"]),
  source: z.string().min(1),
});
export type PriceEntry = z.infer<typeof PriceEntrySchema>;

export const PriceSnapshotSchema = z.object({
  /** When the figures were collected (ISO date or date-time). */
  fetchedAt: z.string().min(1),
  source: z.string().min(1),
  currency: z.literal("USD"),
  note: z.string().default(""),
  /** region → ARM size → Linux pay-as-you-go hourly price. */
  vm: z.record(z.string(), z.record(z.string(), PriceEntrySchema)),
  /** Standard SKU, static, IPv4 public IP, per hour. */
  publicIpStandardStatic: z.object({
    default: PriceEntrySchema.optional(),
    byRegion: z.record(z.string(), PriceEntrySchema).default({}),
  }),
});
export type PriceSnapshot = z.infer<typeof PriceSnapshotSchema>;

const SNAPSHOT_FILE = new URL("./prices.snapshot.json", import.meta.url);

/** The bundled snapshot (src/targets/azure/prices.snapshot.json), validated. */
export function loadPriceSnapshot(file: URL | string = SNAPSHOT_FILE): PriceSnapshot {
  return PriceSnapshotSchema.parse(JSON.parse(readFileSync(file, "utf8")));
}

/** Something billed by the hour. */
export interface BillableItem {
  kind: "vm" | "publicIp";
  /** The Azure resource (or, from a plan, the host) it belongs to. */
  resource: string;
  region: string;
  /** VM size, or "Standard" for a public IP. */
  sku: string;
}

export interface CostLine extends BillableItem {
  usdPerHour: number;
  basis: PriceEntry["basis"];
  source: string;
}

export interface CostEstimate {
  hours: number;
  hourlyUsd: number;
  totalUsd: number;
  lines: CostLine[];
  /** Items without a price in the snapshot: the totals leave them out. */
  missing: (BillableItem & { reason: string })[];
  /** What the estimate never covers. */
  excluded: string[];
  prices: { fetchedAt: string; source: string };
}

export const EXCLUDED_FROM_ESTIMATE = [
  "OS disks (StandardSSD_LRS, ~30 GiB per VM, billed monthly, a few cents per run)",
  "traffic: VNet peering (per GB, both directions), internet egress, inter-region transfer",
  "taxes, discounts and any commitment (reservations, savings plans)",
];

/** A listed resource, as listAzureResources returns it (only what billing needs). */
export interface PricedResourceLike {
  type: string;
  name: string;
  location?: string;
  size?: string;
}

/** Billable items of a resource listing, or of a plan (one VM and one public IP per host). */
export function billableItems(input: readonly PricedResourceLike[] | Plan): BillableItem[] {
  if (!Array.isArray(input)) {
    const plan = input as Plan;
    return plan.deployments.flatMap((d) =>
      d.hosts.flatMap((h): BillableItem[] => [
        { kind: "vm", resource: hostName(d.index, h.role), region: h.region, sku: h.size },
        { kind: "publicIp", resource: `${hostName(d.index, h.role)}-pip`, region: h.region, sku: "Standard" },
      ]),
    );
  }
  const out: BillableItem[] = [];
  for (const r of input as readonly PricedResourceLike[]) {
    if (r.type === "azure-native:compute:VirtualMachine") out.push({ kind: "vm", resource: r.name, region: r.location ?? "?", sku: r.size ?? "?" });
    if (r.type === "azure-native:network:PublicIPAddress") out.push({ kind: "publicIp", resource: r.name, region: r.location ?? "?", sku: "Standard" });
  }
  return out;
}

function priceOf(item: BillableItem, snapshot: PriceSnapshot): PriceEntry | undefined {
  if (item.kind === "vm") {
    const region = Object.hasOwn(snapshot.vm, item.region) ? snapshot.vm[item.region] : undefined;
    return region && Object.hasOwn(region, item.sku) ? region[item.sku] : undefined;
  }
  const ip = snapshot.publicIpStandardStatic;
  return (Object.hasOwn(ip.byRegion, item.region) ? ip.byRegion[item.region] : undefined) ?? ip.default;
}

/** Hourly cost and the total for `hours`, line by line, with what has no price. */
export function estimateCost(input: readonly PricedResourceLike[] | Plan, snapshot: PriceSnapshot, hours: number): CostEstimate {
  if (!Number.isFinite(hours) || hours < 0) throw new RangeError(`hours must be a non-negative number, got ${hours}`);
  const lines: CostLine[] = [];
  const missing: CostEstimate["missing"] = [];
  for (const item of billableItems(input)) {
    const price = priceOf(item, snapshot);
    if (price) lines.push({ ...item, usdPerHour: price.usdPerHour, basis: price.basis, source: price.source });
    else missing.push({ ...item, reason: item.kind === "vm" ? `no price for ${item.sku} in ${item.region} in the snapshot of ${snapshot.fetchedAt}; use --live-prices` : `no public IP price for ${item.region}` });
  }
  // Sum in integer micro-dollars so that the total is exact to the displayed precision.
  const micro = lines.reduce((sum, l) => sum + Math.round(l.usdPerHour * 1e6), 0);
  const hourlyUsd = micro / 1e6;
  return {
    hours,
    hourlyUsd,
    totalUsd: Math.round(micro * hours) / 1e6,
    lines,
    missing,
    excluded: EXCLUDED_FROM_ESTIMATE,
    prices: { fetchedAt: snapshot.fetchedAt, source: snapshot.source },
  };
}

/** `--max-cost USD`: refuses a run estimated above it, or one with unpriced VMs or IPs. */
export function checkMaxCost(estimate: CostEstimate, maxUsd: number): DefinitionIssue[] {
  const issues: DefinitionIssue[] = [];
  if (estimate.missing.length) {
    issues.push({
      path: "--max-cost",
      message: `cannot promise at most $${maxUsd}: no price for ${estimate.missing.map((m) => `${m.sku} in ${m.region}`).filter((v, i, a) => a.indexOf(v) === i).join(", ")} (use --live-prices)`,
    });
  }
  if (estimate.totalUsd > maxUsd) {
    issues.push({
      path: "--max-cost",
      message: `estimated $${estimate.totalUsd.toFixed(2)} ($${estimate.hourlyUsd.toFixed(4)}/h for ${estimate.hours.toFixed(2)} h, worst case) is above the limit $${maxUsd}`,
    });
  }
  return issues;
}

// ---------------------------------------------------------------------------------------------
// Live prices

export type FetchLike = (url: string) => Promise<{ ok: boolean; status: number; json(): Promise<unknown> }>;

const RetailItemSchema = z
  .object({
    currencyCode: z.string().optional(),
    retailPrice: z.coerce.number(),
    armRegionName: z.string().optional(),
    armSkuName: z.string().optional(),
    productName: z.string().optional(),
    skuName: z.string().optional(),
    meterName: z.string().optional(),
    serviceName: z.string().optional(),
    unitOfMeasure: z.string().optional(),
    type: z.string().optional(),
    isPrimaryMeterRegion: z.boolean().optional(),
    effectiveStartDate: z.string().optional(),
  })
  .passthrough();
type RetailItem = z.infer<typeof RetailItemSchema>;

const RetailPageSchema = z.object({
  Items: z.array(z.unknown()).default([]),
  NextPageLink: z.string().nullable().optional(),
});

export const MAX_PAGES = 50;

/** The first page's URL for an OData filter (values are case-sensitive). */
export function retailPricesUrl(filter: string): string {
  return `${RETAIL_PRICES_URL}?api-version=${RETAIL_PRICES_API_VERSION}&$filter=${encodeURIComponent(filter)}`;
}

/** Every item of a query, following NextPageLink. */
export async function fetchAllPages(filter: string, fetchFn: FetchLike, maxPages = MAX_PAGES): Promise<RetailItem[]> {
  const items: RetailItem[] = [];
  let url: string | null | undefined = retailPricesUrl(filter);
  for (let page = 0; url; page++) {
    if (page >= maxPages) throw new Error(`Retail Prices API: more than ${maxPages} pages for ${filter}`);
    const response = await fetchFn(url);
    if (!response.ok) throw new Error(`Retail Prices API: HTTP ${response.status} for ${url}`);
    const body = RetailPageSchema.parse(await response.json());
    for (const raw of body.Items) {
      const item = RetailItemSchema.safeParse(raw);
      if (item.success) items.push(item.data);
    }
    url = body.NextPageLink || null;
  }
  return items;
}

const NOT_LINUX_PAYG = /Windows|Spot|Low Priority/i;

function newest(items: RetailItem[]): RetailItem | undefined {
  return [...items].sort((a, b) => {
    const primary = Number(b.isPrimaryMeterRegion ?? false) - Number(a.isPrimaryMeterRegion ?? false);
    return primary || (b.effectiveStartDate ?? "").localeCompare(a.effectiveStartDate ?? "");
  })[0];
}

/** The Linux pay-as-you-go hourly row of a size, among the rows the API returned. */
export function pickVmPrice(items: RetailItem[], size: string): RetailItem | undefined {
  return newest(
    items.filter(
      (i) =>
        i.armSkuName === size &&
        (i.type ?? "Consumption") === "Consumption" &&
        (i.unitOfMeasure ?? "1 Hour") === "1 Hour" &&
        (i.currencyCode ?? "USD") === "USD" &&
        i.retailPrice > 0 &&
        !NOT_LINUX_PAYG.test(`${i.productName ?? ""} ${i.meterName ?? ""} ${i.skuName ?? ""}`),
    ),
  );
}

export const PUBLIC_IP_METER = "Standard IPv4 Static Public IP";

export function pickPublicIpPrice(items: RetailItem[]): RetailItem | undefined {
  return newest(items.filter((i) => i.meterName === PUBLIC_IP_METER && (i.type ?? "Consumption") === "Consumption" && (i.currencyCode ?? "USD") === "USD"));
}

/**
 * Current prices for these regions and sizes from the anonymous Retail Prices API (one
 * filtered query per region+size and one per region for public IPs, each followed through
 * NextPageLink). Returns a snapshot of what was found and what was not.
 */
export async function fetchLivePrices(
  regions: readonly string[],
  sizes: readonly string[],
  fetchFn: FetchLike = (url) => fetch(url),
  now: Date = new Date(),
): Promise<{ snapshot: PriceSnapshot; notFound: string[] }> {
  const snapshot: PriceSnapshot = {
    fetchedAt: now.toISOString(),
    source: `${RETAIL_PRICES_URL} (api-version ${RETAIL_PRICES_API_VERSION}), fetched ${now.toISOString()}`,
    currency: "USD",
    note: "live",
    vm: {},
    publicIpStandardStatic: { byRegion: {} },
  };
  const notFound: string[] = [];
  for (const region of regions) {
    for (const size of sizes) {
      const filter = `serviceName eq 'Virtual Machines' and armRegionName eq '${region}' and armSkuName eq '${size}' and priceType eq 'Consumption'`;
      const row = pickVmPrice(await fetchAllPages(filter, fetchFn), size);
      if (!row) {
        notFound.push(`${size} in ${region}`);
        continue;
      }
      (snapshot.vm[region] ??= {})[size] = { usdPerHour: row.retailPrice, basis: "live", source: `${row.productName ?? "?"} / ${row.meterName ?? "?"}, ${now.toISOString()}` };
    }
    const ipFilter = `serviceName eq 'Virtual Network' and productName eq 'IP Addresses' and armRegionName eq '${region}'`;
    const ip = pickPublicIpPrice(await fetchAllPages(ipFilter, fetchFn));
    if (ip) snapshot.publicIpStandardStatic.byRegion[region] = { usdPerHour: ip.retailPrice, basis: "live", source: `${PUBLIC_IP_METER}, ${now.toISOString()}` };
    else notFound.push(`public IP in ${region}`);
  }
  return { snapshot, notFound };
}

/** `over` wins where it has a figure; the rest stays from `base`. */
export function mergeSnapshots(base: PriceSnapshot, over: PriceSnapshot): PriceSnapshot {
  const vm: PriceSnapshot["vm"] = {};
  for (const region of new Set([...Object.keys(base.vm), ...Object.keys(over.vm)])) vm[region] = { ...base.vm[region], ...over.vm[region] };
  return {
    fetchedAt: over.fetchedAt,
    source: `${over.source}; where it had no figure: ${base.source}`,
    currency: "USD",
    note: over.note,
    vm,
    publicIpStandardStatic: {
      ...(over.publicIpStandardStatic.default ?? base.publicIpStandardStatic.default ? { default: over.publicIpStandardStatic.default ?? base.publicIpStandardStatic.default } : {}),
      byRegion: { ...base.publicIpStandardStatic.byRegion, ...over.publicIpStandardStatic.byRegion },
    },
  };
}
