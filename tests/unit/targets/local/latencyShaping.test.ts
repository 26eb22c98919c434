import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CommandError, type ExecFn, type ExecResult } from "../../../../src/targets/local/exec.ts";
import type { RunningHelper, StartOptions } from "../../../../src/targets/local/delayLine/helperProcess.ts";
import {
  applyShaping,
  buildFailureReason,
  detectShapingSupport,
  measuredPair,
  type DelayLineDeps,
  type HostShaping,
  type ShapingSupport,
} from "../../../../src/targets/local/network/latencyShaping.ts";
import type { PeerDelay } from "../../../../src/targets/local/network/shaping.ts";

const ok: ExecResult = { code: 0, stdout: "", stderr: "" };
/** An iptables call as "<namespace> <op> [<chain> when POSTROUTING]", a helper step as itself. */
const step = (c: readonly string[]): string =>
  c[0]?.startsWith("<") ? c.join(" ") : `${c[3]} ${c[8]}${c[9] === "POSTROUTING" ? " POSTROUTING" : ""}`;
const pingOutput = (ms: number, n: number) => Array.from({ length: n }, (_, i) => `64 bytes from x: icmp_seq=${i + 1} ttl=64 time=${ms.toFixed(3)} ms`).join("\n");

/** exec that records every argv; tc/iptables answers as `answer` says, ping answers 0.050 ms before any helper, `delayedMs` after. */
function fakeExec(answer: (argv: readonly string[]) => ExecResult | undefined = () => undefined, state = { helpers: 0, delayedMs: 1.475 }) {
  const calls: string[][] = [];
  const exec: ExecFn = async (argv) => {
    calls.push([...argv]);
    const a = answer(argv);
    if (a) return a;
    if (argv.includes("ping")) return { code: 0, stdout: pingOutput(state.helpers > 0 ? state.delayedMs : 0.05, 20), stderr: "" };
    return ok;
  };
  return { exec, calls, state };
}

/** Helpers that only record: started ones get pids 100, 101, …; `failStartFor` refuses one namespace. */
function fakeDeps(state: { helpers: number }, calls: string[][], failStartFor?: string): DelayLineDeps & { stopped: number[] } {
  const stopped: number[] = [];
  let pid = 100;
  return {
    stopped,
    build: async () => "/cache/latlab-delayline",
    start: async (o: StartOptions): Promise<RunningHelper> => {
      calls.push(["<start helper>", o.namespace, ...o.queues.map((q) => `${q.queue}=${q.delayUs}`)]);
      if (o.namespace === failStartFor) throw new Error("exited (code 1) instead of starting: nfq_create_queue: Operation not permitted");
      state.helpers++;
      return { namespace: o.namespace, argv: [], logPath: o.logPath, process: { pid: pid++, exit: null } as unknown as RunningHelper["process"] };
    },
    stop: async (h) => {
      calls.push(["<stop helper>", String(h.process.pid)]);
      stopped.push(h.process.pid);
    },
  };
}

const peer = (role: string, address: string, oneWayUs: number): PeerDelay => ({ peerRole: role, address, pathKind: "cross-zone", rttUs: 2 * oneWayUs, egressDelayUs: oneWayUs });
const hosts: HostShaping[] = [
  { label: "host client", namespace: "ns-client", dev: "eth0", address: "198.18.0.1", peers: [peer("server", "198.18.0.2", 712)], capMbit: null, logDir: "/tmp/x/client" },
  { label: "host server", namespace: "ns-server", dev: "eth0", address: "198.18.0.2", peers: [peer("client", "198.18.0.1", 713)], capMbit: 750, logDir: "/tmp/x/server" },
];
const noNetem = (delayLine: ShapingSupport["delayLine"]): ShapingSupport => ({ netem: false, tbf: true, netemError: "Specified qdisc kind is unknown.", delayLine });
const withDelayLine = noNetem({ available: true, binary: "/cache/latlab-delayline" });
const refuseNetem = (argv: readonly string[]) => (argv[0] === "tc" && argv.includes("netem") ? { code: 2, stdout: "", stderr: "Error: Specified qdisc kind is unknown." } : undefined);

describe("detectShapingSupport", () => {
  it("with netem, neither builds the helper nor probes NFQUEUE", async () => {
    const { exec, calls } = fakeExec();
    let built = false;
    const s = await detectShapingSupport(exec, "probe", { build: async () => ((built = true), "x") });
    expect(s).toMatchObject({ netem: true, tbf: true, delayLine: { available: false } });
    expect(built).toBe(false);
    expect(calls.some((c) => c.includes("iptables"))).toBe(false);
  });

  it("without netem: available once the helper builds and iptables takes an NFQUEUE rule (taken out again)", async () => {
    const { exec, calls } = fakeExec(refuseNetem);
    const s = await detectShapingSupport(exec, "probe", { build: async () => "/cache/h" });
    expect(s).toMatchObject({ netem: false, tbf: true, delayLine: { available: true, binary: "/cache/h" } });
    const ipt = calls.filter((c) => c.includes("iptables"));
    expect(ipt.map((c) => c[8])).toEqual(["-A", "-D"]);
    expect(ipt[0]).toEqual(expect.arrayContaining(["ip", "netns", "exec", "probe", "NFQUEUE", "--queue-num", "0"]));
  });

  it("says what is missing: iptables refusing NFQUEUE, and the Debian package behind a failed build", async () => {
    const { exec } = fakeExec((argv) => refuseNetem(argv) ?? (argv.includes("iptables") ? { code: 2, stdout: "", stderr: "iptables: No chain/target/match by that name." } : undefined));
    const noHeaders = new CommandError(["cc"], { code: 1, stdout: "", stderr: "delayline.c:12:10: fatal error: libnetfilter_queue/libnetfilter_queue.h: No such file or directory" }, "building");
    const s = await detectShapingSupport(exec, "probe", { build: async () => Promise.reject(noHeaders) });
    expect(s.delayLine.available).toBe(false);
    expect(s.delayLine.reason).toBe(
      "iptables refused NFQUEUE: iptables: No chain/target/match by that name.; no libnetfilter_queue headers (Debian: libnetfilter-queue-dev) (the delay line needs Debian's gcc, libnetfilter-queue-dev, iptables)",
    );
    expect(buildFailureReason(new CommandError(["cc"], { code: 127, stdout: "", stderr: "cc: command not found" }, "building"))).toBe("no gcc (Debian: gcc)");
    const { exec: noIptables } = fakeExec((argv) => refuseNetem(argv) ?? (argv.includes("iptables") ? { code: 255, stdout: "", stderr: 'exec of "iptables" failed: No such file or directory' } : undefined));
    expect((await detectShapingSupport(noIptables, "probe", { build: async () => "/h" })).delayLine.reason).toMatch(/^no iptables \(Debian: iptables\)/);
  });
});

describe("applyShaping", () => {
  it("with netem: netem per host (its htb carries the cap), no helper", async () => {
    const { exec, calls, state } = fakeExec();
    const deps = fakeDeps(state, calls);
    const a = await applyShaping(exec, { netem: true, tbf: true, delayLine: { available: false } }, hosts, { deps });
    expect(a.latency).toBe("netem");
    expect(a.label).toBe("netem");
    expect([...a.capApplied]).toEqual([["ns-client", null], ["ns-server", 750]]);
    expect(calls.filter((c) => c.includes("netem")).map((c) => c[2])).toEqual(["ns-client", "ns-server"]);
    expect(calls.some((c) => c[0] === "<start helper>")).toBe(false);
    expect(a.helpers).toEqual([]);
  });

  it("with netem and a spread: the distribution table is written where tc is told to read it, before tc runs", async () => {
    const { exec, calls, state } = fakeExec();
    const deps = fakeDeps(state, calls);
    const dir = mkdtempSync(join(tmpdir(), "latlab-netem-tables-"));
    try {
      const spread = { floorUs: 363, scaleUs: 57.754, sigma: 0.558875 };
      const jittered = hosts.map((h) => ({ ...h, peers: h.peers.map((p) => ({ ...p, egressSpread: spread })) }));
      await applyShaping(exec, { netem: true, tbf: true, delayLine: { available: false } }, jittered, { deps, netemTableDir: dir });
      const netem = calls.filter((c) => c.includes("netem"));
      expect(netem).toHaveLength(2);
      for (const c of netem) expect(c.slice(0, 2)).toEqual(["env", `TC_LIB_DIR=${dir}`]);
      const table = readFileSync(join(dir, "latlab-sln-0.558875.dist"), "utf8");
      expect(table.trim().split(/\s+/).length).toBeGreaterThan(1000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("without netem: tbf for the cap, one helper per host, its rules only after it is ready, precision measured on the pair", async () => {
    const { exec, calls, state } = fakeExec();
    const deps = fakeDeps(state, calls);
    const logs: string[] = [];
    const a = await applyShaping(exec, withDelayLine, hosts, { deps, precisionPings: 20, log: (m) => logs.push(m) });
    expect(a.latency).toBe("delay-line");
    expect([...a.capApplied]).toEqual([["ns-client", null], ["ns-server", 750]]);
    const steps = calls.map((c) => (c[0] === "<start helper>" ? c.join(" ") : c.includes("tbf") ? `tbf ${c[2]}` : c.includes("ping") ? `ping ${c[3]}` : c.includes("NFQUEUE") ? `nfqueue ${c[3]}` : null)).filter((x) => x !== null);
    expect(steps).toEqual(["tbf ns-server", "ping ns-client", "<start helper> ns-client 0=712", "nfqueue ns-client", "<start helper> ns-server 0=713", "nfqueue ns-server", "ping ns-client"]);
    // Modelled 712 + 713 = 1,425 µs over a 50 µs path: 1,475 µs measured is no error at all.
    expect(a.precision).toMatchObject({ modelledP50Us: 1425, baselineP50Us: 50, delayedP50Us: 1475, p50ErrorUs: 0, p99ErrorUs: 0, precisionP99Us: 0, delayedSamples: 20 });
    expect(a.precisionPair).toBe("host client → host server");
    expect(a.label).toBe("delay line, ±0 µs at p99");
    expect(a.helpers.map((h) => [h.namespace, h.pid, h.logPath])).toEqual([
      ["ns-client", 100, "/tmp/x/client/delayline-ns-client.log"],
      ["ns-server", 101, "/tmp/x/server/delayline-ns-server.log"],
    ]);
    expect(logs.join("\n")).toMatch(/delay line precision on host client → host server: p50 error 0 µs, p99 error 0 µs/);
    const before = calls.length;
    expect(await a.stop()).toEqual([]);
    expect(deps.stopped).toEqual([101, 100]);
    // The rules go before the helpers: a packet queued to a helper that is gone would be dropped.
    expect(calls.slice(before).map(step)).toEqual([
      "ns-server -D POSTROUTING", "ns-server -F", "ns-server -X",
      "ns-client -D POSTROUTING", "ns-client -F", "ns-client -X",
      "<stop helper> 101", "<stop helper> 100",
    ]);
  });

  it("installs over a chain an earlier bring-up left (taken out first), and says nothing when there was none", async () => {
    const noChain = { code: 1, stdout: "", stderr: "iptables: No chain/target/match by that name." };
    const { exec, calls, state } = fakeExec((argv) => (argv.includes("iptables") && ["-D", "-F", "-X"].includes(argv[8]!) ? noChain : undefined));
    const a = await applyShaping(exec, withDelayLine, hosts, { deps: fakeDeps(state, calls), precisionPings: 20 });
    expect(a.latency).toBe("delay-line");
    const client = calls.filter((c) => c.includes("iptables") && c[3] === "ns-client").map(step);
    expect(client.slice(0, 4)).toEqual(["ns-client -D POSTROUTING", "ns-client -F", "ns-client -X", "ns-client -N"]);
  });

  it("a helper that does not start: the ones started are stopped, and the error names the host", async () => {
    const { exec, calls, state } = fakeExec();
    const deps = fakeDeps(state, calls, "ns-server");
    await expect(applyShaping(exec, withDelayLine, hosts, { deps, precisionPings: 20 })).rejects.toThrow(
      "delay line for host server: exited (code 1) instead of starting: nfq_create_queue: Operation not permitted",
    );
    expect(deps.stopped).toEqual([100]);
  });

  it("a rule iptables refuses: the helpers are stopped, the error names the host and the command; one that cannot be stopped is said too", async () => {
    const { exec, calls, state } = fakeExec((argv) => (argv.includes("NFQUEUE") && argv.includes("ns-server") ? { code: 1, stdout: "", stderr: "iptables: Resource temporarily unavailable." } : undefined));
    const deps = fakeDeps(state, calls);
    deps.stop = async (h) => {
      calls.push(["<stop helper>", String(h.process.pid)]);
      if (h.process.pid === 100) throw new Error("pid 100 still running after SIGKILL");
      deps.stopped.push(h.process.pid);
    };
    const err = await applyShaping(exec, withDelayLine, hosts, { deps, precisionPings: 20 }).catch((e: Error) => e);
    expect((err as Error).message).toMatch(/^shaping host server: `ip netns exec ns-server iptables .*NFQUEUE.*` failed with exit code 1: iptables: Resource temporarily unavailable\./);
    expect((err as Error).message).toMatch(/; and: delay line of host client \(pid 100\) could not be stopped: pid 100 still running after SIGKILL$/);
    expect(deps.stopped).toEqual([101]);
    // Nothing left behind: the rules of both hosts (the server's half-installed) are taken out,
    // before the helpers stop; else the client's packets would go to a queue nobody reads.
    const failedAt = calls.findIndex((c) => c.includes("NFQUEUE") && c.includes("ns-server"));
    expect(calls.slice(failedAt + 1).map(step)).toEqual([
      "ns-server -D POSTROUTING", "ns-server -F", "ns-server -X",
      "ns-client -D POSTROUTING", "ns-client -F", "ns-client -X",
      "<stop helper> 101", "<stop helper> 100",
    ]);
  });

  it("measures precision on a pair without a modelled spread where there is one, else the narrowest, and says so", async () => {
    const spread = (sigma: number) => ({ floorUs: 363, scaleUs: 57.754, sigma });
    const spreadPeer = (role: string, address: string, sigma: number): PeerDelay => ({ ...peer(role, address, 420), egressSpread: spread(sigma) });
    const host = (name: string, address: string, peers: PeerDelay[]): HostShaping => ({ label: `host ${name}`, namespace: `ns-${name}`, dev: "eth0", address, peers, capMbit: null, logDir: "/tmp/x" });
    // a ↔ b carries a spread, a ↔ c none: c, though b comes first.
    const mixed = [
      host("a", "198.18.0.1", [spreadPeer("b", "198.18.0.2", 0.56), peer("c", "198.18.0.3", 200)]),
      host("b", "198.18.0.2", [spreadPeer("a", "198.18.0.1", 0.56)]),
      host("c", "198.18.0.3", [peer("a", "198.18.0.1", 200)]),
    ];
    expect(measuredPair(mixed)).toMatchObject({ from: { label: "host a" }, to: { label: "host c" }, modelled: { p50Us: 400, p99Us: 400 } });
    const { exec, calls, state } = fakeExec();
    const a = await applyShaping(exec, withDelayLine, mixed, { deps: fakeDeps(state, calls), precisionPings: 20 });
    expect(a.precisionPair).toBe("host a → host c");
    expect(a.label).toMatch(/^delay line, ±\d+ µs at p99$/);
    // Spread everywhere: the narrowest (b ↔ c, σ 0.2), and the label says what its figure holds.
    const spreadOnly = [
      host("a", "198.18.0.1", [spreadPeer("b", "198.18.0.2", 0.56)]),
      host("b", "198.18.0.2", [spreadPeer("a", "198.18.0.1", 0.56), spreadPeer("c", "198.18.0.3", 0.2)]),
      host("c", "198.18.0.3", [spreadPeer("b", "198.18.0.2", 0.2)]),
    ];
    expect(measuredPair(spreadOnly)).toMatchObject({ from: { label: "host b" }, to: { label: "host c" } });
    const { exec: exec2, calls: calls2, state: state2 } = fakeExec();
    const b = await applyShaping(exec2, withDelayLine, spreadOnly, { deps: fakeDeps(state2, calls2), precisionPings: 20 });
    expect(b.precisionPair).toBe("host b → host c");
    expect(b.label).toMatch(/^delay line, ±\d+ µs at p99 \(incl\. sampling noise of the modelled spread\)$/);
  });

  it("neither netem nor the delay line: caps with tbf only, latency not applied, the reason in the label", async () => {
    const { exec, calls, state } = fakeExec();
    const a = await applyShaping(exec, noNetem({ available: false, reason: "no gcc (Debian: gcc)" }), hosts, { deps: fakeDeps(state, calls) });
    expect(a.latency).toBeNull();
    expect(a.label).toBe("no netem, no delay line (no gcc (Debian: gcc))");
    expect(calls.map((c) => c.includes("tbf"))).toEqual([true]);
    expect([...a.capApplied]).toEqual([["ns-client", null], ["ns-server", 750]]);
  });
});
