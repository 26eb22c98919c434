/**
 * `--out` turned read-only mid-run (issue 23, fault 4), on a real read-only file system (a tmpfs
 * remounted ro; we are root) with the runner's fake hosts: the writes the folder refuses are said
 * with their real cause (EROFS, the path), not ENOENT; and once the folder is writable again,
 * `latlab resume` takes the cells measured and kept in the rescue folder instead of measuring them
 * again — here every cell, so nothing is measured and the run folder gets the final results.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildPlan, defineExperiment } from "../../src/index.ts";
import type { Plan } from "../../src/plan/types.ts";
import { RunFiles } from "../../src/results/runFiles.ts";
import { ResultsSchema, type Results } from "../../src/results/schema.ts";
import type { Connect } from "../../src/runner/connections.ts";
import { resumeRun } from "../../src/runner/resumeRun.ts";
import { runExperiment } from "../../src/runner/runExperiment.ts";
import { fakeSsh } from "../unit/runner/fakeSsh.ts";
import { fakeTarget, silentProgress } from "../unit/runner/fakeTarget.ts";
import { tempDirs } from "../tempDirs.ts";

const tempDir = tempDirs();
const mounts: string[] = [];
afterAll(() => {
  for (const m of mounts.splice(0)) spawnSync("umount", [m]);
});

/** Four cells: two variants, two measures. */
const plan: Plan = buildPlan(
  defineExperiment({
    name: "ro",
    description: "a results folder that turns read-only mid-run",
    axes: { ppg: [false, true] },
    hosts: { client: {}, server: {} },
    measure: [
      { tool: "ping", params: { count: 3, interval: 0.1 } },
      { tool: "ping", params: { count: 4, interval: 0.1 } },
    ],
  }),
);
const PING_OUT = readFileSync(join(import.meta.dirname, "../fixtures/ping/normal.stdout"), "utf8");

/** Hosts that answer ping; `beforePing(n)` runs before the n-th ping (1-based). */
const pinging = (beforePing: (n: number) => void): Connect => {
  let pings = 0;
  return async (h) =>
    fakeSsh(h.role, (cmd) => {
      if (!/\bping\b.*-c/.test(cmd)) return { stdout: "ping from iputils 20240117" };
      beforePing(++pings);
      return { stdout: PING_OUT };
    }).ssh;
};

const readResults = (file: string): Results => ResultsSchema.parse(JSON.parse(readFileSync(file, "utf8")));

describe("a results folder turned read-only mid-run (root: tmpfs remounted ro)", () => {
  it("says EROFS with the path; resume brings the rescue folder's cells back and measures none again", async () => {
    const disk = tempDir("latlab-ro-mnt-");
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=16m", "tmpfs", disk]);
    mounts.push(disk);
    const runDir = join(disk, "run");
    mkdirSync(runDir);
    const rescueRoot = tempDir("latlab-ro-rescue-");
    const logged: string[] = [];
    const files = new RunFiles(runDir, { runId: "ro", rescueRoots: [rescueRoot], warn: (m) => logged.push(m) });
    // Read-only from the second cell on: the first cell's files and checkpoint are in the folder.
    const connect = pinging((n) => {
      if (n === 2) execFileSync("mount", ["-o", "remount,ro", disk]);
    });
    const run = await runExperiment({ source: "ro.ts", plan, target: fakeTarget(), runId: "ro", runDir, progress: { ...silentProgress, log: (m) => logged.push(m) }, signal: new AbortController().signal, connect, files });
    expect(run.status).toBe("complete");
    const rescue = join(rescueRoot, "latlab-rescue-ro");
    const said = logged.find((m) => m.startsWith("cannot write"));
    // The real cause, naming the path: not "it does not exist (ENOENT)".
    expect(said).toMatch(new RegExp(`^cannot write ${runDir}/\\S+: the file system is read-only \\(EROFS\\); what cannot be written in ${runDir} is saved in ${rescue} instead$`));
    expect(logged.join("\n")).not.toContain("ENOENT");
    expect(files.resultsFile).toBe(join(rescue, "results.json"));
    // What the read-only folder kept: the first cell only, "running".
    expect(readResults(join(runDir, "results.json")).status).toBe("running");

    execFileSync("mount", ["-o", "remount,rw", disk]);
    const target = fakeTarget();
    const { results, resumedCells } = await resumeRun({ runDir, resumeRunId: "again", target, progress: silentProgress, signal: new AbortController().signal, connect: pinging(() => {}), rescueRoots: [rescueRoot] });
    // Nothing measured again: every cell was in the rescue folder.
    expect(target.ups).toEqual([]);
    expect(resumedCells).toBe(0);
    expect(results.status).toBe("complete");
    expect(results.measurements.map((m) => m.cell)).toEqual(run.measurements.map((m) => m.cell));
    expect(results.comparisons).toEqual(run.comparisons);
    const onDisk = readResults(join(runDir, "results.json"));
    expect(onDisk.status).toBe("complete");
    expect(onDisk.environment.facts["rescued"]).toMatch(new RegExp(`brought back from the rescue folder ${rescue}`));
    for (const m of onDisk.measurements) {
      expect(existsSync(join(runDir, m.samplesFile!)), m.cell).toBe(true);
      for (const raw of m.raw) expect(existsSync(join(runDir, raw)), raw).toBe(true);
    }
    // Back home: the rescue folder is gone, and a second resume has nothing to do.
    expect(existsSync(rescue)).toBe(false);
    await expect(resumeRun({ runDir, resumeRunId: "third", target: fakeTarget(), progress: silentProgress, signal: new AbortController().signal, connect: pinging(() => {}), rescueRoots: [rescueRoot] })).rejects.toThrow(/nothing to resume/);
  });
});
