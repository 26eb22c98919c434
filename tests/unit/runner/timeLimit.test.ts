import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildPlan, defineExperiment } from "../../../src/index.ts";
import type { Plan } from "../../../src/plan/types.ts";
import type { Connect } from "../../../src/runner/connections.ts";
import { runExperiment } from "../../../src/runner/runExperiment.ts";
import { armTimeLimit, RunStop, stopOf, type Timers } from "../../../src/runner/runStop.ts";
import { ResultsSchema, type TeardownReport } from "../../../src/results/schema.ts";
import type { HandOver, Target } from "../../../src/targets/target.ts";
import { tempDirs } from "../../tempDirs.ts";
import { delay, fakeSsh, never } from "./fakeSsh.ts";
import { fakeTarget, silentProgress } from "./fakeTarget.ts";

const tempDir = tempDirs();
const pingOut = readFileSync(join(import.meta.dirname, "../../fixtures/ping/normal.stdout"), "utf8");

/** A clock whose one timer fires when the test says so. */
function fakeClock(): Timers & { fire(): void; delays: number[]; cleared: number } {
  let pending: (() => void) | undefined;
  const clock = {
    delays: [] as number[],
    cleared: 0,
    setTimeout(callback: () => void, ms: number) {
      clock.delays.push(ms);
      pending = callback;
      return 1;
    },
    clearTimeout() {
      clock.cleared++;
      pending = undefined;
    },
    fire() {
      const p = pending;
      pending = undefined;
      p?.();
    },
  };
  return clock;
}

describe("armTimeLimit", () => {
  it("aborts the run with a time-limit RunStop after that many minutes", () => {
    const clock = fakeClock();
    const controller = new AbortController();
    armTimeLimit(controller, 0.5, clock);
    expect(clock.delays).toEqual([30_000]);
    expect(controller.signal.aborted).toBe(false);
    clock.fire();
    const stop = stopOf(controller.signal);
    expect(stop?.stop).toEqual({ by: "time-limit", minutes: 0.5 });
    expect(stop?.record()).toMatchObject({ by: "time-limit", timeLimitMinutes: 0.5 });
  });

  it("a signal that came first stands; a disarmed limit never fires", () => {
    const clock = fakeClock();
    const controller = new AbortController();
    armTimeLimit(controller, 1, clock);
    controller.abort(new RunStop({ by: "signal", signal: "SIGINT" }));
    clock.fire();
    expect(stopOf(controller.signal)?.stop).toEqual({ by: "signal", signal: "SIGINT" });

    const other = new AbortController();
    const disarm = armTimeLimit(other, 1, clock);
    disarm();
    clock.fire();
    expect(other.signal.aborted).toBe(false);
  });

  it("refuses a limit a Node timer cannot hold", () => {
    expect(() => armTimeLimit(new AbortController(), 0, fakeClock())).toThrow(/time limit/);
    expect(() => armTimeLimit(new AbortController(), 40_000, fakeClock())).toThrow(/time limit/);
  });
});

/** One deployment, four cells of ping one after another. */
const plan: Plan = buildPlan(
  defineExperiment({
    name: "fake",
    description: "time limit",
    hosts: { client: {}, server: {} },
    repetitions: 4,
    measure: [{ tool: "ping", params: { count: 3, interval: 0.1 } }],
  }),
);

describe("runExperiment at its time limit", () => {
  it("stops measuring as on Ctrl-C: the cells measured are kept, the one in flight and the rest are not run, teardown runs, the run is partial", async () => {
    const clock = fakeClock();
    const controller = new AbortController();
    armTimeLimit(controller, 30, clock);
    let pings = 0;
    const connect: Connect = async (h) =>
      fakeSsh(h.role, (cmd) => {
        if (!/\bping\b.*-c/.test(cmd)) return { stdout: "ping from iputils 20240117" };
        pings++;
        if (pings < 3) return { stdout: pingOut };
        // The third cell is measuring when the run's time is up.
        setImmediate(() => clock.fire());
        return never();
      }).ssh;
    const target = fakeTarget();
    const runDir = tempDir("latlab-unit-time-limit-");
    const results = await runExperiment({ source: "fake.ts", plan, target, runId: "unit", runDir, progress: silentProgress, signal: controller.signal, connect });

    expect(pings).toBe(3);
    expect(results.measurements.map((m) => m.status)).toEqual(["ok", "ok", "failed", "failed"]);
    expect(results.measurements[3]!.error).toBe("not run: the run stopped at its time limit (--time-limit 30 min) before this cell ran");
    expect(results.status).toBe("partial");
    expect(results.error).toBeUndefined();
    expect(results.stopped).toMatchObject({ by: "time-limit", timeLimitMinutes: 30 });
    expect(target.downs).toBe(1);
    expect(results.teardown.status).toBe("ok");
    // What the caller got is what is on disk.
    const onDisk = ResultsSchema.parse(JSON.parse(readFileSync(join(runDir, "results.json"), "utf8")));
    expect(onDisk.status).toBe("partial");
    expect(onDisk.measurements.filter((m) => m.status === "ok")).toHaveLength(2);
    expect(onDisk.stopped).toEqual(results.stopped);
  });

  it("Ctrl-C is still an interruption, and says which signal", async () => {
    const controller = new AbortController();
    const connect: Connect = async (h) =>
      fakeSsh(h.role, (cmd) => {
        if (!/\bping\b.*-c/.test(cmd)) return { stdout: "ping from iputils 20240117" };
        setImmediate(() => controller.abort(new RunStop({ by: "signal", signal: "SIGINT" })));
        return never();
      }).ssh;
    const results = await runExperiment({ source: "fake.ts", plan, target: fakeTarget(), runId: "unit", runDir: tempDir("latlab-unit-time-limit-"), progress: silentProgress, signal: controller.signal, connect });
    expect(results.status).toBe("interrupted");
    expect(results.stopped).toMatchObject({ by: "signal", signal: "SIGINT" });
    expect(results.measurements[3]!.error).toBe("interrupted before this cell ran");
  });
});

describe("runExperiment handing its teardown over", () => {
  const measuring: Connect = async (h) => fakeSsh(h.role, (cmd) => (/\bping\b.*-c/.test(cmd) ? { stdout: pingOut } : { stdout: "ping from iputils 20240117" })).ssh;

  /** A target whose down() ends only when the test lets it; handOver() when asked for. */
  function slowTarget(withHandOver: boolean) {
    let finishDown: (r: TeardownReport) => void = () => {};
    const handOvers: { withinMs: number; signal?: NodeJS.Signals }[] = [];
    let downBegan: () => void = () => {};
    const downStarted = new Promise<void>((r) => (downBegan = r));
    const target: Target = {
      ...fakeTarget(),
      down: () => {
        downBegan();
        return new Promise<TeardownReport>((r) => (finishDown = r));
      },
      ...(withHandOver
        ? {
            handOver: async (o: { withinMs: number; signal?: NodeJS.Signals }): Promise<HandOver> => {
              handOvers.push(o);
              return { started: ["fake group: deletion accepted"], errors: [], finishWith: ["npx latlab destroy unit"] };
            },
          }
        : {}),
    };
    return { target, handOvers, downStarted, finishDown: (r: TeardownReport) => finishDown(r) };
  }

  it("returns at once with what was measured, the teardown handed over, results.json written; the teardown it gave up writes nothing after", async () => {
    const slow = slowTarget(true);
    const controller = new AbortController();
    const handOver = new AbortController();
    const runDir = tempDir("latlab-unit-handover-");
    const running = runExperiment({ source: "fake.ts", plan, target: slow.target, runId: "unit", runDir, progress: silentProgress, signal: controller.signal, handOver: handOver.signal, connect: measuring });
    await slow.downStarted;
    handOver.abort(new RunStop({ by: "signal", signal: "SIGTERM" }));
    const results = await running;

    expect(slow.handOvers).toEqual([{ withinMs: 1500, signal: "SIGTERM" }]);
    expect(results.status).toBe("complete");
    expect(results.measurements.every((m) => m.status === "ok")).toBe(true);
    expect(results.teardown.status).toBe("failed");
    expect(results.teardown.handedOver).toMatchObject({ signal: "SIGTERM", started: ["fake group: deletion accepted"], finishWith: ["npx latlab destroy unit"] });
    expect(results.teardown.errors[0]).toMatch(/^teardown handed over on SIGTERM: it did not finish in this process; going on without it: fake group: deletion accepted; finish it with `npx latlab destroy unit`$/);
    const file = join(runDir, "results.json");
    expect(ResultsSchema.parse(JSON.parse(readFileSync(file, "utf8"))).teardown.handedOver).toBeDefined();

    // The teardown it gave up ends after all: results.json keeps the hand-over.
    slow.finishDown({ status: "ok", errors: [], removed: ["late"] });
    await delay(20);
    expect(ResultsSchema.parse(JSON.parse(readFileSync(file, "utf8"))).teardown.handedOver).toBeDefined();
  });

  it("a target without handOver() tears down as ever: the run waits for it", async () => {
    const slow = slowTarget(false);
    const handOver = new AbortController();
    const running = runExperiment({ source: "fake.ts", plan, target: slow.target, runId: "unit", runDir: tempDir("latlab-unit-handover-"), progress: silentProgress, signal: new AbortController().signal, handOver: handOver.signal, connect: measuring });
    await slow.downStarted;
    handOver.abort(new RunStop({ by: "signal", signal: "SIGTERM" }));
    let done = false;
    void running.then(() => (done = true));
    await delay(30);
    expect(done).toBe(false);
    slow.finishDown({ status: "ok", errors: [], removed: ["hosts"] });
    const results = await running;
    expect(results.teardown).toEqual({ status: "ok", errors: [], removed: ["hosts"] });
  });

  it("a hand-over that does not answer is given up after its budget, and said", async () => {
    const slow = slowTarget(false);
    const target: Target = { ...slow.target, handOver: () => new Promise<HandOver>(() => {}) };
    const handOver = new AbortController();
    const running = runExperiment({ source: "fake.ts", plan, target, runId: "unit", runDir: tempDir("latlab-unit-handover-"), progress: silentProgress, signal: new AbortController().signal, handOver: handOver.signal, connect: measuring });
    await slow.downStarted;
    handOver.abort(new RunStop({ by: "signal", signal: "SIGTERM" }));
    const results = await running;
    expect(results.teardown.status).toBe("failed");
    expect(results.teardown.errors.join("\n")).toMatch(/fake: the hand-over did not answer within 1750 ms; what it started, if anything, is unknown/);
    expect(results.teardown.errors[0]).toMatch(/nothing could be started/);
  });
});
