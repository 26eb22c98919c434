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

  it("tail percentile columns: each where the merged count supports it, '—' below, with the note", () => {
    // Per variant 2 replicas of 6 000 samples: 12 000 merged support p99.9 and p99.99, not p99.999.
    const run = fakeRun("md", (c) => around(c.variant === "accelnet=true" ? 80 : 100, 6_000, c.replica), { replicas: 2 });
    const md = markdownSummary(run.results, run.samplesOf);
    expect(md).toContain("| variant | measure | pair | metric | n | mean | p50 | p99 | p99.9 | p99.99 | p99.999 | vs baseline (mean) |");
    const [base] = rowsOf(md, "accelnet=false (baseline) | ping");
    const cells = base!.split(" | ");
    expect(cells.slice(4, 11)).toEqual(["12000", "101", "101", "101", "101", "101", "—"]);
    expect(md).toMatch(/^- p99\.9 \/ p99\.99 \/ p99\.999: "—" with fewer than 1,000 \/ 10,000 \/ 100,000 samples/m);
    // 30 samples a run (the test above): every tail percentile "—".
    const small = markdownSummary(fakeRun("md", () => around(100, 30)).results, () => []);
    expect(rowsOf(small, "accelnet=false (baseline) | ping")[0]!.split(" | ").slice(8, 11)).toEqual(["—", "—", "—"]);
  });

  it("a run with only the tool's own summary gets its own row, never averaged into the others", () => {
    const run = fakeRun("md", () => around(100, 30), { repetitions: 2 });
    const md = markdownSummary(run.results, () => []);
    expect(rowsOf(md, "accelnet=false (baseline) | ping [r0 rep").map((r) => r.split(" | ")[1])).toEqual(["ping [r0 rep0]", "ping [r0 rep1]"]);
    expect(rowsOf(md, "accelnet=false (baseline) | ping [r0 rep0] | client->server | rtt µs | 30 |")).toHaveLength(1);
  });
});
