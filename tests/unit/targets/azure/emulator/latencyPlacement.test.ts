import { describe, expect, it } from "vitest";
import { Cloud, type StoredResource } from "../../../../../src/targets/azure/emulator/arm/cloud.ts";
import { API_VERSIONS, createTypeRules, TYPES } from "../../../../../src/targets/azure/emulator/arm/typeRules.ts";
import { C, COMPUTE, N, NET, RG, SUB } from "./armTestIds.ts";
import { modelEntriesUsed, shapingHostsOf, vmModelRtt, vmPathKind, vmPlacementOf, type VmPlacement } from "../../../../../src/targets/azure/emulator/fabric/latencyPlacement.ts";
import { modelRtt, regionPairRtt } from "../../../../../src/targets/local/model/latencyModel.ts";
import { oneWaySpread, rttDistribution } from "../../../../../src/targets/local/model/latencySpread.ts";
import { pathKindBetween } from "../../../../../src/targets/local/network/topology.ts";

/**
 * A rehearsal's VMs get the latency latlab's model gives their placement (fabric/latencyPlacement.ts):
 * the path kind read from what the emulator's ARM holds (location, zone, PPG — the VM's own or its
 * availability set's —, availability set, VNet), by the local target's own rule, and Accelerated
 * Networking from the primary NIC. ARM here is the emulator's, with its real type rules: a
 * placement Azure would refuse (a VM in a set and a zone) cannot be made.
 */

const KEY = `ssh-rsa ${"A".repeat(300)} test`;

function harness() {
  let ip = 8;
  const rules = createTypeRules({
    schemaCheck: () => [],
    network: { allocatePublicIp: () => `198.19.255.${ip++}`, releasePublicIp: () => undefined, addressSpaceProblem: () => undefined },
    vm: { startVm: async () => undefined, stopVm: async () => undefined },
  });
  return new Cloud({ subscription: SUB, rules, faults: [], delays: { default: 1 } });
}

async function put(cloud: Cloud, id: string, api: string, body: unknown) {
  cloud.put(id, api, body);
  await cloud.idle();
  const r = cloud.get(id);
  if (r?.state !== "Succeeded") throw new Error(`${id}: ${r?.state} ${JSON.stringify(r?.error)}`);
}

/** VNet `name` in `region` on 198.18.<n>.0/24, with subnet s0. */
async function vnet(cloud: Cloud, name: string, region: string, n: number) {
  await put(cloud, `${NET}/virtualNetworks/${name}`, N, { location: region, properties: { addressSpace: { addressPrefixes: [`198.18.${n}.0/24`] } } });
  await put(cloud, `${NET}/virtualNetworks/${name}/subnets/s0`, N, { properties: { addressPrefix: `198.18.${n}.0/24` } });
}

interface VmAsk {
  region?: string;
  vnet?: string;
  zone?: string;
  ppg?: string;
  avset?: string;
  accelnet?: boolean;
  publicIp?: boolean;
}

let host = 10;
async function vm(cloud: Cloud, name: string, ask: VmAsk = {}): Promise<StoredResource> {
  const region = ask.region ?? "eastus";
  const net = ask.vnet ?? "v1";
  if (ask.publicIp) await put(cloud, `${NET}/publicIPAddresses/${name}-pip`, N, { location: region, sku: { name: "Standard" }, properties: { publicIPAllocationMethod: "Static" } });
  const subnet = cloud.get(`${NET}/virtualNetworks/${net}/subnets/s0`)!;
  const prefix = String((subnet.body.properties as { addressPrefix: string }).addressPrefix);
  await put(cloud, `${NET}/networkInterfaces/${name}-nic`, N, {
    location: region,
    properties: {
      enableAcceleratedNetworking: ask.accelnet ?? false,
      ipConfigurations: [
        {
          name: "ipconfig1",
          properties: {
            privateIPAllocationMethod: "Static",
            privateIPAddress: prefix.replace(/\.0\/24$/, `.${host++}`),
            subnet: { id: subnet.id },
            ...(ask.publicIp ? { publicIPAddress: { id: `${NET}/publicIPAddresses/${name}-pip` } } : {}),
          },
        },
      ],
    },
  });
  await put(cloud, `${COMPUTE}/virtualMachines/${name}`, C, {
    location: region,
    ...(ask.zone ? { zones: [ask.zone] } : {}),
    properties: {
      hardwareProfile: { vmSize: "Standard_D2s_v5" },
      osProfile: { computerName: name, adminUsername: "latlab", linuxConfiguration: { disablePasswordAuthentication: true, ssh: { publicKeys: [{ path: "/home/latlab/.ssh/authorized_keys", keyData: KEY }] } } },
      networkProfile: { networkInterfaces: [{ id: `${NET}/networkInterfaces/${name}-nic`, properties: { primary: true } }] },
      ...(ask.ppg ? { proximityPlacementGroup: { id: `${COMPUTE}/proximityPlacementGroups/${ask.ppg}` } } : {}),
      ...(ask.avset ? { availabilitySet: { id: `${COMPUTE}/availabilitySets/${ask.avset}` } } : {}),
    },
  });
  return cloud.get(`${COMPUTE}/virtualMachines/${name}`)!;
}

function placed(cloud: Cloud, vmRes: StoredResource): VmPlacement {
  const p = vmPlacementOf(vmRes, cloud, `ns-${vmRes.name}`, "eth0");
  if ("problem" in p) throw new Error(p.problem);
  return p;
}

async function pair(build: (cloud: Cloud) => Promise<[StoredResource, StoredResource]>): Promise<[VmPlacement, VmPlacement]> {
  const cloud = harness();
  await put(cloud, RG, API_VERSIONS.resources, { location: "eastus" });
  const [a, b] = await build(cloud);
  return [placed(cloud, a), placed(cloud, b)];
}

describe("a rehearsal VM pair's path kind, from the emulator's ARM", () => {
  it("one zone, no PPG: same-zone (ppg-vs-zone's baseline), the model's figure for it", async () => {
    const [a, b] = await pair(async (cloud) => {
      await vnet(cloud, "v1", "eastus", 0);
      return [await vm(cloud, "a", { zone: "1", accelnet: true }), await vm(cloud, "b", { zone: "1", accelnet: true })];
    });
    expect(a).toMatchObject({ region: "eastus", zone: "1", ppg: null, availabilitySet: null, accelnet: true, size: "Standard_D2s_v5", namespace: "ns-a", dev: "eth0" });
    expect(vmPathKind(a, b)).toBe("same-zone");
    expect(vmModelRtt(a, b).rttUs).toBe(modelRtt("same-zone", true, true).rttUs);
  });

  it("one zone, one PPG: same-ppg (ppg-vs-zone's candidate); 62 µs less than same-zone with Accelerated Networking", async () => {
    const [a, b] = await pair(async (cloud) => {
      await vnet(cloud, "v1", "eastus", 0);
      await put(cloud, `${COMPUTE}/proximityPlacementGroups/ppg`, C, { location: "eastus", zones: ["1"], properties: { proximityPlacementGroupType: "Standard" } });
      return [await vm(cloud, "a", { zone: "1", ppg: "ppg", accelnet: true }), await vm(cloud, "b", { zone: "1", ppg: "ppg", accelnet: true })];
    });
    expect(a.ppg).toBe(`${COMPUTE}/proximityPlacementGroups/ppg`.toLowerCase());
    expect(vmPathKind(a, b)).toBe("same-ppg");
    expect(modelRtt("same-zone", true, true).rttUs - vmModelRtt(a, b).rttUs).toBe(62);
  });

  it("two zones: cross-zone", async () => {
    const [a, b] = await pair(async (cloud) => {
      await vnet(cloud, "v1", "eastus", 0);
      return [await vm(cloud, "a", { zone: "1" }), await vm(cloud, "b", { zone: "2" })];
    });
    expect(vmPathKind(a, b)).toBe("cross-zone");
    expect(vmModelRtt(a, b).rttUs).toBe(1425);
  });

  it("an availability set in a PPG: its VMs are in the PPG (same-ppg); a set without one is only the region (same-region)", async () => {
    const [a, b] = await pair(async (cloud) => {
      await vnet(cloud, "v1", "eastus", 0);
      await put(cloud, `${COMPUTE}/proximityPlacementGroups/ppg`, C, { location: "eastus", properties: { proximityPlacementGroupType: "Standard" } });
      await put(cloud, `${COMPUTE}/availabilitySets/as`, C, { location: "eastus", sku: { name: "Aligned" }, properties: { platformFaultDomainCount: 2, proximityPlacementGroup: { id: `${COMPUTE}/proximityPlacementGroups/ppg` } } });
      return [await vm(cloud, "a", { avset: "as" }), await vm(cloud, "b", { avset: "as" })];
    });
    expect(a).toMatchObject({ zone: null, availabilitySet: `${COMPUTE}/availabilitySets/as`.toLowerCase(), ppg: `${COMPUTE}/proximityPlacementGroups/ppg`.toLowerCase() });
    expect(vmPathKind(a, b)).toBe("same-ppg");

    const [c, d] = await pair(async (cloud) => {
      await vnet(cloud, "v1", "eastus", 0);
      await put(cloud, `${COMPUTE}/availabilitySets/as`, C, { location: "eastus", sku: { name: "Aligned" }, properties: { platformFaultDomainCount: 2 } });
      return [await vm(cloud, "c", { avset: "as" }), await vm(cloud, "d", { avset: "as" })];
    });
    expect(vmPathKind(c, d)).toBe("same-region");
    expect(vmModelRtt(c, d).rttUs).toBe(313);
  });

  it("a PPG across two VNets of one region is still the PPG's latency (a peering adds none), as on the local target", async () => {
    const [a, b] = await pair(async (cloud) => {
      await vnet(cloud, "v1", "eastus", 0);
      await vnet(cloud, "v2", "eastus", 1);
      await put(cloud, `${COMPUTE}/proximityPlacementGroups/ppg`, C, { location: "eastus", properties: { proximityPlacementGroupType: "Standard" } });
      return [await vm(cloud, "a", { zone: "1", ppg: "ppg", vnet: "v1" }), await vm(cloud, "b", { zone: "1", ppg: "ppg", vnet: "v2" })];
    });
    expect(a.vnet).not.toBe(b.vnet);
    expect(vmPathKind(a, b)).toBe("same-ppg");
  });

  it("two regions: cross-region, at Microsoft's published figure for the pair (model's regionPairRtt)", async () => {
    const [a, b] = await pair(async (cloud) => {
      await vnet(cloud, "v1", "uksouth", 0);
      await vnet(cloud, "v2", "ukwest", 1);
      return [await vm(cloud, "a", { region: "uksouth", vnet: "v1" }), await vm(cloud, "b", { region: "ukwest", vnet: "v2" })];
    });
    expect([a.region, b.region]).toEqual(["uksouth", "ukwest"]);
    expect(vmPathKind(a, b)).toBe("cross-region");
    expect(vmModelRtt(a, b)).toMatchObject({ rttUs: regionPairRtt("uksouth", "ukwest").rttUs, source: regionPairRtt("uksouth", "ukwest").source });
  });

  it("Accelerated Networking on one NIC only: the pair takes the row without it", async () => {
    const [a, b] = await pair(async (cloud) => {
      await vnet(cloud, "v1", "eastus", 0);
      return [await vm(cloud, "a", { zone: "1", accelnet: true }), await vm(cloud, "b", { zone: "1", accelnet: false })];
    });
    expect([a.accelnet, b.accelnet]).toEqual([true, false]);
    expect(vmModelRtt(a, b)).toMatchObject({ pathKind: "same-zone", accelnet: false, rttUs: 850 });
  });

  it("the mapping agrees with the local target's pathKindBetween on every placement the experiments use", () => {
    const base: VmPlacement = { vmKey: "a", vmName: "a", namespace: "a", dev: "eth0", region: "eastus", zone: "1", ppg: null, availabilitySet: null, vnet: "v", accelnet: false, size: "Standard_D2s_v5", privateAddress: "198.18.0.10" };
    const cases: Partial<VmPlacement>[] = [{}, { zone: "2" }, { ppg: "p" }, { zone: null }, { zone: null, availabilitySet: "s" }, { region: "westus" }, { vnet: "w" }];
    for (const ca of cases) {
      for (const cb of cases) {
        const a = { ...base, ...ca };
        const b = { ...base, vmKey: "b", ...cb };
        const host = (p: VmPlacement) => ({ role: p.vmName, region: p.region, zone: p.zone, ppg: p.ppg, availabilitySet: p.availabilitySet, size: p.size, accelnet: p.accelnet, vnet: p.vnet });
        expect(vmPathKind(a, b), JSON.stringify([ca, cb])).toBe(pathKindBetween(host(a), host(b)));
      }
    }
  });
});

describe("what the fabric hands applyShaping for a rehearsal's VMs", () => {
  it("each VM delays its packets to every other VM's private and public address by half the pair's modelled RTT; no bandwidth cap", async () => {
    const cloud = harness();
    await put(cloud, RG, API_VERSIONS.resources, { location: "eastus" });
    await vnet(cloud, "v1", "eastus", 0);
    await put(cloud, `${COMPUTE}/proximityPlacementGroups/ppg`, C, { location: "eastus", zones: ["1"], properties: { proximityPlacementGroupType: "Standard" } });
    const vms = [await vm(cloud, "a", { zone: "1", ppg: "ppg", publicIp: true }), await vm(cloud, "b", { zone: "1", ppg: "ppg" }), await vm(cloud, "c", { zone: "2", publicIp: true })].map((r) => placed(cloud, r));
    const hosts = shapingHostsOf(vms, "/tmp/logs");
    expect(hosts.map((h) => [h.namespace, h.dev, h.capMbit, h.logDir])).toEqual([
      ["ns-a", "eth0", null, "/tmp/logs"],
      ["ns-b", "eth0", null, "/tmp/logs"],
      ["ns-c", "eth0", null, "/tmp/logs"],
    ]);
    const pip = (name: string) => String((cloud.get(`${NET}/publicIPAddresses/${name}-pip`)!.body.properties as { ipAddress: string }).ipAddress);
    expect(hosts[1]!.peers).toMatchObject([
      { peerRole: "a", address: vms[0]!.privateAddress, publicAddress: pip("a"), pathKind: "same-ppg", rttUs: 788, egressDelayUs: 394 },
      { peerRole: "c", address: vms[2]!.privateAddress, publicAddress: pip("c"), pathKind: "cross-zone", rttUs: 1425, egressDelayUs: 713 },
    ]);
    expect(hosts[0]!.peers.map((p) => [p.peerRole, p.publicAddress])).toEqual([["b", undefined], ["c", pip("c")]]);
    // Jitter as the local target draws it (shaping.ts peerDelays): the pair's spread, half each way.
    const crossZone = modelRtt("cross-zone", false, false);
    const spread = rttDistribution(crossZone.rttUs, crossZone.spread);
    expect(hosts[1]!.peers[1]!.egressSpread).toEqual(spread ? oneWaySpread(spread) : undefined);
    expect(modelEntriesUsed(vms).map((m) => m.pathKind).sort()).toEqual(["cross-zone", "same-ppg"]);
    expect(cloud.all(TYPES.vm)).toHaveLength(3);
  });
});
