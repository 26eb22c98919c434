/**
 * The Azure emulator's network resources take effect in the kernel, as they do on Azure: driven
 * through the emulator's ARM API (the provider plugin's ArmClient, no Pulumi), three VMs boot in
 * namespaces and every check is real traffic — SSH from this process to a VM's public IP, TCP
 * and ICMP from inside one VM to another. A wrong NSG rule, a peering that is only half there or
 * a missing NAT breaks the traffic here as it would on Azure.
 *
 *   VNet uks (uksouth, 198.18.0.0/20), subnet d0: A 198.18.0.4, B 198.18.0.5
 *   VNet ukw (ukwest, 198.18.16.0/20), subnet d0: C 198.18.16.4
 *
 * Needs root (CI has it). Traffic goes only to the emulator's own addresses (198.18.0.0/15).
 * After an ARM change the test waits for the emulator's `cloud.idle()`: the fabric follows ARM
 * when an operation ends, and idle() resolves once that has happened.
 */
import { connect } from "node:net";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { NodeSSH } from "node-ssh";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/targets/azure/emulator/emulator.ts";
import { ArmClient } from "../../src/targets/azure/emulator/provider/armClient.ts";
import { AZURE_READY_COMMAND } from "../../src/targets/azure/access/probe.ts";
import { execCommand } from "../../src/targets/local/exec.ts";
import { armIds, createVm, hostKey, namespaces, nsgBody, processesMentioning, N, R, rsaKey, run, shellQuote, sshConnect, sshRun, type KeyPair, type SecurityRule } from "./azureEmulatorHelpers.ts";

const PORT = 5201;
/** A source no sender here has (only ever an NSG rule's source in this test, never a destination). */
const NOBODY = "198.19.0.99/32";
/** A connection that the NSG drops never completes: this only bounds how long a test waits to see that. */
const BLOCKED_WAIT_MS = 4_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Vm {
  name: "a" | "b" | "c";
  location: string;
  zone?: string;
  vnet: string;
  privateIp: string;
  hostKey?: KeyPair;
  publicIp?: string;
  ssh?: NodeSSH;
}

const vms: Record<Vm["name"], Vm> = {
  a: { name: "a", location: "uksouth", zone: "1", vnet: "uks", privateIp: "198.18.0.4" },
  b: { name: "b", location: "uksouth", zone: "1", vnet: "uks", privateIp: "198.18.0.5" },
  c: { name: "c", location: "ukwest", vnet: "ukw", privateIp: "198.18.16.4" },
};
const VNETS = [
  { name: "uks", location: "uksouth", space: "198.18.0.0/20", subnet: "198.18.0.0/24" },
  { name: "ukw", location: "ukwest", space: "198.18.16.0/20", subnet: "198.18.16.0/24" },
];

let emulator: RunningEmulator | undefined;
let stopReport: Awaited<ReturnType<RunningEmulator["stop"]>> | undefined;
let arm: ArmClient;
let ids: ReturnType<typeof armIds>;
let work = "";
let clientKey: KeyPair;
/** "az<short>-": every namespace of this test's emulator starts with it (other emulators may run beside it: only ours are checked). */
let ours = "";
const seenOurs = new Set<string>();

const sshRule = (source: string): SecurityRule => ({ name: "allow-ssh-from-runner", priority: 100, protocol: "Tcp", source, port: "22" });
const denyVnet: SecurityRule = { name: "deny-other-vnet-inbound", priority: 4000, access: "Deny", protocol: "*", source: "VirtualNetwork" };
const icmpFromVnet: SecurityRule = { name: "allow-icmp-from-vnet", priority: 300, protocol: "Icmp", source: "VirtualNetwork" };
const portFrom = (source: string): SecurityRule => ({ name: `allow-tcp-${PORT}`, priority: 200, protocol: "Tcp", source, port: String(PORT) });

/** PUTs a VM's NSG and waits until the fabric has applied it. */
async function setNsg(vm: Vm, rules: SecurityRule[]) {
  const body = await arm.put(ids.nsg(`${vm.name}-nsg`), N, nsgBody(vm.location, rules));
  expect((body.properties as { provisioningState: string }).provisioningState).toBe("Succeeded");
  await emulator!.cloud.idle();
}

/** One TCP connection attempt from this process: "connected", "timeout" (dropped) or the error code (e.g. ECONNREFUSED). */
function tcpProbe(host: string, port: number, timeoutMs: number): Promise<string> {
  return new Promise((resolve) => {
    const s = connect({ host, port });
    const done = (outcome: string) => {
      s.destroy();
      resolve(outcome);
    };
    s.setTimeout(timeoutMs, () => done("timeout"));
    s.once("connect", () => done("connected"));
    s.once("error", (e: NodeJS.ErrnoException) => done(e.code ?? e.message));
  });
}

/**
 * A TCP connection from inside `from` to host:PORT (python3, the machine's): "ok <address the
 * server saw>", "timeout" (the SYN was dropped) or "refused".
 */
async function connectFrom(from: Vm, host: string, timeoutS: number): Promise<string> {
  const py = [
    "import socket",
    "try:",
    `    c = socket.create_connection((${JSON.stringify(host)}, ${PORT}), timeout=${timeoutS})`,
    "    c.settimeout(30)",
    "    print('ok', c.recv(64).decode().strip())",
    "except socket.timeout:",
    "    print('timeout')",
    "except ConnectionRefusedError:",
    "    print('refused')",
    "except OSError as e:",
    "    print('error', e.errno, e.strerror)",
  ].join("\n");
  return (await sshRun(from.ssh!, `/usr/bin/python3 -c ${shellQuote(py)}`)).trim();
}

/** A server on PORT inside `vm` that answers every connection with the peer's address, then closes it. */
async function startEchoPeer(vm: Vm) {
  const py = [
    "import socket",
    "s = socket.socket()",
    "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)",
    `s.bind(("0.0.0.0", ${PORT}))`,
    "s.listen(16)",
    "while True:",
    "    c, a = s.accept()",
    "    c.sendall((a[0] + chr(10)).encode())",
    "    c.close()",
  ].join("\n");
  await sshRun(vm.ssh!, `setsid nohup /usr/bin/python3 -c ${shellQuote(py)} >/dev/null 2>&1 </dev/null &`);
  // Safety net only: the server listens within moments.
  for (let i = 0; i < 200; i++) {
    if ((await sshRun(vm.ssh!, `ss -Hltn 'sport = :${PORT}'`)).trim()) return;
    await sleep(100);
  }
  throw new Error(`the echo server on ${vm.name} never listened`);
}

async function ping(from: Vm, to: string, waitS: number): Promise<{ code: number | null; stdout: string }> {
  const r = await from.ssh!.execCommand(`ping -n -c 1 -W ${waitS} ${to}`);
  return { code: r.code, stdout: r.stdout };
}

async function noteOurNamespaces() {
  for (const ns of await namespaces()) if (ns.startsWith(ours)) seenOurs.add(ns);
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "latlab-fabit-"));
  clientKey = await rsaKey(work);
  for (const vm of Object.values(vms)) vm.hostKey = await hostKey(work, vm.name);
  emulator = await startEmulator();
  ours = emulator.namespacePrefix;
  expect(await run(["ip", "-4", "-o", "addr", "show", "dev", `${ours}i`])).toContain(` ${emulator.runnerAddress}/30 `);
  arm = new ArmClient(emulator.socketPath);
  ids = armIds(emulator.subscription, "latlab-fabric");
  await arm.put(ids.rg, R, { location: "uksouth", tags: { owner: "latlab" } });
  for (const v of VNETS) {
    await arm.put(ids.vnet(v.name), N, { location: v.location, properties: { addressSpace: { addressPrefixes: [v.space] } } });
    await arm.put(ids.subnet(v.name, "d0"), N, { properties: { addressPrefix: v.subnet } });
  }
  const runnerSsh = sshRule(`${emulator.runnerAddress}/32`);
  const created = await Promise.all(
    Object.values(vms).map((vm) =>
      createVm(arm, ids, {
        name: vm.name,
        location: vm.location,
        ...(vm.zone ? { zone: vm.zone } : {}),
        vnet: vm.vnet,
        subnet: "d0",
        privateIp: vm.privateIp,
        clientKey,
        hostKey: vm.hostKey!,
        rules: vm.name === "c" ? [runnerSsh, icmpFromVnet, denyVnet] : [runnerSsh, denyVnet],
      }),
    ),
  );
  Object.values(vms).forEach((vm, i) => (vm.publicIp = created[i]!.publicIp));
  await emulator.cloud.idle();
  await noteOurNamespaces();
  for (const vm of Object.values(vms)) {
    vm.ssh = await sshConnect(vm.publicIp!, clientKey, vm.hostKey!.publicKey);
    await sshRun(vm.ssh, AZURE_READY_COMMAND);
  }
}, 300_000);

afterAll(async () => {
  for (const vm of Object.values(vms)) vm.ssh?.dispose();
  // Safety net: the last test stops the emulator and checks; this only acts if it did not get there.
  if (emulator && !stopReport) await emulator.stop();
  if (work) rmSync(work, { recursive: true, force: true });
}, 120_000);

describe("the Azure emulator's fabric: network resources take effect in the kernel", () => {
  it("hands out public addresses in its own block, and each VM is its own host behind its public IP", async () => {
    const block = emulator!.runnerAddress.split(".").slice(0, 3).join(".");
    for (const vm of Object.values(vms)) {
      expect(vm.publicIp!.startsWith(`${block}.`)).toBe(true);
      expect(vm.publicIp).not.toBe(emulator!.runnerAddress);
      const [host, addr] = (await sshRun(vm.ssh!, "hostname; ip -4 -o addr show dev eth0 | awk '{print $4}'")).trim().split("\n");
      expect(host).toBe(vm.name);
      expect(addr).toBe(`${vm.privateIp}/24`);
    }
    expect(new Set(Object.values(vms).map((v) => v.publicIp)).size).toBe(3);
  });

  it("NSG: SSH allowed only from the runner's address; a rule naming another source shuts it, putting it back reopens it", async () => {
    const a = vms.a;
    const pinned = a.hostKey!.publicKey;
    // Allowed: a new connection from this process (whose address is the runner's) gets in.
    const first = await sshConnect(a.publicIp!, clientKey, pinned);
    expect((await sshRun(first, "hostname")).trim()).toBe("a");
    first.dispose();

    await setNsg(a, [sshRule(NOBODY), denyVnet]);
    // The SYN is dropped in A's namespace: no answer at all (not a refusal: sshd still runs).
    expect(await tcpProbe(a.publicIp!, 22, BLOCKED_WAIT_MS)).toBe("timeout");
    await expect(sshConnect(a.publicIp!, clientKey, pinned, BLOCKED_WAIT_MS)).rejects.toThrow(/Timed out while waiting for handshake/);
    // The connection opened before the change is an established flow: NSGs are stateful.
    expect((await sshRun(a.ssh!, "echo still-here")).trim()).toBe("still-here");

    await setNsg(a, [sshRule(`${emulator!.runnerAddress}/32`), denyVnet]);
    expect(await tcpProbe(a.publicIp!, 22, 20_000)).toBe("connected");
    const again = await sshConnect(a.publicIp!, clientKey, pinned);
    expect((await sshRun(again, "hostname")).trim()).toBe("a");
    again.dispose();
  });

  it("NSG: a benchmark port inside the VNet is closed until a rule names the client's private address", async () => {
    const { a, b } = vms;
    await startEchoPeer(b);
    // B's NSG: SSH from the runner, then the closing deny of the VirtualNetwork (over Azure's AllowVnetInBound).
    expect(await connectFrom(a, b.privateIp, BLOCKED_WAIT_MS / 1000)).toBe("timeout");
    // The server is there: from inside B itself (lo is not filtered) it answers.
    expect(await connectFrom(b, "127.0.0.1", 20)).toBe("ok 127.0.0.1");

    await setNsg(b, [sshRule(`${emulator!.runnerAddress}/32`), portFrom(`${a.privateIp}/32`), denyVnet]);
    // The private path: B sees A's private address (no NAT inside a VNet).
    expect(await connectFrom(a, b.privateIp, 20)).toBe(`ok ${a.privateIp}`);
    // The rule opens the port to A only: the runner, over B's public IP, still gets nothing.
    expect(await tcpProbe(b.publicIp!, PORT, BLOCKED_WAIT_MS)).toBe("timeout");

    // Another source address in the rule: closed again.
    await setNsg(b, [sshRule(`${emulator!.runnerAddress}/32`), portFrom(NOBODY), denyVnet]);
    expect(await connectFrom(a, b.privateIp, BLOCKED_WAIT_MS / 1000)).toBe("timeout");
  });

  it("public path: A reaches C over C's public IP, C sees A's public IP; a rule for A's private address does not let public-path traffic in", async () => {
    const { a, c } = vms;
    await startEchoPeer(c);
    // No rule for the port yet: C's DenyAllInBound drops it.
    expect(await connectFrom(a, c.publicIp!, BLOCKED_WAIT_MS / 1000)).toBe("timeout");

    await setNsg(c, [sshRule(`${emulator!.runnerAddress}/32`), portFrom(`${a.publicIp}/32`), icmpFromVnet, denyVnet]);
    // SNAT at A's VNet router, DNAT at C's: the source C sees is A's public address.
    expect(await connectFrom(a, c.publicIp!, 20)).toBe(`ok ${a.publicIp}`);
    // B's public address is not A's: B is refused by the same rule.
    expect(await connectFrom(vms.b, c.publicIp!, BLOCKED_WAIT_MS / 1000)).toBe("timeout");

    await setNsg(c, [sshRule(`${emulator!.runnerAddress}/32`), portFrom(`${a.privateIp}/32`), icmpFromVnet, denyVnet]);
    expect(await connectFrom(a, c.publicIp!, BLOCKED_WAIT_MS / 1000)).toBe("timeout");
    // C's private address is unreachable from A without a peering (no route between the VNets).
    expect(await connectFrom(a, c.privateIp, BLOCKED_WAIT_MS / 1000)).not.toMatch(/^ok/);
  });

  it("peering: A pings C's private address only while both peerings exist (Connected); one direction (Initiated) or a deleted one cuts it", async () => {
    const { a, c } = vms;
    const aToC = ids.peering("uks", "to-ukw");
    const cToA = ids.peering("ukw", "to-uks");
    const peeringBody = (remote: string) => ({ properties: { remoteVirtualNetwork: { id: ids.vnet(remote) }, allowVirtualNetworkAccess: true, allowForwardedTraffic: false, allowGatewayTransit: false, useRemoteGateways: false } });
    const state = async (id: string) => ((await arm.get(id, N))?.properties as { peeringState?: string } | undefined)?.peeringState;

    // C lets in ICMP from the VirtualNetwork, and the port from A's private address.
    await setNsg(c, [sshRule(`${emulator!.runnerAddress}/32`), portFrom(`${a.privateIp}/32`), icmpFromVnet, denyVnet]);
    // No peering: no route between the two VNets' private addresses.
    expect((await ping(a, c.privateIp, 2)).code).not.toBe(0);

    await arm.put(aToC, N, peeringBody("ukw"));
    await emulator!.cloud.idle();
    expect(await state(aToC)).toBe("Initiated");
    expect((await ping(a, c.privateIp, 2)).code).not.toBe(0);

    await arm.put(cToA, N, peeringBody("uks"));
    await emulator!.cloud.idle();
    expect([await state(aToC), await state(cToA)]).toEqual(["Connected", "Connected"]);
    const up = await ping(a, c.privateIp, 10);
    expect(up.stdout).toMatch(/1 packets transmitted, 1 received/);
    expect(up.code).toBe(0);
    // Over the peering, C's NSG sees A's private address: the VirtualNetwork tag now covers A's VNet,
    // and the port rule that names A's private address lets A in on the private path.
    expect(await connectFrom(a, c.privateIp, 20)).toBe(`ok ${a.privateIp}`);

    await arm.delete(cToA, N);
    await emulator!.cloud.idle();
    expect(await arm.get(cToA, N)).toBeUndefined();
    expect(await state(aToC)).toBe("Disconnected");
    expect((await ping(a, c.privateIp, 2)).code).not.toBe(0);
    expect(await connectFrom(a, c.privateIp, BLOCKED_WAIT_MS / 1000)).not.toMatch(/^ok/);
  });

  it("deleting the resource group empties ARM; stop() leaves no namespace, link, process or folder behind", async () => {
    for (const vm of Object.values(vms)) {
      vm.ssh?.dispose();
      delete vm.ssh;
    }
    await noteOurNamespaces();
    expect([...seenOurs].filter((n) => /-vm\d+$/.test(n))).toHaveLength(3);
    expect([...seenOurs].filter((n) => /-vn\d+$/.test(n))).toHaveLength(2);
    await arm.delete(ids.rg, R);
    await emulator!.cloud.idle();
    expect(emulator!.cloud.all()).toEqual([]);
    // The VMs went with the group: their namespaces too.
    expect((await namespaces()).filter((n) => /-vm\d+$/.test(n) && seenOurs.has(n))).toEqual([]);

    const { home, socketPath } = emulator!;
    stopReport = await emulator!.stop();
    expect(stopReport.leftInArm).toEqual([]);
    expect(stopReport.errors).toEqual([]);
    expect(seenOurs).toContain(`${ours}inet`);
    expect((await namespaces()).filter((n) => n.startsWith(ours))).toEqual([]);
    // The root namespace's end of the emulator's link, gone with it (it existed: it carried the runner's address).
    expect((await execCommand(["ip", "link", "show", "dev", `${ours}i`])).code).not.toBe(0);
    expect(await run(["ip", "-4", "route", "show"])).not.toContain(vms.a.publicIp!.replace(/\.\d+$/, ".0/24"));
    expect(existsSync(home)).toBe(false);
    expect(existsSync(socketPath)).toBe(false);
    expect(processesMentioning(home)).toEqual([]);
    rmSync(work, { recursive: true, force: true });
    expect(existsSync(work)).toBe(false);
  });
});
