import { describe, expect, it } from "vitest";
import { comparisonCaveats, pairComparisonCaveats } from "../../../src/results/comparisons.ts";
import { hostRecords } from "../../../src/results/hostRecords.ts";
import { caveatSentence, placementByDeployment, readColocation } from "../../../src/results/placement.ts";
import { ResultsSchema } from "../../../src/results/schema.ts";
import { ResultsPlacementFixture } from "./placementFixture.ts";

describe("reading a colocationStatus", () => {
  it("knows Azure's recorded codes and any spelling of 'not aligned'; anything else is Unknown with a reason", () => {
    expect(readColocation({ code: "ColocationStatus/Aligned", level: "Info", displayStatus: "Aligned" })).toEqual({ status: "Aligned" });
    expect(readColocation({ code: "ColocationStatus/Unknown", level: "Warning" })).toEqual({ status: "Unknown" });
    for (const code of ["ColocationStatus/NotAligned", "ColocationStatus/Not Aligned", "colocationstatus/not_aligned"]) expect(readColocation({ code }).status).toBe("NotAligned");
    expect(readColocation({ displayStatus: "Not Aligned" }).status).toBe("NotAligned");
    expect(readColocation(undefined)).toEqual({ status: "Unknown", reason: "ARM returned no colocationStatus" });
    expect(readColocation({ code: "ColocationStatus/Drifting" })).toEqual({ status: "Unknown", reason: 'colocation status code "ColocationStatus/Drifting" is not one latlab knows' });
  });
});

describe("placement evidence in results.json", () => {
  it("goes from the target's hosts into each host record, and results.json validates", () => {
    const f = ResultsPlacementFixture("NotAligned");
    const hosts = f.results.variants.find((v) => v.id === "ppg=true")!.hosts;
    expect(hosts.map((h) => h.placement?.ppg?.status)).toEqual(["NotAligned", "NotAligned"]);
    expect(f.results.variants.find((v) => v.id === "ppg=false")!.hosts.every((h) => h.placement && !h.placement.ppg)).toBe(true);
    expect(ResultsSchema.safeParse(JSON.parse(JSON.stringify(f.results))).success).toBe(true);
    // A target that reports none (local) leaves the field out.
    expect(hostRecords(f.plan, "ppg=true", []).every((h) => !("placement" in h))).toBe(true);
  });

  it("per deployment and PPG asked: what ARM said, hosts listed once", () => {
    const rows = placementByDeployment(ResultsPlacementFixture("Aligned").results.variants);
    expect(rows.map((r) => [r.deployment, r.ppg, r.evidence?.status, r.hosts.map((h) => h.role)])).toEqual([
      ["ppg=false", null, undefined, ["server", "client"]],
      ["ppg=true", "ppg", "Aligned", ["server", "client"]],
    ]);
  });
});

describe("comparisons resting on a PPG that is not Aligned", () => {
  it("are flagged on the side whose PPG is NotAligned or Unknown, never when Aligned or without evidence", () => {
    for (const status of ["NotAligned", "Unknown"] as const) {
      const { results } = ResultsPlacementFixture(status);
      expect(results.comparisons.length).toBeGreaterThan(0);
      for (const c of results.comparisons) {
        const caveats = comparisonCaveats(results, c);
        expect(caveats).toEqual([expect.objectContaining({ side: "candidate", variant: "ppg=true", deployment: "ppg=true", ppg: "ppg", status })]);
        expect(caveatSentence(caveats)).toMatch(new RegExp(`^Placement: the candidate's PPG 'ppg' \\(deployment ppg=true\\) is ${status}`));
      }
    }
    expect(caveatSentence(comparisonCaveats(ResultsPlacementFixture("NotAligned").results, ResultsPlacementFixture("NotAligned").results.comparisons[0]!))).toContain("its hosts were not all colocated as asked");
    expect(caveatSentence(comparisonCaveats(ResultsPlacementFixture("Unknown").results, ResultsPlacementFixture("Unknown").results.comparisons[0]!))).toContain("their colocation could not be confirmed");
    const aligned = ResultsPlacementFixture("Aligned").results;
    expect(aligned.comparisons.flatMap((c) => comparisonCaveats(aligned, c))).toEqual([]);
    const none = ResultsPlacementFixture("NotAligned", { withEvidence: false }).results;
    expect(none.comparisons.flatMap((c) => comparisonCaveats(none, c))).toEqual([]);
  });

  it("the baseline's side too, and only for the deployments and hosts the pair measured", () => {
    const { results } = ResultsPlacementFixture("NotAligned");
    // Swap roles: the PPG variant as the baseline.
    const c = { ...results.comparisons[0]!, variant: "ppg=false", baseline: "ppg=true" };
    expect(comparisonCaveats(results, c).map((x) => x.side)).toEqual(["baseline"]);
    // A pair that is not the PPG's hosts (no such cells): nothing to flag.
    expect(comparisonCaveats(results, { ...results.comparisons[0]!, pair: "a->b" })).toEqual([]);
    // Two pairs of one variant sharing the PPG: said once.
    expect(pairComparisonCaveats(results, { variant: "ppg=true", pair: "client->server", baselinePair: "client->server" })).toHaveLength(1);
  });
});
