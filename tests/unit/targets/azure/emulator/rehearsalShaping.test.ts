import { describe, expect, it } from "vitest";
import { ShapingStatusSchema } from "../../../../../src/results/schema.ts";
import { rehearsalShapingStatus } from "../../../../../src/targets/azure/emulator/rehearsalShaping.ts";
import { modelRtt } from "../../../../../src/targets/local/model/latencyModel.ts";

describe("a rehearsal's shaping record", () => {
  it("keeps each model entry's spread (the jitter applied), with the figure and source", () => {
    const model = [modelRtt("cross-zone", false, false), modelRtt("cross-region", true, true, ["uksouth", "ukwest"])];
    const status = ShapingStatusSchema.parse(rehearsalShapingStatus({ latency: "netem", label: "netem", model, vms: 3 }));
    expect(status.model).toEqual(model);
    expect(status.model!.every((m) => m.spread?.kind === "shifted-lognormal")).toBe(true);
    expect(status.note).toMatch(/Accelerated Networking from the NIC: its latency only; figures, spreads and sources in results\.json/);
  });
});
