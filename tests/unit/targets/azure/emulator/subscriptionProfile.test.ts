/**
 * The emulator's default subscription: a new pay-as-you-go one (issue 21, point 5). Figures from
 * catalog/subscriptionProfile.ts (Microsoft's documented defaults: 20 vCPUs per region and per
 * family, 10 Standard public IPs), previous-generation series closed (catalog/sizes/
 * previousGeneration.ts), and allocation in a PPG as co-location.md describes it. Each refusal is
 * checked against the text Azure gives, whose source the code under test cites.
 */
import { describe, expect, it } from "vitest";
import { armError, put } from "./armTestHelpers.ts";
import { Cloud } from "../../../../../src/targets/azure/emulator/arm/cloud.ts";
import type { Fault } from "../../../../../src/targets/azure/emulator/arm/faults.ts";
import { parseFaults } from "../../../../../src/targets/azure/emulator/arm/faults.ts";
import { API_VERSIONS, createTypeRules } from "../../../../../src/targets/azure/emulator/arm/typeRules.ts";
import {
  capacityRoute,
  networkUsagesOf,
  parseCapacity,
  skusOf,
  STANDARD_PUBLIC_IPS,
  usagesOf,
  withSubscriptionLimits,
  type Capacity,
} from "../../../../../src/targets/azure/emulator/arm/subscriptionCapacity.ts";
import { checkCapacity, ResourceSkuListSchema, standardPublicIpUsage, UsageListSchema, type RegionNeed } from "../../../../../src/targets/azure/catalog/quota.ts";
import { NEW_SUBSCRIPTION_PROFILE } from "../../../../../src/targets/azure/catalog/subscriptionProfile.ts";

const SUB = "00000000-0000-4000-8000-000000000021";
const RG = `/subscriptions/${SUB}/resourceGroups/rg1`;
const NET = `${RG}/providers/Microsoft.Network`;
const COMPUTE = `${RG}/providers/Microsoft.Compute`;
const N = API_VERSIONS.network;
const C = API_VERSIONS.compute;
const CLIENT_KEY = `ssh-rsa ${"A".repeat(300)} test`;

/** ARM as the emulator builds it (emulator.ts): the type rules with the subscription's limits around them. */
function harness(options: { capacity?: Capacity; faults?: Fault[] } = {}) {
  const started: string[] = [];
  let next = 8;
  const capacity = options.capacity ?? parseCapacity("{}");
  const rules = createTypeRules({
    schemaCheck: () => [],
    network: { allocatePublicIp: () => `198.19.255.${next++}`, releasePublicIp: () => undefined, addressSpaceProblem: () => undefined },
    vm: {
      async startVm(vm) {
        started.push(vm.name);
      },
      async stopVm() {},
    },
    capacity,
  });
  const cloud = new Cloud({ subscription: SUB, rules: withSubscriptionLimits(rules, capacity), faults: options.faults ?? [], delays: { default: 2 } });
  return { cloud, started, capacity };
}

const pip = (zone = "1") => ({ location: "uksouth", sku: { name: "Standard" }, zones: [zone], properties: { publicIPAllocationMethod: "Static" } });

/** A group, a VNet with a subnet, an NSG and `nics` NICs n0…n{nics-1}. */
async function network(cloud: Cloud, nics: number) {
  await put(cloud, RG, API_VERSIONS.resources, { location: "uksouth" });
  await put(cloud, `${NET}/virtualNetworks/v1`, N, { location: "uksouth", properties: { addressSpace: { addressPrefixes: ["198.18.0.0/20"] } } });
  await put(cloud, `${NET}/virtualNetworks/v1/subnets/s0`, N, { properties: { addressPrefix: "198.18.0.0/24" } });
  await put(cloud, `${NET}/networkSecurityGroups/g1`, N, { location: "uksouth", properties: { securityRules: [] } });
  for (let i = 0; i < nics; i++) {
    await put(cloud, `${NET}/networkInterfaces/n${i}`, N, {
      location: "uksouth",
      properties: {
        networkSecurityGroup: { id: `${NET}/networkSecurityGroups/g1` },
        ipConfigurations: [{ name: "ipconfig1", properties: { privateIPAllocationMethod: "Static", privateIPAddress: `198.18.0.${10 + i}`, subnet: { id: `${NET}/virtualNetworks/v1/subnets/s0` } } }],
      },
    });
  }
}

const vm = (nic: number, size: string, extra: Record<string, unknown> = {}) => ({
  location: "uksouth",
  zones: ["1"],
  properties: {
    hardwareProfile: { vmSize: size },
    osProfile: { computerName: "h", adminUsername: "latlab", linuxConfiguration: { disablePasswordAuthentication: true, ssh: { publicKeys: [{ path: "/home/latlab/.ssh/authorized_keys", keyData: CLIENT_KEY }] } } },
    networkProfile: { networkInterfaces: [{ id: `${NET}/networkInterfaces/n${nic}`, properties: { primary: true, deleteOption: "Delete" } }] },
    ...extra,
  },
});

describe("the emulator's default profile: a new pay-as-you-go subscription", () => {
  it("takes its figures from the documented defaults; 'unrestricted' is the old generous one; both are overridable", () => {
    const { capacity } = harness();
    expect(capacity.profile).toBe("new-subscription");
    const cloud = harness().cloud;
    const usages = UsageListSchema.parse(usagesOf(cloud, "uksouth", capacity)).value;
    expect(usages.find((u) => u.name.value === "cores")).toMatchObject({ limit: NEW_SUBSCRIPTION_PROFILE.regionalVcpus, name: { localizedValue: "Total Regional vCPUs" } });
    expect(usages.find((u) => u.name.value === "standardDSv5Family")).toMatchObject({ limit: NEW_SUBSCRIPTION_PROFILE.familyVcpus, name: { localizedValue: "Standard DSv5 Family vCPUs" } });
    expect(networkUsagesOf(cloud, SUB, "uksouth", capacity).value).toEqual([
      {
        id: `/subscriptions/${SUB}/providers/Microsoft.Network/locations/uksouth/usages/StandardSkuPublicIpAddresses`,
        unit: "Count",
        currentValue: 0,
        limit: NEW_SUBSCRIPTION_PROFILE.publicIps,
        name: { value: "StandardSkuPublicIpAddresses", localizedValue: "Public IP Addresses - Standard" },
      },
    ]);
    const open = parseCapacity('{"profile":"unrestricted","limits":{"standardDSv5Family":64},"publicIps":3}');
    const openUsages = UsageListSchema.parse(usagesOf(cloud, "uksouth", open)).value;
    expect(openUsages.find((u) => u.name.value === "cores")!.limit).toBe(350);
    expect(openUsages.find((u) => u.name.value === "standardDSv5Family")!.limit).toBe(64);
    expect(networkUsagesOf(cloud, SUB, "uksouth", open).value[0]).toMatchObject({ limit: 3 });
    expect(() => parseCapacity('{"profile":"enterprise"}')).toThrow(/LATLAB_EMULATOR_CAPACITY: \[profile\]/);
  });

  it("closes previous-generation sizes: SkuNotAvailable on create, NotAvailableForSubscription in the SKU list, so latlab's preflight refuses them first", async () => {
    const { cloud, started, capacity } = harness();
    await network(cloud, 2);
    // Azure's words (Azure-Samples/azuresandbox issue 70: "409 Conflict … SkuNotAvailable: The requested VM size for resource 'Following SKUs have failed for Capacity Restrictions: Standard_B2s' …").
    const e = armError(() => cloud.put(`${COMPUTE}/virtualMachines/old`, C, vm(0, "Standard_DS13_v2")));
    expect(e).toMatchObject({ status: 409, code: "SkuNotAvailable" });
    expect(e.message).toBe(
      "The requested VM size for resource 'Following SKUs have failed for Capacity Restrictions: Standard_DS13_v2' is currently not available in location 'uksouth'. Please try another size or deploy to a different location or different zone. See https://aka.ms/azureskunotavailable for details.",
    );
    expect(cloud.get(`${COMPUTE}/virtualMachines/old`)).toBeUndefined();
    await put(cloud, `${COMPUTE}/virtualMachines/new`, C, vm(1, "Standard_D2s_v5"));
    expect(started).toEqual(["new"]);

    const skus = ResourceSkuListSchema.parse(skusOf("uksouth", capacity)).value;
    const ds13 = skus.find((s) => s.name === "Standard_DS13_v2")!;
    expect(ds13.restrictions).toEqual([{ type: "Location", values: ["uksouth"], restrictionInfo: { locations: ["uksouth"] }, reasonCode: "NotAvailableForSubscription" }]);
    expect(skus.find((s) => s.name === "Standard_D2s_v5")!.restrictions).toEqual([]);
    const need: RegionNeed = { region: "uksouth", totalVcpus: 8, families: [{ family: "standardDSv2Family", vcpus: 8, sizes: [{ size: "Standard_DS13_v2", vcpusEach: 8, count: 1, zones: ["1"] }] }] };
    const usages = UsageListSchema.parse(usagesOf(cloud, "uksouth", capacity)).value;
    const issues = checkCapacity([need], { uksouth: usages }, { uksouth: skus });
    expect(issues).toEqual([expect.objectContaining({ kind: "size-unavailable", size: "Standard_DS13_v2", zones: null })]);
    expect(issues[0]!.message).toContain("NotAvailableForSubscription");

    // The old behaviour, for tests of something else.
    const open = harness({ capacity: parseCapacity('{"profile":"unrestricted"}') });
    await network(open.cloud, 1);
    await put(open.cloud, `${COMPUTE}/virtualMachines/old`, C, vm(0, "Standard_DS13_v2"));
    expect(open.started).toEqual(["old"]);
    expect(ResourceSkuListSchema.parse(skusOf("uksouth", open.capacity)).value.find((s) => s.name === "Standard_DS13_v2")!.restrictions).toEqual([]);
  });

  it("offers the sizes whose facts the catalog knows, from the snapshot's entries or the documented facts, counted by their family", async () => {
    const { cloud, capacity } = harness();
    const skus = ResourceSkuListSchema.parse(skusOf("uksouth", capacity)).value;
    const d2as = skus.find((s) => s.name === "Standard_D2as_v6")!;
    expect(d2as).toMatchObject({ family: "standardDav6Family", locations: ["uksouth"], locationInfo: [{ location: "uksouth", zones: ["1", "2", "3"] }] });
    expect(d2as.capabilities).toEqual(expect.arrayContaining([{ name: "DiskControllerTypes", value: "NVMe" }, { name: "vCPUs", value: "2" }]));
    expect(skus.find((s) => s.name === "Standard_D2s_v5")!.capabilities).toEqual(
      expect.arrayContaining([{ name: "vCPUs", value: "2" }, { name: "HyperVGenerations", value: "V1,V2" }, { name: "AcceleratedNetworkingEnabled", value: "True" }]),
    );
    // A name the snapshot lists with its family only is not offered: its capabilities are unknown.
    expect(skus.find((s) => s.name === "Standard_D2ads_v5")).toBeUndefined();
    // A retired size (RetirementDateUtc 09/03/2024 in its entry) is closed like a previous-generation one.
    expect(skus.find((s) => s.name === "Standard_A0")!.restrictions).toHaveLength(1);
    expect(skusOf("mars", capacity).value).toEqual([]);

    await network(cloud, 1);
    await put(cloud, `${COMPUTE}/virtualMachines/a`, C, vm(0, "Standard_D2_v5"));
    const usages = UsageListSchema.parse(usagesOf(cloud, "uksouth", capacity)).value;
    expect(usages.find((u) => u.name.value === "standardDv5Family")!.currentValue).toBe(2);
    expect(usages.find((u) => u.name.value === "cores")!.currentValue).toBe(2);
  });

  it("refuses a VM past its family's quota, then past the region's, with Azure's OperationNotAllowed and figures", async () => {
    const { cloud, started } = harness();
    await network(cloud, 4);
    await put(cloud, `${COMPUTE}/virtualMachines/a`, C, vm(0, "Standard_D16s_v5"));
    // Azure's words (Azure/karpenter-provider-azure issue 192: 409, "exceeding approved standardDASv5Family Cores quota. Additional details - …").
    const family = armError(() => cloud.put(`${COMPUTE}/virtualMachines/b`, C, vm(1, "Standard_D8s_v5")));
    expect(family).toMatchObject({ status: 409, code: "OperationNotAllowed" });
    expect(family.message).toMatch(
      /^Operation could not be completed as it results in exceeding approved standardDSv5Family Cores quota\. Additional details - Deployment Model: Resource Manager, Location: uksouth, Current Limit: 20, Current Usage: 16, Additional Required: 8, \(Minimum\) New Limit Required: 24\. Submit a request for Quota increase at /,
    );
    // Another family fits its own quota but not the region's 20 ("Total Regional Cores", nforgeio/neonKUBE issue 1671).
    const regional = armError(() => cloud.put(`${COMPUTE}/virtualMachines/c`, C, vm(2, "Standard_D8_v5")));
    expect(regional).toMatchObject({ status: 409, code: "OperationNotAllowed" });
    expect(regional.message).toContain("exceeding approved Total Regional Cores quota. Additional details - Deployment Model: Resource Manager, Location: uksouth, Current Limit: 20, Current Usage: 16, Additional Required: 8, (Minimum) New Limit Required: 24.");
    await put(cloud, `${COMPUTE}/virtualMachines/d`, C, vm(3, "Standard_D4_v5"));
    expect(started).toEqual(["a", "d"]);
  });

  it("refuses a Standard public IP past the region's quota with PublicIPCountLimitReached, and counts them in the Network usages", async () => {
    const { cloud, capacity } = harness();
    await put(cloud, RG, API_VERSIONS.resources, { location: "uksouth" });
    for (let i = 0; i < NEW_SUBSCRIPTION_PROFILE.publicIps; i++) expect((await put(cloud, `${NET}/publicIPAddresses/p${i}`, N, pip())).op.status).toBe("Succeeded");
    // Azure's words for a Standard address (evgenyb/aks-workshops issue 22): "(PublicIPCountLimitReached) Cannot create more than 20 public IP addresses for this subscription in this region."
    const e = armError(() => cloud.put(`${NET}/publicIPAddresses/one-more`, N, pip()));
    expect(e).toMatchObject({ status: 400, code: "PublicIPCountLimitReached", message: "Cannot create more than 10 public IP addresses for this subscription in this region." });
    expect(cloud.get(`${NET}/publicIPAddresses/one-more`)).toBeUndefined();
    // An update of one that exists is not a new address; another region has its own quota.
    expect((await put(cloud, `${NET}/publicIPAddresses/p0`, N, { ...pip(), tags: { x: "y" } })).op.status).toBe("Succeeded");
    expect((await put(cloud, `${NET}/publicIPAddresses/far`, N, { ...pip(), location: "northeurope" })).op.status).toBe("Succeeded");
    expect(networkUsagesOf(cloud, SUB, "uksouth", capacity).value[0]).toMatchObject({ currentValue: 10, limit: 10, name: { value: STANDARD_PUBLIC_IPS } });
    // What latlab's own check reads from Azure's Network usages finds it.
    expect(standardPublicIpUsage(UsageListSchema.parse(networkUsagesOf(cloud, SUB, "uksouth", capacity)).value)).toMatchObject({ currentValue: 10, limit: 10 });
    // Deleting one frees its place.
    cloud.delete(`${NET}/publicIPAddresses/p9`, N);
    await cloud.idle();
    expect((await put(cloud, `${NET}/publicIPAddresses/one-more`, N, pip())).op.status).toBe("Succeeded");

    const q = new URLSearchParams("api-version=2024-05-01");
    expect(capacityRoute(`/subscriptions/${SUB}/providers/Microsoft.Network/locations/UK South/usages`, q)).toEqual({ kind: "network-usages", subscription: SUB, region: "uksouth" });
  });
});

describe("allocation: OverconstrainedAllocationRequest", () => {
  const ppg = (extra: Record<string, unknown>) => ({ location: "uksouth", properties: { proximityPlacementGroupType: "Standard" }, ...extra });
  const inPpg = (name: string) => ({ proximityPlacementGroup: { id: `${COMPUTE}/proximityPlacementGroups/${name}` } });

  it("as a fault: the VM is accepted, its operation fails with Azure's text, it stays in ARM as Failed and never boots", async () => {
    const faults = parseFaults('[{"kind":"overconstrained-allocation","name":"server","times":1}]');
    const { cloud, started } = harness({ faults });
    await network(cloud, 3);
    const r = await put(cloud, `${COMPUTE}/virtualMachines/server`, C, vm(0, "Standard_D2s_v5"));
    expect(r.status).toBe(201);
    expect(r.op).toMatchObject({ status: "Failed", error: { code: "OverconstrainedAllocationRequest" } });
    // Azure's words (GoogleCloudPlatform/PerfKitBenchmarker issue 1863; jenkins-infra/azure pull 1416 for a zonal VM's constraints).
    expect(r.op.error!.message).toMatch(
      /^Allocation failed\. VM\(s\) with the following constraints cannot be allocated, because the condition is too restrictive\. Please remove some constraints and try again\. Constraints applied are:\n {2}- Availability Zone\n {2}- VM Size\n\(injected fault/,
    );
    expect(cloud.read(`${COMPUTE}/virtualMachines/server`)).toMatchObject({ properties: { provisioningState: "Failed" } });
    expect(started).toEqual([]);
    // Once only; other names are not touched.
    await put(cloud, `${COMPUTE}/virtualMachines/client`, C, vm(1, "Standard_D2s_v5"));
    await put(cloud, `${COMPUTE}/virtualMachines/server2`, C, vm(2, "Standard_D2s_v5"));
    expect(started).toEqual(["client", "server2"]);
    expect(cloud.faultReport()[0]!.fired).toBe(1);
  });

  it("a zonal PPG's datacenter has its intent's sizes: a VM of another size fails, in any order; a listed size does not", async () => {
    const { cloud, started } = harness();
    await network(cloud, 3);
    await put(cloud, `${COMPUTE}/proximityPlacementGroups/ppg`, C, ppg({ zones: ["1"], properties: { proximityPlacementGroupType: "Standard", intent: { vmSizes: ["Standard_D2s_v5", "Standard_D4s_v5"] } } }));
    const other = await put(cloud, `${COMPUTE}/virtualMachines/odd`, C, vm(0, "Standard_D2_v5", inPpg("ppg")));
    expect(other.op).toMatchObject({ status: "Failed", error: { code: "OverconstrainedAllocationRequest" } });
    expect(other.op.error!.message).toContain("Standard_D2_v5 is not in the intent of proximity placement group 'ppg' (vmSizes Standard_D2s_v5, Standard_D4s_v5)");
    await put(cloud, `${COMPUTE}/virtualMachines/big`, C, vm(1, "Standard_D4s_v5", inPpg("ppg")));
    await put(cloud, `${COMPUTE}/virtualMachines/small`, C, vm(2, "Standard_D2s_v5", inPpg("ppg")));
    expect(started).toEqual(["big", "small"]);
  });

  it("a PPG without intent is pinned by its first VM: a member of another size fails, of the same size does not; also through an availability set", async () => {
    const { cloud, started } = harness();
    await network(cloud, 5);
    await put(cloud, `${COMPUTE}/proximityPlacementGroups/loose`, C, ppg({}));
    await put(cloud, `${COMPUTE}/virtualMachines/first`, C, vm(0, "Standard_D2s_v5", inPpg("loose")));
    const second = await put(cloud, `${COMPUTE}/virtualMachines/second`, C, vm(1, "Standard_D4s_v5", inPpg("loose")));
    expect(second.op).toMatchObject({ status: "Failed", error: { code: "OverconstrainedAllocationRequest" } });
    expect(second.op.error!.message).toContain("pinned to the datacenter its first VM 'first' (Standard_D2s_v5) was placed in");
    await put(cloud, `${COMPUTE}/virtualMachines/twin`, C, vm(2, "Standard_D2s_v5", inPpg("loose")));

    // An availability set's VMs have no zone: a regional PPG of their own.
    await put(cloud, `${COMPUTE}/proximityPlacementGroups/regional`, C, ppg({}));
    await put(cloud, `${COMPUTE}/virtualMachines/solo`, C, { ...vm(3, "Standard_D2s_v5", inPpg("regional")), zones: [] });
    await put(cloud, `${COMPUTE}/availabilitySets/as`, C, { location: "uksouth", sku: { name: "Aligned" }, properties: { platformFaultDomainCount: 2, proximityPlacementGroup: { id: `${COMPUTE}/proximityPlacementGroups/regional` } } });
    const viaSet = await put(cloud, `${COMPUTE}/virtualMachines/member`, C, { ...vm(4, "Standard_D8s_v5", { availabilitySet: { id: `${COMPUTE}/availabilitySets/as` } }), zones: [] });
    expect(viaSet.op).toMatchObject({ status: "Failed", error: { code: "OverconstrainedAllocationRequest" } });
    expect(viaSet.op.error!.message).toContain("first VM 'solo' (Standard_D2s_v5)");
    expect(started).toEqual(["first", "twin", "solo"]);
  });
});
