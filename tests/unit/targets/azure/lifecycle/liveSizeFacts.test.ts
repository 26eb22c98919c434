import { describe, expect, it } from "vitest";
import { checkSubscriptionCapacity } from "../../../../../src/targets/azure/lifecycle/azureTarget.ts";
import { planOf } from "../helpers.ts";

const usages = [
  { name: { value: "cores" }, currentValue: 0, limit: 100 },
  { name: { value: "standardDav6Family" }, currentValue: 0, limit: 100 },
  { name: { value: "standardDSv5Family" }, currentValue: 0, limit: 100 },
];
const sku = (name: string, family: string, caps: Record<string, string>) => ({
  resourceType: "virtualMachines",
  name,
  family,
  locations: ["eastus"],
  locationInfo: [{ location: "eastus", zones: ["1", "2", "3"] }],
  capabilities: Object.entries(caps).map(([n, value]) => ({ name: n, value })),
  restrictions: [],
});

describe("checkSubscriptionCapacity: what the subscription's SKU list says goes to the program", () => {
  it("returns each size's live generations and disk controllers, and refuses AccelNet where the live SKU says False", async () => {
    const plan = planOf({ name: "live", defaults: { region: "eastus", zone: "1", accelnet: true }, hosts: { client: { size: "Standard_D2as_v6" }, server: { size: "Standard_D2s_v5" } } });
    const skus = [
      sku("Standard_D2as_v6", "standardDav6Family", { vCPUs: "2", HyperVGenerations: "V2", DiskControllerTypes: "NVMe", AcceleratedNetworkingEnabled: "True" }),
      sku("Standard_D2s_v5", "standardDSv5Family", { vCPUs: "2", HyperVGenerations: "V1,V2", AcceleratedNetworkingEnabled: "True" }),
    ];
    const facts = await checkSubscriptionCapacity(plan, async () => ({ usages: { eastus: usages }, skus: { eastus: skus } }), () => {});
    expect(facts).toEqual({
      Standard_D2as_v6: { hyperVGenerations: [2], diskControllerTypes: ["NVMe"] },
      Standard_D2s_v5: { hyperVGenerations: [1, 2], diskControllerTypes: ["SCSI"] },
    });
    const noAccel = skus.map((s) => (s.name === "Standard_D2s_v5" ? { ...s, capabilities: s.capabilities.map((c) => (c.name === "AcceleratedNetworkingEnabled" ? { ...c, value: "False" } : c)) } : s));
    await expect(checkSubscriptionCapacity(plan, async () => ({ usages: { eastus: usages }, skus: { eastus: noAccel } }), () => {})).rejects.toThrow(
      /nothing was created.*\n.*hosts\.server\.accelnet: Standard_D2s_v5 \(2 vCPU\) does not support Accelerated Networking \(Azure's SKU capability AcceleratedNetworkingEnabled is False, read from this subscription's Resource SKUs API\)/,
    );
  });
});
