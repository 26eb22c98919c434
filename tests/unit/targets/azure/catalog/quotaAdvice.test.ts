import { describe, expect, it } from "vitest";
import { QUOTA_REQUEST_DOCS, familyQuotaAdvice } from "../../../../../src/targets/azure/catalog/quotaAdvice.ts";
import { PREVIOUS_GEN_SOURCE } from "../../../../../src/targets/azure/catalog/sizes/previousGeneration.ts";

describe("familyQuotaAdvice: what a family shortfall tells the user to do", () => {
  it("a current series: request more quota, where and how", () => {
    const advice = familyQuotaAdvice("standardDSv5Family", [{ size: "Standard_D2s_v5", vcpusEach: 2 }], "eastus");
    expect(advice).toBe(
      `request it in the Azure portal: Quotas → Compute → select standardDSv5Family in eastus → New Quota Request (${QUOTA_REQUEST_DOCS.family}); an approved family increase raises the regional total with it`,
    );
  });

  it("a restricted previous-generation series (Dv2): no quota request, the current replacement instead", () => {
    const advice = familyQuotaAdvice("standardDv2Family", [{ size: "Standard_D3_v2", vcpusEach: 4 }], "uksouth");
    expect(advice).not.toMatch(/Quota Request|request it/);
    expect(advice).toMatch(/^Azure will not approve more standardDv2Family quota, so change the size instead: Standard_D3_v2 is a previous-generation size \(Dv2 series\): since 2026-07 Azure does not let new subscriptions deploy it and approves no more quota for it; the series retires on 2028-05-01\. Use Standard_D4s_v5 \(/);
    expect(advice).toContain(PREVIOUS_GEN_SOURCE.url);
  });

  it("names a replacement for every restricted size of the family, once each", () => {
    const advice = familyQuotaAdvice("standardDSv2Family", [{ size: "Standard_DS13_v2", vcpusEach: 8 }, { size: "Standard_DS1_v2", vcpusEach: 1 }, "Standard_DS13_v2"], "northeurope");
    expect(advice.match(/is a previous-generation size/g)).toHaveLength(2);
    // DS13_v2 is memory optimized: its replacement is an E size; DS1_v2 (1 vCPU) gets no same-vCPU suggestion.
    expect(advice).toMatch(/Standard_DS13_v2 is a previous-generation size \(Dsv2 series\)[^;]*; the series retires on 2028-05-01\. Use Standard_E8s_v5 \(Ev5, Esv6 or Esv7/);
    expect(advice).toMatch(/Standard_DS1_v2 is a previous-generation size .* Use a current size \(/);
  });

  it("v3/v4 series are restricted too, without a retirement date; a size given by name alone gets its vCPUs from the catalog", () => {
    const advice = familyQuotaAdvice("standardDSv3Family", ["Standard_D4s_v3"], "westeurope");
    expect(advice).toMatch(/Standard_D4s_v3 is a previous-generation size \(Dsv3 series\): since 2026-07 Azure does not let new subscriptions deploy it and approves no more quota for it\. Use Standard_D4s_v5 \(Dv5, Dv6 or Dv7/);
    expect(advice).not.toMatch(/retires/);
  });

  it("reads a size's name as Azure does, without case: standard_ds13_v2 is DS13_v2, restricted", () => {
    const advice = familyQuotaAdvice("standardDSv2Family", [{ size: "standard_ds13_v2", vcpusEach: 8 }], "northeurope");
    expect(advice).toContain("Azure will not approve more standardDSv2Family quota");
    expect(advice).toContain("Standard_DS13_v2 is a previous-generation size");
    expect(advice).not.toContain("New Quota Request");
  });
});
