import { describe, expect, it } from "vitest";
import { buildPlan } from "../../../src/plan/buildPlan.ts";
import { scheduleGroups, scheduledSeconds } from "../../../src/plan/schedule.ts";
import zoneRegion from "../../../experiments/zone-region-baseline.ts";
import ppgVsZone from "../../../experiments/ppg-vs-zone.ts";

describe("scheduleGroups", () => {
  it("runs tcp-echo's three pairs together (seed 000 watched the same hours from three places)", () => {
    const plan = buildPlan(zoneRegion);
    expect(scheduleGroups(plan.cells).map((g) => g.length)).toEqual([3]);
    // Estimated as one cell's time, not three.
    expect(plan.estimate.measurementSeconds).toBe(plan.cells[0]!.estimatedSeconds);
  });

  it("runs every other tool's cells one at a time", () => {
    const plan = buildPlan(ppgVsZone);
    expect(scheduleGroups(plan.cells).every((g) => g.length === 1)).toBe(true);
    expect(scheduledSeconds(plan.cells, () => 2)).toBe(2 * plan.cells.length);
  });
});
