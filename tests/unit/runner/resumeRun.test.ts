import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildPlan, defineExperiment } from "../../../src/index.ts";
import type { Plan } from "../../../src/plan/types.ts";
import type { Connect } from "../../../src/runner/connections.ts";
import { cellsToResume, resumePlan, resumeRun, RESUME_FOLDER } from "../../../src/runner/resumeRun.ts";
import { cellSlug } from "../../../src/runner/cellRunner.ts";
import { runExperiment } from "../../../src/runner/runExperiment.ts";
import { ResultsSchema } from "../../../src/results/schema.ts";
import { endpoint, fakeSsh } from "./fakeSsh.ts";
import { tempDirs } from "../../tempDirs.ts";
import { fakeTarget, silentProgress } from "./fakeTarget.ts";

const tempDir = tempDirs();
const plan: Plan = buildPlan(
  defineExperiment({
    name: "fake",
    description: "resume against fake hosts",
    axes: { ppg: [false, true] },
    hosts: { client: {}, server: {} },
    measure: [{ tool: "ping", params: { count: 3, interval: 0.1 } }],
  }),
);
const pingOut = readFileSync(join(import.meta.dirname, "../../fixtures/ping/normal.stdout"), "utf8");

/** Hosts that answer ping; those of `broken` deployments fail (by default as a lost connection: a cut-off cell). */
const connectExcept =
  (broken: string[], why = "connection to client (127.0.0.1:1) lost at 2026-11-23T11:00:00.000Z (reset)"): Connect =>
  async (h) => {
    if (broken.includes(h.deployment)) throw new Error(why);
    return fakeSsh(h.role, (cmd) => (/\bping\b.*-c/.test(cmd) ? { stdout: pingOut } : { stdout: "ping from iputils 20240117" })).ssh;
  };

describe("latlab resume", () => {
  it("runs only the cells not measured, on hosts brought up again, and makes results.json of every cell with comparisons over all", async () => {
    const runDir = tempDir("latlab-resume-");
    const first = await runExperiment({ source: "fake.ts", plan, target: fakeTarget({ host: (d, role, up) => endpoint(d, role, { actual: { boot: up } }) }), runId: "first", runDir, progress: silentProgress, signal: new AbortController().signal, connect: connectExcept(["ppg=true"]) });
    expect(first.status).toBe("partial");
    expect(first.comparisons).toEqual([]);
    expect(cellsToResume(plan, first).map((c) => c.id)).toEqual(plan.cells.filter((c) => c.variant === "ppg=true").map((c) => c.id));

    const target = fakeTarget({ host: (d, role, up) => endpoint(d, role, { actual: { boot: up } }) });
    const { results, resumedCells } = await resumeRun({ runDir, resumeRunId: "again", target, progress: silentProgress, signal: new AbortController().signal, connect: connectExcept([]), now: () => new Date("2026-11-23T12:00:00Z") });
    expect(resumedCells).toBe(1);
    // Only the deployment with cells left was brought up again.
    expect(target.ups).toEqual([["ppg=true"]]);
    expect(results.runId).toBe("first");
    expect(results.status).toBe("complete");
    expect(results.measurements.map((m) => [m.variant, m.status])).toEqual([["ppg=false", "ok"], ["ppg=true", "ok"]]);
    expect(results.measurements[0]).toEqual(first.measurements[0]); // the earlier cell as it was measured
    expect(results.comparisons.map((c) => [c.variant, c.baseline, c.inference.unit])).toEqual([["ppg=true", "ppg=false", "sample-blocks"]]);
    expect(results.environment.facts["resume.1"]).toMatch(/^2026-11-23T12:00:00\.000Z: 1 of 1 cell\(s\) not measured before were measured on hosts brought up again \(deployments ppg=true; a new draw of hosts/);
    const hosts = results.variants.find((v) => v.id === "ppg=true")!.hosts.map((h) => h.deployment);
    expect(hosts).toEqual(["ppg=true (before resume 1)", "ppg=true (before resume 1)", "ppg=true", "ppg=true"]);
    // On disk: the merged results, the resumed cell's samples where results.json says, no work folder.
    const onDisk = ResultsSchema.parse(JSON.parse(readFileSync(join(runDir, "results.json"), "utf8")));
    expect(onDisk.status).toBe("complete");
    const resumedCell = onDisk.measurements.find((m) => m.variant === "ppg=true")!;
    expect(readFileSync(join(runDir, resumedCell.samplesFile!), "utf8").trim().split("\n")).toHaveLength(resumedCell.summary!.count);
    expect(existsSync(join(runDir, RESUME_FOLDER))).toBe(false);
    expect(JSON.parse(readFileSync(join(runDir, "plan.json"), "utf8")).cells).toHaveLength(plan.cells.length);

    await expect(resumeRun({ runDir, resumeRunId: "third", target: fakeTarget({ host: (d, role, up) => endpoint(d, role, { actual: { boot: up } }) }), progress: silentProgress, signal: new AbortController().signal, connect: connectExcept([]) })).rejects.toThrow(
      /nothing to resume in .*: every one of its 2 cells was measured \(status complete\)/,
    );
  });

  it("does not run again a cell that failed for a reason of its own, unless asked (--retry-failed)", async () => {
    const runDir = tempDir("latlab-resume-");
    const first = await runExperiment({ source: "fake.ts", plan, target: fakeTarget({ host: (d, role, up) => endpoint(d, role, { actual: { boot: up } }) }), runId: "first", runDir, progress: silentProgress, signal: new AbortController().signal, connect: connectExcept(["ppg=true"], "ppg=true/client: host key does not match") });
    expect(cellsToResume(plan, first)).toEqual([]);
    await expect(resumeRun({ runDir, resumeRunId: "again", target: fakeTarget({ host: (d, role, up) => endpoint(d, role, { actual: { boot: up } }) }), progress: silentProgress, signal: new AbortController().signal, connect: connectExcept([]) })).rejects.toThrow(
      /every one of its 2 cells was measured or failed for a reason of its own \(1; --retry-failed runs them again\)/,
    );
    const { results } = await resumeRun({ runDir, resumeRunId: "again", target: fakeTarget({ host: (d, role, up) => endpoint(d, role, { actual: { boot: up } }) }), progress: silentProgress, signal: new AbortController().signal, connect: connectExcept([]), retryFailed: true });
    expect(results.status).toBe("complete");
  });

  it("a resume that is interrupted at once, or whose hosts do not come up, keeps what the run knew and says what happened", async () => {
    const runDir = tempDir("latlab-resume-");
    await runExperiment({ source: "fake.ts", plan, target: fakeTarget({ host: (d, role, up) => endpoint(d, role, { actual: { boot: up } }) }), runId: "first", runDir, progress: silentProgress, signal: new AbortController().signal, connect: connectExcept(["ppg=true"]) });
    const aborted = new AbortController();
    aborted.abort();
    const interrupted = await resumeRun({ runDir, resumeRunId: "again", target: fakeTarget({ host: (d, role, up) => endpoint(d, role, { actual: { boot: up } }) }), progress: silentProgress, signal: aborted.signal, connect: connectExcept([]) });
    const cell = interrupted.results.measurements.find((m) => m.variant === "ppg=true")!;
    expect(cell.error).toMatch(/connection to client .* lost/); // not replaced by "interrupted before this cell ran"
    expect(interrupted.results.status).toBe("interrupted");
    const failing = fakeTarget({ host: (d, role, up) => endpoint(d, role, { actual: { boot: up } }) });
    failing.up = async () => {
      throw new Error("local target: host d1-client: sshd exited");
    };
    const { results } = await resumeRun({ runDir, resumeRunId: "third", target: failing, progress: silentProgress, signal: new AbortController().signal, connect: connectExcept([]) });
    expect(results.error).toMatch(/^resume \d: local target: host d1-client: sshd exited/);
    expect(Object.entries(results.environment.facts).filter(([k]) => /^resume\.\d+$/.test(k)).at(-1)![1]).toMatch(/no hosts came up, nothing was measured: local target: host d1-client: sshd exited/);
    expect(results.variants.find((v) => v.id === "ppg=true")!.hosts.every((h) => !h.deployment.includes("before resume"))).toBe(true);
  });

  it("on the hosts the run left up (re-attached): one record per host, and results.json says they are the same hosts", async () => {
    const runDir = tempDir("latlab-resume-");
    await runExperiment({ source: "fake.ts", plan, target: fakeTarget({ host: (d, role, up) => endpoint(d, role, { actual: { boot: up } }) }), runId: "first", runDir, progress: silentProgress, signal: new AbortController().signal, connect: connectExcept(["ppg=true"]) });
    const { results } = await resumeRun({ runDir, resumeRunId: "again", target: fakeTarget({ host: (d, role, up) => endpoint(d, role, { actual: { boot: up } }) }), reattached: true, progress: silentProgress, signal: new AbortController().signal, connect: connectExcept([]) });
    expect(results.status).toBe("complete");
    expect(results.variants.find((v) => v.id === "ppg=true")!.hosts.map((h) => h.deployment)).toEqual(["ppg=true", "ppg=true"]);
    expect(results.environment.facts["resume.1"]).toMatch(/1 of 1 cell\(s\) not measured before were measured on the hosts the run left up, re-attached \(deployments ppg=true; the same hosts, not a new draw\)/);
  });

  it("a cell measured again on new hosts keeps its earlier raw folder beside the new one", async () => {
    const runDir = tempDir("latlab-resume-");
    await runExperiment({ source: "fake.ts", plan, target: fakeTarget({ host: (d, role, up) => endpoint(d, role, { actual: { boot: up } }) }), runId: "first", runDir, progress: silentProgress, signal: new AbortController().signal, connect: connectExcept(["ppg=true"]) });
    const cut = plan.cells.find((c) => c.variant === "ppg=true")!;
    // What the run collected of it before it was cut off (a detached client's copy, say).
    mkdirSync(join(runDir, "raw", cellSlug(cut.id)), { recursive: true });
    writeFileSync(join(runDir, "raw", cellSlug(cut.id), "probe.csv"), "100\n");
    await resumeRun({ runDir, resumeRunId: "again", target: fakeTarget({ host: (d, role, up) => endpoint(d, role, { actual: { boot: up } }) }), progress: silentProgress, signal: new AbortController().signal, connect: connectExcept([]) });
    expect(readFileSync(join(runDir, "raw", `${cellSlug(cut.id)}.before-resume-1`, "probe.csv"), "utf8")).toBe("100\n");
    expect(existsSync(join(runDir, "raw", cellSlug(cut.id), "stdout.txt"))).toBe(true);
  });

  it("a resume that died keeps the raw files of the cells it began (a detached client's copy among them), the run's earlier ones beside them", async () => {
    const runDir = tempDir("latlab-resume-");
    await runExperiment({ source: "fake.ts", plan, target: fakeTarget({ host: (d, role, up) => endpoint(d, role, { actual: { boot: up } }) }), runId: "first", runDir, progress: silentProgress, signal: new AbortController().signal, connect: connectExcept(["ppg=true"]) });
    const cut = cellSlug(plan.cells.find((c) => c.variant === "ppg=true")!.id);
    mkdirSync(join(runDir, "raw", cut), { recursive: true });
    writeFileSync(join(runDir, "raw", cut, "probe.csv"), "run\n");
    // The dead resume had begun the cell (killed before any cell finished: no results.json of its own).
    mkdirSync(join(runDir, RESUME_FOLDER, "raw", cut), { recursive: true });
    writeFileSync(join(runDir, RESUME_FOLDER, "raw", cut, "probe.csv"), "dead resume\n");
    const { results } = await resumeRun({ runDir, resumeRunId: "again", target: fakeTarget({ host: (d, role, up) => endpoint(d, role, { actual: { boot: up } }) }), progress: silentProgress, signal: new AbortController().signal, connect: connectExcept([]) });
    expect(readFileSync(join(runDir, "raw", `${cut}.before-resume-1`, "probe.csv"), "utf8")).toBe("run\n");
    expect(readFileSync(join(runDir, "raw", `${cut}.before-resume-2`, "probe.csv"), "utf8")).toBe("dead resume\n");
    expect(results.environment.facts["resume.1"]).toMatch(/a resume stopped before it finished; 0 cell\(s\) it measured are kept, and the raw files of the 1 cell\(s\) it began/);
    expect(results.environment.facts["resume.2"]).toMatch(/1 of 1 cell\(s\) not measured before were measured/);
  });

  it("a resume plan holds only the cells left and the deployments they need", () => {
    const left = plan.cells.filter((c) => c.variant === "ppg=true");
    const p = resumePlan(plan, left);
    expect(p.deployments.map((d) => d.id)).toEqual(["ppg=true"]);
    expect(p.estimate.hosts).toBe(2);
    expect(p.variants).toEqual(plan.variants);
  });

  it("says which file is missing or wrong", async () => {
    const runDir = tempDir("latlab-resume-");
    await expect(resumeRun({ runDir, resumeRunId: "x", target: fakeTarget({ host: (d, role, up) => endpoint(d, role, { actual: { boot: up } }) }), progress: silentProgress, signal: new AbortController().signal })).rejects.toThrow(/cannot resume .*: no plan\.json/);
  });
});
