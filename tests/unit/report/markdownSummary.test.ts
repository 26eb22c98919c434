import { describe, expect, it } from "vitest";
import { markdownSummary } from "../../../src/report/markdownSummary.ts";
import { around, fakeRun } from "../history/fakeRun.ts";

const rowsOf = (md: string, start: string) => md.split("\n").filter((l) => l.startsWith(`| ${start}`));

describe("markdownSummary", () => {
  it("one row per variant × measure × pair: every run's samples merged, the comparison's CI and what it is over", () => {
    const run = fakeRun("md", (c) => around(c.variant === "accelnet=true" ? 80 : 100, 30, c.replica), { replicas: 3 });
    const md = markdownSummary(run.results, run.samplesOf);
    expect(md).toMatch(/^## ✅ hist on local: complete/);
    expect(rowsOf(md, "accelnet=false (baseline) | ping | client->server | rtt µs | 90 |")).toHaveLength(1);
    const [cand] = rowsOf(md, "accelnet=true | ping");
    expect(cand).toMatch(/\| -(19|20)\.\d% \| -20\.0 \[-20\.\d, -20\.\d\] \| 3\+3 replicas \|$/);
    expect(md).toContain("- teardown: ok");
  });

  it("a run with only the tool's own summary gets its own row, never averaged into the others", () => {
    const run = fakeRun("md", () => around(100, 30), { repetitions: 2 });
    const md = markdownSummary(run.results, () => []);
    expect(rowsOf(md, "accelnet=false (baseline) | ping [r0 rep").map((r) => r.split(" | ")[1])).toEqual(["ping [r0 rep0]", "ping [r0 rep1]"]);
    expect(rowsOf(md, "accelnet=false (baseline) | ping [r0 rep0] | client->server | rtt µs | 30 |")).toHaveLength(1);
  });
});
