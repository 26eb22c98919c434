import { describe, expect, it } from "vitest";
import { reportHtml } from "../../../src/report/html/reportHtml.ts";
import { markdownSummary } from "../../../src/report/markdownSummary.ts";
import { reportMarkdown } from "../../../src/report/reportMarkdown.ts";
import { comparisonTable } from "../../../src/report/table.ts";
import { measureLabels } from "../../../src/report/wording.ts";
import { placementTable } from "../../../src/report/placementTable.ts";
import { verdicts } from "../../../src/report/verdicts.ts";
import { ResultsPlacementFixture } from "../results/placementFixture.ts";

describe("placement evidence in the report", () => {
  it("the verdict of a comparison resting on a NotAligned PPG says so, whatever its finding; an Aligned one says nothing more", () => {
    const bad = ResultsPlacementFixture("NotAligned");
    const [v] = verdicts(bad.results);
    expect(v!.finding).toBe("lower");
    expect(v!.placement).toMatch(/^Placement: the candidate's PPG 'ppg' \(deployment ppg=true\) is NotAligned \(At least one VM resource is not aligned with the proximity placement group\) — its hosts were not all colocated as asked/);
    expect(v!.text.endsWith(v!.placement!)).toBe(true);
    const unknown = verdicts(ResultsPlacementFixture("Unknown").results)[0]!;
    expect(unknown.text).toMatch(/is Unknown \(Colocation status is currently unknown\) — their colocation could not be confirmed/);
    const good = verdicts(ResultsPlacementFixture("Aligned").results)[0]!;
    expect(good.placement).toBeUndefined();
    expect(good.text).not.toContain("Placement");
  });

  it("the terminal table: a placement column on the flagged row, and per deployment the PPG asked vs the colocation status got", () => {
    const bad = ResultsPlacementFixture("NotAligned");
    const text = comparisonTable(bad.results, bad.samplesOf);
    const head = text.split("\n").find((l) => l.includes("vs baseline"))!;
    expect(head).toMatch(/placement/);
    const row = text.split("\n").find((l) => l.includes("ppg=true") && l.includes("ping"))!;
    expect(row).toContain("candidate ppg=true: PPG 'ppg' NotAligned");
    expect(text).toContain("placement (read from ARM after the deploy): PPG asked vs colocation status got:");
    const ppgRow = text.split("\n").find((l) => l.includes("'ppg'") && l.includes("NotAligned —"))!;
    expect(ppgRow).toContain("server: fd 0 / ud 0, running");
    expect(text).toMatch(/1 comparison\(s\) rest on one, and their rows and verdicts say so/);

    const good = ResultsPlacementFixture("Aligned");
    const plain = comparisonTable(good.results, good.samplesOf);
    expect(plain.split("\n").find((l) => l.includes("vs baseline"))).not.toMatch(/placement/);
    expect(plain).toMatch(/'ppg' .*Aligned — All resources in the proximity placement group are aligned\./);
    // No evidence (a local run, an older run): no section.
    const none = ResultsPlacementFixture("NotAligned", { withEvidence: false });
    expect(placementTable(none.results)).toBeUndefined();
    expect(comparisonTable(none.results, none.samplesOf)).not.toContain("placement (read from ARM");
  });

  it("a rehearsal says whose colocation status it is", () => {
    const t = placementTable(ResultsPlacementFixture("Aligned", { source: "emulator" }).results)!;
    expect(t.notes).toContain("rehearsal: the colocation status is the emulator's (Aligned unless a ppg-not-aligned fault is injected), not Azure's");
  });

  it("report.md: the flagged row, the verdict and the placement evidence table", () => {
    const bad = ResultsPlacementFixture("NotAligned");
    const md = reportMarkdown(bad.results, bad.samplesOf);
    expect(md).toMatch(/\| over \| placement \|/);
    expect(md).toContain("| candidate ppg=true: PPG 'ppg' NotAligned |");
    expect(md).toContain("- ⚠️ deployment ppg=true: PPG 'ppg' is NotAligned — At least one VM resource is not aligned");
    expect(md).toContain("### Placement evidence");
    expect(md).toMatch(/\| ppg=true \| ppg=true \| 'ppg' \| NotAligned — .* \| server: fd 0 \/ ud 0, running; client: fd 1 \/ ud 1, running \|/);
    expect(md).toMatch(/- accelnet|- ppg false → true: .*Placement: the candidate's PPG 'ppg'/);
    const good = ResultsPlacementFixture("Aligned");
    const plain = markdownSummary(good.results, good.samplesOf);
    expect(plain).not.toMatch(/\| placement \|/);
    expect(plain).not.toContain("⚠️ deployment");
  });

  it("report.html: the verdict marked, the comparison row marked with its placement cell, a note, and the placement table with the unaligned row marked", async () => {
    const bad = ResultsPlacementFixture("NotAligned");
    const html = await reportHtml(bad.results, [], measureLabels(bad.results.measurements));
    expect(html).toMatch(/<li class="verdict finding-lower placement-caveat"[^>]*>[^<]*Placement: the candidate&#39;s PPG &#39;ppg&#39;|<li class="verdict finding-lower placement-caveat"[^>]*>[^<]*Placement: the candidate's PPG 'ppg'/);
    expect(html).toMatch(/<tr class="mismatch placement-caveat">.*candidate ppg=true: PPG (&#39;|')ppg(&#39;|') NotAligned/);
    expect(html).toContain("1 comparison(s) rest on a proximity placement group that ARM did not report Aligned");
    expect(html).toMatch(/<h3>Placement evidence<\/h3>.*<tr class="mismatch placement-unaligned"><td>ppg=true<\/td>/s);
    const good = ResultsPlacementFixture("Aligned");
    const plain = await reportHtml(good.results, [], measureLabels(good.results.measurements));
    expect(plain).not.toContain("placement-caveat\"");
    expect(plain).not.toContain("placement-unaligned");
    expect(plain).toContain("<h3>Placement evidence</h3>");
  });
});
