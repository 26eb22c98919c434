/**
 * Emulated Azure VMs for real: three VMs booted in namespaces this test creates, each wired by a
 * veth pair to a "client" namespace (also this test's), with latlab's real customData. Everything
 * is checked from the client namespace (ssh, ssh-keyscan) or inside a VM over SSH; nothing
 * connects from the root namespace, and IMDS (169.254.169.254) is only ever asked from inside a
 * VM. Needs root (CI has it). Addresses: 198.18.0.0/28.
 */
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { customData } from "../../src/targets/azure/program/cloudInit.ts";
import { AZURE_PROBE_COMMAND, AZURE_READY_COMMAND, IMDS_COMPUTE_FETCH, parseAzureProbe } from "../../src/targets/azure/access/probe.ts";
import { bootVm, stopVm, type BootedVm } from "../../src/targets/azure/emulator/vm/bootVm.ts";
import { execCommand } from "../../src/targets/local/exec.ts";
import { namespacePids } from "../../src/targets/local/network/namespaceProcesses.ts";

const ADMIN = "azureuser";
const TAG = `${process.pid % 100000}`;
const CLIENT_NS = `llvm${TAG}c`;
const sh = (file: string, args: string[]) => execFileSync(file, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface VmCase {
  key: "main" | "never" | "pkg";
  namespace: string;
  vmAddress: string;
  clientAddress: string;
  computerName: string;
  hostKeyPath: string;
  stateDir: string;
  vm?: BootedVm;
}

let work = "";
let clientKey = "";
const cases: VmCase[] = (["main", "never", "pkg"] as const).map((key, i) => ({
  key,
  namespace: `llvm${TAG}${i}`,
  vmAddress: `198.18.0.${4 * i + 2}`,
  clientAddress: `198.18.0.${4 * i + 1}`,
  computerName: `d${i}-${key === "main" ? "client" : key}`,
  hostKeyPath: "",
  stateDir: "",
}));
const byKey = (k: VmCase["key"]) => cases.find((c) => c.key === k)!;
const publicKey = (c: VmCase) => readFileSync(`${c.hostKeyPath}.pub`, "utf8").trim().split(/\s+/).slice(0, 2).join(" ");
const COMPUTE = (c: VmCase) => ({
  vmId: `00000000-0000-4000-8000-00000000000${cases.indexOf(c)}`,
  name: c.computerName,
  location: "uksouth",
  zone: "1",
  vmSize: "Standard_B1s",
  osType: "Linux",
  osProfile: { adminUsername: ADMIN, computerName: c.computerName, disablePasswordAuthentication: "true" },
});

/** What the machine looks like where a VM must never write. */
function machineSnapshot() {
  const hash = (p: string) => (existsSync(p) ? createHash("sha256").update(readFileSync(p)).digest("hex") : "absent");
  return {
    passwd: hash("/etc/passwd"),
    group: hash("/etc/group"),
    hosts: hash("/etc/hosts"),
    machineId: hash("/etc/machine-id"),
    sudoersD: readdirSync("/etc/sudoers.d").sort(),
    etcSsh: readdirSync("/etc/ssh").sort(),
    sshdConfigD: existsSync("/etc/ssh/sshd_config.d") ? readdirSync("/etc/ssh/sshd_config.d").sort() : [],
    home: readdirSync("/home").sort(),
    varLibLatlab: existsSync("/var/lib/latlab"),
    varLibCloud: existsSync("/var/lib/cloud"),
    cloudInitLog: existsSync("/var/log/cloud-init-output.log"),
    usrLocalBin: readdirSync("/usr/local/bin").sort(),
    hostname: hostname(),
  };
}
let before: ReturnType<typeof machineSnapshot>;

/** Runs `command` on a VM as the admin user, from the client namespace, pinning the given host key. */
async function ssh(c: VmCase, command: string, timeoutMs = 20_000) {
  return execCommand(
    [
      "ip",
      "netns",
      "exec",
      CLIENT_NS,
      "ssh",
      "-F",
      "/dev/null",
      "-i",
      clientKey,
      "-o",
      "IdentitiesOnly=yes",
      "-o",
      "BatchMode=yes",
      "-o",
      `UserKnownHostsFile=${join(work, `known_hosts_${c.key}`)}`,
      "-o",
      "GlobalKnownHostsFile=/dev/null",
      "-o",
      "StrictHostKeyChecking=yes",
      "-o",
      "ConnectTimeout=5",
      "-o",
      "LogLevel=ERROR",
      `${ADMIN}@${c.vmAddress}`,
      command,
    ],
    { timeoutMs },
  );
}

async function run(argv: string[]) {
  const r = await execCommand(argv);
  if (r.code !== 0) throw new Error(`${argv.join(" ")}: ${r.stderr}`);
  return r.stdout;
}

beforeAll(async () => {
  before = machineSnapshot();
  expect(readFileSync("/etc/passwd", "utf8")).not.toMatch(new RegExp(`^${ADMIN}:`, "m"));
  work = mkdtempSync(join(tmpdir(), "latlab-vmit-"));
  clientKey = join(work, "client_rsa");
  await run(["ssh-keygen", "-q", "-t", "rsa", "-b", "3072", "-N", "", "-C", "latlab-test-client", "-f", clientKey]);
  await run(["ip", "netns", "add", CLIENT_NS]);
  await run(["ip", "-n", CLIENT_NS, "link", "set", "lo", "up"]);
  for (const [i, c] of cases.entries()) {
    c.hostKeyPath = join(work, `host_${c.key}`);
    c.stateDir = join(work, `vm-${c.key}`);
    await run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", `latlab-host-${c.computerName}`, "-f", c.hostKeyPath]);
    await run(["sh", "-c", 'printf "%s %s\\n" "$1" "$2" > "$3"', "-", c.vmAddress, publicKey(c), join(work, `known_hosts_${c.key}`)]);
    const vmEnd = `lv${TAG}v${i}`;
    const clientEnd = `lv${TAG}c${i}`;
    await run(["ip", "netns", "add", c.namespace]);
    await run(["ip", "-n", c.namespace, "link", "add", vmEnd, "type", "veth", "peer", "name", clientEnd, "netns", CLIENT_NS]);
    await run(["ip", "-n", c.namespace, "link", "set", vmEnd, "name", "eth0"]);
    await run(["ip", "-n", c.namespace, "addr", "add", `${c.vmAddress}/30`, "dev", "eth0"]);
    await run(["ip", "-n", c.namespace, "link", "set", "eth0", "up"]);
    await run(["ip", "-n", c.namespace, "route", "add", "default", "via", c.clientAddress]);
    await run(["ip", "-n", CLIENT_NS, "addr", "add", `${c.clientAddress}/30`, "dev", clientEnd]);
    await run(["ip", "-n", CLIENT_NS, "link", "set", clientEnd, "up"]);
  }
  // The three boot at once, as ARM would create them.
  const booted = await Promise.all(
    cases.map((c) =>
      bootVm({
        namespace: c.namespace,
        stateDir: c.stateDir,
        computerName: c.computerName,
        adminUsername: ADMIN,
        sshPublicKeys: [{ path: `/home/${ADMIN}/.ssh/authorized_keys`, keyData: readFileSync(`${clientKey}.pub`, "utf8") }],
        customData: customData({
          hostName: c.computerName,
          hostKey: { privateKey: readFileSync(c.hostKeyPath, "utf8"), publicKey: publicKey(c) },
          ...(c.key === "pkg" ? { packages: ["iperf3", "latlab-no-such-package"] } : {}),
        }),
        imds: { compute: COMPUTE(c), network: { interface: [{ ipv4: { ipAddress: [{ privateIpAddress: c.vmAddress, publicIpAddress: "" }] } }] } },
        ...(c.key === "never" ? { faults: { neverReady: true } } : {}),
      }),
    ),
  );
  booted.forEach((vm, i) => (cases[i]!.vm = vm));
});

afterAll(async () => {
  // Safety net: the last test tears down and checks; this only acts if it did not get there.
  for (const c of cases) if (c.stateDir) await stopVm(c.namespace, c.stateDir);
  for (const ns of [...cases.map((c) => c.namespace), CLIENT_NS]) await execCommand(["ip", "netns", "del", ns]);
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("emulated Azure VM (bootVm)", () => {
  it("serves exactly the host key cloud-init was given, and reports it", async () => {
    const c = byKey("main");
    expect(c.vm!.hostKeys).toEqual([publicKey(c)]);
    expect(c.vm!.privateAddress).toBe(c.vmAddress);
    const scan = await execCommand(["ip", "netns", "exec", CLIENT_NS, "ssh-keyscan", "-T", "5", "-t", "rsa,ecdsa,ed25519", c.vmAddress]);
    const offered = scan.stdout.split("\n").filter((l) => l.trim() && !l.startsWith("#"));
    expect(offered).toEqual([`${c.vmAddress} ${publicKey(c)}`]);
  });

  it("lets the admin in with the client key: its own hostname, passwordless sudo, home and key files", async () => {
    const c = byKey("main");
    const r = await ssh(
      c,
      [
        "hostname",
        "id -un",
        "sudo -n true && echo sudo-ok",
        "stat -c '%a %U:%G' ~ ~/.ssh ~/.ssh/authorized_keys",
        "getent passwd azureuser | cut -d: -f6,7",
        "id -nG",
      ].join("; "),
    );
    expect(r.stderr).toBe("");
    const [host, user, sudo, homeMode, sshMode, keysMode, passwd, groups] = r.stdout.trim().split("\n");
    expect(host).toBe(c.computerName);
    expect(user).toBe(ADMIN);
    expect(sudo).toBe("sudo-ok");
    // The mode is the machine's useradd policy (login.defs HOME_MODE: 0750 on Ubuntu 24.04, umask 022 on Debian 12).
    expect(homeMode).toMatch(new RegExp(`^7[0-5][0-5] ${ADMIN}:${ADMIN}$`));
    expect([sshMode, keysMode]).toEqual([`700 ${ADMIN}:${ADMIN}`, `600 ${ADMIN}:${ADMIN}`]);
    expect(passwd).toBe(`/home/${ADMIN}:/bin/bash`);
    expect(groups!.split(" ")).toEqual(expect.arrayContaining(["sudo", "adm"]));
  });

  it("refuses root and a client without the key", async () => {
    const c = byKey("main");
    const asRoot = await execCommand([
      "ip", "netns", "exec", CLIENT_NS, "ssh", "-F", "/dev/null", "-i", clientKey, "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
      "-o", `UserKnownHostsFile=${join(work, "known_hosts_main")}`, "-o", "StrictHostKeyChecking=yes", `root@${c.vmAddress}`, "true",
    ]);
    expect(asRoot.code).toBe(255);
    const noKey = await execCommand([
      "ip", "netns", "exec", CLIENT_NS, "ssh", "-F", "/dev/null", "-o", "IdentitiesOnly=yes", "-o", "IdentityFile=/dev/null", "-o", "BatchMode=yes",
      "-o", `UserKnownHostsFile=${join(work, "known_hosts_main")}`, "-o", "StrictHostKeyChecking=yes", `${ADMIN}@${c.vmAddress}`, "true",
    ]);
    expect(noKey.code).toBe(255);
    expect(noKey.stderr).toMatch(/Permission denied \(publickey\)/);
  });

  it("finishes cloud-init and writes latlab's ready marker (the runner's readiness command passes)", async () => {
    const c = byKey("main");
    const ready = await ssh(c, AZURE_READY_COMMAND);
    expect(ready).toMatchObject({ code: 0, stderr: "" });
    const status = await ssh(c, "cloud-init status --long; echo rc=$?");
    expect(status.stdout).toMatch(/^status: done\nextended_status: done\nboot_status_code: enabled-by-generator\n/);
    expect(status.stdout).toMatch(/detail: DataSourceAzure \[seed=\/dev\/sr0\]\nerrors: \[\]\n/);
    expect(status.stdout).toMatch(/rc=0\n$/);
  });

  it("has the write_files with their permissions, and only the given host key in /etc/ssh", async () => {
    const c = byKey("main");
    const r = await ssh(c, "stat -c '%a %U:%G %n' /etc/ssh/sshd_config.d/60-latlab.conf /etc/sysctl.d/90-latlab.conf; cat /etc/ssh/sshd_config.d/60-latlab.conf; ls /etc/ssh | grep ssh_host_");
    expect(r.stdout).toBe(
      [
        "644 root:root /etc/ssh/sshd_config.d/60-latlab.conf",
        "644 root:root /etc/sysctl.d/90-latlab.conf",
        "HostKey /etc/ssh/ssh_host_ed25519_key",
        "PermitRootLogin no",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "ssh_host_ed25519_key",
        "ssh_host_ed25519_key.pub",
        "",
      ].join("\n"),
    );
  });

  it("answers IMDS inside the VM, with the Metadata header only", async () => {
    const c = byKey("main");
    const doc = await ssh(c, IMDS_COMPUTE_FETCH);
    expect(JSON.parse(doc.stdout)).toEqual(COMPUTE(c));
    const bare = await ssh(c, "curl -s -m 10 --noproxy '*' -w ' %{http_code}' 'http://169.254.169.254/metadata/instance/compute?api-version=2021-02-01'");
    expect(bare.stdout).toBe('{"error":"Bad request. Required metadata header not specified"} 400');
    // latlab's own probe, end to end.
    const probe = parseAzureProbe((await ssh(c, AZURE_PROBE_COMMAND)).stdout);
    expect(probe).toMatchObject({ region: "uksouth", zone: "1", size: "Standard_B1s", accelnet: false, imdsVmId: COMPUTE(c).vmId });
    expect(probe.probeError).toBeUndefined();
  });

  it("runs the VM's processes in its own PID namespace", async () => {
    const r = await ssh(byKey("main"), "ps -eo pid=,comm= | sort -n | head -2");
    expect(r.stdout.trim().split("\n").map((l) => l.trim())).toEqual(["1 python3", "2 python3"]);
  });

  it("neverReady: cloud-init hangs in runcmd, status stays running, no marker", async () => {
    const c = byKey("never");
    // Wait (safety net only) until the hang itself is running: from then on nothing of runcmd runs.
    for (let i = 0; i < 200; i++) {
      if ((await ssh(c, "ps -eo args= | grep -qx 'sleep infinity'")).code === 0) break;
      await sleep(100);
    }
    const r = await ssh(c, "cloud-init status; echo rc=$?; test -f /var/lib/latlab/cloud-init-done && echo marker || echo no-marker; ps -eo args= | grep -cx 'sleep infinity'");
    expect(r.stdout).toBe("status: running\nrc=0\nno-marker\n1\n");
  });

  it("a package the image (Ubuntu 24.04, vm/ubuntu-24.04-packages.json) lacks: status error (as an apt failure), no marker: readiness fails with cloud-init's own words", async () => {
    const c = byKey("pkg");
    const r = await ssh(c, "cloud-init status --wait --long; echo rc=$?");
    expect(r.stdout).toMatch(/^\.*status: error\nextended_status: error - done\n/);
    expect(r.stdout).toContain("Failed to install the following packages: {'latlab-no-such-package'}");
    expect(r.stdout).toMatch(/rc=1\n$/);
    // The ready marker is written only when every package is installed (issue 9, defect 5).
    const ready = await ssh(c, AZURE_READY_COMMAND);
    expect(ready.code).toBe(1);
    expect(ready.stderr).toContain("packages not installed: latlab-no-such-package");
    expect(ready.stderr).toContain("Failed to install the following packages: {'latlab-no-such-package'}");
    expect(ready.stderr).toContain("E: Unable to locate package latlab-no-such-package");
    const log = await ssh(c, "sudo -n grep -c 'E: Unable to locate package latlab-no-such-package' /var/log/cloud-init-output.log");
    expect(log.stdout.trim()).toBe("1");
  });

  it("a VM whose sshd cannot start fails its boot with sshd's words, and leaves nothing behind", async () => {
    const ns = `llvm${TAG}x`;
    const stateDir = join(work, "vm-broken");
    await run(["ip", "netns", "add", ns]);
    try {
      await run(["ip", "-n", ns, "link", "add", "eth0", "type", "veth", "peer", "name", "eth0peer"]);
      await run(["ip", "-n", ns, "addr", "add", "198.18.0.14/30", "dev", "eth0"]);
      await run(["ip", "-n", ns, "link", "set", "eth0", "up"]);
      const broken = [
        "#cloud-config",
        "ssh_genkeytypes: [ed25519]",
        "write_files:",
        "  - path: /etc/ssh/sshd_config.d/99-broken.conf",
        "    content: \"NoSuchSshdOption yes\\n\"",
      ].join("\n");
      const attempt = bootVm({
        namespace: ns,
        stateDir,
        computerName: "d9-broken",
        adminUsername: ADMIN,
        sshPublicKeys: [],
        customData: Buffer.from(broken).toString("base64"),
        imds: { compute: {}, network: {} },
      });
      await expect(attempt).rejects.toThrow(/VM d9-broken: boot failed: sshd refuses the VM's configuration \(sshd -t\): .*NoSuchSshdOption/);
      expect(existsSync(stateDir)).toBe(false);
      expect(await namespacePids(execCommand, ns)).toEqual([]);
      expect(sh("ip", ["-n", ns, "addr", "show", "dev", "lo"])).not.toContain("169.254.169.254");
    } finally {
      await stopVm(ns, stateDir);
      await execCommand(["ip", "netns", "del", ns]);
    }
  });

  it("left the machine's own files alone", () => {
    expect(machineSnapshot()).toEqual(before);
    expect(readFileSync("/etc/passwd", "utf8")).not.toMatch(new RegExp(`^${ADMIN}:`, "m"));
  });

  it("stopVm stops every VM: no process, no mount, no state folder; then the test's namespaces go", async () => {
    for (const c of cases) {
      const r = await stopVm(c.namespace, c.stateDir);
      expect(r.errors).toEqual([]);
      expect(r.removed).toContain(`folder ${c.stateDir}`);
      expect(r.removed).toContain(`IMDS address 169.254.169.254 on lo of ${c.namespace}`);
      expect(await namespacePids(execCommand, c.namespace)).toEqual([]);
      expect(existsSync(c.stateDir)).toBe(false);
    }
    const mentioning = readdirSync("/proc")
      .filter((p) => /^\d+$/.test(p))
      .filter((p) => {
        try {
          return readFileSync(`/proc/${p}/cmdline`, "utf8").includes(work);
        } catch {
          return false;
        }
      });
    expect(mentioning).toEqual([]);
    expect(readFileSync("/proc/self/mountinfo", "utf8")).not.toContain(work);
    for (const ns of [...cases.map((c) => c.namespace), CLIENT_NS]) await run(["ip", "netns", "del", ns]);
    expect(sh("ip", ["netns", "list"])).not.toContain(`llvm${TAG}`);
    expect(sh("ip", ["-o", "link", "show"])).not.toContain(`lv${TAG}`);
    rmSync(work, { recursive: true, force: true });
    expect(existsSync(work)).toBe(false);
    expect(statSync(tmpdir()).isDirectory()).toBe(true);
    expect(machineSnapshot()).toEqual(before);
  });
});
