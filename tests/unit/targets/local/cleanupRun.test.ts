/**
 * Issue 23, fault 1: a local run killed in the middle of its teardown (some namespaces and links
 * gone) is finished by `latlab resume` in one step — what is left of that run is removed, and
 * only that run's: another run's, live or dead, and leftovers of no record are never touched.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ExecFn } from "../../../../src/targets/local/exec.ts";
import { runNames } from "../../../../src/targets/local/network/names.ts";
import { cleanupLocalRun } from "../../../../src/targets/local/recovery/cleanupRun.ts";
import { newRunRecord, readRunRecords, writeRunRecord } from "../../../../src/targets/local/recovery/runRecord.ts";
import { tempDirs } from "../../../tempDirs.ts";

const tempDir = tempDirs();

/** A machine with these namespaces and links; `refuse` names namespaces `ip netns del` fails on. Records every call. */
function fakeMachine(namespaces: string[], links: string[], refuse: string[] = []) {
  const calls: string[] = [];
  const exec: ExecFn = async (argv) => {
    const line = argv.join(" ");
    calls.push(line);
    if (line === "ip netns list") return { code: 0, stdout: namespaces.map((n) => `${n} (id: 1)`).join("\n"), stderr: "" };
    if (line === "ip -o link show") return { code: 0, stdout: links.map((l, i) => `${i + 2}: ${l}@if2: <BROADCAST> mtu 1500`).join("\n"), stderr: "" };
    if (argv[1] === "netns" && argv[2] === "del") {
      if (refuse.includes(argv[3]!)) return { code: 1, stdout: "", stderr: `Cannot remove namespace file "/run/netns/${argv[3]}": Device or resource busy` };
      namespaces.splice(namespaces.indexOf(argv[3]!), 1);
    }
    if (argv[1] === "link" && argv[2] === "del") links.splice(links.indexOf(argv[3]!), 1);
    return { code: 0, stdout: "", stderr: "" };
  };
  return { exec, calls, dels: () => calls.filter((c) => c.includes(" del ")) };
}

/** Three runs on one machine: the one to finish (half torn down), another dead one, a live one; and a stray of no record. */
function machineWithRuns(refuse: (names: ReturnType<typeof runNames>) => string[] = () => []) {
  const records = tempDir("latlab-records-");
  const tmp = tempDir("latlab-cleanup-tmp-");
  const mine = runNames("killed-in-teardown");
  const other = runNames("other-dead-run");
  const live = runNames("live-run");
  const mineTemp = join(tmp, `latlab-${mine.short}-a`);
  const otherTemp = join(tmp, `latlab-${other.short}-b`);
  for (const d of [mineTemp, otherTemp, join(tmp, `latlab-${live.short}-c`), join(tmp, "latlab-abcdef-d")]) mkdirSync(d);
  // Its teardown stopped half-way: the server's namespace and the client's root link are gone already.
  writeRunRecord({ ...newRunRecord("killed-in-teardown", mine, "/results/mine"), pid: 999_999_99, tempDir: mineTemp }, records);
  writeRunRecord({ ...newRunRecord("other-dead-run", other, "/results/other"), pid: 999_999_98, tempDir: otherTemp }, records);
  writeRunRecord(newRunRecord("live-run", live, "/results/live"), records);
  const machine = fakeMachine(
    [`${mine.namespacePrefix}0-client`, `${other.namespacePrefix}0-client`, `${live.namespacePrefix}0-client`, "ll-abcdef-0-server"],
    [`${mine.rootLinkPrefix}1`, `${other.rootLinkPrefix}0`, `${live.rootLinkPrefix}0`],
    refuse(mine),
  );
  return { records, tmp, mine, other, live, mineTemp, otherTemp, machine };
}

describe("cleanupLocalRun: what is left of one run killed in its teardown", () => {
  it("removes that run's leftovers, reporting each, and nothing of another run (dead or live) or of no record", async () => {
    const m = machineWithRuns();
    const logged: string[] = [];
    const report = await cleanupLocalRun("killed-in-teardown", "/results/mine", ".resume", { exec: m.machine.exec, recordsDir: m.records, tempRoots: [m.tmp], graceMs: 10, log: (l) => logged.push(l) });
    expect(report).toEqual({ status: "ok", errors: [], removed: [`link ${m.mine.rootLinkPrefix}1`, `namespace ${m.mine.namespacePrefix}0-client`, `directory ${m.mineTemp}`] });
    expect(logged).toEqual(report.removed.map((r) => `removed ${r}`));
    expect(m.machine.dels()).toEqual([`ip link del ${m.mine.rootLinkPrefix}1`, `ip netns del ${m.mine.namespacePrefix}0-client`]);
    expect(existsSync(m.mineTemp)).toBe(false);
    // The other dead run, the live run and the stray are as they were.
    expect(existsSync(m.otherTemp)).toBe(true);
    expect(existsSync(join(m.tmp, `latlab-${m.live.short}-c`))).toBe(true);
    expect(existsSync(join(m.tmp, "latlab-abcdef-d"))).toBe(true);
    expect(readRunRecords(m.records).records.map((r) => r.runId).sort()).toEqual(["live-run", "other-dead-run"]);
  });

  it("a resume of the run (its record under <runDir>/.resume) counts as the run's; a removal that fails is reported with what is left, the record kept", async () => {
    const m = machineWithRuns((mine) => [`${mine.namespacePrefix}0-client`]);
    // A resume of the run died too, leaving hosts under its own run id.
    const resume = runNames("resume-of-it");
    writeRunRecord({ ...newRunRecord("resume-of-it", resume, "/results/mine/.resume"), pid: 999_999_97 }, m.records);
    const report = await cleanupLocalRun("killed-in-teardown", "/results/mine", ".resume", { exec: m.machine.exec, recordsDir: m.records, tempRoots: [m.tmp], graceMs: 10, log: () => {} });
    expect(report.status).toBe("failed");
    expect(report.removed).toEqual([`link ${m.mine.rootLinkPrefix}1`, `directory ${m.mineTemp}`]);
    expect(report.errors).toEqual([
      `\`ip netns del ${m.mine.namespacePrefix}0-client\`: Cannot remove namespace file "/run/netns/${m.mine.namespacePrefix}0-client": Device or resource busy`,
      `still left: namespace ${m.mine.namespacePrefix}0-client (\`latlab cleanup\` tries again)`,
    ]);
    // The failed run's record stays for `latlab cleanup`; the resume's (nothing left) is gone; the others untouched.
    expect(readRunRecords(m.records).records.map((r) => r.runId).sort()).toEqual(["killed-in-teardown", "live-run", "other-dead-run"]);
    expect(m.machine.dels()).not.toContain(`ip netns del ${m.other.namespacePrefix}0-client`);
  });
});
