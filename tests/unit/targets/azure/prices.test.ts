import { describe, expect, it } from "vitest";
import {
  PUBLIC_IP_METER,
  RETAIL_PRICES_URL,
  billableItems,
  checkMaxCost,
  estimateCost,
  fetchAllPages,
  fetchLivePrices,
  loadPriceSnapshot,
  mergeSnapshots,
  pickVmPrice,
  type FetchLike,
  type PriceSnapshot,
} from "../../../../src/targets/azure/prices.ts";
import { planOf } from "./helpers.ts";

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
        expect(["documented", "derived", "assumed"]).toContain(p.basis);
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

  it("lists what has no price instead of guessing, and --max-cost refuses then", () => {
    const b1 = planOf({ name: "miss", defaults: { region: "ukwest", size: "Standard_B1ms", accelnet: false } });
    const e = estimateCost(b1, snapshot, 1);
    expect(e.missing.map((m) => `${m.kind} ${m.sku} ${m.region}`)).toEqual(["vm Standard_B1ms ukwest", "vm Standard_B1ms ukwest"]);
    expect(e.missing[0]!.reason).toMatch(/use --live-prices/);
    expect(e.hourlyUsd).toBe(0.01);
    expect(checkMaxCost(e, 100)[0]!.message).toMatch(/no price for Standard_B1ms in ukwest/);
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
    expect(merged.fetchedAt).toBe("2026-11-21");
  });
});
