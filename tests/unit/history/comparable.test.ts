import { describe, expect, it } from "vitest";
import { comparableRuns } from "../../../src/history/comparable.ts";
import { historyRecords } from "../../../src/history/historyRecords.ts";
import type { RunRow } from "../../../src/history/historySchema.ts";
import { defineExperiment } from "../../../src/index.ts";
import { around, fakeRun } from "./fakeRun.ts";

const at = (day: number) => `2026-11-${String(day).padStart(2, "0")}T03:00:00.000Z`;
const runRow = (runId: string, day: number, over: { facts?: Record<string, string>; count?: number } = {}): RunRow => {
  const experiment = defineExperiment({ name: "hist", description: "history test", axes: { accelnet: [false, true] }, hosts: { server: {}, client: {} }, measure: [{ tool: "ping", params: { count: over.count ?? 20 } }] });
  const run = fakeRun(runId, () => around(100, 20), { startedAt: at(day), facts: over.facts ?? { "github.event": "schedule", "github.ref": "refs/heads/main" }, experiment });
  return historyRecords(run.results, run.samplesOf).run;
};

describe("comparableRuns", () => {
  it("never counts a run that started in the same instant as a previous one, whatever its id", () => {
    const twin = runRow("a-twin", 10);
    const now = runRow("now", 10);
    expect(comparableRuns({ runs: [runRow("s1", 1), twin] }, now).runs.map((r) => r.runId)).toEqual(["s1"]);
  });

  it("keeps the earlier complete runs of the same plan, latlab, event and ref; lists every other with why", () => {
    const runs = [
      runRow("s1", 1),
      runRow("manual", 2, { facts: { "github.event": "workflow_dispatch", "github.ref": "refs/heads/main" } }),
      runRow("short", 3, { count: 5 }),
      { ...runRow("old-latlab", 4), latlabVersion: "0.0.9" },
      { ...runRow("partial", 5), status: "partial" as const },
      runRow("branch", 6, { facts: { "github.event": "schedule", "github.ref": "refs/heads/dev" } }),
      { ...runRow("unknown-plan", 7), planHash: null, plan: null },
      runRow("s2", 8),
      runRow("later", 20),
      { ...runRow("other-experiment", 9), experiment: "other" },
    ];
    const now = runRow("now", 10);
    const out = comparableRuns({ runs }, now);
    expect(out.runs.map((r) => r.runId)).toEqual(["s1", "s2"]);
    expect(Object.fromEntries(out.excluded.map((e) => [e.runId, e.why.join("; ")]))).toEqual({
      manual: "started by workflow_dispatch (this run by schedule)",
      short: expect.stringMatching(/^another plan \([0-9a-f]{8}, this run [0-9a-f]{8}\)$/),
      "old-latlab": "latlab 0.0.9 (this run 0.1.0)",
      partial: "status partial",
      branch: "ref refs/heads/dev (this run refs/heads/main)",
      "unknown-plan": "recorded before plan hashes: its plan is unknown",
    });
    // Relaxed where the caller says so.
    expect(comparableRuns({ runs }, now, { sameEvent: false, sameLatlabVersion: false, sameRef: false, statuses: ["complete", "partial"] }).runs.map((r) => r.runId)).toEqual(["s1", "manual", "old-latlab", "partial", "branch", "s2"]);
    // A run without a plan hash is comparable with none.
    expect(comparableRuns({ runs }, { ...now, planHash: null }).runs).toEqual([]);
  });
});
