import * as pulumi from "@pulumi/pulumi";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Plan } from "../../../../../src/plan/types.ts";
import { sizeFacts, vmBoot } from "../../../../../src/targets/azure/catalog/sizes/sizeFacts.ts";
import { listAzureResources, type AzureListing, type ListedResource } from "../../../../../src/targets/azure/program/listing.ts";
import { planRegions, planVnets, vnetKey, vnetName } from "../../../../../src/targets/azure/program/network.ts";
import { hostName, type AzureSettings } from "../../../../../src/targets/azure/program/types.ts";
import { worstCaseRun } from "../../../../../src/targets/azure/catalog/validateAzure.ts";
import { SSH_FROM, planOf, settingsFor, shippedExperimentPlans } from "../helpers.ts";

const T = {
  rg: "azure-native:resources:ResourceGroup",
  vnet: "azure-native:network:VirtualNetwork",
  subnet: "azure-native:network:Subnet",
  peering: "azure-native:network:VirtualNetworkPeering",
  nsg: "azure-native:network:NetworkSecurityGroup",
  pip: "azure-native:network:PublicIPAddress",
  nic: "azure-native:network:NetworkInterface",
  ppg: "azure-native:compute:ProximityPlacementGroup",
  avset: "azure-native:compute:AvailabilitySet",
  vm: "azure-native:compute:VirtualMachine",
};
/** Types whose Azure API takes no `location` (they live inside a VNet). */
const NO_LOCATION = new Set([T.subnet, T.peering]);
const UNTAGGED = new Set([T.subnet, T.peering]);
const OPEN = ["*", "0.0.0.0/0", "0.0.0.0", "Internet", "Any", "::/0"];

type Inputs = Record<string, any>;
const of = (l: AzureListing, type: string) => l.resources.filter((r) => r.type === type);
const named = (l: AzureListing, type: string, name: string): ListedResource => {
  const found = l.resources.filter((r) => r.type === type && r.name === name);
  expect(found, `${type} ${name}`).toHaveLength(1);
  return found[0]!;
};

/** Everything the issue asks of the resource graph, checked against the plan it came from. */
function checkGraph(plan: Plan, settings: AzureSettings, l: AzureListing) {
  const prefix = `latlab-${settings.runId}`;
  const regions = planRegions(plan);

  // Resource group per run: tags, and a TTL longer than the worst case.
  const rgs = of(l, T.rg);
  expect(rgs.map((r) => r.name)).toEqual([prefix]);
  const tags = (rgs[0]!.inputs as Inputs).tags;
  expect(tags).toEqual({ owner: "latlab", runId: settings.runId, experiment: plan.experiment.name, createdAt: settings.createdAt.toISOString(), expiresAt: settings.expiresAt.toISOString() });
  expect((Date.parse(tags.expiresAt) - Date.parse(tags.createdAt)) / 1000).toBeGreaterThan(worstCaseRun(plan).seconds);
  expect(l.outputs.resourceGroup).toBe(prefix);

  // Location on everything that has one; run tags on everything taggable.
  for (const r of l.resources) {
    if (!NO_LOCATION.has(r.type)) expect(regions, `${r.type} ${r.name} location`).toContain(r.location);
    if (!UNTAGGED.has(r.type)) expect((r.inputs as Inputs).tags, `${r.type} ${r.name} tags`).toMatchObject(tags);
  }

  // One VNet per region and VNet name, named as before VNets could be named when unnamed; non-overlapping /16s.
  const vnets = of(l, T.vnet);
  const wantedVnets = planVnets(plan);
  expect(vnets.map((v) => [v.name, v.location]).sort()).toEqual(wantedVnets.map((v) => [`${prefix}-vnet-${v.region}${v.vnet === null ? "" : `-${v.vnet}`}`, v.region]).sort());
  const prefixes = vnets.map((v) => (v.inputs as Inputs).addressPrefixes[0] as string);
  expect(new Set(prefixes).size).toBe(prefixes.length);
  for (const p of prefixes) expect(p).toMatch(/^10\.\d+\.0\.0\/16$/);

  // Peering both ways for every VNet pair a deployment spans (two VNets of one region too); none otherwise.
  const wanted = new Set<string>();
  for (const d of plan.deployments) {
    const vs = [...new Set(d.hosts.map((h) => vnetName(prefix, vnetKey(h))))];
    for (const a of vs) for (const b of vs) if (a !== b) wanted.add(`${a}>${b}`);
  }
  const peerings = of(l, T.peering).map((p) => `${(p.inputs as Inputs).virtualNetwork}>${(p.inputs as Inputs).remoteVirtualNetwork}`);
  expect(new Set(peerings)).toEqual(wanted);
  expect(peerings).toHaveLength(wanted.size);
  for (const p of of(l, T.peering)) expect((p.inputs as Inputs).allowVirtualNetworkAccess).toBe(true);

  const outputs = new Map(l.outputs.hosts.map((h) => [`${h.deployment}/${h.role}`, h]));
  const clientIps = new Set<string>();
  for (const d of plan.deployments) for (const h of d.hosts) {
    const o = outputs.get(`${d.id}/${h.role}`)!;
    clientIps.add(`${o.privateIp}/32`);
    clientIps.add(`${o.publicIp}/32`);
  }

  for (const d of plan.deployments) {
    for (const h of d.hosts) {
      const host = hostName(d.index, h.role);
      const vm = named(l, T.vm, `${prefix}-${host}`).inputs as Inputs;
      const nic = named(l, T.nic, `${prefix}-${host}-nic`).inputs as Inputs;
      const pip = named(l, T.pip, `${prefix}-${host}-pip`).inputs as Inputs;
      const nsg = named(l, T.nsg, `${prefix}-${host}-nsg`).inputs as Inputs;
      const out = outputs.get(`${d.id}/${h.role}`)!;

      expect(vm.size).toBe(h.size);
      expect(vm.zones).toEqual(h.zone ? [h.zone] : null);
      const boot = vmBoot(sizeFacts(h.size));
      expect(vm.image).toBe(`Canonical:ubuntu-24_04-lts:${boot.generation === 2 ? "server" : "server-gen1"}:latest`);
      expect(vm.diskControllerType).toBe(boot.diskControllerType);
      expect(vm.computerName).toBe(host);
      expect(vm.adminUsername).toBe(settings.adminUsername);
      expect(vm.passwordAuthentication).toBe(false);
      expect(vm.customData).toMatch(/^\[secret: cloud-init, \d+ base64 characters, not shown\]$/);
      expect(vm.networkInterfaces).toEqual([`${prefix}-${host}-nic`]);

      // Accelerated Networking per NIC, as asked.
      expect(nic.acceleratedNetworking).toBe(h.accelnet);
      expect(nic.networkSecurityGroup).toBe(`${prefix}-${host}-nsg`);
      expect(nic.publicIp).toBe(`${prefix}-${host}-pip`);
      expect(nic.privateIp).toBe(out.privateIp);
      expect(nic.subnet).toBe(`${vnetName(prefix, vnetKey(h))}/d${d.index}`);
      expect(pip).toMatchObject({ sku: "Standard", allocation: "Static", zones: h.zone ? [h.zone] : null });

      // PPG wiring: on the availability set when there is one, else on the VM.
      const ppgName = h.ppg ? `${prefix}-d${d.index}-ppg-${h.ppg}` : null;
      const avsetName = h.availabilitySet ? `${prefix}-d${d.index}-avset-${h.availabilitySet}` : null;
      expect(vm.availabilitySet).toBe(avsetName);
      expect(vm.proximityPlacementGroup).toBe(avsetName ? null : ppgName);
      if (avsetName) {
        const avset = named(l, T.avset, avsetName).inputs as Inputs;
        expect(avset.proximityPlacementGroup).toBe(ppgName);
        expect(avset.sku).toBe("Aligned");
      }
      if (ppgName) {
        const members = d.hosts.filter((m) => m.ppg === h.ppg);
        const ppg = named(l, T.ppg, ppgName).inputs as Inputs;
        expect(ppg.zones).toEqual(h.zone ? [h.zone] : null);
        expect(ppg.intentVmSizes).toEqual([...new Set(members.map((m) => m.size))].sort());
        expect(ppg.type).toBe("Standard");
      }

      // NSG: SSH only from sshFrom; other allows only from the run's own hosts; never from everyone.
      const rules = nsg.securityRules as { name: string; access: string; sources: string[]; destinationPort: string; protocol: string }[];
      const ssh = rules.find((r) => r.name === "allow-ssh-from-runner")!;
      expect(ssh).toMatchObject({ access: "Allow", protocol: "Tcp", destinationPort: "22", sources: [settings.sshFrom] });
      for (const r of rules.filter((x) => x.access === "Allow")) {
        expect(r.sources.length, r.name).toBeGreaterThan(0);
        for (const s of r.sources) {
          expect(OPEN, `${host} ${r.name}`).not.toContain(s);
          if (r !== ssh) expect(clientIps, `${host} ${r.name} from ${s}`).toContain(s);
        }
      }
      const cellsHere = plan.cells.filter((c) => c.deployment === d.id && c.to === h.role);
      if (cellsHere.length === 0) expect(rules.filter((r) => r.access === "Allow").map((r) => r.name).filter((n) => n !== ssh.name && !n.startsWith("allow-traceroute"))).toEqual([]);
      for (const path of new Set(cellsHere.map((c) => c.path))) expect(rules.some((r) => r.name.endsWith(`-${path}`))).toBe(true);
      expect(rules.at(-1)).toMatchObject({ name: "deny-other-vnet-inbound", access: "Deny", sources: ["VirtualNetwork"] });

      // Outputs: what the runner needs, with the pinned host key.
      expect(out.hostKey).toBe(settings.hostKeys[host]!.publicKey);
      expect(out.vmName).toBe(`${prefix}-${host}`);
      // ARM ids for the placement evidence read after the deploy: the VM's, and its PPG's when it asked for one.
      expect(out.vmId).toMatch(new RegExp(`/virtualMachines/${prefix}-${host}$`));
      if (h.ppg) expect(out.ppgId).toMatch(new RegExp(`/proximityPlacementGroups/${prefix}-d${d.index}-ppg-${h.ppg}$`));
      else expect(out.ppgId).toBeUndefined();
      expect(out.publicIp).toMatch(/^198\.19\.255\.\d+$/);
    }
  }
  expect(l.outputs.hosts).toHaveLength(plan.estimate.hosts);
  expect(of(l, T.vm)).toHaveLength(plan.estimate.hosts);
  expect(JSON.stringify(l)).not.toMatch(/PRIVATE KEY/);
}

const printed: string[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  printed.length = 0;
});
function capturePrinting() {
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream);
    vi.spyOn(stream, "write").mockImplementation(((chunk: unknown, ...rest: unknown[]) => {
      printed.push(String(chunk));
      return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof stream.write);
  }
  for (const m of ["log", "info", "warn", "error", "debug"] as const) vi.spyOn(console, m).mockImplementation((...a: unknown[]) => void printed.push(a.map(String).join(" ")));
}

describe("the resource graph of every experiment in experiments/ (Pulumi mocks)", async () => {
  const shipped = await shippedExperimentPlans();
  it("finds experiments to check", () => expect(shipped.length).toBeGreaterThan(0));
  for (const { name, plan, error } of shipped) {
    it(name, async (ctx) => {
      if (!plan) {
        // Another engineer's experiment that does not load yet (e.g. a tool not registered): not this module's to judge.
        ctx.skip(`does not load yet: ${error}`);
        return;
      }
      const settings = settingsFor(plan);
      capturePrinting();
      const listing = await listAzureResources(plan, settings);
      checkGraph(plan, settings, listing);
      for (const key of Object.values(settings.hostKeys)) for (const text of printed) expect(text).not.toContain(key.privateKey.split("\n")[4]!);
    });
  }
});

describe("features the shipped experiments may not cover", () => {
  it("cross-region: one VNet per region, peered both ways; public path opened to the clients' public IPs only", async () => {
    const plan = planOf({
      name: "xr",
      defaults: { region: "uksouth", size: "Standard_B1s", accelnet: false },
      axes: { path: ["private", "public"] },
      hosts: { server: { zone: "1" }, samezone: { zone: "1" }, crosszone: { zone: "2" }, crossregion: { region: "ukwest", zone: null } },
      measure: [{ tool: "tcp-echo", params: { duration: 5 } }],
    });
    const settings = settingsFor(plan);
    const l = await listAzureResources(plan, settings);
    checkGraph(plan, settings, l);
    expect(of(l, T.vnet)).toHaveLength(2);
    expect(of(l, T.peering).map((p) => p.name).sort()).toEqual(["to-uksouth", "to-ukwest"]);
    // Both paths between the same VMs: one deployment, both paths' rules on its server's NSG.
    expect(of(l, T.vm)).toHaveLength(4);
    const serverRules = (named(l, T.nsg, "latlab-t1-d0-server-nsg").inputs as Inputs).securityRules as { name: string; sources: string[] }[];
    expect(serverRules.map((r) => r.name)).toEqual(expect.arrayContaining(["allow-tcp-echo-tcp-11000-private", "allow-tcp-echo-tcp-11000-public"]));
    const publicRule = serverRules.find((r) => r.name === "allow-tcp-echo-tcp-11000-public")!;
    const publicIps = l.outputs.hosts.filter((h) => h.deployment === "default" && h.role !== "server").map((h) => `${h.publicIp}/32`);
    expect([...publicRule.sources].sort()).toEqual(publicIps.sort());
  });

  it("public-vs-peered (seed 002): two VNets in northeurope peered both ways, 4 VMs, both paths' NSG rules on each server", async () => {
    const { default: experiment } = await import("../../../../../experiments/public-vs-peered.ts");
    const { buildPlan } = await import("../../../../../src/plan/buildPlan.ts");
    const plan = buildPlan(experiment);
    const settings = settingsFor(plan);
    const l = await listAzureResources(plan, settings);
    checkGraph(plan, settings, l);
    expect(of(l, T.vnet).map((v) => [v.name, v.location])).toEqual([
      ["latlab-t1-vnet-northeurope-b", "northeurope"],
      ["latlab-t1-vnet-northeurope-a", "northeurope"],
    ]);
    expect(of(l, T.peering).map((p) => `${(p.inputs as Inputs).virtualNetwork} → ${(p.inputs as Inputs).remoteVirtualNetwork}`).sort()).toEqual([
      "latlab-t1-vnet-northeurope-a → latlab-t1-vnet-northeurope-b",
      "latlab-t1-vnet-northeurope-b → latlab-t1-vnet-northeurope-a",
    ]);
    expect(of(l, T.vm)).toHaveLength(4);
    for (const d of [0, 1]) {
      const client = l.outputs.hosts.find((h) => h.deployment === plan.deployments[d]!.id && h.role === "client")!;
      const rules = (named(l, T.nsg, `latlab-t1-d${d}-server-nsg`).inputs as Inputs).securityRules as { name: string; sources: string[] }[];
      for (const measure of ["traceroute-tcp-22", "iperf3-tcp-11001", "iperf3-tcp-11002", "iperf3-tcp-11003"]) {
        expect(rules.find((r) => r.name === `allow-${measure}-private`)!.sources, `d${d} ${measure} private`).toEqual([`${client.privateIp}/32`]);
        expect(rules.find((r) => r.name === `allow-${measure}-public`)!.sources, `d${d} ${measure} public`).toEqual([`${client.publicIp}/32`]);
      }
      // The client is in VNet a, the server in VNet b.
      expect((named(l, T.nic, `latlab-t1-d${d}-client-nic`).inputs as Inputs).subnet).toBe(`latlab-t1-vnet-northeurope-a/d${d}`);
      expect((named(l, T.nic, `latlab-t1-d${d}-server-nic`).inputs as Inputs).subnet).toBe(`latlab-t1-vnet-northeurope-b/d${d}`);
    }
  });

  it("an unnamed VNet keeps today's names next to a named one of the same region", async () => {
    const plan = planOf({ name: "mixed", defaults: { region: "uksouth", zone: "1", size: "Standard_D2s_v5" }, hosts: { client: { vnet: "x" }, server: {} } });
    const l = await listAzureResources(plan, settingsFor(plan));
    expect(of(l, T.vnet).map((v) => v.name).sort()).toEqual(["latlab-t1-vnet-uksouth", "latlab-t1-vnet-uksouth-x"]);
    expect(of(l, T.peering).map((p) => p.name).sort()).toEqual(["to-uksouth", "to-uksouth-x"]);
  });

  it("availability set inside a PPG (no zones), generation-1 size, Accelerated Networking on and off", async () => {
    const plan = planOf({
      name: "avset",
      defaults: { region: "westeurope", zone: null, size: "Standard_D3_v2", ppg: true, availabilitySet: true },
      axes: { accelnet: [false, true] },
    });
    const settings = settingsFor(plan);
    const l = await listAzureResources(plan, settings);
    checkGraph(plan, settings, l);
    expect(of(l, T.avset)).toHaveLength(2);
    expect(of(l, T.ppg).map((p) => (p.inputs as Inputs).zones)).toEqual([null, null]);
    expect(of(l, T.nic).map((n) => [n.name, (n.inputs as Inputs).acceleratedNetworking])).toEqual([
      ["latlab-t1-d0-client-nic", false],
      ["latlab-t1-d0-server-nic", false],
      ["latlab-t1-d1-client-nic", true],
      ["latlab-t1-d1-server-nic", true],
    ]);
  });

  it("boots what the size needs: a v6 size the generation-2 image on NVMe, a Dv2 size the generation-1 image; live SKU facts win", async () => {
    const plan = planOf({ name: "boot", defaults: { region: "eastus", zone: "1", accelnet: true }, hosts: { client: { size: "Standard_D2as_v6" }, server: { size: "Standard_D3_v2" } } });
    const settings = settingsFor(plan);
    const vms = (l: Awaited<ReturnType<typeof listAzureResources>>) => of(l, T.vm).map((v) => [(v.inputs as Inputs).size, (v.inputs as Inputs).image, (v.inputs as Inputs).diskControllerType]).sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    expect(vms(await listAzureResources(plan, settings))).toEqual([
      ["Standard_D2as_v6", "Canonical:ubuntu-24_04-lts:server:latest", "NVMe"],
      ["Standard_D3_v2", "Canonical:ubuntu-24_04-lts:server-gen1:latest", null],
    ]);
    // What the subscription's SKU list says replaces the snapshot (e.g. a size that gained SCSI).
    const live = { ...settings, sizeFacts: { Standard_D2as_v6: { hyperVGenerations: [2] as (1 | 2)[], diskControllerTypes: ["SCSI", "NVMe"] as ("SCSI" | "NVMe")[] } } };
    expect(vms(await listAzureResources(plan, live))[0]).toEqual(["Standard_D2as_v6", "Canonical:ubuntu-24_04-lts:server:latest", null]);
  });

  it("zonal PPG: pinned to the zone, intent.vmSizes from its members", async () => {
    const plan = planOf({ name: "zppg", defaults: { region: "eastus", zone: "2", ppg: true, accelnet: true }, hosts: { client: { size: "Standard_D2s_v4" }, server: { size: "Standard_D4s_v5" } } });
    const settings = settingsFor(plan);
    const l = await listAzureResources(plan, settings);
    checkGraph(plan, settings, l);
    expect(of(l, T.ppg).map((p) => p.inputs)).toMatchObject([{ zones: ["2"], intentVmSizes: ["Standard_D2s_v4", "Standard_D4s_v5"] }]);
  });
});

describe("secrets", () => {
  it("customData is a Pulumi secret holding this host's key only; the client's private key is nowhere", async () => {
    const plan = planOf({ name: "sec", defaults: { region: "eastus", zone: "1", size: "Standard_D2s_v5" } });
    const settings = settingsFor(plan);
    const raw: { type: string; inputs: Record<string, unknown> }[] = [];
    await pulumi.runtime.setMocks({ newResource: (a) => (raw.push({ type: a.type, inputs: a.inputs }), { id: a.name, state: { ...a.inputs, name: a.name, ipAddress: "203.0.113.1" } }), call: (a) => a.inputs }, "latlab", "secrets", false);
    const { createProgram } = await import("../../../../../src/targets/azure/program/program.ts");
    capturePrinting();
    const out = await createProgram(plan, settings)();
    await new Promise((r) => out.hosts.apply(r));
    const vms = raw.filter((r) => r.type === T.vm);
    expect(vms).toHaveLength(2);
    for (const vm of vms) {
      const os = vm.inputs.osProfile as Record<string, unknown>;
      // Pulumi's wire form of a secret: {<secret signature>: …, value}.
      expect(Object.keys(os)).toContain("4dabf18193072939515e22adb298388d");
      const value = os.value as { computerName: string; customData: string; linuxConfiguration: { ssh: { publicKeys: { keyData: string }[] } } };
      const config = Buffer.from(value.customData, "base64").toString("utf8");
      const own = settings.hostKeys[value.computerName]!;
      expect(config).toContain(own.privateKey.split("\n")[4]!);
      for (const [name, other] of Object.entries(settings.hostKeys)) if (name !== value.computerName) expect(config).not.toContain(other.privateKey.split("\n")[4]!);
      expect(value.linuxConfiguration.ssh.publicKeys[0]!.keyData).toBe(settings.sshPublicKey);
    }
    // The program never prints a key.
    for (const key of Object.values(settings.hostKeys)) expect(printed.join("\n")).not.toContain(key.privateKey.split("\n")[4]!);
    // And only the host's own key pair is private material: AzureSettings holds no client private key at all.
    expect(JSON.stringify({ ...settings, hostKeys: undefined })).not.toMatch(/PRIVATE KEY/);
    expect(SSH_FROM).toBe(settings.sshFrom);
  });
});

describe("what Pulumi owns stays Pulumi's (issue 9, defect 6)", () => {
  it("the VM detaches its NIC instead of deleting it: the NIC is a Pulumi resource, Azure must not delete it behind Pulumi's back", async () => {
    const plan = planOf({ name: "nicdel", defaults: { region: "eastus", zone: "1", size: "Standard_D2s_v5" } });
    const l = await listAzureResources(plan, settingsFor(plan));
    const vms = of(l, T.vm);
    expect(vms).toHaveLength(2);
    for (const vm of vms) expect((vm.inputs as Inputs).networkInterfaceDeleteOptions, vm.name).toEqual(["Detach"]);
  });

  it("every tagged resource ignores later changes of its createdAt tag, so a second `up` is no diff", async () => {
    const plan = planOf({ name: "tags", defaults: { region: "eastus", zone: "1", size: "Standard_D2s_v5" } });
    const settings = settingsFor(plan);
    const seen: { type: string; ignoreChanges: string[]; tagged: boolean }[] = [];
    await pulumi.runtime.setMocks({ newResource: (a) => ({ id: a.name, state: { ...a.inputs, name: a.name, ipAddress: "198.19.255.1" } }), call: (a) => a.inputs }, "latlab", "tags", false);
    const { createProgram } = await import("../../../../../src/targets/azure/program/program.ts");
    const program = createProgram(plan, settings);
    // A stack transformation sees each resource's options as the program gave them (in-process, under mocks too).
    await pulumi.runtime.runInPulumiStack(async () => {
      pulumi.runtime.registerStackTransformation((args) => {
        seen.push({ type: args.type, ignoreChanges: args.opts.ignoreChanges ?? [], tagged: typeof (args.props as Inputs).tags === "object" });
        return undefined;
      });
      const out = await program();
      await new Promise((r) => out.hosts.apply(r));
      return {};
    });
    const tagged = seen.filter((s) => s.tagged);
    expect(tagged.length).toBeGreaterThan(5);
    for (const s of tagged) expect(s.ignoreChanges, s.type).toContain("tags.createdAt");
  });
});
