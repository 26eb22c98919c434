import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DELAY_LINE_SOURCE, ensureHelperBuilt, helperBinaryPath, helperBuildArgv } from "../../../../src/targets/local/delayLine/build.ts";
import { DEFAULT_TUNING, DELAY_CHAIN, delayLineLabel, delayQueues, delayRuleCommands, helperArgv, removeDelayRuleCommands } from "../../../../src/targets/local/delayLine/delayLine.ts";
import { parseHelperSummary } from "../../../../src/targets/local/delayLine/helperProcess.ts";
import { DelayLineRunSummarySchema, summarizeDelayLineRun } from "../../../../src/results/delayLineRecord.ts";
import { parsePingRttsUs, pingArgv, precisionFromSamples } from "../../../../src/targets/local/delayLine/precision.ts";
import { execCommand, mustExec, type ExecFn } from "../../../../src/targets/local/exec.ts";
import { runNames } from "../../../../src/targets/local/network/names.ts";
import { peerDelays } from "../../../../src/targets/local/network/shaping.ts";
import { buildDeploymentTopology } from "../../../../src/targets/local/network/topology.ts";
import { fiveHostDeployment } from "./fixtures.ts";

const topo = buildDeploymentTopology(fiveHostDeployment(), runNames("delayline"));
const client = topo.hosts[0];
if (!client) throw new Error("fixture");
const peers = peerDelays(client, topo.hosts);

describe("delay queues", () => {
  it("gives each peer a queue numbered from 0, with netem's egress delay and both its addresses", () => {
    const q = delayQueues(peers);
    // The delays are the model's (shaping.test.ts pins their values): the same netem would get.
    expect(q.map((x) => [x.queue, x.peerRole, x.delayUs])).toEqual(peers.map((p, i) => [i, p.peerRole, p.egressDelayUs]));
    expect(q.map((x) => x.peerRole)).toEqual(["server", "zone1", "zone2", "west"]);
    expect(q[0]?.addresses).toEqual([peers[0]?.address, peers[0]?.publicAddress]);
  });

  it("leaves peers with no delay alone and refuses fractional microseconds", () => {
    const [first] = peers;
    if (!first) throw new Error("fixture");
    expect(delayQueues([{ ...first, egressDelayUs: 0, publicAddress: undefined }, { ...first, peerRole: "b" }]).map((x) => [x.queue, x.peerRole, x.addresses.length])).toEqual([[0, "b", 2]]);
    expect(() => delayQueues([{ ...first, egressDelayUs: 1.5 }])).toThrow(/whole microseconds/);
    expect(() => delayQueues(Array.from({ length: 257 }, () => first))).toThrow(/at most 256/);
  });
});

describe("helper and rule commands", () => {
  const queues = delayQueues(peers);

  it("starts the helper inside the host's namespace with one QUEUE=DELAY_US (or QUEUE=ln:… with a spread) a peer", () => {
    // Spread peers' specs: delayLineSpread.test.ts.
    expect(helperArgv("/c/latlab-delayline", "ns1", queues)).toEqual(["ip", "netns", "exec", "ns1", "/c/latlab-delayline", ...peers.map((p, i) => (p.egressSpread ? `${i}=ln:${p.egressSpread.floorUs}:${p.egressSpread.scaleUs}:${p.egressSpread.sigma}` : `${i}=${p.egressDelayUs}`))]);
    expect(helperArgv("/c/latlab-delayline", "ns1", queues)[5]).toBe("0=394");
    expect(helperArgv("/b", "ns1", queues.slice(0, 1), { spinUs: 20, fifoPriority: 10, advanceNs: 12345.6 })).toEqual([
      "ip", "netns", "exec", "ns1", "/b", "--spin-us", "20", "--fifo", "10", "--advance-ns", "12346", "0=394",
    ]);
    expect(helperArgv("/b", "ns1", queues.slice(0, 1), DEFAULT_TUNING).slice(5)).toEqual(["--spin-us", "20", "--fifo", "10", "--no-deep-idle", "0=394"]);
    expect(() => helperArgv("/b", "ns1", [])).toThrow();
  });

  it("queues each peer address on the data interface from a chain of its own", () => {
    const cmds = delayRuleCommands("ns1", "eth0", queues);
    const pre = ["ip", "netns", "exec", "ns1", "iptables", "-w", "-t", "mangle"];
    expect(cmds[0]).toEqual([...pre, "-N", DELAY_CHAIN]);
    expect(cmds[1]).toEqual([...pre, "-A", DELAY_CHAIN, "-d", `${peers[0]?.address}/32`, "-j", "NFQUEUE", "--queue-num", "0"]);
    expect(cmds[2]).toEqual([...pre, "-A", DELAY_CHAIN, "-d", `${peers[0]?.publicAddress}/32`, "-j", "NFQUEUE", "--queue-num", "0"]);
    expect(cmds).toHaveLength(1 + 2 * queues.length + 1);
    // The jump comes last: the chain is complete before any packet is sent to it.
    expect(cmds.at(-1)).toEqual([...pre, "-A", "POSTROUTING", "-o", "eth0", "-j", DELAY_CHAIN]);
    expect(cmds.filter((c) => c.includes("NFQUEUE")).map((c) => c.at(-1))).toEqual(["0", "0", "1", "1", "2", "2", "3", "3"]);
    expect(delayRuleCommands("ns1", "eth0", queues, "iptables-legacy")[0]?.[4]).toBe("iptables-legacy");
  });

  it("removes the jump first, then the chain", () => {
    expect(removeDelayRuleCommands("ns1", "eth0").map((c) => c.slice(8))).toEqual([
      ["-D", "POSTROUTING", "-o", "eth0", "-j", DELAY_CHAIN],
      ["-F", DELAY_CHAIN],
      ["-X", DELAY_CHAIN],
    ]);
  });

  it("labels the shaping line with the measured precision", () => {
    expect(delayLineLabel(23.4)).toBe("delay line, ±23 µs at p99");
    expect(delayLineLabel(23.4, true)).toBe("delay line, ±23 µs at p99 (incl. sampling noise of the modelled spread)");
  });
});

describe("building the helper", () => {
  const dir = mkdtempSync(join(tmpdir(), "delayline-build-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("keeps one binary per version of the source", () => {
    const a = helperBinaryPath("/cache", "int main(){}");
    expect(a).toMatch(/^\/cache\/delayline-[0-9a-f]{12}\/latlab-delayline$/);
    expect(helperBinaryPath("/cache", "int main(){}")).toBe(a);
    expect(helperBinaryPath("/cache", "int main(){return 1;}")).not.toBe(a);
    expect(helperBuildArgv("cc", "/s/delayline.c", "/o")).toEqual(["cc", "-O2", "-Wall", "-Wextra", "-o", "/o", "/s/delayline.c", "-lnetfilter_queue", "-lnfnetlink", "-lm"]);
    expect(readFileSync(DELAY_LINE_SOURCE, "utf8")).toContain("NFQNL_COPY_META");
  });

  it("compiles once, to a partial name renamed into place, and names the packages when it cannot", async () => {
    const source = join(dir, "x.c");
    writeFileSync(source, "int main(void){return 0;}\n");
    const calls: string[][] = [];
    const exec: ExecFn = async (argv) => {
      calls.push([...argv]);
      writeFileSync(argv[5]!, "binary");
      return { code: 0, stdout: "", stderr: "" };
    };
    const bin = await ensureHelperBuilt({ exec, cacheRoot: dir, source });
    expect(bin).toBe(helperBinaryPath(dir, readFileSync(source, "utf8")));
    expect(existsSync(bin)).toBe(true);
    expect(calls[0]?.[5]).toMatch(/\.partial$/);
    await ensureHelperBuilt({ exec, cacheRoot: dir, source });
    expect(calls).toHaveLength(1);

    writeFileSync(source, "int main(void){return 2;}\n");
    // A compiler that fails may leave its output half-written: it goes, and no binary appears.
    const failing: ExecFn = async (argv) => {
      writeFileSync(argv[5]!, "half");
      return { code: 1, stdout: "", stderr: "fatal error: libnetfilter_queue/libnetfilter_queue.h: No such file or directory" };
    };
    await expect(ensureHelperBuilt({ exec: failing, cacheRoot: dir, source })).rejects.toThrow(/libnetfilter-queue-dev.*No such file/s);
    const failed = helperBinaryPath(dir, readFileSync(source, "utf8"));
    expect(existsSync(failed)).toBe(false);
    expect(readdirSync(dirname(failed))).toEqual([]);
  });
});

describe("helper summary", () => {
  const work = mkdtempSync(join(tmpdir(), "delayline-summary-"));
  afterAll(() => rmSync(work, { recursive: true, force: true }));
  const line = (kernelQueueFull: string, notDelivered: string) =>
    `delayline: released 1200 packets, dropped 12 (kernel queue full ${kernelQueueFull}, not delivered ${notDelivered}, helper full 2); held at most 310; 41 held behind the packet ahead, by up to 87 µs; release late by p50 4 µs, p99 31 µs, max 180 µs`;

  it("reads the helper's last line, with the kernel's drops of its queues, or null when it has none", () => {
    expect(parseHelperSummary(`ready\n${line("7", "3")}\n`)).toEqual({
      released: 1200, dropped: 12, droppedQueueFull: 7, droppedUndelivered: 3, droppedHelperFull: 2,
      heldPeak: 310, heldBehind: 41, heldBehindMaxUs: 87, lateP50Us: 4, lateP99Us: 31, lateMaxUs: 180, failed: false,
    });
    // The kernel's counts unreadable: null, not 0 (dropped is then only a lower bound).
    expect(parseHelperSummary(line("n/a", "n/a"))).toMatchObject({ droppedQueueFull: null, droppedUndelivered: null });
    // A helper that stopped on an error of its own says so after its summary.
    const failed = `${line("0", "0")}\ndelayline: recv: No buffer space available\ndelayline: stopped by the error above, not by a signal\n`;
    expect(parseHelperSummary(failed)).toMatchObject({ failed: true });
    expect(parseHelperSummary("ready\n")).toBeNull();
  });

  it("all helpers of a run in one record: sums, the worst helper's lateness, and who has no summary", () => {
    const a = parseHelperSummary(line("7", "3"))!;
    const b = { ...a, released: 800, dropped: 0, droppedQueueFull: null, droppedUndelivered: null, droppedHelperFull: 0, heldPeak: 500, heldBehind: 0, heldBehindMaxUs: 0, lateP50Us: 9, lateP99Us: 20, lateMaxUs: 400, failed: true };
    const run = summarizeDelayLineRun([{ name: "client", summary: a }, { name: "server", summary: b }, { name: "west", summary: null }]);
    expect(DelayLineRunSummarySchema.parse(run)).toEqual(run);
    expect(run).toMatchObject({
      helpers: 3, unsummarized: ["west"], failed: ["server"],
      released: 2000, dropped: 12, kernelDropsCounted: false, droppedQueueFull: 7, droppedUndelivered: 3, droppedHelperFull: 2,
      heldPeakMax: 500, heldBehind: 41, heldBehindMaxUs: 87, worstHelperLateP50Us: 9, worstHelperLateP99Us: 31, lateMaxUs: 400,
    });
    expect(run.perHelper.map((h) => h.name)).toEqual(["client", "server", "west"]);
    expect(summarizeDelayLineRun([{ name: "client", summary: a }])).toMatchObject({ kernelDropsCounted: true, unsummarized: [], failed: [] });
  });

  it("the built helper reads its queues' kernel drops in nfnetlink_queue's proc format (queue_dropped, user_dropped)", async () => {
    const binary = await ensureHelperBuilt({ exec: execCommand });
    // kernel nfnetlink_queue.c seq_show: queue_num peer_portid queue_total copy_mode copy_range queue_dropped queue_user_dropped id_sequence 1
    writeFileSync(join(work, "nfnetlink_queue"), ["    0   1234     5 2 65535     7     3     9999  1", "    1   1234     0 2 65535    11     0      100  1", "    9   1234     0 2 65535   100   100      100  1", ""].join("\n"));
    const r = await mustExec(execCommand, [binary, "--nfqueue-stats", join(work, "nfnetlink_queue"), "0=100", "1=200"], "nfqueue stats self-test");
    expect(r.stdout.trim()).toBe("queue full 18, not delivered 3");
  });
});

describe("precision", () => {
  it("reads RTTs in µs from ping's reply lines only", () => {
    const out = [
      "PING 198.18.0.2 (198.18.0.2) 56(84) bytes of data.",
      "64 bytes from 198.18.0.2: icmp_seq=1 ttl=64 time=1.052 ms",
      "64 bytes from 198.18.0.2: icmp_seq=2 ttl=64 time=0.998 ms",
      "",
      "rtt min/avg/max/mdev = 0.998/1.025/1.052/0.027 ms",
    ].join("\n");
    expect(parsePingRttsUs(out)).toEqual([1052, 998]);
    expect(pingArgv("ns1", "198.18.0.2", 200, 0.01)).toEqual(["ip", "netns", "exec", "ns1", "ping", "-n", "-c", "200", "-i", "0.01", "-W", "1", "198.18.0.2"]);
    expect(() => pingArgv("ns1", "a", 0, 1)).toThrow();
  });

  it("compares the delayed RTT's p50 and p99 with the path's median plus the model's p50 and p99", () => {
    // Baseline median 50; model 1000 (no spread): expected 1050 at p50 and p99.
    const baseline = [40, 50, 60];
    const delayed = [...Array.from({ length: 100 }, () => 1060), 1010];
    const p = precisionFromSamples(baseline, delayed, 1000);
    expect(p).toEqual({
      modelledP50Us: 1000,
      modelledP99Us: 1000,
      baselineP50Us: 50,
      delayedP50Us: 1060,
      delayedP99Us: 1060,
      p50ErrorUs: 10,
      p99ErrorUs: 10,
      precisionP99Us: 10,
      baselineSamples: 3,
      delayedSamples: 101,
    });
    // A tail of 3 in 101 at 1,250 puts the p99 at 1,250: 200 µs above a constant model…
    const tailed = [...Array.from({ length: 98 }, () => 1060), 1250, 1250, 1250];
    expect(precisionFromSamples(baseline, tailed, 1000)).toMatchObject({ p50ErrorUs: 10, p99ErrorUs: 200, precisionP99Us: 200 });
    // …and 50 µs above a model whose own p99 is 1,150 (jitter): the tail is the model's, not the delay line's error.
    expect(precisionFromSamples(baseline, tailed, { p50Us: 1000, p99Us: 1150 })).toMatchObject({ modelledP99Us: 1150, p50ErrorUs: 10, p99ErrorUs: 50, precisionP99Us: 50 });
    expect(() => precisionFromSamples([], delayed, 1000)).toThrow();
  });
});
