import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CloudSnapshot, OperationLogEntry } from "../../src/targets/azure/emulator/arm/cloud.ts";
import { emulatorNamespacePrefix, startEmulator } from "../../src/targets/azure/emulator/emulator.ts";
import { ArmClient } from "../../src/targets/azure/emulator/provider/armClient.ts";
import { EMULATOR_HOME_PREFIX } from "../../src/targets/azure/emulator/rehearsal.ts";
import { namePrefix } from "../../src/targets/azure/program/types.ts";
import { R } from "./azureEmulatorHelpers.ts";
import { pulumiBinDir } from "./pulumiCli.ts";

/**
 * `latlab sweep --rehearse` against what GitHub can do to a job, with the real Pulumi CLI:
 * (a) the runner vanishes mid-`up` (its whole process group SIGKILLed, its state folder gone with
 * it): the cleanup job's `latlab sweep --github-run <id> --delete` removes the run's groups through
 * the emulator's ARM alone, and the emulator with them; (b) the hourly sweep deletes an expired
 * group and keeps the rest, leaving their emulator resumable. Needs root (namespaces) and the lock.
 */

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "bin/latlab.js");
const PULUMI = pulumiBinDir();
const work = mkdtempSync(join(tmpdir(), "latlab-sweep-test-"));
const STATE_ROOT = join(work, "state");
/**
 * The system temp dir of this test's processes (TMPDIR), where the rehearsals' emulator folders are
 * and `latlab sweep --rehearse` looks: emulators other runs on this shared machine left are not this test's to sweep.
 */
const TMP = join(work, "t");
mkdirSync(TMP);
/** This test's GitHub run: an id no real run of this machine has. */
const GITHUB_RUN = String(9_000_000_000_000 + Math.floor(Math.random() * 1_000_000_000));
const OTHER_RUN = "7";
const REPOSITORY = "example/measurements";
const github = { GITHUB_ACTIONS: "true", GITHUB_RUN_ID: GITHUB_RUN, GITHUB_RUN_ATTEMPT: "1", GITHUB_REPOSITORY: REPOSITORY };
const baseEnv = { ...process.env, PATH: `${PULUMI}:${process.env.PATH ?? ""}`, CI: "false", TMPDIR: TMP };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until<T>(what: string, probe: () => T | undefined, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

const namespacesOf = (home: string) => spawnSync("ip", ["netns", "list"], { encoding: "utf8" }).stdout.split("\n").filter((l) => l.startsWith(emulatorNamespacePrefix(home)));
/** Processes whose command line or environment names the emulator's folder (the provider plugin has its socket in its environment). */
function processesOf(home: string): string[] {
  return readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p) && Number(p) !== process.pid)
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, "utf8").includes(home) || readFileSync(`/proc/${p}/environ`, "utf8").includes(home);
      } catch {
        return false;
      }
    })
    .map((p) => `${p}: ${readFileSync(`/proc/${p}/cmdline`, "utf8").replaceAll("\0", " ").trim()}`);
}
const savedGroups = (home: string) =>
  (JSON.parse(readFileSync(join(home, "state.json"), "utf8")) as CloudSnapshot).resources.filter((r) => r.type === "Microsoft.Resources/resourceGroups").map((r) => ({ name: r.name, tags: r.body.tags as Record<string, string> }));

function latlab(args: string[], env: Record<string, string | undefined>) {
  return spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...baseEnv, ...env }, encoding: "utf8", timeout: 600_000 });
}

/**
 * An emulator another run left (the runner died): groups of another GitHub run — one expired, one
 * not — and a group that is not latlab's, expired by its tag. Stopped with its state kept.
 */
let other: { home: string; expired: string; kept: string; foreign: string };
let child: ChildProcess | undefined;

beforeAll(async () => {
  const home = await mkdtemp(join(TMP, EMULATOR_HOME_PREFIX));
  const emulator = await startEmulator({ home });
  const arm = new ArmClient(emulator.socketPath);
  const tags = (expiresAt: string) => ({ owner: "latlab", runId: "earlier", experiment: "ppg-vs-zone", createdAt: "2026-01-01T00:00:00.000Z", expiresAt, githubRunId: OTHER_RUN, githubRunAttempt: "1", githubRepository: REPOSITORY });
  other = { home, expired: "latlab-earlier-expired", kept: "latlab-earlier-kept", foreign: "someone-elses" };
  const put = (name: string, t: Record<string, string>) => arm.put(`/subscriptions/${emulator.subscription}/resourceGroups/${name}`, R, { location: "eastus", tags: t });
  await put(other.expired, tags(new Date(Date.now() - 3_600_000).toISOString()));
  await put(other.kept, tags(new Date(Date.now() + 24 * 3_600_000).toISOString()));
  await put(other.foreign, { owner: "alice", expiresAt: "2020-01-01T00:00:00Z" });
  await emulator.stop({ keepState: true });
}, 120_000);

afterAll(async () => {
  if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null) process.kill(-child.pid, "SIGKILL");
  // Whatever emulator this test left (the decoy's kept groups; a run's, had a test failed): resumed and stopped, which removes its namespaces.
  for (const name of readdirSync(TMP).filter((n) => n.startsWith(EMULATOR_HOME_PREFIX))) {
    const home = join(TMP, name);
    if (existsSync(join(home, "state.json"))) await (await startEmulator({ home })).stop();
    await rm(home, { recursive: true, force: true });
  }
  rmSync(work, { recursive: true, force: true });
}, 300_000);

describe("latlab sweep --rehearse", () => {
  it("(a) the runner vanished mid-`up` with its Pulumi state: `sweep --github-run <id> --delete` removes the run's groups, its emulator, namespaces and processes, and nothing of another run", async () => {
    const otherBefore = readFileSync(join(other.home, "state.json"), "utf8");
    const out = join(work, "run");
    // Its own process group, as a job's steps are: the whole group is killed, as when a runner vanishes.
    child = spawn(process.execPath, [BIN, "run", "ppg-vs-zone", "--target", "azure", "--rehearse", "--yes", "--quiet", "--no-history", "--out", out], {
      cwd: ROOT,
      env: { ...baseEnv, ...github, LATLAB_STATE_DIR: STATE_ROOT },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let output = "";
    child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
    const closed = new Promise<NodeJS.Signals | null>((r) => child!.on("close", (_code, signal) => r(signal)));

    // The run's state names its emulator before anything is deployed; the emulator's log shows the group created.
    const state = await until(
      "the run's state.json",
      () => {
        if (child!.exitCode !== null) throw new Error(`latlab run ended (${child!.exitCode}) before its group was created:\n${output}`);
        for (const dir of existsSync(STATE_ROOT) ? readdirSync(STATE_ROOT) : []) {
          const file = join(STATE_ROOT, dir, "state.json");
          if (existsSync(file)) return JSON.parse(readFileSync(file, "utf8")) as { runId: string; rehearsal: { emulatorHome: string } };
        }
        return undefined;
      },
      300_000,
    );
    const home = state.rehearsal.emulatorHome;
    expect(home.startsWith(join(TMP, EMULATOR_HOME_PREFIX))).toBe(true);
    const group = namePrefix(state.runId);
    await until(
      "the run's resource group created in the emulator's ARM",
      () => {
        if (child!.exitCode !== null) throw new Error(`latlab run ended (${child!.exitCode}) before its group was created:\n${output}`);
        const log = existsSync(join(home, "operations.jsonl")) ? readFileSync(join(home, "operations.jsonl"), "utf8") : "";
        const ops = log.split("\n").filter(Boolean).map((l) => JSON.parse(l) as OperationLogEntry);
        return ops.some((o) => o.method === "complete" && o.type === "Microsoft.Resources/resourceGroups" && o.name === group && o.outcome === "Succeeded") ? true : undefined;
      },
      300_000,
    );
    process.kill(-child.pid!, "SIGKILL");
    expect(await closed).toBe("SIGKILL");
    // The runner vanished: its state folder (keys, passphrase, Pulumi's file backend) with it.
    rmSync(STATE_ROOT, { recursive: true, force: true });
    // What is left is the emulator's: the group, tagged with the GitHub run.
    expect(savedGroups(home)).toEqual([{ name: group, tags: expect.objectContaining({ owner: "latlab", githubRunId: GITHUB_RUN, githubRunAttempt: "1", githubRepository: REPOSITORY }) }]);

    const summary = join(work, "cleanup-summary.md");
    const sweep = latlab(["sweep", "--github-run", GITHUB_RUN, "--rehearse", "--delete", "--summary", summary], { GITHUB_ACTIONS: "true", GITHUB_RUN_ID: GITHUB_RUN, GITHUB_RUN_ATTEMPT: "1", GITHUB_REPOSITORY: REPOSITORY });
    expect(sweep.status, `${sweep.stdout}\n${sweep.stderr}`).toBe(0);
    expect(sweep.stdout).toContain(`emulator ${home}: swept, removed`);
    expect(sweep.stdout).toMatch(new RegExp(`${group}\\t\\S+\\t\\S+\\tdeleted: GitHub run ${GITHUB_RUN} of ${REPOSITORY}`));

    // Nothing of the run is left on the machine.
    expect(existsSync(home)).toBe(false);
    expect(namespacesOf(home)).toEqual([]);
    // The provider plugin the killed engine started is in a process group of its own: it goes when its engine is gone.
    for (let i = 0; i < 300 && processesOf(home).length > 0; i++) await sleep(100);
    expect(processesOf(home)).toEqual([]);
    const md = readFileSync(summary, "utf8");
    expect(md).toContain(`### latlab sweep: every latlab resource group of GitHub run ${GITHUB_RUN} of ${REPOSITORY}`);
    expect(md).toContain(`| \`${group}\` | \`eastus\` |`);
    expect(md).toMatch(/\*\*deleted\*\* \(GitHub run/);
    expect(md).toContain("holds nothing any more: its folder, namespaces and processes are removed");

    // Another run's emulator held nothing of this run: not started, not changed — its expired group included.
    expect(readFileSync(join(other.home, "state.json"), "utf8")).toBe(otherBefore);
  }, 900_000);

  it("(b) the hourly sweep deletes an expired group through the resumed emulator's ARM, keeps the others, and leaves their emulator resumable", async () => {
    const summary = join(work, "hourly-summary.md");
    const sweep = latlab(["sweep", "--rehearse", "--delete", "--summary", summary], {});
    expect(sweep.status, `${sweep.stdout}\n${sweep.stderr}`).toBe(0);
    expect(sweep.stdout).toContain(`emulator ${other.home}: swept, resumable`);
    expect(sweep.stdout).toMatch(new RegExp(`${other.expired}\\texpired\\t\\S+\\tdeleted: expired`));
    expect(sweep.stdout).toMatch(new RegExp(`${other.kept}\\tnot-expired\\t\\S+\\tkept: not expired`));

    // Its ARM state kept, without the expired group; its fabric stopped.
    expect(savedGroups(other.home).map((g) => g.name).sort()).toEqual([other.kept, other.foreign].sort());
    expect(namespacesOf(other.home)).toEqual([]);
    expect(processesOf(other.home)).toEqual([]);
    const md = readFileSync(summary, "utf8");
    expect(md).toContain("### latlab sweep: expired latlab resource groups");
    expect(md).toMatch(new RegExp(`\\| \`${other.expired}\` \\| \`eastus\` \\| \\S+ \\| \\*\\*deleted\\*\\* \\(expired`));
    expect(md).toMatch(new RegExp(`\\| \`${other.kept}\` \\| \`eastus\` \\| \\S+ \\| kept: not expired`));
    expect(md).not.toContain(other.foreign);
    expect(md).toContain("still holds 2 resource(s): left resumable");

    // Resumable: a later emulator on the folder has the kept groups (afterAll removes it).
    const again = latlab(["sweep", "--rehearse"], {});
    expect(again.status, again.stderr).toBe(0);
    expect(again.stdout).toMatch(new RegExp(`emulator ${other.home}: swept\\n  ${other.kept}\\tnot-expired`));
  }, 600_000);
});
