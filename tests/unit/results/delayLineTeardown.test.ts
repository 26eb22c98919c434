import { describe, expect, it } from "vitest";
import { summarizeDelayLineRun, type HelperSummary } from "../../../src/results/delayLineRecord.ts";
import type { TeardownReport } from "../../../src/results/schema.ts";
import { mergeTeardown } from "../../../src/results/waveRecords.ts";
import { delayLineRunLine } from "../../../src/report/wording.ts";

const helper = (over: Partial<HelperSummary>): HelperSummary => ({
  released: 1000,
  dropped: 0,
  droppedQueueFull: 0,
  droppedUndelivered: 0,
  droppedHelperFull: 0,
  heldPeak: 3,
  heldBehind: 0,
  heldBehindMaxUs: 0,
  lateP50Us: 2,
  lateP99Us: 40,
  lateMaxUs: 90,
  failed: false,
  ...over,
});

describe("the delay line's record at teardown", () => {
  it("survives the merge of two waves' teardowns, their helpers together", () => {
    const a: TeardownReport = { status: "ok", errors: [], removed: ["ns a"], delayLine: summarizeDelayLineRun([{ name: "d0-client", summary: helper({}) }]) };
    const b: TeardownReport = { status: "ok", errors: [], removed: ["ns b"], delayLine: summarizeDelayLineRun([{ name: "d1-client", summary: helper({ released: 500, lateP99Us: 120, droppedQueueFull: 7, dropped: 7 }) }]) };
    const merged = mergeTeardown(a, b, "wave 2: ");
    expect(merged.delayLine).toMatchObject({ helpers: 2, released: 1500, dropped: 7, droppedQueueFull: 7, worstHelperLateP99Us: 120 });
    expect(mergeTeardown({ status: "not-started", errors: [], removed: [] }, a, "").delayLine).toEqual(a.delayLine);
    expect(mergeTeardown(a, { status: "ok", errors: [], removed: [] }, "").delayLine).toEqual(a.delayLine);
  });

  it("is said in one line: packets, drops and why, lateness as the worst helper's, helpers that left no summary", () => {
    const delayLine = summarizeDelayLineRun([
      { name: "d0-client", summary: helper({ released: 12_345, lateP99Us: 61.4 }) },
      { name: "d0-server", summary: helper({ dropped: 3, droppedUndelivered: 3 }) },
      { name: "d1-client", summary: null },
    ]);
    const line = delayLineRunLine({ teardown: { status: "ok", errors: [], removed: [], delayLine } });
    expect(line).toBe(
      "delay line during the run: 13,345 packets released by 3 helper(s), 3 dropped (kernel queue full 0, not delivered 3, helper full 0); " +
        "release late by at most p50 2 µs, p99 61 µs (the worst helper's), max 90 µs; no summary from d1-client (killed or died: their packets are not counted)",
    );
    expect(delayLineRunLine({ teardown: { status: "ok", errors: [], removed: [] } })).toBeUndefined();
  });
});
