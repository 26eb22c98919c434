import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { markdownSummary } from "../../../src/report/markdownSummary.ts";
import { placementTable } from "../../../src/report/placementTable.ts";
import { reportMarkdown } from "../../../src/report/reportMarkdown.ts";
import { comparisonLines } from "../../../src/report/table.ts";
import { verdicts } from "../../../src/report/verdicts.ts";
import { modelledLabel } from "../../../src/report/wording.ts";
import { ResultsSchema, type Results, type ShapingStatus } from "../../../src/results/schema.ts";
import { ResultsPlacementFixture } from "../results/placementFixture.ts";

/**
 * A run whose target applied latlab's latency model (results.json's shaping.latency "applied":
 * netem or the delay line on the local target, the emulator's fabric in a rehearsal) shows its
 * differences labelled as the model's — never as a finding about Azure; a run that could not
 * shape keeps the "not shaped" caveat; a run on Azure gets neither. Keyed on what results.json
 * recorded (shaping and target), not on anything else.
 */

const FIXTURE = join(import.meta.dirname, "../../fixtures/runs/ppg-vs-zone");
/** The real local ppg-vs-zone run (tests/fixtures/runs/ppg-vs-zone), its shaping as given. */
function ppgVsZone(shaping: Partial<ShapingStatus>, target = "local") {
  const results = ResultsSchema.parse(JSON.parse(readFileSync(join(FIXTURE, "results.json"), "utf8")));
  const shaped: Results = { ...results, target, environment: { ...results.environment, shaping: { ...results.environment.shaping, ...shaping } } };
  const samplesOf = (cell: string) => {
    const file = results.measurements.find((m) => m.cell === cell)?.samplesFile;
    return file ? readFileSync(join(FIXTURE, file), "utf8").split("\n").filter(Boolean).map(Number) : [];
  };
  return { results: shaped, samplesOf };
}
const tableRows = (lines: readonly string[]) => lines.filter((l) => l.startsWith("│")).map((l) => l.split("│").slice(1, -1).map((c) => c.trim()));
const flat = (lines: readonly string[]) => lines.join(" ").replace(/\s+/g, " ");

const LOCAL = "modelled: the local target applies latlab's latency model (sources in results.json); not a finding about Azure";
const APPLIED = { latency: "applied", mechanism: "delay-line", note: "shaping: latency applied per peer with the delay line, ±150 µs at p99" } as const;

describe("the modelled label", () => {
  it("is keyed on results.json: latency applied on the local target, applied anywhere else (a rehearsal), and none otherwise", () => {
    expect(modelledLabel(ppgVsZone(APPLIED).results)).toBe(LOCAL);
    expect(modelledLabel(ppgVsZone({ ...APPLIED, mechanism: "netem" }).results)).toBe(LOCAL);
    expect(modelledLabel(ppgVsZone(APPLIED, "azure").results)).toMatch(/^modelled: the rehearsal applies latlab's latency model .* not measured on Azure$/);
    expect(modelledLabel(ppgVsZone({ latency: "unavailable" }).results)).toBeUndefined();
    expect(modelledLabel(ppgVsZone({ latency: "not-applicable" }, "azure").results)).toBeUndefined();
  });

  it("ppg-vs-zone on a local target that shaped latency: the table shows the difference labelled modelled, the note says whose model", () => {
    const { results, samplesOf } = ppgVsZone(APPLIED);
    const lines = comparisonLines(results, samplesOf, { wide: false, width: 120 });
    const candidate = tableRows(lines).filter((r) => r[0] === "ppg=true");
    expect(candidate.map((r) => r[6])).toEqual(["lower (modelled) *", "lower (modelled) *", "no CI"]);
    expect(flat(lines)).toContain(`* ppg=true ping: Modelled: the local target applies latlab's latency model (sources in results.json); not a finding about Azure.`);
    expect(flat(lines)).not.toContain("Latency was not shaped");
    // The report's sentences and the Markdown summary say it too.
    const ping = verdicts(results).find((v) => v.text.includes("ping"))!;
    expect(ping.text).toMatch(/: lower by .*\. Modelled: the local target applies latlab's latency model \(sources in results\.json\); not a finding about Azure\.$/);
    expect(markdownSummary(results, samplesOf, { wide: false })).toContain("lower (modelled) *");
    expect(reportMarkdown(results, samplesOf)).toContain("Modelled: the local target applies latlab's latency model");
  });

  it("the same run unshaped keeps the 'not shaped' caveat, and Azure's own gets no label", () => {
    const unshaped = ppgVsZone({ latency: "unavailable" });
    const lines = comparisonLines(unshaped.results, unshaped.samplesOf, { wide: false, width: 120 });
    expect(tableRows(lines).filter((r) => r[0] === "ppg=true").map((r) => r[6])).toEqual(["lower *", "lower *", "no CI"]);
    expect(flat(lines)).toContain("* ppg=true ping: Latency was not shaped on this target (no netem, no delay line): the difference is this machine's, not the cloud's.");
    const azure = ppgVsZone({ latency: "not-applicable" }, "azure");
    const onAzure = comparisonLines(azure.results, azure.samplesOf, { wide: false, width: 120 });
    expect(tableRows(onAzure).filter((r) => r[0] === "ppg=true").map((r) => r[6])).toEqual(["lower", "lower", "no CI"]);
    expect(flat(onAzure)).not.toMatch(/modelled|not shaped/i);
  });

  it("a rehearsal that applied the model: its verdict and placement table say the latency is the model's by that placement, not Azure's", () => {
    const fixture = ResultsPlacementFixture("Aligned", { source: "emulator" });
    const results: Results = { ...fixture.results, target: "azure", environment: { ...fixture.results.environment, shaping: { ...fixture.results.environment.shaping, latency: "applied", mechanism: "netem" } } };
    const [v] = verdicts(results);
    expect(v!.text).toMatch(/Modelled: the rehearsal applies latlab's latency model between the emulator's VMs by their placement in ARM \(sources in results\.json\); the shape of the answer, not measured on Azure\.$/);
    expect(placementTable(results)!.notes).toContain(
      "latency by this placement — modelled: the rehearsal applies latlab's latency model between the emulator's VMs by their placement in ARM (sources in results.json); the shape of the answer, not measured on Azure",
    );
    // Without the model (an older rehearsal, or no mechanism on the machine): no such line.
    expect(placementTable(fixture.results)!.notes.join(" ")).not.toContain("modelled");
  });

  it("a difference the model gives none of (no clear difference) is the model's answer too; an axis not emulated stays noise", () => {
    const { results } = ppgVsZone(APPLIED);
    const c = results.comparisons.find((x) => x.tool === "ping")!;
    const none = { ...results, comparisons: [{ ...c, diffMean: { ...c.diffMean!, estimate: 1, ci95: [-1, 3] as [number, number] } }] };
    expect(verdicts(none)[0]!.text).toMatch(/includes 0, .*\. Modelled: the local target/);
    const sizeNoise = { ...results, variants: results.variants.map((x) => ({ ...x, hosts: x.hosts.map((h) => ({ ...h, actual: { ...h.actual, ppgEmulated: false } })) })) };
    expect(verdicts(sizeNoise)[0]!.text).toMatch(/ppg is not emulated on this target: this difference is noise here, not a finding\.$/);
  });
});
