import { describe, expect, it } from "vitest";
import { loadExperiment } from "../../../src/cli/experiments/loadExperiment.ts";
import { buildPlan } from "../../../src/plan/buildPlan.ts";
import { formatPlan } from "../../../src/report/planText.ts";

// (Here rather than in tests/unit/report: the CLI's plan output, reviewed with the CLI.)
describe("formatPlan", () => {
  const marked = (text: string) => text.split("\n").filter((l) => l.endsWith(" (baseline)")).map((l) => l.replace(/^variant /, "").replace(/ \(baseline\)$/, ""));

  it("marks every group baseline: accelnet-on-off compares within each placement", async () => {
    const { experiment } = await loadExperiment("accelnet-on-off");
    const plan = buildPlan(experiment);
    const baselines = plan.variants.filter((v) => plan.baselineOf[v.id] === v.id).map((v) => v.id);
    expect(baselines).toHaveLength(3);
    expect(marked(formatPlan(plan))).toEqual(baselines);
    expect(baselines.every((id) => /accelnet=false/.test(id))).toBe(true);
  });

  it("marks the one baseline when every variant shares it", async () => {
    const { experiment } = await loadExperiment("ppg-vs-zone");
    const plan = buildPlan(experiment);
    expect(marked(formatPlan(plan))).toEqual([plan.baseline]);
  });

  it("public-vs-peered: both paths on the same hosts, each host's VNet, and which cells cross the peering", async () => {
    const { experiment } = await loadExperiment("public-vs-peered");
    const text = formatPlan(buildPlan(experiment));
    expect(marked(text)).toEqual(["size=Standard_D4s_v5,path=private", "size=Standard_D8s_v5,path=private"]);
    expect(text).toContain("  (the same hosts as size=Standard_D4s_v5,path=public)");
    expect(text).toMatch(/server {5}northeurope, vnet b, no zone/);
    expect(text).toContain("size=Standard_D4s_v5/traceroute#0/client->server@path=private  [same-region, private, across a VNet peering]");
    expect(text).toContain("size=Standard_D4s_v5/traceroute#0/client->server@path=public  [same-region, public]");
    expect(text).toMatch(/^2 deployments, 4 hosts, 16 cells/m);
  });
});
