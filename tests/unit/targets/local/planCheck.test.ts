import { describe, expect, it } from "vitest";
import { buildPlan, defineExperiment } from "../../../../src/index.ts";
import { formatPlan } from "../../../../src/report/planText.ts";
import { checkLocalPrerequisites } from "../../../../src/targets/local/preflight.ts";
import { LocalTarget } from "../../../../src/targets/local/localTarget.ts";
import { uncappedLine, uncappedSizes, validateLocalPlan } from "../../../../src/targets/local/planCheck.ts";
import { targets } from "../../../../src/targets/registry.ts";
import { validateForAzure } from "../../../../src/targets/azure/catalog/validateAzure.ts";
import type { ExecFn } from "../../../../src/targets/local/exec.ts";
import accelnet from "../../../../experiments/accelnet-on-off.ts";
import ppgAvset from "../../../../experiments/ppg-availability-set.ts";
import ppgVsZone from "../../../../experiments/ppg-vs-zone.ts";
import publicVsPeered from "../../../../experiments/public-vs-peered.ts";
import zoneRegion from "../../../../experiments/zone-region-baseline.ts";

const typo = () =>
  buildPlan(
    defineExperiment({
      name: "typo",
      description: "a misspelled size and region",
      axes: { size: ["Standard_D2s_v5", "Standard_D2sv5"] },
      defaults: { region: "uksouht" },
      hosts: { client: {}, server: {} },
      measure: [{ tool: "ping" }],
    }),
  );

describe("local plan check: sizes and regions from Azure's catalogue", () => {
  it("names every unknown size and region with its variant and host, and the closest known name", () => {
    const messages = validateLocalPlan(typo()).map((i) => i.message);
    expect(messages).toContain('variant size=Standard_D2sv5, host client: unknown VM size "Standard_D2sv5" — did you mean "Standard_D2s_v5"? (not among the 1502 sizes of latlab\'s Azure SKU snapshot, src/targets/azure/catalog/sizes/skus.snapshot.json)');
    expect(messages.filter((m) => m.includes('unknown region "uksouht" — did you mean "uksouth"?'))).toHaveLength(4);
    expect(messages.filter((m) => m.includes('unknown VM size "Standard_D2sv5"'))).toHaveLength(2);
    expect(messages.some((m) => m.includes('"Standard_D2s_v5"') && m.includes("unknown VM size \"Standard_D2s_v5\""))).toBe(false);
  });

  it("accepts every seed experiment", () => {
    for (const e of [accelnet, ppgAvset, ppgVsZone, publicVsPeered, zoneRegion]) expect(validateLocalPlan(buildPlan(e)), e.name).toEqual([]);
  });

  it("refuses in the preflight before any package is installed or namespace made", async () => {
    const calls: string[][] = [];
    const exec: ExecFn = async (argv) => {
      calls.push([...argv]);
      return { code: 0, stdout: "", stderr: "" };
    };
    await expect(checkLocalPrerequisites({ plan: typo(), binaries: [], install: true, log: () => {}, exec, isRoot: true, findBinary: async () => null })).rejects.toThrow(
      /unknown VM size "Standard_D2sv5" — did you mean "Standard_D2s_v5"\?/,
    );
    expect(calls).toEqual([]);
  });

  it("refuses in up() before anything is brought up", async () => {
    const calls: string[][] = [];
    const exec: ExecFn = async (argv) => {
      calls.push([...argv]);
      return { code: 0, stdout: "", stderr: "" };
    };
    const target = new LocalTarget({ exec });
    await expect(target.up(typo(), { runId: "typo", runDir: "/nonexistent", log: () => {} })).rejects.toThrow(/unknown region "uksouht" — did you mean "uksouth"\?/);
    expect(calls).toEqual([]);
    expect(target.resources).toEqual({ namespaces: [], rootLinks: [], tempDir: null, keysDir: null, pids: [] });
  });
});

describe("local plan check: what Azure refuses of a host (issue 23)", () => {
  const hosts = (host: { zone?: "1"; accelnet?: boolean }, region = "ukwest", size = "Standard_B1s") =>
    buildPlan(
      defineExperiment({
        name: "azure-refuses",
        description: "a zone in a region without zones, AccelNet on a size without it",
        defaults: { region, size, accelnet: false },
        hosts: { client: {}, server: host },
        measure: [{ tool: "ping" }],
      }),
    );

  it("refuses a zone in a region without zones, naming variant, host, field, why and the source", () => {
    const issues = validateLocalPlan(hosts({ zone: "1" }));
    expect(issues).toEqual([
      {
        path: 'variants["default"].hosts.server.zone',
        message:
          "variant default, host server: UK West (ukwest) has no availability zones (https://learn.microsoft.com/azure/reliability/regions-list); a zonal host (zone 1) cannot go there. Use zone: null (the Azure target refuses it too)",
      },
    ]);
  });

  it("refuses AccelNet on a size without it, by the SKU snapshot's fact", () => {
    const issues = validateLocalPlan(hosts({ accelnet: true }, "uksouth"));
    expect(issues).toHaveLength(1);
    expect(issues[0]!.path).toBe('variants["default"].hosts.server.accelnet');
    expect(issues[0]!.message).toBe(
      "variant default, host server: Standard_B1s (1 vCPU) does not support Accelerated Networking (Azure's SKU capability AcceleratedNetworkingEnabled is False, in latlab's SKU snapshot); Azure would refuse the NIC (VMSizeIsNotPermittedToEnableAcceleratedNetworking). Set accelnet: false or pick a size that has it (the Azure target refuses it too)",
    );
  });

  it("refuses what the Azure target refuses, for the same reason", () => {
    const plan = hosts({ zone: "1", accelnet: true });
    const azure = validateForAzure(plan).filter((i) => /\.(zone|accelnet)$/.test(i.path));
    const local = validateLocalPlan(plan);
    expect(local).toHaveLength(azure.length);
    for (const a of azure) expect(local.some((l) => l.message.includes(a.message))).toBe(true);
  });

  it("accepts a zone where the region has zones and AccelNet where the size has it", () => {
    expect(validateLocalPlan(hosts({ zone: "1", accelnet: true }, "uksouth", "Standard_D2s_v5"))).toEqual([]);
  });
});

describe("sizes the local target runs uncapped", () => {
  const plan = buildPlan(
    defineExperiment({
      name: "b2s-vs-d2s",
      description: "a B-series size against a D-series one",
      axes: { size: ["Standard_D2s_v5", "Standard_B2s"] },
      // B-series v1 has no Accelerated Networking: Azure and the local target refuse it on.
      defaults: { region: "uksouth", accelnet: false },
      hosts: { client: {}, server: {} },
      measure: [{ tool: "ping" }],
    }),
  );

  it("lists B-series (no documented bandwidth) by size with the hosts that have it", () => {
    expect(uncappedSizes(plan).map((u) => ({ size: u.size, hosts: u.hosts }))).toEqual([{ size: "Standard_B2s", hosts: ["size=Standard_B2s/client", "size=Standard_B2s/server"] }]);
  });

  it("says so in the plan's notes for the local target, and only there", async () => {
    const notes = await targets.local!.planNotes!(plan);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(/^uncapped on the local target .*: Standard_B2s \(size=Standard_B2s\/client, size=Standard_B2s\/server\)$/);
    expect(formatPlan(plan)).not.toContain("uncapped");
    expect(targets.azure!.planNotes).toBeUndefined();
    expect(uncappedLine(buildPlan(ppgVsZone))).toBeNull();
    expect(await targets.local!.planNotes!(buildPlan(ppgVsZone))).toEqual([]);
  });
});
