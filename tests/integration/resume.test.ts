/**
 * `latlab resume` after the runner is SIGKILLed mid-run (issue 12, point 7): the run's folder
 * keeps every finished cell (results.json, status running). With the hosts the run left up,
 * resume re-attaches to them: the detached tcp-echo clients it started kept measuring while no
 * runner was there, and are collected where it stopped. After `latlab cleanup` it runs the cells
 * not measured on hosts brought up again. Either way one results.json of every cell.
 */
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { ResultsSchema } from "../../src/results/schema.ts";
import { runShort } from "../../src/targets/local/network/names.ts";
import { tempDirs } from "../tempDirs.ts";

const tempDir = tempDirs();
const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "bin/latlab.js");

/**
 * Runs latlab with `args` and SIGKILLs it once its three detached clients run and a poll copied
 * some of their probes into `dir`/raw; gives the runner's pid and what it had copied, by file.
 */
async function killWhenCollecting(env: NodeJS.ProcessEnv, args: string[], dir: string): Promise<{ pid: number; copied: Map<string, string> }> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => void (stderr += d.toString()));
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  const raw = join(dir, "raw");
  for (;;) {
    if (await Promise.race([exited.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 200))])) throw new Error(`latlab ${args[0]} ended before it was killed:\n${stderr}`);
    const csvs = existsSync(raw) ? readdirSync(raw).flatMap((d) => readdirSync(join(raw, d)).filter((f) => f.endsWith(".csv")).map((f) => join(raw, d, f))) : [];
    if (csvs.length === 3 && csvs.every((f) => readFileSync(f, "utf8").split("\n").length > 3)) {
      child.kill("SIGKILL");
      const copied = new Map(csvs.map((f) => [f, readFileSync(f, "utf8")]));
      await new Promise((r) => child.once("close", r));
      return { pid: child.pid!, copied };
    }
  }
}

describe("latlab resume (local target, real namespaces)", () => {
  it("a SIGKILLed run whose hosts were cleaned up: finished on new hosts into one results.json", async () => {
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
    // The hosts it left are removed first: resume then brings up new ones (a new draw).
    const cleaned = latlab("cleanup");
    expect(cleaned.status).toBe(0);
    expect(cleaned.stdout).toContain(`run ${before.runId} (its runner, pid ${child.pid}, is gone`);
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

  it("a SIGKILLed run with detached tcp-echo clients: resume re-attaches to its hosts and collects every probe since the start, server and connection untouched", async () => {
    const records = tempDir("latlab-records-");
    const out = join(tempDir("latlab-reattach-it-"), "run");
    const env = { ...process.env, CI: "true", LATLAB_LOCAL_RUNS: records };
    const latlab = (...args: string[]) => spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, env, encoding: "utf8" });
    onTestFinished(() => void latlab("cleanup"));
    // Killed once each of the three clients runs detached and a first poll copied some of its probes.
    const { pid: runnerPid, copied: collectedBeforeKill } = await killWhenCollecting(env, ["run", "zone-region-baseline", "--duration", "20", "--out", out, "--no-history"], out);
    const killedAt = Date.now();
    const before = ResultsSchema.parse(JSON.parse(readFileSync(join(out, "results.json"), "utf8")));
    expect(before.status).toBe("running");
    expect(before.measurements).toEqual([]);
    // The hosts are recorded from the moment they were up, before any cell finished.
    expect(before.variants.flatMap((v) => v.hosts).length).toBeGreaterThan(0);
    const short = runShort(before.runId);
    expect(spawnSync("ip", ["netns", "list"], { encoding: "utf8" }).stdout).toContain(`ll-${short}-`);

    const resumed = latlab("resume", out, "--no-history");
    expect(resumed.status, resumed.stdout + resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(new RegExp(`re-attached to the \\d+ hosts run ${before.runId} left up \\(its runner, pid ${runnerPid}, died\\)`));
    expect(resumed.stderr).toMatch(/3 detached client\(s\) it started are collected where it stopped/);
    // The report is made again from the whole run.
    expect(resumed.stdout.trimEnd().split("\n").at(-1)).toBe(`report: ${join(out, "report.html")} (and report.md)`);
    const after = ResultsSchema.parse(JSON.parse(readFileSync(join(out, "results.json"), "utf8")));
    expect(after.status).toBe("complete");
    expect(after.measurements).toHaveLength(3);
    expect(after.environment.facts["resume.1"]).toMatch(/3 of 3 cell\(s\) not measured before were measured on the hosts the run left up, re-attached .*the same hosts, not a new draw.*3 detached client\(s\) the run had started were collected/);
    // One record per host: the same hosts, not a new draw next to the old.
    expect(JSON.stringify(after.variants)).not.toContain("before resume");
    for (const m of after.measurements) {
      expect(m.status, m.error).toBe("ok");
      expect(m.warnings.join("\n")).toMatch(/re-attached by latlab resume .* to the client started at/);
      // The connection to the echo server the dead run started was never broken: the server was kept.
      expect(m.reported?.breaks, m.cell).toBe(0);
      // Every probe of the 20 s, those made while no runner was there included.
      expect(Number(m.reported?.probes), m.cell).toBeGreaterThanOrEqual(18);
      const csv = readFileSync(join(out, m.raw.find((r) => r.endsWith(".csv"))!), "utf8");
      const earlier = [...collectedBeforeKill].find(([f]) => f.includes(`/raw/${m.raw[0]!.split("/")[1]}/`))![1];
      // What the dead runner collected is the start of what the cell kept.
      expect(csv.startsWith(earlier.slice(0, earlier.lastIndexOf("\n") + 1))).toBe(true);
      expect(csv.length).toBeGreaterThan(earlier.length);
      expect(Date.parse(m.startedAt)).toBeLessThan(killedAt);
    }
    // Torn down by the resume: nothing of the run is left, its record is gone.
    expect(spawnSync("ip", ["netns", "list"], { encoding: "utf8" }).stdout).not.toContain(`ll-${short}-`);
    expect(existsSync(join(records, `${short}.json`))).toBe(false);
    expect(latlab("cleanup").stdout).toContain("nothing to clean up");
  }, 900_000);

  it("a run SIGKILLed in the middle of its teardown (a namespace gone, the rest not): one resume removes what is left of it, only its own, and finishes it", async () => {
    const records = tempDir("latlab-records-");
    const out = join(tempDir("latlab-halftorn-it-"), "run");
    const env = { ...process.env, CI: "true", LATLAB_LOCAL_RUNS: records };
    const latlab = (...args: string[]) => spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, env, encoding: "utf8" });
    onTestFinished(() => void latlab("cleanup"));
    // The run's `ip netns del` goes through a wrapper: the first of a host's namespace (ll-<short>-0-…, not preflight's or the probe's) deletes it, writes
    // its pid to `mark` and waits there — the teardown stands half done — until the test kills both.
    const bin = tempDir("latlab-ipwrap-");
    const mark = join(bin, "mark");
    const realIp = spawnSync("sh", ["-c", "command -v ip"], { encoding: "utf8" }).stdout.trim();
    writeFileSync(
      join(bin, "ip"),
      `#!/bin/sh\ncase "$1 $2 $3" in "netns del ll-"*"-0-"*) held=1 ;; esac\nif [ -n "$held" ] && [ ! -e ${mark} ]; then ${realIp} "$@"; echo $$ > ${mark}; i=0; while [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; exit 0; fi\nexec ${realIp} "$@"\n`,
    );
    chmodSync(join(bin, "ip"), 0o755);
    const child = spawn(process.execPath, [BIN, "run", "tests/fixtures/experiments/ping-repetitions.ts", "--duration", "1", "--out", out, "--no-history"], {
      cwd: ROOT,
      env: { ...env, PATH: `${bin}:${process.env.PATH ?? ""}` },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => void (stderr += d.toString()));
    const closed = new Promise((r) => child.once("close", r));
    let ended = false;
    void closed.then(() => (ended = true));
    while (!existsSync(mark) || !readFileSync(mark, "utf8").trim()) {
      if (ended) throw new Error(`the run ended before its teardown was held:\n${stderr}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill("SIGKILL");
    process.kill(Number(readFileSync(mark, "utf8")), "SIGKILL");
    await closed;
    const before = ResultsSchema.parse(JSON.parse(readFileSync(join(out, "results.json"), "utf8")));
    expect(before.status).toBe("running");
    expect(before.measurements.map((m) => m.status)).toEqual(["ok", "ok", "ok"]);
    const short = runShort(before.runId);
    const namespaces = () => spawnSync("ip", ["netns", "list"], { encoding: "utf8" }).stdout.split("\n").filter((l) => l.startsWith(`ll-${short}-`));
    // Half torn down: some of its namespaces are gone, some are left.
    expect(namespaces().length).toBeGreaterThan(0);

    const resumed = latlab("resume", out, "--no-history");
    expect(resumed.status, resumed.stdout + resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(/cannot be re-attached to.*every cell was measured, so nothing is needed of them: what is left of run \S+'s hosts is removed \(only its own\)/);
    expect(resumed.stderr).toMatch(new RegExp(`removed namespace ll-${short}-`));
    expect(resumed.stdout).toMatch(/\(finished: no cell measured again\)/);
    const after = ResultsSchema.parse(JSON.parse(readFileSync(join(out, "results.json"), "utf8")));
    expect(after.status).toBe("complete");
    expect(after.measurements).toEqual(before.measurements);
    expect(after.error).toBeUndefined();
    expect(after.teardown.status).toBe("ok");
    expect(after.teardown.removed).toEqual(expect.arrayContaining([expect.stringMatching(new RegExp(`^namespace ll-${short}-`))]));
    expect(after.environment.facts["resume.1"]).toMatch(/what was left of its hosts \(its teardown stopped half-way, they could not be re-attached to\) removed/);
    // Nothing of the run is left, its record is gone; a second resume has nothing to do.
    expect(namespaces()).toEqual([]);
    expect(existsSync(join(records, `${short}.json`))).toBe(false);
    expect(latlab("cleanup").stdout).toContain("nothing to clean up");
    expect(latlab("resume", out).stdout).toMatch(/nothing to resume/);
  }, 300_000);

  it("a resume killed in turn: the next resume re-attaches to the hosts that resume brought up and collects the clients it started, the first run's copies kept beside", async () => {
    const records = tempDir("latlab-records-");
    const out = join(tempDir("latlab-reresume-it-"), "run");
    const env = { ...process.env, CI: "true", LATLAB_LOCAL_RUNS: records };
    const latlab = (...args: string[]) => spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, env, encoding: "utf8" });
    onTestFinished(() => void latlab("cleanup"));
    await killWhenCollecting(env, ["run", "zone-region-baseline", "--duration", "30", "--out", out, "--no-history"], out);
    const firstCopies = readdirSync(join(out, "raw")).map((d) => [d, readFileSync(join(out, "raw", d, readdirSync(join(out, "raw", d)).find((f) => f.endsWith(".csv"))!), "utf8")] as const);
    expect(latlab("cleanup").status).toBe(0);
    // The first resume brings up new hosts, starts the clients again, and is killed too.
    const { pid: resumePid } = await killWhenCollecting(env, ["resume", out, "--no-history"], join(out, ".resume"));
    const resumeStates = readdirSync(join(out, ".resume", "raw")).map((d) => JSON.parse(readFileSync(join(out, ".resume", "raw", d, "detached.json"), "utf8")) as { cell: string; startedAt: string });

    const second = latlab("resume", out, "--no-history");
    expect(second.status, second.stdout + second.stderr).toBe(0);
    expect(second.stderr).toMatch(new RegExp(`re-attached to the \\d+ hosts run \\S+ left up \\(its runner, pid ${resumePid}, died\\)`));
    const after = ResultsSchema.parse(JSON.parse(readFileSync(join(out, "results.json"), "utf8")));
    expect(after.status).toBe("complete");
    expect(after.environment.facts["resume.1"]).toMatch(/a resume \(run \S+\) stopped before it finished; 0 cell\(s\) it measured are kept, and the raw files of the 3 cell\(s\) it began/);
    expect(after.environment.facts["resume.2"]).toMatch(/on the hosts the run left up, re-attached .*3 detached client\(s\) the run had started were collected/);
    for (const m of after.measurements) {
      expect(m.status, m.error).toBe("ok");
      // The clients the first resume started: collected from their start, their connection never broken.
      expect(m.startedAt).toBe(resumeStates.find((s) => s.cell === m.cell)!.startedAt);
      expect(m.reported?.breaks, m.cell).toBe(0);
      expect(Number(m.reported?.probes), m.cell).toBeGreaterThanOrEqual(27);
    }
    // What the first run collected is kept beside, as it was.
    for (const [dir, csv] of firstCopies) expect(readFileSync(join(out, "raw", `${dir}.before-resume-1`, readdirSync(join(out, "raw", `${dir}.before-resume-1`)).find((f) => f.endsWith(".csv"))!), "utf8")).toBe(csv);
    expect(existsSync(join(out, ".resume"))).toBe(false);
    expect(latlab("cleanup").stdout).toContain("nothing to clean up");
  }, 900_000);
});
