/**
 * A run made in waves, as every report shows it: a comparison whose baseline ran only in another
 * wave says so in its verdict and its row (FLAGGED), baseline groups that ran in different waves
 * are said once (reading across them compares waves too), and report.html has a Waves section.
 */
import { describe, expect, it } from "vitest";
import { defineExperiment } from "../../../src/index.ts";
import { reportCharts } from "../../../src/report/html/reportCharts.ts";
import { reportHtml } from "../../../src/report/html/reportHtml.ts";
import { markdownSummary } from "../../../src/report/markdownSummary.ts";
import { reportMarkdown } from "../../../src/report/reportMarkdown.ts";
import { comparisonTable } from "../../../src/report/table.ts";
import { measureLabels } from "../../../src/report/wording.ts";
import { verdicts } from "../../../src/report/verdicts.ts";
import { crossGroupWaveNote, waveCaveatSentence, withWaveNotes, type WavesRecord } from "../../../src/results/waveRecords.ts";
import type { Results } from "../../../src/results/schema.ts";
import { around, fakeRun } from "../history/fakeRun.ts";

/** ppg-availability-set's shape: the PPG compared within each AccelNet setting (baseline ppg=false). */
const experiment = defineExperiment({
  name: "waved",
  description: "waves",
  axes: { ppg: [false, true], accelnet: [false, true] },
  baseline: { ppg: false },
  hosts: { server: {}, client: {} },
  measure: [{ tool: "ping" }],
  replicas: 2,
});
const run = fakeRun("r", (c) => around(c.variant.includes("ppg=true") ? 80 : 100, 300, c.replica + 1), { experiment });
const ids = run.plan.deployments.map((d) => d.id);
const of = (pred: (id: string) => boolean) => ids.filter(pred);

/** The results of the run had it gone in these waves (deployment ids per wave). */
function waved(groups: string[][]): Results {
  const waveOf = new Map(groups.flatMap((g, i) => g.map((d) => [d, i] as const)));
  const record: WavesRecord = {
    limits: "--max-vcpus 8",
    reasons: ["all deployments at once would need: all regions: --max-vcpus: needs 32 vCPUs, 8 available"],
    planned: groups.length,
    plannedWaves: groups,
    runs: groups.map((deployments, i) => {
      const ds = run.plan.deployments.filter((d) => deployments.includes(d.id));
      return {
        wave: i + 1,
        deployments,
        variants: [...new Set(ds.flatMap((d) => d.variants))],
        replicas: [...new Set(ds.map((d) => d.replica))],
        targetRunId: `r-w${i + 1}`,
        startedAt: `2026-11-01T1${i}:00:00.000Z`,
        bringUpSeconds: 60,
        cellsSeconds: 30,
        teardownSeconds: 40,
        teardown: "ok" as const,
        facts: {},
      };
    }),
  };
  return { ...run.results, waves: record, comparisons: withWaveNotes(run.results.comparisons, run.results.measurements, waveOf) };
}

// Each AccelNet setting in its own wave: every comparison (ppg false → true) is within a wave.
const byAccelnet = waved([of((d) => d.includes("accelnet=false")), of((d) => d.includes("accelnet=true"))]);
// The baselines in wave 1, the candidates in wave 2: every comparison crosses waves.
const byPpg = waved([of((d) => d.startsWith("ppg=false")), of((d) => d.startsWith("ppg=true"))]);

describe("a run made in waves, in the reports", () => {
  it("a comparison whose baseline ran only in another wave says so at the end of its verdict, as the placement caveat does", () => {
    const flagged = verdicts(byPpg);
    expect(flagged).toHaveLength(2);
    for (const v of flagged) {
      expect(v.waves).toBe("Waves: FLAGGED — the baseline ran only in wave 1, the candidate only in wave 2 (other hosts, another time), so this difference includes the waves' and cannot be told apart from the variant's.");
      expect(v.text.endsWith(v.waves!)).toBe(true);
    }
    // Within a wave: no caveat.
    expect(verdicts(byAccelnet).map((v) => v.waves)).toEqual([undefined, undefined]);
    expect(verdicts(byAccelnet).every((v) => !v.text.includes("FLAGGED"))).toBe(true);
    expect(waveCaveatSentence(run.results.comparisons[0]!)).toBe("");
  });

  it("report.md: the verdict says it, the row's \"over\" says it", () => {
    const md = reportMarkdown(byPpg, run.samplesOf);
    const verdictLines = md.split("\n").filter((l) => l.startsWith("- ppg false → true"));
    expect(verdictLines).toHaveLength(2);
    for (const l of verdictLines) expect(l).toContain("Waves: FLAGGED — the baseline ran only in wave 1, the candidate only in wave 2");
    expect(md).toMatch(/\| 2\+2 replicas, FLAGGED: baseline in wave 1, candidate in wave 2 \|/);
  });

  it("the terminal table: the row says it", () => {
    const table = comparisonTable(byPpg, run.samplesOf);
    expect(table).toContain("FLAGGED: baseline in wave 1, candidate in wave 2");
    expect(comparisonTable(byAccelnet, run.samplesOf)).not.toContain("FLAGGED: baseline");
  });

  it("baseline groups in different waves: one note naming the groups of each wave, in the table, report.md and report.html", () => {
    const note =
      "variants of different baseline groups ran in different waves (other hosts, another time): reading across them compares waves too — wave 1: the group of baseline ppg=false,accelnet=false; wave 2: the group of baseline ppg=false,accelnet=true";
    expect(crossGroupWaveNote(byAccelnet)).toBe(note);
    expect(comparisonTable(byAccelnet, run.samplesOf).split("\n")).toContain(note);
    expect(markdownSummary(byAccelnet, run.samplesOf).split("\n")).toContain(`- ${note}`);
    // Every wave holding every group (replicas interleaved), one wave, or one group: nothing to say.
    const byReplica = waved([of((d) => !d.includes("#r1")), of((d) => d.includes("#r1"))]);
    expect(crossGroupWaveNote(byReplica)).toBeUndefined();
    expect(crossGroupWaveNote(run.results)).toBeUndefined();
    expect(comparisonTable(run.results, run.samplesOf)).not.toContain("baseline groups");
  });

  it("report.html: the flagged verdicts marked, and a Waves section — which variants and replicas ran in which wave — only when there was more than one", async () => {
    const html = await reportHtml(byPpg, reportCharts(byPpg, run.samplesOf), measureLabels(byPpg.measurements));
    expect(html.match(/<li class="verdict [^"]*wave-caveat"/g)).toHaveLength(2);
    expect(html).toContain("Waves: FLAGGED — the baseline ran only in wave 1, the candidate only in wave 2");
    expect(html).toContain("2 comparison(s) are FLAGGED");
    const section = html.slice(html.indexOf("<h2>Waves</h2>"), html.indexOf("<h2>Charts</h2>"));
    expect(section).toContain("This run went in 2 waves, sized against --max-vcpus 8");
    expect(section).toContain("all deployments at once would need: all regions: --max-vcpus: needs 32 vCPUs, 8 available");
    expect(section).toContain("<td>ppg=false,accelnet=false, ppg=false,accelnet=true</td><td>0, 1</td>");
    expect(section).toContain("<td>ppg=true,accelnet=false, ppg=true,accelnet=true</td><td>0, 1</td>");

    const grouped = await reportHtml(byAccelnet, reportCharts(byAccelnet, run.samplesOf), measureLabels(byAccelnet.measurements));
    expect(grouped).toContain("<h2>Waves</h2>");
    expect(grouped).toContain("reading across them compares waves too — wave 1: the group of baseline ppg=false,accelnet=false; wave 2: the group of baseline ppg=false,accelnet=true");
    expect(grouped).not.toContain("wave-caveat\"");

    const once = await reportHtml(run.results, reportCharts(run.results, run.samplesOf), measureLabels(run.results.measurements));
    expect(once).not.toContain("<h2>Waves</h2>");
  });

  it("report.html: a planned wave the run never reached is listed as not reached", async () => {
    const stopped: Results = { ...byAccelnet, waves: { ...byAccelnet.waves!, runs: byAccelnet.waves!.runs.slice(0, 1) } };
    const html = await reportHtml(stopped, [], measureLabels(stopped.measurements));
    const section = html.slice(html.indexOf("<h2>Waves</h2>"), html.indexOf("<h2>Charts</h2>"));
    expect(section).toMatch(/<tr class="mismatch"><td class="num">2<\/td>.*<td>not reached<\/td>/);
  });
});
