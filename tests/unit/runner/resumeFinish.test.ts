/**
 * Issue 23, faults 1 and 7. A run killed in its teardown (every cell measured, results.json still
 * "running", no comparisons) is finished by `latlab resume`: nothing measured again, what it left
 * up torn down, status, comparisons and teardown written as the run's own end would. And after
 * any resume, results.json's timing is every attempt's — never missing, never the first one's alone.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildPlan, defineExperiment } from "../../../src/index.ts";
import type { Plan } from "../../../src/plan/types.ts";
import { timingLine } from "../../../src/report/wording.ts";
import { ResultsSchema, type Results } from "../../../src/results/schema.ts";
import type { Connect } from "../../../src/runner/connections.ts";
import { pendingWork, resumeRun } from "../../../src/runner/resumeRun.ts";
import { runExperiment } from "../../../src/runner/runExperiment.ts";
import type { Target } from "../../../src/targets/target.ts";
import { endpoint, fakeSsh } from "./fakeSsh.ts";
import { fakeTarget, silentProgress } from "./fakeTarget.ts";
import { tempDirs } from "../../tempDirs.ts";

const tempDir = tempDirs();
const plan: Plan = buildPlan(
  defineExperiment({
    name: "fake",
    description: "finishing a run on fake hosts",
    axes: { ppg: [false, true] },
    hosts: { client: {}, server: {} },
    measure: [{ tool: "ping", params: { count: 3, interval: 0.1 } }],
  }),
);
const pingOut = readFileSync(join(import.meta.dirname, "../../fixtures/ping/normal.stdout"), "utf8");
const readResults = (runDir: string): Results => ResultsSchema.parse(JSON.parse(readFileSync(join(runDir, "results.json"), "utf8")));

/** Hosts that answer ping (those of `broken` deployments lose their connection: cut-off cells); `beforePing(n)` runs before the n-th ping. */
const connectExcept =
  (broken: string[] = [], beforePing: (n: number) => void = () => {}): Connect => {
    let pings = 0;
    return async (h) => {
      if (broken.includes(h.deployment)) throw new Error("connection to client (127.0.0.1:1) lost at 2026-11-23T11:00:00.000Z (reset)");
      return fakeSsh(h.role, (cmd) => {
        if (!/\bping\b.*-c/.test(cmd)) return { stdout: "ping from iputils 20240117" };
        beforePing(++pings);
        return { stdout: pingOut };
      }).ssh;
    };
  };

/**
 * A run killed in its teardown, as its folder is left: every cell's files and the results.json of
 * its last checkpoint (status running, no comparisons), taken when its teardown began.
 */
async function killedInTeardown(runDir: string): Promise<Results> {
  let atTeardown: string | undefined;
  const target = fakeTarget();
  const down = target.down.bind(target);
  target.down = async () => {
    atTeardown = readFileSync(join(runDir, "results.json"), "utf8");
    return down();
  };
  await runExperiment({ source: "fake.ts", plan, target: target as Target, runId: "first", runDir, progress: silentProgress, signal: new AbortController().signal, connect: connectExcept() });
  writeFileSync(join(runDir, "results.json"), atTeardown!);
  return readResults(runDir);
}

describe("latlab resume of a run killed in its teardown (fault 1)", () => {
  it("on the hosts it left up: measures nothing, tears them down, writes status, comparisons, teardown and timing", async () => {
    const runDir = tempDir("latlab-finish-");
    const killed = await killedInTeardown(runDir);
    expect(killed.status).toBe("running");
    expect(killed.comparisons).toEqual([]);
    expect(killed.measurements.map((m) => m.status)).toEqual(["ok", "ok"]);
    expect(pendingWork(runDir).action).toBe("finish");

    const target = fakeTarget();
    const { results, resumedCells } = await resumeRun({ runDir, resumeRunId: "finisher", target, reattached: true, progress: silentProgress, signal: new AbortController().signal, now: () => new Date("2026-11-23T12:00:00Z") });
    expect(resumedCells).toBe(0);
    expect(target.ups).toEqual([]); // nothing brought up, nothing measured
    expect(target.downs).toBe(1); // what it left up is torn down
    expect(results.status).toBe("complete");
    expect(results.error).toBeUndefined();
    expect(results.measurements).toEqual(killed.measurements);
    expect(results.comparisons.map((c) => [c.variant, c.baseline])).toEqual([["ppg=true", "ppg=false"]]);
    expect(results.teardown.status).toBe("ok");
    expect(results.environment.facts["resume.1"]).toMatch(/^2026-11-23T12:00:00\.000Z: every cell had been measured, but the run stopped before its results were final .*finished without measuring anything: the hosts it left up torn down \(ok\)/);
    expect(readResults(runDir)).toEqual(results);
    // Final now: a second resume has nothing to do.
    expect(pendingWork(runDir).action).toBe("nothing");
    await expect(resumeRun({ runDir, resumeRunId: "again", target: fakeTarget(), progress: silentProgress, signal: new AbortController().signal })).rejects.toThrow(/nothing to resume in .*: every one of its 2 cells was measured \(status complete\)/);
  });

  it("nothing of it left up: finished without any host, the teardown said to have been checked; a failed run stays failed", async () => {
    const runDir = tempDir("latlab-finish-");
    await killedInTeardown(runDir);
    const { results } = await resumeRun({ runDir, resumeRunId: "finisher", target: null, progress: silentProgress, signal: new AbortController().signal });
    expect(results.status).toBe("complete");
    expect(results.teardown).toEqual({ status: "ok", errors: [], removed: [] });
    expect(results.environment.facts["resume.1"]).toMatch(/nothing of its hosts was left up \(checked before the resume\)/);

    // Every cell failed for a reason of its own, then killed in teardown: finished as failed, saying why.
    const failedDir = tempDir("latlab-finish-");
    const killed = await killedInTeardown(failedDir);
    const broken = { ...killed, measurements: killed.measurements.map((m) => ({ ...m, status: "failed" as const, error: "ping: unknown host" })) };
    writeFileSync(join(failedDir, "results.json"), JSON.stringify(broken));
    const failed = await resumeRun({ runDir: failedDir, resumeRunId: "finisher", target: null, progress: silentProgress, signal: new AbortController().signal });
    expect(failed.results.status).toBe("failed");
    expect(failed.results.error).toBe("no cell was measured; first failure: ping: unknown host");
  });
});

describe("results.json's timing after a resume (fault 7)", () => {
  it("a run that finished partial, then resumed: both attempts, summed", async () => {
    const runDir = tempDir("latlab-timing-");
    const first = await runExperiment({ source: "fake.ts", plan, target: fakeTarget({ host: (d, role) => endpoint(d, role) }), runId: "first", runDir, progress: silentProgress, signal: new AbortController().signal, connect: connectExcept(["ppg=true"]) });
    const { results } = await resumeRun({ runDir, resumeRunId: "again", target: fakeTarget(), progress: silentProgress, signal: new AbortController().signal, connect: connectExcept() });
    const t = results.timing!;
    expect(t.attempts!.map((a) => [a.attempt, a.runId, a.finished, a.cellsMeasured])).toEqual([
      ["run", "first", true, 1],
      ["resume 1", "again", true, 1],
    ]);
    expect(t.attempts![0]!.totalSeconds).toBe(first.timing!.totalSeconds);
    expect(t.totalSeconds).toBeCloseTo(t.attempts![0]!.totalSeconds + t.attempts![1]!.totalSeconds, 9);
    expect(t.measurementSeconds).toBeCloseTo(results.measurements.reduce((s, m) => s + m.timing!.measurementSeconds, 0), 9);
    expect(t.measurementSeconds).toBeGreaterThan(first.timing!.measurementSeconds);
    expect(readResults(runDir).timing).toEqual(t);
  });

  it("a run killed mid-way, then resumed: the killed attempt up to its last results.json, its cells' measuring time, and the resume's", async () => {
    const runDir = tempDir("latlab-timing-");
    let killedAt: string | undefined;
    // The kill: results.json as it stood when the second cell began (the first one measured).
    await runExperiment({ source: "fake.ts", plan, target: fakeTarget(), runId: "first", runDir, progress: silentProgress, signal: new AbortController().signal, connect: connectExcept([], (n) => {
      if (n === 2) killedAt = readFileSync(join(runDir, "results.json"), "utf8");
    }) });
    writeFileSync(join(runDir, "results.json"), killedAt!);
    const killed = readResults(runDir);
    expect(killed.timing).toBeUndefined();
    const { results } = await resumeRun({ runDir, resumeRunId: "again", target: fakeTarget(), progress: silentProgress, signal: new AbortController().signal, connect: connectExcept() });
    const t = results.timing!;
    const [run, resume] = t.attempts!;
    expect(run).toMatchObject({ attempt: "run", finished: false, cellsMeasured: 1, startedAt: killed.startedAt, endedAt: killed.finishedAt });
    expect(run!.measurementSeconds).toBeGreaterThan(0);
    expect(run!.bringUpSeconds).toBeUndefined();
    expect(resume).toMatchObject({ attempt: "resume 1", finished: true, cellsMeasured: 1 });
    expect(t.measurementSeconds).toBeCloseTo(results.measurements.reduce((s, m) => s + m.timing!.measurementSeconds, 0), 9);
    expect(t.totalSeconds).toBeCloseTo(run!.totalSeconds + resume!.totalSeconds, 9);
    expect(timingLine(results)).toMatch(/ \+ killed attempts \d+\.\d s.*; over 2 attempts: run \d+\.\d s \(killed: at least that, its parts not recorded\), 1 cell\(s\) measured; resume 1 \d+\.\d s, 1 cell\(s\) measured$/);
  });

  it("a run killed in its teardown, then finished: the finishing attempt's teardown counts", async () => {
    const runDir = tempDir("latlab-timing-");
    await killedInTeardown(runDir);
    const { results } = await resumeRun({ runDir, resumeRunId: "finisher", target: fakeTarget(), reattached: true, progress: silentProgress, signal: new AbortController().signal });
    expect(results.timing!.attempts!.map((a) => [a.attempt, a.finished, a.cellsMeasured])).toEqual([
      ["run", false, 2],
      ["resume 1", true, 0],
    ]);
    expect(results.timing!.measurementSeconds).toBeCloseTo(results.measurements.reduce((s, m) => s + m.timing!.measurementSeconds, 0), 9);
  });
});
