/**
 * `latlab cleanup` after the runner is SIGKILLed mid-run (issue 12's first fault): the run left
 * its namespaces, root veths, sshd's, tool server and a temp folder holding private keys, and
 * cleanup — never touching the run while it lived — removes each of them, listing it.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { runShort } from "../../src/targets/local/network/names.ts";
import { tempDirs } from "../tempDirs.ts";

const tempDir = tempDirs();
const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "bin/latlab.js");

/** What of run `short` exists on the machine. */
function traces(short: string): string[] {
  const ns = spawnSync("ip", ["netns", "list"], { encoding: "utf8" }).stdout.split("\n").filter((l) => l.startsWith(`ll-${short}-`)).map((l) => `namespace ${l.split(" ")[0]}`);
  const links = spawnSync("ip", ["-o", "link", "show"], { encoding: "utf8" }).stdout.split("\n").filter((l) => l.includes(`: ll${short}-m`)).map((l) => `link ${l.split(": ")[1]!.split("@")[0]}`);
  const dirs = readdirSync(tmpdir()).filter((d) => d.startsWith(`latlab-${short}-`)).map((d) => `directory ${join(tmpdir(), d)}`);
  const procs = spawnSync("ps", ["-eo", "pid,stat,args"], { encoding: "utf8" }).stdout.split("\n").filter((l) => l.includes(`latlab-${short}-`) && !/^\s*\d+\s+Z/.test(l)).map((l) => `process ${l.trim()}`);
  return [...ns, ...links, ...dirs, ...procs];
}

describe("latlab cleanup (local target, real namespaces)", () => {
  it("a run SIGKILLed mid-run: left alone while alive; afterwards every namespace, link, process and key folder it left is removed and listed", async () => {
    const records = tempDir("latlab-records-");
    const out = tempDir("latlab-cleanup-run-");
    const env = { ...process.env, CI: "true", LATLAB_LOCAL_RUNS: records };
    const child = spawn(process.execPath, [BIN, "run", "ppg-vs-zone", "--duration", "30", "--out", out, "--no-history"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    await new Promise<void>((resolveUp, reject) => {
      child.stderr.on("data", (d: Buffer) => {
        stderr += d.toString();
        // Hosts up and the first cell running: the moment the SIGKILL hit.
        if (/sockperf/.test(stderr) && stderr.includes("shaping:")) resolveUp();
      });
      child.once("exit", (code) => reject(new Error(`run ended (${code}) before its hosts were up:\n${stderr}`)));
    });
    const runId = /run (\d{8}-\d{6}-[0-9a-f]{4})/.exec(stderr)![1]!;
    const short = runShort(runId);
    const cleanup = (...args: string[]) => spawnSync(process.execPath, [BIN, "cleanup", ...args], { cwd: ROOT, env, encoding: "utf8" });
    // Whatever fails below, the killed run's hosts do not outlive the test.
    onTestFinished(() => {
      child.kill("SIGKILL");
      cleanup();
    });

    // Alive: left alone.
    const during = cleanup();
    expect(during.status, during.stderr).toBe(0);
    expect(during.stdout).toContain(`live: run ${runId} (pid ${child.pid}`);
    expect(traces(short).filter((t) => t.startsWith("namespace")).length).toBeGreaterThan(0);

    child.kill("SIGKILL");
    await new Promise((r) => child.once("close", r));
    const left = traces(short);
    expect(left.filter((t) => t.startsWith("namespace")).length).toBeGreaterThanOrEqual(2);
    expect(left.some((t) => t.startsWith("link"))).toBe(true);
    expect(left.some((t) => t.startsWith("directory"))).toBe(true);
    expect(left.some((t) => /sshd/.test(t))).toBe(true);

    const dry = cleanup("--dry-run");
    expect(dry.stdout).toMatch(new RegExp(`run ${runId} \\(its runner, pid ${child.pid}, is gone; results in ${out}\\): would remove:`));
    expect(traces(short)).toEqual(left);

    const done = cleanup();
    expect(done.status, done.stdout + done.stderr).toBe(0);
    for (const t of left.filter((l) => !l.startsWith("process"))) expect(done.stdout).toContain(t);
    expect(done.stdout).toMatch(/process \d+ \(sshd\) in ll-/);
    expect(traces(short)).toEqual([]);
    expect(existsSync(join(records, `${short}.json`))).toBe(false);
    expect(cleanup().stdout).toContain("nothing to clean up");
  }, 600_000);
});
