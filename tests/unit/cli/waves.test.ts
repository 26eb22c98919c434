import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { runWaves } from "../../../src/cli/run/runWaves.ts";
import { parseMaxVcpus } from "../../../src/cli/input/options.ts";
import { buildPlan, defineExperiment } from "../../../src/index.ts";
import { profileLimits } from "../../../src/targets/azure/catalog/quota.ts";
import type { Target } from "../../../src/targets/target.ts";
import { runMain } from "./runMain.ts";

const ROOT = resolve(import.meta.dirname, "../../..");

describe("--max-vcpus", () => {
  it("takes decimal digits only, at least 1", () => {
    expect(parseMaxVcpus("16")).toBe(16);
    expect(parseMaxVcpus("1")).toBe(1);
    for (const bad of ["0", "1.5", "-4", "0x10", "1e2", "", " ", "12a", "99999999999999999999"]) {
      expect(() => parseMaxVcpus(bad), bad).toThrow(`expected a whole number of vCPUs of at least 1, in decimal digits (e.g. 16), got "${bad}"`);
    }
  });

  it("plan and run refuse a bad value before anything, naming the option", async () => {
    for (const command of ["plan", "run"]) {
      const r = await runMain([command, "ppg-vs-zone", "--max-vcpus", "0x10"]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain("option '--max-vcpus <n>' argument '0x10' is invalid. expected a whole number of vCPUs of at least 1");
    }
  });

  it("latlab plan (local) shows the waves --max-vcpus asks for, and refuses a deployment above it naming the limit", async () => {
    const two = await runMain(["plan", "ppg-vs-zone", "--max-vcpus", "4"]);
    expect(two.code).toBe(0);
    expect(two.stdout).toContain("waves: 2, one after another (each brought up, measured and torn down before the next), sized against --max-vcpus 4");
    expect(two.stdout).toMatch(/wave 1 of 2: 1 deployment \(ppg=false\); variants ppg=false; replica 0/);
    const json = await runMain(["plan", "ppg-vs-zone", "--max-vcpus", "4", "--json"]);
    expect(JSON.parse(json.stdout).waves.waves).toHaveLength(2);
    const refused = await runMain(["plan", "ppg-vs-zone", "--max-vcpus", "3"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("refused: a deployment does not fit even alone in --max-vcpus 3");
    expect(refused.stderr).toContain("all regions: --max-vcpus: needs 4 vCPUs, 3 available");
  });
});

describe("latlab plan --target azure: the waves under the default (new pay-as-you-go) subscription", () => {
  const shipped = readdirSync(join(ROOT, "experiments"))
    .filter((f) => f.endsWith(".ts"))
    .map((f) => f.replace(/\.ts$/, ""));

  for (const name of shipped) {
    it(`${name}: says how many waves, each with its vCPUs, public IPs, cost and wall time, and the quotas assumed with their sources`, async () => {
      const r = await runMain(["plan", name, "--target", "azure"]);
      expect(r.code, r.stderr).toBe(0);
      const waves = /^waves: (\d+|none fit)/m.exec(r.stdout);
      expect(waves, r.stdout).not.toBeNull();
      if (waves![1] !== "none fit") {
        const n = Number(waves![1]);
        expect(r.stdout.match(/^ +cost: /gm)?.length).toBe(n);
        expect(r.stdout.match(/^ +wall time: about /gm)?.length).toBe(n);
        expect(r.stdout).toMatch(/total regional \d+, \d+ public IPs?/);
        if (n > 1) expect(r.stdout).toMatch(new RegExp(`all ${n} waves: (about \\$|cost UNKNOWN)`));
      }
      expect(r.stdout).toContain("quotas assumed: new pay-as-you-go subscription (documented default quotas): 20 total regional vCPUs, 20 vCPUs per VM family, 10 Standard public IPv4 addresses, per region (MicrosoftDocs/azure-docs");
    }, 60_000);
  }

  it("--json carries the waves, their costs and the profile's sources", async () => {
    const r = await runMain(["plan", "ppg-vs-zone", "--target", "azure", "--json", "--max-vcpus", "4"]);
    const report = JSON.parse(r.stdout).azure.waves;
    expect(report.plan.waves).toHaveLength(2);
    expect(report.costs).toHaveLength(2);
    expect(report.profile.sources.map((s: { figure: string }) => s.figure).sort()).toEqual(["familyVcpus", "publicIps", "regionalVcpus"]);
  }, 60_000);
});

describe("runWaves (what `latlab run` decides once the run has started)", () => {
  const plan = buildPlan(
    defineExperiment({
      name: "w",
      description: "w",
      axes: { ppg: [false, true] },
      replicas: 2,
      defaults: { region: "eastus", zone: null, size: "Standard_D4s_v5", accelnet: false },
      hosts: { client: {}, server: {} },
      measure: [{ tool: "ping", params: { count: 3, interval: 0.1 } }],
    }),
  );
  const target = (limits?: ReturnType<typeof profileLimits>): Target => ({
    name: "fake",
    up: async () => ({ hosts: [], shaping: { latency: "not-applicable", bandwidth: "not-applicable", note: "" }, facts: {} }),
    down: async () => ({ status: "ok", errors: [], removed: [] }),
    ...(limits ? { waveLimits: async () => limits } : {}),
  });
  const ctx = (log: string[]) => ({ runId: "r", runDir: "/nonexistent", log: (m: string) => log.push(m) });

  it("no limits known and none asked for: one wave (undefined)", async () => {
    expect(await runWaves(plan, target(), ctx([]), undefined)).toBeUndefined();
  });

  it("sizes the waves against what the target reads, --max-vcpus on top, and logs them with each wave's cost on Azure", async () => {
    const log: string[] = [];
    // 4 deployments of 8 vCPUs: 32 > 20 → 2 waves; with --max-vcpus 8 → 4.
    expect((await runWaves(plan, target(profileLimits()), ctx(log), undefined))!.waves).toHaveLength(2);
    expect(log.at(-1)).toContain("measurement: about");
    const four = await runWaves(plan, target(profileLimits()), ctx(log), 8, { azureCost: true });
    expect(four!.waves.map((w) => w.deployments)).toEqual([["ppg=false#r0"], ["ppg=true#r0"], ["ppg=false#r1"], ["ppg=true#r1"]]);
    expect(log.at(-1)).toMatch(/wave 4 of 4: [\s\S]*cost: \$[\d.]+\/h[\s\S]*wall time: about/);
  });

  describe("sizes read live with the limits (Azure: the subscription's SKU list)", () => {
    const weird = buildPlan(
      defineExperiment({
        name: "w",
        description: "w",
        axes: { ppg: [false, true] },
        replicas: 2,
        defaults: { region: "eastus", zone: null, size: "Standard_Weird", accelnet: false },
        hosts: { client: {}, server: {} },
        measure: [{ tool: "ping", params: { count: 3, interval: 0.1 } }],
      }),
    );
    const sku = (capabilities: { name: string; value: string }[]) => ({ resourceType: "virtualMachines", name: "Standard_Weird", family: "standardWeirdFamily", locations: ["eastus"], capabilities });
    const live = (skus: ReturnType<typeof sku>[]): Target => ({ ...target(), waveLimits: async () => ({ ...profileLimits(), skus }) });

    it("each deployment's vCPUs come from the live SKU list, not counted as 0 where the catalog does not know the size", async () => {
      const log: string[] = [];
      // 4 deployments × 2 hosts × 8 vCPUs = 64 > 20: waves of one deployment (16 vCPUs) each.
      const waves = await runWaves(weird, live([sku([{ name: "vCPUs", value: "8" }])]), ctx(log), undefined);
      expect(waves!.waves).toHaveLength(4);
      expect(waves!.waves[0]!.regions).toEqual([{ region: "eastus", vcpus: 16, publicIps: 2, families: [{ family: "standardWeirdFamily", vcpus: 16, unknownSizes: [] }] }]);
      expect(waves!.unknown).toEqual([]);
      // The SKU list is not carried into the wave plan (the limits alone).
      expect(Object.keys(waves!.limits).sort()).toEqual(["otherRegions", "regions", "source"]);
    });

    it("a size whose vCPUs the live list leaves UNKNOWN too: refused before the first wave, naming the size", async () => {
      await expect(runWaves(weird, live([sku([])]), ctx([]), undefined)).rejects.toThrow(
        /^fake target: not deploying \(nothing was created\): vCPUs UNKNOWN for Standard_Weird: neither latlab's size catalog nor the SKU list the fake target read live gives its vCPUs/,
      );
    });

    it("a target that reads no SKU list (local, --max-vcpus): counted as 0, and it says it is never checked live", async () => {
      const log: string[] = [];
      const waves = await runWaves(weird, target(), ctx(log), 8);
      expect(waves!.unknown).toEqual(["vCPUs UNKNOWN for Standard_Weird: counted as 0 in these waves; the fake target reads no SKU list, so it is never checked live"]);
      expect(log.join("\n")).not.toContain("checked live before deploying");
    });
  });

  it("a deployment that cannot fit even alone: an error naming the target, the limit and that nothing was created", async () => {
    await expect(runWaves(plan, target(profileLimits()), ctx([]), 4)).rejects.toThrow(/^fake target: not deploying \(nothing was created\): a deployment does not fit even alone in new pay-as-you-go subscription \(documented default quotas\), whatever the number of waves:\n {2}deployment ppg=false#r0 .*--max-vcpus: needs 8 vCPUs, 4 available/);
  });
});
