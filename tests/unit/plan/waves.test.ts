import { describe, expect, it } from "vitest";
import { buildPlan, defineExperiment } from "../../../src/index.ts";
import type { Plan } from "../../../src/plan/types.ts";
import { placementOrder, planWaves, singleWave, sumDemands, UNKNOWN_VCPUS_NOTE, waveOfDeployment, WaveRefusal, wavePlan, type DeploymentDemand, type WaveLimits } from "../../../src/plan/waves.ts";
import { deploymentDemands, maxVcpusLimits, profileLimits } from "../../../src/targets/azure/catalog/quota.ts";
import { NEW_SUBSCRIPTION_PROFILE } from "../../../src/targets/azure/catalog/subscriptionProfile.ts";

/** A plan of `variants` (an axis `v`) × `replicas`, two hosts of `size` each in eastus; baselines as the DSL makes them (the first value). */
const planOf = (values: string[], replicas: number, size = "Standard_D2s_v5", baselines?: Record<string, string>): Plan => {
  const p = buildPlan(
    defineExperiment({
      name: "w",
      description: "waves",
      axes: { vnet: values },
      replicas,
      defaults: { region: "eastus", zone: null, size, accelnet: false },
      hosts: { client: {}, server: {} },
      measure: [{ tool: "ping", params: { count: 3, interval: 0.1 } }],
    }),
  );
  return baselines ? { ...p, baselineOf: { ...p.baselineOf, ...baselines } } : p;
};

/** A demand of `vcpus` in one family and region, with `ips` public IPs. */
const demand = (deployment: string, variant: string, replica: number, vcpus: number, ips = 2, family = "standardDSv5Family", region = "eastus"): DeploymentDemand => ({
  deployment,
  variants: [variant],
  replica,
  regions: [{ region, vcpus, publicIps: ips, families: [{ family, vcpus, unknownSizes: [] }] }],
});

const limits = (over: Partial<WaveLimits["otherRegions"] & object> = {}, maxVcpus?: number): WaveLimits => ({
  source: "a test subscription",
  regions: {},
  otherRegions: { regionalVcpus: 20, familyVcpus: {}, otherFamilies: 20, publicIps: 10, ...over },
  ...(maxVcpus !== undefined ? { maxVcpus } : {}),
});

const variantsOfWaves = (p: Plan, waves: { deployments: string[] }[]) => waves.map((w) => w.deployments.map((id) => p.deployments.find((d) => d.id === id)!).map((d) => `${d.variant}#${d.replica}`));

describe("planWaves", () => {
  it("one wave when every deployment fits at once, and says so with no reasons", () => {
    const p = planOf(["a", "b"], 1);
    const w = planWaves(p, deploymentDemands(p), profileLimits());
    expect(w.waves).toHaveLength(1);
    expect(w.waves[0]!.deployments).toEqual(p.deployments.map((d) => d.id));
    expect(w.waves[0]!.regions).toEqual([{ region: "eastus", vcpus: 8, publicIps: 4, families: [{ family: "standardDSv5Family", vcpus: 8, unknownSizes: [] }] }]);
    expect(w.reasons).toEqual([]);
  });

  it("the fewest waves: six deployments of 8 vCPUs under a 20-vCPU family quota go in 3 waves of 2, not 6 and not 2", () => {
    const p = planOf(["a", "b", "c", "d", "e", "f"], 1);
    const demands = p.deployments.map((d) => demand(d.id, d.variant, d.replica, 8));
    const w = planWaves(p, demands, limits());
    expect(w.waves.map((x) => x.deployments.length)).toEqual([2, 2, 2]);
    expect(w.waves.every((x) => x.vcpus === 16)).toBe(true);
    expect(w.reasons).toContain("all deployments at once would need: eastus: standardDSv5Family vCPUs: needs 48 vCPUs, 20 available");
  });

  it("interleaves replicas: replica r of every variant in one wave, each variant in every wave (variant not confounded with wave)", () => {
    const p = planOf(["a", "b"], 4);
    const w = planWaves(p, deploymentDemands(p), maxVcpusLimits(8));
    expect(w.waves).toHaveLength(4);
    expect(variantsOfWaves(p, w.waves)).toEqual([
      ["vnet=a#0", "vnet=b#0"],
      ["vnet=a#1", "vnet=b#1"],
      ["vnet=a#2", "vnet=b#2"],
      ["vnet=a#3", "vnet=b#3"],
    ]);
    for (const x of w.waves) expect(x.variants).toEqual(["vnet=a", "vnet=b"]);
  });

  it("with room for two replicas a wave, each wave still holds both variants (replicas 0 and 2, then 1 and 3)", () => {
    const p = planOf(["a", "b"], 4);
    const w = planWaves(p, deploymentDemands(p), maxVcpusLimits(16));
    expect(w.waves.map((x) => [x.variants, x.replicas])).toEqual([
      [["vnet=a", "vnet=b"], [0, 2]],
      [["vnet=a", "vnet=b"], [1, 3]],
    ]);
  });

  it("keeps each variant beside its own baseline (group baselines) rather than filling wave 1 in plan order", () => {
    // ppg-availability-set's shape: two baselines (x, y), each with one candidate; room for two deployments a wave.
    const p = planOf(["x", "y", "xc", "yc"], 1, "Standard_D2s_v5", { "vnet=y": "vnet=y", "vnet=xc": "vnet=x", "vnet=yc": "vnet=y" });
    const w = planWaves(p, deploymentDemands(p), maxVcpusLimits(8));
    expect(w.waves.map((x) => x.variants)).toEqual([
      ["vnet=x", "vnet=xc"],
      ["vnet=y", "vnet=yc"],
    ]);
  });

  it("refuses a deployment that cannot fit even alone, naming region, limit, need and what is available", () => {
    const p = planOf(["a", "b"], 1, "Standard_D16s_v5");
    const run = () => planWaves(p, deploymentDemands(p), profileLimits());
    expect(run).toThrow(WaveRefusal);
    try {
      run();
    } catch (e) {
      const r = e as WaveRefusal;
      expect(r.issues.map((i) => [i.deployment, i.region, i.limit, i.needed, i.available])).toEqual([
        ["deployment vnet=a (variant vnet=a, replica 0)", "eastus", "standardDSv5Family vCPUs", 32, 20],
        ["deployment vnet=a (variant vnet=a, replica 0)", "eastus", "total regional vCPUs", 32, 20],
        ["deployment vnet=b (variant vnet=b, replica 0)", "eastus", "standardDSv5Family vCPUs", 32, 20],
        ["deployment vnet=b (variant vnet=b, replica 0)", "eastus", "total regional vCPUs", 32, 20],
      ]);
      expect(r.message).toContain(`a deployment does not fit even alone in ${NEW_SUBSCRIPTION_PROFILE.name}, whatever the number of waves`);
      expect(r.message).toContain("deployment vnet=a (variant vnet=a, replica 0): eastus: standardDSv5Family vCPUs: needs 32 vCPUs, 20 available");
    }
  });

  it("--max-vcpus: waves of at most N vCPUs; one deployment above N is refused naming --max-vcpus", () => {
    const p = planOf(["a", "b", "c"], 1);
    const w = planWaves(p, deploymentDemands(p), maxVcpusLimits(4));
    expect(w.waves.map((x) => x.vcpus)).toEqual([4, 4, 4]);
    expect(w.limits.source).toBe("--max-vcpus 4");
    expect(() => planWaves(p, deploymentDemands(p), maxVcpusLimits(3))).toThrow(/all regions: --max-vcpus: needs 4 vCPUs, 3 available/);
  });

  it("--max-vcpus on top of a profile: the stricter of the two decides", () => {
    const p = planOf(["a", "b"], 2);
    expect(planWaves(p, deploymentDemands(p), profileLimits(NEW_SUBSCRIPTION_PROFILE)).waves).toHaveLength(1);
    expect(planWaves(p, deploymentDemands(p), profileLimits(NEW_SUBSCRIPTION_PROFILE, 8)).waves).toHaveLength(2);
  });

  it("Standard public IPs alone can force waves: 12 hosts under a limit of 10; as many candidates as fit stay beside their baseline", () => {
    const p = planOf(["a", "b", "c", "d", "e", "f"], 1, "Standard_B1s");
    const w = planWaves(p, deploymentDemands(p), profileLimits());
    expect(w.reasons).toEqual(["all deployments at once would need: eastus: Standard public IPv4 addresses: needs 12 addresses, 10 available"]);
    // Every variant's baseline is vnet=a: its wave takes four of the five candidates (10 IPs); the fifth goes on.
    expect(w.waves.map((x) => [x.variants, x.regions[0]!.publicIps])).toEqual([
      [["vnet=a", "vnet=b", "vnet=c", "vnet=d", "vnet=e"], 10],
      [["vnet=f"], 2],
    ]);
  });

  it("vCPUs UNKNOWN for a size latlab's catalog does not know: counted as 0, and said so truthfully (refused on Azure, never checked live locally)", () => {
    const p = planOf(["a"], 1, "Standard_Weird");
    const demands = deploymentDemands(p);
    expect(demands[0]!.regions[0]!.families[0]).toMatchObject({ family: "UNKNOWN(Standard_Weird)", vcpus: 0, unknownSizes: ["Standard_Weird"] });
    const w = planWaves(p, demands, profileLimits());
    expect(w.waves).toHaveLength(1);
    expect(w.unknown).toEqual([`vCPUs UNKNOWN for Standard_Weird: counted as 0 in these waves; ${UNKNOWN_VCPUS_NOTE}`]);
    expect(UNKNOWN_VCPUS_NOTE).toContain("the local target never checks it live");
    expect(w.unknown.join("\n")).not.toContain("waves checked live before deploying");
    // A caller that knows where it runs says so instead.
    expect(planWaves(p, demands, maxVcpusLimits(8), { unknownNote: "the local target reads no SKU list, so it is never checked live" }).unknown).toEqual([
      "vCPUs UNKNOWN for Standard_Weird: counted as 0 in these waves; the local target reads no SKU list, so it is never checked live",
    ]);
  });

  it("rotates the baseline groups by one a replica, however sparse the baselines' ranks (accelnet-on-off's shape, 3 replicas)", () => {
    // Three groups (placements) of two variants each: baselines at ranks 0, 2 and 4 of 6 variants.
    const p = planOf(["cz0", "cz1", "sz0", "sz1", "pp0", "pp1"], 3, "Standard_D2s_v5", { "vnet=cz1": "vnet=cz0", "vnet=sz0": "vnet=sz0", "vnet=sz1": "vnet=sz0", "vnet=pp0": "vnet=pp0", "vnet=pp1": "vnet=pp0" });
    const order = placementOrder(deploymentDemands(p), p.variants.map((v) => v.id), p.baselineOf);
    const groupsOf = (replica: number) => [...new Set(order.filter((d) => d.replica === replica).map((d) => p.baselineOf[d.variants[0]!]))];
    expect([0, 1, 2].map(groupsOf)).toEqual([
      ["vnet=cz0", "vnet=sz0", "vnet=pp0"],
      ["vnet=sz0", "vnet=pp0", "vnet=cz0"],
      ["vnet=pp0", "vnet=cz0", "vnet=sz0"],
    ]);
    // Within a group: its baseline first, then the variants compared with it.
    expect(order.filter((d) => d.replica === 1).map((d) => d.variants[0])).toEqual(["vnet=sz0", "vnet=sz1", "vnet=pp0", "vnet=pp1", "vnet=cz0", "vnet=cz1"]);
    // Room for one group a wave: each replica starts with another group, so no group always comes last.
    const w = planWaves(p, deploymentDemands(p), maxVcpusLimits(8));
    expect(w.waves.map((x) => `${x.variants[0]}#${x.replicas.join()}`)).toEqual(["vnet=cz0#0", "vnet=sz0#0", "vnet=pp0#0", "vnet=sz0#1", "vnet=pp0#1", "vnet=cz0#1", "vnet=pp0#2", "vnet=cz0#2", "vnet=sz0#2"]);
  });

  it("live limits per region and family: a region's own figures, another region unlimited", () => {
    const p = planOf(["a", "b"], 1);
    const live: WaveLimits = { source: "live", regions: { EastUS: { regionalVcpus: 100, familyVcpus: { standarddsv5family: 4 }, otherFamilies: null, publicIps: null } } };
    expect(planWaves(p, deploymentDemands(p), live).waves).toHaveLength(2);
    const other: WaveLimits = { source: "live", regions: { westus: { regionalVcpus: 0, familyVcpus: {}, otherFamilies: 0, publicIps: 0 } } };
    expect(planWaves(p, deploymentDemands(p), other).waves).toHaveLength(1);
  });

  it("wants a demand for every deployment", () => {
    const p = planOf(["a", "b"], 1);
    expect(() => planWaves(p, deploymentDemands(p).slice(1), profileLimits())).toThrow("planWaves: no demand for deployment vnet=a");
  });
});

describe("wavePlan / sumDemands / singleWave", () => {
  it("a wave's plan holds its deployments, their cells and variants, with the estimate recomputed", () => {
    const p = planOf(["a", "b"], 2);
    const sub = wavePlan(p, ["vnet=b#r1"]);
    expect(sub.deployments.map((d) => d.id)).toEqual(["vnet=b#r1"]);
    expect(sub.cells.every((c) => c.deployment === "vnet=b#r1")).toBe(true);
    expect(sub.variants.map((v) => v.id)).toEqual(["vnet=b"]);
    expect(sub.estimate).toMatchObject({ cells: sub.cells.length, hosts: 2 });
    expect(sub.baselineOf).toEqual(p.baselineOf);
  });

  it("sums demands per region and family, without case", () => {
    const total = sumDemands([demand("x", "a", 0, 4, 2, "standardDSv5Family"), demand("y", "a", 1, 8, 2, "StandardDSv5Family"), demand("z", "a", 2, 2, 1, "standardBSFamily", "westus")]);
    expect(total).toEqual([
      { region: "eastus", vcpus: 12, publicIps: 4, families: [{ family: "standardDSv5Family", vcpus: 12, unknownSizes: [] }] },
      { region: "westus", vcpus: 2, publicIps: 1, families: [{ family: "standardBSFamily", vcpus: 2, unknownSizes: [] }] },
    ]);
  });

  it("waveOfDeployment: each deployment's 0-based wave", () => {
    expect([...waveOfDeployment([{ deployments: ["a#r0", "b#r0"] }, { deployments: ["a#r1"] }])]).toEqual([["a#r0", 0], ["b#r0", 0], ["a#r1", 1]]);
  });

  it("singleWave holds every deployment", () => {
    const p = planOf(["a", "b"], 2);
    expect(singleWave(p).waves[0]!.deployments).toEqual(p.deployments.map((d) => d.id));
  });
});
