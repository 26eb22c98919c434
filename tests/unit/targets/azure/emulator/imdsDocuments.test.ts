import { describe, expect, it } from "vitest";
import { Cloud } from "../../../../../src/targets/azure/emulator/arm/cloud.ts";
import { API_VERSIONS, createTypeRules } from "../../../../../src/targets/azure/emulator/arm/typeRules.ts";
import { C, COMPUTE, N, NET, RG, SUB } from "./armTestIds.ts";
import { imdsDocuments } from "../../../../../src/targets/azure/emulator/fabric/fabric.ts";
import { parseAzureProbe } from "../../../../../src/targets/azure/access/probe.ts";

/**
 * The IMDS compute document the emulator serves inside a VM (fabric.ts imdsDocuments, from what
 * ARM's VM rules put in the VM's runtime at acceptance), as each VM boots: fault and update
 * domains round-robin within an availability set, in order of creation, as Microsoft's
 * "Availability sets overview" describes update domains ("the sixth virtual machine is placed into
 * the same update domain as the first virtual machine, the seventh in the same update domain as
 * the second virtual machine, and so on"; MicrosoftDocs/azure-compute-docs,
 * articles/virtual-machines/availability-set-overview.md); "0" / "0" outside one.
 */

const KEY = `ssh-rsa ${"A".repeat(300)} test`;

type Compute = Record<string, unknown>;

function harness() {
  const booted = new Map<string, Compute>();
  const rules = createTypeRules({
    schemaCheck: () => [],
    network: { allocatePublicIp: () => "198.19.255.8", releasePublicIp: () => undefined, addressSpaceProblem: () => undefined },
    vm: {
      async startVm(vm, view) {
        const ref = ((vm.body.properties as { networkProfile: { networkInterfaces: { id: string }[] } }).networkProfile.networkInterfaces[0]!).id;
        booted.set(vm.name, imdsDocuments(vm, view.get(ref)!, view).compute);
      },
      async stopVm() {},
    },
  });
  const cloud = new Cloud({ subscription: SUB, rules, faults: [], delays: { default: 1 } });
  return { cloud, booted };
}

async function put(cloud: Cloud, id: string, api: string, body: unknown) {
  cloud.put(id, api, body);
  await cloud.idle();
}

async function network(cloud: Cloud) {
  await put(cloud, RG, API_VERSIONS.resources, { location: "uksouth" });
  await put(cloud, `${NET}/virtualNetworks/v1`, N, { location: "uksouth", properties: { addressSpace: { addressPrefixes: ["198.18.0.0/20"] } } });
  await put(cloud, `${NET}/virtualNetworks/v1/subnets/s0`, N, { properties: { addressPrefix: "198.18.0.0/24" } });
}

/** A NIC and a VM on it; `avset` puts the VM in that availability set (then regional: a set and a zone exclude each other). */
async function vm(cloud: Cloud, name: string, n: number, avset?: string) {
  await put(cloud, `${NET}/networkInterfaces/${name}-nic`, N, {
    location: "uksouth",
    properties: { ipConfigurations: [{ name: "ipconfig1", properties: { privateIPAllocationMethod: "Static", privateIPAddress: `198.18.0.${10 + n}`, subnet: { id: `${NET}/virtualNetworks/v1/subnets/s0` } } }] },
  });
  await put(cloud, `${COMPUTE}/virtualMachines/${name}`, C, {
    location: "uksouth",
    ...(avset ? { zones: [] } : { zones: ["2"] }),
    properties: {
      hardwareProfile: { vmSize: "Standard_D2s_v5" },
      osProfile: { computerName: name, adminUsername: "latlab", linuxConfiguration: { disablePasswordAuthentication: true, ssh: { publicKeys: [{ path: "/home/latlab/.ssh/authorized_keys", keyData: KEY }] } } },
      networkProfile: { networkInterfaces: [{ id: `${NET}/networkInterfaces/${name}-nic`, properties: { primary: true } }] },
      ...(avset ? { availabilitySet: { id: `${COMPUTE}/availabilitySets/${avset}` } } : {}),
    },
  });
}

const domains = (c: Compute | undefined) => [c?.platformFaultDomain, c?.platformUpdateDomain];

describe("the emulator's IMDS compute document: fault and update domains", () => {
  it("a VM outside an availability set: \"0\" / \"0\" (strings, as IMDS gives every primitive), and no scale-set placement group", async () => {
    const { cloud, booted } = harness();
    await network(cloud);
    await vm(cloud, "solo", 1);
    const doc = booted.get("solo")!;
    expect(domains(doc)).toEqual(["0", "0"]);
    expect(doc).toMatchObject({ zone: "2", placementGroupId: "", vmSize: "Standard_D2s_v5", location: "uksouth" });
  });

  it("VMs of an availability set (2 fault, 5 update domains) spread round-robin in order of creation", async () => {
    const { cloud, booted } = harness();
    await network(cloud);
    await put(cloud, `${COMPUTE}/availabilitySets/as`, C, { location: "uksouth", sku: { name: "Aligned" }, properties: { platformFaultDomainCount: 2, platformUpdateDomainCount: 5 } });
    const names = ["a", "b", "c", "d", "e", "f", "g"];
    for (const [i, name] of names.entries()) await vm(cloud, name, i, "as");
    expect(names.map((n) => domains(booted.get(n)))).toEqual([
      ["0", "0"],
      ["1", "1"],
      ["0", "2"],
      ["1", "3"],
      ["0", "4"],
      ["1", "0"], // the sixth shares the first's update domain
      ["0", "1"],
    ]);
  });

  it("each availability set counts its own VMs; its counts bound the domains (3 fault domains, the default 5 update domains)", async () => {
    const { cloud, booted } = harness();
    await network(cloud);
    await put(cloud, `${COMPUTE}/availabilitySets/three`, C, { location: "uksouth", sku: { name: "Aligned" }, properties: { platformFaultDomainCount: 3 } });
    await put(cloud, `${COMPUTE}/availabilitySets/other`, C, { location: "uksouth", sku: { name: "Aligned" }, properties: { platformFaultDomainCount: 2, platformUpdateDomainCount: 2 } });
    await vm(cloud, "t0", 0, "three");
    await vm(cloud, "o0", 1, "other");
    await vm(cloud, "t1", 2, "three");
    await vm(cloud, "solo", 3);
    await vm(cloud, "t2", 4, "three");
    await vm(cloud, "t3", 5, "three");
    await vm(cloud, "o1", 6, "other");
    expect(["t0", "t1", "t2", "t3"].map((n) => domains(booted.get(n)))).toEqual([
      ["0", "0"],
      ["1", "1"],
      ["2", "2"],
      ["0", "3"],
    ]);
    expect(["o0", "o1", "solo"].map((n) => domains(booted.get(n)))).toEqual([
      ["0", "0"],
      ["1", "1"],
      ["0", "0"],
    ]);
  });

  it("what the probe makes of the emulator's document: faultDomain / updateDomain as numbers", async () => {
    const { cloud, booted } = harness();
    await network(cloud);
    await put(cloud, `${COMPUTE}/availabilitySets/as`, C, { location: "uksouth", sku: { name: "Aligned" }, properties: { platformFaultDomainCount: 2 } });
    await vm(cloud, "a", 0, "as");
    await vm(cloud, "b", 1, "as");
    const stdout = JSON.stringify({ curlExit: 0, imds: Buffer.from(JSON.stringify(booted.get("b"))).toString("base64"), nics: [{ name: "eth0", driver: "", master: "" }], kvp: { path: "", state: "missing", size: 0, data: "" } });
    expect(parseAzureProbe(stdout)).toMatchObject({ region: "uksouth", zone: null, size: "Standard_D2s_v5", faultDomain: 1, updateDomain: 1, physicalHost: null, physicalHostSource: "unavailable" });
    expect(parseAzureProbe(stdout)).not.toHaveProperty("probeError");
  });
});
