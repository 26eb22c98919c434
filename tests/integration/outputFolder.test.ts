/**
 * `latlab run --out` under the faults issue 12 found by fault injection (local target, real
 * namespaces; run under `flock /tmp/latlab-ns.lock`): two runs given one folder, a folder that is
 * not empty, a path that cannot hold files (/proc, a read-only file system), and a results folder
 * on a 64 KiB tmpfs that fills up mid-run.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LOCK_FILE } from "../../src/results/outputFolder.ts";
import { MANIFEST_FILE, readManifest } from "../../src/results/runManifest.ts";
import { ResultsSchema, type Results } from "../../src/results/schema.ts";
import { tempDirs } from "../tempDirs.ts";
import { leftovers } from "./leftovers.ts";

const tempDir = tempDirs();
const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "bin/latlab.js");

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  pid: number;
}

/**
 * `latlab run … --no-history` as a user runs it. A run still going after `killAfterMs` is killed
 * (SIGKILL: a run stuck in a loop ignores the others) so that a hang fails the test instead of
 * stalling it; no test asserts how fast anything was.
 */
function latlab(args: string[], options: { onStderr?: (text: string) => void; killAfterMs?: number } = {}): { pid: number; done: Promise<Exit> } {
  const child = spawn(process.execPath, [BIN, "run", ...args, "--no-history"], { cwd: ROOT, env: { ...process.env, CI: "true" } });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
    options.onStderr?.(stderr);
  });
  const killer = setTimeout(() => child.kill("SIGKILL"), options.killAfterMs ?? 300_000);
  const done = new Promise<Exit>((r) =>
    child.on("close", (code, signal) => {
      clearTimeout(killer);
      r({ code, signal, stdout, stderr, pid: child.pid! });
    }),
  );
  return { pid: child.pid!, done };
}


const readResults = (file: string): Results => ResultsSchema.parse(JSON.parse(readFileSync(file, "utf8")));
const runIdOf = (stderr: string) => /; run (\d{8}-\d{6}-[0-9a-f]{4})/.exec(stderr)?.[1];
const tree = (dir: string) => (readdirSync(dir, { recursive: true }) as string[]).sort();

/** tmpfs mounts made here (we are root), unmounted when the file is done; rescue folders likewise. */
const mounts: string[] = [];
const rescues: string[] = [];
afterAll(() => {
  for (const m of mounts.splice(0)) spawnSync("umount", [m]);
  for (const r of rescues.splice(0)) rmSync(r, { recursive: true, force: true });
});
function tmpfs(options: string): string {
  const dir = tempDir("latlab-out-mnt-");
  execFileSync("mount", ["-t", "tmpfs", "-o", options, "tmpfs", dir]);
  mounts.push(dir);
  return dir;
}

describe("latlab run --out: one run per folder", () => {
  it("a second run on a folder in use is refused at once, naming the folder and the first run's pid; the first run's results stay whole", async () => {
    const out = tempDir("latlab-out-");
    let started!: () => void;
    const up = new Promise<void>((r) => (started = r));
    const first = latlab(["ppg-vs-zone", "--duration", "2", "--out", out], { onStderr: (t) => t.includes("bringing up") && started() });
    await Promise.race([up, first.done]);

    const second = await latlab(["ppg-vs-zone", "--duration", "1", "--out", out]).done;
    expect(second.code, second.stderr).toBe(1);
    expect(second.stderr).toMatch(new RegExp(`${out} is in use by another latlab run \\(run \\d{8}-\\d{6}-[0-9a-f]{4}, pid ${first.pid} on this host, since `));
    expect(second.stderr).not.toContain("bringing up");

    const run = await first.done;
    expect(run.code, run.stderr).toBe(0);
    const results = readResults(join(out, "results.json"));
    expect(results.runId).toBe(runIdOf(run.stderr));
    expect(results.status).toBe("complete");
    for (const m of results.measurements) {
      expect(m.status).toBe("ok");
      if (m.samplesFile) expect(readFileSync(join(out, m.samplesFile), "utf8").trim().split("\n")).toHaveLength(m.summary!.count);
    }
    // Only the first run's files: its raw/ folders are its cells', and its lock is gone.
    expect(readdirSync(join(out, "raw")).length).toBe(results.measurements.length);
    expect(existsSync(join(out, LOCK_FILE))).toBe(false);
    expect(leftovers(undefined, { tempFolders: false })).toEqual([]);
  }, 600_000);
});

describe("latlab run --out: a folder that is not empty", () => {
  it("is refused without --force, changing nothing; with --force what latlab recorded writing is removed, the others kept, and it says so", async () => {
    const out = tempDir("latlab-out-");
    writeFileSync(join(out, "results.json"), JSON.stringify({ runId: "20260101-000000-dead", status: "complete" }));
    mkdirSync(join(out, "raw", "old-cell"), { recursive: true });
    writeFileSync(join(out, "raw", "old-cell", "stdout.txt"), "stale");
    writeFileSync(join(out, "notes.txt"), "mine");
    // latlab's record of what it wrote there (a run since issue 23 leaves one): --force removes only that.
    writeFileSync(join(out, MANIFEST_FILE), JSON.stringify({ format: 1, runId: "20260101-000000-dead", written: [{ name: "raw", kind: "folder" }, { name: "results.json", kind: "file" }] }));
    const before = tree(out);

    const refused = await latlab(["ppg-vs-zone", "--duration", "1", "--out", out]).done;
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toContain(`${out} is not empty (notes.txt, raw, results.json) — it holds the results of run 20260101-000000-dead (status complete)`);
    expect(refused.stderr).toContain("add --force, which removes only what latlab recorded writing there (raw/, results.json) and keeps everything else");
    expect(refused.stderr).not.toContain("bringing up");
    expect(tree(out)).toEqual(before);

    const forced = await latlab(["ppg-vs-zone", "--duration", "1", "--out", out, "--force"]).done;
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stderr).toContain(`--force: removed what latlab had written in ${out}: raw/, results.json`);
    expect(forced.stderr).toContain(`--force: kept what latlab did not write in ${out}: notes.txt`);
    expect(readFileSync(join(out, "notes.txt"), "utf8")).toBe("mine");
    expect(existsSync(join(out, "raw", "old-cell"))).toBe(false);
    const results = readResults(join(out, "results.json"));
    expect(results.runId).toBe(runIdOf(forced.stderr));
    expect(results.status).toBe("complete");
    // The new record: this run's files, so that the next --force removes them (and only them).
    expect(readManifest(out).manifest).toMatchObject({ runId: results.runId });
    expect(readManifest(out).manifest?.written.map((e) => e.name)).toEqual(expect.arrayContaining(["plan.json", "raw", "results.json", "samples"]));
    expect(leftovers(undefined, { tempFolders: false })).toEqual([]);
  }, 600_000);
});

describe("latlab run --out: a path that cannot hold files fails at once, before any host is brought up", () => {
  it("/proc/x: says why and exits 1 (no endless mkdir)", async () => {
    const run = await latlab(["ppg-vs-zone", "--duration", "1", "--out", "/proc/x"], { killAfterMs: 120_000 }).done;
    expect(run.signal, "still running after 2 minutes: killed").toBeNull();
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toContain("latlab: cannot use /proc/x as the results folder: /proc is on a pseudo-filesystem (proc: the kernel's view of processes), which cannot hold files; choose a folder on a disk");
    expect(run.stderr).not.toContain("bringing up");
    expect(leftovers(undefined, { tempFolders: false })).toEqual([]);
  }, 300_000);

  it("a read-only file system: EROFS found on the nearest folder that exists, not ENOENT", async () => {
    const ro = tmpfs("ro,size=64k");
    const out = join(ro, "a", "run");
    const run = await latlab(["ppg-vs-zone", "--duration", "1", "--out", out], { killAfterMs: 120_000 }).done;
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toContain(`latlab: cannot use ${out} as the results folder: ${ro} is on a read-only file system`);
    expect(run.stderr).not.toContain("bringing up");
  }, 300_000);
});

describe("latlab run --out on a file system that fills up (a 64 KiB tmpfs)", () => {
  it("keeps measuring, names the path, saves what it cannot write in the rescue folder it prints, prints the teardown status, leaves no .tmp", async () => {
    const disk = tmpfs("size=64k");
    const out = join(disk, "run");
    const run = await latlab(["ppg-vs-zone", "--duration", "1", "--out", out]).done;
    const rescue = /saved in (\/\S*latlab-rescue-\d{8}-\d{6}-[0-9a-f]{4}) instead/.exec(run.stderr)?.[1];
    if (rescue) rescues.push(rescue);

    expect(run.stderr).toMatch(new RegExp(`cannot write ${out}/\\S+: no space left on the device \\(ENOSPC\\); what cannot be written in ${out} is saved in `));
    expect(rescue, run.stderr).toBeDefined();
    expect(run.stdout).toContain("teardown: ok");
    expect(run.stdout).toMatch(new RegExp(`storage: \\d+ file\\(s\\) could not be written in ${out} \\(no space left on the device \\(ENOSPC\\)\\); \\d+ saved in ${rescue}`));
    // Every cell measured; the results are where the run says they are.
    const resultsFile = /^results: (\S+)/m.exec(run.stdout)?.[1];
    expect(resultsFile).toBeDefined();
    const results = readResults(resultsFile!);
    expect(results.runId).toBe(rescue!.split("latlab-rescue-")[1]);
    expect(results.status).toBe("complete");
    expect(results.teardown.status).toBe("ok");
    expect(results.measurements.map((m) => m.status)).toEqual(results.measurements.map(() => "ok"));
    for (const m of results.measurements) {
      for (const rel of [...m.raw, ...(m.samplesFile ? [m.samplesFile] : [])]) {
        expect(existsSync(join(out, rel)) || existsSync(join(rescue!, rel)), `${rel} is nowhere`).toBe(true);
      }
    }
    // Results not where --out asked: exit 1, not 0.
    expect(run.code, run.stderr).toBe(1);
    expect(tree(out).filter((f) => f.endsWith(".tmp"))).toEqual([]);
    expect(existsSync(join(out, LOCK_FILE))).toBe(false);
    expect(leftovers(undefined, { tempFolders: false })).toEqual([]);
  }, 600_000);
});
