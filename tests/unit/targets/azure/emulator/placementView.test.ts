import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startArmServer } from "../../../../../src/targets/azure/emulator/arm/armServer.ts";
import { Cloud } from "../../../../../src/targets/azure/emulator/arm/cloud.ts";
import { FaultSchema, parseFaults, type Fault } from "../../../../../src/targets/azure/emulator/arm/faults.ts";
import { API_VERSIONS, createTypeRules } from "../../../../../src/targets/azure/emulator/arm/typeRules.ts";
import { overSocket } from "../../../../../src/targets/azure/emulator/rehearsal.ts";
import { readPlacementEvidence } from "../../../../../src/targets/azure/lifecycle/placementEvidence.ts";
import { planOf } from "../helpers.ts";

const SUB = "00000000-0000-4000-8000-000000000001";
const RG = `/subscriptions/${SUB}/resourceGroups/rg1`;
const NET = `${RG}/providers/Microsoft.Network`;
const COMPUTE = `${RG}/providers/Microsoft.Compute`;
const PPG = `${COMPUTE}/proximityPlacementGroups/ppg`;
const N = API_VERSIONS.network;
const C = API_VERSIONS.compute;
const CLIENT_KEY = `ssh-rsa ${"A".repeat(300)} test`;

function cloudWith(faults: Fault[] = []) {
  const rules = createTypeRules({
    schemaCheck: () => [],
    network: { allocatePublicIp: () => "198.19.255.9", releasePublicIp: () => undefined, addressSpaceProblem: () => undefined },
    vm: { startVm: async () => undefined, stopVm: async () => undefined },
  });
  return new Cloud({ subscription: SUB, rules, faults, delays: { default: 2 } });
}

async function put(cloud: Cloud, id: string, api: string, body: unknown) {
  cloud.put(id, api, body);
  await cloud.idle();
}

/** A group, a subnet, a PPG pinned to zone 1 with two VMs in it (a and b) and one VM outside it (c). */
async function deployed(cloud: Cloud) {
  await put(cloud, RG, API_VERSIONS.resources, { location: "eastus" });
  await put(cloud, `${NET}/virtualNetworks/v1`, N, { location: "eastus", properties: { addressSpace: { addressPrefixes: ["198.18.0.0/20"] } } });
  await put(cloud, `${NET}/virtualNetworks/v1/subnets/s0`, N, { properties: { addressPrefix: "198.18.0.0/24" } });
  await put(cloud, PPG, C, { location: "eastus", zones: ["1"], properties: { proximityPlacementGroupType: "Standard", intent: { vmSizes: ["Standard_D2s_v5"] } } });
  for (const [i, name] of ["a", "b", "c"].entries()) {
    await put(cloud, `${NET}/networkInterfaces/${name}`, N, { location: "eastus", properties: { ipConfigurations: [{ name: "ipconfig1", properties: { privateIPAllocationMethod: "Static", privateIPAddress: `198.18.0.${4 + i}`, subnet: { id: `${NET}/virtualNetworks/v1/subnets/s0` } } }] } });
    await put(cloud, `${COMPUTE}/virtualMachines/${name}`, C, {
      location: "eastus",
      zones: ["1"],
      properties: {
        hardwareProfile: { vmSize: "Standard_D2s_v5" },
        osProfile: { computerName: `host-${name}`, adminUsername: "latlab", linuxConfiguration: { disablePasswordAuthentication: true, ssh: { publicKeys: [{ path: "/home/latlab/.ssh/authorized_keys", keyData: CLIENT_KEY }] } } },
        networkProfile: { networkInterfaces: [{ id: `${NET}/networkInterfaces/${name}`, properties: { primary: true } }] },
        ...(name === "c" ? {} : { proximityPlacementGroup: { id: PPG } }),
      },
    });
  }
}

const withStatus = new URLSearchParams("api-version=2024-11-01&includeColocationStatus=true");

describe("the emulator's ARM: placement evidence", () => {
  it("a PPG's GET with includeColocationStatus=true: Aligned with its members, in Azure's recorded words; without it, as before", async () => {
    const cloud = cloudWith();
    await deployed(cloud);
    const got = cloud.read(PPG, withStatus) as { properties: Record<string, unknown> };
    expect(got.properties.colocationStatus).toEqual({ code: "ColocationStatus/Aligned", level: "Info", displayStatus: "Aligned", message: "All resources in the proximity placement group are aligned." });
    expect(got.properties.virtualMachines).toEqual([
      { id: `${COMPUTE}/virtualMachines/a`, colocationStatus: expect.objectContaining({ code: "ColocationStatus/Aligned" }) },
      { id: `${COMPUTE}/virtualMachines/b`, colocationStatus: expect.objectContaining({ code: "ColocationStatus/Aligned" }) },
    ]);
    const plain = cloud.read(PPG, new URLSearchParams("api-version=2024-11-01")) as { properties: Record<string, unknown> };
    expect(plain.properties.colocationStatus).toBeUndefined();
    expect(plain.properties.virtualMachines).toBeUndefined();
    expect((cloud.read(PPG) as { properties: Record<string, unknown> }).properties.colocationStatus).toBeUndefined();
  });

  it("the ppg-not-aligned fault: NotAligned, its last member called out; `name` and `times` narrow it; from LATLAB_EMULATOR_FAULTS without a type", async () => {
    const [fault] = parseFaults('[{"kind":"ppg-not-aligned","name":"pp","times":1}]');
    expect(fault).toEqual({ kind: "ppg-not-aligned", type: "Microsoft.Compute/proximityPlacementGroups", name: "pp", times: 1 });
    expect(FaultSchema.safeParse({ kind: "ppg-not-aligned", zone: "2" }).success).toBe(false);
    const cloud = cloudWith([fault!]);
    await deployed(cloud);
    const got = cloud.read(PPG, withStatus) as { properties: { colocationStatus: { code: string; level: string; displayStatus: string }; virtualMachines: { id: string; colocationStatus: { code: string } }[] } };
    expect(got.properties.colocationStatus).toMatchObject({ code: "ColocationStatus/NotAligned", level: "Warning", displayStatus: "Not Aligned" });
    expect(got.properties.virtualMachines.map((m) => [m.id.split("/").pop(), m.colocationStatus.code])).toEqual([
      ["a", "ColocationStatus/Aligned"],
      ["b", "ColocationStatus/NotAligned"],
    ]);
    // times: 1 — the next read is Aligned again.
    expect((cloud.read(PPG, withStatus) as typeof got).properties.colocationStatus.code).toBe("ColocationStatus/Aligned");
    const other = cloudWith([FaultSchema.parse({ kind: "ppg-not-aligned", name: "another" })]);
    await deployed(other);
    expect((other.read(PPG, withStatus) as typeof got).properties.colocationStatus.code).toBe("ColocationStatus/Aligned");
  });

  it("a VM's instance view: fault and update domains, computer name, provisioning and power state; 404 for a VM that is not there", async () => {
    const cloud = cloudWith();
    await deployed(cloud);
    expect(cloud.instanceView(`${COMPUTE}/virtualMachines/b`)).toEqual({
      platformUpdateDomain: 0,
      platformFaultDomain: 0,
      computerName: "host-b",
      statuses: [
        { code: "ProvisioningState/succeeded", level: "Info", displayStatus: "Provisioning succeeded", time: expect.any(String) },
        { code: "PowerState/running", level: "Info", displayStatus: "VM running" },
      ],
    });
    expect(() => cloud.instanceView(`${COMPUTE}/virtualMachines/zz`)).toThrow(/was not found/);
    expect(() => cloud.instanceView(PPG)).toThrow(/has no instanceView/);
  });

  describe("over the ARM socket, read by latlab's own reader", () => {
    let dir: string | undefined;
    afterEach(() => {
      if (dir) rmSync(dir, { recursive: true, force: true });
      dir = undefined;
    });

    it("serves GET …?includeColocationStatus=true and GET …/instanceView as Azure's paths, and the reader records them", async () => {
      const cloud = cloudWith([FaultSchema.parse({ kind: "ppg-not-aligned" })]);
      await deployed(cloud);
      dir = mkdtempSync(join(tmpdir(), "latlab-placement-"));
      const server = await startArmServer(cloud, join(dir, "arm.sock"), () => ({ subscription: SUB }));
      try {
        // The PPG variant's deployment: its client is VM a, its server VM b.
        const plan = planOf({ name: "p", axes: { ppg: [false, true] }, baseline: { ppg: false }, defaults: { region: "eastus", zone: "1", size: "Standard_D2s_v5", accelnet: true } } as never);
        const d = plan.deployments.find((x) => x.hosts.every((h) => h.ppg))!;
        const vmOf = (role: string) => (role === "client" ? "a" : "b");
        const outputs = {
          resourceGroup: "rg1",
          hosts: d.hosts.map((h) => ({ deployment: d.id, role: h.role, publicIp: "", privateIp: "", hostKey: "", vmName: vmOf(h.role), vmId: `${COMPUTE}/virtualMachines/${vmOf(h.role)}`, ppgId: PPG })),
        };
        const e = await readPlacementEvidence({ ...plan, deployments: [d] }, outputs, { http: overSocket(server.socketPath), token: async () => "rehearsal", source: "emulator" });
        expect(e[`${d.id}/server`]).toMatchObject({ source: "emulator", ppg: { name: "ppg", status: "NotAligned", member: { code: "ColocationStatus/NotAligned" } }, vm: { name: "b", read: "ok", platformFaultDomain: 0, powerState: "running" } });
        expect(e[`${d.id}/client`]!.ppg).toMatchObject({ status: "NotAligned", member: { code: "ColocationStatus/Aligned" } });
        // A VM the emulator does not hold: ARM's 404, recorded, not thrown.
        const missing = await readPlacementEvidence({ ...plan, deployments: [d] }, { ...outputs, hosts: outputs.hosts.map((h) => ({ ...h, vmId: `${COMPUTE}/virtualMachines/gone-${h.role}` })) }, { http: overSocket(server.socketPath), token: async () => "rehearsal" });
        expect(missing[`${d.id}/client`]!.vm).toMatchObject({ read: "failed", reason: expect.stringMatching(/HTTP 404 ResourceNotFound/) });
      } finally {
        await server.close();
      }
    });
  });
});
