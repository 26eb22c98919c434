/**
 * Deployments run at the same time on a target whose deployments are separate machines
 * (Target.concurrentDeployments), one step at a time elsewhere or with concurrency "serial".
 * Overlap is shown by the order things happened in, never by a wall-clock budget: a deployment's
 * ping waits (up to a fallback far longer than the test needs) until the other deployment's
 * ping of the same round has started, so a serial run ends each ping before the next starts.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildPlan, defineExperiment } from "../../../src/index.ts";
import type { Plan } from "../../../src/plan/types.ts";
import { timingLine } from "../../../src/report/wording.ts";
import type { Connect } from "../../../src/runner/connections.ts";
import { runExperiment, type RunOptions } from "../../../src/runner/runExperiment.ts";
import type { Target } from "../../../src/targets/target.ts";
import { delay, fakeSsh, never, type FakeSsh } from "./fakeSsh.ts";
import { tempDirs } from "../../tempDirs.ts";
import { fakeTarget, silentProgress } from "./fakeTarget.ts";

const tempDir = tempDirs();
const pingOut = readFileSync(join(import.meta.dirname, "../../fixtures/ping/normal.stdout"), "utf8");

/** Two variants → two deployments of client + server; one ping per repetition, two repetitions. */
const plan: Plan = buildPlan(
  defineExperiment({
    name: "fake",
    description: "deployments at the same time",
    axes: { ppg: [false, true] },
    hosts: { client: {}, server: {} },
    measure: [{ tool: "ping", params: { count: 3, interval: 0.1 } }],
    repetitions: 2,
  }),
);
const DEPLOYMENTS = plan.deployments.map((d) => d.id);


/**
 * Fake hosts whose client pings record `start`/`end` events. The n-th ping of a deployment ends
 * once every deployment in `waitFor` has started its n-th ping, or after FALLBACK_MS.
 */
function recordingHosts(options: { waitFor?: readonly string[]; ping?: (deployment: string, n: number) => Promise<void> } = {}) {
  const FALLBACK_MS = 1500;
  const events: string[] = [];
  const fakes: { deployment: string; fake: FakeSsh }[] = [];
  const pings = new Map<string, number>();
  const waiters: (() => void)[] = [];
  const startedRound = (n: number) => (options.waitFor ?? []).every((d) => (pings.get(d) ?? 0) > n);
  const connect: Connect = async (h) => {
    const fake = fakeSsh(h.role, async (cmd) => {
      if (!(h.role === "client" && /\bping\b.*-c/.test(cmd))) return { stdout: "ping from iputils 20240117" };
      const n = pings.get(h.deployment) ?? 0;
      pings.set(h.deployment, n + 1);
      events.push(`start ${h.deployment} ${n}`);
      for (const w of waiters.splice(0)) w();
      if (options.ping) await options.ping(h.deployment, n);
      else await Promise.race([delay(FALLBACK_MS), new Promise<void>(function wait(resolve) {
        if (startedRound(n)) resolve();
        else waiters.push(() => wait(resolve));
      })]);
      events.push(`end ${h.deployment} ${n}`);
      return { stdout: pingOut };
    });
    fakes.push({ deployment: h.deployment, fake });
    return fake.ssh;
  };
  return { events, fakes, connect, pings };
}

const run = (target: Target, connect: Connect, over: Partial<RunOptions> = {}) =>
  runExperiment({ source: "fake.ts", plan, target, runId: "unit", runDir: tempDir("latlab-unit-concurrent-"), progress: silentProgress, signal: new AbortController().signal, connect, ...over });

describe("runExperiment: deployments at the same time", () => {
  it("on a target whose deployments are separate machines, two deployments' cells overlap, each deployment's own one after another", async () => {
    const hosts = recordingHosts({ waitFor: DEPLOYMENTS });
    const results = await run(fakeTarget({ concurrentDeployments: true }), hosts.connect);
    expect(results.status).toBe("complete");
    for (const n of [0, 1]) {
      // Both deployments' n-th ping started before either ended: they ran over each other.
      const starts = DEPLOYMENTS.map((d) => hosts.events.indexOf(`start ${d} ${n}`));
      const ends = DEPLOYMENTS.map((d) => hosts.events.indexOf(`end ${d} ${n}`));
      expect(Math.max(...starts), hosts.events.join(", ")).toBeLessThan(Math.min(...ends));
    }
    // Within a deployment: repetition 0 ended before repetition 1 started.
    for (const d of DEPLOYMENTS) expect(hosts.events.indexOf(`end ${d} 0`)).toBeLessThan(hosts.events.indexOf(`start ${d} 1`));
    expect(hosts.fakes.every((f) => f.fake.disposed && f.fake.afterDispose.length === 0)).toBe(true);
    expect(results.measurements.map((m) => m.cell)).toEqual(plan.cells.map((c) => c.id));
    const t = results.timing!;
    expect(t.concurrentDeployments).toBe(true);
    expect(t.deployments?.map((d) => d.deployment)).toEqual(DEPLOYMENTS);
    for (const d of t.deployments!) expect(d.readySeconds + d.cellsSeconds).toBeLessThanOrEqual(t.cellsSeconds + 0.002);
    expect(timingLine(results)).toContain("; 2 deployments at the same time (one after another: ");
  });

  it("one deployment that cannot be reached fails its own cells while the other's are measured", async () => {
    const [good, bad] = DEPLOYMENTS as [string, string];
    const hosts = recordingHosts();
    const connect: Connect = async (h, o) => {
      if (h.deployment === bad && h.role === "client") {
        // Fails while the other deployment is measuring.
        while (!hosts.pings.get(good)) await delay(1);
        throw new Error(`${bad}/client: host key does not match`);
      }
      return hosts.connect(h, o);
    };
    const results = await run(fakeTarget({ concurrentDeployments: true }), connect);
    for (const m of results.measurements) {
      if (m.deployment === good) expect([m.status, m.error]).toEqual(["ok", undefined]);
      else expect([m.status, m.error]).toEqual(["failed", `${bad}/client: host key does not match`]);
    }
    expect(results.measurements.filter((m) => m.deployment === good)).toHaveLength(2);
    expect(results.status).toBe("partial");
    expect(hosts.events.filter((e) => e.startsWith("end"))).toEqual([`end ${good} 0`, `end ${good} 1`]);
    expect(hosts.fakes.every((f) => f.fake.disposed)).toBe(true);
  });

  it("Ctrl-C stops every deployment's chain; their connections close and teardown still runs", async () => {
    const controller = new AbortController();
    const hosts = recordingHosts({
      ping: async () => {
        // Both deployments are measuring: the user presses Ctrl-C.
        if (hosts.pings.size === DEPLOYMENTS.length) setImmediate(() => controller.abort());
        await never();
      },
    });
    const target = fakeTarget({ concurrentDeployments: true });
    const results = await run(target, hosts.connect, { signal: controller.signal });
    expect(results.status).toBe("interrupted");
    expect(target.downs).toBe(1);
    // Each chain stopped at its first ping: repetition 1 never started anywhere.
    expect(hosts.events.sort()).toEqual(DEPLOYMENTS.map((d) => `start ${d} 0`).sort());
    expect(results.measurements.every((m) => m.status === "failed")).toBe(true);
    expect(hosts.fakes.every((f) => f.fake.disposed)).toBe(true);
    await delay(20);
    expect(hosts.fakes.flatMap((f) => f.fake.afterDispose)).toEqual([]);
  });
});

describe("runExperiment: one deployment at a time", () => {
  for (const [name, target, over] of [
    ["a target without the capability", fakeTarget(), {}],
    ["a target with it, asked for concurrency: serial (--serial)", fakeTarget({ concurrentDeployments: true }), { concurrency: "serial" as const }],
  ] as const) {
    it(`${name}: every cell ends before the next starts, in runOrder's A B A B`, async () => {
      // A ping takes a moment: deployments running over each other would interleave here.
      const hosts = recordingHosts({ ping: () => delay(5) });
      const results = await run(target, hosts.connect, over);
      expect(results.status).toBe("complete");
      const [a, b] = DEPLOYMENTS;
      expect(hosts.events).toEqual([`start ${a} 0`, `end ${a} 0`, `start ${b} 0`, `end ${b} 0`, `start ${a} 1`, `end ${a} 1`, `start ${b} 1`, `end ${b} 1`]);
      expect(results.timing!.concurrentDeployments).toBe(false);
      expect(results.timing!.deployments?.map((d) => d.deployment)).toEqual(DEPLOYMENTS);
      expect(timingLine(results)).not.toContain("at the same time");
    });
  }
});
