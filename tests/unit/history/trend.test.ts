import { describe, expect, it } from "vitest";
import { historyRecords } from "../../../src/history/historyRecords.ts";
import type { HistoryData } from "../../../src/history/historyStore.ts";
import { trend } from "../../../src/history/trend.ts";
import { defineExperiment } from "../../../src/index.ts";
import { formatTrend } from "../../../src/report/historyText.ts";
import { around, fakeRun } from "./fakeRun.ts";

type Def = Parameters<typeof defineExperiment>[0];
const def = (measure: Def["measure"]) => defineExperiment({ name: "hist", description: "history test", axes: { accelnet: [false] }, hosts: { server: {}, client: {} }, measure } as Def);
const A = { tool: "ping", params: { count: 20 } } as const;
const B = { tool: "ping", params: { count: 40 } } as const;

function history(runs: { id: string; measure: Def["measure"]; latlab?: string }[]): HistoryData {
  const records = runs.map(({ id, measure, latlab }, i) => {
    // A measure's samples are its own (count 40 around 200, count 20 around 100), wherever it stands in the file.
    const run = fakeRun(id, (c) => around(c.params["count"] === 40 ? 200 : 100, 20), { experiment: def(measure), startedAt: `2026-11-0${i + 1}T03:00:00.000Z` });
    const r = historyRecords({ ...run.results, environment: { ...run.results.environment, latlabVersion: latlab ?? "0.1.0" } }, run.samplesOf);
    return r;
  });
  return { runs: records.map((r) => r.run), variants: [], hosts: [], summaries: records.flatMap((r) => r.summaries), comparisons: [] };
}

describe("trend", () => {
  it("follows a measure by identity across a reorder of the file, starts a new series for a changed one, and marks plan and latlab changes", () => {
    const data = history([
      { id: "r1", measure: [A, B] },
      { id: "r2", measure: [B, A] },
      { id: "r3", measure: [B, A], latlab: "0.2.0" },
      { id: "r4", measure: [{ tool: "ping", params: { count: 80 } }, A], latlab: "0.2.0" },
    ]);
    const t = trend(data, "p50");
    // One series per measure identity: count 20 in every run (index 0, then 1), count 40 in three, count 80 in one.
    const byValues = t.series.map((s) => s.values.map((v) => (v === null ? null : Math.floor(v))));
    expect(byValues).toContainEqual([100, 100, 100, 100]);
    expect(byValues).toContainEqual([200, 200, 200, null]);
    expect(byValues).toContainEqual([null, null, null, 100]);
    expect(t.series.length).toBe(3);
    expect(t.changes.map((c) => [c.at, c.runId, c.what.map((w) => w.replace(/[0-9a-f]{8}/g, "#"))])).toEqual([
      [2, "r3", ["latlab 0.1.0 → 0.2.0"]],
      [3, "r4", ["plan # → #"]],
    ]);
    const text = formatTrend(t, "hist");
    expect(text).toContain("r3 ▲1");
    expect(text).toMatch(/▲2 from run r4: plan [0-9a-f]{8} → [0-9a-f]{8} — the runs before and after did not measure the same way/);
  });
});
