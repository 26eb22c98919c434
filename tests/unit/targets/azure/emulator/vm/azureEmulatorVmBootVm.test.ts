/**
 * bootVm/stopVm without a VM: bad input is refused before anything is created or run, and stopVm
 * leaves alone what bootVm did not make. Commands go to a fake exec that only records them.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ExecFn, ExecResult } from "../../../../../../src/targets/local/exec.ts";
import { CloudConfigError } from "../../../../../../src/targets/azure/emulator/vm/cloudConfig.ts";
import { authorizedKeysPathProblem, bootVm, eth0Address, stopVm, VmBootError, type VmBootSpec } from "../../../../../../src/targets/azure/emulator/vm/bootVm.ts";

const root = mkdtempSync(join(tmpdir(), "latlab-vmtest-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const isRoot = process.getuid?.() === 0;

/** Captured on this project's test machine: `ip -n <ns> -j -4 addr show dev eth0` (iproute2 6.1). */
const IP_ETH0 =
  '[{"ifindex":6,"link_index":5,"ifname":"eth0","flags":["BROADCAST","MULTICAST","UP","LOWER_UP"],"mtu":1500,"qdisc":"noqueue","operstate":"UP","group":"default","txqlen":1000,"link_netnsid":1,"addr_info":[{"family":"inet","local":"198.18.0.2","prefixlen":30,"scope":"global","label":"eth0","valid_life_time":4294967295,"preferred_life_time":4294967295}]}]';

function fakeExec(answer: (argv: readonly string[]) => Partial<ExecResult> = () => ({})): { exec: ExecFn; calls: string[][] } {
  const calls: string[][] = [];
  const exec: ExecFn = async (argv) => {
    calls.push([...argv]);
    return { code: 0, stdout: "", stderr: "", ...answer(argv) };
  };
  return { exec, calls };
}

const spec = (over: Partial<VmBootSpec> = {}): VmBootSpec => ({
  namespace: "vmns1",
  stateDir: join(root, "state"),
  computerName: "d0-client",
  adminUsername: "azureuser",
  sshPublicKeys: [{ path: "/home/azureuser/.ssh/authorized_keys", keyData: "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 me" }],
  imds: { compute: {}, network: {} },
  ...over,
});

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error("expected a rejection");
}

describe("bootVm refuses bad input before doing anything", () => {
  it.each([
    [{ computerName: "bad name" }, /VM bad name: computerName: a Linux computer name/],
    [{ adminUsername: "Root!" }, /VM d0-client: adminUsername: a Linux user name/],
    [{ namespace: "a/b" }, /namespace: a network namespace name/],
    [{ stateDir: "relative/dir" }, /stateDir: an absolute, normalised path/],
    [{ stateDir: "/tmp/a,b" }, /stateDir: no ','/],
    [{ sshPublicKeys: [{ path: "/home/azureuser/.ssh/authorized_keys", keyData: "not a key" }] }, /sshPublicKeys\.0\.keyData: an OpenSSH public key line/],
    [
      { sshPublicKeys: [{ path: "/root/.ssh/authorized_keys", keyData: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA" }] },
      /Destination path for SSH public keys is currently limited to its default value \/home\/azureuser\/\.ssh\/authorized_keys/,
    ],
  ] as [Partial<VmBootSpec>, RegExp][])("%j", async (over, message) => {
    const { exec, calls } = fakeExec();
    const err = await rejection(bootVm({ ...spec(over), exec }));
    expect(err).toBeInstanceOf(VmBootError);
    expect(err.message).toMatch(message);
    expect(calls).toEqual([]);
    expect(existsSync(join(root, "state"))).toBe(false);
  });

  it("refuses customData that is not cloud-config, naming the VM", async () => {
    const { exec, calls } = fakeExec();
    const err = await rejection(bootVm({ ...spec({ customData: Buffer.from("#!/bin/sh\n").toString("base64") }), exec }));
    expect(err).toBeInstanceOf(CloudConfigError);
    expect(err.message).toMatch(/customData of VM d0-client: is a shell script/);
    expect(calls).toEqual([]);
  });

  it("refuses a namespace without eth0, or one already running processes", { skip: !isRoot }, async () => {
    const noEth0 = fakeExec((argv) => (argv.includes("addr") ? { code: 1, stderr: 'Device "eth0" does not exist.' } : {}));
    const e1 = await rejection(bootVm({ ...spec(), exec: noEth0.exec }));
    expect(e1.message).toMatch(/network namespace vmns1 has no eth0 with an IPv4 address \(it must exist, wired, before bootVm\): Device "eth0" does not exist/);
    const busy = fakeExec((argv) => (argv.includes("addr") ? { stdout: IP_ETH0 } : argv.includes("pids") ? { stdout: "4242\n" } : {}));
    const e2 = await rejection(bootVm({ ...spec(), exec: busy.exec }));
    expect(e2.message).toMatch(/already runs processes \(4242\)/);
    expect(busy.calls.every((c) => c[0] === "ip")).toBe(true);
    expect(existsSync(join(root, "state"))).toBe(false);
  });

  it("refuses a state folder that holds something", { skip: !isRoot }, async () => {
    const dir = join(root, "full");
    mkdirSync(dir);
    writeFileSync(join(dir, "keep"), "x");
    const { exec } = fakeExec((argv) => (argv.includes("addr") ? { stdout: IP_ETH0 } : {}));
    const err = await rejection(bootVm({ ...spec({ stateDir: dir }), exec }));
    expect(err.message).toMatch(/state folder .*full already exists and is not empty/);
    expect(readdirSync(dir)).toEqual(["keep"]);
  });
});

describe("stopVm", () => {
  it("leaves a folder bootVm did not make, and says so", async () => {
    const dir = join(root, "foreign");
    mkdirSync(dir);
    writeFileSync(join(dir, "data"), "x");
    const { exec } = fakeExec((argv) => (argv[0] === "ip" ? { code: 1, stderr: "Cannot open network namespace" } : {}));
    const r = await stopVm("gone", dir, { exec });
    expect(r.errors).toEqual([`${dir} was not made by bootVm (no latlab-vm.json): left in place`]);
    expect(r.removed).toEqual([]);
    expect(readdirSync(dir)).toEqual(["data"]);
  });

  it("removes its own folder and IMDS's address, and is fine with a namespace already gone", async () => {
    const dir = join(root, "own");
    mkdirSync(dir);
    writeFileSync(join(dir, "latlab-vm.json"), "{}");
    const lo = '[{"ifname":"lo","addr_info":[{"family":"inet","local":"127.0.0.1"},{"family":"inet","local":"169.254.169.254"}]}]';
    const { exec, calls } = fakeExec((argv) => (argv.includes("show") ? { stdout: lo } : argv.includes("pids") ? { stdout: "" } : {}));
    const r = await stopVm("vmns1", dir, { exec });
    expect(r.errors).toEqual([]);
    expect(r.removed).toEqual(["IMDS address 169.254.169.254 on lo of vmns1", `folder ${dir}`]);
    expect(calls).toContainEqual(["ip", "-n", "vmns1", "addr", "del", "169.254.169.254/32", "dev", "lo"]);
    expect(existsSync(dir)).toBe(false);
    const none = fakeExec(() => ({ code: 1 }));
    expect(await stopVm("gone", join(root, "never-made"), { exec: none.exec })).toEqual({ errors: [], removed: [] });
  });
});

describe("bootVm's readers", () => {
  it("eth0's address from `ip -j addr`", () => {
    expect(eth0Address(IP_ETH0)).toBe("198.18.0.2");
    expect(eth0Address("[]")).toBeUndefined();
    expect(eth0Address("not json")).toBeUndefined();
    expect(eth0Address('[{"ifname":"eth0","addr_info":[{"family":"inet6","local":"fe80::1"}]}]')).toBeUndefined();
  });

  it("the only authorized_keys path ARM accepts", () => {
    expect(authorizedKeysPathProblem("azureuser", "/home/azureuser/.ssh/authorized_keys")).toBeUndefined();
    expect(authorizedKeysPathProblem("azureuser", "/home/other/.ssh/authorized_keys")).toMatch(/known issue in Linux provisioning agent/);
  });
});
