import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { buildPlan, defineExperiment } from "../../../../../src/index.ts";
import { checkCost } from "../../../../../src/targets/azure/lifecycle/preflight.ts";
import { azureWarnings } from "../../../../../src/targets/azure/catalog/validateAzure.ts";
import { checkCapacity, vcpuNeeds } from "../../../../../src/targets/azure/catalog/quota.ts";
import { SKU_SNAPSHOT_PATH } from "../../../../../src/targets/azure/catalog/sizes/unknownSize.ts";
import { validateLocalPlan } from "../../../../../src/targets/local/planCheck.ts";

/**
 * Issue 23: "an unknown Azure size has no did-you-mean and names a file that moved". A typo of a
 * size on `--target azure` is said with the closest known size and the file the sizes are in,
 * wherever the run stops: the plan's warning, the cost gate of `run` (the first refusal a run
 * without --max-cost meets), and the live availability check.
 */
const ROOT = resolve(import.meta.dirname, "../../../../..");
const typo = () =>
  buildPlan(
    defineExperiment({
      name: "size-typo",
      description: "a misspelled size",
      defaults: { region: "uksouth", size: "Standard_D4sv5" },
      hosts: { client: {}, server: {} },
      measure: [{ tool: "ping" }],
    }),
  );

describe("an unknown Azure size: did-you-mean and the file the sizes are in", () => {
  it("names a file that exists: the SKU snapshot", () => {
    expect(SKU_SNAPSHOT_PATH).toBe("src/targets/azure/catalog/sizes/skus.snapshot.json");
    expect(existsSync(resolve(ROOT, SKU_SNAPSHOT_PATH))).toBe(true);
  });

  it("plan --target azure warns with the did-you-mean and the file", () => {
    const warnings = azureWarnings(typo()).filter((w) => w.includes("Standard_D4sv5"));
    expect(warnings).toHaveLength(2);
    for (const w of warnings) {
      expect(w).toContain('did you mean "Standard_D4s_v5"?');
      expect(w).toContain(SKU_SNAPSHOT_PATH);
    }
  });

  it("run --target azure: the cost refusal says the size is unknown, with the did-you-mean and the file (not only 'use --live-prices')", async () => {
    const refusal = checkCost(typo(), { log: vi.fn() });
    await expect(refusal).rejects.toThrow(/^not deploying: .*Standard_D4sv5 is not a size latlab knows .* — did you mean "Standard_D4s_v5"\?/);
    await expect(refusal).rejects.toThrow(SKU_SNAPSHOT_PATH);
  });

  it("run --target azure --max-cost: the note that lets it go still says the size is unknown", async () => {
    const log = vi.fn();
    await checkCost(typo(), { log, maxCost: 100 });
    const notes = log.mock.calls.map((c) => String(c[0])).filter((l) => l.startsWith("note:"));
    expect(notes.join("\n")).toMatch(/Standard_D4sv5 is not a size latlab knows .* — did you mean "Standard_D4s_v5"\?/);
  });

  it("the live check: a size the region does not list, and the catalog does not know, gets the did-you-mean", () => {
    // The region's live SKU list without that name (an empty list: nothing of that name either).
    const issues = checkCapacity(vcpuNeeds(typo()), { uksouth: [] }, { uksouth: [] });
    expect(issues.map((i) => i.message).join("\n")).toMatch(/Standard_D4sv5 is not offered in uksouth.*did you mean "Standard_D4s_v5"\?/);
  });

  it("the local target names the same file", () => {
    expect(validateLocalPlan(typo()).map((i) => i.message).join("\n")).toContain(SKU_SNAPSHOT_PATH);
  });
});
