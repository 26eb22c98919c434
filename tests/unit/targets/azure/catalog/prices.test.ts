import { describe, expect, it } from "vitest";
import accelnetOnOff from "../../../../../experiments/accelnet-on-off.ts";
import { buildPlan } from "../../../../../src/plan/buildPlan.ts";
import { azurePlanOptions } from "../../../../../src/targets/azure/program/entryConfig.ts";
import { worstCaseRun } from "../../../../../src/targets/azure/catalog/validateAzure.ts";
import {
  PUBLIC_IP_METER,
  RETAIL_PRICES_URL,
  billableItems,
  checkMaxCost,
  costSummary,
  deployCostGate,
  estimateCost,
  fetchAllPages,
  fetchLivePrices,
  loadPriceSnapshot,
  mergeSnapshots,
  pickVmPrice,
  type FetchLike,
  type PriceSnapshot,
} from "../../../../../src/targets/azure/catalog/prices.ts";
import { planOf } from "../helpers.ts";

const snapshot: PriceSnapshot = {
  fetchedAt: "2026-01-01",
  source: "test",
  currency: "USD",
  note: "",
  vm: { eastus: { Standard_D2s_v5: { usdPerHour: 0.096, basis: "documented", source: "t" } }, uksouth: { Standard_B1s: { usdPerHour: 0.0118, basis: "documented", source: "t" } } },
  publicIpStandardStatic: { default: { usdPerHour: 0.005, basis: "assumed", source: "t" }, byRegion: {} },
};

describe("the bundled price snapshot", () => {
  it("is data with its date and a source for every figure, and says it is a snapshot", () => {
    const s = loadPriceSnapshot();
    expect(s.fetchedAt).toMatch(/^\d{4}-\d{2}-\d{2}/);
    expect(s.source).toMatch(/snapshot/i);
    expect(s.source).toContain(RETAIL_PRICES_URL);
    for (const [region, sizes] of Object.entries(s.vm)) {
      for (const [size, p] of Object.entries(sizes)) {
        expect(p.source.length, `${region}/${size}`).toBeGreaterThan(10);
        expect(p.usdPerHour, `${region}/${size}`).toBeGreaterThan(0);
        expect(["api", "documented", "derived", "assumed"]).toContain(p.basis);
      }
    }
    expect(s.vm.eastus?.Standard_D2s_v5?.usdPerHour).toBe(0.096);
  });
});

describe("estimateCost", () => {
  const plan = planOf({ name: "cost", defaults: { region: "eastus", zone: "1", size: "Standard_D2s_v5" }, axes: { ppg: [false, true] } });

  it("adds one VM and one public IP per host, hourly and for the run's hours", () => {
    const e = estimateCost(plan, snapshot, 2.5);
    expect(e.lines).toHaveLength(8);
    expect(e.known).toBe(true);
    expect(e.hourlyUsd).toBeCloseTo(4 * 0.096 + 4 * 0.005, 10);
    expect(e.hourlyUsd).toBe(0.404);
    expect(e.totalUsd).toBe(1.01);
    expect(e.missing).toEqual([]);
    expect(e.excluded.join(" ")).toMatch(/OS disks/);
    expect(e.prices).toEqual({ fetchedAt: "2026-01-01", source: "test" });
  });

  it("reads the same items from a resource listing as from the plan", () => {
    const listed = [
      { type: "azure-native:compute:VirtualMachine", name: "vm1", location: "eastus", size: "Standard_D2s_v5" },
      { type: "azure-native:network:PublicIPAddress", name: "ip1", location: "eastus" },
      { type: "azure-native:network:VirtualNetwork", name: "vnet", location: "eastus" },
    ];
    expect(billableItems(listed)).toEqual([
      { kind: "vm", resource: "vm1", region: "eastus", sku: "Standard_D2s_v5" },
      { kind: "publicIp", resource: "ip1", region: "eastus", sku: "Standard" },
    ]);
    expect(estimateCost(listed, snapshot, 1).hourlyUsd).toBe(0.101);
  });

  it("an item without a price makes the estimate UNKNOWN, never a smaller number", () => {
    const b1 = planOf({ name: "miss", defaults: { region: "ukwest", size: "Standard_B1ms", accelnet: false } });
    const e = estimateCost(b1, snapshot, 1);
    expect(e.known).toBe(false);
    expect(e.hourlyUsd).toBeNull();
    expect(e.totalUsd).toBeNull();
    expect(typeof e.hourlyUsd).not.toBe("number");
    expect(e.missing.map((m) => `${m.kind} ${m.sku} ${m.region}`)).toEqual(["vm Standard_B1ms ukwest", "vm Standard_B1ms ukwest"]);
    expect(e.missing[0]!.reason).toBe("no price for Standard_B1ms in ukwest in the prices of 2026-01-01");
    // The IPs' part is kept only under its own name, as a lower bound.
    if (!e.known) expect(e.pricedPartUsdPerHour).toBe(0.01);
    expect(checkMaxCost(e, 100)[0]!.message).toMatch(/cost is UNKNOWN, no price for Standard_B1ms in ukwest/);
  });

  it("one unpriced VM among priced ones still makes it UNKNOWN, and a missing public IP price too", () => {
    const mixed = [
      { type: "azure-native:compute:VirtualMachine", name: "vm1", location: "eastus", size: "Standard_D2s_v5" },
      { type: "azure-native:compute:VirtualMachine", name: "vm2", location: "eastus", size: "Standard_D3_v2" },
    ];
    expect(estimateCost(mixed, snapshot, 1)).toMatchObject({ known: false, hourlyUsd: null, totalUsd: null, pricedPartUsdPerHour: 0.096 });
    const noIp: PriceSnapshot = { ...snapshot, publicIpStandardStatic: { byRegion: {} } };
    const e = estimateCost(plan, noIp, 1);
    expect(e.known).toBe(false);
    expect(missingOf(e)).toEqual(["public IP in eastus"]);
  });

  it("--max-cost refuses a run above the limit and accepts one below", () => {
    const e = estimateCost(plan, snapshot, 10);
    expect(e.totalUsd).toBe(4.04);
    expect(checkMaxCost(e, 5)).toEqual([]);
    const refused = checkMaxCost(e, 4);
    expect(refused).toHaveLength(1);
    expect(refused[0]!.message).toMatch(/estimated \$4\.04 .* above the limit \$4/);
    expect(() => estimateCost(plan, snapshot, -1)).toThrow(RangeError);
  });
});

const missingOf = (e: ReturnType<typeof estimateCost>) => [...new Set(e.missing.map((m) => (m.kind === "vm" ? `${m.sku} in ${m.region}` : `public IP in ${m.region}`)))];

describe("accelnet-on-off on Azure (issue 9: twelve D3_v2 shown at $0.06/h)", () => {
  // Standard_D3_v2, Linux pay-as-you-go, uksouth: about $0.29/h (issue 9; Azure's price list).
  const D3_V2_UKSOUTH_LIST = 0.29;
  // The experiment as issue 9 ran it (on D3_v2; it now ships a current size, see its seedSizes).
  const onD3v2 = { ...accelnetOnOff, defaults: { ...accelnetOnOff.defaults, size: "Standard_D3_v2" } };
  const plan = buildPlan(onD3v2, azurePlanOptions(onD3v2));
  const hours = worstCaseRun(plan).seconds / 3600;

  it("costs within 2x of 12 x the D3_v2 list price with the bundled prices, or says UNKNOWN", () => {
    const vms = billableItems(plan).filter((i) => i.kind === "vm");
    expect(vms).toHaveLength(12);
    expect(new Set(vms.map((v) => `${v.sku} ${v.region}`))).toEqual(new Set(["Standard_D3_v2 uksouth"]));
    const e = estimateCost(plan, loadPriceSnapshot(), hours);
    const text = costSummary(e, { expectedHours: hours / 2, worstCaseHours: hours });
    if (e.known) {
      expect(e.hourlyUsd).toBeGreaterThan((12 * D3_V2_UKSOUTH_LIST) / 2);
      expect(e.hourlyUsd).toBeLessThan(12 * D3_V2_UKSOUTH_LIST * 2);
      expect(text).not.toMatch(/UNKNOWN/);
    } else {
      expect(e.hourlyUsd).toBeNull();
      expect(e.totalUsd).toBeNull();
      expect(missingOf(e)).toContain("Standard_D3_v2 in uksouth");
      expect(text).toMatch(/^UNKNOWN \(no price for Standard_D3_v2 in uksouth/);
      expect(deployCostGate(e, { livePrices: false }).ok).toBe(false);
    }
    // Whatever the snapshot: never a figure below half the list price (the defect was $0.060).
    for (const [, amount] of text.matchAll(/\$(\d+\.\d+)\/h/g)) expect(Number(amount)).toBeGreaterThan((12 * D3_V2_UKSOUTH_LIST) / 2);
  });

  it("with a D3_v2 price (as --live-prices would bring), shows 12 VMs and 12 IPs", () => {
    const live: PriceSnapshot = { ...snapshot, vm: { uksouth: { Standard_D3_v2: { usdPerHour: 0.293, basis: "live", source: "t" } } } };
    const e = estimateCost(plan, live, hours);
    expect(e.known).toBe(true);
    expect(e.hourlyUsd).toBe(12 * 0.293 + 12 * 0.005);
  });
});

describe("costSummary", () => {
  const plan = planOf({ name: "cost", defaults: { region: "eastus", zone: "1", size: "Standard_D2s_v5" }, axes: { ppg: [false, true] } });

  it("gives the hourly cost, the expected and the worst-case totals, and the prices' date", () => {
    const e = estimateCost(plan, snapshot, 2.5);
    expect(costSummary(e, { expectedHours: 0.5, worstCaseHours: 2.5 })).toBe(
      "$0.404/h: about $0.20 for the expected 0.5 h, at most $1.01 for the worst case of 2.5 h (list prices of 2026-01-01; 4 of 8 figures assumed, not read from a price list)",
    );
    const listed: PriceSnapshot = { ...snapshot, publicIpStandardStatic: { byRegion: { eastus: { usdPerHour: 0.005, basis: "api", source: "t" } } } };
    expect(costSummary(estimateCost(plan, listed, 1), { expectedHours: 0.01, worstCaseHours: 1 })).toBe(
      "$0.404/h: about <$0.01 for the expected 0.0 h, at most $0.40 for the worst case of 1.0 h (list prices of 2026-01-01)",
    );
  });

  it("says UNKNOWN and what has no price, with what to do", () => {
    const e = estimateCost(planOf({ name: "miss", defaults: { region: "ukwest", size: "Standard_B1ms", accelnet: false } }), snapshot, 1);
    expect(costSummary(e, { expectedHours: 0.5, worstCaseHours: 1 })).toBe(
      "UNKNOWN (no price for Standard_B1ms in ukwest in the prices of 2026-01-01; use --live-prices or give --max-cost)",
    );
    expect(costSummary(e, { expectedHours: 0.5, worstCaseHours: 1, livePrices: true })).toBe(
      "UNKNOWN (no price for Standard_B1ms in ukwest in the prices of 2026-01-01; the Retail Prices API had none either; give --max-cost to deploy anyway)",
    );
    expect(costSummary(e, { expectedHours: 0.5, worstCaseHours: 1 })).not.toMatch(/\$\d/);
    expect(() => costSummary(e, { expectedHours: -1, worstCaseHours: 1 })).toThrow(RangeError);
  });
});

describe("deployCostGate", () => {
  const plan = planOf({ name: "cost", defaults: { region: "eastus", zone: "1", size: "Standard_D2s_v5" }, axes: { ppg: [false, true] } });
  const known = estimateCost(plan, snapshot, 10); // $4.04 worst case
  const unknownPlan = planOf({ name: "miss", defaults: { region: "eastus", size: "Standard_D3_v2", accelnet: false } });
  const unknown = estimateCost(unknownPlan, snapshot, 10); // two unpriced VMs; the IPs alone $0.10

  it("a known cost deploys, within --max-cost when given", () => {
    expect(deployCostGate(known, { livePrices: false })).toEqual({ ok: true, refusals: [], notes: [] });
    expect(deployCostGate(known, { livePrices: false, maxCostUsd: 5 })).toEqual({ ok: true, refusals: [], notes: [] });
    const over = deployCostGate(known, { livePrices: true, maxCostUsd: 4 });
    expect(over.ok).toBe(false);
    expect(over.refusals[0]!.message).toMatch(/above the limit \$4/);
  });

  it("an UNKNOWN cost does not deploy without --max-cost, and says what to do", () => {
    const snap = deployCostGate(unknown, { livePrices: false });
    expect(snap.ok).toBe(false);
    expect(snap.refusals[0]!.message).toBe(
      "the cost is UNKNOWN: no price for Standard_D3_v2 in eastus in the prices of 2026-01-01; use --live-prices to look them up, or give --max-cost USD to deploy with a cost latlab cannot estimate",
    );
    // --live-prices was asked and the API had no price either: still no.
    const live = deployCostGate(unknown, { livePrices: true });
    expect(live.ok).toBe(false);
    expect(live.refusals[0]!.message).toMatch(/UNKNOWN even with --live-prices: the Azure Retail Prices API has no price for Standard_D3_v2 in eastus; give --max-cost/);
  });

  it("an UNKNOWN cost with --max-cost deploys, saying the cap is unchecked; refused when the priced part alone exceeds it", () => {
    const capped = deployCostGate(unknown, { livePrices: false, maxCostUsd: 20 });
    expect(capped.ok).toBe(true);
    expect(capped.refusals).toEqual([]);
    expect(capped.notes).toEqual(["the cost is UNKNOWN (no price for Standard_D3_v2 in eastus): --max-cost $20 is your limit, not one latlab can check or enforce; deploying because you gave it"]);
    // checkMaxCost itself still refuses to promise anything about an unknown cost.
    expect(checkMaxCost(unknown, 20)).toHaveLength(1);
    const certain = deployCostGate(unknown, { livePrices: false, maxCostUsd: 0.05 });
    expect(certain.ok).toBe(false);
    expect(certain.refusals[0]!.message).toBe(
      "above the limit $0.05 whatever the rest costs: the items that have a price already come to $0.10 for the worst case of 10.0 h, and Standard_D3_v2 in eastus has no price",
    );
    expect(() => deployCostGate(unknown, { livePrices: false, maxCostUsd: Number.NaN })).toThrow(RangeError);
  });
});

/** A fake Retail Prices API: pages by URL, records every request. */
function fakeApi(pages: Record<string, unknown>): { fetchFn: FetchLike; urls: string[] } {
  const urls: string[] = [];
  return {
    urls,
    fetchFn: async (url) => {
      urls.push(url);
      const body = pages[url] ?? Object.entries(pages).find(([k]) => url.includes(k))?.[1];
      if (body === undefined) return { ok: false, status: 404, json: async () => ({}) };
      return { ok: true, status: 200, json: async () => body };
    },
  };
}

const row = (o: Record<string, unknown>) => ({ currencyCode: "USD", type: "Consumption", unitOfMeasure: "1 Hour", serviceName: "Virtual Machines", armRegionName: "uksouth", ...o });

describe("live prices (anonymous Retail Prices API), against a fake fetch", () => {
  it("follows NextPageLink to the end and keeps the Linux pay-as-you-go row", async () => {
    const next1 = "https://prices.azure.com:443/api/retail/prices?api-version=2023-01-01-preview&$filter=x&$skip=100";
    const next2 = "https://prices.azure.com:443/api/retail/prices?api-version=2023-01-01-preview&$filter=x&$skip=200";
    const { fetchFn, urls } = fakeApi({
      "armSkuName%20eq%20'Standard_B1s'": {
        Items: [row({ armSkuName: "Standard_B1s", productName: "Virtual Machines BS Series Windows", meterName: "B1s", retailPrice: 0.0208 })],
        NextPageLink: next1,
      },
      [next1]: { Items: [row({ armSkuName: "Standard_B1s", productName: "Virtual Machines BS Series", meterName: "B1s Spot", retailPrice: 0.002 })], NextPageLink: next2 },
      [next2]: { Items: [row({ armSkuName: "Standard_B1s", productName: "Virtual Machines BS Series", meterName: "B1s", retailPrice: 0.0118 }), { junk: true }], NextPageLink: null },
      "productName%20eq%20'IP%20Addresses'": {
        Items: [
          row({ serviceName: "Virtual Network", meterName: "Basic IPv4 Static Public IP", retailPrice: 0.0036 }),
          row({ serviceName: "Virtual Network", meterName: PUBLIC_IP_METER, retailPrice: 0.005 }),
        ],
        NextPageLink: "",
      },
    });
    const now = new Date("2026-11-21T12:00:00Z");
    const { snapshot: live, notFound } = await fetchLivePrices(["uksouth"], ["Standard_B1s"], fetchFn, now);
    expect(urls).toHaveLength(4);
    expect(urls[0]).toBe(
      `${RETAIL_PRICES_URL}?api-version=2023-01-01-preview&$filter=${encodeURIComponent("serviceName eq 'Virtual Machines' and armRegionName eq 'uksouth' and armSkuName eq 'Standard_B1s' and priceType eq 'Consumption'")}`,
    );
    expect(urls.slice(1, 3)).toEqual([next1, next2]);
    expect(live.vm.uksouth?.Standard_B1s).toMatchObject({ usdPerHour: 0.0118, basis: "live" });
    expect(live.publicIpStandardStatic.byRegion.uksouth).toMatchObject({ usdPerHour: 0.005, basis: "live" });
    expect(live.fetchedAt).toBe(now.toISOString());
    expect(notFound).toEqual([]);
  });

  it("says what it did not find, and fails on an HTTP error", async () => {
    const { fetchFn } = fakeApi({ "Standard_Z9": { Items: [], NextPageLink: null }, "IP%20Addresses": { Items: [] } });
    const { notFound } = await fetchLivePrices(["uksouth"], ["Standard_Z9"], fetchFn);
    expect(notFound).toEqual(["Standard_Z9 in uksouth", "public IP in uksouth"]);
    await expect(fetchAllPages("x eq 'y'", async () => ({ ok: false, status: 429, json: async () => ({}) }))).rejects.toThrow(/HTTP 429/);
  });

  it("stops an endless NextPageLink chain", async () => {
    const loop: FetchLike = async () => ({ ok: true, status: 200, json: async () => ({ Items: [], NextPageLink: "https://prices.azure.com/again" }) });
    await expect(fetchAllPages("x eq 'y'", loop, 3)).rejects.toThrow(/more than 3 pages/);
  });

  it("prefers the newest primary-region row", () => {
    const picked = pickVmPrice(
      [
        row({ armSkuName: "S", retailPrice: 1, effectiveStartDate: "2024-01-01", isPrimaryMeterRegion: true, productName: "P", meterName: "S" }),
        row({ armSkuName: "S", retailPrice: 2, effectiveStartDate: "2025-01-01", isPrimaryMeterRegion: true, productName: "P", meterName: "S" }),
        row({ armSkuName: "S", retailPrice: 3, effectiveStartDate: "2026-01-01", isPrimaryMeterRegion: false, productName: "P", meterName: "S" }),
      ] as never,
      "S",
    );
    expect(picked?.retailPrice).toBe(2);
  });

  it("live figures override the snapshot where they exist", () => {
    const live: PriceSnapshot = { ...snapshot, fetchedAt: "2026-11-21", source: "live", vm: { uksouth: { Standard_B1s: { usdPerHour: 0.02, basis: "live", source: "l" } } }, publicIpStandardStatic: { byRegion: { uksouth: { usdPerHour: 0.006, basis: "live", source: "l" } } } };
    const merged = mergeSnapshots(snapshot, live);
    expect(merged.vm.uksouth?.Standard_B1s?.usdPerHour).toBe(0.02);
    expect(merged.vm.eastus?.Standard_D2s_v5?.usdPerHour).toBe(0.096);
    expect(merged.publicIpStandardStatic.byRegion.uksouth?.usdPerHour).toBe(0.006);
    expect(merged.publicIpStandardStatic.default?.usdPerHour).toBe(0.005);
    // Not every figure is of the live date: the ones kept from the snapshot are of its own.
    expect(merged.fetchedAt).toBe(`2026-11-21 where live, else ${snapshot.fetchedAt}`);
  });
});
