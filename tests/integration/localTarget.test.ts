/**
 * The local target for real: namespaces, bridges, routers (zone, region, public), veths, sshd per host, tbf.
 * Needs root (CI has it). Only sends traffic inside the run's own namespaces.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { NodeSSH } from "node-ssh";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ResolvedHost } from "../../src/dsl/placement.ts";
import type { Deployment, Plan } from "../../src/plan/types.ts";
import { execCommand } from "../../src/targets/local/exec.ts";
import type { ExecFn } from "../../src/targets/local/exec.ts";
import { DEFAULT_KEYS_ROOT, LocalTarget } from "../../src/targets/local/localTarget.ts";
import { cidrContains, ipToInt, parseCidr, PUBLIC_NET, runNames } from "../../src/targets/local/network/names.ts";
import { hostRecords } from "../../src/results/hostRecords.ts";
import { LATENCY_ONLY } from "../../src/results/schema.ts";
import { regionPairRtt } from "../../src/targets/local/model/latencyModel.ts";
import type { Environment, HostEndpoint, TargetContext } from "../../src/targets/target.ts";

function host(role: string, over: Partial<ResolvedHost> = {}): ResolvedHost {
  return { role, region: "uksouth", zone: "1", ppg: null, availabilitySet: null, size: "Standard_B1s", accelnet: false, vnet: null, ...over };
}

function planOf(hosts: ResolvedHost[]): Plan {
  const deployment: Deployment = { id: "d0", index: 0, variant: "base", variants: ["base"], replica: 0, hosts };
  return {
    experiment: { name: "local-target-it", description: "integration test" },
    baseline: "base",
    baselineOf: { base: "base" },
    variants: [{ id: "base", axes: {}, hosts }],
    deployments: [deployment],
    cells: [],
    estimate: { measurementSeconds: 0, cells: 0, hosts: hosts.length },
  };
}

const FIVE = planOf([
  host("client", { ppg: "rack-a" }),
  host("server", { ppg: "rack-a", size: "Standard_D3_v2" }),
  host("zone1"),
  host("zone2", { zone: "2" }),
  host("west", { region: "ukwest", zone: null }),
]);

const runDirs: string[] = [];
function ctx(runId: string): TargetContext {
  const runDir = mkdtempSync(join(tmpdir(), "latlab-it-"));
  runDirs.push(runDir);
  return { runId: `${runId}-${process.pid}-${Date.now()}`, runDir, log: () => {} };
}

const sh = (file: string, args: string[]) => execFileSync(file, args, { encoding: "utf8" });
const namespacesWith = (prefix: string) =>
  sh("ip", ["netns", "list"])
    .split("\n")
    .map((l) => l.split(" ")[0] ?? "")
    .filter((n) => n.startsWith(prefix));
const rootLinksWith = (prefix: string) =>
  sh("ip", ["-o", "link", "show"])
    .split("\n")
    .map((l) => /^\d+:\s+([^:@\s]+)/.exec(l)?.[1] ?? "")
    .filter((n) => n.startsWith(prefix));
const processesMentioning = (text: string) =>
  readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, "utf8").includes(text);
      } catch {
        return false;
      }
    });
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function connect(h: HostEndpoint, pinnedKey: string = h.hostKey): Promise<NodeSSH> {
  const blob = Buffer.from(pinnedKey.split(" ")[1] ?? "", "base64");
  const ssh = new NodeSSH();
  await ssh.connect({
    host: h.ssh.host,
    port: h.ssh.port,
    username: h.ssh.username,
    privateKey: h.ssh.privateKey,
    readyTimeout: 10_000,
    hostVerifier: (key: Buffer) => Buffer.isBuffer(key) && key.equals(blob),
  });
  return ssh;
}

async function run(ssh: NodeSSH, command: string): Promise<string> {
  const r = await ssh.execCommand(command);
  if (r.code !== 0) throw new Error(`${command}: exit ${r.code}: ${r.stderr}`);
  return r.stdout;
}

/** Checks that nothing of a torn-down run is left on the machine. */
function expectNothingLeft(runId: string, tempDir: string | null, pids: number[]) {
  const names = runNames(runId);
  expect(namespacesWith(names.namespacePrefix)).toEqual([]);
  expect(rootLinksWith(names.rootLinkPrefix)).toEqual([]);
  // The key folder (private keys) is gone too.
  expect(existsSync(DEFAULT_KEYS_ROOT) ? readdirSync(DEFAULT_KEYS_ROOT).filter((d) => d.startsWith(`latlab-${names.short}-`)) : []).toEqual([]);
  if (tempDir !== null) {
    expect(existsSync(tempDir)).toBe(false);
    expect(processesMentioning(tempDir)).toEqual([]);
  }
  for (const pid of pids) expect(alive(pid), `pid ${pid}`).toBe(false);
}

afterAll(() => {
  for (const d of runDirs) rmSync(d, { recursive: true, force: true });
});

describe("LocalTarget: five hosts, every path kind", () => {
  const target = new LocalTarget();
  const c = ctx("it-five");
  let env: Environment;
  const sessions = new Map<string, NodeSSH>();
  const byRole = (role: string) => {
    const h = env.hosts.find((x) => x.role === role);
    if (!h) throw new Error(`no host ${role}`);
    return h;
  };

  beforeAll(async () => {
    env = await target.up(FIVE, c);
    for (const h of env.hosts) sessions.set(h.role, await connect(h));
  });

  afterAll(async () => {
    for (const s of sessions.values()) s.dispose();
    await target.down();
  });

  it("gives every host its own namespace, hostname and pinned host key", async () => {
    expect(env.hosts.map((h) => h.role)).toEqual(["client", "server", "zone1", "zone2", "west"]);
    expect(new Set(env.hosts.map((h) => h.hostKey)).size).toBe(5);
    for (const h of env.hosts) {
      const ssh = sessions.get(h.role) as NodeSSH;
      expect((await run(ssh, "hostname")).trim()).toBe(h.actual.hostname);
      expect(h.actual.hostname).toBe(`d0-${h.role}`);
      // The session really is inside the host's namespace: its data address is local.
      expect(await run(ssh, "ip -4 -o addr show dev eth0")).toContain(`inet ${h.privateAddress}/24`);
      expect(h.ssh.host.startsWith("198.19.")).toBe(true);
      expect(h.privateAddress.startsWith("198.18.")).toBe(true);
      expect(existsSync(h.workDir)).toBe(true);
      // This machine's ~/.bashrc (if any) is hidden from the host's shell: empty there, untouched here.
      expect((await run(ssh, 'if [ -f "$HOME/.bashrc" ]; then wc -c < "$HOME/.bashrc"; else echo 0; fi')).trim()).toBe("0");
    }
    if (existsSync(`${homedir()}/.bashrc`)) expect(readFileSync(`${homedir()}/.bashrc`, "utf8").length).toBeGreaterThan(0);
  });

  it("refuses a host whose key does not match the pinned one", async () => {
    await expect(connect(byRole("client"), byRole("server").hostKey)).rejects.toThrow();
  });

  it("reaches peers over private addresses with 0 / 1 / 3 / 4 routed hops", async () => {
    const client = sessions.get("client") as NodeSSH;
    const expected: [string, number][] = [
      ["server", 0], // same-ppg: one rack bridge
      ["zone1", 1], // same-zone: the zone router
      ["zone2", 3], // cross-zone: zone, region, zone routers
      ["west", 4], // cross-region: zone, region, region, zone routers
    ];
    for (const [role, hops] of expected) {
      const out = await run(client, `LC_ALL=C ping -c 1 -W 2 ${byRole(role).privateAddress}`);
      expect(ttlHops(out), `${role}: ${out}`).toBe(hops);
    }
    // One hop short of a routed destination dies on the way: the hops are real routers.
    const short = await sessions.get("client")?.execCommand(`LC_ALL=C ping -c 1 -W 1 -t 3 ${byRole("west").privateAddress}`);
    expect(short?.stdout).toMatch(/Time to live exceeded/);
  });

  const ttlHops = (out: string) => 64 - Number(/ttl=(\d+)/.exec(out)?.[1]);

  it("reaches peers' public addresses only through the public router, with more hops than private", async () => {
    const client = sessions.get("client") as NodeSSH;
    const me = byRole("client");
    expect(me.publicAddress).toBe(me.actual.publicAddress);
    // same-zone pair: 1 routed hop private, 5 public; cross-region pair: 4 private, 5 public.
    for (const [role, privateHops] of [
      ["zone1", 1],
      ["west", 4],
    ] as const) {
      const peer = byRole(role);
      const pub = peer.publicAddress as string;
      expect(pub).not.toBe(peer.privateAddress);
      const priv = ttlHops(await run(client, `LC_ALL=C ping -c 1 -W 2 ${peer.privateAddress}`));
      // The reply's TTL counts the routers on the way back: the reply takes the public path too.
      const publ = ttlHops(await run(client, `LC_ALL=C ping -c 1 -W 2 ${pub}`));
      expect(priv, role).toBe(privateHops);
      expect(publ, role).toBe(5);
      expect(publ).toBeGreaterThan(priv);
      // And the request's way there: a TTL of 5 dies at the 5th router (the zone router on the
      // way down, answering from its own address), a TTL of 6 gets through.
      const short = await client.execCommand(`LC_ALL=C ping -c 1 -W 1 -t 5 ${pub}`);
      expect(short.stdout, role).toMatch(/Time to live exceeded/);
      await run(client, `LC_ALL=C ping -c 1 -W 2 -t 6 ${pub}`);
      // The client sources public traffic from its own public address (no NAT anywhere).
      expect(await run(client, `ip -4 route get ${pub}`)).toMatch(new RegExp(`src ${me.publicAddress?.replace(/\./g, "\\.")}\\b`));
      expect(await run(client, `ip -4 route get ${peer.privateAddress}`)).toMatch(new RegExp(`src ${me.privateAddress.replace(/\./g, "\\.")}\\b`));
    }
    // The public router knows no private address: the private space is not reachable from the edge.
    const pubNs = `${runNames(c.runId).namespacePrefix}0-_pub`;
    expect(sh("ip", ["-n", pubNs, "-4", "route", "show"])).not.toMatch(/198\.18\./);
    // Public addresses live on lo, inside PUBLIC_NET.
    expect(await run(client, "ip -4 -o addr show dev lo")).toContain(`inet ${me.publicAddress}/32`);
    for (const h of env.hosts) expect(cidrContains(parseCidr(PUBLIC_NET), ipToInt(h.publicAddress as string)), h.role).toBe(true);
  });

  it("traces the public path through the public router with nmap, like the seed's traceroute", async () => {
    const client = sessions.get("client") as NodeSSH;
    if ((await client.execCommand("command -v nmap")).code !== 0) return; // nmap is optional on the runner
    const pubNs = `${runNames(c.runId).namespacePrefix}0-_pub`;
    const pubAddrs = sh("ip", ["-n", pubNs, "-4", "-o", "addr", "show"])
      .split("\n")
      .map((l) => /inet (\S+)\//.exec(l)?.[1])
      .filter((a): a is string => a !== undefined && a !== "127.0.0.1");
    const trace = async (address: string) => {
      const out = await run(client, `nmap -Pn -n -sS -p 22 --traceroute ${address}`);
      const hops = [...out.matchAll(/^(\d+)\s+[\d.]+ ms\s+(\S+)$/gm)].map((m) => ({ hop: Number(m[1]), address: m[2] as string }));
      expect(hops.at(-1)?.address, out).toBe(address);
      return hops;
    };
    for (const role of ["zone1", "west"]) {
      const peer = byRole(role);
      const priv = await trace(peer.privateAddress);
      const publ = await trace(peer.publicAddress as string);
      expect(publ.length, role).toBe(6); // zone, region, public, region, zone router, then the host
      expect(publ.length).toBeGreaterThan(priv.length);
      expect(pubAddrs).toContain(publ[2]?.address);
      for (const h of priv) expect(pubAddrs).not.toContain(h.address);
    }
  });

  it("reports what each host really got, read back from the fabric, matching the plan", () => {
    const records = hostRecords(FIVE, "base", env.hosts);
    expect(records.map((r) => r.mismatches)).toEqual([[], [], [], [], []]);
    for (const planned of FIVE.deployments[0]?.hosts ?? []) {
      const a = byRole(planned.role).actual;
      expect({ region: a.region, zone: a.zone, ppg: a.ppg }).toEqual({ region: planned.region, zone: planned.zone, ppg: planned.ppg });
      // Accelerated Networking's latency is the model's where latency is applied (its row per pair); nothing else of it.
      expect(a.accelnetEmulated).toBe(env.shaping.latency === "applied" ? LATENCY_ONLY : false);
      expect("accelnet" in a).toBe(false);
      expect(a.privateAddress).toBe(byRole(planned.role).privateAddress);
      expect(a.publicAddress).toBe(byRole(planned.role).publicAddress);
      expect(a.publicRouter).toBe(`${runNames(c.runId).namespacePrefix}0-_pub`);
      expect(typeof a.latencyShaping).toBe("string");
      expect("bandwidthCapMbit" in a && "rack" in a && "namespace" in a && "hostname" in a).toBe(true);
    }
    expect(byRole("client").actual.rack).toBe(byRole("server").actual.rack);
    expect(byRole("zone1").actual.rack).not.toBe(byRole("client").actual.rack);
    // The size is emulated only where its bandwidth cap was applied.
    expect(byRole("server").actual).toMatchObject({ size: "Standard_D3_v2", sizeEmulated: true });
    expect(byRole("client").actual.sizeEmulated).toBe(false);
    expect("size" in byRole("client").actual).toBe(false);
  });

  it("keeps the management path apart from the data path", async () => {
    const client = sessions.get("client") as NodeSSH;
    const routes = await run(client, "ip -4 route show");
    expect(routes).toMatch(/^default via 198\.18\.\d+\.1 dev eth0/m);
    const mgmtRoutes = routes.split("\n").filter((l) => l.includes("mgmt0"));
    expect(mgmtRoutes).toHaveLength(1);
    expect(mgmtRoutes[0]).toMatch(/^198\.19\.\d+\.\d+\/30 dev mgmt0 proto kernel scope link/);
    // The root namespace has no route into the data plane through the run's links.
    const names = runNames(c.runId);
    const get = sh("ip", ["route", "get", byRole("client").privateAddress]);
    expect(get).not.toContain(names.rootLinkPrefix);
    // Root side: exactly the connected /30 per host.
    const rootRoutes = sh("ip", ["-4", "route", "show"]).split("\n").filter((l) => l.includes(names.rootLinkPrefix));
    expect(rootRoutes).toHaveLength(5);
    for (const r of rootRoutes) expect(r).toMatch(/^198\.19\.\d+\.\d+\/30 dev \S+ proto kernel scope link/);
  });

  it("caps a documented VM size with tbf and says what it did", async () => {
    const server = byRole("server");
    expect(server.actual.bandwidthCapMbit).toBe(3000);
    const qdisc = await run(sessions.get("server") as NodeSSH, "tc qdisc show dev eth0");
    if (env.facts.netem?.startsWith("present")) expect(qdisc).toMatch(/htb/);
    else expect(qdisc).toMatch(/qdisc tbf .* rate 3Gbit/);
    expect(byRole("client").actual.bandwidthCapMbit).toBeNull();
    expect(await run(sessions.get("client") as NodeSSH, "tc qdisc show dev eth0")).not.toMatch(/tbf/);
    expect(env.shaping.bandwidth).toBe("applied");
    // The entries its pairs used, not the fixed table: the ukwest host's pairs take Microsoft's published uksouth↔ukwest figure, with its spread.
    const westPair = regionPairRtt("uksouth", "ukwest");
    expect(env.shaping.model).toContainEqual({ pathKind: "cross-region", accelnet: false, rttUs: westPair.rttUs, source: westPair.source, spread: westPair.spread });
    expect(env.shaping.model!.map((m) => m.pathKind).sort()).toEqual(["cross-region", "cross-zone", "same-ppg", "same-zone"]);
    // The B1s hosts have no documented bandwidth: the note names them as uncapped, the capped server not.
    expect(env.shaping.note).toMatch(/UNCAPPED \(no bandwidth cap: no documented figure for the size.*\): d0-client \(Standard_B1s\), d0-zone1 \(Standard_B1s\), d0-zone2 \(Standard_B1s\), d0-west \(Standard_B1s\)/);
    expect(env.shaping.note).not.toMatch(/d0-server \(/);
    if (env.facts.netem?.startsWith("present")) {
      expect(env.shaping.latency).toBe("applied");
    } else if (env.facts.delayLine?.startsWith("delay line")) {
      // No netem: the delay line applies the model, and says how precisely.
      expect(env.shaping).toMatchObject({ latency: "applied", mechanism: "delay-line" });
      expect(env.shaping.note).toMatch(/^shaping: latency applied per peer with the delay line, ±\d+ µs at p99/);
      for (const h of env.hosts) expect(h.actual).toMatchObject({ latencyShaping: "applied", latencyMechanism: "delay-line" });
    } else {
      expect(env.shaping.latency).toBe("unavailable");
      expect(env.shaping.note.startsWith("shaping: unavailable — kernel has no netem")).toBe(true);
      for (const h of env.hosts) expect(h.actual.latencyShaping).toBe("unavailable");
    }
  });

  it("tears everything down, and a second down() is harmless", async () => {
    for (const s of sessions.values()) s.dispose();
    sessions.clear();
    const { tempDir, pids } = target.resources;
    expect(tempDir).not.toBeNull();
    const report = await target.down();
    expect(report.errors).toEqual([]);
    expect(report.status).toBe("ok");
    // 5 hosts, 3 zone routers, 2 region routers, 1 public router
    expect(report.removed.filter((r) => r.startsWith("namespace "))).toHaveLength(11);
    expect(report.removed).toContain(`namespace ${runNames(c.runId).namespacePrefix}0-_pub`);
    expect(report.removed.filter((r) => r.startsWith("link "))).toHaveLength(5);
    expect(report.removed.some((r) => r.startsWith("process "))).toBe(true);
    expectNothingLeft(c.runId, tempDir, pids);
    const again = await target.down();
    expect(again).toEqual({ status: "ok", errors: [], removed: [] });
  });
});

describe("LocalTarget: actual comes from the wiring, not from the plan", () => {
  it("reports the PPG of the rack a host is really attached to, and the runner flags the difference", async () => {
    const plan = planOf([host("a", { ppg: "p" }), host("b", { ppg: "p" }), host("c")]);
    // Real commands, except c's rack port (p2) is enslaved to the PPG's bridge (rk0) instead of its own (rk1).
    const exec: ExecFn = async (argv, o) => {
      const i = argv.indexOf("master");
      if (i > 0 && argv.includes("p2") && argv[i + 1] === "rk1") return execCommand([...argv.slice(0, i + 1), "rk0", ...argv.slice(i + 2)], o);
      return execCommand(argv, o);
    };
    const target = new LocalTarget({ exec });
    const c = ctx("it-miswired");
    try {
      const env = await target.up(plan, c);
      const c3 = env.hosts.find((h) => h.role === "c") as HostEndpoint;
      expect(c3.actual.ppg).toBe("p");
      expect(c3.actual.rack).toBe(env.hosts[0]?.actual.rack);
      expect(hostRecords(plan, "base", env.hosts).map((r) => r.mismatches)).toEqual([[], [], ['ppg: asked null, got "p"']]);
    } finally {
      const r = target.resources;
      const report = await target.down();
      expect(report.status).toBe("ok");
      expectNothingLeft(c.runId, r.tempDir, r.pids);
    }
  });
});

describe("LocalTarget: two peered VNets of one region (seed 002)", () => {
  it("wires each VNet as its own routed network joined by a peering link, reads the VNet back, and says what it emulates", async () => {
    const plan = planOf([
      host("server", { region: "northeurope", zone: null, vnet: "b" }),
      host("client", { region: "northeurope", zone: null, vnet: "a" }),
    ]);
    const target = new LocalTarget();
    const c = ctx("it-peered");
    try {
      const env = await target.up(plan, c);
      const prefix = runNames(c.runId).namespacePrefix;
      const [server, client] = ["server", "client"].map((r) => env.hosts.find((h) => h.role === r) as HostEndpoint) as [HostEndpoint, HostEndpoint];
      expect([server.actual.vnet, server.actual.regionRouter]).toEqual(["b", `${prefix}0-_rr-northeurope-b`]);
      expect([client.actual.vnet, client.actual.regionRouter]).toEqual(["a", `${prefix}0-_rr-northeurope-a`]);
      expect(server.actual.region).toBe("northeurope");
      expect(env.shaping.note).toMatch(/peered VNets of one region/);
      expect(env.facts.peering).toMatch(/same latency and bandwidth/);
      // The private path really crosses both VNet routers, and both paths reach the server.
      const ssh = await connect(client);
      try {
        await run(ssh, `ping -c 1 -W 2 ${server.privateAddress}`);
        await run(ssh, `ping -c 1 -W 2 ${server.publicAddress}`);
        const trace = await run(ssh, `nmap -sS -Pn -n -p 22 --traceroute ${server.privateAddress}`);
        // zone router a, VNet router a, VNet router b, zone router b, then the host.
        expect(trace.split("\n").filter((l) => /^\d+\s/.test(l))).toHaveLength(5);
      } finally {
        ssh.dispose();
      }
    } finally {
      const r = target.resources;
      const report = await target.down();
      expect(report.status).toBe("ok");
      expectNothingLeft(c.runId, r.tempDir, r.pids);
    }
  });
});

describe("LocalTarget: two runs at once", () => {
  it("brings up two runs with different ids side by side, both usable, both torn down", async () => {
    const plan = planOf([host("a", { ppg: "p" }), host("b", { zone: "2" })]);
    const t1 = new LocalTarget();
    const t2 = new LocalTarget();
    const c1 = ctx("it-twin-1");
    const c2 = ctx("it-twin-2");
    try {
      const [e1, e2] = await Promise.all([t1.up(plan, c1), t2.up(plan, c2)]);
      // Same data addresses in both fabrics (they are isolated), distinct management addresses.
      expect(e1.hosts.map((h) => h.privateAddress)).toEqual(e2.hosts.map((h) => h.privateAddress));
      const mgmt = [...e1.hosts, ...e2.hosts].map((h) => h.ssh.host);
      expect(new Set(mgmt).size).toBe(4);
      for (const [env, other] of [
        [e1, e2],
        [e2, e1],
      ] as const) {
        const a = env.hosts[0] as HostEndpoint;
        const b = env.hosts[1] as HostEndpoint;
        const ssh = await connect(a);
        try {
          expect((await run(ssh, "hostname")).trim()).toBe("d0-a");
          const out = await run(ssh, `LC_ALL=C ping -c 1 -W 2 ${b.privateAddress}`);
          expect(64 - Number(/ttl=(\d+)/.exec(out)?.[1])).toBe(3);
          // Its own namespace, not the other run's.
          expect(await run(ssh, "ip -4 -o addr show dev mgmt0")).toContain(a.ssh.host);
          expect(await run(ssh, "ip -4 -o addr show dev mgmt0")).not.toContain((other.hosts[0] as HostEndpoint).ssh.host);
        } finally {
          ssh.dispose();
        }
      }
    } finally {
      const r1 = t1.resources;
      const r2 = t2.resources;
      const [d1, d2] = await Promise.all([t1.down(), t2.down()]);
      expect(d1.status).toBe("ok");
      expect(d2.status).toBe("ok");
      expectNothingLeft(c1.runId, r1.tempDir, r1.pids);
      expectNothingLeft(c2.runId, r2.tempDir, r2.pids);
    }
  });
});

describe("LocalTarget: failures midway through up()", () => {
  it("names the host whose sshd cannot start, and down() still removes everything", async () => {
    const target = new LocalTarget({
      sshdConfigTransform: (h, config) => (h.role === "zone2" ? `${config}ThisIsNotAnSshdOption yes\n` : config),
    });
    const c = ctx("it-fail-sshd");
    const names = runNames(c.runId);
    const err = await target.up(FIVE, c).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(Error);
    expect(err?.message).toContain("host d0-zone2");
    expect(err?.message).toContain(`${names.namespacePrefix}0-zone2`);
    expect(err?.message).toContain("ThisIsNotAnSshdOption");
    const { tempDir, pids } = target.resources;
    // The other hosts' sshds were running: teardown must find and stop them.
    expect(namespacesWith(names.namespacePrefix).length).toBe(11);
    const report = await target.down();
    expect(report.errors).toEqual([]);
    expect(report.status).toBe("ok");
    expectNothingLeft(c.runId, tempDir, pids);
  });

  it("names the namespace and the failing command with its stderr, and down() cleans up", async () => {
    // Real commands, except one route in the ukwest region router, refused as the kernel would.
    const exec: ExecFn = async (argv, o) => {
      if (argv.includes("route") && argv.includes("add") && argv.some((a) => a.endsWith("-_rr-ukwest"))) {
        return { code: 2, stdout: "", stderr: "Error: Nexthop has invalid gateway." };
      }
      return execCommand(argv, o);
    };
    const target = new LocalTarget({ exec });
    const c = ctx("it-fail-route");
    const names = runNames(c.runId);
    const err = await target.up(FIVE, c).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toContain(`namespace ${names.namespacePrefix}0-_rr-ukwest`);
    expect(err?.message).toContain("ip -n");
    expect(err?.message).toContain("route add");
    expect(err?.message).toContain("Error: Nexthop has invalid gateway.");
    const { tempDir, pids } = target.resources;
    expect(namespacesWith(names.namespacePrefix).length).toBeGreaterThan(0);
    const report = await target.down();
    expect(report.status).toBe("ok");
    expectNothingLeft(c.runId, tempDir, pids);
  });

  it("stops an up() still in progress when down() is called, leaving nothing", async () => {
    const target = new LocalTarget();
    const c = ctx("it-abort");
    const names = runNames(c.runId);
    const up = target.up(FIVE, c).then(
      () => null,
      (e: unknown) => e as Error,
    );
    // Let it get some way in (namespaces exist), then tear down underneath it.
    for (let i = 0; i < 200 && namespacesWith(names.namespacePrefix).length < 3; i++) await new Promise((r) => setTimeout(r, 10));
    const { tempDir } = target.resources;
    const report = await target.down();
    const err = await up;
    expect(err?.message).toMatch(/interrupted by down\(\)/);
    expect(report.errors).toEqual([]);
    expect(report.status).toBe("ok");
    expectNothingLeft(c.runId, tempDir, []);
  });

  it("stops bringing hosts up at Ctrl-C (the run's abort signal), at its next command, without waiting for the whole fabric", async () => {
    const target = new LocalTarget();
    const controller = new AbortController();
    const c = { ...ctx("it-signal"), signal: controller.signal };
    const names = runNames(c.runId);
    const up = target.up(FIVE, c).then(
      () => null,
      (e: unknown) => e as Error,
    );
    for (let i = 0; i < 500 && namespacesWith(names.namespacePrefix).length < 3; i++) await new Promise((r) => setTimeout(r, 10));
    controller.abort();
    const err = await up;
    expect(err?.message).toMatch(/local target: interrupted while bringing hosts up \(before `ip /);
    // It stopped early: no sshd (the last step of bring-up) was started.
    expect(target.resources.pids).toEqual([]);
    const { tempDir } = target.resources;
    const report = await target.down();
    expect(report.status).toBe("ok");
    expectNothingLeft(c.runId, tempDir, []);
  });

  it("reports not-started when down() comes before any up()", async () => {
    expect(await new LocalTarget().down()).toEqual({ status: "not-started", errors: [], removed: [] });
  });
});

describe("LocalTarget: each host's processes pinned to their own CPUs", () => {
  const pairPlan = (): Plan => {
    const plan = planOf([host("client", { ppg: "p" }), host("server", { ppg: "p" })]);
    plan.cells = [
      {
        id: "d0/sockperf#0/client->server",
        deployment: "d0",
        variant: "base",
        replica: 0,
        repetition: 0,
        measure: 0,
        tool: "sockperf",
        params: {},
        from: "client",
        to: "server",
        path: "private",
        pathKind: "same-ppg",
        crossesPeering: false,
        estimatedSeconds: 1,
      },
    ];
    return plan;
  };
  const allowedList = (pid: number | string) => /^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];

  it("pins client and server of a cell to different CPUs: the sshd and what is started through it, read from /proc", async () => {
    const target = new LocalTarget({ cpus: [0, 1] });
    const c = ctx("it-cpus");
    const sessions: NodeSSH[] = [];
    try {
      const env = await target.up(pairPlan(), c);
      const tempDir = target.resources.tempDir as string;
      const lists: string[] = [];
      for (const h of env.hosts) {
        const asked = h.actual.cpusAsked as string;
        expect(["0", "1"]).toContain(asked);
        expect(h.actual.cpus, h.role).toBe(asked);
        // The sshd itself…
        const sshdPid = readFileSync(join(tempDir, "hosts", h.actual.hostname as string, "sshd.pid"), "utf8").trim();
        expect(allowedList(sshdPid), `${h.role} sshd`).toBe(asked);
        // …a command run through it, and a process it left running.
        const ssh = await connect(h);
        sessions.push(ssh);
        expect((await run(ssh, "grep Cpus_allowed_list /proc/self/status")).trim()).toBe(`Cpus_allowed_list:\t${asked}`);
        const pid = (await run(ssh, "sleep 30 >/dev/null 2>&1 & echo $!")).trim();
        expect(allowedList(pid), `${h.role} started process`).toBe(asked);
        lists.push(asked);
      }
      expect(new Set(lists).size).toBe(2);
      expect(env.facts.cpus).toMatch(/^2 CPUs \(0-1\); at most 2 hosts measure at once; .*d0-client [01], d0-server [01]; hosts measuring together are on different CPUs$/);
      expect(env.facts["cpus.shortfall"]).toBeUndefined();
      expect(env.shaping.note).not.toMatch(/CPUs:/);
    } finally {
      for (const s of sessions) s.dispose();
      const r = target.resources;
      const report = await target.down();
      expect(report.status).toBe("ok");
      expectNothingLeft(c.runId, r.tempDir, r.pids);
    }
  });

  it("says so in the facts and the shaping note when there are fewer CPUs than hosts measuring at once", async () => {
    const target = new LocalTarget({ cpus: [0] });
    const c = ctx("it-cpus-short");
    try {
      const env = await target.up(pairPlan(), c);
      for (const h of env.hosts) expect(h.actual.cpus).toBe("0");
      expect(env.facts["cpus.shortfall"]).toMatch(/^this machine has 1 CPU \(0\) for up to 2 hosts that measure at once \(d0: client, server\)/);
      expect(env.shaping.note).toMatch(/; CPUs: this machine has 1 CPU/);
      // Both hosts are B1s: no documented bandwidth, so uncapped, and said so.
      expect(env.shaping.note).toMatch(/UNCAPPED .*: d0-client \(Standard_B1s\), d0-server \(Standard_B1s\)/);
    } finally {
      const r = target.resources;
      const report = await target.down();
      expect(report.status).toBe("ok");
      expectNothingLeft(c.runId, r.tempDir, r.pids);
    }
  });
});
