/**
 * `latlab resume` after the runner is SIGKILLed mid-run (issue 12, point 7): the run's folder
 * keeps every finished cell (results.json, status running); resume refuses while the dead run's
 * hosts are still up, saying what to do; after `latlab cleanup` it runs the cells not measured on
 * hosts brought up again and makes one results.json of every cell.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { ResultsSchema } from "../../src/results/schema.ts";
import { runShort } from "../../src/targets/local/names.ts";
import { tempDirs } from "../tempDirs.ts";

const tempDir = tempDirs();
const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "bin/latlab.js");

describe("latlab resume (local target, real namespaces)", () => {
  it("a SIGKILLed run: refused while its hosts are up, then, after cleanup, finished on new hosts into one results.json", async () => {
    const records = tempDir("latlab-records-");
    const out = join(tempDir("latlab-resume-it-"), "run");
    const env = { ...process.env, CI: "true", LATLAB_LOCAL_RUNS: records };
    const child = spawn(process.execPath, [BIN, "run", "ppg-vs-zone", "--duration", "2", "--out", out, "--no-history"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    await new Promise<void>((resolveFirst, reject) => {
      child.stderr.on("data", (d: Buffer) => {
        stderr += d.toString();
        if (/\[2\/6\] ok /.test(stderr)) resolveFirst();
      });
      child.once("exit", (code) => reject(new Error(`run ended (${code}) before two cells were measured:\n${stderr}`)));
    });
    child.kill("SIGKILL");
    await new Promise((r) => child.once("close", r));
    const before = ResultsSchema.parse(JSON.parse(readFileSync(join(out, "results.json"), "utf8")));
    expect(before.status).toBe("running");
    const measuredBefore = before.measurements.filter((m) => m.status === "ok").map((m) => m.cell);
    // The kill may land between a cell's progress line and its results.json update: at least the first is there.
    expect(measuredBefore.length).toBeGreaterThanOrEqual(1);
    expect(measuredBefore.length).toBeLessThan(6);

    const latlab = (...args: string[]) => spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, env, encoding: "utf8" });
    // Whatever fails below, the killed run's hosts do not outlive the test.
    onTestFinished(() => void latlab("cleanup"));
    const refused = latlab("resume", out, "--no-history");
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(new RegExp(`run ${before.runId}'s hosts are still up \\(its runner, pid ${child.pid}, died\\): \`latlab cleanup\` removes them`));

    expect(latlab("cleanup").status).toBe(0);
    const resumed = latlab("resume", out, "--no-history");
    expect(resumed.status, resumed.stdout + resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/\(\d cell\(s\) resumed\)/);
    const after = ResultsSchema.parse(JSON.parse(readFileSync(join(out, "results.json"), "utf8")));
    expect(after.runId).toBe(before.runId);
    expect(after.status).toBe("complete");
    expect(after.measurements.map((m) => m.status)).toEqual(after.measurements.map(() => "ok"));
    expect(after.measurements).toHaveLength(6);
    // The cells measured before the kill are kept as they were.
    for (const cell of measuredBefore) expect(after.measurements.find((m) => m.cell === cell)).toEqual(before.measurements.find((m) => m.cell === cell));
    expect(after.comparisons.length).toBe(3);
    expect(after.environment.facts["resume.1"]).toMatch(/(\d) of \1 cell\(s\) not measured before were measured on hosts brought up again/);
    for (const m of after.measurements) expect(existsSync(join(out, m.samplesFile!)), m.cell).toBe(true);
    expect(existsSync(join(out, ".resume"))).toBe(false);
    // Nothing of either run is left.
    const short = runShort(before.runId);
    const resumeShort = runShort(/; run (\S+) on local/.exec(after.environment.facts["resume.1"]!)![1]!);
    for (const s of [short, resumeShort]) expect(spawnSync("ip", ["netns", "list"], { encoding: "utf8" }).stdout).not.toContain(`ll-${s}-`);
    expect(latlab("cleanup").stdout).toContain("nothing to clean up");
    expect(existsSync(join(records, `${short}.json`))).toBe(false);
    expect(latlab("resume", out).stdout).toMatch(/nothing to resume: every one of the 6 cells/);
  }, 900_000);
});
