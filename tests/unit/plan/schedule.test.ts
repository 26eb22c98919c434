import { describe, expect, it } from "vitest";
import { buildPlan } from "../../../src/plan/buildPlan.ts";
import { runOrder, scheduleGroups, scheduledSeconds } from "../../../src/plan/schedule.ts";
import { defineExperiment } from "../../../src/index.ts";
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

describe("runOrder: variants interleaved by repetition and replica", () => {
  const ab = (over: { repetitions?: number; replicas?: number; axes?: Record<string, readonly (string | boolean)[]> } = {}) =>
    buildPlan(
      defineExperiment({
        name: "ab",
        description: "two variants",
        axes: over.axes ?? { ppg: [false, true] },
        hosts: { client: {}, server: {} },
        measure: [{ tool: "ping", params: { count: 3, interval: 0.1 } }, { tool: "sockperf" }],
        repetitions: over.repetitions ?? 1,
        replicas: over.replicas ?? 1,
      }),
    );
  const order = (plan: ReturnType<typeof ab>) => runOrder(plan.cells).flatMap((s) => s.groups.flat().map((c) => `${c.variant}#r${c.replica}/rep${c.repetition}/${c.tool}`));

  it("runs rep 0 of every variant, then rep 1 (A B A B, not A A B B)", () => {
    const plan = ab({ repetitions: 2 });
    expect(order(plan)).toEqual([
      "ppg=false#r0/rep0/ping", "ppg=false#r0/rep0/sockperf",
      "ppg=true#r0/rep0/ping", "ppg=true#r0/rep0/sockperf",
      "ppg=false#r0/rep1/ping", "ppg=false#r0/rep1/sockperf",
      "ppg=true#r0/rep1/ping", "ppg=true#r0/rep1/sockperf",
    ]);
    expect(runOrder(plan.cells).map((s) => s.deployment)).toEqual(["ppg=false", "ppg=true", "ppg=false", "ppg=true"]);
  });

  it("interleaves replicas too: replica 0 of every variant, then replica 1", () => {
    const plan = ab({ replicas: 2 });
    expect(runOrder(plan.cells).map((s) => s.deployment)).toEqual(["ppg=false#r0", "ppg=true#r0", "ppg=false#r1", "ppg=true#r1"]);
  });

  it("keeps every cell exactly once, schedule groups whole, and the plan's order within a deployment and round", () => {
    const plan = ab({ repetitions: 3, axes: { path: ["private", "public"], ppg: [false, true] } });
    const steps = runOrder(plan.cells);
    const flat = steps.flatMap((s) => s.groups.flat());
    expect(flat.map((c) => c.id).sort()).toEqual(plan.cells.map((c) => c.id).sort());
    for (const s of steps) for (const g of s.groups) for (const c of g) expect(c.deployment).toBe(s.deployment);
    // A shared deployment's variants (path private/public) still take turns measure by measure.
    const first = steps[0]!.groups.flat().map((c) => `${c.tool}@${c.path}`);
    expect(first).toEqual(["ping@private", "ping@public", "sockperf@private", "sockperf@public"]);
    // seed 000's parallel pairs stay one group.
    const zr = buildPlan({ ...zoneRegion, repetitions: 2 });
    expect(runOrder(zr.cells).flatMap((s) => s.groups.map((g) => g.length))).toEqual(scheduleGroups(zr.cells).map((g) => g.length));
  });
});
