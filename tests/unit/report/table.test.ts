import { describe, expect, it } from "vitest";
import { measureLabels, notEmulatedAxes } from "../../../src/report/table.ts";
import type { Measurement } from "../../../src/results/schema.ts";

const m = (measure: number, tool: string, params: Record<string, unknown>) => ({ measure, tool, params }) as unknown as Measurement;

describe("measureLabels", () => {
  it("names a tool alone when it appears once, and by what differs when it appears twice", () => {
    const labels = measureLabels([m(0, "iperf3", { parallel: 4 }), m(1, "iperf3", { parallel: 4, window: "32M" }), m(2, "ping", { count: 5 })]);
    expect([...labels.entries()]).toEqual([
      [0, "iperf3 window=-"],
      [1, "iperf3 window=32M"],
      [2, "ping"],
    ]);
  });
});

describe("notEmulatedAxes", () => {
  const results = (axes: Record<string, unknown>, host: Record<string, unknown>) =>
    ({ variants: [{ id: "v", axes, baseline: "v", hosts: [{ role: "a", accelnet: false, availabilitySet: null, ...host, actual: { accelnetEmulated: false, availabilitySetEmulated: false, sizeEmulated: true } }] }] }) as never;
  it("names what the experiment varies or asks for but the target cannot emulate", () => {
    expect(notEmulatedAxes(results({ accelnet: true }, {}))).toEqual(["accelnet"]);
    expect(notEmulatedAxes(results({}, { availabilitySet: "avset" }))).toEqual(["availabilitySet"]);
    expect(notEmulatedAxes(results({}, {}))).toEqual([]);
  });
});
