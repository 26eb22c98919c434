import { describe, expect, it } from "vitest";
import { REGIONS, VM_SIZES, regionCapability, sizeCapability } from "../../../../../src/targets/azure/catalog/capabilities.ts";
import { sizeFacts } from "../../../../../src/targets/azure/catalog/sizes/sizeFacts.ts";
import { shippedExperimentPlans } from "../helpers.ts";

/** Sizes and regions the seed reports (/work/shared/seeds) use. */
const SEED_SIZES = ["Standard_B1s", "Standard_B1ms", "Standard_D2s_v4", "Standard_D2s_v5", "Standard_D3_v2", "Standard_DS13_v2", "Standard_DS14_v2", "Standard_D4s_v5", "Standard_D8s_v5"];
const SEED_REGIONS = ["uksouth", "ukwest", "eastus", "northeurope"];

describe("capability tables", () => {
  it("cover every size and region of the seeds", () => {
    for (const s of SEED_SIZES) expect(sizeCapability(s), s).toBeDefined();
    for (const r of SEED_REGIONS) expect(regionCapability(r), r).toBeDefined();
  });

  it("cover every region used by experiments/*.ts, and every size is one a new subscription can deploy", async () => {
    const shipped = await shippedExperimentPlans();
    expect(shipped.length).toBeGreaterThan(0);
    for (const { file, plan } of shipped) {
      for (const d of plan?.deployments ?? []) {
        for (const h of d.hosts) {
          const facts = sizeFacts(h.size);
          expect(facts.origin, `${file}: ${h.size}`).not.toBe("unknown");
          expect(facts.previousGeneration, `${file}: ${h.size}`).toBeNull();
          expect(regionCapability(h.region), `${file}: ${h.region}`).toBeDefined();
        }
      }
    }
  });

  it("give every entry a source", () => {
    for (const [name, s] of Object.entries(VM_SIZES)) {
      expect(s.source.url, name).toMatch(/^https:\/\/learn\.microsoft\.com\//);
      expect(s.source.title.length, name).toBeGreaterThan(0);
      expect(s.vcpus, name).toBeGreaterThan(0);
    }
    for (const [name, r] of Object.entries(REGIONS)) expect(r.source.url, name).toMatch(/^https:\/\/learn\.microsoft\.com\//);
  });

  it("say what Microsoft's pages say about the seeds' sizes and regions", () => {
    expect(sizeCapability("Standard_B1s")!.acceleratedNetworking).toBe("unsupported");
    expect(sizeCapability("Standard_B1ms")!.acceleratedNetworking).toBe("unsupported");
    expect(sizeCapability("Standard_B12ms")!.acceleratedNetworking).toBe("supported");
    expect(sizeCapability("Standard_D2s_v4")!.acceleratedNetworking).toBe("supported");
    expect(sizeCapability("Standard_D2s_v5")!.acceleratedNetworking).toBe("required");
    expect(sizeCapability("Standard_D3_v2")).toMatchObject({ vcpus: 4, acceleratedNetworking: "supported", bandwidthMbps: 3000, generations: [1] });
    expect(sizeCapability("Standard_DS13_v2")).toMatchObject({ vcpus: 8, bandwidthMbps: 6000 });
    expect(sizeCapability("Standard_DS14_v2")).toMatchObject({ vcpus: 16, bandwidthMbps: 12000 });
    expect(sizeCapability("Standard_D2s_v4")!.bandwidthMbps).toBe(5000);
    expect(sizeCapability("Standard_B1s")!.bandwidthMbps).toBeNull();
    expect(regionCapability("uksouth")!.zones).toEqual(["1", "2", "3"]);
    expect(regionCapability("ukwest")!.zones).toEqual([]);
    expect(regionCapability("eastus")!.zones).toEqual(["1", "2", "3"]);
    expect(regionCapability("northeurope")!.zones).toEqual(["1", "2", "3"]);
  });

  it("do not answer for names they do not hold (not even Object.prototype's)", () => {
    expect(sizeCapability("Standard_Nope_v9")).toBeUndefined();
    expect(regionCapability("toString")).toBeUndefined();
  });
});
