/**
 * Issue 23, fault 1: a run killed in the middle of its teardown (every cell measured, part of its
 * hosts removed already) cannot be re-attached to; `latlab resume` finishes it in one step: what
 * is left of the run is removed through its target (TargetFactory.cleanupRun) and reported as the
 * teardown — a removal that fails makes the teardown failed (exit 1), naming what is left.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runExitCode } from "../../../src/cli/output/runOutcome.ts";
import { buildPlan, defineExperiment } from "../../../src/index.ts";
import type { Plan } from "../../../src/plan/types.ts";
import { ResultsSchema, type Results, type TeardownReport } from "../../../src/results/schema.ts";
import { hostsLeftBy, pendingWork, resumePlan, resumeRun } from "../../../src/runner/resumeRun.ts";
import { runExperiment } from "../../../src/runner/runExperiment.ts";
import type { TargetFactory, TargetOptions } from "../../../src/targets/registry.ts";
import type { Target } from "../../../src/targets/target.ts";
import { fakeSsh } from "./fakeSsh.ts";
import { fakeTarget, silentProgress } from "./fakeTarget.ts";
import { tempDirs } from "../../tempDirs.ts";

const tempDir = tempDirs();
const plan: Plan = buildPlan(
  defineExperiment({
    name: "fake",
    description: "finishing a run half torn down",
    axes: { ppg: [false, true] },
    hosts: { client: {}, server: {} },
    measure: [{ tool: "ping", params: { count: 3, interval: 0.1 } }],
  }),
);
const pingOut = readFileSync(join(import.meta.dirname, "../../fixtures/ping/normal.stdout"), "utf8");
const readResults = (runDir: string): Results => ResultsSchema.parse(JSON.parse(readFileSync(join(runDir, "results.json"), "utf8")));

/** The run's folder as a kill in its teardown leaves it: every cell's files, results.json of its last checkpoint (status running). */
async function killedInTeardown(runDir: string): Promise<void> {
  let atTeardown: string | undefined;
  const target = fakeTarget();
  target.down = async () => {
    atTeardown = readFileSync(join(runDir, "results.json"), "utf8");
    return { status: "ok", errors: [], removed: [] };
  };
  const connect = async (h: { role: string }) => fakeSsh(h.role, (cmd) => ({ stdout: /\bping\b.*-c/.test(cmd) ? pingOut : "ping from iputils 20240117" })).ssh;
  await runExperiment({ source: "fake.ts", plan, target: target as Target, runId: "first", runDir, progress: silentProgress, signal: new AbortController().signal, connect });
  writeFileSync(join(runDir, "results.json"), atTeardown!);
}

const HALF_GONE = "run first's hosts are still up (run first, runner pid 4242, died; 3 items) but cannot be re-attached to: local target: run first's hosts are not all there any more (namespaces gone: ll-abc123-0-server). `latlab cleanup` removes them — what a detached tool (tcp-echo) was collecting on them goes with them — then resume brings up new hosts.";

/** A target whose re-attaching fails as the local target's does for hosts half torn down; records what cleanupRun was asked. */
function halfTornFactory(cleanup: TeardownReport | undefined) {
  const asked: [string, string][] = [];
  const factory: Pick<TargetFactory, "reattach" | "cleanupRun"> = {
    async reattach() {
      throw new Error(HALF_GONE);
    },
    ...(cleanup
      ? {
          async cleanupRun(runId: string, runDir: string, o: { log: (m: string) => void }) {
            asked.push([runId, runDir]);
            for (const r of cleanup.removed) o.log(`removed ${r}`);
            return cleanup;
          },
        }
      : {}),
  };
  return { factory, asked };
}

const options = (logged: string[]): TargetOptions => ({ binaries: [], install: false, log: (m) => logged.push(m), source: "fake.ts", resultsRoot: "results" });

async function finish(runDir: string, cleanup: TeardownReport | undefined, logged: string[] = []) {
  const work = pendingWork(runDir);
  expect(work.action).toBe("finish");
  const { factory, asked } = halfTornFactory(cleanup);
  const left = await hostsLeftBy(factory, { runId: "first", runDir, ref: runDir, action: work.action }, resumePlan(work.plan, work.cells), options(logged));
  expect(left.reattached).toBeNull();
  const outcome = await resumeRun({ runDir, resumeRunId: "finisher", target: null, progress: { ...silentProgress, log: (m) => logged.push(m) }, signal: new AbortController().signal, ...(left.removeLeftovers ? { removeLeftovers: left.removeLeftovers } : {}) });
  return { ...outcome, asked };
}

describe("latlab resume of a run killed in the middle of its teardown (fault 1)", () => {
  it("removes what is left of the run (only through its target's cleanupRun, for that run), reports each item, and finishes it: exit 0", async () => {
    const runDir = tempDir("latlab-half-");
    await killedInTeardown(runDir);
    const removed = ["process 4243 (sshd) in ll-abc123-0-client", "namespace ll-abc123-0-client", "directory /tmp/latlab-abc123-x"];
    const logged: string[] = [];
    const { results, asked, resumedCells } = await finish(runDir, { status: "ok", errors: [], removed }, logged);
    expect(asked).toEqual([["first", runDir]]);
    expect(resumedCells).toBe(0);
    expect(results.status).toBe("complete");
    expect(results.comparisons.map((c) => [c.variant, c.baseline])).toEqual([["ppg=true", "ppg=false"]]);
    expect(results.teardown).toEqual({ status: "ok", errors: [], removed });
    expect(results.environment.facts["resume.1"]).toMatch(/what was left of its hosts \(its teardown stopped half-way, they could not be re-attached to\) removed \(3 item\(s\), listed in teardown\.removed\)/);
    expect(logged).toEqual(
      expect.arrayContaining([
        "run first's hosts are still up (run first, runner pid 4242, died; 3 items) but cannot be re-attached to: local target: run first's hosts are not all there any more (namespaces gone: ll-abc123-0-server); every cell was measured, so nothing is needed of them: what is left of run first's hosts is removed (only its own)",
        ...removed.map((r) => `removed ${r}`),
      ]),
    );
    expect(runExitCode(results)).toBe(0);
    expect(readResults(runDir)).toEqual(results);
    expect(pendingWork(runDir).action).toBe("nothing");
  });

  it("a removal that fails: teardown failed naming what is left, exit 1 — the run's status is still its cells'", async () => {
    const runDir = tempDir("latlab-half-");
    await killedInTeardown(runDir);
    const errors = ["`ip netns del ll-abc123-0-client`: Device or resource busy", "still left: namespace ll-abc123-0-client (`latlab cleanup` tries again)"];
    const { results } = await finish(runDir, { status: "failed", errors, removed: ["directory /tmp/latlab-abc123-x"] });
    expect(results.status).toBe("complete");
    expect(results.teardown).toEqual({ status: "failed", errors, removed: ["directory /tmp/latlab-abc123-x"] });
    expect(results.environment.facts["resume.1"]).toMatch(/what was left of its hosts \(its teardown stopped half-way\) could not all be removed \(1 item\(s\) removed; see teardown\.errors\)/);
    expect(runExitCode(results)).toBe(1);
  });

  it("a target that cannot remove one run's leftovers (no cleanupRun): the clear message of what to run, nothing written", async () => {
    const runDir = tempDir("latlab-half-");
    await killedInTeardown(runDir);
    const before = readFileSync(join(runDir, "results.json"), "utf8");
    await expect(finish(runDir, undefined)).rejects.toThrow(/^cannot finish run first yet \(every cell was measured, .*`latlab cleanup` removes them.*\(after that, `latlab resume .*` finishes the run: nothing is measured again\)$/s);
    expect(readFileSync(join(runDir, "results.json"), "utf8")).toBe(before);
  });

  it("cells still to measure: hosts that cannot be re-attached to are never removed behind the user's back (the target's error stands)", async () => {
    const { factory, asked } = halfTornFactory({ status: "ok", errors: [], removed: [] });
    await expect(hostsLeftBy(factory, { runId: "first", runDir: "/r", ref: "/r", action: "measure" }, plan, options([]))).rejects.toThrow(HALF_GONE);
    expect(asked).toEqual([]);
  });

  it("hosts whole: re-attached, nothing removed; none left: whatever the run still holds (a stale record) goes through cleanupRun", async () => {
    const target = fakeTarget();
    let cleanups = 0;
    const cleanupRun = async () => (cleanups++, { status: "ok" as const, errors: [], removed: [] });
    const whole = await hostsLeftBy({ reattach: async () => target, cleanupRun }, { runId: "first", runDir: "/r", ref: "/r", action: "finish" }, plan, options([]));
    expect(whole).toEqual({ reattached: target });
    const none = await hostsLeftBy({ reattach: async () => null, cleanupRun }, { runId: "first", runDir: "/r", ref: "/r", action: "finish" }, plan, options([]));
    expect(none.reattached).toBeNull();
    await none.removeLeftovers!();
    expect(cleanups).toBe(1);
  });
});
