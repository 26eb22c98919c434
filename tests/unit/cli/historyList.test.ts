import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { defineExperiment } from "../../../src/index.ts";
import { historyRecords } from "../../../src/history/historyRecords.ts";
import { appendRuns } from "../../../src/history/historyStore.ts";
import { around, fakeRun } from "../history/fakeRun.ts";
import { tempDirs } from "../../tempDirs.ts";
import { runMain } from "./runMain.ts";

const tempDir = tempDirs();

const tiny = defineExperiment({ name: "tiny", description: "x", hosts: { server: {}, client: {} }, measure: [{ tool: "ping" }] });
const records = (runId: string, experiment?: typeof tiny) => {
  const run = fakeRun(runId, () => around(100, 30), experiment ? { experiment } : {});
  return historyRecords(run.results, run.samplesOf);
};

describe("latlab history EXPERIMENT", () => {
  it("names the experiments the history holds when it has no run of the one asked, with a did-you-mean", async () => {
    const file = join(tempDir("latlab-history-list-"), "history.duckdb");
    await appendRuns(file, [records("t1", tiny), records("t2", tiny), records("h1")]);

    for (const args of [["history", "tiyn"], ["history", "tiyn", "--json"]]) {
      const r = await runMain([...args, "--history", file]);
      expect(r.stderr).toBe(`latlab: no runs of experiment "tiyn" in ${file}, which holds runs of: hist (1 run), tiny (2 runs) — did you mean "tiny"?\n`);
      expect(r.stdout).toBe("");
      expect(r.code).toBe(1);
    }
    const far = await runMain(["history", "ppg-vs-zone", "--history", file]);
    expect(far.stderr).toBe(`latlab: no runs of experiment "ppg-vs-zone" in ${file}, which holds runs of: hist (1 run), tiny (2 runs)\n`);
    expect(far.code).toBe(1);

    const mine = await runMain(["history", "tiny", "--history", file]);
    expect(mine.stdout).toMatch(/2 run\(s\) in /);
    expect(mine.code).toBe(0);
  });

  it("says an empty history is empty, whatever experiment is asked", async () => {
    const file = join(tempDir("latlab-history-list-"), "history.duckdb");
    const r = await runMain(["history", "tiny", "--history", file]);
    expect(r.stdout).toBe(`no runs recorded in ${file}: there is no such file yet (\`latlab run\` records each finished run there)\n`);
    expect(r.code).toBe(0);
  });

  it("refuses a --history no file can have (past PATH_MAX) instead of calling it empty, naming it once, shortened", async () => {
    const file = `/tmp/${"h".repeat(5000)}.duckdb`;
    const r = await runMain(["history", "tiny", "--history", file]);
    expect(r.stderr).toMatch(/^latlab: --history \/tmp\/h+…h+\.duckdb \(a path of 5012 characters\): .*PATH_MAX/);
    expect(r.stderr.length).toBeLessThan(400);
    expect(r.stdout).toBe("");
    expect(r.code).toBe(1);
  });
});
