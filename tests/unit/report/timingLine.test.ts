import { describe, expect, it } from "vitest";
import { timingLine } from "../../../src/report/wording.ts";

describe("timingLine", () => {
  it("says where the run's time went and its ratio to what the tools were asked to measure", () => {
    const timing = { bringUpSeconds: 1.84, cellsSeconds: 30.1, teardownSeconds: 1.96, totalSeconds: 33.9, measurementSeconds: 20, overhead: 1.695 };
    expect(timingLine({ timing })).toBe("time: 33.9 s = bring-up 1.8 s + cells 30.1 s + teardown 2.0 s; the tools were asked to measure 20.0 s: 1.70× that");
    // Time outside the three (writing plan.json, the results) is said when it is not negligible.
    expect(timingLine({ timing: { ...timing, totalSeconds: 35 } })).toContain("+ the rest 1.1 s;");
    expect(timingLine({ timing: { ...timing, measurementSeconds: 0, overhead: undefined } })).toBe("time: 33.9 s = bring-up 1.8 s + cells 30.1 s + teardown 2.0 s; the tools were asked to measure 0.0 s");
    expect(timingLine({})).toBeUndefined();
  });
});
