import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { importExperiment } from "../../../src/cli/experiments/loadExperiment.ts";
import { buildPlan } from "../../../src/plan/buildPlan.ts";
import { worstCaseRun } from "../../../src/targets/azure/catalog/validateAzure.ts";
import { estimateCost, loadPriceSnapshot } from "../../../src/targets/azure/catalog/prices.ts";
import { tempDirs } from "../../tempDirs.ts";
import { runMain } from "./runMain.ts";

const FIXTURE = resolve(import.meta.dirname, "../../fixtures/experiments/hour-of-ping.ts");
const tempDir = tempDirs();

/** The worst-case cost of the run at this duration (the preflight's own estimate). */
async function worstCost(duration?: { seconds: number }): Promise<number> {
  const plan = buildPlan(await importExperiment(FIXTURE), duration ? { duration } : {});
  const estimate = estimateCost(plan, loadPriceSnapshot(), worstCaseRun(plan).seconds / 3600);
  if (!estimate.known) throw new Error("the fixture's size and region must be priced");
  return estimate.totalUsd;
}

describe("a rehearsal's budget is the real run's, not that of its one-second measurements", () => {
  it("refuses a --max-cost the real run (an hour of ping) is above, though the rehearsal's seconds are below it", async () => {
    const rehearsal = await worstCost({ seconds: 1 });
    const real = await worstCost();
    expect(real).toBeGreaterThan(rehearsal);
    const between = ((rehearsal + real) / 2).toFixed(2);
    const out = join(tempDir("latlab-rehearsal-budget-"), "results");
    const r = await runMain(["run", FIXTURE, "--target", "azure", "--rehearse", "--yes", "--max-cost", between, "--out", out, "--no-history", "--quiet"]);
    expect(r.stderr).toMatch(new RegExp(`--rehearse: not rehearsing \\(nothing was started\\): the real run refuses this: --max-cost: estimated \\$[\\d.]+ .* is above the limit \\$${between.replace(".", "\\.")}`));
    expect(r.code).toBe(1);
    expect(existsSync(join(out, "results.json"))).toBe(false);
  });
});
