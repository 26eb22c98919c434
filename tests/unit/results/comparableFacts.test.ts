import { describe, expect, it } from "vitest";
import { historyRecords } from "../../../src/history/historyRecords.ts";
import { buildPlan, defineExperiment } from "../../../src/index.ts";
import { planHash } from "../../../src/plan/planHash.ts";
import { runExperiment } from "../../../src/runner/runExperiment.ts";
import { ResultsSchema } from "../../../src/results/schema.ts";
import { tempDirs } from "../../tempDirs.ts";
import { fakeTarget, silentProgress } from "../runner/fakeTarget.ts";

const tempDir = tempDirs();
const plan = buildPlan(
  defineExperiment({ name: "fake", description: "comparable facts", axes: { ppg: [false, true] }, hosts: { client: {}, server: {} }, measure: [{ tool: "ping", params: { count: 3, interval: 0.1 } }], replicas: 2 }),
);
const run = (facts?: Record<string, string>) =>
  runExperiment({
    source: "fake.ts", plan, target: fakeTarget(), runId: "unit", runDir: tempDir("latlab-unit-run-"), progress: silentProgress, signal: new AbortController().signal,
    // Hosts that cannot be reached: the cells fail, the run's facts are recorded all the same.
    connect: async () => {
      throw new Error("unreachable");
    },
    ...(facts ? { facts } : {}),
  });

describe("results.json records what makes runs comparable", () => {
  it("the plan hash of the run's plan and target, which its own results.json gives back, and the event", async () => {
    const results = await run({ "github.event": "schedule" });
    expect(ResultsSchema.parse(results)).toEqual(results);
    expect(results.planHash).toBe(planHash({ target: results.target, variants: plan.variants, cells: plan.cells }));
    expect(results.environment.event).toBe("schedule");
    // From results.json alone (as the history reads a run made before the hash was recorded): the same hash.
    const { planHash: _, ...old } = results;
    expect(historyRecords(old, () => []).run.planHash).toBe(results.planHash);
    expect((await run()).environment.event).toBe("local");
  });

  it("a results.json made before them still parses", async () => {
    const { planHash: _, ...results } = await run();
    const { event: __, ...environment } = results.environment;
    expect(ResultsSchema.safeParse({ ...results, environment }).success).toBe(true);
    expect(ResultsSchema.safeParse({ ...results, planHash: "not-a-hash" }).success).toBe(false);
  });
});
