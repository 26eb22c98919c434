import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { reportHtml } from "../../../src/report/html/reportHtml.ts";
import { verdictCell, verdicts } from "../../../src/report/verdicts.ts";
import { BANDWIDTH_UNMODELLED_CAVEAT, HOPS_EMULATED_CAVEAT, measureLabels, notEmulatedAxes, notEmulatedNote } from "../../../src/report/wording.ts";
import { LATENCY_ONLY, ResultsSchema, type Comparison, type Results, type ShapingStatus } from "../../../src/results/schema.ts";

/**
 * "(modelled)" only where latlab's model made the measure: an RTT where latency was applied, a
 * throughput whose two ends were capped at their sizes' bandwidth; never a hop count (the emulated
 * routing). And Accelerated Networking where latency is applied: its RTT is the model's (its
 * per-RTT saving), anything else of it is noise — on the local target as in a rehearsal.
 */

const FIXTURE = join(import.meta.dirname, "../../fixtures/runs/ppg-vs-zone");
const base = ResultsSchema.parse(JSON.parse(readFileSync(join(FIXTURE, "results.json"), "utf8")));
const ping = base.comparisons.find((c) => c.tool === "ping")!;

/** The real local run, its shaping, target, hosts' records and its ping comparison (lower: a finding) as given. */
function run(opts: { shaping?: Partial<ShapingStatus>; target?: string; metric?: Comparison["metric"]; accelnet?: boolean; actual?: (role: string) => Record<string, unknown> }): Results {
  const c: Comparison = { ...ping, metric: opts.metric ?? "rtt", unit: opts.metric === "throughput" ? "Mbit/s" : opts.metric === "hops" ? "hops" : "us" };
  return {
    ...base,
    target: opts.target ?? "local",
    environment: { ...base.environment, shaping: { ...base.environment.shaping, latency: "applied", mechanism: "delay-line", ...opts.shaping } },
    variants: base.variants.map((v) => ({
      ...v,
      // An accelnet comparison: the candidate has it on, the baseline off.
      axes: opts.accelnet ? { accelnet: v.id !== v.baseline } : v.axes,
      hosts: v.hosts.map((h) => ({ ...h, ...(opts.accelnet ? { accelnet: v.id !== v.baseline } : {}), actual: { ...h.actual, ...opts.actual?.(h.role) } as Results["variants"][number]["hosts"][number]["actual"] })),
    })),
    comparisons: [c],
  };
}
const cellOf = (r: Results) => verdictCell(r, r.variants.find((v) => v.id === ping.variant)!, r.comparisons[0], measureLabels(r.measurements), false);

describe("Accelerated Networking where latency is applied: its latency modelled, nothing else", () => {
  const local = (metric?: Comparison["metric"]) => run({ accelnet: true, metric, actual: () => ({ accelnetEmulated: LATENCY_ONLY }) });

  it("an RTT difference between accelnet on and off is the model's (local and rehearsal alike), not noise", () => {
    expect(cellOf(local())).toEqual({ cell: "lower (modelled) *", caveat: expect.stringMatching(/^Modelled: the local target applies latlab's latency model/) });
    const rehearsal = run({ accelnet: true, target: "azure", actual: () => ({ accelnetEmulated: LATENCY_ONLY, sizeEmulated: false }) });
    expect(cellOf(rehearsal).cell).toBe("lower (modelled) *");
    expect(verdicts(local())[0]!.text).not.toMatch(/noise/);
    expect(notEmulatedAxes(local())).toEqual([]);
  });

  it("its throughput is not emulated: noise, said per measure and in the note under the table", async () => {
    expect(cellOf(local("throughput"))).toEqual({ cell: "lower *", caveat: "accelnet (modelled for latency only) is not emulated on this target for throughput: this difference is noise here, not a finding." });
    expect(notEmulatedAxes(local(), "throughput")).toEqual(["accelnet"]);
    const note = notEmulatedNote(local())!;
    expect(note).toMatch(/^modelled for latency only on local: accelnet — RTT differences .* are latlab's latency model's .*nothing else of them \(throughput, CPU\) is emulated/);
    expect(note).not.toContain("not emulated on local: accelnet");
    // report.html says the same under its verdicts.
    const html = await reportHtml(local(), [], measureLabels(base.measurements));
    expect(html).toContain(`<p class="note">Modelled for latency only on local: accelnet — `);
    expect(html).not.toContain("Not emulated on local: accelnet");
  });

  it("unshaped (recorded false): still not emulated on local, for every measure", () => {
    const unshaped = run({ accelnet: true, shaping: { latency: "unavailable" }, actual: () => ({ accelnetEmulated: false }) });
    expect(cellOf(unshaped).cell).toBe("lower *");
    expect(notEmulatedNote(unshaped)).toMatch(/^not emulated on local: accelnet — /);
  });
});

describe("'(modelled)' by measure", () => {
  it("throughput in a rehearsal (no bandwidth model) is this machine's, not the model's", () => {
    const r = run({ target: "azure", metric: "throughput", shaping: { bandwidth: "unavailable" } });
    expect(cellOf(r)).toEqual({ cell: "lower *", caveat: BANDWIDTH_UNMODELLED_CAVEAT });
    expect(verdicts(r)[0]!.text).not.toMatch(/modelled:/i);
  });

  it("throughput on local is the model's only with both ends capped in both variants", () => {
    const capped = run({ metric: "throughput" });
    expect(cellOf(capped)).toEqual({ cell: "lower (modelled) *", caveat: expect.stringMatching(/^Modelled: both ends capped at their VM size's documented bandwidth/) });
    const oneUncapped = run({ metric: "throughput", actual: (role) => (role === "server" ? { bandwidthCapMbit: null } : {}) });
    expect(cellOf(oneUncapped)).toEqual({ cell: "lower *", caveat: BANDWIDTH_UNMODELLED_CAVEAT });
  });

  it("a hop count is the emulated routing, never the latency model's", () => {
    const r = run({ metric: "hops" });
    expect(cellOf(r)).toEqual({ cell: "lower *", caveat: HOPS_EMULATED_CAVEAT });
    expect(verdicts(r)[0]!.text).not.toMatch(/modelled/i);
  });

  it("on Azure itself neither label nor caveat", () => {
    const azure = run({ target: "azure", metric: "throughput", shaping: { latency: "not-applicable", bandwidth: "not-applicable" } });
    expect(cellOf(azure)).toEqual({ cell: "lower" });
  });
});
