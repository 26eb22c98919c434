import { describe, expect, it } from "vitest";
import { armError, put } from "./armTestHelpers.ts";
import { Cloud, type CloudSnapshot } from "../../../../../src/targets/azure/emulator/arm/cloud.ts";
import type { Fault } from "../../../../../src/targets/azure/emulator/arm/faults.ts";
import { API_VERSIONS, createTypeRules, type SchemaCheck } from "../../../../../src/targets/azure/emulator/arm/typeRules.ts";
import { C, COMPUTE, N, NET, RG, SUB } from "./armTestIds.ts";
import { capacityRoute, parseCapacity, skusOf, usagesOf, type Capacity } from "../../../../../src/targets/azure/emulator/arm/subscriptionCapacity.ts";
import { checkCapacity, ResourceSkuListSchema, UsageListSchema, type RegionNeed } from "../../../../../src/targets/azure/catalog/quota.ts";
import { NEW_SUBSCRIPTION_PROFILE } from "../../../../../src/targets/azure/catalog/subscriptionProfile.ts";
import { validateArmBodyForArmType } from "../../../../../src/targets/azure/emulator/spec/armSpec.ts";


const CLIENT_KEY = `ssh-rsa ${"A".repeat(300)} test`;

interface Harness {
  cloud: Cloud;
  started: string[];
  stopped: string[];
}

function harness(options: { faults?: Fault[]; delay?: number; schema?: SchemaCheck; snapshot?: CloudSnapshot; capacity?: Capacity } = {}): Harness {
  const started: string[] = [];
  const stopped: string[] = [];
  let next = 8;
  const rules = createTypeRules({
    schemaCheck: options.schema ?? (() => []),
    network: { allocatePublicIp: () => `198.19.255.${next++}`, releasePublicIp: () => undefined, addressSpaceProblem: (p) => (p.startsWith("198.18.") ? undefined : "outside 198.18.0.0/16") },
    vm: {
      async startVm(vm) {
        started.push(vm.name);
      },
      async stopVm(vm) {
        stopped.push(vm.name);
      },
    },
    ...(options.capacity ? { capacity: options.capacity } : {}),
  });
  const cloud = new Cloud({ subscription: SUB, rules, faults: options.faults ?? [], delays: { default: options.delay ?? 5 }, ...(options.snapshot ? { snapshot: options.snapshot } : {}) });
  return { cloud, started, stopped };
}

async function network(cloud: Cloud) {
  await put(cloud, RG, API_VERSIONS.resources, { location: "uksouth" });
  await put(cloud, `${NET}/virtualNetworks/v1`, N, { location: "uksouth", properties: { addressSpace: { addressPrefixes: ["198.18.0.0/20"] } } });
  await put(cloud, `${NET}/virtualNetworks/v1/subnets/s0`, N, { properties: { addressPrefix: "198.18.0.0/24" } });
  await put(cloud, `${NET}/publicIPAddresses/p1`, N, { location: "uksouth", sku: { name: "Standard" }, zones: ["1"], properties: { publicIPAllocationMethod: "Static" } });
  await put(cloud, `${NET}/networkSecurityGroups/g1`, N, { location: "uksouth", properties: { securityRules: [] } });
}

const nic = (name: string, ip: string, extra: Record<string, unknown> = {}) => ({
  location: "uksouth",
  properties: {
    networkSecurityGroup: { id: `${NET}/networkSecurityGroups/g1` },
    ipConfigurations: [{ name: "ipconfig1", properties: { privateIPAllocationMethod: "Static", privateIPAddress: ip, subnet: { id: `${NET}/virtualNetworks/v1/subnets/s0` }, ...extra } }],
  },
});

const vm = (nicName: string, extra: Record<string, unknown> = {}, size = "Standard_D2s_v5") => ({
  location: "uksouth",
  zones: ["1"],
  properties: {
    hardwareProfile: { vmSize: size },
    osProfile: { computerName: "h", adminUsername: "latlab", customData: "I2Nsb3VkLWNvbmZpZw==", linuxConfiguration: { disablePasswordAuthentication: true, ssh: { publicKeys: [{ path: "/home/latlab/.ssh/authorized_keys", keyData: CLIENT_KEY }] } } },
    networkProfile: { networkInterfaces: [{ id: `${NET}/networkInterfaces/${nicName}`, properties: { primary: true, deleteOption: "Delete" } }] },
    ...extra,
  },
});

describe("the emulator's ARM: requests and long-running operations", () => {
  it("accepts a PUT at once (201, Creating), finishes it later (Succeeded), and GET shows the state", async () => {
    const { cloud } = harness({ delay: 30 });
    const r = cloud.put(RG, API_VERSIONS.resources, { location: "uksouth", tags: { owner: "latlab" } });
    expect(r.status).toBe(201);
    expect(cloud.operation(r.operation).status).toBe("InProgress");
    expect(cloud.read(RG)).toMatchObject({ name: "rg1", properties: { provisioningState: "Creating" } });
    await cloud.idle();
    expect(cloud.operation(r.operation).status).toBe("Succeeded");
    expect(cloud.read(RG)).toMatchObject({ id: RG, location: "uksouth", tags: { owner: "latlab" }, properties: { provisioningState: "Succeeded" } });
    // A second PUT updates (200).
    expect(cloud.put(RG, API_VERSIONS.resources, { location: "uksouth" }).status).toBe(200);
    await cloud.idle();
  });

  it("requires the api-version it plays, a resource group, a parent", async () => {
    const { cloud } = harness();
    expect(armError(() => cloud.put(RG, undefined, { location: "uksouth" })).code).toBe("MissingApiVersionParameter");
    expect(armError(() => cloud.put(RG, "2019-01-01", { location: "uksouth" })).code).toBe("NoRegisteredProviderFound");
    expect(armError(() => cloud.put(`${NET}/virtualNetworks/v1`, N, { location: "uksouth" }))).toMatchObject({ status: 404, code: "ResourceGroupNotFound" });
    await put(cloud, RG, API_VERSIONS.resources, { location: "uksouth" });
    expect(armError(() => cloud.put(`${NET}/virtualNetworks/v9/subnets/s0`, N, { properties: { addressPrefix: "198.18.0.0/24" } }))).toMatchObject({ status: 404, code: "ParentResourceNotFound" });
    expect(armError(() => cloud.put(`${RG}/providers/Microsoft.Storage/storageAccounts/x`, "2023-01-01", {})).code).toBe("NoRegisteredProviderFound");
    expect(armError(() => cloud.read(`${NET}/virtualNetworks/nope`))).toMatchObject({ status: 404, code: "ResourceNotFound" });
  });

  it("turns the specification check's issues into ARM's 400 with every issue as a detail", async () => {
    const { cloud } = harness({ schema: validateArmBodyForArmType });
    await put(cloud, RG, API_VERSIONS.resources, { location: "uksouth" });
    const e = armError(() => cloud.put(`${NET}/publicIPAddresses/p1`, N, { location: "uksouth", properties: { publicIPAllocationMethod: "Sometimes", idleTimeoutInMinute: 4 } }));
    expect(e.status).toBe(400);
    expect(e.details.map((d) => d.target)).toEqual(expect.arrayContaining(["properties.publicIPAllocationMethod", "properties.idleTimeoutInMinute"]));
    expect(cloud.all().map((r) => r.name)).toEqual(["rg1"]); // nothing stored
  });

  it("resolves references first: missing → InvalidResourceReference; still provisioning → ReferencedResourceNotProvisioned", async () => {
    const { cloud } = harness({ delay: 40 });
    await network(cloud);
    expect(armError(() => cloud.put(`${NET}/networkInterfaces/n1`, N, nic("n1", "198.18.0.4", { publicIPAddress: { id: `${NET}/publicIPAddresses/nope` } }))).code).toBe("InvalidResourceReference");
    cloud.put(`${NET}/publicIPAddresses/p2`, N, { location: "uksouth", sku: { name: "Standard" }, properties: { publicIPAllocationMethod: "Static" } });
    const e = armError(() => cloud.put(`${NET}/networkInterfaces/n1`, N, nic("n1", "198.18.0.4", { publicIPAddress: { id: `${NET}/publicIPAddresses/p2` } })));
    expect(e.code).toBe("ReferencedResourceNotProvisioned");
    expect(e.message).toContain("Creating");
    await cloud.idle();
  });

  it("plays one operation at a time per VNet: a second subnet waits (AnotherOperationInProgress), and a peering to a VNet whose subnet is being made fails", async () => {
    const { cloud } = harness({ delay: 40 });
    await put(cloud, RG, API_VERSIONS.resources, { location: "uksouth" });
    await put(cloud, `${NET}/virtualNetworks/a`, N, { location: "uksouth", properties: { addressSpace: { addressPrefixes: ["198.18.0.0/20"] } } });
    await put(cloud, `${NET}/virtualNetworks/b`, N, { location: "uksouth", properties: { addressSpace: { addressPrefixes: ["198.18.16.0/20"] } } });
    cloud.put(`${NET}/virtualNetworks/b/subnets/s0`, N, { properties: { addressPrefix: "198.18.16.0/24" } });
    expect(armError(() => cloud.put(`${NET}/virtualNetworks/b/subnets/s1`, N, { properties: { addressPrefix: "198.18.17.0/24" } }))).toMatchObject({ status: 409, code: "AnotherOperationInProgress" });
    expect(cloud.read(`${NET}/virtualNetworks/b`)).toMatchObject({ properties: { provisioningState: "Updating" } });
    expect(armError(() => cloud.put(`${NET}/virtualNetworks/a/virtualNetworkPeerings/to-b`, N, { properties: { remoteVirtualNetwork: { id: `${NET}/virtualNetworks/b` } } })).code).toBe("ReferencedResourceNotProvisioned");
    await cloud.idle();
    expect(cloud.read(`${NET}/virtualNetworks/b`)).toMatchObject({ properties: { provisioningState: "Succeeded" } });
    // Serialised as latlab's program now does it: one peering, then the other.
    await put(cloud, `${NET}/virtualNetworks/a/virtualNetworkPeerings/to-b`, N, { properties: { remoteVirtualNetwork: { id: `${NET}/virtualNetworks/b` } } });
    expect(cloud.read(`${NET}/virtualNetworks/a/virtualNetworkPeerings/to-b`)).toMatchObject({ properties: { peeringState: "Initiated" } });
    await put(cloud, `${NET}/virtualNetworks/b/virtualNetworkPeerings/to-a`, N, { properties: { remoteVirtualNetwork: { id: `${NET}/virtualNetworks/a` } } });
    expect(cloud.read(`${NET}/virtualNetworks/a/virtualNetworkPeerings/to-b`)).toMatchObject({ properties: { peeringState: "Connected" } });
    expect(cloud.read(`${NET}/virtualNetworks/b/virtualNetworkPeerings/to-a`)).toMatchObject({ properties: { peeringState: "Connected" } });
    // One side deleted: the other is Disconnected, and stays so when the first is made again (Azure wants both remade).
    cloud.delete(`${NET}/virtualNetworks/b/virtualNetworkPeerings/to-a`, N);
    await cloud.idle();
    expect(cloud.read(`${NET}/virtualNetworks/a/virtualNetworkPeerings/to-b`)).toMatchObject({ properties: { peeringState: "Disconnected" } });
    await put(cloud, `${NET}/virtualNetworks/b/virtualNetworkPeerings/to-a`, N, { properties: { remoteVirtualNetwork: { id: `${NET}/virtualNetworks/a` } } });
    expect(cloud.read(`${NET}/virtualNetworks/b/virtualNetworkPeerings/to-a`)).toMatchObject({ properties: { peeringState: "Initiated" } });
    expect(cloud.read(`${NET}/virtualNetworks/a/virtualNetworkPeerings/to-b`)).toMatchObject({ properties: { peeringState: "Disconnected" } });
  });

  it("deleting one peering disconnects only its way back, not another VNet's peering to the same VNet", async () => {
    const { cloud } = harness();
    await put(cloud, RG, API_VERSIONS.resources, { location: "uksouth" });
    const vnets = { a: "198.18.0.0/20", b: "198.18.16.0/20", c: "198.18.32.0/20" };
    for (const [n, p] of Object.entries(vnets)) await put(cloud, `${NET}/virtualNetworks/${n}`, N, { location: "uksouth", properties: { addressSpace: { addressPrefixes: [p] } } });
    const peer = (from: string, to: string) => put(cloud, `${NET}/virtualNetworks/${from}/virtualNetworkPeerings/to-${to}`, N, { properties: { remoteVirtualNetwork: { id: `${NET}/virtualNetworks/${to}` } } });
    for (const [f, t] of [["a", "b"], ["b", "a"], ["a", "c"], ["c", "a"]] as const) await peer(f, t);
    cloud.delete(`${NET}/virtualNetworks/a/virtualNetworkPeerings/to-b`, N);
    await cloud.idle();
    const state = (f: string, t: string) => (cloud.read(`${NET}/virtualNetworks/${f}/virtualNetworkPeerings/to-${t}`) as { properties: { peeringState: string } }).properties.peeringState;
    expect(state("b", "a")).toBe("Disconnected");
    expect(state("c", "a")).toBe("Connected");
    expect(state("a", "c")).toBe("Connected");
  });

  it("will not delete a resource group while something in it is still being created", async () => {
    const { cloud } = harness({ delay: 40 });
    await put(cloud, RG, API_VERSIONS.resources, { location: "uksouth" });
    cloud.put(`${NET}/networkSecurityGroups/g1`, N, { location: "uksouth", properties: { securityRules: [] } });
    expect(armError(() => cloud.delete(RG, API_VERSIONS.resources))).toMatchObject({ status: 409, code: "AnotherOperationInProgress" });
    await cloud.idle();
    expect(cloud.delete(RG, API_VERSIONS.resources).status).toBe(202);
    await cloud.idle();
  });

  it("an operation whose effect cannot be put into the kernel fails (it is not reported Succeeded)", async () => {
    const rules = createTypeRules({
      schemaCheck: () => [],
      network: { allocatePublicIp: () => "198.19.255.8", releasePublicIp: () => undefined, addressSpaceProblem: () => undefined },
      vm: { startVm: async () => undefined, stopVm: async () => undefined },
    });
    const cloud = new Cloud({ subscription: SUB, rules, delays: { default: 5 }, onChange: async () => { throw new Error("nft: syntax error"); } });
    const r = cloud.put(RG, API_VERSIONS.resources, { location: "uksouth" });
    await cloud.idle();
    expect(cloud.operation(r.operation)).toMatchObject({ status: "Failed", error: { code: "InternalServerError", message: expect.stringContaining("nft: syntax error") } });
    expect(cloud.read(RG)).toMatchObject({ properties: { provisioningState: "Failed" } });
  });

  it("checks addresses as the network RP does: subnet inside its VNet, no overlap, a static address inside the subnet, not reserved, not taken; overlapping VNets cannot peer", async () => {
    const { cloud } = harness();
    await network(cloud);
    expect(armError(() => cloud.put(`${NET}/virtualNetworks/v1/subnets/s9`, N, { properties: { addressPrefix: "198.18.99.0/24" } })).code).toBe("NetcfgSubnetRangeOutsideVnet");
    expect(armError(() => cloud.put(`${NET}/virtualNetworks/v1/subnets/s9`, N, { properties: { addressPrefix: "198.18.0.128/25" } })).code).toBe("NetcfgSubnetRangesOverlap");
    expect(armError(() => cloud.put(`${NET}/networkInterfaces/n1`, N, nic("n1", "198.18.1.4"))).code).toBe("PrivateIPAddressNotInSubnet");
    expect(armError(() => cloud.put(`${NET}/networkInterfaces/n1`, N, nic("n1", "198.18.0.2"))).code).toBe("PrivateIPAddressIsReserved");
    await put(cloud, `${NET}/networkInterfaces/n1`, N, nic("n1", "198.18.0.4"));
    expect(armError(() => cloud.put(`${NET}/networkInterfaces/n2`, N, nic("n2", "198.18.0.4"))).code).toBe("PrivateIPAddressInUse");
    expect(armError(() => cloud.put(`${NET}/virtualNetworks/v2`, N, { location: "uksouth", properties: { addressSpace: { addressPrefixes: ["10.10.0.0/16"] } } })).code).toBe("InvalidAddressPrefix");
    await put(cloud, `${NET}/virtualNetworks/v3`, N, { location: "uksouth", properties: { addressSpace: { addressPrefixes: ["198.18.0.0/22"] } } });
    expect(armError(() => cloud.put(`${NET}/virtualNetworks/v1/virtualNetworkPeerings/p`, N, { properties: { remoteVirtualNetwork: { id: `${NET}/virtualNetworks/v3` } } })).code).toBe("VnetAddressSpacesOverlap");
    // A dynamic address is the first free one from .4 on.
    await put(cloud, `${NET}/networkInterfaces/n3`, N, { location: "uksouth", properties: { ipConfigurations: [{ name: "c", properties: { subnet: { id: `${NET}/virtualNetworks/v1/subnets/s0` } } }] } });
    expect(cloud.read(`${NET}/networkInterfaces/n3`)).toMatchObject({ properties: { ipConfigurations: [{ properties: { privateIPAddress: "198.18.0.5" } }] } });
  });

  it("applies the compute platform's rules: Accelerated Networking only on sizes with it, PPG zone, availability set without zones, NIC and VM in one region", async () => {
    // B1s is the size without Accelerated Networking the catalog plays; a new subscription may not deploy it (previous generation).
    const { cloud } = harness({ capacity: parseCapacity('{"profile":"unrestricted"}') });
    await network(cloud);
    await put(cloud, `${NET}/networkInterfaces/fast`, N, { ...nic("fast", "198.18.0.4"), properties: { ...nic("fast", "198.18.0.4").properties, enableAcceleratedNetworking: true } });
    expect(armError(() => cloud.put(`${COMPUTE}/virtualMachines/b1`, C, vm("fast", {}, "Standard_B1s"))).code).toBe("VMSizeIsNotPermittedToEnableAcceleratedNetworking");
    expect(armError(() => cloud.put(`${COMPUTE}/virtualMachines/big`, C, vm("fast", {}, "Standard_Z99")))).toMatchObject({ code: "InvalidParameter" });

    await put(cloud, `${COMPUTE}/proximityPlacementGroups/ppg`, C, { location: "uksouth", zones: ["2"] });
    expect(armError(() => cloud.put(`${COMPUTE}/virtualMachines/v`, C, vm("fast", { proximityPlacementGroup: { id: `${COMPUTE}/proximityPlacementGroups/ppg` } }))).message).toContain("pinned to zone 2");

    await put(cloud, `${COMPUTE}/availabilitySets/as`, C, { location: "uksouth", sku: { name: "Aligned" }, properties: { platformFaultDomainCount: 2 } });
    expect(armError(() => cloud.put(`${COMPUTE}/virtualMachines/v`, C, vm("fast", { availabilitySet: { id: `${COMPUTE}/availabilitySets/as` } }))).message).toContain("availability set and an availability zone");

    expect(armError(() => cloud.put(`${COMPUTE}/virtualMachines/v`, C, { ...vm("fast"), location: "ukwest", zones: [] })).message).toContain("same location");
    expect(armError(() => cloud.put(`${COMPUTE}/virtualMachines/v`, C, { ...vm("fast"), location: "ukwest" })).message).toContain("does not support availability zones");
    const badPath = vm("fast");
    (badPath.properties.osProfile.linuxConfiguration.ssh.publicKeys[0] as { path: string }).path = "/root/.ssh/authorized_keys";
    expect(armError(() => cloud.put(`${COMPUTE}/virtualMachines/v`, C, badPath)).message).toContain("limited to its default value");
  });

  it("keeps a PPG in one zone: a second VM in another zone is refused", async () => {
    const { cloud, started } = harness();
    await network(cloud);
    await put(cloud, `${COMPUTE}/proximityPlacementGroups/ppg`, C, { location: "uksouth" });
    await put(cloud, `${NET}/networkInterfaces/a`, N, nic("a", "198.18.0.4"));
    await put(cloud, `${NET}/networkInterfaces/b`, N, nic("b", "198.18.0.5"));
    const ppg = { proximityPlacementGroup: { id: `${COMPUTE}/proximityPlacementGroups/ppg` } };
    await put(cloud, `${COMPUTE}/virtualMachines/a`, C, vm("a", ppg));
    expect(started).toEqual(["a"]);
    expect(armError(() => cloud.put(`${COMPUTE}/virtualMachines/b`, C, { ...vm("b", ppg), zones: ["2"] })).message).toContain("members are in zone 1");
  });

  it("never returns customData on GET, nor keeps it in the state it persists (latlab's holds a private key)", async () => {
    const { cloud } = harness();
    await network(cloud);
    await put(cloud, `${NET}/networkInterfaces/a`, N, nic("a", "198.18.0.4"));
    await put(cloud, `${COMPUTE}/virtualMachines/a`, C, vm("a"));
    const got = cloud.read(`${COMPUTE}/virtualMachines/a`) as { properties: { osProfile: Record<string, unknown>; vmId: string } };
    expect(got.properties.osProfile).not.toHaveProperty("customData");
    expect(got.properties.osProfile.adminUsername).toBe("latlab");
    expect(got.properties.vmId).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.stringify(cloud.snapshot())).not.toContain("I2Nsb3VkLWNvbmZpZw==");
    expect(cloud.get(`${COMPUTE}/virtualMachines/a`)!.secrets).toEqual({ customData: "I2Nsb3VkLWNvbmZpZw==" });
  });
});

describe("the emulator's ARM: deletes", () => {
  it("refuses to delete what is in use, takes a NIC along with its VM (deleteOption Delete), and answers 204 for what is gone", async () => {
    const { cloud, stopped } = harness();
    await network(cloud);
    await put(cloud, `${NET}/networkInterfaces/a`, N, nic("a", "198.18.0.4", { publicIPAddress: { id: `${NET}/publicIPAddresses/p1` } }));
    await put(cloud, `${COMPUTE}/virtualMachines/a`, C, vm("a"));
    expect(armError(() => cloud.delete(`${NET}/virtualNetworks/v1/subnets/s0`, N)).code).toBe("InUseSubnetCannotBeDeleted");
    expect(armError(() => cloud.delete(`${NET}/networkInterfaces/a`, N)).code).toBe("NicInUse");
    expect(armError(() => cloud.delete(`${NET}/publicIPAddresses/p1`, N)).code).toBe("InUsePublicIpAddressCannotBeDeleted");
    expect(armError(() => cloud.delete(`${NET}/networkSecurityGroups/g1`, N)).code).toBe("InUseNetworkSecurityGroupCannotBeDeleted");
    expect(armError(() => cloud.delete(`${NET}/virtualNetworks/v1`, N)).code).toBe("InUseSubnetCannotBeDeleted");

    const d = cloud.delete(`${COMPUTE}/virtualMachines/a`, C);
    expect(d.status).toBe(202);
    await cloud.idle();
    expect(stopped).toEqual(["a"]);
    expect(cloud.get(`${NET}/networkInterfaces/a`)).toBeUndefined();
    expect(cloud.delete(`${NET}/networkInterfaces/a`, N)).toEqual({ status: 204 });
    cloud.delete(`${NET}/virtualNetworks/v1/subnets/s0`, N);
    await cloud.idle();
    expect(cloud.get(`${NET}/virtualNetworks/v1/subnets/s0`)).toBeUndefined();
  });

  it("deletes a resource group with everything in it, users before what they use", async () => {
    const { cloud, stopped } = harness();
    await network(cloud);
    await put(cloud, `${NET}/networkInterfaces/a`, N, nic("a", "198.18.0.4"));
    await put(cloud, `${COMPUTE}/virtualMachines/a`, C, vm("a"));
    cloud.delete(RG, API_VERSIONS.resources);
    await cloud.idle();
    expect(cloud.all()).toEqual([]);
    expect(stopped).toEqual(["a"]);
    const completions = cloud.log.filter((e) => e.method === "complete" && e.outcome === "Deleted").map((e) => e.name);
    expect(completions.indexOf("a")).toBeLessThan(completions.indexOf("s0"));
  });
});

describe("the emulator's ARM: faults on request", () => {
  it("SkuNotAvailable and QuotaExceeded refuse the PUT (409); nothing is stored", async () => {
    for (const code of ["SkuNotAvailable", "QuotaExceeded"] as const) {
      const { cloud, started } = harness({ faults: [{ kind: "create-error", type: "Microsoft.Compute/virtualMachines", code }] });
      await network(cloud);
      await put(cloud, `${NET}/networkInterfaces/a`, N, nic("a", "198.18.0.4"));
      expect(armError(() => cloud.put(`${COMPUTE}/virtualMachines/a`, C, vm("a")))).toMatchObject({ status: 409, code });
      expect(cloud.get(`${COMPUTE}/virtualMachines/a`)).toBeUndefined();
      expect(started).toEqual([]);
      expect(cloud.faultReport()[0]!.fired).toBe(1);
    }
  });

  it("AllocationFailed is accepted, then the operation fails and the VM stays in ARM as Failed (until deleted)", async () => {
    const { cloud, started } = harness({ faults: [{ kind: "create-error", type: "Microsoft.Compute/virtualMachines", code: "AllocationFailed", name: "server" }] });
    await network(cloud);
    await put(cloud, `${NET}/networkInterfaces/a`, N, nic("a", "198.18.0.4"));
    await put(cloud, `${NET}/networkInterfaces/b`, N, nic("b", "198.18.0.5"));
    await put(cloud, `${COMPUTE}/virtualMachines/client`, C, vm("a"));
    const r = await put(cloud, `${COMPUTE}/virtualMachines/server`, C, vm("b"));
    expect(r.status).toBe(201);
    expect(r.op).toMatchObject({ status: "Failed", error: { code: "AllocationFailed" } });
    expect(cloud.read(`${COMPUTE}/virtualMachines/server`)).toMatchObject({ properties: { provisioningState: "Failed" } });
    expect(started).toEqual(["client"]);
  });

  it("a delete conflict fires as often as asked, then the delete goes through", async () => {
    const { cloud } = harness({ faults: [{ kind: "delete-conflict", type: "Microsoft.Network/networkSecurityGroups", times: 2 }] });
    await network(cloud);
    expect(armError(() => cloud.delete(`${NET}/networkSecurityGroups/g1`, N))).toMatchObject({ status: 409, code: "Conflict" });
    expect(armError(() => cloud.delete(`${NET}/networkSecurityGroups/g1`, N)).code).toBe("Conflict");
    expect(cloud.delete(`${NET}/networkSecurityGroups/g1`, N).status).toBe(202);
    await cloud.idle();
    expect(cloud.get(`${NET}/networkSecurityGroups/g1`)).toBeUndefined();
  });
});

describe("the emulator's ARM: the kernel follows before an operation is reported done", () => {
  it("calls onChange while the operation is still InProgress, and reports Succeeded only after it", async () => {
    const seen: string[] = [];
    const rules = createTypeRules({
      schemaCheck: () => [],
      network: { allocatePublicIp: () => "198.19.255.8", releasePublicIp: () => undefined, addressSpaceProblem: () => undefined },
      vm: { startVm: async () => undefined, stopVm: async () => undefined },
    });
    let opId = "";
    const cloud = new Cloud({
      subscription: SUB,
      rules,
      delays: { default: 5 },
      onChange: async (view) => {
        seen.push(`${cloud.operation(opId).status}:${view.get(RG)?.state}`);
      },
    });
    opId = cloud.put(RG, API_VERSIONS.resources, { location: "uksouth" }).operation;
    await cloud.idle();
    expect(seen).toEqual(["InProgress:Succeeded"]);
    expect(cloud.operation(opId).status).toBe("Succeeded");
  });
});

describe("the emulator's ARM: its record", () => {
  it("logs every request and every completion, in order", async () => {
    const { cloud } = harness();
    await put(cloud, RG, API_VERSIONS.resources, { location: "uksouth" });
    armError(() => cloud.put(`${NET}/virtualNetworks/v1`, N, { location: "uksouth", properties: { addressSpace: { addressPrefixes: [] } } }));
    cloud.delete(RG, API_VERSIONS.resources);
    await cloud.idle();
    expect(cloud.log.map((e) => [e.method, e.name, e.outcome])).toEqual([
      ["PUT", "rg1", "Accepted"],
      ["complete", "rg1", "Succeeded"],
      ["PUT", "v1", "InvalidAddressSpace"],
      ["DELETE", "rg1", "Accepted"],
      ["complete", "rg1", "Succeeded"],
    ]);
  });

  it("resumes from a snapshot; what was in flight when the last emulator stopped is Failed", async () => {
    const first = harness({ delay: 50 });
    await put(first.cloud, RG, API_VERSIONS.resources, { location: "uksouth" });
    first.cloud.put(`${NET}/virtualNetworks/v1`, N, { location: "uksouth", properties: { addressSpace: { addressPrefixes: ["198.18.0.0/20"] } } });
    const snapshot = first.cloud.snapshot();
    await first.cloud.idle();
    const second = harness({ snapshot });
    expect(second.cloud.read(RG)).toMatchObject({ properties: { provisioningState: "Succeeded" } });
    expect(second.cloud.read(`${NET}/virtualNetworks/v1`)).toMatchObject({ properties: { provisioningState: "Failed" } });
  });
});

describe("the emulator's ARM: the subscription's quotas and sizes (issue 9)", () => {
  it("refuses a VM past a family's vCPU quota with Azure's OperationNotAllowed and its figures; nothing is stored", async () => {
    const { cloud, started } = harness({ capacity: parseCapacity(JSON.stringify({ limits: { standardDSv5Family: 4 } })) });
    await network(cloud);
    await put(cloud, `${NET}/networkInterfaces/a`, N, nic("a", "198.18.0.4"));
    await put(cloud, `${NET}/networkInterfaces/b`, N, nic("b", "198.18.0.5"));
    await put(cloud, `${COMPUTE}/virtualMachines/a`, C, vm("a", {}, "Standard_D4s_v5"));
    const e = armError(() => cloud.put(`${COMPUTE}/virtualMachines/b`, C, vm("b", {}, "Standard_D2s_v5")));
    expect(e).toMatchObject({ status: 409, code: "OperationNotAllowed" });
    expect(e.message).toContain("exceeding approved standardDSv5Family Cores quota");
    expect(e.message).toContain("Location: uksouth, Current Limit: 4, Current Usage: 4, Additional Required: 2, (Minimum) New Limit Required: 6");
    expect(cloud.get(`${COMPUTE}/virtualMachines/b`)).toBeUndefined();
    expect(started).toEqual(["a"]);
  });

  it("refuses a size restricted in one zone there only (SkuNotAvailable), and serves usages and SKUs latlab's own check reads", async () => {
    const capacity = parseCapacity(JSON.stringify({ limits: { cores: 3 }, restricted: [{ size: "Standard_D2s_v5", region: "uksouth", zones: ["1"] }] }));
    const { cloud } = harness({ capacity });
    await network(cloud);
    await put(cloud, `${NET}/networkInterfaces/a`, N, nic("a", "198.18.0.4"));
    expect(armError(() => cloud.put(`${COMPUTE}/virtualMachines/a`, C, vm("a")))).toMatchObject({ status: 409, code: "SkuNotAvailable" });
    await put(cloud, `${COMPUTE}/virtualMachines/a`, C, vm("a", {}, "Standard_D2_v5"));

    const usages = UsageListSchema.parse(usagesOf(cloud, "uksouth", capacity)).value;
    expect(usages.find((u) => u.name.value === "cores")).toMatchObject({ currentValue: 2, limit: 3 });
    // A family without a configured limit has the default profile's (a new subscription's 20).
    expect(usages.find((u) => u.name.value === "standardDv5Family")).toMatchObject({ currentValue: 2, limit: NEW_SUBSCRIPTION_PROFILE.familyVcpus, name: { localizedValue: "Standard Dv5 Family vCPUs" } });
    const skus = ResourceSkuListSchema.parse(skusOf("uksouth", capacity)).value;
    // The plan needs 2 more vCPUs of Standard_D2s_v5 in zone 1: both the restriction and the total quota are reported.
    const need: RegionNeed = { region: "uksouth", totalVcpus: 2, families: [{ family: "standardDSv5Family", vcpus: 2, sizes: [{ size: "Standard_D2s_v5", vcpusEach: 2, count: 1, zones: ["1"] }] }] };
    const issues = checkCapacity([need], { uksouth: usages }, { uksouth: skus });
    expect(issues.map((i) => i.kind).sort()).toEqual(["quota", "size-unavailable"]);
  });

  it("routes the two list APIs, and nothing else", () => {
    const q = (s: string) => new URLSearchParams(s);
    expect(capacityRoute(`/subscriptions/${SUB}/providers/Microsoft.Compute/locations/NorthEurope/usages`, q("api-version=2024-11-01"))).toEqual({ kind: "usages", region: "northeurope" });
    expect(capacityRoute(`/subscriptions/${SUB}/providers/Microsoft.Compute/skus`, q("$filter=location eq 'uksouth'"))).toEqual({ kind: "skus", region: "uksouth" });
    expect(capacityRoute(`${COMPUTE}/virtualMachines/a`, q(""))).toBeUndefined();
    expect(() => parseCapacity('{"limits":{"cores":-1}}')).toThrow(/LATLAB_EMULATOR_CAPACITY: \[limits.cores\]/);
  });
});

describe("the emulator's ARM: a VM boots only what its size boots (image generation, disk controller)", () => {
  const image = (sku: string) => ({ publisher: "Canonical", offer: "ubuntu-24_04-lts", sku, version: "latest" });
  const storage = (sku: string, diskControllerType?: string) => ({ storageProfile: { imageReference: image(sku), osDisk: { createOption: "FromImage" }, ...(diskControllerType ? { diskControllerType } : {}) } });

  it("refuses a v6 size (generation 2 only, NVMe only, as Azure's SKU data says) with a generation-1 image, or with SCSI, as Azure does", async () => {
    const { cloud } = harness();
    await network(cloud);
    await put(cloud, `${NET}/networkInterfaces/n1`, N, nic("n1", "198.18.0.4"));
    const gen1 = armError(() => cloud.put(`${COMPUTE}/virtualMachines/v6a`, C, vm("n1", storage("server-gen1", "NVMe"), "Standard_D2as_v6")));
    expect(gen1.code).toBe("BadRequest");
    expect(gen1.message).toMatch(/^The selected VM size 'Standard_D2as_v6' cannot boot Hypervisor Generation '1'\. If this was a Create operation please check that the Hypervisor Generation of the Image matches/);
    // No diskControllerType is SCSI, Azure's default: an NVMe-only size cannot boot it.
    for (const controller of [undefined, "SCSI"]) {
      const scsi = armError(() => cloud.put(`${COMPUTE}/virtualMachines/v6b`, C, vm("n1", storage("server", controller), "Standard_D2as_v6")));
      expect(scsi.code).toBe("InvalidParameter");
      expect(scsi.message).toMatch(/^The VM size 'Standard_D2as_v6' cannot boot with DiskControllerType 'SCSI'\. Please check that the disk controller type provided is one of the supported disk controller types/);
    }
    await put(cloud, `${COMPUTE}/virtualMachines/v6c`, C, vm("n1", storage("server", "NVMe"), "Standard_D2as_v6"));
    expect(cloud.read(`${COMPUTE}/virtualMachines/v6c`)).toMatchObject({ properties: { provisioningState: "Succeeded" } });
  });

  it("refuses NVMe on a SCSI-only size and a generation-2 image on a generation-1-only size", async () => {
    const { cloud } = harness({ capacity: parseCapacity('{"profile":"unrestricted"}') });
    await network(cloud);
    await put(cloud, `${NET}/networkInterfaces/n1`, N, nic("n1", "198.18.0.4"));
    expect(armError(() => cloud.put(`${COMPUTE}/virtualMachines/a`, C, vm("n1", storage("server", "NVMe"), "Standard_D2s_v5"))).message).toMatch(/cannot boot with DiskControllerType 'NVMe'/);
    expect(armError(() => cloud.put(`${COMPUTE}/virtualMachines/b`, C, vm("n1", storage("server"), "Standard_D3_v2"))).message).toMatch(/cannot boot Hypervisor Generation '2'/);
  });
});
