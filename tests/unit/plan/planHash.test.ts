import { describe, expect, it } from "vitest";
import { buildPlan, defineExperiment } from "../../../src/index.ts";
import { canonicalJson } from "../../../src/plan/canonicalJson.ts";
import { planDifferences } from "../../../src/plan/planDifferences.ts";
import { identityOf, measureIdentities, planContent, planHash, PlanContentSchema } from "../../../src/plan/planHash.ts";
import type { Plan } from "../../../src/plan/types.ts";
import { hostRecords } from "../../../src/results/hostRecords.ts";

type Def = Parameters<typeof defineExperiment>[0];
const base: Def = {
  name: "ph",
  description: "plan hash test",
  axes: { accelnet: [false, true] },
  hosts: { server: { size: "Standard_D2s_v5" }, client: { size: "Standard_D2s_v5" } },
  measure: [{ tool: "ping", params: { count: 20 } }, { tool: "sockperf" }],
};
const planOf = (over: Partial<Def> = {}, options: Parameters<typeof buildPlan>[1] = {}) => buildPlan(defineExperiment({ ...base, ...over } as Def), options);
const hashOf = (plan: Plan, target = "local") => planHash({ target, variants: plan.variants, cells: plan.cells });
const idOf = (plan: Plan, measure: number, variant = "accelnet=false") => identityOf(measureIdentities(plan.cells), variant, measure)!;

describe("canonicalJson", () => {
  it("sorts keys at every depth, keeps array order, and refuses what is no JSON value", () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: null, u: undefined } })).toBe('{"a":{"c":null,"d":[2,1]},"b":1}');
    expect(canonicalJson({ a: 1, b: 2 })).toBe(canonicalJson({ b: 2, a: 1 }));
    expect(() => canonicalJson({ a: Number.NaN })).toThrow(/no JSON number/);
    expect(() => canonicalJson({ a: 1n })).toThrow(/bigint/);
  });
});

describe("planHash", () => {
  it("is stable: the same experiment planned twice, or with its words, name or measure order changed, gives one hash", () => {
    const h = hashOf(planOf());
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(hashOf(planOf())).toBe(h);
    expect(hashOf(planOf({ description: "other words", name: "renamed" }))).toBe(h);
    const swapped = planOf({ measure: [{ tool: "sockperf" }, { tool: "ping", params: { count: 20 } }] });
    expect(hashOf(swapped)).toBe(h);
    // The measure moved in the file keeps its identity.
    expect(idOf(swapped, 1)).toBe(idOf(planOf(), 0));
    expect(PlanContentSchema.parse(planContent({ target: "local", variants: swapped.variants, cells: swapped.cells }))).toBeTruthy();
  });

  it("changes with what is measured: the duration, a size, AccelNet, the pairs, the target, the replicas", () => {
    const h = hashOf(planOf());
    const longer = planOf({}, { duration: { seconds: 30 } });
    expect(hashOf(longer)).not.toBe(h);
    expect(idOf(longer, 1)).not.toBe(idOf(planOf(), 1));
    const bigger = planOf({ hosts: { server: { size: "Standard_D4s_v5" }, client: { size: "Standard_D2s_v5" } } });
    expect(hashOf(bigger)).not.toBe(h);
    // A size is the variant's, not the measure's: the measure keeps its identity.
    expect(idOf(bigger, 0)).toBe(idOf(planOf(), 0));
    expect(hashOf(planOf({ axes: { accelnet: [false] } }))).not.toBe(h);
    expect(hashOf(planOf({ measure: [{ tool: "ping", params: { count: 20 }, pairs: [{ from: "server", to: "client" }] }, { tool: "sockperf" }] }))).not.toBe(h);
    expect(hashOf(planOf(), "azure")).not.toBe(h);
    expect(hashOf(planOf({ replicas: 2 }))).not.toBe(h);
  });

  it("from a finished run's results (variants with their host records, measurements) is the plan's own hash", () => {
    const plan = planOf({ replicas: 2 });
    const variants = plan.variants.map((v) => ({ id: v.id, axes: v.axes, hosts: hostRecords(plan, v.id, []) }));
    expect(variants[0]!.hosts.length).toBe(4);
    const measurements = plan.cells.map(({ id, estimatedSeconds, crossesPeering, ...cell }) => ({ ...cell, cell: id, status: "failed" as const }));
    expect(planHash({ target: "local", variants, cells: measurements })).toBe(hashOf(plan));
  });

  it("two measures the same in every respect get distinct identities, by their order", () => {
    const twice = planOf({ measure: [{ tool: "ping", params: { count: 20 } }, { tool: "ping", params: { count: 20 } }] });
    expect(idOf(twice, 1)).toBe(`${idOf(twice, 0)}-2`);
  });
});

describe("planDifferences", () => {
  it("says what changed: a duration, a size, a measure only in one plan", () => {
    const content = (plan: Plan) => planContent({ target: "local", variants: plan.variants, cells: plan.cells });
    const a = content(planOf());
    expect(planDifferences(a, a)).toEqual([]);
    const d = planDifferences(a, content(planOf({ hosts: { server: { size: "Standard_D4s_v5" }, client: { size: "Standard_D2s_v5" } } }, { duration: { seconds: 30 } })));
    expect(d).toContain("variant accelnet=false: host server size Standard_D2s_v5 → Standard_D4s_v5");
    expect(d).toContain("variant accelnet=false: sockperf parameters duration 5 → 30");
    expect(d).toContain("variant accelnet=true: ping parameters count 20 → 150, countAsked null → 20");
    const fewer = planDifferences(a, content(planOf({ measure: [{ tool: "ping", params: { count: 20 } }] })));
    expect(fewer).toEqual(["variant accelnet=false: sockperf client->server (private) only in run A", "variant accelnet=true: sockperf client->server (private) only in run A"]);
  });
});
