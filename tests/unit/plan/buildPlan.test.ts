import { describe, expect, it } from "vitest";
import { buildPlan, defineExperiment, ExperimentDefinitionError } from "../../../src/index.ts";
import { pathKind } from "../../../src/plan/pathKind.ts";
import ppgVsZone from "../../../experiments/ppg-vs-zone.ts";

describe("buildPlan", () => {
  it("turns ppg-vs-zone into 2 variants × 2 hosts × (sockperf, ping, qperf)", () => {
    const plan = buildPlan(ppgVsZone);
    expect(plan.variants.map((v) => v.id)).toEqual(["ppg=false", "ppg=true"]);
    expect(plan.baseline).toBe("ppg=false");
    const [without, withPpg] = plan.variants;
    expect(without!.hosts.map((h) => [h.role, h.region, h.zone, h.ppg, h.size, h.accelnet])).toEqual([
      ["client", "eastus", "1", null, "Standard_D2s_v5", true],
      ["server", "eastus", "1", null, "Standard_D2s_v5", true],
    ]);
    expect(withPpg!.hosts.every((h) => h.ppg === "ppg")).toBe(true);
    expect(plan.cells.map((c) => `${c.variant} ${c.tool} ${c.from}->${c.to} ${c.pathKind}`)).toEqual([
      "ppg=false sockperf client->server same-zone",
      "ppg=false ping client->server same-zone",
      "ppg=false qperf client->server same-zone",
      "ppg=true sockperf client->server same-ppg",
      "ppg=true ping client->server same-ppg",
      "ppg=true qperf client->server same-ppg",
    ]);
    expect(plan.estimate.cells).toBe(6);
    expect(plan.estimate.hosts).toBe(4);
  });

  it("cells = variant × tool × pair × replica × repetition", () => {
    const e = defineExperiment({
      name: "x",
      description: "x",
      axes: { accelnet: [false, true] },
      hosts: { a: {}, b: {}, server: {} },
      measure: [{ tool: "sockperf" }, { tool: "ping", pairs: [{ from: "a", to: "b" }] }],
      replicas: 2,
      repetitions: 3,
    });
    const plan = buildPlan(e);
    // 2 variants × 2 replicas × 3 repetitions × (sockperf: a,b → server = 2 pairs; ping: 1 pair)
    expect(plan.cells).toHaveLength(2 * 2 * 3 * 3);
    expect(plan.deployments.map((d) => d.id)).toEqual(["accelnet=false#r0", "accelnet=false#r1", "accelnet=true#r0", "accelnet=true#r1"]);
    expect(new Set(plan.cells.map((c) => c.id)).size).toBe(plan.cells.length);
  });

  it("places hosts from the placement axis relative to the anchor", () => {
    const e = defineExperiment({
      name: "x",
      description: "x",
      defaults: { region: "uksouth" },
      axes: { placement: ["same-ppg", "same-zone", "cross-zone", "cross-region"] },
      hosts: { server: {}, client: {} },
      measure: [{ tool: "ping" }],
    });
    const plan = buildPlan(e);
    expect(plan.cells.map((c) => c.pathKind)).toEqual(["same-ppg", "same-zone", "cross-zone", "cross-region"]);
    const crossRegion = plan.variants[3]!.hosts.find((h) => h.role === "client")!;
    expect([crossRegion.region, crossRegion.zone]).toEqual(["ukwest", null]);
  });

  it("applies --duration to every tool its own way", () => {
    const plan = buildPlan(ppgVsZone, { duration: { seconds: 2 } });
    const sock = plan.cells.find((c) => c.tool === "sockperf")!;
    const ping = plan.cells.find((c) => c.tool === "ping")!;
    expect(sock.params.duration).toBe(2);
    expect(Number(ping.params.count) * Number(ping.params.interval)).toBeCloseTo(2, 0);
    const scaled = buildPlan(ppgVsZone, { duration: { factor: 2 } });
    expect(scaled.cells.find((c) => c.tool === "sockperf")!.params.duration).toBe(10);
  });

  it("refuses a PPG across zones and an availability set with a zone, naming the variant", () => {
    const e = defineExperiment({
      name: "x",
      description: "x",
      axes: { ppg: [true] },
      hosts: { server: { zone: "1" }, client: { zone: "2" } },
      measure: [{ tool: "ping" }],
    });
    expect(() => buildPlan(e)).toThrow(/PPG "ppg" spans .*cannot span zones/);
    const avset = defineExperiment({ name: "x", description: "x", hosts: { server: { zone: "1", availabilitySet: true }, client: {} }, measure: [{ tool: "ping" }] });
    expect(() => buildPlan(avset)).toThrow(ExperimentDefinitionError);
  });

  it("validates what a hosts function returns, per variant", () => {
    const e = defineExperiment({
      name: "x",
      description: "x",
      axes: { accelnet: [false, true] },
      // @ts-expect-error: zone 7 does not exist
      hosts: ({ accelnet }) => ({ server: {}, client: { zone: accelnet ? "7" : "1" } }),
      measure: [{ tool: "ping" }],
    });
    expect(() => buildPlan(e)).toThrow(/hosts\.client\.zone: expected one of "1", "2", "3", got "7".*variant accelnet=true/s);
  });
});

describe("pathKind", () => {
  const h = (o: Partial<Parameters<typeof pathKind>[0]>) => ({ role: "r", region: "uksouth", zone: "1" as const, ppg: null, availabilitySet: null, size: "Standard_D2s_v5", accelnet: true, vnet: null, ...o });
  it("tells the five kinds apart", () => {
    expect(pathKind(h({}), h({ region: "ukwest", zone: null }))).toBe("cross-region");
    expect(pathKind(h({ ppg: "g" }), h({ ppg: "g" }))).toBe("same-ppg");
    expect(pathKind(h({}), h({}))).toBe("same-zone");
    expect(pathKind(h({}), h({ zone: "2" }))).toBe("cross-zone");
    expect(pathKind(h({ zone: null }), h({ zone: null }))).toBe("same-region");
  });
});

describe("measurement axes share deployments (issue 9, point 10)", () => {
  it("public-vs-peered: 2 deployments, 4 hosts; each measures both paths between the same client and server", async () => {
    const { default: publicVsPeered } = await import("../../../experiments/public-vs-peered.ts");
    const plan = buildPlan(publicVsPeered);
    expect(plan.variants).toHaveLength(4);
    expect(plan.deployments.map((d) => [d.id, d.variants])).toEqual([
      ["size=Standard_D4s_v5", ["size=Standard_D4s_v5,path=private", "size=Standard_D4s_v5,path=public"]],
      ["size=Standard_D8s_v5", ["size=Standard_D8s_v5,path=private", "size=Standard_D8s_v5,path=public"]],
    ]);
    expect(plan.estimate.hosts).toBe(4);
    for (const d of plan.deployments) {
      // Two peered VNets of northeurope, as in seed 002.
      expect(d.hosts.map((h) => [h.role, h.region, h.vnet])).toEqual([
        ["server", "northeurope", "b"],
        ["client", "northeurope", "a"],
      ]);
      const cells = plan.cells.filter((c) => c.deployment === d.id);
      for (const measure of [0, 1, 2, 3]) {
        const ofMeasure = cells.filter((c) => c.measure === measure);
        expect(ofMeasure.map((c) => [c.path, c.from, c.to, c.crossesPeering])).toEqual([
          ["private", "client", "server", true],
          ["public", "client", "server", false],
        ]);
      }
      expect(new Set(cells.map((c) => c.variant))).toEqual(new Set(d.variants));
    }
    expect(new Set(plan.cells.map((c) => c.id)).size).toBe(plan.cells.length);
    // Comparisons stay between variants: path=public against path=private of the same size.
    expect(plan.baselineOf["size=Standard_D8s_v5,path=public"]).toBe("size=Standard_D8s_v5,path=private");
  });

  it("keeps one deployment per variant when nothing is shared, with the ids it always had", () => {
    const plan = buildPlan(ppgVsZone);
    expect(plan.deployments.map((d) => [d.id, d.variant, d.variants])).toEqual([
      ["ppg=false", "ppg=false", ["ppg=false"]],
      ["ppg=true", "ppg=true", ["ppg=true"]],
    ]);
    expect(plan.cells.map((c) => c.id)).toEqual([
      "ppg=false/sockperf#0/client->server",
      "ppg=false/ping#1/client->server",
      "ppg=false/qperf#2/client->server",
      "ppg=true/sockperf#0/client->server",
      "ppg=true/ping#1/client->server",
      "ppg=true/qperf#2/client->server",
    ]);
  });

  it("shares per replica, ids unique and stable: a path-only axis set is `default`", () => {
    const e = defineExperiment({ name: "x", description: "x", axes: { path: ["private", "public"] }, hosts: { client: {}, server: {} }, measure: [{ tool: "ping" }], replicas: 2, repetitions: 2 });
    const plan = buildPlan(e);
    expect(plan.deployments.map((d) => d.id)).toEqual(["default#r0", "default#r1"]);
    expect(plan.estimate.hosts).toBe(4);
    expect(plan.cells.map((c) => c.id)).toEqual([
      "default#r0/ping#0/client->server@path=private/rep0",
      "default#r0/ping#0/client->server@path=public/rep0",
      "default#r0/ping#0/client->server@path=private/rep1",
      "default#r0/ping#0/client->server@path=public/rep1",
      "default#r1/ping#0/client->server@path=private/rep0",
      "default#r1/ping#0/client->server@path=public/rep0",
      "default#r1/ping#0/client->server@path=private/rep1",
      "default#r1/ping#0/client->server@path=public/rep1",
    ]);
    expect(buildPlan(e)).toEqual(plan);
  });

  it("does not share when the hosts differ between the paths, nor across infrastructure axes", () => {
    const byPath = defineExperiment({
      name: "x",
      description: "x",
      axes: { path: ["private", "public"] },
      hosts: ({ path }) => ({ client: { size: path === "public" ? "Standard_D4s_v5" : "Standard_D2s_v5" }, server: {} }),
      measure: [{ tool: "ping" }],
    });
    expect(buildPlan(byPath).deployments.map((d) => d.id)).toEqual(["path=private", "path=public"]);
    // accelnet is an infrastructure axis: its variants are separate draws even when every host overrides it.
    const overridden = defineExperiment({ name: "x", description: "x", axes: { accelnet: [false, true] }, hosts: { client: { accelnet: true }, server: { accelnet: true } }, measure: [{ tool: "ping" }] });
    expect(buildPlan(overridden).deployments.map((d) => d.id)).toEqual(["accelnet=false", "accelnet=true"]);
  });

  it("never runs two variants' tcp-echo pairs over each other (schedule groups stay within a variant)", async () => {
    const { scheduleGroups } = await import("../../../src/plan/schedule.ts");
    const e = defineExperiment({ name: "x", description: "x", axes: { path: ["private", "public"] }, hosts: { a: {}, b: {}, server: {} }, measure: [{ tool: "tcp-echo", params: { duration: 5 } }] });
    const groups = scheduleGroups(buildPlan(e).cells);
    expect(groups.map((g) => g.map((c) => `${c.path} ${c.from}`))).toEqual([
      ["private a", "private b"],
      ["public a", "public b"],
    ]);
  });
});

describe("crossesPeering", () => {
  const h = (o: Partial<Parameters<typeof pathKind>[0]>) => ({ role: "r", region: "northeurope", zone: null, ppg: null, availabilitySet: null, size: "Standard_D2s_v5", accelnet: true, vnet: null, ...o });
  it("is true on the private path between two VNets (of one region or two), never on the public path", async () => {
    const { crossesPeering } = await import("../../../src/plan/pathKind.ts");
    expect(crossesPeering(h({}), h({}), "private")).toBe(false);
    expect(crossesPeering(h({ vnet: "a" }), h({ vnet: "a" }), "private")).toBe(false);
    expect(crossesPeering(h({ vnet: "a" }), h({ vnet: "b" }), "private")).toBe(true);
    expect(crossesPeering(h({ vnet: "a" }), h({}), "private")).toBe(true);
    expect(crossesPeering(h({ vnet: "a" }), h({ vnet: "a", region: "westeurope" }), "private")).toBe(true);
    expect(crossesPeering(h({ vnet: "a" }), h({ vnet: "b" }), "public")).toBe(false);
    // Placement is told apart on its own: two VNets of one region are still same-region.
    expect(pathKind(h({ vnet: "a" }), h({ vnet: "b" }))).toBe("same-region");
  });
});
