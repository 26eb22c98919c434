// The fabric keeps latlab's latency model applied between the VMs it has booted (fabric.ts,
// vmShaping.ts): against a kernel played by a fake `ip` that accepts everything, and shaping
// functions that record what they are asked, as the emulator's ARM creates and deletes VMs.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Cloud } from "../../../../../src/targets/azure/emulator/arm/cloud.ts";
import { API_VERSIONS, createTypeRules } from "../../../../../src/targets/azure/emulator/arm/typeRules.ts";
import { C, COMPUTE, N, NET, RG, SUB } from "./armTestIds.ts";
import { Fabric } from "../../../../../src/targets/azure/emulator/fabric/fabric.ts";
import type { ShapingFunctions } from "../../../../../src/targets/azure/emulator/fabric/vmShaping.ts";
import { rehearsalShapingStatus } from "../../../../../src/targets/azure/emulator/rehearsalShaping.ts";
import { ShapingStatusSchema } from "../../../../../src/results/schema.ts";
import type { ExecFn } from "../../../../../src/targets/local/exec.ts";
import type { HostShaping, ShapingSupport } from "../../../../../src/targets/local/network/latencyShaping.ts";

const KEY = `ssh-rsa ${"A".repeat(300)} test`;
const work = mkdtempSync(join(tmpdir(), "latlab-fabric-shaping-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** `ip netns add/del/list` keep a set; every other command succeeds without output. */
function fakeKernel(events: string[]) {
  const namespaces = new Set<string>();
  const exec: ExecFn = async (argv) => {
    const [, a, b, c] = argv;
    // The delay line's rules are applyShaping's stop() to take out (latencyShaping.test.ts): the fabric taking them out too would show here.
    if (argv.includes("-D") && argv.includes("POSTROUTING")) events.push(`unrule ${argv[3]}`);
    if (a === "netns" && b === "list") return { code: 0, stdout: [...namespaces].join("\n"), stderr: "" };
    if (a === "netns" && b === "add" && c) namespaces.add(c);
    if (a === "netns" && b === "del" && c) namespaces.delete(c);
    return { code: 0, stdout: "", stderr: "" };
  };
  return { exec, namespaces };
}

function harness(support: Partial<ShapingSupport> = {}) {
  const events: string[] = [];
  const applied: HostShaping[][] = [];
  const kernel = fakeKernel(events);
  const shaping: ShapingFunctions = {
    detect: async (_exec, probe) => {
      events.push(`detect in ${probe} (${kernel.namespaces.has(probe) ? "made" : "missing"})`);
      return { netem: false, tbf: true, delayLine: { available: true, binary: "/x/latlab-delayline" }, ...support };
    },
    apply: async (_exec, s, hosts) => {
      events.push(`apply ${hosts.map((h) => h.namespace).join(" ")}`);
      applied.push([...hosts]);
      const mechanism = s.netem ? "netem" : s.delayLine.available ? "delay-line" : null;
      return {
        latency: mechanism,
        capApplied: new Map(),
        label: mechanism === "delay-line" ? "delay line, ±120 µs at p99" : (mechanism ?? "shaping: unavailable — neither netem nor the delay line"),
        helpers: [],
        stop: async () => {
          events.push(`stop ${hosts.map((h) => h.namespace).join(" ")}`);
          return [];
        },
      };
    },
  };
  const fabric = new Fabric({
    short: "t9",
    stateDir: work,
    exec: kernel.exec,
    shaping,
    vms: {
      boot: async (r) => void events.push(`boot ${r.namespace}`),
      stop: async (ns) => {
        events.push(`vm stop ${ns}`);
        return { errors: [], removed: [] };
      },
    },
  });
  const rules = createTypeRules({ schemaCheck: () => [], network: fabric, vm: fabric });
  const cloud = new Cloud({ subscription: SUB, rules, faults: [], delays: { default: 1 }, onChange: (view) => fabric.sync(view) });
  return { cloud, fabric, events, applied, kernel };
}

async function put(cloud: Cloud, id: string, api: string, body: unknown) {
  cloud.put(id, api, body);
  await cloud.idle();
  const r = cloud.get(id);
  if (r?.state !== "Succeeded") throw new Error(`${id}: ${r?.state} ${JSON.stringify(r?.error)}`);
}

async function network(cloud: Cloud) {
  await put(cloud, RG, API_VERSIONS.resources, { location: "eastus" });
  await put(cloud, `${NET}/virtualNetworks/v1`, N, { location: "eastus", properties: { addressSpace: { addressPrefixes: ["198.18.0.0/24"] } } });
  await put(cloud, `${NET}/virtualNetworks/v1/subnets/s0`, N, { properties: { addressPrefix: "198.18.0.0/24" } });
}

async function vm(cloud: Cloud, name: string, n: number, zone: string) {
  await put(cloud, `${NET}/networkInterfaces/${name}-nic`, N, {
    location: "eastus",
    properties: { enableAcceleratedNetworking: true, ipConfigurations: [{ name: "ipconfig1", properties: { privateIPAllocationMethod: "Static", privateIPAddress: `198.18.0.${10 + n}`, subnet: { id: `${NET}/virtualNetworks/v1/subnets/s0` } } }] },
  });
  await put(cloud, `${COMPUTE}/virtualMachines/${name}`, C, {
    location: "eastus",
    zones: [zone],
    properties: {
      hardwareProfile: { vmSize: "Standard_D2s_v5" },
      osProfile: { computerName: name, adminUsername: "latlab", linuxConfiguration: { disablePasswordAuthentication: true, ssh: { publicKeys: [{ path: "/home/latlab/.ssh/authorized_keys", keyData: KEY }] } } },
      networkProfile: { networkInterfaces: [{ id: `${NET}/networkInterfaces/${name}-nic`, properties: { primary: true } }] },
    },
  });
  return cloud.get(`${COMPUTE}/virtualMachines/${name}`)!.seq;
}

describe("the emulator's fabric applies the latency model between its VMs", () => {
  it("once two VMs are up (after each boot, before ARM says created), again when a third comes, and stops a VM's shaping before the VM", async () => {
    const { cloud, fabric, events, applied, kernel } = harness();
    await network(cloud);
    const a = await vm(cloud, "a", 0, "1");
    expect(fabric.shapingState()).toMatchObject({ latency: null, vms: 1 });
    const b = await vm(cloud, "b", 1, "2");
    const ns = (seq: number) => `azt9-vm${seq}`;
    expect(events).toEqual([`boot ${ns(a)}`, `boot ${ns(b)}`, "detect in azt9-probe (made)", `apply ${ns(a)} ${ns(b)}`]);
    expect(kernel.namespaces.has("azt9-probe")).toBe(false);
    // ARM's placement (zones 1 and 2, Accelerated Networking on both NICs): cross-zone.
    expect(applied[0]!.map((h) => [h.namespace, h.dev, h.peers.map((p) => [p.address, p.pathKind, p.rttUs])])).toEqual([
      [ns(a), "eth0", [["198.18.0.11", "cross-zone", 1425 - 662]]],
      [ns(b), "eth0", [["198.18.0.10", "cross-zone", 1425 - 662]]],
    ]);
    // No host address: the delay line's precision pings would hinge on the VMs' NSGs; the stated precision is said.
    expect(applied[0]!.every((h) => h.address === undefined)).toBe(true);
    expect(fabric.shapingState()).toMatchObject({ latency: "delay-line", label: "delay line, precision not measured in a rehearsal (stated: p50 within ±200 µs)", vms: 2, model: [{ pathKind: "cross-zone", accelnet: true, rttUs: 763 }] });

    events.length = 0;
    const c = await vm(cloud, "c", 2, "1");
    // The previous shaping stopped (its stop() takes its rules out before its helpers), then the new one applied.
    expect(events).toEqual([`boot ${ns(c)}`, `stop ${ns(a)} ${ns(b)}`, `apply ${ns(a)} ${ns(b)} ${ns(c)}`]);
    expect(applied.at(-1)!.find((h) => h.namespace === ns(a))!.peers.map((p) => p.pathKind)).toEqual(["cross-zone", "same-zone"]);

    // A change ARM makes elsewhere (another resource's sync) leaves unchanged shaping alone.
    events.length = 0;
    await put(cloud, `${NET}/networkSecurityGroups/nsg`, N, { location: "eastus", properties: { securityRules: [] } });
    expect(events).toEqual([]);

    events.length = 0;
    cloud.delete(`${COMPUTE}/virtualMachines/c`, C);
    await cloud.idle();
    expect(events).toEqual([`stop ${ns(a)} ${ns(b)} ${ns(c)}`, `apply ${ns(a)} ${ns(b)}`, `vm stop ${ns(c)}`]);

    events.length = 0;
    const report = await fabric.shutdown();
    expect(events.slice(0, 1)).toEqual([`stop ${ns(a)} ${ns(b)}`]);
    expect(report.removed).toContain("latency shaping between the VMs");
    expect(report.errors).toEqual([]);
  });

  it("neither netem nor the delay line: nothing is applied and the state says why", async () => {
    const { cloud, fabric } = harness({ netem: false, delayLine: { available: false, reason: "no gcc" } });
    await network(cloud);
    await vm(cloud, "a", 0, "1");
    await vm(cloud, "b", 1, "1");
    expect(fabric.shapingState()).toMatchObject({ latency: null, vms: 2, reason: expect.stringMatching(/unavailable/) });
  });
});

describe("a rehearsal's shaping in results.json", () => {
  it("applied: latency applied (modelled) with its mechanism and the model's entries; otherwise unavailable, saying why", async () => {
    const { cloud, fabric } = harness();
    await network(cloud);
    await vm(cloud, "a", 0, "1");
    await vm(cloud, "b", 1, "1");
    const applied = ShapingStatusSchema.parse(rehearsalShapingStatus(fabric.shapingState()));
    expect(applied).toMatchObject({ latency: "applied", mechanism: "delay-line", bandwidth: "unavailable", model: [{ pathKind: "same-zone", accelnet: true, rttUs: 188 }] });
    expect(applied.note).toMatch(/^rehearsal: .*; latency: applied \(modelled, delay line, precision not measured in a rehearsal \(stated: p50 within ±200 µs\)\) — latlab's latency model between the VMs by their placement in ARM .*not measured on Azure/);

    const none = harness({ netem: false, delayLine: { available: false, reason: "no gcc" } });
    await network(none.cloud);
    await vm(none.cloud, "a", 0, "1");
    await vm(none.cloud, "b", 1, "1");
    const unavailable = ShapingStatusSchema.parse(rehearsalShapingStatus(none.fabric.shapingState()));
    expect(unavailable).toMatchObject({ latency: "unavailable", bandwidth: "unavailable" });
    expect(unavailable).not.toHaveProperty("mechanism");
    expect(unavailable.note).toMatch(/^rehearsal: .*latency model not applied \(.*unavailable.*\).*not Azure's/);
  });
});
