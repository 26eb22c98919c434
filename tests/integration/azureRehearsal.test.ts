import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { OperationLogEntry } from "../../src/targets/azure/emulator/arm/cloud.ts";
import { ResultsSchema, type Results } from "../../src/results/schema.ts";
import { emulatorNamespacePrefix } from "../../src/targets/azure/emulator/emulator.ts";
import { providerPluginsLeft } from "./azureEmulatorHelpers.ts";
import { pulumiBinDir } from "./pulumiCli.ts";

/**
 * `latlab run <experiment> --target azure --rehearse` as a user runs it: the real Pulumi CLI
 * and engine, latlab's program, the emulator's provider plugin and ARM, VMs as hosts, the
 * runner over SSH, results, destroy. Every experiment in experiments/, then each fault the
 * emulator can inject. Needs root (namespaces) and the Pulumi CLI (.ci/run builds it).
 */

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "bin/latlab.js");
const PULUMI = pulumiBinDir();
const work = mkdtempSync(join(tmpdir(), "latlab-rehearsal-test-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));
/** Runs' state folders (keys, passphrase, Pulumi state): never the user's ~/.local/state. */
const STATE_ROOT = join(work, "state");
/** A run's state folder, as its results folder's pointer names it. */
const stateDirOf = (dir: string) => (JSON.parse(readFileSync(join(dir, "azure-state.json"), "utf8")) as { stateDir: string }).stateDir;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  dir: string;
  results: Results;
  ops: OperationLogEntry[];
}

async function rehearse(experiment: string, args: string[] = [], env: Record<string, string> = {}): Promise<Run> {
  const dir = join(work, `${experiment}-${Math.random().toString(36).slice(2, 8)}`);
  const child = spawn(process.execPath, [BIN, "run", experiment, "--target", "azure", "--rehearse", "--yes", "--out", dir, ...args], {
    cwd: ROOT,
    // Not CI's quiet mode: some tests read the progress log (--quiet where they want quiet).
    // COLUMNS: the table's notes read whole, not wrapped to the 80 columns of a stdout that is no terminal.
    env: { ...process.env, PATH: `${PULUMI}:${process.env.PATH ?? ""}`, CI: "false", COLUMNS: "1000", LATLAB_STATE_DIR: STATE_ROOT, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((r) => child.on("close", r));
  const resultsFile = join(dir, "results.json");
  if (!existsSync(resultsFile)) throw new Error(`no results.json (exit ${code}):\n${stdout}\n${stderr}`);
  const results = ResultsSchema.parse(JSON.parse(readFileSync(resultsFile, "utf8")));
  const opsFile = join(dir, "azure-emulator", "operations.jsonl");
  const ops = existsSync(opsFile) ? readFileSync(opsFile, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as OperationLogEntry) : [];
  return { code, stdout, stderr, dir, results, ops };
}

/** What a rehearsal may leave on the machine: nothing (of its own emulator: other tests may run beside it). */
function leftovers(run: Run): string[] {
  const out: string[] = [];
  // The run's state names its emulator's folder even when the deploy failed (results then have no facts).
  const statePath = existsSync(join(run.dir, "azure-state.json")) ? join(stateDirOf(run.dir), "state.json") : join(run.dir, "azure-state.json");
  const home = existsSync(statePath) ? (JSON.parse(readFileSync(statePath, "utf8")) as { rehearsal?: { emulatorHome?: string } }).rehearsal?.emulatorHome : undefined;
  if (!home) return [`${statePath} does not say which emulator ran (rehearsal.emulatorHome)`];
  const prefix = emulatorNamespacePrefix(home);
  const ns = spawnSync("ip", ["netns", "list"], { encoding: "utf8" }).stdout.split("\n").filter((l) => l.startsWith(prefix));
  out.push(...ns.map((n) => `namespace ${n}`));
  if (existsSync(home)) out.push(`folder ${home}`);
  const ps = spawnSync("ps", ["-eo", "pid,args"], { encoding: "utf8" }).stdout.split("\n");
  out.push(...ps.filter((l) => l.includes(home) || l.includes(run.dir)).map((l) => `process ${l.trim()}`));
  const locks = join(dirname(statePath), ".pulumi", "locks");
  if (existsSync(locks)) {
    const files = spawnSync("find", [locks, "-type", "f"], { encoding: "utf8" }).stdout.split("\n").filter(Boolean);
    out.push(...files.map((f) => `Pulumi lock ${f}`));
  }
  return out;
}

/** Every resource created (a first PUT accepted) was deleted afterwards, by DELETE or along with its group/VM. */
function undeleted(ops: OperationLogEntry[]): string[] {
  const created = new Set(ops.filter((o) => o.method === "PUT" && (o.status === 201 || o.status === 200)).map((o) => o.id.toLowerCase()));
  const deleted = new Set(ops.filter((o) => (o.method === "complete" && o.outcome === "Deleted") || (o.method === "DELETE" && (o.status === 202 || o.status === 204))).map((o) => o.id.toLowerCase()));
  return [...created].filter((id) => !deleted.has(id));
}

const failures = (ops: OperationLogEntry[]) => ops.filter((o) => o.status >= 400 && o.method !== "complete");
const count = (text: string, needle: string) => text.split(needle).length - 1;

describe("rehearsal of every experiment through the real Pulumi engine", () => {
  const experiments = readdirSync(join(ROOT, "experiments"))
    .filter((f) => f.endsWith(".ts"))
    .map((f) => f.replace(/\.ts$/, ""));

  it("covers every experiment in experiments/", () => {
    expect(experiments.length).toBeGreaterThanOrEqual(5);
  });

  for (const experiment of experiments) {
    it(`${experiment}: deploys, measures every cell, destroys, leaves nothing`, async () => {
      const run = await rehearse(experiment);
      expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
      expect(run.results.status).toBe("complete");
      expect(run.results.measurements.every((m) => m.status === "ok")).toBe(true);
      expect(run.results.teardown).toMatchObject({ status: "ok", errors: [] });
      expect(run.stdout).toContain("teardown: ok");
      // The run says what it was: a rehearsal, driven by which Pulumi CLI.
      expect(run.results.environment.facts.target).toContain("rehearsal");
      expect(run.results.environment.facts.pulumiCli).toMatch(/^\d+\.\d+\.\d+/);
      expect(run.results.environment.shaping.note).toMatch(/^rehearsal:/);
      // latlab's latency model between the VMs by their placement in ARM (fabric/vmShaping.ts), by netem or
      // the delay line, said to be the model's; sizes (no bandwidth model) stay noise here.
      expect(run.results.environment.shaping).toMatchObject({ latency: "applied", mechanism: expect.stringMatching(/^(netem|delay-line)$/) });
      expect(run.results.environment.shaping.note).toMatch(/; latency: applied \(modelled, (netem|delay line)[^)]*\)+ — latlab's latency model between the VMs by their placement in ARM/);
      expect(run.stdout).toMatch(/not emulated on azure: size — differences between variants that differ only in these are noise here, not findings/);
      if (experiment === "ppg-vs-zone") {
        // The shape of the answer, labelled modelled: one zone vs one PPG, Accelerated Networking on.
        expect(run.results.environment.shaping.model?.map((m) => [m.pathKind, m.accelnet]).sort()).toEqual([["same-ppg", true], ["same-zone", true]]);
        expect(run.stdout).toMatch(/│ ppg=true +│ sockperf[^\n]*\(modelled\) \* *│/);
        expect(run.stdout).toContain("* ppg=true sockperf: Modelled: the rehearsal applies latlab's latency model between the emulator's VMs by their placement in ARM");
      }
      // Hosts answered the probe from IMDS: the region and zone ARM was asked for.
      for (const v of run.results.variants) for (const h of v.hosts) expect(h.actual).toMatchObject({ region: h.region, zone: h.zone });
      // Placement evidence, read from the emulator's ARM after the deploy: each VM's instance view, each PPG Aligned.
      for (const v of run.results.variants) {
        for (const h of v.hosts) {
          expect(h.placement, `${v.id}/${h.role}`).toMatchObject({ source: "emulator", vm: { read: "ok", powerState: "running" } });
          if (h.ppg) expect(h.placement!.ppg).toMatchObject({ name: h.ppg, status: "Aligned", colocationStatus: { code: "ColocationStatus/Aligned" } });
          else expect(h.placement!.ppg).toBeUndefined();
        }
      }
      expect(run.stdout).not.toMatch(/PPG '[^']+' (NotAligned|Unknown)/);
      // Deployments are separate VMs: their cells ran at the same time (one deployment's cells span over another's), not one deployment after another.
      expect(run.results.timing?.concurrentDeployments).toBe(true);
      // A run in waves (the emulator plays a new subscription's quotas: plan/waves.ts) overlaps deployments within a wave only;
      // each wave has its own emulator, and the operations log kept is the last wave's.
      const waves = run.results.waves?.runs.map((w) => w.deployments) ?? [[...new Set(run.results.measurements.map((m) => m.deployment))]];
      const lastWave = new Set(waves.at(-1));
      for (const wave of waves) {
        const spans = wave.map((d) => run.results.measurements.filter((m) => m.deployment === d)).map((ms) => ({ from: Math.min(...ms.map((m) => Date.parse(m.startedAt))), to: Math.max(...ms.map((m) => Date.parse(m.finishedAt))) })).sort((a, b) => a.from - b.from);
        if (spans.length > 1) expect(spans.some((s, k) => k > 0 && s.from < spans[k - 1]!.to), JSON.stringify(spans)).toBe(true);
      }
      if (run.results.waves) for (const w of run.results.waves.runs) expect(w.teardown, `wave ${w.wave}`).toBe("ok");

      // ARM saw the run start with its group and end with the group's deletion, refused nothing, and kept nothing.
      expect(run.ops[0]).toMatchObject({ method: "PUT", type: "Microsoft.Resources/resourceGroups" });
      expect(run.ops.filter((o) => o.method === "DELETE").at(-1)).toMatchObject({ type: "Microsoft.Resources/resourceGroups" });
      expect(failures(run.ops)).toEqual([]);
      expect(undeleted(run.ops)).toEqual([]);
      const vms = run.ops.filter((o) => o.method === "PUT" && o.type === "Microsoft.Compute/virtualMachines").length;
      // One VM per host of each deployment (variants that differ only in the path share one).
      expect(vms).toBe(new Set(run.results.variants.flatMap((v) => v.hosts.filter((h) => lastWave.has(h.deployment)).map((h) => `${h.deployment}/${h.role}`))).size);
      expect(leftovers(run)).toEqual([]);
    }, 900_000);
  }

  it("zone-region-baseline: peerings are made after both VNets' subnets, one at a time (what ARM requires)", async () => {
    const run = await rehearse("zone-region-baseline");
    expect(run.code).toBe(0);
    const at = (pred: (o: OperationLogEntry) => boolean) => run.ops.findIndex(pred);
    const peerPuts = run.ops.map((o, i) => ({ o, i })).filter(({ o }) => o.method === "PUT" && o.type.endsWith("virtualNetworkPeerings"));
    expect(peerPuts).toHaveLength(2);
    const deployed = run.ops.findIndex((o) => o.method === "DELETE");
    const lastSubnetDone = Math.max(...run.ops.slice(0, deployed).map((o, i) => (o.method === "complete" && o.type.endsWith("/subnets") && o.outcome === "Succeeded" ? i : -1)));
    expect(peerPuts[0]!.i).toBeGreaterThan(lastSubnetDone);
    const firstPeeringDone = at((o) => o.method === "complete" && o.type.endsWith("virtualNetworkPeerings") && o.outcome === "Succeeded");
    expect(peerPuts[1]!.i).toBeGreaterThan(firstPeeringDone);
  }, 900_000);
});

describe("rehearsal with faults injected: one clear error, results on disk, nothing left", () => {
  for (const code of ["AllocationFailed", "SkuNotAvailable", "QuotaExceeded"] as const) {
    it(`${code} on one VM: the deploy fails once, loudly, and everything created is destroyed`, async () => {
      const faults = [{ kind: "create-error", type: "Microsoft.Compute/virtualMachines", name: "d1-server", code }];
      const run = await rehearse("ppg-vs-zone", ["--quiet"], { LATLAB_EMULATOR_FAULTS: JSON.stringify(faults) });
      expect(run.code).toBe(1);
      expect(run.results.status).toBe("failed");
      expect(run.results.error).toContain(code);
      // Said once: in the final report, not once per cell.
      expect(count(run.stdout + run.stderr, `Code="${code}"`)).toBe(1);
      expect(count(run.stdout, "run failed:")).toBe(1);
      expect(run.results.teardown).toMatchObject({ status: "ok" });
      expect(undeleted(run.ops)).toEqual([]);
      expect(leftovers(run)).toEqual([]);
    }, 600_000);
  }

  it("a quota one deployment does not fit: refused before anything is created, one message naming family, region, need and availability", async () => {
    // Each of ppg-vs-zone's deployments needs 4 standardDSv5Family vCPUs in eastus; this subscription allows 2: no number of waves helps.
    const emulatorHomes = () => readdirSync(tmpdir()).filter((f) => f.startsWith("latlab-azemu-"));
    const before = emulatorHomes();
    const run = await rehearse("ppg-vs-zone", ["--quiet"], { LATLAB_EMULATOR_CAPACITY: JSON.stringify({ limits: { standardDSv5Family: 2 } }) });
    expect(run.code).toBe(1);
    expect(run.results.status).toBe("failed");
    expect(run.results.error).toContain("azure target: not deploying (nothing was created): a deployment does not fit even alone in the subscription's free quota, read live");
    expect(run.results.error).toMatch(/deployment ppg=false \(variant ppg=false, replica 0\): eastus: standardDSv5Family vCPUs: needs 4 vCPUs, 2 available/);
    expect(run.ops.filter((o) => o.method === "PUT")).toEqual([]);
    // Refused while sizing the waves, before the first up(): nothing was brought up, nothing to tear down.
    expect(run.results.teardown.status).toBe("not-started");
    // Refused before any key or state was written: nothing to destroy, and the emulator is gone.
    expect(existsSync(join(run.dir, "azure-state.json"))).toBe(false);
    expect(emulatorHomes().filter((h) => !before.includes(h))).toEqual([]);
    expect(spawnSync("ps", ["-eo", "args"], { encoding: "utf8" }).stdout.split("\n").filter((l) => l.includes(run.dir))).toEqual([]);
  }, 600_000);

  it("a previous-generation size on a new subscription: refused before anything is created, with Azure's reason and the current size to use", async () => {
    const emulatorHomes = () => readdirSync(tmpdir()).filter((f) => f.startsWith("latlab-azemu-"));
    const before = emulatorHomes();
    const run = await rehearse("tests/fixtures/experiments/previous-gen-d3v2.ts", ["--quiet"]);
    expect(run.code).toBe(1);
    expect(run.results.status).toBe("failed");
    expect(run.results.error).toContain("nothing was created");
    // The emulator's SKU list closes the size as Azure closes it to a new subscription; latlab reads it and says why, and what instead.
    expect(run.results.error).toMatch(/Standard_D3_v2 is not available for this subscription \(reason NotAvailableForSubscription\) in uksouth \(restriction type Location\); Standard_D3_v2 is a previous-generation size \(Dv2 series\).* Use Standard_D4s_v5/);
    expect(run.results.error).not.toMatch(/ask Azure support for access|New Quota Request/);
    expect(run.ops.filter((o) => o.method === "PUT")).toEqual([]);
    // Refused while reading the subscription, before any key, state or stack: the emulator is gone, nothing runs.
    expect(existsSync(join(run.dir, "azure-state.json"))).toBe(false);
    expect(emulatorHomes().filter((h) => !before.includes(h))).toEqual([]);
    expect(spawnSync("ps", ["-eo", "args"], { encoding: "utf8" }).stdout.split("\n").filter((l) => l.includes(run.dir))).toEqual([]);
  }, 600_000);

  it("a v6 size (generation 2 and NVMe only, as Azure's SKU data says): the program asks for both and the VMs boot", async () => {
    // Standard_D2as_v6 has no list price in latlab's snapshot: the real run needs --max-cost, and so does its rehearsal (issue 23).
    const run = await rehearse("tests/fixtures/experiments/v6-nvme.ts", ["--quiet", "--max-cost", "5"]);
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.results.measurements.every((m) => m.status === "ok")).toBe(true);
    const vms = run.ops.filter((o) => o.method === "PUT" && o.type === "Microsoft.Compute/virtualMachines");
    expect(vms.length).toBe(2);
    expect(failures(run.ops)).toEqual([]);
    expect(leftovers(run)).toEqual([]);
  }, 600_000);

  it("an allocation a PPG cannot hold (OverconstrainedAllocationRequest, found late, at allocation): the run fails cleanly, once, and nothing is left", async () => {
    const faults = [{ kind: "overconstrained-allocation", name: "d1-server", times: 1 }];
    const run = await rehearse("ppg-vs-zone", ["--quiet"], { LATLAB_EMULATOR_FAULTS: JSON.stringify(faults) });
    expect(run.code).toBe(1);
    expect(run.results.status).toBe("failed");
    expect(run.results.error).toContain("OverconstrainedAllocationRequest");
    expect(run.results.teardown).toMatchObject({ status: "ok" });
    expect(undeleted(run.ops)).toEqual([]);
    expect(leftovers(run)).toEqual([]);
  }, 600_000);

  it("a quota the run fits only in part: two waves, each deployed, measured and destroyed before the next, the comparison flagged", async () => {
    // ppg-vs-zone needs 8 standardDSv5Family vCPUs at once; this subscription allows 4: one deployment a wave.
    const run = await rehearse("ppg-vs-zone", [], { LATLAB_EMULATOR_CAPACITY: JSON.stringify({ limits: { standardDSv5Family: 4 } }) });
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.results.status).toBe("complete");
    expect(run.stderr).toContain("waves: 2, one after another");
    expect(run.results.waves?.reasons.join("\n")).toMatch(/eastus: standardDSv5Family vCPUs: needs 8 vCPUs, 4 available/);
    expect(run.results.waves?.runs.map((w) => [w.deployments, w.teardown, w.targetRunId.endsWith(`-w${w.wave}`)])).toEqual([
      [["ppg=false"], "ok", true],
      [["ppg=true"], "ok", true],
    ]);
    // Wave 1 was gone before wave 2 came up.
    const [w1, w2] = run.results.waves!.runs;
    expect(Date.parse(w2!.startedAt)).toBeGreaterThanOrEqual(Date.parse(w1!.startedAt) + (w1!.bringUpSeconds + w1!.cellsSeconds + w1!.teardownSeconds) * 1000 - 1000);
    for (const c of run.results.comparisons) expect(c.inference.waves).toMatchObject({ baselineElsewhere: true });
    expect(run.stdout).toContain("ppg=true vs ppg=false: FLAGGED — the baseline ran only in wave 1, the candidate only in wave 2");
    expect(run.results.teardown).toMatchObject({ status: "ok", errors: [] });
    expect(leftovers(run)).toEqual([]);
  }, 900_000);

  it("a PPG Azure did not keep aligned: results.json says NotAligned, and the comparisons' rows, verdicts and report say so; the run completes", async () => {
    const run = await rehearse("ppg-vs-zone", [], { LATLAB_EMULATOR_FAULTS: JSON.stringify([{ kind: "ppg-not-aligned" }]) });
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.results.status).toBe("complete");
    const inPpg = run.results.variants.flatMap((v) => v.hosts).filter((h) => h.ppg);
    expect(inPpg.length).toBeGreaterThan(0);
    for (const h of inPpg) expect(h.placement?.ppg).toMatchObject({ name: "ppg", status: "NotAligned", colocationStatus: { code: "ColocationStatus/NotAligned" } });
    expect(run.stdout + run.stderr).toMatch(/azure: placement: deployment ppg=true, PPG 'ppg': NotAligned/);
    // The terminal table: the flagged rows, and the placement evidence per deployment.
    // The fitted table marks each such row's verdict (*) and says why under it.
    expect(run.stdout).toMatch(/│ ppg=true +│[^\n]*\* *│/);
    expect(run.stdout).toContain("Placement: the candidate's PPG 'ppg' (deployment ppg=true) is NotAligned");
    expect(run.stdout).toContain("placement (read from ARM after the deploy): PPG asked vs colocation status got:");
    expect(run.stdout).toContain("rehearsal: the colocation status is the emulator's");
    const md = readFileSync(join(run.dir, "report.md"), "utf8");
    expect(md).toMatch(/^- ppg false → true: .*Placement: the candidate's PPG 'ppg' \(deployment ppg=true\) is NotAligned/m);
    expect(md).toContain("### Placement evidence");
    const html = readFileSync(join(run.dir, "report.html"), "utf8");
    expect(html).toContain("placement-caveat");
    expect(html).toContain("placement-unaligned");
    expect(run.results.teardown.status).toBe("ok");
    expect(leftovers(run)).toEqual([]);
  }, 600_000);

  it("a delete refused once with 409 Conflict: the destroy is tried again and the run ends clean", async () => {
    const faults = [{ kind: "delete-conflict", type: "Microsoft.Network/networkSecurityGroups", times: 1 }];
    const run = await rehearse("ppg-vs-zone", [], { LATLAB_EMULATOR_FAULTS: JSON.stringify(faults) });
    expect(run.code, run.stdout).toBe(0);
    expect(run.results.status).toBe("complete");
    expect(run.results.teardown.status).toBe("ok");
    expect(run.stderr).toMatch(/destroy attempt 1 of 3 failed .*Conflict/);
    expect(run.ops.filter((o) => o.method === "DELETE" && o.outcome === "Conflict")).toHaveLength(1);
    expect(undeleted(run.ops)).toEqual([]);
    expect(leftovers(run)).toEqual([]);
  }, 600_000);

  it("a delete that keeps failing: after 3 destroys the run's own group is deleted through ARM, destroy clears the stack, left: none; the measured results are kept", async () => {
    const faults = [{ kind: "delete-conflict", type: "Microsoft.Network/networkSecurityGroups", name: "d0-server" }];
    const run = await rehearse("ppg-vs-zone", [], { LATLAB_EMULATOR_FAULTS: JSON.stringify(faults) });
    expect(run.results.measurements.every((m) => m.status === "ok")).toBe(true);
    expect(run.stderr).toMatch(/destroy attempt 2 of 3 failed .*Conflict/);
    expect(run.stderr).toMatch(/deleting the run's resource group latlab-\S+ through ARM \(pulumi destroy failed\)/);
    expect(run.results.teardown).toMatchObject({ status: "ok", errors: [] });
    const removed = run.results.teardown.removed.join("\n");
    expect(removed).toMatch(/resource group latlab-\S+ \(deleted through ARM\)/);
    expect(removed).toContain("left: none");
    expect(run.code).toBe(0);
    expect(leftovers(run)).toEqual([]);
  }, 600_000);

  it("a VM that never gets ready: its deployment's cells fail naming the host, the other deployment is measured, exit 2", async () => {
    const faults = [{ kind: "vm-never-ready", name: "d1-server" }];
    const run = await rehearse("ppg-vs-zone", ["--quiet"], { LATLAB_EMULATOR_FAULTS: JSON.stringify(faults), LATLAB_EMULATOR_READY_TIMEOUT: "8" });
    expect(run.code).toBe(2);
    expect(run.results.status).toBe("partial");
    const d0 = run.results.measurements.filter((m) => m.variant.startsWith("ppg=false"));
    const d1 = run.results.measurements.filter((m) => m.variant.startsWith("ppg=true"));
    expect(d0.length).toBeGreaterThan(0);
    expect(d0.every((m) => m.status === "ok")).toBe(true);
    expect(d1.every((m) => m.status === "failed" && /server: not ready after 8 s/.test(m.error ?? ""))).toBe(true);
    expect(existsSync(join(run.dir, d0[0]!.samplesFile!))).toBe(true);
    expect(run.results.teardown.status).toBe("ok");
    expect(leftovers(run)).toEqual([]);
  }, 600_000);

  it("the runner killed in the middle of `up` (a stale Pulumi lock, live VMs): `latlab destroy` clears the lock, resumes the emulator, and leaves nothing", async () => {
    const dir = join(work, "killed");
    const faults = [{ kind: "kill-runner", type: "Microsoft.Compute/virtualMachines", name: "d1-server" }];
    const env = { ...process.env, PATH: `${PULUMI}:${process.env.PATH ?? ""}`, CI: "false", LATLAB_STATE_DIR: STATE_ROOT, LATLAB_EMULATOR_FAULTS: JSON.stringify(faults) };
    // Its own process group: the fault kills the group of the runner, not this test.
    const child = spawn(process.execPath, [BIN, "run", "ppg-vs-zone", "--target", "azure", "--rehearse", "--yes", "--out", dir], { cwd: ROOT, env, stdio: "ignore", detached: true });
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((r) => child.on("close", (c, s) => r([c, s])));
    expect(signal).toBe("SIGKILL");
    expect(code).toBeNull();

    const stateDir = stateDirOf(dir);
    const state = JSON.parse(readFileSync(join(stateDir, "state.json"), "utf8")) as { status: string; rehearsal?: { emulatorHome: string } };
    expect(state.status).toBe("deploying");
    const home = state.rehearsal!.emulatorHome;
    const prefix = emulatorNamespacePrefix(home);
    const namespaces = () => spawnSync("ip", ["netns", "list"], { encoding: "utf8" }).stdout.split("\n").filter((l) => l.startsWith(prefix));
    const locks = () => (existsSync(join(stateDir, ".pulumi", "locks")) ? spawnSync("find", [join(stateDir, ".pulumi", "locks"), "-type", "f"], { encoding: "utf8" }).stdout.split("\n").filter(Boolean) : []);
    // What a crash leaves: Pulumi's lock (a .json, with the blob store's .attrs beside it), the
    // emulator's state, its fabric (which VMs had started by then depends on timing).
    expect(locks().filter((f) => f.endsWith(".json"))).toHaveLength(1);
    expect(existsSync(join(home, "state.json"))).toBe(true);
    expect(namespaces().length).toBeGreaterThan(0);

    const destroy = spawnSync(process.execPath, [BIN, "destroy", dir], { cwd: ROOT, env: { ...env, LATLAB_EMULATOR_FAULTS: "" }, encoding: "utf8", timeout: 600_000 });
    expect(destroy.status, `${destroy.stdout}\n${destroy.stderr}`).toBe(0);
    expect(destroy.stdout).toContain("teardown: ok");
    expect(destroy.stderr).toMatch(/removed a stale Pulumi lock .* is gone/);
    expect(locks()).toEqual([]);
    expect(namespaces()).toEqual([]);
    expect(existsSync(home)).toBe(false);
    const ps = spawnSync("ps", ["-eo", "pid,args"], { encoding: "utf8" }).stdout.split("\n").filter((l) => l.includes(home));
    expect(ps).toEqual([]);
    // The provider plugin the killed engine had started (its own process group: the kill missed it) is gone too.
    expect(await providerPluginsLeft(home)).toEqual([]);
    expect(JSON.parse(readFileSync(join(stateDir, "state.json"), "utf8"))).toMatchObject({ status: "destroyed" });
    expect(destroy.stdout).toContain("left: none");
    const ops = readFileSync(join(dir, "azure-emulator", "operations.jsonl"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as OperationLogEntry);
    expect(undeleted(ops)).toEqual([]);
  }, 900_000);
});
