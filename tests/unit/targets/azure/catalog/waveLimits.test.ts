import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { networkUsagesUrl, readComputeCapacity, skusUrl, usagesUrl, type HttpGet } from "../../../../../src/targets/azure/catalog/computeCapacity.ts";
import { deploymentDemands, liveLimits, profileLimits, publicIpIssues, standardPublicIpUsage, UsageListSchema, type Usage } from "../../../../../src/targets/azure/catalog/quota.ts";
import { describeProfile, NEW_SUBSCRIPTION_PROFILE, SubscriptionProfileSchema } from "../../../../../src/targets/azure/catalog/subscriptionProfile.ts";
import { checkSubscriptionCapacity } from "../../../../../src/targets/azure/lifecycle/azureTarget.ts";
import { planOf } from "../helpers.ts";

// ARM responses: see tests/fixtures/azure/capacity/README.md for where each comes from.
const FIXTURES = join(import.meta.dirname, "../../../../fixtures/azure/capacity");
const fixture = (name: string): unknown => JSON.parse(readFileSync(join(FIXTURES, name), "utf8"));
const usages = (name: string): Usage[] => UsageListSchema.parse(fixture(name)).value;
const SUB = "00000000-0000-0000-0000-000000000000";

/** Four deployments of two Standard_D2s_v5 hosts in North Europe: 8 public IPs, 16 vCPUs. */
const fourPairs = () =>
  planOf({ name: "four", defaults: { region: "northeurope", zone: null, size: "Standard_D2s_v5", accelnet: false }, axes: { ppg: [false, true] }, replicas: 2, measure: [{ tool: "ping", params: { count: 3, interval: 0.1 } }] });

beforeEach(() => {
  vi.stubGlobal("fetch", () => {
    throw new Error("network access in a unit test");
  });
});
afterEach(() => {
  vi.unstubAllGlobals();
});

describe("the new-subscription profile", () => {
  it("is the documented defaults, each figure with its repository, path, commit and sentence", () => {
    expect(SubscriptionProfileSchema.parse(NEW_SUBSCRIPTION_PROFILE)).toEqual(NEW_SUBSCRIPTION_PROFILE);
    expect([NEW_SUBSCRIPTION_PROFILE.regionalVcpus, NEW_SUBSCRIPTION_PROFILE.familyVcpus, NEW_SUBSCRIPTION_PROFILE.publicIps]).toEqual([20, 20, 10]);
    const figures = NEW_SUBSCRIPTION_PROFILE.sources.map((s) => s.figure).sort();
    expect(figures).toEqual(["familyVcpus", "publicIps", "regionalVcpus"]);
    for (const s of NEW_SUBSCRIPTION_PROFILE.sources) {
      expect(s.repo).toBe("MicrosoftDocs/azure-docs");
      expect(s.commit).toMatch(/^[0-9a-f]{40}$/);
      // The figure is in the sentence quoted.
      expect(s.sentence).toContain(s.figure === "publicIps" ? "| 10 |" : "|20<sup>1</sup> per region.");
    }
    expect(describeProfile()).toContain("20 total regional vCPUs, 20 vCPUs per VM family, 10 Standard public IPv4 addresses, per region");
  });

  it("profileLimits: the same figures in every region, families included", () => {
    expect(profileLimits()).toEqual({ source: NEW_SUBSCRIPTION_PROFILE.name, regions: {}, otherRegions: { regionalVcpus: 20, familyVcpus: {}, otherFamilies: 20, publicIps: 10 } });
    expect(profileLimits(NEW_SUBSCRIPTION_PROFILE, 8).maxVcpus).toBe(8);
  });
});

describe("Network usages: the Standard public IP entry", () => {
  it("finds StandardSkuPublicIpAddresses, and not the spec example's PublicIPAddresses (Basic and Standard, or Basic only)", () => {
    expect(standardPublicIpUsage(usages("network-usages-standard-ips.json"))).toMatchObject({ name: { value: "StandardSkuPublicIpAddresses" }, currentValue: 3, limit: 10 });
    expect(standardPublicIpUsage(usages("network-usages-spec.json"))).toBeUndefined();
  });

  it("matches without case, the IPv4… spelling, and the portal's label when name.value is missing", () => {
    const u = (value: string | undefined, label?: string): Usage => ({ currentValue: 0, limit: 5, name: { ...(value ? { value } : {}), ...(label ? { localizedValue: label } : {}) } });
    expect(standardPublicIpUsage([u("standardskupublicipaddresses")])?.limit).toBe(5);
    expect(standardPublicIpUsage([u("IPv4StandardSkuPublicIpAddresses")])?.limit).toBe(5);
    expect(standardPublicIpUsage([u(undefined, "Public IP Addresses - Standard")])?.limit).toBe(5);
    expect(standardPublicIpUsage([u("PublicIPAddresses", "Public IP Addresses - Basic")])).toBeUndefined();
  });
});

describe("liveLimits", () => {
  it("what is free per region: total regional, every family listed, Standard public IPs (limit − in use)", () => {
    const l = liveLimits(["northeurope"], { northeurope: usages("usages-docs.json") }, { northeurope: usages("network-usages-standard-ips.json") });
    const ne = l.regions.northeurope!;
    expect(ne.regionalVcpus).toBe(256); // 4 of 260 in use
    expect(ne.familyVcpus.standardDSv2Family).toBe(99); // 1 of 100
    expect(ne.otherFamilies).toBeNull();
    expect(ne.publicIps).toBe(7); // 3 of 10
    expect(l.source).toContain("read live");
  });

  it("public IPs not limited when the Network usages were not read or list no Standard entry", () => {
    expect(liveLimits(["northeurope"], { northeurope: usages("usages-docs.json") }, undefined).regions.northeurope!.publicIps).toBeNull();
    expect(liveLimits(["northeurope"], { northeurope: usages("usages-docs.json") }, { northeurope: usages("network-usages-spec.json") }).regions.northeurope!.publicIps).toBeNull();
  });
});

describe("publicIpIssues / deploymentDemands", () => {
  it("one public IP per VM: 8 needed, 7 free → one shortfall naming the quota, the numbers and how to ask for more", () => {
    const issues = publicIpIssues(fourPairs(), { northeurope: usages("network-usages-standard-ips.json") });
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ kind: "quota", region: "northeurope", quota: "StandardSkuPublicIpAddresses", needed: 8, available: 7, limit: 10, current: 3 });
    expect(issues[0]!.message).toContain('northeurope: Standard public IPv4 addresses ("Public IP Addresses - Standard") needed 8 (one per VM), available 7 (limit 10, in use 3)');
    expect(issues[0]!.message).toContain("az network list-usages --location northeurope");
    expect(publicIpIssues(fourPairs(), { northeurope: usages("network-usages-spec.json") })).toEqual([]);
  });

  it("each deployment's vCPUs per family and region, and its public IPs", () => {
    const demands = deploymentDemands(fourPairs());
    expect(demands).toHaveLength(4);
    expect(demands[0]).toEqual({
      deployment: "ppg=false#r0",
      variants: ["ppg=false"],
      replica: 0,
      regions: [{ region: "northeurope", vcpus: 4, publicIps: 2, families: [{ family: "standardDSv5Family", vcpus: 4, unknownSizes: [] }] }],
    });
  });
});

describe("reading the Network usages", () => {
  const fake = (routes: Record<string, { status: number; body: unknown }>): HttpGet => async (url) => {
    const r = routes[url];
    if (!r) throw new Error(`fake ARM: no route for ${url}`);
    return { ok: r.status < 300, status: r.status, text: async () => JSON.stringify(r.body) };
  };
  it("a 403 on the Network usages names that API and the action to grant", async () => {
    const http = fake({
      [usagesUrl(SUB, "northeurope")]: { status: 200, body: fixture("usages-docs.json") },
      [skusUrl(SUB, "northeurope")]: { status: 200, body: fixture("skus-northeurope.json") },
      [networkUsagesUrl(SUB, "northeurope")]: { status: 403, body: fixture("arm-error-403.json") },
    });
    await expect(readComputeCapacity(["northeurope"], { subscriptionId: SUB, http, token: async () => "t" })).rejects.toThrow(/Network usages API for northeurope: HTTP 403 .*Microsoft\.Network\/locations\/usages\/read/);
  });
});

describe("checkSubscriptionCapacity (before each wave deploys)", () => {
  it("refuses a wave whose public IPs the subscription cannot hold, nothing created", async () => {
    const logs: string[] = [];
    const capacity = { usages: { northeurope: usages("usages-docs.json") }, skus: { northeurope: [] }, networkUsages: { northeurope: usages("network-usages-standard-ips.json") } };
    const plan = fourPairs();
    // No SKUs listed: the size issues come too; the public IP one is what this test is about.
    await expect(checkSubscriptionCapacity(plan, async () => capacity, (m) => logs.push(m))).rejects.toThrow(/Standard public IPv4 addresses .* needed 8 \(one per VM\), available 7/);
  });

  it("passes a wave that fits and says what it checked", async () => {
    const logs: string[] = [];
    const plan = planOf({ name: "one", defaults: { region: "northeurope", zone: null, size: "Standard_DS13_v2", accelnet: false }, measure: [{ tool: "ping", params: { count: 3, interval: 0.1 } }] });
    const skus = (fixture("skus-northeurope.json") as { value: unknown[] }).value;
    const capacity = { usages: { northeurope: usages("usages-docs.json") }, skus: { northeurope: skus as never }, networkUsages: { northeurope: usages("network-usages-standard-ips.json") } };
    await checkSubscriptionCapacity(plan, async () => capacity, (m) => logs.push(m));
    expect(logs.at(-1)).toContain("Standard public IPs: northeurope 2");
  });
});
