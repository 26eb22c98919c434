import { describe, expect, it } from "vitest";
import { buildPlan, defineExperiment } from "../../../../src/index.ts";
import { formatModelledPairs } from "../../../../src/report/planText.ts";
import { modelledCrossRegionPairs } from "../../../../src/targets/local/model/regionLatencyPlan.ts";
import { targets } from "../../../../src/targets/registry.ts";
import ppgVsZone from "../../../../experiments/ppg-vs-zone.ts";
import zoneRegion from "../../../../experiments/zone-region-baseline.ts";

const transatlantic = buildPlan(
  defineExperiment({
    name: "transatlantic",
    description: "East US to West Europe, with and without Accelerated Networking",
    axes: { accelnet: [false, true] },
    defaults: { region: "eastus", size: "Standard_D2s_v5", zone: null },
    hosts: { client: { region: "westeurope" }, server: {} },
    measure: [{ tool: "ping" }],
  }),
);

describe("latlab plan (local): modelled RTT of each cross-region pair, with its source", () => {
  it("shows the published figure for zone-region-baseline's UK South ↔ UK West, with the table's date and file", async () => {
    const plan = buildPlan(zoneRegion);
    const notes = await targets.local!.planNotes!(plan);
    expect(notes).toEqual([
      "modelled cross-region round trips (local target):",
      "  uksouth ↔ ukwest: 7,500 µs — Microsoft, 'Azure network round-trip latency statistics', P50 of the 30 days ending July 30, 2026 (github.com/MicrosoftDocs/azure-docs articles/networking/azure-network-latency.md, ms.date 2026-07-30, blob 3244971aabee): UK South→UK West 7 ms, UK West→UK South 8 ms; mean of the two directions",
    ]);
  });

  it("lists each pair once per Accelerated Networking setting, with the AccelNet rule applied", () => {
    const pairs = modelledCrossRegionPairs(transatlantic);
    expect(pairs.map((p) => [p.regionA, p.regionB, p.accelnet, p.rttUs, p.basis])).toEqual([
      ["eastus", "westeurope", false, 84_000, "published"],
      ["eastus", "westeurope", true, 84_000 - 662, "published"],
    ]);
    const lines = formatModelledPairs(pairs);
    expect(lines[1]).toMatch(/^ {2}eastus ↔ westeurope: 84,000 µs — Microsoft, .*: East US→West Europe 83 ms, West Europe→East US 85 ms; mean of the two directions$/);
    expect(lines[2]).toMatch(/^ {2}eastus ↔ westeurope \(Accelerated Networking\): 83,338 µs — derived: /);
  });

  it("marks a fallback figure as such", () => {
    const [line] = formatModelledPairs([{ regionA: "uksouth", regionB: "marsnorth", accelnet: false, rttUs: 5300, basis: "fallback", source: "fallback, …" }]).slice(1);
    expect(line).toBe("  uksouth ↔ marsnorth: 5,300 µs (fallback) — fallback, …");
  });

  it("says nothing when the plan has no cross-region pair", async () => {
    const plan = buildPlan(ppgVsZone);
    expect(modelledCrossRegionPairs(plan)).toEqual([]);
    expect((await targets.local!.planNotes!(plan)).filter((n) => n.includes("cross-region"))).toEqual([]);
  });
});
