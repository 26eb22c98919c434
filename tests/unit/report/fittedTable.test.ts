import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { defineExperiment } from "../../../src/index.ts";
import { comparisonLines, comparisonTable, terminalWidth, WIDE } from "../../../src/report/table.ts";
import { displayWidth, fitTable, wrapText } from "../../../src/report/renderTable.ts";
import { markdownSummary } from "../../../src/report/markdownSummary.ts";
import { ResultsSchema } from "../../../src/results/schema.ts";
import { around, fakeRun } from "../history/fakeRun.ts";

const FIXTURE = join(import.meta.dirname, "../../fixtures/runs/ppg-vs-zone");
/** A real local run of ppg-vs-zone (see tests/fixtures/runs/ppg-vs-zone/README.md). */
function ppgVsZone() {
  const results = ResultsSchema.parse(JSON.parse(readFileSync(join(FIXTURE, "results.json"), "utf8")));
  const samplesOf = (cell: string) => {
    const file = results.measurements.find((m) => m.cell === cell)?.samplesFile;
    return file ? readFileSync(join(FIXTURE, file), "utf8").split("\n").filter(Boolean).map(Number) : [];
  };
  return { results, samplesOf };
}
const longest = (lines: readonly string[]) => Math.max(...lines.map(displayWidth));
/** The cells of the table rows (lines between │), trimmed; a wrapped row continues on the next line. */
const tableRows = (lines: readonly string[]) => lines.filter((l) => l.startsWith("│")).map((l) => l.split("│").slice(1, -1).map((c) => c.trim()));
/** Every column of today's table, as `--wide` keeps it. */
const WIDE_HEADS = ["variant", "measure", "metric", "n", "mean", "p50", "p95", "p99", "p99.9", "p99.99", "p99.999", "min", "max", "vs baseline", "change", "95% CI of Δmean", "p Welch / rank", "over"];

/** Four variants whose names are too long for 80 columns: two axes, one with long values. */
const fourVariants = () =>
  defineExperiment({
    name: "sizes",
    description: "four variants",
    axes: { size: ["Standard_D2s_v5", "Standard_D16s_v5"], accelnet: [false, true] },
    hosts: { server: {}, client: {} },
    measure: [{ tool: "ping" }],
    replicas: 2,
  });

describe("the table fitted to the terminal", () => {
  it.each([80, 120])("a real ppg-vs-zone run at %i columns: no line wider, the answering columns, every row", (width) => {
    const { results, samplesOf } = ppgVsZone();
    const lines = comparisonLines(results, samplesOf, { wide: false, width });
    expect(longest(lines)).toBeLessThanOrEqual(width);
    const rows = tableRows(lines);
    expect(rows[0]).toEqual(["variant", "measure", "n", "p50", "p99", "Δmean [95% CI]", "verdict"]);
    // Both variants' names fit: shown in full, no legend.
    expect(rows.filter((r) => r[0] === "ppg=false" && r[6] === "baseline")).toHaveLength(3);
    const candidate = rows.filter((r) => r[0] === "ppg=true");
    // This run's kernel had no netem: a difference found is this machine's, marked and said under the table.
    expect(results.environment.shaping.latency).toBe("unavailable");
    expect(candidate.map((r) => r[6])).toEqual(["lower *", "lower *", "no CI"]);
    expect(lines.join(" ").replace(/\s+/g, " ")).toContain("* ppg=true ping: Latency was not shaped on this target (no netem, no delay line): the difference is this machine's, not the cloud's.");
    // Δ and its CI are the comparison's, over what the line under the table says.
    const ping = results.comparisons.find((c) => c.tool === "ping")!;
    expect(lines.join(" ")).toContain(`${ping.diffMean!.estimate.toFixed(1)} [${ping.diffMean!.ci95[0].toFixed(1)},`);
    expect(lines).toContain("Δmean: candidate − its baseline (mean), 95% CI over sample blocks");
    expect(lines.filter((l) => /^[A-Z] = /.test(l))).toEqual([]);
  });

  it("--wide: every column of the table, lines as long as they come", () => {
    const { results, samplesOf } = ppgVsZone();
    const lines = comparisonLines(results, samplesOf, WIDE);
    expect(tableRows(lines)[0]).toEqual(WIDE_HEADS);
    expect(longest(lines)).toBeGreaterThan(200);
    expect(comparisonTable(results, samplesOf)).toBe(lines.join("\n"));
  });

  it("long variant names at 80 columns: keyed A, B, …, the legend naming every one; the CI's units said", () => {
    const run = fakeRun("long", (c) => around(c.variant.includes("accelnet=true") ? 80 : 100, 40, c.replica), { experiment: fourVariants() });
    const lines = comparisonLines(run.results, run.samplesOf, { wide: false, width: 80 });
    expect(longest(lines)).toBeLessThanOrEqual(80);
    const ids = run.results.variants.map((v) => v.id);
    expect(Math.max(...ids.map((id) => id.length))).toBeGreaterThan(30);
    const legend = lines.filter((l) => /^[A-Z] = /.test(l));
    const keyed = new Map(legend.map((l) => [l.slice(0, 1), l.slice(4).replace(/ \(baseline\)$/, "")]));
    expect([...keyed.values()].sort()).toEqual([...ids].sort());
    expect(legend.filter((l) => l.endsWith(" (baseline)"))).toEqual([`${[...keyed].find(([, id]) => id === run.results.baseline)![0]} = ${run.results.baseline} (baseline)`]);
    // Every key in the table is in the legend, and every variant's row is there under its key.
    const rows = tableRows(lines).slice(1).filter((r) => r[0]);
    expect(rows.map((r) => keyed.get(r[0]!))).toEqual(ids);
    expect(lines).toContain("Δmean: candidate − its baseline (mean), 95% CI over 2+2 replicas");
  });

  it("the same names at 120 columns fit: shown in full, no legend", () => {
    const run = fakeRun("long", (c) => around(c.variant.includes("accelnet=true") ? 80 : 100, 40, c.replica), { experiment: fourVariants() });
    const lines = comparisonLines(run.results, run.samplesOf, { wide: false, width: 120 });
    expect(longest(lines)).toBeLessThanOrEqual(120);
    expect(tableRows(lines).slice(1).map((r) => r[0])).toEqual(run.results.variants.map((v) => v.id));
    expect(lines.filter((l) => /^[A-Z] = /.test(l))).toEqual([]);
  });

  it("--wide with long names: every column, the names in full", () => {
    const run = fakeRun("long", (c) => around(c.variant.includes("accelnet=true") ? 80 : 100, 40, c.replica), { experiment: fourVariants() });
    const lines = comparisonLines(run.results, run.samplesOf, WIDE);
    expect(tableRows(lines)[0]).toEqual(WIDE_HEADS);
    expect(tableRows(lines).slice(1).map((r) => r[0])).toEqual(run.results.variants.map((v) => (v.id === run.results.baseline ? `${v.id} (baseline)` : v.id)));
  });
});

describe("a verdict with a caveat", () => {
  it("is marked * and the caveat said under the table: here a difference in what the target does not emulate", () => {
    const run = fakeRun("noise", (c) => around(c.variant === "accelnet=true" ? 80 : 100, 30, c.replica), { replicas: 2 });
    const host = { role: "client", accelnet: true, mismatches: [], actual: { accelnetEmulated: false } };
    const results = { ...run.results, variants: run.results.variants.map((v) => ({ ...v, hosts: [host] })) } as never;
    const lines = comparisonLines(results, run.samplesOf, { wide: false, width: 80 });
    expect(tableRows(lines).find((r) => r[0] === "accelnet=true")?.at(-1)).toBe("lower *");
    expect(lines.join(" ").replace(/\s+/g, " ")).toContain("* accelnet=true ping: accelnet is not emulated on this target: this difference is noise here, not a finding.");
    expect(longest(lines)).toBeLessThanOrEqual(80);
  });
});

describe("wrapText and fitTable", () => {
  it("breaks between words, keeps the indentation and hangs the continuation; cuts a word wider than the line", () => {
    expect(wrapText("  one two three four", 10, "  ")).toEqual(["  one two", "    three", "    four"]);
    expect(wrapText("abcdefghijkl", 5)).toEqual(["abcde", "fghij", "kl"]);
    expect(wrapText("µs Δ — ×", 4)).toEqual(["µs Δ", "— ×"]);
  });

  it("a table wider than the width wraps its widest cells, never past the width", () => {
    const head = ["a", "long column"];
    const rows = [["x", "several words in one cell that cannot fit"], ["y", "short"]];
    const text = fitTable(head, rows, 30);
    expect(longest(text.split("\n"))).toBeLessThanOrEqual(30);
    expect(text.replace(/[│\s]+/g, " ")).toContain("several words in one cell");
  });
});

describe("terminalWidth", () => {
  it("the terminal's columns; else $COLUMNS; else 80", () => {
    expect(terminalWidth({ isTTY: true, columns: 132 }, {})).toBe(132);
    expect(terminalWidth({ isTTY: false, columns: 132 }, { COLUMNS: "100" })).toBe(100);
    expect(terminalWidth({}, {})).toBe(80);
    expect(terminalWidth({}, { COLUMNS: "wide" })).toBe(80);
  });
});

describe("the Markdown summary makes the same choice", () => {
  it("by default (report.md) every column; { wide: false } the answering ones with the verdict", () => {
    const run = fakeRun("md", (c) => around(c.variant === "accelnet=true" ? 80 : 100, 30, c.replica), { replicas: 3 });
    expect(markdownSummary(run.results, run.samplesOf)).toContain("| variant | measure | pair | metric | n | mean | p50 | p99 | p99.9 | p99.99 | p99.999 |");
    const md = markdownSummary(run.results, run.samplesOf, { wide: false });
    expect(md).toContain("| variant | measure | n | p50 | p99 | Δmean [95% CI] | over | verdict |");
    expect(md.split("\n").find((l) => l.startsWith("| accelnet=true | ping rtt µs |"))).toMatch(/\| -20\.0 \[-20\.\d, -20\.\d\] \| 3\+3 replicas \| lower \* \|$/);
    // The fake run's kernel had no netem, as this machine's: the finding is marked.
    expect(run.results.environment.shaping.latency).toBe("unavailable");
    expect(md.split("\n").find((l) => l.startsWith("| accelnet=false | ping rtt µs |"))).toMatch(/\| baseline \|$/);
  });
});
