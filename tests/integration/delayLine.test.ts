/**
 * The delay line between two namespaces (issue 25, item 1): each end delays its egress towards
 * the other by 500 µs, so a round trip gains 1,000 µs ± the precision the module states. Then the
 * helper's own summary, how it is found for cleanup (it runs inside the host's namespace), and
 * what a dead helper does (its queue drops: loss, never an undelayed run).
 *
 * Builds namespaces: run under `flock /tmp/latlab-ns.lock`, like every test that does. Needs
 * Debian's gcc, libnetfilter-queue-dev and iptables (.ci/run installs them).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureHelperBuilt } from "../../src/targets/local/delayLine/build.ts";
import { DEFAULT_TUNING, delayQueues, delayRuleCommands, removeDelayRuleCommands } from "../../src/targets/local/delayLine/delayLine.ts";
import { startHelper, stopHelper, type RunningHelper } from "../../src/targets/local/delayLine/helperProcess.ts";
import { DELAY_LINE_STATED_P50_US, DELAY_LINE_TAIL_BOUND_US, measureAroundBringUp, pingRtts } from "../../src/targets/local/delayLine/precision.ts";
import { execCommand, mustExec } from "../../src/targets/local/exec.ts";
import { quantileOfSorted, sortedCopy } from "../../src/report/html/chartData.ts";
import { modelRtt } from "../../src/targets/local/model/latencyModel.ts";
import { modelledRttQuantilesUs, oneWaySpread, rttDistribution } from "../../src/targets/local/model/latencySpread.ts";
import { runShort } from "../../src/targets/local/network/names.ts";
import { killNamespaceProcesses, namespacePids } from "../../src/targets/local/network/namespaceProcesses.ts";
import type { PeerDelay } from "../../src/targets/local/network/shaping.ts";

// ll-<short>-… like a run's namespaces, so that `latlab cleanup --unrecorded` finds any leftover.
const short = runShort(`delayline-test-${process.pid}-${Date.now()}`);
const ends = [
  { ns: `ll-${short}-0-a`, address: "198.18.0.1", peer: "b" },
  { ns: `ll-${short}-0-b`, address: "198.18.0.2", peer: "a" },
] as const;
const ONE_WAY_US = 500;
const exec = execCommand;
const dir = mkdtempSync(join(tmpdir(), `latlab-${short}-`));
const helpers: RunningHelper[] = [];

const peerOf = (i: 0 | 1): PeerDelay => ({ peerRole: ends[i].peer, address: ends[1 - i]!.address, pathKind: "same-zone", rttUs: 2 * ONE_WAY_US, egressDelayUs: ONE_WAY_US });
const must = (argv: string[], what: string) => mustExec(exec, argv, what);

beforeAll(async () => {
  for (const e of ends) await must(["ip", "netns", "add", e.ns], "namespace");
  await must(["ip", "-n", ends[0].ns, "link", "add", "eth0", "type", "veth", "peer", "name", "eth0", "netns", ends[1].ns], "veth");
  for (const e of ends) {
    await must(["ip", "-n", e.ns, "addr", "add", `${e.address}/24`, "dev", "eth0"], "address");
    await must(["ip", "-n", e.ns, "link", "set", "eth0", "up"], "link up");
    await must(["ip", "-n", e.ns, "link", "set", "lo", "up"], "lo up");
  }
});

afterAll(async () => {
  const errors: string[] = [];
  for (const h of helpers) await stopHelper(h, 1_000);
  for (const e of ends) {
    await killNamespaceProcesses(exec, e.ns, 1_000, errors, []);
    await exec(["ip", "netns", "del", e.ns]);
  }
  rmSync(dir, { recursive: true, force: true });
});

describe("the delay line between two namespaces", () => {
  it("adds 1,000 µs to the round trip at 500 µs each way, within the precision it states", async () => {
    const binary = await ensureHelperBuilt({ exec });
    const precision = await measureAroundBringUp(exec, { namespace: ends[0].ns, address: ends[1].address }, 2 * ONE_WAY_US, async () => {
      for (const i of [0, 1] as const) {
        const queues = delayQueues([peerOf(i)]);
        helpers.push(await startHelper({ binary, namespace: ends[i].ns, queues, tuning: DEFAULT_TUNING, logPath: join(dir, `${ends[i].peer}.log`) }));
        for (const argv of delayRuleCommands(ends[i].ns, "eth0", queues)) await must(argv, "delay rule");
      }
    });
    console.log(`delay line at ${ONE_WAY_US} µs one-way: ${JSON.stringify(precision)}`);
    expect(precision.delayedSamples).toBe(200);
    expect(Math.abs(precision.delayedP50Us - (precision.baselineP50Us + 2 * ONE_WAY_US))).toBeLessThanOrEqual(DELAY_LINE_STATED_P50_US);
    expect(Math.abs(precision.p50ErrorUs)).toBeLessThanOrEqual(DELAY_LINE_STATED_P50_US);
    expect(precision.p99ErrorUs).toBeLessThanOrEqual(DELAY_LINE_TAIL_BOUND_US);
  });

  it("is found inside the host's namespace (where cleanup looks) and stops with its summary", async () => {
    const [a] = helpers;
    if (!a) throw new Error("the first test started no helper");
    expect(await namespacePids(exec, ends[0].ns)).toContain(a.process.pid);
    // The kernel's drop counts the summary reads: this kernel's nfnetlink_queue lines, as the helper parses them.
    const proc = await must(["ip", "netns", "exec", ends[0].ns, "cat", "/proc/net/netfilter/nfnetlink_queue"], "nfnetlink_queue");
    expect(proc.stdout.trim().split("\n").map((l) => l.trim().split(/\s+/).length)).toEqual([9]);
    const copy = join(dir, "nfnetlink_queue");
    writeFileSync(copy, proc.stdout);
    expect((await must([a.argv[4]!, "--nfqueue-stats", copy, "0=1"], "nfqueue stats")).stdout.trim()).toBe("queue full 0, not delivered 0");
    for (const argv of removeDelayRuleCommands(ends[0].ns, "eth0")) await must(argv, "remove rule");
    const summary = await stopHelper(a);
    // Both ping series' requests leave a, and only the delayed series' went through the queue; the
    // kernel's counts were read (0, not null), and it stopped because it was told to.
    expect(summary).toMatchObject({ dropped: 0, droppedQueueFull: 0, droppedUndelivered: 0, droppedHelperFull: 0, failed: false });
    expect(a.process.exit?.code).toBe(0);
    expect(summary!.released).toBeGreaterThanOrEqual(200);
    expect(await namespacePids(exec, ends[0].ns)).not.toContain(a.process.pid);
  });

  it("drops, rather than passes undelayed, what a dead helper's queue gets", async () => {
    const b = helpers[1];
    if (!b) throw new Error("the first test started no helper");
    process.kill(b.process.pid, "SIGKILL");
    for (let i = 0; i < 100 && !b.process.exit; i++) await new Promise((r) => setTimeout(r, 10));
    // b's rules are still in place: its replies to a go to a queue nobody reads.
    await expect(pingRtts(exec, ends[0].ns, ends[1].address, 3, 0.2)).rejects.toThrow();
  });
});

describe("the delay line with the model's spread (issue 25, item 2)", () => {
  // Cross-zone, seed 000: median 1,425 µs, p99 2,250 µs; each end draws its own half.
  const model = modelRtt("cross-zone", false, false);
  const egressSpread = oneWaySpread(rttDistribution(model.rttUs, model.spread)!);
  const jittered = (i: 0 | 1): PeerDelay => ({ peerRole: ends[i].peer, address: ends[1 - i]!.address, pathKind: "cross-zone", rttUs: model.rttUs, egressDelayUs: Math.round(model.rttUs / 2), egressSpread });
  const constant = (i: 0 | 1): PeerDelay => ({ ...jittered(i), egressSpread: undefined });
  const quantiles = (rtts: number[]) => {
    const s = sortedCopy(rtts);
    return { p50: quantileOfSorted(s, 0.5), p99: quantileOfSorted(s, 0.99) };
  };

  /** Both ends' helpers and rules for `peerOf`, `count` pings 5 ms apart through them, then all removed again. */
  async function pingThrough(peerOf: (i: 0 | 1) => PeerDelay, count: number, tag: string): Promise<number[]> {
    const binary = await ensureHelperBuilt({ exec });
    const started: RunningHelper[] = [];
    try {
      for (const i of [0, 1] as const) {
        const queues = delayQueues([peerOf(i)]);
        const h = await startHelper({ binary, namespace: ends[i].ns, queues, tuning: DEFAULT_TUNING, logPath: join(dir, `${tag}-${ends[i].peer}.log`) });
        started.push(h);
        helpers.push(h);
        for (const argv of delayRuleCommands(ends[i].ns, "eth0", queues)) await must(argv, "delay rule");
      }
      return await pingRtts(exec, ends[0].ns, ends[1].address, count, 0.005);
    } finally {
      for (const e of ends) for (const argv of removeDelayRuleCommands(e.ns, "eth0")) await exec(argv);
      for (const h of started) await stopHelper(h, 1_000);
    }
  }

  it("gives the round trips a shape, not a spike: the modelled median, and a tail far wider than a constant delay's", async () => {
    // What the earlier tests left: b's rules, its helper killed. Start from a clean path.
    for (const e of ends) for (const argv of removeDelayRuleCommands(e.ns, "eth0")) await exec(argv);
    const baseline = quantiles(await pingRtts(exec, ends[0].ns, ends[1].address, 100, 0.005));
    const flat = quantiles(await pingThrough(constant, 400, "constant"));
    const shaped = quantiles(await pingThrough(jittered, 400, "jittered"));
    const modelled = modelledRttQuantilesUs(jittered(0), jittered(1));
    console.log(`delay line, cross-zone: baseline ${JSON.stringify(baseline)}, constant ${JSON.stringify(flat)}, spread ${JSON.stringify(shaped)}, modelled ${JSON.stringify(modelled)} (µs; 400 pings each, one series)`);
    // The median: the model's, within the precision the delay line states.
    expect(Math.abs(shaped.p50 - baseline.p50 - modelled.p50Us)).toBeLessThanOrEqual(DELAY_LINE_STATED_P50_US);
    // The tail: at least half the modelled p99 − p50 (825 µs; four pings make the p99 of 400), and
    // three times the constant delay's own (the delay line's noise, ~100 µs).
    const modelledWidth = modelled.p99Us - modelled.p50Us;
    expect(shaped.p99 - shaped.p50).toBeGreaterThanOrEqual(0.5 * modelledWidth);
    expect(shaped.p99 - shaped.p50).toBeGreaterThanOrEqual(3 * (flat.p99 - flat.p50));
  });
});
