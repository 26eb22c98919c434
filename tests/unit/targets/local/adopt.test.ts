/**
 * LocalTarget.adopt: taking over the hosts a dead run left up (`latlab resume`), on a fake
 * machine. The real thing — SIGKILL, re-attach, collection — is tests/integration/resume.test.ts.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildPlan, defineExperiment } from "../../../../src/index.ts";
import type { ExecFn } from "../../../../src/targets/local/exec.ts";
import { LocalTarget } from "../../../../src/targets/local/localTarget.ts";
import { runNames } from "../../../../src/targets/local/network/names.ts";
import { newRunRecord, readRunRecords, writeRunRecord, type RunRecord } from "../../../../src/targets/local/recovery/runRecord.ts";
import { readSavedEnvironment, saveEnvironment } from "../../../../src/targets/local/recovery/savedEnvironment.ts";
import type { Environment } from "../../../../src/targets/target.ts";
import { tempDirs } from "../../../tempDirs.ts";

const tempDir = tempDirs();

const plan = buildPlan(
  defineExperiment({ name: "adopt", description: "two deployments", axes: { ppg: [false, true] }, hosts: { client: {}, server: {} }, measure: [{ tool: "ping" }] }),
);

function machine(present: string[]) {
  const calls: string[] = [];
  const namespaces = [...present];
  const exec: ExecFn = async (argv) => {
    const line = argv.join(" ");
    calls.push(line);
    if (argv[0] === "ip" && argv[1] === "netns" && argv[2] === "del") namespaces.splice(namespaces.indexOf(argv[3]!), 1);
    if (line === "ip netns list") return { code: 0, stdout: namespaces.map((n) => `${n} (id: 1)`).join("\n"), stderr: "" };
    if (line === "ip -o link show") return { code: 0, stdout: "", stderr: "" };
    return { code: 0, stdout: "", stderr: "" };
  };
  return { exec, calls };
}

/** A dead run's record with its hosts saved, as a run leaves them when its runner is SIGKILLed. */
function deadRun() {
  const records = tempDir("latlab-records-");
  const names = runNames("run-dead");
  const tempDirPath = join(tempDir("latlab-tmp-"), `latlab-${names.short}-x`);
  const keysDir = join(tempDir("latlab-keys-"), `latlab-${names.short}-y`);
  mkdirSync(tempDirPath, { recursive: true });
  mkdirSync(keysDir, { recursive: true });
  const namespaces = plan.deployments.flatMap((d, i) => d.hosts.map((h) => `${names.namespacePrefix}d${i}-${h.role}`));
  const environment: Environment = {
    hosts: plan.deployments.flatMap((d, i) =>
      d.hosts.map((h) => ({
        deployment: d.id,
        role: h.role,
        ssh: { host: `198.18.${i}.2`, port: 22, username: "root", privateKey: "KEY" },
        hostKey: "ssh-ed25519 AAAA",
        privateAddress: `198.18.${10 + i}.4`,
        workDir: `/tmp/w/${h.role}`,
        actual: { namespace: `${names.namespacePrefix}d${i}-${h.role}`, zone: "1" },
      })),
    ),
    shaping: { latency: "unavailable", bandwidth: "not-applicable", note: "shaping: no netem" },
    facts: { kernel: "6.1" },
  };
  const record: RunRecord = {
    ...newRunRecord("run-dead", names, "/results/run-dead"),
    pid: 999_999_999,
    pidStartTicks: "1",
    tempDir: tempDirPath,
    keysDir,
    environmentFile: saveEnvironment(keysDir, "run-dead", environment),
  };
  writeRunRecord(record, records);
  // The roots this run's folders were made in, and sshds that answer.
  const options = { recordsDir: records, tempRoot: dirname(tempDirPath), keysRoot: dirname(keysDir), sshAnswers: async () => true };
  return { records, record, namespaces, keysDir, tempDirPath, options };
}

describe("LocalTarget.adopt", () => {
  it("takes over a dead run's hosts: up() gives their saved endpoints, the record names this process, down() removes them and the record", async () => {
    const { records, record, namespaces, keysDir, tempDirPath, options } = deadRun();
    const m = machine(namespaces);
    const target = new LocalTarget({ exec: m.exec, ...options, killGraceMs: 0 });
    const logs: string[] = [];
    await target.adopt(record, (l) => logs.push(l));
    expect(logs.join("\n")).toMatch(/re-attached to the 4 hosts run run-dead left up \(its runner, pid 999999999, died\)/);
    expect(readRunRecords(records).records[0]).toMatchObject({ runId: "run-dead", pid: process.pid, ended: null });
    // Only the deployment the resume needs, with the run's own endpoints.
    const only = { ...plan, deployments: plan.deployments.slice(1), cells: plan.cells.filter((c) => c.deployment === plan.deployments[1]!.id) };
    const env = await target.up(only, { runId: "resume-1", runDir: "/results/run-dead/.resume", log: () => undefined });
    expect(env.hosts.map((h) => `${h.deployment}/${h.role}`)).toEqual(["ppg=true/client", "ppg=true/server"]);
    expect(env.hosts[0]!.ssh).toEqual({ host: "198.18.1.2", port: 22, username: "root", privateKey: "KEY" });
    expect(env.facts.reattached).toMatch(/the hosts run run-dead brought up at .* re-attached: the same hosts, not a new draw/);
    expect(m.calls.some((c) => c.startsWith("ip netns add"))).toBe(false);
    const report = await target.down();
    expect(report.status).toBe("ok");
    for (const ns of namespaces) expect(m.calls).toContain(`ip netns del ${ns}`);
    expect(existsSync(keysDir) || existsSync(tempDirPath)).toBe(false);
    expect(readRunRecords(records).records).toEqual([]);
  });

  it("refuses, saying why, a run whose runner lives, one that died before its hosts were all up, and hosts no longer all there", async () => {
    const { records, record, namespaces, options } = deadRun();
    const m = machine(namespaces);
    const fresh = () => new LocalTarget({ exec: m.exec, ...options });
    await expect(fresh().adopt({ ...record, pid: process.pid, pidStartTicks: newRunRecord("x", runNames("x"), null).pidStartTicks })).rejects.toThrow(/run run-dead's runner \(pid \d+\) is alive/);
    await expect(fresh().adopt({ ...record, environmentFile: null })).rejects.toThrow(/died before all its hosts were up/);
    await expect(fresh().adopt({ ...record, ended: "failed" })).rejects.toThrow(/own teardown ran \(failed\)/);
    // A record naming what down() must never remove: another prefix, a folder that is no run's.
    await expect(fresh().adopt({ ...record, namespacePrefix: "ll-" })).rejects.toThrow(/names things no run of that id makes/);
    await expect(fresh().adopt({ ...record, tempDir: "/home/someone" })).rejects.toThrow(/names things no run of that id makes/);
    await expect(fresh().adopt({ ...record, runId: "run-other" })).rejects.toThrow(/names things no run of that id makes/);
    const gone = new LocalTarget({ exec: machine(namespaces.slice(1)).exec, ...options });
    await expect(gone.adopt(record)).rejects.toThrow(new RegExp(`namespaces gone: ${namespaces[0]}`));
    const silent = new LocalTarget({ exec: m.exec, ...options, sshAnswers: async (host) => host !== "198.18.1.2" });
    await expect(silent.adopt(record)).rejects.toThrow(/do not all answer SSH any more: ppg=true\/client \(198\.18\.1\.2:22\), ppg=true\/server/);
    // None of these took the record over.
    expect(readRunRecords(records).records[0]!.pid).toBe(999_999_999);
    const target = fresh();
    await target.adopt(record);
    const other = buildPlan(defineExperiment({ name: "o", description: "other roles", hosts: { client: {}, server: {} }, measure: [{ tool: "ping" }] }));
    await expect(target.up(other, { runId: "r", runDir: "/x", log: () => undefined })).rejects.toThrow(new RegExp(`do not include ${other.deployments[0]!.id}/client, ${other.deployments[0]!.id}/server`));
    await target.down();
  });

  it("the saved environment: round trip, and a broken file named with what is wrong", () => {
    const { record } = deadRun();
    const saved = readSavedEnvironment(record.environmentFile!);
    expect(saved.runId).toBe("run-dead");
    expect(saved.hosts).toHaveLength(4);
    expect(readFileSync(record.environmentFile!, "utf8")).not.toContain("probe");
    writeFileSync(record.environmentFile!, JSON.stringify({ ...saved, hosts: [{ role: "client" }] }));
    expect(() => readSavedEnvironment(record.environmentFile!)).toThrow(new RegExp(`${record.environmentFile}: does not match its schema[\\s\\S]*hosts`));
    writeFileSync(record.environmentFile!, "{");
    expect(() => readSavedEnvironment(record.environmentFile!)).toThrow(/not readable as JSON/);
  });
});
