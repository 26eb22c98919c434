import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { emulatorNamespacePrefix } from "../../src/targets/azure/emulator/emulator.ts";
import { providerPluginsLeft } from "./azureEmulatorHelpers.ts";
import { pulumiBinDir } from "./pulumiCli.ts";

/**
 * A run whose Pulumi state outlives its runner: `--backend` names a folder outside the run's
 * state folder, which stands in for Azure Blob Storage — Pulumi treats file:// and azblob:// alike,
 * as DIY backends over gocloud.dev blob buckets (pulumi/pulumi pkg/backend/diy/backend.go New()
 * @ v3.259.0), with the same stack files, locks and tags. The runner is SIGKILLed once its hosts
 * are up, its state folder deleted (the machine is gone); `latlab destroy <runId> --backend <url>`
 * with the passphrase in the environment removes everything from the backend alone. Needs root
 * (namespaces) and the Pulumi CLI; run under /tmp/latlab-ns.lock.
 */

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "bin/latlab.js");
const PULUMI = pulumiBinDir();
const EXPERIMENT = "tests/fixtures/experiments/v6-nvme.ts";
/** Standard_D2as_v6 has no list price in latlab's snapshot: the real run needs --max-cost, and so does its rehearsal (issue 23). */
const MAX_COST = "5";
const work = mkdtempSync(join(tmpdir(), "latlab-remote-backend-test-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const STATE_ROOT = join(work, "state");
/** Made beforehand, as an azblob:// container is: Pulumi opens a backend, it does not create one. */
const BACKEND_DIR = join(work, "backend");
mkdirSync(BACKEND_DIR);
const BACKEND = `file://${BACKEND_DIR}`;
const PASSPHRASE = "remote-backend-test-passphrase-7f3c";

/** The environment of a latlab the test starts: no passphrase unless given, never the user's state folder. */
function envWith(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${PULUMI}:${process.env.PATH ?? ""}`, CI: "false", LATLAB_STATE_DIR: STATE_ROOT, ...extra };
  for (const k of ["PULUMI_CONFIG_PASSPHRASE", "PULUMI_CONFIG_PASSPHRASE_FILE", "LATLAB_PULUMI_BACKEND", "LATLAB_EMULATOR_FAULTS"]) if (!(k in extra)) delete env[k];
  return env;
}

/** Every file under a folder (absolute paths); none when it does not exist. */
const filesUnder = (dir: string): string[] =>
  existsSync(dir) ? readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name)) : [];

describe("a Pulumi backend that outlives the runner (azblob://, played by a file:// folder outside the state folder)", () => {
  it("without a passphrase in the environment the run is refused before anything is deployed", async () => {
    const dir = join(work, "refused");
    const run = spawnSync(process.execPath, [BIN, "run", EXPERIMENT, "--target", "azure", "--rehearse", "--yes", "--max-cost", MAX_COST, "--out", dir, "--backend", BACKEND], {
      cwd: ROOT,
      env: envWith({}),
      encoding: "utf8",
      timeout: 300_000,
    });
    expect(run.status, `${run.stdout}\n${run.stderr}`).not.toBe(0);
    expect(run.stderr).toMatch(/the Pulumi backend file:\/\/\S+ \(--backend\) outlives this machine, so the stack's passphrase must come from the environment: set PULUMI_CONFIG_PASSPHRASE/);
    expect(run.stderr).not.toMatch(/starting latlab's Azure emulator/);
    // Nothing deployed, nothing recorded: no stack in the backend, no state folder, no pointer.
    expect(filesUnder(BACKEND_DIR)).toEqual([]);
    expect(filesUnder(STATE_ROOT)).toEqual([]);
    expect(existsSync(join(dir, "azure-state.json"))).toBe(false);
  }, 300_000);

  it("the runner SIGKILLed once its hosts are up, its state folder gone: `latlab destroy <runId> --backend <url>` removes everything", async () => {
    const dir = join(work, "killed");
    const env = envWith({ PULUMI_CONFIG_PASSPHRASE: PASSPHRASE });
    // Its own process group, killed whole as a runner that vanishes takes everything with it.
    const child = spawn(process.execPath, [BIN, "run", EXPERIMENT, "--target", "azure", "--rehearse", "--yes", "--max-cost", MAX_COST, "--out", dir, "--backend", BACKEND], {
      cwd: ROOT,
      env,
      stdio: ["ignore", "ignore", "pipe"],
      detached: true,
    });
    let stderr = "";
    const closed = new Promise<[number | null, NodeJS.Signals | null]>((r) => child.on("close", (c, s) => r([c, s])));
    await new Promise<void>((up, failed) => {
      child.stderr.on("data", (d: Buffer) => {
        stderr += d.toString();
        if (/azure: \d+ hosts up in resource group/.test(stderr)) up();
      });
      void closed.then(([code]) => failed(new Error(`the run ended (exit ${code}) before its hosts were up:\n${stderr}`)));
    });
    process.kill(-child.pid!, "SIGKILL");
    const [code, signal] = await closed;
    expect([code, signal]).toEqual([null, "SIGKILL"]);

    const pointer = JSON.parse(readFileSync(join(dir, "azure-state.json"), "utf8")) as { runId: string; stateDir: string };
    const state = JSON.parse(readFileSync(join(pointer.stateDir, "state.json"), "utf8")) as { status: string; backendUrl: string; passphrase: string; rehearsal: { emulatorHome: string } };
    expect(state).toMatchObject({ status: "up", backendUrl: BACKEND, passphrase: "env" });
    const home = state.rehearsal.emulatorHome;
    const prefix = emulatorNamespacePrefix(home);
    const namespaces = () => spawnSync("ip", ["netns", "list"], { encoding: "utf8" }).stdout.split("\n").filter((l) => l.startsWith(prefix));
    expect(namespaces().length).toBeGreaterThan(0);
    expect(existsSync(join(home, "state.json"))).toBe(true);
    // The passphrase came from the environment and was never written by latlab: not in the state folder, the results, or the backend.
    for (const f of [...filesUnder(pointer.stateDir), ...filesUnder(dir), ...filesUnder(BACKEND_DIR)]) expect(readFileSync(f, "utf8"), f).not.toContain(PASSPHRASE);
    // The stack is in the backend, tagged with what destroy needs (pkg/backend/diy/stack_tags.go: <stack>.pulumi-tags).
    const stack = `latlab-${pointer.runId}`;
    const tagsFile = filesUnder(BACKEND_DIR).find((f) => f.endsWith(`${stack}.pulumi-tags`));
    expect(tagsFile, filesUnder(BACKEND_DIR).join("\n")).toBeDefined();
    expect(JSON.parse(readFileSync(tagsFile!, "utf8"))).toMatchObject({ tags: { "latlab:rehearsalHome": home } });

    // The machine is gone: its state folder (keys, workspace, state.json) with it.
    rmSync(pointer.stateDir, { recursive: true, force: true });

    // Without the passphrase, destroy touches nothing.
    const refused = spawnSync(process.execPath, [BIN, "destroy", pointer.runId, "--backend", BACKEND], { cwd: ROOT, env: envWith({}), encoding: "utf8", timeout: 120_000 });
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/PULUMI_CONFIG_PASSPHRASE.*Nothing was touched/s);
    expect(namespaces().length).toBeGreaterThan(0);

    const destroy = spawnSync(process.execPath, [BIN, "destroy", pointer.runId, "--backend", BACKEND], { cwd: ROOT, env, encoding: "utf8", timeout: 600_000 });
    expect(destroy.status, `${destroy.stdout}\n${destroy.stderr}`).toBe(0);
    expect(destroy.stdout).toContain("teardown: ok");
    expect(destroy.stdout).toContain("left: none");
    expect(destroy.stderr).toMatch(/no state folder on this machine; looking for stack latlab-\S+ in file:\/\/\S+ \(--backend\)/);
    expect(destroy.stderr).toMatch(/emulator: resuming the rehearsal's emulator from/);
    // Pulumi itself destroyed the stack from its state (the secrets manager read from it: a fresh workspace), not latlab's ARM fallback.
    expect(destroy.stderr).toMatch(/azure: {5}- \d+ deleted/);
    expect(destroy.stderr).not.toMatch(/through ARM/);
    expect(destroy.stderr + destroy.stdout).not.toContain(PASSPHRASE);

    // Nothing of the run is left: no namespaces, no emulator folder or process, no stack, lock or tags in the backend, no state folder made.
    expect(namespaces()).toEqual([]);
    expect(existsSync(home)).toBe(false);
    expect(spawnSync("ps", ["-eo", "pid,args"], { encoding: "utf8" }).stdout.split("\n").filter((l) => l.includes(home))).toEqual([]);
    // (Pulumi keeps a removed stack's checkpoint backups, `.json.bak` and .pulumi/backups/: `stack rm` without --remove-backups.)
    expect(filesUnder(BACKEND_DIR).filter((f) => f.endsWith(`/${stack}.json`) || f.endsWith(`/${stack}.pulumi-tags`) || f.includes("/.pulumi/locks/"))).toEqual([]);
    expect(existsSync(pointer.stateDir)).toBe(false);
    // The provider plugin of the run's engine (its own process group: the kill missed it) is gone too.
    expect(await providerPluginsLeft(home)).toEqual([]);
  }, 900_000);
});
