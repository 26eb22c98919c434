import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ExecFn } from "../../../../src/targets/local/exec.ts";
import { runNames } from "../../../../src/targets/local/network/names.ts";
import { cleanupLocal, formatCleanup } from "../../../../src/targets/local/recovery/cleanup.ts";
import { newRunRecord, ownerAlive, processStartTicks, readRunRecords, writeRunRecord } from "../../../../src/targets/local/recovery/runRecord.ts";
import { tempDirs } from "../../../tempDirs.ts";

const tempDir = tempDirs();

/** A machine with some namespaces and links; records what cleanup asked it to do. */
function fakeMachine(namespaces: string[], links: string[]) {
  const calls: string[] = [];
  const exec: ExecFn = async (argv) => {
    calls.push(argv.join(" "));
    const line = argv.join(" ");
    if (line === "ip netns list") return { code: 0, stdout: namespaces.map((n) => `${n} (id: 1)`).join("\n"), stderr: "" };
    if (line === "ip -o link show") return { code: 0, stdout: links.map((l, i) => `${i + 2}: ${l}@if2: <BROADCAST> mtu 1500`).join("\n"), stderr: "" };
    if (argv[0] === "ip" && argv[1] === "netns" && argv[2] === "pids") return { code: 0, stdout: "", stderr: "" };
    return { code: 0, stdout: "", stderr: "" };
  };
  return { exec, calls };
}

describe("run records", () => {
  it("name their owner by pid and start time: a dead owner, or another process on a reused pid, is not alive", async () => {
    const dir = tempDir("latlab-records-");
    const record = newRunRecord("run-1", runNames("run-1"), "/results/run-1");
    expect(ownerAlive(record)).toBe(true);
    writeRunRecord(record, dir);
    expect(readRunRecords(dir).records).toEqual([record]);
    const child = spawn("sleep", ["30"]);
    await new Promise((r) => child.once("spawn", r));
    const theirs = { pid: child.pid!, pidStartTicks: processStartTicks(child.pid!)! };
    expect(ownerAlive(theirs)).toBe(true);
    expect(ownerAlive({ ...theirs, pidStartTicks: "1" })).toBe(false);
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    expect(ownerAlive(theirs)).toBe(false);
    writeFileSync(join(dir, "garbage.json"), "{");
    expect(readRunRecords(dir).unreadable.map((u) => u.file)).toEqual([join(dir, "garbage.json")]);
  });
});

describe("cleanupLocal", () => {
  it("removes what a dead run left, leaves a live run alone, and only lists leftovers no record accounts for", async () => {
    const dir = tempDir("latlab-records-");
    const tmp = tempDir("latlab-cleanup-tmp-");
    const dead = runNames("dead-run");
    const live = runNames("live-run");
    const stray = "abcdef";
    const deadTemp = join(tmp, `latlab-${dead.short}-x1`);
    mkdirSync(join(deadTemp, "keys"), { recursive: true });
    writeFileSync(join(deadTemp, "keys", "client_ed25519"), "-----BEGIN OPENSSH PRIVATE KEY-----\n");
    mkdirSync(join(tmp, `latlab-${live.short}-x2`));
    mkdirSync(join(tmp, `latlab-${stray}-x3`));
    mkdirSync(join(tmp, "latlab-history-x4")); // not a local run's: never looked at
    writeRunRecord({ ...newRunRecord("dead-run", dead, "/results/dead"), pid: 999_999_99, tempDir: deadTemp }, dir);
    writeRunRecord(newRunRecord("live-run", live, "/results/live"), dir);
    const machine = fakeMachine(
      [`${dead.namespacePrefix}0-client`, `${dead.namespacePrefix}0-_zr-eastus-1`, `${live.namespacePrefix}0-client`, `ll-${stray}-0-server`, "someone-elses"],
      [`${dead.rootLinkPrefix}0`, `${live.rootLinkPrefix}0`, "eth0"],
    );

    const dry = await cleanupLocal({ exec: machine.exec, recordsDir: dir, tempRoots: [tmp], dryRun: true, graceMs: 10 });
    expect(machine.calls.filter((c) => c.includes(" del "))).toEqual([]);
    expect(dry.runs.map((r) => r.items)).toEqual([[`link ${dead.rootLinkPrefix}0`, `namespace ${dead.namespacePrefix}0-client`, `namespace ${dead.namespacePrefix}0-_zr-eastus-1`, `directory ${deadTemp}`]]);
    expect(formatCleanup(dry, { dryRun: true })).toMatch(/run dead-run \(its runner, pid 99999999, is gone; results in \/results\/dead\): would remove:/);

    const report = await cleanupLocal({ exec: machine.exec, recordsDir: dir, tempRoots: [tmp], graceMs: 10 });
    expect(machine.calls.filter((c) => c.includes(" del "))).toEqual([`ip link del ${dead.rootLinkPrefix}0`, `ip netns del ${dead.namespacePrefix}0-client`, `ip netns del ${dead.namespacePrefix}0-_zr-eastus-1`]);
    expect(existsSync(deadTemp)).toBe(false);
    expect(report.live.map((l) => l.runId)).toEqual(["live-run"]);
    expect(existsSync(join(tmp, `latlab-${live.short}-x2`))).toBe(true);
    expect(report.unrecorded).toEqual([{ short: stray, items: [`namespace ll-${stray}-0-server`, `directory ${join(tmp, `latlab-${stray}-x3`)}`] }]);
    expect(existsSync(join(tmp, `latlab-${stray}-x3`))).toBe(true);
    expect(readRunRecords(dir).records.map((r) => r.runId)).toEqual(["live-run"]);
    const text = formatCleanup(report, {});
    expect(text).toContain("live: run live-run");
    expect(text).toContain("`latlab cleanup --unrecorded` removes them");

    await cleanupLocal({ exec: machine.exec, recordsDir: dir, tempRoots: [tmp], unrecorded: true, graceMs: 10 });
    expect(machine.calls).toContain(`ip netns del ll-${stray}-0-server`);
    expect(existsSync(join(tmp, `latlab-${stray}-x3`))).toBe(false);
    expect(readdirSync(tmp).sort()).toEqual(["latlab-history-x4", `latlab-${live.short}-x2`].sort());
  });

  it("leaves hosts alone that a resume took over while cleanup was looking (the record is read again before removing)", async () => {
    const dir = tempDir("latlab-records-");
    const tmp = tempDir("latlab-cleanup-tmp-");
    const dead = runNames("dead-run");
    writeRunRecord({ ...newRunRecord("dead-run", dead, "/results/dead"), pid: 999_999_99 }, dir);
    const machine = fakeMachine([`${dead.namespacePrefix}0-client`], [`${dead.rootLinkPrefix}0`]);
    // While cleanup looks inside the namespaces, `latlab resume` (this process) takes the run over.
    const exec: ExecFn = async (argv, o) => {
      if (argv[2] === "pids") writeRunRecord(newRunRecord("dead-run", dead, "/results/dead"), dir);
      return machine.exec(argv, o);
    };
    const report = await cleanupLocal({ exec, recordsDir: dir, tempRoots: [tmp], graceMs: 10 });
    expect(machine.calls.filter((c) => c.includes(" del "))).toEqual([]);
    expect(report.runs).toEqual([]);
    expect(report.live.map((l) => [l.runId, l.pid])).toEqual([["dead-run", process.pid]]);
    expect(readRunRecords(dir).records.map((r) => r.pid)).toEqual([process.pid]);
  });

  it("never touches a folder a record names outside latlab's run folders, nor a record of another boot or machine", async () => {
    const dir = tempDir("latlab-records-");
    const tmp = tempDir("latlab-cleanup-tmp-");
    const victim = tempDir("latlab-victim-");
    writeFileSync(join(victim, "precious"), "x");
    const forged = runNames("forged");
    writeRunRecord({ ...newRunRecord("forged", forged, null), pid: 999_999_99, tempDir: victim, keysDir: "/home" }, dir);
    const other = runNames("elsewhere");
    writeRunRecord({ ...newRunRecord("elsewhere", other, null), pid: 999_999_98, bootId: "00000000-0000-0000-0000-000000000000" }, dir);
    const machine = fakeMachine([`${other.namespacePrefix}0-client`], []);
    const report = await cleanupLocal({ exec: machine.exec, recordsDir: dir, tempRoots: [tmp], graceMs: 10 });
    expect(existsSync(join(victim, "precious"))).toBe(true);
    expect(report.errors).toEqual([
      `run record of forged names ${victim}, which is not one of latlab's run folders: not touched`,
      "run record of forged names /home, which is not one of latlab's run folders: not touched",
    ]);
    expect(report.foreign).toEqual([{ runId: "elsewhere", bootId: "00000000-0000-0000-0000-000000000000" }]);
    expect(machine.calls.filter((c) => c.includes(" del "))).toEqual([]);
    expect(formatCleanup(report, {})).toContain("not this boot's: run elsewhere");
    // The forged record stays (its removal failed): it is said again next time, never acted on.
    expect(readRunRecords(dir).records.map((r) => r.runId).sort()).toEqual(["elsewhere", "forged"]);
  });
});
