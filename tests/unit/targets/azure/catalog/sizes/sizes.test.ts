import { describe, expect, it } from "vitest";
import { parseKarpenterSkuGo, parseKnownSkusYaml } from "../../../../../../scripts/karpenterSkus.ts";
import { describePreviousGeneration, previousGeneration } from "../../../../../../src/targets/azure/catalog/sizes/previousGeneration.ts";
import { factsFromSkus, sizeFacts, suggestSize, vmBoot } from "../../../../../../src/targets/azure/catalog/sizes/sizeFacts.ts";
import { parseSizeName, seriesOf, vcpusFromName } from "../../../../../../src/targets/azure/catalog/sizes/sizeName.ts";
import { skuSnapshot } from "../../../../../../src/targets/azure/catalog/sizes/skuSnapshot.ts";

describe("the shipped SKU snapshot: where it came from", () => {
  const snap = skuSnapshot();

  it("names the repository, the commit, each file and when its generator ran", () => {
    expect(snap.source.repository).toBe("github.com/Azure/karpenter-provider-azure");
    expect(snap.source.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(snap.source.files.map((f) => f.path)).toEqual([
      "pkg/fake/zz_generated.sku.southcentralus.go",
      "pkg/fake/zz_generated.sku.westcentralus.go",
      "pkg/providers/instancetype/known_skus.yaml",
    ]);
    for (const f of snap.source.files) expect(f.generatedAt, f.path).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(snap.source.generator).toMatch(/instancetype_gen.*Resource SKUs API/);
    expect(snap.madeBy).toContain(snap.source.commit);
  });

  it("holds full SKU entries in ARM's shape, each region as its file says, and a family for every name", () => {
    const regions = new Set(snap.skus.flatMap((s) => s.locations ?? []));
    expect([...regions].sort()).toEqual(["southcentralus", "westcentralus"]);
    for (const s of snap.skus) {
      expect(s.resourceType, s.name).toBe("virtualMachines");
      expect(s.capabilities?.find((c) => c.name === "vCPUs")?.value, s.name).toMatch(/^\d+$/);
    }
    expect(Object.keys(snap.names).length).toBeGreaterThan(1000);
    // A size of both lists has the same family in both (a parse that shifted fields would not).
    for (const s of snap.skus) if (snap.names[s.name!]) expect(snap.names[s.name!]!.family.toLowerCase(), s.name).toBe(s.family!.toLowerCase());
  });

  it("records what Azure said of a v6 size: generation 2 only, NVMe only, AccelNet", () => {
    const f = sizeFacts("Standard_D2as_v6");
    expect(f).toMatchObject({ origin: "snapshot", vcpus: 2, family: "standardDav6Family", acceleratedNetworking: true, hyperVGenerations: [2], diskControllerTypes: ["NVMe"] });
    expect(vmBoot(f)).toEqual({ generation: 2, diskControllerType: "NVMe" });
  });
});

describe("karpenter's generated files, read as its generator writes them", () => {
  const go = `// generated at 2025-06-03T21:16:53Z

func init() {
	ResourceSkus["westcentralus"] = []compute.ResourceSku{
		{
			Name:         lo.ToPtr("Standard_A0"),
			Family:       lo.ToPtr("standardA0_A7Family"),
			ResourceType: lo.ToPtr("virtualMachines"),
			Restrictions: &[]compute.ResourceSkuRestrictions{
				{
					Type:   compute.ResourceSkuRestrictionsType("Location"),
					Values: &[]string{"westcentralus"},
					RestrictionInfo: &compute.ResourceSkuRestrictionInfo{
						Locations: &[]string{
							"westcentralus",
						},
						Zones: &[]string{},
					},
					ReasonCode: "NotAvailableForSubscription",
				},
			},
			Capabilities: &[]compute.ResourceSkuCapabilities{
				{Name: lo.ToPtr("vCPUs"), Value: lo.ToPtr("1")},
				{Name: lo.ToPtr("HyperVGenerations"), Value: lo.ToPtr("V1")},
			},
			Locations:    &[]string{"westcentralus"},
			LocationInfo: &[]compute.ResourceSkuLocationInfo{{Location: lo.ToPtr("westcentralus"), Zones: &[]string{}}},
		},
		{
			Name:         lo.ToPtr("Standard_D2_v5"),
			Family:       lo.ToPtr("standardDv5Family"),
			ResourceType: lo.ToPtr("virtualMachines"),
			Restrictions: &[]compute.ResourceSkuRestrictions{},
			Capabilities: &[]compute.ResourceSkuCapabilities{
				{Name: lo.ToPtr("vCPUs"), Value: lo.ToPtr("2")},
				{Name: lo.ToPtr("HyperVGenerations"), Value: lo.ToPtr("V1,V2")},
				{Name: lo.ToPtr("AcceleratedNetworkingEnabled"), Value: lo.ToPtr("True")},
			},
			Locations: &[]string{"westcentralus"},
			LocationInfo: &[]compute.ResourceSkuLocationInfo{{Location: lo.ToPtr("westcentralus"), Zones: &[]string{
				"1",
				"3",
			},
			},
			},
		},
	}
}
`;
  it("reads entries, capabilities, zones and a Location restriction", () => {
    const file = parseKarpenterSkuGo(go);
    expect(file.region).toBe("westcentralus");
    expect(file.generatedAt).toBe("2025-06-03T21:16:53Z");
    expect(file.skus.map((s) => s.name)).toEqual(["Standard_A0", "Standard_D2_v5"]);
    expect(file.skus[0]!.restrictions).toEqual([{ type: "Location", values: ["westcentralus"], restrictionInfo: { locations: ["westcentralus"], zones: [] }, reasonCode: "NotAvailableForSubscription" }]);
    expect(file.skus[1]!.locationInfo).toEqual([{ location: "westcentralus", zones: ["1", "3"] }]);
    const f = factsFromSkus([file.skus[1]!]);
    expect(f).toMatchObject({ vcpus: 2, hyperVGenerations: [1, 2], acceleratedNetworking: true, diskControllerTypes: ["SCSI"] });
  });

  it("refuses a file that is not the generator's", () => {
    expect(() => parseKarpenterSkuGo("package fake\n")).toThrow(/no `ResourceSkus\["<region>"\]/);
  });

  it("reads known_skus.yaml names and families", () => {
    expect(parseKnownSkusYaml(`- name: Standard_D4s_v5\n  family: standardDSv5Family\n  discoveredOn: "2025-05-15"\n`)).toEqual({ Standard_D4s_v5: { family: "standardDSv5Family", discoveredOn: "2025-05-15" } });
    expect(() => parseKnownSkusYaml("- name: x\n")).toThrow(/entry 0 has no name\/family/);
  });
});

describe("size names, by Microsoft's naming convention", () => {
  it("reads family, vCPUs, features and version", () => {
    expect(parseSizeName("Standard_D4s_v5")).toMatchObject({ family: "D", number: 4, features: "s", version: 5 });
    expect(parseSizeName("Standard_NC4as_T4_v3")).toMatchObject({ family: "NC", number: 4, features: "as", accelerator: "T4", version: 3 });
    expect(parseSizeName("Standard_M8-2ms")).toMatchObject({ family: "M", number: 8, constrained: 2, features: "ms", version: null });
    expect(parseSizeName("not a size")).toBeUndefined();
  });

  it("takes vCPUs from the name only where the convention holds", () => {
    expect(vcpusFromName("Standard_F8als_v6")).toBe(8);
    expect(vcpusFromName("Standard_B2ms")).toBe(2);
    // D3_v2 has 4 vCPUs and DS13_v2 has 8: older series carry a size number, so no guess.
    expect(vcpusFromName("Standard_D3_v2")).toBeNull();
    expect(vcpusFromName("Standard_DS13_v2")).toBeNull();
    expect(vcpusFromName("Standard_M8-2ms_v2")).toBeNull();
  });

  it("names the series as the size pages do", () => {
    expect(seriesOf("Standard_DS13_v2")).toBe("Dsv2");
    expect(seriesOf("Standard_D2as_v4")).toBe("Dasv4");
    expect(seriesOf("Standard_B1s")).toBe("Bs");
  });
});

describe("previous-generation series (restricted for new subscriptions since 2026-07)", () => {
  it("marks every series the source lists, and none of the current ones", () => {
    for (const s of ["Standard_D3_v2", "Standard_DS13_v2", "Standard_D2s_v3", "Standard_D2s_v4", "Standard_D4ds_v4", "Standard_D2as_v4", "Standard_B1s", "Standard_A2_v2", "Standard_F4s_v2", "Standard_E4s_v3", "Standard_E8ds_v4", "Standard_L8s_v2", "Standard_D11_v2"]) {
      expect(previousGeneration(s), s).not.toBeNull();
    }
    for (const s of ["Standard_D2s_v5", "Standard_D4ds_v6", "Standard_E4s_v5", "Standard_F8als_v6", "Standard_B2s_v2", "Standard_NC6s_v3", "Standard_DC8s_v3", "Standard_L8s_v3"]) {
      expect(previousGeneration(s), s).toBeNull();
    }
  });

  it("gives retirement dates where published, and a current size of the same vCPUs", () => {
    expect(previousGeneration("Standard_D3_v2", 4)).toMatchObject({ series: "Dv2", retires: "2028-05-01", suggestion: "Standard_D4s_v5" });
    expect(previousGeneration("Standard_DS13_v2", 8)).toMatchObject({ series: "Dsv2", suggestion: "Standard_E8s_v5" });
    expect(previousGeneration("Standard_D2s_v4", 2)).toMatchObject({ series: "Dsv4", retires: null, suggestion: "Standard_D2s_v5" });
    expect(previousGeneration("Standard_B1s", 1)).toMatchObject({ retires: "2028-11-15", suggestion: null });
    expect(describePreviousGeneration("Standard_D3_v2", previousGeneration("Standard_D3_v2", 4)!)).toMatch(/new subscriptions .* no more quota .*previous-gen-series-capacity-limitations/);
  });

  it("suggests only sizes the SKU snapshot lists, and names no series the source does not recommend", () => {
    // D12s_v5, D20s_v5 and E80s_v5 do not exist: no suggestion rather than a wrong one.
    expect(previousGeneration("Standard_B12ms", 12)!.suggestion).toBeNull();
    expect(previousGeneration("Standard_B20ms", 20)!.suggestion).toBeNull();
    expect(previousGeneration("Standard_E80is_v4", 80)!.suggestion).toBeNull();
    expect(previousGeneration("Standard_B4ms", 4)).toMatchObject({ suggestion: "Standard_D4s_v5", migrateTo: "a v5, v6 or v7 series (Microsoft's VM migration guidance)" });
    for (const s of ["Standard_D3_v2", "Standard_DS13_v2", "Standard_E4s_v3", "Standard_F4s_v2", "Standard_B2ms"]) {
      const pg = sizeFacts(s).previousGeneration!;
      if (pg.suggestion) expect(skuSnapshot().names[pg.suggestion], `${s} → ${pg.suggestion}`).toBeDefined();
    }
  });

  it("knows a size however its name is cased, as Azure does", () => {
    expect(sizeFacts("standard_ds13_v2")).toMatchObject({ name: "Standard_DS13_v2", previousGeneration: { series: "Dsv2" } });
  });
});

describe("sizeFacts: any size, UNKNOWN where nothing says", () => {
  it("prefers the live SKU list over every offline source", () => {
    const live = [{ name: "Standard_D4s_v5", resourceType: "virtualMachines", family: "standardDSv5Family", capabilities: [{ name: "vCPUs", value: "4" }, { name: "HyperVGenerations", value: "V2" }, { name: "DiskControllerTypes", value: "SCSI, NVMe" }, { name: "AcceleratedNetworkingEnabled", value: "True" }] }];
    expect(sizeFacts("standard_d4s_v5", live)).toMatchObject({ origin: "live", hyperVGenerations: [2], diskControllerTypes: ["SCSI", "NVMe"] });
    expect(sizeFacts("Standard_D4s_v5").origin).toBe("documented");
  });

  it("knows a current size's family and vCPUs offline, and nothing it cannot", () => {
    expect(sizeFacts("Standard_E4s_v5")).toMatchObject({ origin: "name", vcpus: 4, vcpusOrigin: "name", family: "standardESv5Family", acceleratedNetworking: null, hyperVGenerations: null });
    expect(sizeFacts("Standard_Q7_v9")).toMatchObject({ origin: "unknown", vcpus: 7, family: null });
  });

  it("boots a generation-1-only size from the gen1 image and keeps Azure's defaults when unknown", () => {
    expect(vmBoot(sizeFacts("Standard_D3_v2"))).toEqual({ generation: 1, diskControllerType: null });
    expect(vmBoot(sizeFacts("Standard_E4s_v5"))).toEqual({ generation: 2, diskControllerType: null });
  });

  it("suggests the size a typo means", () => {
    expect(suggestSize("Standard_D4sv5")).toBe("Standard_D4s_v5");
    expect(suggestSize("standard_e4s_v5")).toBe("Standard_E4s_v5");
  });
});

describe("the live SKU list, field by field", () => {
  it("wins where it speaks and leaves the offline facts where it is silent", () => {
    const bare = [{ name: "Standard_D2s_v5", resourceType: "virtualMachines", family: "standardDSv5Family", capabilities: [] }];
    // An entry without capabilities (a test double, a trimmed answer) changes no capability.
    expect(sizeFacts("Standard_D2s_v5", bare)).toMatchObject({ origin: "live", vcpus: 2, vcpusOrigin: "documented", hyperVGenerations: [1, 2], diskControllerTypes: ["SCSI"] });
    const nvme = [{ name: "Standard_D2s_v5", capabilities: [{ name: "DiskControllerTypes", value: "NVMe" }] }];
    expect(sizeFacts("Standard_D2s_v5", nvme)).toMatchObject({ origin: "live", vcpus: 2, diskControllerTypes: ["NVMe"] });
  });
});
