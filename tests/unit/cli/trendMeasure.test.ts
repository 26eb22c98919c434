import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { defineExperiment } from "../../../src/index.ts";
import { historyRecords } from "../../../src/history/historyRecords.ts";
import { appendRuns, loadHistory } from "../../../src/history/historyStore.ts";
import { measuresIn, unknownMeasure } from "../../../src/history/trend.ts";
import { around, fakeRun } from "../history/fakeRun.ts";
import { tempDirs } from "../../tempDirs.ts";
import { runMain } from "./runMain.ts";

const tempDir = tempDirs();

// Two measures: 0 ping, 1 tcp-echo.
const twoMeasures = defineExperiment({
  name: "two",
  description: "x",
  hosts: { server: {}, client: {} },
  measure: [{ tool: "ping" }, { tool: "tcp-echo" }],
});
const records = (runId: string) => {
  const run = fakeRun(runId, () => around(100, 30), { experiment: twoMeasures as never });
  return historyRecords(run.results, run.samplesOf);
};

// Issue 23: `trend <exp> --measure 99` said "no runs of … with measurements in the history".
describe("latlab trend --measure N: a measure the experiment does not have", () => {
  it("is refused as an unknown measure, listing the valid ones, not blamed on the history", async () => {
    const file = join(tempDir("latlab-trend-"), "history.duckdb");
    await appendRuns(file, [records("r1"), records("r2")]);

    for (const extra of [[], ["--json"]]) {
      const r = await runMain(["trend", "two", "--measure", "99", "--history", file, ...extra]);
      expect(r.stderr).toBe(`latlab: --measure 99: the runs of "two" in ${file} have no measure 99; their measures are 0 (ping), 1 (tcp-echo)\n`);
      expect(r.stdout).toBe("");
      expect(r.code).toBe(1);
    }

    // An experiment the history has no run of is named as such, as `latlab history` does.
    const typo = await runMain(["trend", "tow", "--measure", "99", "--history", file]);
    expect(typo.stderr).toBe(`latlab: no runs of experiment "tow" in ${file}, which holds runs of: two (2 runs) — did you mean "two"?\n`);
    expect(typo.code).toBe(1);

    const ok = await runMain(["trend", "two", "--measure", "1", "--history", file]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/m1 tcp-echo/);
    expect(ok.stdout).not.toMatch(/m0 ping/);
  });

  it("measuresIn / unknownMeasure: pure, from the history's rows", async () => {
    const file = join(tempDir("latlab-trend-"), "history.duckdb");
    await appendRuns(file, [records("r1")]);
    const data = await loadHistory(file, "two");
    expect(measuresIn(data)).toEqual([
      { measure: 0, tools: ["ping"] },
      { measure: 1, tools: ["tcp-echo"] },
    ]);
    expect(unknownMeasure(data, 1)).toBeUndefined();
    expect(unknownMeasure(data, undefined)).toBeUndefined();
    expect(unknownMeasure(data, 2)).toBe("have no measure 2; their measures are 0 (ping), 1 (tcp-echo)");
  });
});
