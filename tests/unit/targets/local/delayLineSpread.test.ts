/**
 * The delay line's spread (issue 25, item 2): queues carry the one-way distribution, the helper's
 * argv says it, and the built helper's sampler draws what latencySpread.ts models. The sampler
 * test builds delayline.c (build.ts; needs Debian's gcc and libnetfilter-queue-dev, which .ci/run
 * installs) and runs it in its self-test mode (`--sample`), which binds no queue: no root needed.
 */
import { describe, expect, it } from "vitest";
import { quantileOfSorted, sortedCopy } from "../../../../src/report/html/chartData.ts";
import { ensureHelperBuilt } from "../../../../src/targets/local/delayLine/build.ts";
import { delayQueues, helperArgv, helperSampleArgv, queueSpec, type DelayQueue } from "../../../../src/targets/local/delayLine/delayLine.ts";
import { execCommand, mustExec } from "../../../../src/targets/local/exec.ts";
import { modelledRttQuantilesUs } from "../../../../src/targets/local/model/latencySpread.ts";
import { runNames } from "../../../../src/targets/local/network/names.ts";
import { peerDelays } from "../../../../src/targets/local/network/shaping.ts";
import { buildDeploymentTopology } from "../../../../src/targets/local/network/topology.ts";
import { fiveHostDeployment } from "./fixtures.ts";

const topo = buildDeploymentTopology(fiveHostDeployment(), runNames("delayline-spread"));
const [client, , zone1, zone2] = topo.hosts;
if (!client || !zone1 || !zone2) throw new Error("fixture");
const peers = peerDelays(client, topo.hosts);
const queues = delayQueues(peers);
const byRole = (role: string): DelayQueue => queues.find((q) => q.peerRole === role)!;

describe("queues and argv with a spread", () => {
  it("carries each peer's one-way spread into its queue, and none where the model has none", () => {
    expect(queues.map((q) => q.spread)).toEqual(peers.map((p) => p.egressSpread));
    expect(byRole("server").spread).toBeUndefined(); // same-ppg: seed 001 gives an average only
    expect(byRole("zone1").spread).toEqual({ floorUs: 363, scaleUs: 57.754, sigma: 0.558875 });
  });

  it("tells the helper QUEUE=ln:FLOOR:SCALE:SIGMA for a spread, QUEUE=DELAY_US for a constant, and the seed", () => {
    expect(queueSpec(byRole("server"))).toBe("0=394");
    expect(queueSpec(byRole("zone1"))).toBe("1=ln:363:57.754:0.558875");
    expect(helperArgv("/b", "ns1", queues.slice(0, 2), { seed: 7 }).slice(5)).toEqual(["--seed", "7", "0=394", "1=ln:363:57.754:0.558875"]);
    expect(helperSampleArgv("/b", byRole("zone1"), 10, 3)).toEqual(["/b", "--seed", "3", "--sample", "10", "1=ln:363:57.754:0.558875"]);
    expect(helperSampleArgv("/b", byRole("zone1"), 10, 3, 20)).toEqual(["/b", "--seed", "3", "--sample", "10", "--sample-gap-us", "20", "1=ln:363:57.754:0.558875"]);
    expect(() => helperSampleArgv("/b", byRole("zone1"), 0, 3)).toThrow();
  });
});

describe("the built helper's sampler", () => {
  const N = 100_000;
  const sample = async (binary: string, q: DelayQueue, seed: number, gapUs?: number): Promise<number[]> => {
    const r = await mustExec(execCommand, helperSampleArgv(binary, q, N, seed, gapUs), "delay line sampler");
    return r.stdout.trim().split("\n").map(Number);
  };

  for (const role of ["zone1", "zone2"]) {
    it(`${role}: two ends' independent draws add up to the modelled round trip's p50 and p99`, async () => {
      const binary = await ensureHelperBuilt({ exec: execCommand });
      const q = byRole(role);
      const peer = peers.find((p) => p.peerRole === role)!;
      // The pair's two ends: this host's draws and the peer's (its own seed, as getrandom gives each helper).
      const [there, back] = [await sample(binary, q, 1), await sample(binary, q, 2)];
      const rtt = sortedCopy(there.map((d, i) => d + back[i]!));
      const modelled = modelledRttQuantilesUs(peer, peer);
      // 100,000 round trips: the p50's sampling error is ~1 µs, the p99's a few (fixed seeds: the figures are reproducible).
      expect(Math.abs(quantileOfSorted(rtt, 0.5) - modelled.p50Us)).toBeLessThan(0.005 * modelled.p50Us);
      expect(Math.abs(quantileOfSorted(rtt, 0.99) - modelled.p99Us)).toBeLessThan(0.01 * modelled.p99Us);
      expect(Math.min(...there)).toBeGreaterThanOrEqual(q.spread!.floorUs);
    });
  }

  it("keeps a queue in order: a packet leaves no earlier than the one ahead, which delays close trains more", async () => {
    const binary = await ensureHelperBuilt({ exec: execCommand });
    const q = byRole("zone2");
    const [apart, train] = [await sample(binary, q, 5, 100_000), await sample(binary, q, 5, 10)];
    // 100 ms apart: nothing waits, the draws are the draws (same seed as with no gap).
    expect(apart).toEqual(await sample(binary, q, 5));
    // 10 µs apart: release times (arrival + delay) never go backwards…
    expect(train.every((d, i) => i === 0 || i * 10 + d >= (i - 1) * 10 + train[i - 1]! - 1e-6)).toBe(true);
    // …and the median delay rises above the drawn one.
    expect(quantileOfSorted(sortedCopy(train), 0.5)).toBeGreaterThan(quantileOfSorted(sortedCopy(apart), 0.5) + 50);
  });
});
