/**
 * A run in waves (plan/waves.ts): each wave brought up, measured and torn down before the next,
 * under its own target run id; teardown on every path; results.json records the waves and the
 * comparisons say which waves their units came from.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildPlan, defineExperiment } from "../../../src/index.ts";
import type { Plan } from "../../../src/plan/types.ts";
import { planWaves, type WavePlan } from "../../../src/plan/waves.ts";
import { ResumeError, resumePlan, resumeRun, resumeWaves } from "../../../src/runner/resumeRun.ts";
import type { WavesRecord } from "../../../src/results/waveRecords.ts";
import type { Connect } from "../../../src/runner/connections.ts";
import { runExperiment, type RunOptions } from "../../../src/runner/runExperiment.ts";
import { ResultsSchema } from "../../../src/results/schema.ts";
import { deploymentDemands, maxVcpusLimits } from "../../../src/targets/azure/catalog/quota.ts";
import type { Environment, Target, TargetContext } from "../../../src/targets/target.ts";
import { fakeSsh } from "./fakeSsh.ts";
import { fakeTarget, silentProgress } from "./fakeTarget.ts";
import { endpoint } from "./fakeSsh.ts";
import { tempDirs } from "../../tempDirs.ts";

const tempDir = tempDirs();
const pingOut = readFileSync(join(import.meta.dirname, "../../fixtures/ping/normal.stdout"), "utf8");

/** Two variants × two replicas, two hosts of 2 vCPUs each: 4 vCPUs a deployment. */
const plan: Plan = buildPlan(
  defineExperiment({
    name: "fake",
    description: "waves",
    axes: { ppg: [false, true] },
    replicas: 2,
    defaults: { region: "eastus", zone: null, size: "Standard_D2s_v5", accelnet: false },
    hosts: { client: {}, server: {} },
    measure: [{ tool: "ping", params: { count: 3, interval: 0.1 } }],
  }),
);
/** --max-vcpus 8: two waves, replica 0 of both variants, then replica 1. */
const twoWaves: WavePlan = planWaves(plan, deploymentDemands(plan), maxVcpusLimits(8));

const connect: Connect = async (h) => fakeSsh(h.role, (cmd) => (/\bping\b.*-c/.test(cmd) ? { stdout: pingOut } : { stdout: "ping from iputils 20240117" })).ssh;

/** The fake target, recording up (with the run id it was given) and down in order; `up`/`down` may be replaced per call. */
function recording(options: { failUp?: (n: number) => Error | undefined; failDown?: (n: number) => boolean } = {}) {
  const inner = fakeTarget();
  const events: string[] = [];
  let ups = 0;
  let downs = 0;
  const target: Target = {
    name: "fake",
    async up(p: Plan, ctx: TargetContext): Promise<Environment> {
      ups++;
      events.push(`up ${ctx.runId} ${p.deployments.map((d) => d.id).join(",")} cells=${p.cells.length}`);
      const error = options.failUp?.(ups);
      if (error) throw error;
      return inner.up(p, ctx);
    },
    async down() {
      downs++;
      events.push("down");
      if (options.failDown?.(downs)) return { status: "failed" as const, errors: ["the group would not go"], removed: [] };
      return inner.down();
    },
  };
  return { target, events };
}

const run = (target: Target, extra: Partial<RunOptions> = {}) =>
  runExperiment({ source: "fake.ts", plan, target, runId: "unit", runDir: tempDir("latlab-unit-waves-"), progress: silentProgress, signal: new AbortController().signal, connect, waves: twoWaves, ...extra });

describe("runExperiment in waves", () => {
  it("the plan in two waves of replicas, each wave holding both variants", () => {
    expect(twoWaves.waves.map((w) => w.deployments)).toEqual([
      ["ppg=false#r0", "ppg=true#r0"],
      ["ppg=false#r1", "ppg=true#r1"],
    ]);
  });

  it("brings each wave up, measures it and tears it down before the next, under <runId>-w<n>", async () => {
    const { target, events } = recording();
    const results = await run(target);
    expect(events).toEqual(["up unit-w1 ppg=false#r0,ppg=true#r0 cells=2", "down", "up unit-w2 ppg=false#r1,ppg=true#r1 cells=2", "down"]);
    expect(results.status).toBe("complete");
    expect(results.teardown.status).toBe("ok");
    // Every cell measured, each in its own deployment's wave.
    expect(results.measurements.map((m) => [m.deployment, m.status])).toEqual(plan.cells.map((c) => [c.deployment, "ok"]));
    // results.json records the waves.
    expect(ResultsSchema.parse(results).waves).toMatchObject({
      limits: "--max-vcpus 8",
      planned: 2,
      plannedWaves: [
        ["ppg=false#r0", "ppg=true#r0"],
        ["ppg=false#r1", "ppg=true#r1"],
      ],
      runs: [
        { wave: 1, deployments: ["ppg=false#r0", "ppg=true#r0"], variants: ["ppg=false", "ppg=true"], replicas: [0], targetRunId: "unit-w1", teardown: "ok" },
        { wave: 2, deployments: ["ppg=false#r1", "ppg=true#r1"], variants: ["ppg=false", "ppg=true"], replicas: [1], targetRunId: "unit-w2", teardown: "ok" },
      ],
    });
    // Both waves' hosts are in the results.
    expect(results.variants.flatMap((v) => v.hosts.map((h) => h.deployment)).sort()).toEqual(["ppg=false#r0", "ppg=false#r0", "ppg=false#r1", "ppg=false#r1", "ppg=true#r0", "ppg=true#r0", "ppg=true#r1", "ppg=true#r1"]);
  });

  it("the comparison says its replicas came from two waves, each holding both sides", async () => {
    const { target } = recording();
    const results = await run(target);
    expect(results.comparisons).toHaveLength(1);
    const c = results.comparisons[0]!;
    expect(c.inference.unit).toBe("replica");
    expect(c.inference.waves).toEqual({
      waves: [
        { wave: 1, baseline: 1, candidate: 1 },
        { wave: 2, baseline: 1, candidate: 1 },
      ],
      balanced: true,
      baselineElsewhere: false,
    });
    expect(c.inference.note).toBe("run in waves (quota): units from 2 waves, each wave holding both sides");
  });

  it("flags a variant whose baseline ran only in another wave", async () => {
    const split: WavePlan = {
      ...twoWaves,
      waves: [
        { ...twoWaves.waves[0]!, deployments: ["ppg=false#r0", "ppg=false#r1"], variants: ["ppg=false"], replicas: [0, 1] },
        { ...twoWaves.waves[1]!, deployments: ["ppg=true#r0", "ppg=true#r1"], variants: ["ppg=true"], replicas: [0, 1] },
      ],
    };
    const { target } = recording();
    const results = await run(target, { waves: split });
    const c = results.comparisons[0]!;
    expect(c.inference.waves).toMatchObject({ balanced: false, baselineElsewhere: true });
    expect(c.inference.note).toContain("ppg=true vs ppg=false: FLAGGED — the baseline ran only in wave 1, the candidate only in wave 2");
  });

  it("a failure bringing wave 2 up: wave 1 was measured and torn down, wave 2 is torn down too, its cells are not run", async () => {
    const { target, events } = recording({ failUp: (n) => (n === 2 ? new Error("AllocationFailed in eastus") : undefined) });
    const results = await run(target);
    expect(events).toEqual(["up unit-w1 ppg=false#r0,ppg=true#r0 cells=2", "down", "up unit-w2 ppg=false#r1,ppg=true#r1 cells=2", "down"]);
    expect(results.status).toBe("partial");
    expect(results.error).toBe("AllocationFailed in eastus");
    expect(results.measurements.filter((m) => m.status === "ok").map((m) => m.deployment)).toEqual(["ppg=false#r0", "ppg=true#r0"]);
    expect(results.measurements.filter((m) => m.status === "failed").every((m) => /^not run: the run failed/.test(m.error ?? ""))).toBe(true);
    expect(results.waves?.runs.map((r) => r.teardown)).toEqual(["ok", "ok"]);
  });

  it("a teardown that fails stops the run before the next wave: nothing more is brought up", async () => {
    const { target, events } = recording({ failDown: (n) => n === 1 });
    const results = await run(target);
    expect(events).toEqual(["up unit-w1 ppg=false#r0,ppg=true#r0 cells=2", "down"]);
    expect(results.teardown).toMatchObject({ status: "failed", errors: ["wave 1: the group would not go"] });
    expect(results.error).toContain("wave 1 of 2: its teardown failed, so the later waves were not started");
    expect(results.measurements.filter((m) => m.status === "ok")).toHaveLength(2);
  });

  it("Ctrl-C in wave 1: wave 1 is torn down, wave 2 never comes up", async () => {
    const controller = new AbortController();
    const { target, events } = recording();
    const stopping: Connect = async (h) => {
      controller.abort();
      return connect(h, {} as never);
    };
    const results = await run(target, { signal: controller.signal, connect: stopping });
    expect(events).toEqual(["up unit-w1 ppg=false#r0,ppg=true#r0 cells=2", "down"]);
    expect(results.status).toBe("interrupted");
  });

  it("waves decided once the run has started: a refusal fails the run before anything is up, results.json says why", async () => {
    const { target, events } = recording();
    const results = await run(target, {
      waves: async () => {
        throw new Error("fake target: not deploying (nothing was created): a deployment does not fit even alone");
      },
    });
    expect(events).toEqual(["down"]);
    expect(results.status).toBe("failed");
    expect(results.error).toContain("does not fit even alone");
    expect(results.waves).toBeUndefined();
  });

  it("one wave (or none asked): every deployment at once under the run's own id, as ever", async () => {
    const { target, events } = recording();
    const results = await run(target, { waves: undefined });
    expect(events).toEqual([`up unit ${plan.deployments.map((d) => d.id).join(",")} cells=4`, "down"]);
    expect(results.waves).toBeUndefined();
    expect(results.comparisons[0]!.inference.waves).toBeUndefined();
  });
});

describe("latlab resume of a run made in waves", () => {
  /** The baselines in wave 1, the candidates in wave 2: the comparison is FLAGGED. */
  const split: WavePlan = {
    ...twoWaves,
    waves: [
      { ...twoWaves.waves[0]!, deployments: ["ppg=false#r0", "ppg=false#r1"], variants: ["ppg=false"], replicas: [0, 1] },
      { ...twoWaves.waves[1]!, deployments: ["ppg=true#r0", "ppg=true#r1"], variants: ["ppg=true"], replicas: [0, 1] },
    ],
  };
  /** Hosts that answer ping, except those of `broken` deployments (their connection is lost: cut-off cells a resume runs). */
  const connectExcept = (broken: string[]): Connect => async (h, o) => {
    if (broken.includes(h.deployment)) throw new Error("connection to client (127.0.0.1:1) lost at 2026-11-23T11:00:00.000Z (reset)");
    return connect(h, o);
  };

  it("brings the cells left up in the run's own waves, one after another, and keeps the comparisons' wave notes (FLAGGED stays flagged)", async () => {
    const runDir = tempDir("latlab-unit-waves-resume-");
    const first = await runExperiment({ source: "fake.ts", plan, target: fakeTarget(), runId: "first", runDir, progress: silentProgress, signal: new AbortController().signal, connect: connectExcept(["ppg=false#r1", "ppg=true#r1"]), waves: split });
    expect(first.status).toBe("partial");
    expect(first.waves?.plannedWaves).toEqual([["ppg=false#r0", "ppg=false#r1"], ["ppg=true#r0", "ppg=true#r1"]]);

    const target = fakeTarget({ host: (d, role) => endpoint(d, role) });
    const logs: string[] = [];
    const { results } = await resumeRun({ runDir, resumeRunId: "again", target, progress: { ...silentProgress, log: (m) => logs.push(m) }, signal: new AbortController().signal, connect: connectExcept([]), now: () => new Date("2026-11-23T12:00:00Z") });
    // Not everything at once: wave 1's deployment left, torn down, then wave 2's.
    expect(target.ups).toEqual([["ppg=false#r1"], ["ppg=true#r1"]]);
    expect(target.downs).toBe(2);
    expect(logs.join("\n")).toContain("in the run's own waves 1, 2 of 2 (one after another, as the run was sized: each torn down before the next)");
    expect(results.status).toBe("complete");
    const c = results.comparisons[0]!;
    expect(c.inference.waves).toMatchObject({ balanced: false, baselineElsewhere: true });
    expect(c.inference.note).toContain("ppg=true vs ppg=false: FLAGGED — the baseline ran only in wave 1, the candidate only in wave 2");
    expect(results.waves?.planned).toBe(2);
    expect(results.environment.facts["resume.1"]).toContain("in the run's own waves 1, 2, one after another");
  });

  it("a deployment results.json names no wave for (an older run stopped before that wave): refused, saying why, nothing brought up", () => {
    const older: WavesRecord = {
      limits: "--max-vcpus 8",
      reasons: [],
      planned: 2,
      runs: [{ wave: 1, deployments: ["ppg=false#r0", "ppg=true#r0"], variants: ["ppg=false", "ppg=true"], replicas: [0], targetRunId: "x-w1", startedAt: "", bringUpSeconds: 0, cellsSeconds: 0, teardownSeconds: 0, teardown: "ok", facts: {} }],
    };
    const sub = resumePlan(plan, plan.cells.filter((c) => c.replica === 1 || c.deployment === "ppg=true#r0"));
    expect(() => resumeWaves(sub, older, "/runs/x")).toThrow(ResumeError);
    expect(() => resumeWaves(sub, older, "/runs/x")).toThrow(
      /^cannot resume \/runs\/x in its waves: the run went in 2 waves \(sized against --max-vcpus 8\), but its results.json .* does not say which wave deployment\(s\) ppg=false#r1, ppg=true#r1 were planned in/,
    );
    // What it does know is kept: wave 1's deployment alone.
    const known = resumeWaves(resumePlan(plan, plan.cells.filter((c) => c.deployment === "ppg=true#r0")), older, "/runs/x");
    expect(known?.runWaves).toEqual([1]);
    expect(known?.plan.waves.map((w) => w.deployments)).toEqual([["ppg=true#r0"]]);
    // A run in one wave: no waves.
    expect(resumeWaves(sub, undefined, "/runs/x")).toBeUndefined();
  });
});
