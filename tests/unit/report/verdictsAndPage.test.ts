import { describe, expect, it } from "vitest";
import { reportCharts } from "../../../src/report/html/reportCharts.ts";
import { reportHtml } from "../../../src/report/html/reportHtml.ts";
import { placementTree, topologyHtml, topologyMermaid } from "../../../src/report/html/topology.ts";
import { reportMarkdown } from "../../../src/report/reportMarkdown.ts";
import { measureLabels } from "../../../src/report/wording.ts";
import { changeLabel, verdicts } from "../../../src/report/verdicts.ts";
import type { Comparison, HostRecord, Results } from "../../../src/results/schema.ts";
import { around, fakeRun } from "../history/fakeRun.ts";

const host = (over: Partial<HostRecord>): HostRecord => ({
  role: "client",
  region: "eastus",
  zone: "1",
  ppg: null,
  availabilitySet: null,
  size: "Standard_D2s_v5",
  accelnet: true,
  vnet: null,
  deployment: "d0",
  actual: {},
  mismatches: [],
  ...over,
});

/** A comparison like `base` with the given Δ and CI. */
const withDiff = (base: Comparison, estimate: number, ci95: [number, number]): Comparison => ({ ...base, diffMean: { ...base.diffMean!, estimate, ci95 } });

describe("verdicts", () => {
  const run = fakeRun("r", (c) => around(c.variant.includes("true") ? 80 : 100, 300, c.replica + 1), { replicas: 3 });
  const base = run.results.comparisons[0]!;

  it("one sentence per comparison: what changed, by how much, its CI and what the CI is over", () => {
    const [v] = verdicts(run.results);
    expect(v!.finding).toBe("lower");
    expect(v!.text).toMatch(/^accelnet false → true: ping rtt \(mean\): lower by \d+\.\d µs \(-\d+\.\d+ %\), 95 % CI \[-\d+\.\d+, -\d+\.\d+\] µs, over 3 \+ 3 replicas \(independent deployments\), Welch p = /);
  });

  it("a CI that includes 0 is no clear difference; no CI is no finding; one deployment a side says the hosts may explain it", () => {
    const results = { ...run.results, comparisons: [withDiff(base, 3, [-1, 7]), withDiff(base, 3, [1, 5]), { ...base, diffMean: undefined }, { ...withDiff(base, -3, [-5, -1]), inference: { ...base.inference, unit: "sample-blocks" as const } }] };
    const v = verdicts(results);
    expect(v.map((x) => x.finding)).toEqual(["no clear difference", "higher", "no CI", "lower"]);
    expect(v[0]!.text).toMatch(/no clear difference — Δ \+3\.00 µs .*95 % CI \[-1\.00, 7\.00\] µs includes 0/);
    expect(v[2]!.text).toMatch(/no confidence interval .* so no finding/);
    expect(v[3]!.text).toMatch(/over sample blocks of one deployment a side \(the hosts drawn may explain it; no p-value\)/);
  });

  it("the % goes with Δ over the same units (unit means, not the merged samples), and a tiny p is '<1e-15'", () => {
    const c = withDiff(base, -30, [-40, -20]);
    const units = { ...c.inference, unitStatistics: { baseline: { mean: [100, 200], p50: [100, 200] }, candidate: { mean: [90, 150], p50: [90, 150] } } };
    // Merged samples said +35 %: the sentence's % is Δ over the baseline's unit means, (−30 / 150).
    const [v] = verdicts({ ...run.results, comparisons: [{ ...c, pctChangeMean: 35.3, inference: units, diffMean: { ...c.diffMean!, welch: { t: -50, df: 4, p: 1e-300 } } }] });
    expect(v!.text).toContain("lower by 30.0 µs (-20.0 %)");
    expect(v!.text).toContain("Welch p = <1e-15");
  });

  it("names the variants when two comparisons would read the same, and says when the difference cannot be the cloud's", () => {
    const variants = [
      { id: "accelnet=false,size=a", axes: { accelnet: false, size: "a" }, baseline: "accelnet=false,size=a", hosts: [] },
      { id: "accelnet=true,size=a", axes: { accelnet: true, size: "a" }, baseline: "accelnet=false,size=a", hosts: [] },
      { id: "accelnet=false,size=b", axes: { accelnet: false, size: "b" }, baseline: "accelnet=false,size=b", hosts: [] },
      { id: "accelnet=true,size=b", axes: { accelnet: true, size: "b" }, baseline: "accelnet=false,size=b", hosts: [] },
    ];
    const comparisons = [
      { ...withDiff(base, -3, [-5, -1]), variant: "accelnet=true,size=a", baseline: "accelnet=false,size=a" },
      { ...withDiff(base, 3, [1, 5]), variant: "accelnet=true,size=b", baseline: "accelnet=false,size=b" },
    ];
    const v = verdicts({ ...run.results, variants, comparisons });
    expect(v[0]!.text).toMatch(/^accelnet false → true \(accelnet=true,size=a vs accelnet=false,size=a\): /);
    expect(v[1]!.text).toMatch(/^accelnet false → true \(accelnet=true,size=b vs accelnet=false,size=b\): /);
    // A host that says accelnet was not emulated: the finding is noise here.
    const unemulated = variants.map((x) => ({ ...x, hosts: [host({ accelnet: x.axes.accelnet, actual: { accelnetEmulated: false } })] }));
    expect(verdicts({ ...run.results, variants: unemulated, comparisons })[0]!.text).toMatch(/accelnet is not emulated on this target: this difference is noise here, not a finding\.$/);
    const unshaped = { ...run.results, environment: { ...run.results.environment, shaping: { ...run.results.environment.shaping, latency: "unavailable" as const } } };
    expect(verdicts(unshaped)[0]!.text).toMatch(/Latency was not shaped on this target \(no netem, no delay line\): the difference is this machine's, not the cloud's\.$/);
  });

  it("names the axes that differ, or the variant ids", () => {
    const variants = [
      { id: "a", axes: { ppg: false, size: "B1" }, baseline: "a", hosts: [] },
      { id: "b", axes: { ppg: true, size: "B1" }, baseline: "a", hosts: [] },
      { id: "c", axes: { ppg: false, size: "B1" }, baseline: "a", hosts: [] },
    ];
    expect(changeLabel({ variants }, "b", "a")).toBe("ppg false → true");
    expect(changeLabel({ variants }, "c", "a")).toBe("a → c");
  });
});

describe("topology", () => {
  const variants: Results["variants"] = [
    { id: "v", axes: {}, baseline: "v", hosts: [host({ role: "server" }), host({ role: "client", ppg: "ppg1" }), host({ role: "far", region: "westus", vnet: "west", zone: null, mismatches: ["zone: asked null, got 2"] })] },
  ];
  it("nests deployment → region → VNet → zone → PPG → host", () => {
    const tree = placementTree({ variants });
    const d = tree.children.get("d0")!;
    expect([...d.children.keys()]).toEqual(["eastus", "westus"]);
    const zone = d.children.get("eastus")!.children.get("")!.children.get("1")!;
    expect(zone.hosts.map((h) => h.role)).toEqual(["server"]);
    expect(zone.children.get("ppg:ppg1")!.hosts.map((h) => h.role)).toEqual(["client"]);
  });
  it("in HTML: a deployment with two VNets says they are peered, a mismatch is highlighted", () => {
    const html = topologyHtml({ variants });
    expect(html).toContain("deployment d0 — VNets peered: eastus/(default) ↔ westus/west");
    expect(html).toMatch(/class="host mismatch" title="zone: asked null, got 2"/);
  });
  it("in Mermaid: nested subgraphs, the peering of two VNets, a mismatch marked", () => {
    const m = topologyMermaid({ variants });
    expect(m.split("\n")[0]).toBe("flowchart LR");
    expect(m).toMatch(/subgraph n\d+ \["PPG ppg1"\]/);
    expect(m).toMatch(/<-\.->\|peering\|/);
    expect(m).toContain('("far · Standard_D2s_v5 ⚠")');
    expect(m.match(/subgraph/g)!.length).toBe(m.match(/^\s*end$/gm)!.length);
  });
});

describe("report.html and report.md", () => {
  it("self-contained and escaped: no script, no external URL but SVG namespaces, tool text shown as text", async () => {
    const run = fakeRun("r<1>", (c) => around(c.variant.includes("true") ? 80 : 100, 300, 1));
    const results: Results = {
      ...run.results,
      measurements: run.results.measurements.map((m, i) => (i === 0 ? { ...m, warnings: ['<script>alert("x")</script> & <img src=http://198.18.0.1/x>'] } : m)),
    };
    const html = await reportHtml(results, reportCharts(results, run.samplesOf), measureLabels(results.measurements));
    // Asserted on the matches, not the page: a failure prints what was found, not 100 kB of SVG.
    expect(html.match(/<script/i)).toBeNull();
    expect(html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;img src=http://198.18.0.1/x&gt;");
    // url(#clip1): the SVG's own clip paths, inside the page.
    expect(html.match(/<img|<link|@import|url\((?!#)/i)).toBeNull();
    const urls = [...html.matchAll(/https?:\/\/[^\s"'<>)]+/g)].map((m) => m[0]);
    expect(urls.filter((u) => !u.startsWith("http://www.w3.org/") && !u.startsWith("http://198.18.0.1/x"))).toEqual([]);
    expect(html).toContain("run <code>r&lt;1&gt;</code>");
    const md = reportMarkdown(results, run.samplesOf);
    expect(md).toContain("### Verdicts");
    expect(md).toContain("- accelnet false → true: ping rtt (mean):");
    expect(md).toContain("```mermaid\nflowchart LR");
  });
});
