import * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { loadExperiment } from "../../../../../src/cli/experiments/loadExperiment.ts";
import { buildPlan } from "../../../../../src/plan/buildPlan.ts";
import { azurePlanOptions, parseDurationConfig, planAndSettingsFromConfig, runAzureEntry, runIdFromStack, type ConfigSource } from "../../../../../src/targets/azure/program/entryConfig.ts";
import { azurePlanReport, listAzureResources, offlineSettings } from "../../../../../src/targets/azure/program/listing.ts";
import { loadPriceSnapshot, PUBLIC_IP_METER, type FetchLike } from "../../../../../src/targets/azure/catalog/prices.ts";
import { AzureValidationError, validateAzureRun, worstCaseRun } from "../../../../../src/targets/azure/catalog/validateAzure.ts";
import { CREATED_AT, SEED, SSH_FROM, clientPublicKey, planOf } from "../helpers.ts";

const noNetwork: FetchLike = async (url) => {
  throw new Error(`network used: ${url}`);
};

describe("latlab plan <name> --target azure --json (azurePlanReport)", () => {
  it("lists every resource and the cost offline, with placeholders for what only a real run knows", async () => {
    const { experiment } = await loadExperiment("ppg-vs-zone");
    const plan = buildPlan(experiment, azurePlanOptions(experiment));
    const report = await azurePlanReport(plan, { fetchFn: noNetwork, settings: { createdAt: CREATED_AT } });
    expect(report.experiment).toBe("ppg-vs-zone");
    expect(report.placeholders).toEqual(["runId", "sshFrom", "adminUsername", "sshPublicKey", "hostKeys", "expiresAt"]);
    const count = (t: string) => report.resources.filter((r) => r.type === t).length;
    expect(count("azure-native:compute:VirtualMachine")).toBe(4);
    expect(count("azure-native:compute:ProximityPlacementGroup")).toBe(1);
    expect(count("azure-native:network:NetworkSecurityGroup")).toBe(4);
    // Every resource says its type, name and the inputs that matter.
    for (const r of report.resources) expect(r.type && r.name && r.inputs).toBeTruthy();
    const vm = report.resources.find((r) => r.type === "azure-native:compute:VirtualMachine")!;
    expect(Object.keys(vm.inputs)).toEqual(expect.arrayContaining(["size", "zones", "proximityPlacementGroup", "availabilitySet", "tags"]));
    // Cost from the bundled snapshot: D2s_v5 in eastus is in it, for the worst-case hours.
    expect(report.cost.missing).toEqual([]);
    expect(report.cost.hourlyUsd).toBe(0.404);
    expect(report.cost.hours).toBeCloseTo(worstCaseRun(plan).seconds / 3600, 10);
    expect(report.cost.totalUsd).toBeCloseTo(0.404 * report.cost.hours, 6);
    expect(report.livePrices).toEqual({ used: false, notFound: [] });
    expect(report.refusals).toEqual([]);
    expect(Date.parse(report.tags.expiresAt) - Date.parse(report.tags.createdAt)).toBeGreaterThan(report.worstCase.seconds * 1000);
    const json = JSON.stringify(report);
    expect(json).not.toMatch(/PRIVATE KEY/);
  });

  it("--max-cost refuses above the limit", async () => {
    const plan = planOf({ name: "mc", defaults: { region: "eastus", zone: "1", size: "Standard_D2s_v5" } });
    const report = await azurePlanReport(plan, { fetchFn: noNetwork, maxCostUsd: 0.01 });
    expect(report.refusals.map((r) => r.path)).toEqual(["--max-cost"]);
    expect((await azurePlanReport(plan, { fetchFn: noNetwork, maxCostUsd: 100 })).refusals).toEqual([]);
  });

  it("--live-prices asks the Retail Prices API (here a fake) and uses what it returns", async () => {
    const plan = planOf({ name: "live", defaults: { region: "ukwest", size: "Standard_B1ms", accelnet: false } });
    const urls: string[] = [];
    const fetchFn: FetchLike = async (url) => {
      urls.push(url);
      const items = url.includes("Virtual%20Machines")
        ? [{ armSkuName: "Standard_B1ms", productName: "Virtual Machines BS Series", meterName: "B1ms", retailPrice: 0.0236, type: "Consumption", unitOfMeasure: "1 Hour", currencyCode: "USD" }]
        : [{ meterName: PUBLIC_IP_METER, retailPrice: 0.005, type: "Consumption", unitOfMeasure: "1 Hour", currencyCode: "USD" }];
      return { ok: true, status: 200, json: async () => ({ Items: items, NextPageLink: null }) };
    };
    // Offline the cost is UNKNOWN: a deploy is refused without --max-cost, and goes under the user's own cap with a note.
    // A snapshot without these prices (the bundled one has them all).
    const snapshot = { ...loadPriceSnapshot(), vm: {} };
    const offline = await azurePlanReport(plan, { fetchFn: noNetwork, snapshot });
    expect(offline.cost.missing).toHaveLength(2);
    expect(offline.cost.known).toBe(false);
    expect(offline.refusals[0]!.message).toMatch(/Standard_B1ms in ukwest/);
    const capped = await azurePlanReport(plan, { fetchFn: noNetwork, snapshot, maxCostUsd: 10 });
    expect(capped.refusals).toEqual([]);
    expect(capped.costNotes.join(" ")).toMatch(/UNKNOWN|unknown/);
    const live = await azurePlanReport(plan, { fetchFn, snapshot, livePrices: true, maxCostUsd: 10 });
    expect(urls).toHaveLength(2);
    expect(live.livePrices).toEqual({ used: true, notFound: [] });
    expect(live.cost.missing).toEqual([]);
    expect(live.cost.hourlyUsd).toBe(2 * 0.0236 + 2 * 0.005);
    expect(live.cost.lines.every((l) => l.basis === "live")).toBe(true);
    expect(live.refusals).toEqual([]);
  });

  it("refuses, before any resource, a plan Azure would refuse", async () => {
    const plan = planOf({ name: "bad", defaults: { region: "uksouth", zone: "1", size: "Standard_B1s", accelnet: true } });
    await expect(azurePlanReport(plan, { fetchFn: noNetwork })).rejects.toThrow(AzureValidationError);
    await expect(azurePlanReport(plan, { fetchFn: noNetwork })).rejects.toThrow(/variants\[default\]\.hosts\.client\.accelnet: Standard_B1s \(1 vCPU\) does not support Accelerated Networking/);
  });

  it("placeholder settings are valid ones (throwaway keys made in memory)", () => {
    const plan = planOf({ name: "ph", defaults: { region: "eastus", zone: "1", size: "Standard_D2s_v5" } });
    expect(validateAzureRun(plan, offlineSettings(plan).settings)).toEqual([]);
  });
});

describe("the Pulumi project entry point (azureEntry.ts)", () => {
  const config = (extra: Record<string, string> = {}): ConfigSource => {
    const values: Record<string, string> = {
      experiment: "ppg-vs-zone",
      sshFrom: SSH_FROM,
      sshPublicKey: clientPublicKey(),
      hostKeySeed: SEED,
      createdAt: CREATED_AT.toISOString(),
      ...extra,
    };
    return (key) => values[key];
  };

  it("reads latlab:* config into the same plan and settings a run would use", async () => {
    const { plan, settings } = await planAndSettingsFromConfig(config(), "Dev_Stack");
    expect(plan.experiment.name).toBe("ppg-vs-zone");
    expect(settings).toMatchObject({ runId: "dev-stack", experiment: "ppg-vs-zone", sshFrom: SSH_FROM, adminUsername: "latlab", createdAt: CREATED_AT });
    expect(Object.keys(settings.hostKeys).sort()).toEqual(["d0-client", "d0-server", "d1-client", "d1-server"]);
    expect(validateAzureRun(plan, settings)).toEqual([]);
    // Same seed, same keys: a second `pulumi up` does not replace the VMs.
    expect((await planAndSettingsFromConfig(config(), "Dev_Stack")).settings.hostKeys).toEqual(settings.hostKeys);
    const shorter = await planAndSettingsFromConfig(config({ duration: "2" }), "s");
    expect(shorter.plan.cells.find((c) => c.tool === "sockperf")!.params.duration).toBe(2);
  });

  it("time tags nobody configured are kept from the first `pulumi up` (a second up changes nothing); configured ones are not", async () => {
    const base = config();
    const unconfigured = (k: string) => (k === "createdAt" || k === "expiresAt" ? undefined : base(k));
    expect((await planAndSettingsFromConfig(unconfigured, "s")).settings.keepTags).toEqual(["createdAt", "expiresAt"]);
    expect((await planAndSettingsFromConfig((k) => (k === "expiresAt" ? "2030-01-01T00:00:00Z" : unconfigured(k)), "s")).settings.keepTags).toEqual(["createdAt"]);
    expect((await planAndSettingsFromConfig(base, "s")).settings.keepTags).toBeUndefined();
  });

  it("says which config is missing and how to set it", async () => {
    await expect(planAndSettingsFromConfig(() => undefined, "s")).rejects.toThrow(/missing config latlab:experiment/);
    await expect(planAndSettingsFromConfig(config({ hostKeySeed: "" }), "s")).rejects.toThrow(/latlab:hostKeySeed: .*pulumi config set --secret latlab:hostKeySeed/);
    const noSsh = config();
    await expect(planAndSettingsFromConfig((k) => (k === "sshFrom" ? undefined : noSsh(k)), "s")).rejects.toThrow(/missing config latlab:sshFrom/);
    expect(() => parseDurationConfig("fast")).toThrow(/latlab:duration/);
    expect(runIdFromStack("My Stack!!")).toBe("my-stack");
  });

  it("under mocks, builds the same resources as the listing of the same plan and settings", async () => {
    const source = config();
    const seen: { type: string; name: string }[] = [];
    await pulumi.runtime.setMocks({ newResource: (a) => (seen.push({ type: a.type, name: a.name }), { id: a.name, state: { ...a.inputs, name: a.name, ipAddress: "203.0.113.5" } }), call: (a) => a.inputs }, "latlab", "entry", false);
    const out = await runAzureEntry(source);
    const hosts = await new Promise<unknown[]>((r) => out.hosts.apply((h) => r(h)));
    expect(hosts).toHaveLength(4);
    const waitForRPCs = (pulumi.runtime as unknown as { waitForRPCs?: () => Promise<void> }).waitForRPCs;
    if (waitForRPCs) await waitForRPCs();

    // pulumi.getStack() under these mocks is "entry": the run id the entry derived from it.
    const { plan, settings } = await planAndSettingsFromConfig(source, "entry");
    const listing = await listAzureResources(plan, settings);
    const key = (r: { type: string; name: string }) => `${r.type} ${r.name}`;
    // Logical names (entry) vs Azure names (listing) differ only for subnets and peerings.
    const listed = listing.resources.filter((r) => !/Subnet|Peering/.test(r.type)).map(key).sort();
    expect(seen.filter((r) => !/Subnet|Peering/.test(r.type)).map(key).sort()).toEqual(listed);
    expect(seen).toHaveLength(listing.resources.length);
  });
});
