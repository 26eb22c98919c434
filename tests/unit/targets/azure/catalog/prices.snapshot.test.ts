import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseArgs, run } from "../../../../../scripts/updatePriceSnapshot.ts";
import { REGIONS, VM_SIZES } from "../../../../../src/targets/azure/catalog/capabilities.ts";
import {
  PUBLIC_IP_METER,
  RETAIL_PRICES_URL,
  estimateCost,
  generatePriceSnapshot,
  loadPriceSnapshot,
  parseEqFilter,
  publicIpRegionFilter,
  recordedRetailApi,
  retailPricesUrl,
  vmRegionFilter,
  type FetchLike,
} from "../../../../../src/targets/azure/catalog/prices.ts";
import { tempDirs } from "../../../../tempDirs.ts";
import { planOf } from "../helpers.ts";

const tempDir = tempDirs();

/** A Retail Prices API row as the API returns it (2023-01-01-preview), Linux pay-as-you-go by default. */
const row = (o: Record<string, unknown>) => ({
  currencyCode: "USD",
  tierMinimumUnits: 0,
  armRegionName: "uksouth",
  location: "UK South",
  effectiveStartDate: "2025-05-01T00:00:00Z",
  meterId: "00000000-0000-0000-0000-000000000000",
  serviceName: "Virtual Machines",
  serviceFamily: "Compute",
  unitOfMeasure: "1 Hour",
  type: "Consumption",
  isPrimaryMeterRegion: true,
  ...o,
});
const d3 = (o: Record<string, unknown>) => row({ armSkuName: "Standard_D3_v2", productName: "Virtual Machines Dv2 Series", meterName: "D3 v2/DS3 v2", skuName: "D3 v2", ...o });
const ip = (o: Record<string, unknown>) =>
  row({ serviceName: "Virtual Network", serviceFamily: "Networking", productName: "IP Addresses", armSkuName: "", skuName: "Standard", meterName: PUBLIC_IP_METER, retailPrice: 0.005, ...o });
const page = (items: unknown[], next: string | null = null) => ({ BillingCurrency: "USD", CustomerEntityId: "Default", CustomerEntityType: "Retail", Items: items, NextPageLink: next, Count: items.length });

/** Rows that must never be taken for a Linux pay-as-you-go D3_v2 in uksouth. */
const decoys = [
  d3({ productName: "Virtual Machines Dv2 Series Windows", retailPrice: 0.46 }),
  d3({ meterName: "D3 v2/DS3 v2 Spot", skuName: "D3 v2 Spot", retailPrice: 0.05 }),
  d3({ meterName: "D3 v2/DS3 v2 Low Priority", skuName: "D3 v2 Low Priority", retailPrice: 0.06 }),
  d3({ type: "DevTestConsumption", retailPrice: 0.2 }),
  d3({ serviceName: "Cloud Services", productName: "Cloud Services Dv2 Series", retailPrice: 0.35 }),
  d3({ armRegionName: "ukwest", location: "UK West", retailPrice: 0.31 }),
  ip({ meterName: "Basic IPv4 Static Public IP", retailPrice: 0.0036 }),
];

describe("recordedRetailApi: recorded pages answer like the API", () => {
  it("matches the filter's eq clauses case-sensitively and pages the answer through NextPageLink", async () => {
    const api = recordedRetailApi([page([d3({ retailPrice: 1 }), d3({ retailPrice: 2 }), d3({ retailPrice: 3 }), d3({ armRegionName: "ukwest", retailPrice: 4 })])], 2);
    const first = await (await api(retailPricesUrl(vmRegionFilter("uksouth")))).json();
    expect(first).toMatchObject({ Items: [{ retailPrice: 1 }, { retailPrice: 2 }], Count: 2 });
    const next = (first as { NextPageLink: string }).NextPageLink;
    expect(next).toContain("%24skip=2");
    expect(await (await api(next)).json()).toMatchObject({ Items: [{ retailPrice: 3 }], NextPageLink: null });
    const lower = await (await api(retailPricesUrl("serviceName eq 'virtual machines'"))).json();
    expect((lower as { Items: unknown[] }).Items).toEqual([]);
  });

  it("refuses what it cannot answer rather than answering wrongly", async () => {
    expect(parseEqFilter("a eq 'x' and b eq 'it''s'")).toEqual({ a: "x", b: "it's" });
    expect(() => parseEqFilter("contains(meterName, 'Spot')")).toThrow(/only 'field eq value'/);
    expect(() => recordedRetailApi([{ Items: "no" }])).toThrow(/page 0 is not a Retail Prices API page/);
    expect((await recordedRetailApi([page([])])("https://example.org/?$filter=a eq 'b'")).ok).toBe(false);
  });
});

describe("generatePriceSnapshot", () => {
  const common = { command: "npm run prices:snapshot", fetchedAt: "2026-11-21T12:00:00.000Z", generatedAt: "2026-11-21T12:00:00.000Z" };

  it("asks one VM query and one public IP query per region and follows NextPageLink to the end", async () => {
    const urls: string[] = [];
    const vmFirst = retailPricesUrl(vmRegionFilter("uksouth"));
    const vmNext = `${RETAIL_PRICES_URL}?api-version=2023-01-01-preview&$filter=x&$skip=1000`;
    const pages: Record<string, unknown> = {
      [vmFirst]: page(decoys.slice(0, 3), vmNext),
      // The Linux row is on the second page only.
      [vmNext]: page([...decoys.slice(3), d3({ retailPrice: 0.293 })]),
      [retailPricesUrl(publicIpRegionFilter("uksouth"))]: page([ip({})]),
    };
    const fetchFn: FetchLike = async (url) => {
      urls.push(url);
      return Object.hasOwn(pages, url) ? { ok: true, status: 200, json: async () => pages[url] } : { ok: false, status: 404, json: async () => ({}) };
    };
    const s = await generatePriceSnapshot({ ...common, regions: ["uksouth"], sizes: ["Standard_D3_v2", "Standard_Z9"], fetchFn });
    expect(urls).toEqual([vmFirst, vmNext, retailPricesUrl(publicIpRegionFilter("uksouth"))]);
    expect(s.vm.uksouth?.Standard_D3_v2).toMatchObject({ usdPerHour: 0.293, basis: "api" });
    expect(s.vm.uksouth?.Standard_D3_v2?.source).toMatch(/Virtual Machines Dv2 Series \/ D3 v2\/DS3 v2 \(uksouth, meterId .*, effective 2025-05-01/);
    expect(s.publicIpStandardStatic).toEqual({ byRegion: { uksouth: expect.objectContaining({ usdPerHour: 0.005, basis: "api" }) } });
    expect(s.notFound).toEqual(["Standard_Z9 in uksouth"]);
    expect(s.generatedBy).toMatchObject({ mode: "live", apiUrl: RETAIL_PRICES_URL, apiVersion: "2023-01-01-preview", command: "npm run prices:snapshot" });
    expect(s.generatedBy?.filters).toEqual([vmRegionFilter("uksouth"), publicIpRegionFilter("uksouth")]);
    expect(s.source).toMatch(/^Snapshot fetched from https:\/\/prices\.azure\.com/);
  });

  it("from recorded pages: ignores Windows, Spot, Low Priority, DevTest and other services' rows, and lists what has no price", async () => {
    const fetchFn = recordedRetailApi([page(decoys), page([d3({ retailPrice: 0.293 }), ip({}), ip({ armRegionName: "ukwest", location: "UK West", retailPrice: 0.0051 })])], 2);
    const s = await generatePriceSnapshot({
      ...common,
      regions: ["uksouth", "ukwest", "eastus"],
      sizes: ["Standard_D3_v2", "Standard_B1s"],
      fetchFn,
      recorded: { dir: "recorded", pages: 2, origin: "test rows" },
    });
    expect(s.vm).toEqual({
      uksouth: { Standard_D3_v2: expect.objectContaining({ usdPerHour: 0.293 }) },
      ukwest: { Standard_D3_v2: expect.objectContaining({ usdPerHour: 0.31 }) },
    });
    expect(s.publicIpStandardStatic.byRegion).toEqual({ uksouth: expect.objectContaining({ usdPerHour: 0.005 }), ukwest: expect.objectContaining({ usdPerHour: 0.0051 }) });
    expect(s.notFound).toEqual(["Standard_B1s in uksouth", "Standard_B1s in ukwest", "Standard_D3_v2 in eastus", "Standard_B1s in eastus", "public IP in eastus"]);
    expect(s.source).toMatch(/from RECORDED Azure Retail Prices API responses \(2 pages in recorded\), not fetched live/);
    // What has no price stays unpriced: the estimate is UNKNOWN, not smaller.
    const e = estimateCost(planOf({ name: "b1", defaults: { region: "uksouth", size: "Standard_B1s", accelnet: false } }), s, 1);
    expect(e).toMatchObject({ known: false, hourlyUsd: null });
  });
});

describe("scripts/updatePriceSnapshot.ts (npm run prices:snapshot)", () => {
  function recordedDir(): string {
    const dir = join(tempDir("latlab-prices-"), "pages");
    mkdirSync(dir);
    // Pages as the API returned them, linked by NextPageLink (the recorded API answers from their union).
    writeFileSync(join(dir, "page0.json"), JSON.stringify(page(decoys, `${RETAIL_PRICES_URL}?$skip=1000`)));
    writeFileSync(join(dir, "page1.json"), JSON.stringify(page([d3({ retailPrice: 0.293 }), ip({})])));
    writeFileSync(join(dir, "README.md"), "# Test pages\n\nHand-written rows shaped like the API's, for tests only.\n");
    return dir;
  }

  it("writes a valid snapshot for every size and region of capabilities.ts from recorded pages, saying so", async () => {
    const dir = recordedDir();
    const out = join(dir, "..", "snapshot.json");
    const lines: string[] = [];
    const argv = ["--from-recorded", dir, "--recorded-at", "2026-11-20", "--out", out];
    const result = await run(argv, { invokedAs: "npm run prices:snapshot", now: new Date("2026-11-21T12:00:00Z"), log: (l) => lines.push(l) });
    const s = loadPriceSnapshot(out);
    expect(result?.snapshot).toEqual(JSON.parse(readFileSync(out, "utf8")));
    expect(s.fetchedAt).toBe("2026-11-20");
    expect(s.generatedBy).toMatchObject({
      mode: "recorded",
      command: `npm run prices:snapshot -- ${argv.join(" ")}`,
      generatedAt: "2026-11-21T12:00:00.000Z",
      recorded: { dir, pages: 2, origin: "Hand-written rows shaped like the API's, for tests only." },
    });
    expect(s.generatedBy?.filters).toHaveLength(2 * Object.keys(REGIONS).length);
    expect(s.vm).toEqual({ uksouth: { Standard_D3_v2: expect.objectContaining({ usdPerHour: 0.293, basis: "api" }) }, ukwest: { Standard_D3_v2: expect.objectContaining({ usdPerHour: 0.31 }) } });
    expect(s.notFound).toHaveLength(Object.keys(REGIONS).length * (Object.keys(VM_SIZES).length + 1) - 3);
    expect(s.notFound).toContain("Standard_D2s_v5 in eastus");
    expect(lines[0]).toMatch(/: 2 VM prices, 1 public IP prices by region from 2 recorded pages$/);
    expect(lines[1]).toMatch(/^no price \(estimates needing them say UNKNOWN\)/);
  });

  it("needs the recording's date with recorded pages, and refuses unknown arguments", () => {
    expect(() => parseArgs(["--from-recorded", "x"])).toThrow(/needs --recorded-at/);
    expect(() => parseArgs(["--recorded-at", "2026-01-01"])).toThrow(/goes with --from-recorded/);
    expect(() => parseArgs(["--from-recorded", "x", "--recorded-at", "yesterday"])).toThrow(/takes a date/);
    expect(() => parseArgs(["--live"])).toThrow(/Unknown option '--live'/);
    expect(() => parseArgs(["--out"])).toThrow(/argument missing/);
    // The file estimates read (it moved once, and the default did not follow).
    expect(parseArgs([]).out).toMatch(/src\/targets\/azure\/catalog\/prices\.snapshot\.json$/);
    expect(existsSync(parseArgs([]).out)).toBe(true);
  });
});
