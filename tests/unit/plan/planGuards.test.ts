import { describe, expect, it } from "vitest";
import { listExperimentFiles, importExperiment } from "../../../src/cli/experiments/loadExperiment.ts";
import { buildPlan, type PlanOptions } from "../../../src/plan/buildPlan.ts";
import { PLAN_LIMITS, axisCombinations, checkExperiment, confirmText, experimentSize, formatCount, refusalText, type PlanLimits } from "../../../src/plan/planGuards.ts";
import { defineExperiment, type Experiment, type ExperimentInput, type HostsSpec } from "../../../src/index.ts";

/** Two variants × (ping, sockperf, qperf) × client→server: 6 cells a round, 4 hosts. */
const pingPong = (extra: Partial<ExperimentInput> = {}) =>
  defineExperiment({ name: "x", description: "x", axes: { ppg: [false, true] }, hosts: { client: {}, server: {} }, measure: [{ tool: "ping" }, { tool: "sockperf" }, { tool: "qperf" }], ...extra } as ExperimentInput);

/** What buildPlan really builds, in experimentSize's terms. */
function built(experiment: Experiment, options: PlanOptions = {}) {
  const plan = buildPlan(experiment, options);
  return { variants: plan.variants.length, deployments: plan.deployments.length, hosts: plan.estimate.hosts, cells: plan.estimate.cells, measurementSeconds: plan.estimate.measurementSeconds };
}

function predicted(experiment: Experiment, options: PlanOptions = {}) {
  const s = experimentSize(experiment, options);
  return { variants: s.variants, deployments: s.deployments, hosts: s.hosts, cells: s.cells, measurementSeconds: expect.closeTo(s.measurementSeconds, 6) };
}

describe("experimentSize: the plan's size without building it", () => {
  it("is what buildPlan builds, for every shipped experiment, on either target's durations", async () => {
    const files = listExperimentFiles();
    expect(files.length).toBeGreaterThanOrEqual(5);
    for (const file of files) {
      const experiment = await importExperiment(file);
      for (const options of [{}, { duration: { seconds: 7 } }, { duration: { factor: 3 } }] satisfies PlanOptions[]) {
        expect({ file, ...predicted(experiment, options) }).toEqual({ file, ...built(experiment, options) });
      }
    }
  });

  it("counts pairs, zips, filters, host functions, shared deployments, replicas and repetitions as buildPlan does", () => {
    const cases: Experiment[] = [
      // explicit pairs, and the default (every role to "server")
      defineExperiment({ name: "p", description: "p", hosts: { a: {}, b: {}, server: {} }, measure: [{ tool: "sockperf" }, { tool: "ping", pairs: [{ from: "a", to: "b" }] }], replicas: 2, repetitions: 3 }),
      // zip and filter
      defineExperiment({
        name: "z",
        description: "z",
        axes: { size: ["Standard_D2s_v5", "Standard_D4s_v5"], accelnet: [false, true], ppg: [false, true] },
        zip: [["size", "accelnet"]],
        filter: (v) => !(v.ppg && !v.accelnet),
        hosts: { client: {}, server: {} },
        measure: [{ tool: "ping" }],
      }),
      // a hosts function giving variants different numbers of roles
      defineExperiment({
        name: "f",
        description: "f",
        axes: { placement: ["same-zone", "cross-zone"] },
        hosts: (v): HostsSpec => (v.placement === "same-zone" ? { client: {}, server: {} } : { a: {}, b: {}, c: {}, server: {} }),
        measure: [{ tool: "sockperf" }],
        replicas: 3,
      }),
      // the path axis: two variants on one deployment
      defineExperiment({ name: "q", description: "q", axes: { path: ["private", "public"], accelnet: [false, true] }, hosts: { client: {}, server: {} }, measure: [{ tool: "ping" }], replicas: 2 }),
      // two host specs that resolve alike (a region said, or left to the default) are one host set, as buildPlan groups them
      defineExperiment({
        name: "r",
        description: "r",
        defaults: { region: "uksouth" },
        axes: { path: ["private", "public"] },
        hosts: (v): HostsSpec => (v.path === "public" ? { client: { region: "uksouth" }, server: {} } : { client: {}, server: {} }),
        measure: [{ tool: "ping" }],
      }),
      // a tool running its pairs in parallel counts one run's time per group
      defineExperiment({ name: "t", description: "t", hosts: { a: {}, b: {}, c: {}, server: {} }, measure: [{ tool: "tcp-echo", params: { duration: 30 } }, { tool: "ping" }], repetitions: 2 }),
    ];
    for (const e of cases) {
      for (const options of [{}, { duration: { seconds: 4 } }] satisfies PlanOptions[]) {
        expect({ name: e.name, ...predicted(e, options) }).toEqual({ name: e.name, ...built(e, options) });
      }
    }
  });

  it("multiplies replicas and repetitions instead of looping over them: 10^15 of each is counted, not built", () => {
    let hostCalls = 0;
    const e = pingPong({
      hosts: () => {
        hostCalls++;
        return { client: {}, server: {} };
      },
      replicas: 1e15,
      repetitions: 1e15,
    });
    hostCalls = 0;
    const size = experimentSize(e);
    // 2 variants × 3 measures × 1 pair, × 10^30: no implementation that allocates cells gets here.
    expect(size.cells).toBe(6e30);
    expect(size.hosts).toBe(4e15);
    expect(size.deployments).toBe(2e15);
    // The work done is per variant: the hosts function ran for each (its roles, then resolved), never per replica.
    expect(hostCalls).toBe(4);
  });

  it("axisCombinations is the axes' product, a zip group counting once", () => {
    expect(axisCombinations({})).toBe(1);
    expect(axisCombinations({ ppg: [false, true], placement: ["same-zone", "cross-zone", "same-ppg"] })).toBe(6);
    expect(axisCombinations({ size: ["a", "b", "c"], accelnet: [false, true, false], ppg: [false, true] }, [["size", "accelnet"]])).toBe(6);
  });
});

describe("checkExperiment", () => {
  it("passes every shipped experiment without a warning", async () => {
    for (const file of listExperimentFiles()) {
      const experiment = await importExperiment(file);
      // Azure's durations are the experiments' own (zone-region-baseline: 11 h).
      const check = checkExperiment(experiment);
      expect({ file, refused: check.refused, confirm: check.confirm }).toEqual({ file, refused: [], confirm: [] });
    }
  });

  it("refuses `replicas: 1e6` (6 million cells) with the numbers, before a plan exists", () => {
    const check = checkExperiment(pingPong({ replicas: 1e6 }));
    expect(check.refused.map((e) => e.what)).toEqual(["cells", "hosts", "hours"]);
    expect(check.size?.cells).toBe(6_000_000);
    const text = refusalText("x", check);
    expect(text).toContain('experiment "x": the plan is too large to build, refused (nothing was built or written)');
    expect(text).toContain("cells: 6,000,000 = 6 per replica and repetition (2 variants) × 1,000,000 replicas × 1 repetition (limit 20,000)");
    expect(text).toContain("hosts: 4,000,000 in 2,000,000 deployments (limit 500)");
    expect(text).toMatch(/estimated measurement: [\d,.]+ h \(limit 720 h\)/);
  });

  it("asks for confirmation between the two limits, each number on its own", () => {
    const cells = checkExperiment(pingPong({ repetitions: 200 }));
    expect(cells.refused).toEqual([]);
    expect(cells.confirm).toEqual([{ what: "cells", value: 1200, limit: PLAN_LIMITS.confirm.cells }]);
    expect(confirmText("x", cells)).toBe(
      `experiment "x" is above latlab's limits for a run without --yes:\n  cells: 1,200 = 6 per replica and repetition (2 variants) × 1 replica × 200 repetitions (limit 1,000)`,
    );
    const hosts = checkExperiment(pingPong({ replicas: 6 }));
    expect(hosts.confirm).toEqual([{ what: "hosts", value: 24, limit: 20 }]);
    const hours = checkExperiment(pingPong(), { duration: { seconds: 2.5 * 3600 } });
    expect(hours.confirm.map((e) => e.what)).toEqual(["hours"]);
    expect(hours.confirm[0]!.value).toBeGreaterThan(12);
  });

  it("a value at the limit is within it", () => {
    const limits: PlanLimits = { confirm: { cells: 6, hosts: 4, hours: 1 }, refuse: { cells: 12, hosts: 8, hours: 2 } };
    expect(checkExperiment(pingPong(), {}, limits).confirm).toEqual([]);
    expect(checkExperiment(pingPong({ repetitions: 2 }), {}, limits)).toMatchObject({ refused: [], confirm: [{ what: "cells", value: 12 }] });
    expect(checkExperiment(pingPong({ repetitions: 3 }), {}, limits).refused).toEqual([{ what: "cells", value: 18, limit: 12 }]);
  });

  it("refuses axes that multiply past the cell limit without expanding them (the filter never runs)", () => {
    let filterCalls = 0;
    const e = pingPong({
      axes: { ppg: [false, true], accelnet: [false, true], placement: ["same-zone", "cross-zone", "same-ppg"] },
      filter: () => {
        filterCalls++;
        return true;
      },
    });
    filterCalls = 0;
    const check = checkExperiment(e, {}, { confirm: { cells: 1, hosts: 1, hours: 1 }, refuse: { cells: 10, hosts: 100, hours: 100 } });
    expect(check.refused).toEqual([{ what: "axis combinations", value: 12, limit: 10 }]);
    expect(check.size).toBeUndefined();
    expect(filterCalls).toBe(0);
    expect(refusalText("x", check)).toContain("axis combinations: 12 before the filter (limit 10)");
  });
});

describe("formatCount", () => {
  it("groups digits, keeps a decimal for fractions, and goes exponential past readable", () => {
    expect(formatCount(6_000_000)).toBe("6,000,000");
    expect(formatCount(12.345)).toBe("12.3");
    expect(formatCount(6e30)).toBe("6.0e+30");
    expect(formatCount(Infinity)).toBe("Infinity");
  });
});
