/**
 * latlab as an ordinary Pulumi project (Pulumi.yaml at the repository's root, entry
 * src/targets/azure/program/azureEntry.ts), driven by the real Pulumi CLI (v3.259.0, built by
 * shared/tools/pulumi/install.sh) against latlab's Azure emulator: the emulator's
 * `pulumi-resource-azure-native` first on PATH, a file backend, PULUMI_HOME and the stack's
 * config in a temp folder (the stack's config file never lands in the repository: every command
 * that takes --config-file gets one outside it, and `pulumi stack init`, which has no such flag,
 * runs in a temp copy of Pulumi.yaml).
 *
 * The CLI runs in a network namespace of its own with only loopback (the engine and its plugins
 * talk over 127.0.0.1; ARM is the emulator's Unix socket): nothing the CLI might try (update
 * checks, plugin downloads) can leave the machine. This test's own SSH goes to the emulator's
 * public addresses only. Needs root (CI has it).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TYPES } from "../../src/targets/azure/emulator/arm/typeRules.ts";
import { PLUGIN_BIN_DIR, startEmulator, type RunningEmulator } from "../../src/targets/azure/emulator/emulator.ts";
import { AZURE_READY_COMMAND } from "../../src/targets/azure/access/probe.ts";
import { execCommand, type ExecResult } from "../../src/targets/local/exec.ts";
import { namespaces, processesMentioning, rsaKey, run, sshConnect, sshRun, type KeyPair } from "./azureEmulatorHelpers.ts";
import { pulumiBinDir } from "./pulumiCli.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const STACK = `emu-${process.pid}`;
const NETNS = `llpu${process.pid}`;
const stackFiles = () => readdirSync(ROOT).filter((f) => /^Pulumi\..+\.ya?ml$/.test(f));

let emulator: RunningEmulator | undefined;
let stopReport: Awaited<ReturnType<RunningEmulator["stop"]>> | undefined;
let work = "";
let configFile = "";
let env: NodeJS.ProcessEnv = {};
let clientKey: KeyPair;
let stackFilesBefore: string[] = [];
let netnsMade = false;
let stackMade = false;

interface Host {
  deployment: string;
  role: string;
  publicIp: string;
  privateIp: string;
  hostKey: string;
  vmName: string;
}
let hosts: Host[] = [];
/** How many resources `pulumi up` created (the stack resource included). */
let created = 0;

const running = new Set<ChildProcess>();

/**
 * `pulumi <args>` with `cwd` (default: the repository's root) in the CLI's own network
 * namespace, in a process group of its own (which afterAll kills should a test time out).
 */
function pulumi(args: string[], cwd = ROOT): Promise<ExecResult> {
  return new Promise((resolvePromise) => {
    const child = spawn("ip", ["netns", "exec", NETNS, "pulumi", "--non-interactive", "--color", "never", ...args], { cwd, env: { ...env, PWD: cwd }, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    running.add(child);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout!.on("data", (c: Buffer) => out.push(c));
    child.stderr!.on("data", (c: Buffer) => err.push(c));
    const done = (code: number, extra = "") => {
      running.delete(child);
      resolvePromise({ code, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") + extra });
    };
    child.once("error", (e) => done(127, e.message));
    child.once("close", (code, signal) => done(code ?? 128, signal ? `killed by ${signal}` : ""));
  });
}

/** What a failed command said, for an assertion's message. */
const said = (r: ExecResult) => `exit ${r.code}\n--- stdout\n${r.stdout.slice(-6000)}\n--- stderr\n${r.stderr.slice(-4000)}`;
const stackArgs = () => ["--stack", STACK, "--config-file", configFile];

beforeAll(async () => {
  stackFilesBefore = stackFiles();
  const pulumiBin = pulumiBinDir();
  work = mkdtempSync(join(tmpdir(), "latlab-pulumi-"));
  for (const d of ["home", "state", "project"]) mkdirSync(join(work, d));
  // Only for `pulumi stack init`: it writes the stack's file (its encryption salt) next to the Pulumi.yaml it finds.
  copyFileSync(join(ROOT, "Pulumi.yaml"), join(work, "project", "Pulumi.yaml"));
  configFile = join(work, "project", `Pulumi.${STACK}.yaml`);
  clientKey = await rsaKey(work);
  emulator = await startEmulator();
  await run(["ip", "netns", "add", NETNS]);
  netnsMade = true;
  await run(["ip", "-n", NETNS, "link", "set", "lo", "up"]);
  env = {
    ...process.env,
    ...emulator.env({ ...process.env, PATH: `${pulumiBin}:${process.env.PATH ?? ""}` }),
    PULUMI_HOME: join(work, "home"),
    PULUMI_BACKEND_URL: `file://${join(work, "state")}`,
    PULUMI_CONFIG_PASSPHRASE: "latlab-emulator-test",
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
  };
  const init = await pulumi(["stack", "init", STACK], join(work, "project"));
  expect(init.code, said(init)).toBe(0);
  stackMade = true;
  expect(existsSync(configFile)).toBe(true);
  const seed = randomBytes(32).toString("hex");
  for (const [key, value, secret] of [
    ["latlab:sshFrom", `${emulator.runnerAddress}/32`, false],
    ["latlab:sshPublicKey", clientKey.publicKey, false],
    ["latlab:hostKeySeed", seed, true],
    ["latlab:addressSpace", emulator.addressSpace, false],
    ["azure-native:location", "eastus", false],
  ] as const) {
    const r = await pulumi(["config", "set", ...stackArgs(), ...(secret ? ["--secret"] : []), key, value]);
    expect(r.code, said(r)).toBe(0);
  }
}, 300_000);

afterAll(async () => {
  for (const child of running) {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  // Safety net: the tests destroy, remove the stack and stop the emulator; this only acts if they did not get there.
  if (emulator && !stopReport) {
    if (stackMade) {
      await pulumi(["destroy", "--yes", "--skip-preview", ...stackArgs()]);
      await pulumi(["stack", "rm", "--yes", "--force", "--stack", STACK]);
    }
    await emulator.stop();
  }
  if (netnsMade) await execCommand(["ip", "netns", "del", NETNS]);
  if (work) rmSync(work, { recursive: true, force: true });
}, 900_000);

describe("latlab as an ordinary Pulumi project, on the Azure emulator (real Pulumi CLI)", () => {
  it("pulumi preview -c latlab:experiment=ppg-vs-zone lists the azure-native resources, served by the emulator's plugin, and creates nothing", async () => {
    const r = await pulumi(["preview", ...stackArgs(), "-c", "latlab:experiment=ppg-vs-zone"]);
    expect(r.code, said(r)).toBe(0);
    expect(r.stdout).toContain(`using pulumi-resource-azure-native from $PATH at ${PLUGIN_BIN_DIR}pulumi-resource-azure-native`);
    const planned = (type: string) => r.stdout.split("\n").filter((l) => new RegExp(`^\\s*\\+\\s+azure-native:${type} `).test(l)).length;
    // ppg-vs-zone: two deployments (ppg=false, ppg=true) of a client and a server, one VNet in eastus, one PPG.
    expect(planned("compute:VirtualMachine")).toBe(4);
    expect(planned("network:NetworkInterface")).toBe(4);
    expect(planned("network:PublicIPAddress")).toBe(4);
    expect(planned("network:NetworkSecurityGroup")).toBe(4);
    expect(planned("network:Subnet")).toBe(2);
    expect(planned("network:VirtualNetwork")).toBe(1);
    expect(planned("compute:ProximityPlacementGroup")).toBe(1);
    expect(planned("resources:ResourceGroup")).toBe(1);
    expect(emulator!.cloud.all()).toEqual([]);
  });

  it("pulumi up --yes builds it: the stack outputs name hosts with addresses the emulator handed out, a VM per host in ARM, each reachable over SSH with its pinned host key", async () => {
    const r = await pulumi(["up", "--yes", ...stackArgs(), "-c", "latlab:experiment=ppg-vs-zone"]);
    expect(r.code, said(r)).toBe(0);
    created = Number(/^\s*\+ (\d+) created$/m.exec(r.stdout)?.[1] ?? 0);
    expect(created).toBe(22);
    const out = await pulumi(["stack", "output", "--json", "--stack", STACK]);
    expect(out.code, said(out)).toBe(0);
    const outputs = JSON.parse(out.stdout) as { resourceGroup: string; hosts: Host[] };
    hosts = outputs.hosts;
    expect(outputs.resourceGroup).toBe(`latlab-${STACK}`);
    expect(hosts.map((h) => `${h.deployment}/${h.role}`).sort()).toEqual(["ppg=false/client", "ppg=false/server", "ppg=true/client", "ppg=true/server"]);

    const block = `${emulator!.runnerAddress.split(".").slice(0, 3).join(".")}.`;
    for (const h of hosts) {
      expect(h.publicIp.startsWith(block), `${h.vmName}: public IP ${h.publicIp} outside the emulator's ${block}0/24`).toBe(true);
      expect(h.privateIp).toMatch(/^198\.18\.\d+\.\d+$/);
      expect(h.hostKey).toMatch(/^ssh-ed25519 /);
    }
    expect(new Set(hosts.map((h) => h.publicIp)).size).toBe(4);

    const vms = emulator!.cloud.all(TYPES.vm);
    expect(vms.map((v) => v.name).sort()).toEqual(hosts.map((h) => h.vmName).sort());
    expect(vms.every((v) => v.state === "Succeeded")).toBe(true);
    // The public IPs ARM holds are the ones in the outputs.
    const armIps = emulator!.cloud.all(TYPES.publicIp).map((p) => (p.body.properties as { ipAddress?: string }).ipAddress);
    expect(armIps.sort()).toEqual(hosts.map((h) => h.publicIp).sort());

    // The hosts are real: SSH from the runner's address (latlab:sshFrom), the host key pinned from the outputs.
    for (const h of hosts) {
      const ssh = await sshConnect(h.publicIp, clientKey, h.hostKey);
      try {
        const hostname = (await sshRun(ssh, "hostname")).trim();
        expect(hostname).toBe(h.vmName.replace(`latlab-${STACK}-`, ""));
        await sshRun(ssh, AZURE_READY_COMMAND);
      } finally {
        ssh.dispose();
      }
    }
  });

  it("a second pulumi preview shows no changes (--expect-no-changes)", async () => {
    const r = await pulumi(["preview", "--expect-no-changes", "--diff", ...stackArgs()]);
    // On failure: which resources would change, and the property changes behind it (the --diff lines with "=>").
    const changes = [...new Set(r.stdout.split("\n").filter((l) => /^\s*[~+-]{1,2}\s*azure-native:|=>|^\s*(~|\+|-|\+-)\s*\d+ to /.test(l)).map((l) => l.trim()))];
    expect(r.code, `exit ${r.code}; ${r.stderr.trim().split("\n").pop()}\n${changes.join("\n")}`).toBe(0);
    expect(Number(/^\s*(\d+) unchanged$/m.exec(r.stdout)?.[1])).toBe(created);
  });

  it("pulumi destroy --yes empties the emulator's ARM, and pulumi stack rm --yes removes the stack", async () => {
    const r = await pulumi(["destroy", "--yes", ...stackArgs()]);
    expect(r.code, said(r)).toBe(0);
    expect(emulator!.cloud.all().map((x) => `${x.type} ${x.name} (${x.state})`)).toEqual([]);
    const rm = await pulumi(["stack", "rm", "--yes", "--stack", STACK]);
    expect(rm.code, said(rm)).toBe(0);
    stackMade = false;
    const ls = await pulumi(["stack", "ls", "--json"]);
    expect(ls.code, said(ls)).toBe(0);
    expect((JSON.parse(ls.stdout) as { name: string }[]).map((s) => s.name)).not.toContain(STACK);
  });

  it("stops the emulator and leaves nothing: no namespace, process, temp folder, or stack file in the repository", async () => {
    const { home, socketPath, namespacePrefix } = emulator!;
    expect(await run(["ip", "-4", "-o", "addr", "show", "dev", `${namespacePrefix}i`])).toContain(` ${emulator!.runnerAddress}/30 `);
    stopReport = await emulator!.stop();
    expect(stopReport.leftInArm).toEqual([]);
    expect(stopReport.errors).toEqual([]);
    expect((await namespaces()).filter((n) => n.startsWith(namespacePrefix))).toEqual([]);
    expect((await execCommand(["ip", "link", "show", "dev", `${namespacePrefix}i`])).code).not.toBe(0);
    await run(["ip", "netns", "del", NETNS]);
    netnsMade = false;
    expect(await namespaces()).not.toContain(NETNS);
    expect(existsSync(home)).toBe(false);
    expect(existsSync(socketPath)).toBe(false);
    expect(processesMentioning(home)).toEqual([]);
    expect(processesMentioning(work)).toEqual([]);

    // Pulumi worked in the temp PULUMI_HOME, not in the machine's ~/.pulumi.
    expect(readdirSync(join(work, "home"))).toContain("workspaces");
    const machineWorkspaces = join(homedir(), ".pulumi", "workspaces");
    const mentioning = existsSync(machineWorkspaces) ? readdirSync(machineWorkspaces).filter((f) => readFileSync(join(machineWorkspaces, f), "utf8").includes(STACK)) : [];
    expect(mentioning).toEqual([]);
    // The stack's config stayed out of the repository.
    expect(existsSync(join(ROOT, `Pulumi.${STACK}.yaml`))).toBe(false);
    expect(stackFiles()).toEqual(stackFilesBefore);

    rmSync(work, { recursive: true, force: true });
    expect(existsSync(work)).toBe(false);
  });
});
