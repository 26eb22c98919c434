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
  const h = (o: Partial<Parameters<typeof pathKind>[0]>) => ({ role: "r", region: "uksouth", zone: "1" as const, ppg: null, availabilitySet: null, size: "Standard_D2s_v5", accelnet: true, ...o });
  it("tells the five kinds apart", () => {
    expect(pathKind(h({}), h({ region: "ukwest", zone: null }))).toBe("cross-region");
    expect(pathKind(h({ ppg: "g" }), h({ ppg: "g" }))).toBe("same-ppg");
    expect(pathKind(h({}), h({}))).toBe("same-zone");
    expect(pathKind(h({}), h({ zone: "2" }))).toBe("cross-zone");
    expect(pathKind(h({ zone: null }), h({ zone: null }))).toBe("same-region");
  });
});
