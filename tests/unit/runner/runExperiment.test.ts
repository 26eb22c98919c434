import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildPlan, defineExperiment } from "../../../src/index.ts";
import type { Plan } from "../../../src/plan/types.ts";
import type { Connect } from "../../../src/runner/connections.ts";
import type { Progress } from "../../../src/runner/progress.ts";
import { runExperiment, runStatus } from "../../../src/runner/runExperiment.ts";
import type { Target } from "../../../src/targets/target.ts";
import { delay, endpoint, fakeSsh, never, type FakeSsh } from "./fakeSsh.ts";
import { tempDirs } from "../../tempDirs.ts";
import { fakeTarget, silentProgress } from "./fakeTarget.ts";

const tempDir = tempDirs();

/** Two variants → two deployments of client + server; one ping each. */
const plan: Plan = buildPlan(
  defineExperiment({
    name: "fake",
    description: "runner against fake hosts",
    axes: { ppg: [false, true] },
    hosts: { client: {}, server: {} },
    measure: [{ tool: "ping", params: { count: 3, interval: 0.1 } }],
  }),
);



const run = (target: Target, connect: Connect) => {
  const runDir = tempDir("latlab-unit-run-");
  return runExperiment({ source: "fake.ts", plan, target, runId: "unit", runDir, progress: silentProgress, signal: new AbortController().signal, connect }).then((results) => ({ results, runDir }));
};

describe("runExperiment against unreachable hosts", () => {
  it("closes every connection of a deployment whose other host failed before the next deployment starts, and the run has failed", async () => {
    const opened: { fake: FakeSsh; deployment: string }[] = [];
    const connectCalls: string[] = [];
    const connect: Connect = async (h) => {
      connectCalls.push(h.deployment);
      // Every connection of earlier deployments is closed before a later one is dialled.
      for (const o of opened.filter((o) => o.deployment !== h.deployment)) expect(o.fake.disposed, `${o.deployment}/${o.fake.name} still open`).toBe(true);
      if (h.role === "client") throw new Error(`${h.deployment}/client (127.0.0.1:1): host key does not match the one latlab generated — refusing to connect`);
      await delay(30); // the server connects after the client has failed
      const fake = fakeSsh(h.role, (cmd) => (cmd === "cloud-init status --wait" ? never() : {}));
      opened.push({ fake, deployment: h.deployment });
      return fake.ssh;
    };
    const target = fakeTarget({ host: (d, role) => endpoint(d, role, { ready: { command: "cloud-init status --wait", timeoutSeconds: 600 } }) });
    const { results, runDir } = await run(target, connect);

    expect(new Set(connectCalls).size).toBe(2);
    expect(opened).toHaveLength(2);
    expect(opened.every((o) => o.fake.disposed)).toBe(true);
    await delay(50);
    expect(opened.flatMap((o) => o.fake.commands.filter((c) => c !== "cloud-init status --wait"))).toEqual([]);

    expect(results.measurements.every((m) => m.status === "failed")).toBe(true);
    for (const m of results.measurements) expect(m.error).toBe(`${m.deployment}/client (127.0.0.1:1): host key does not match the one latlab generated — refusing to connect`);
    // Nothing threw, yet nothing was measured: that is a failed run (exit 1), not a partial one.
    expect(results.status).toBe("failed");
    expect(results.error).toMatch(/no cell was measured; first failure: .*client.*host key does not match/);
    expect(target.downs).toBe(1);
    expect(JSON.parse(readFileSync(join(runDir, "results.json"), "utf8")).status).toBe("failed");
  });

  it("a host the target did not bring up fails its cells with an error naming deployment and role", async () => {
    const fakes: FakeSsh[] = [];
    const connect: Connect = async (h) => {
      const f = fakeSsh(h.role, () => ({ stdout: "ping from iputils 20240117" }));
      fakes.push(f);
      return f.ssh;
    };
    const target = fakeTarget({ host: (d, role) => (role === "server" ? undefined : endpoint(d, role)) });
    const { results } = await run(target, connect);
    for (const m of results.measurements) {
      expect(m.status).toBe("failed");
      expect(m.error).toBe(`${m.deployment}: the target brought up no host "server" (it has client)`);
    }
    expect(results.status).toBe("failed");
    expect(fakes.every((f) => f.disposed)).toBe(true);
  });
});

describe("runStatus", () => {
  it("says failed when no cell was measured, also without a run error", () => {
    expect(runStatus({ aborted: false, ok: 0, cells: 4 })).toBe("failed");
    expect(runStatus({ aborted: false, runError: "up failed", ok: 0, cells: 4 })).toBe("failed");
    expect(runStatus({ aborted: false, ok: 1, cells: 4 })).toBe("partial");
    expect(runStatus({ aborted: false, ok: 4, cells: 4 })).toBe("complete");
    expect(runStatus({ aborted: true, ok: 0, cells: 4 })).toBe("interrupted");
    expect(runStatus({ aborted: false, ok: 0, cells: 0 })).toBe("complete");
  });
});

describe("runExperiment: the order cells run in", () => {
  it("runs A B A B by repetition, connecting to each deployment once and closing it after its last cell", async () => {
    const twoReps: Plan = buildPlan(
      defineExperiment({
        name: "fake",
        description: "runner order",
        axes: { ppg: [false, true] },
        hosts: { client: {}, server: {} },
        measure: [{ tool: "ping", params: { count: 3, interval: 0.1 } }],
        repetitions: 2,
      }),
    );
    const started: string[] = [];
    const progress: Progress = { ...silentProgress, cellStarted: (label) => started.push(label) };
    const fakes: { deployment: string; fake: FakeSsh }[] = [];
    const connect: Connect = async (h) => {
      const f = fakeSsh(h.role, () => ({ stdout: "ping from iputils 20240117" }));
      fakes.push({ deployment: h.deployment, fake: f });
      return f.ssh;
    };
    const runDir = tempDir("latlab-unit-run-");
    const results = await runExperiment({ source: "fake.ts", plan: twoReps, target: fakeTarget(), runId: "unit", runDir, progress, signal: new AbortController().signal, connect });
    expect(started).toEqual(["ppg=false ping client->server", "ppg=true ping client->server", "ppg=false ping client->server rep1", "ppg=true ping client->server rep1"]);
    // One connection per host for the whole run, all closed at the end.
    expect(fakes.map((f) => `${f.deployment}/${f.fake.name}`).sort()).toEqual(["ppg=false/client", "ppg=false/server", "ppg=true/client", "ppg=true/server"]);
    expect(fakes.every((f) => f.fake.disposed && f.fake.afterDispose.length === 0)).toBe(true);
    expect(results.measurements.map((m) => m.cell)).toEqual(twoReps.cells.map((c) => c.id));
  });
});

describe("runExperiment: where the time went", () => {
  it("results.json times bring-up, each cell's setup / client / collection / parse, teardown and the total, against what the tools were asked to measure", async () => {
    const pingOut = readFileSync(join(import.meta.dirname, "../../fixtures/ping/normal.stdout"), "utf8");
    const target = fakeTarget();
    const up = target.up.bind(target);
    target.up = async (p, ctx) => {
      await new Promise((r) => setTimeout(r, 60));
      return up(p, ctx);
    };
    const down = target.down.bind(target);
    target.down = async () => {
      await new Promise((r) => setTimeout(r, 40));
      return down();
    };
    const connect: Connect = async (h) => fakeSsh(h.role, (cmd) => (/\bping\b.*-c/.test(cmd) ? { stdout: pingOut } : { stdout: "ping from iputils 20240117" })).ssh;
    const { results } = await run(target, connect);
    expect(results.status).toBe("complete");
    for (const m of results.measurements) {
      expect(m.timing, m.cell).toBeDefined();
      const t = m.timing!;
      expect(t.measurementSeconds).toBeCloseTo(0.3, 9); // ping: 3 × 0.1 s
      for (const v of [t.setupSeconds, t.clientSeconds, t.collectSeconds, t.parseSeconds]) expect(v).toBeGreaterThanOrEqual(0);
      // The cells' wall time holds this cell's parts (a little slack for rounding).
      expect(t.setupSeconds + t.clientSeconds + t.collectSeconds + t.parseSeconds).toBeLessThanOrEqual(results.timing!.cellsSeconds + 0.002);
    }
    const r = results.timing!;
    expect(r.bringUpSeconds).toBeGreaterThanOrEqual(0.055);
    expect(r.teardownSeconds).toBeGreaterThanOrEqual(0.035);
    expect(r.totalSeconds).toBeGreaterThanOrEqual(r.bringUpSeconds + r.cellsSeconds + r.teardownSeconds);
    expect(r.measurementSeconds).toBeCloseTo(0.6, 9);
    expect(r.overhead).toBeCloseTo(r.totalSeconds / 0.6, 9);
  });
});

describe("runExperiment: Ctrl-C during teardown", () => {
  it("a run whose every cell was measured stays complete when Ctrl-C arrives while it tears down", async () => {
    const pingOut = readFileSync(join(import.meta.dirname, "../../fixtures/ping/normal.stdout"), "utf8");
    const connect: Connect = async (h) => fakeSsh(h.role, (cmd) => (/\bping\b.*-c/.test(cmd) ? { stdout: pingOut } : { stdout: "ping from iputils 20240117" })).ssh;
    const controller = new AbortController();
    const target = fakeTarget();
    target.down = async () => {
      controller.abort(); // the user's Ctrl-C, while teardown runs
      return { status: "ok" as const, errors: [], removed: [] };
    };
    const results = await runExperiment({ source: "fake.ts", plan, target, runId: "unit", runDir: tempDir("latlab-unit-run-"), progress: silentProgress, signal: controller.signal, connect });
    expect(results.measurements.map((m) => [m.status, m.error])).toEqual(plan.cells.map(() => ["ok", undefined]));
    expect(results.status).toBe("complete");
  });
});

describe("runExperiment: servers listen on the path's own address", () => {
  it("a private-path cell's server binds the private address, a public-path cell's where public traffic arrives; never 0.0.0.0", async () => {
    const paths: Plan = buildPlan(
      defineExperiment({
        name: "fake",
        description: "paths",
        axes: { path: ["private", "public"] },
        hosts: { client: {}, server: {} },
        measure: [{ tool: "sockperf", params: { duration: 1 } }],
      }),
    );
    const serverCommands: string[] = [];
    const connect: Connect = async (h) =>
      fakeSsh(h.role, (cmd) => {
        if (h.role === "server" && cmd.includes("sockperf sr")) serverCommands.push(cmd);
        if (cmd.includes("echo $!")) return { stdout: "4242" };
        if (cmd.includes("listening")) return { stdout: "listening" };
        return { stdout: "sockperf: == version #3.10-0.git == " };
      }).ssh;
    const target = fakeTarget({ host: (d, role) => endpoint(d, role, { privateAddress: "198.18.1.5", publicAddress: "198.19.64.9" }) });
    await runExperiment({ source: "fake.ts", plan: paths, target, runId: "unit", runDir: tempDir("latlab-unit-run-"), progress: silentProgress, signal: new AbortController().signal, connect });
    expect(serverCommands.map((c) => /sockperf sr --tcp -i '?([\d.]+)'? -p/.exec(c)?.[1] ?? /sockperf sr -i '?([\d.]+)'?/.exec(c)?.[1])).toEqual(["198.18.1.5", "198.19.64.9"]);
    // Azure: the public IP is translated to the private address on the way in.
    serverCommands.length = 0;
    const azureLike = fakeTarget({ host: (d, role) => endpoint(d, role, { privateAddress: "10.0.0.4", publicAddress: "198.19.64.9", publicPathArrivesAt: "10.0.0.4" }) });
    await runExperiment({ source: "fake.ts", plan: paths, target: azureLike, runId: "unit", runDir: tempDir("latlab-unit-run-"), progress: silentProgress, signal: new AbortController().signal, connect });
    // Both paths arrive at one address: one server serves both.
    expect(serverCommands).toHaveLength(1);
    expect(serverCommands[0]).toMatch(/-i '?10\.0\.0\.4'? /);
  });
});

describe("runExperiment prepares every deployment before the first cell", () => {
  /** Two sockperf measures, two repetitions each: four cells per deployment. */
  const repeated: Plan = buildPlan(
    defineExperiment({
      name: "fake",
      description: "warm",
      hosts: { a: {}, c: {}, server: {} },
      repetitions: 2,
      measure: [
        { tool: "sockperf", params: { duration: 1 }, pairs: [{ from: "a", to: "server" }] },
        { tool: "sockperf", params: { duration: 1, messageSize: 256 }, pairs: [{ from: "c", to: "server" }] },
      ],
    }),
  );
  const sockperfHosts = (startServer: () => { stdout?: string; code?: number }) => {
    const commands: string[] = [];
    const connect: Connect = async (h) =>
      fakeSsh(h.role, (cmd) => {
        commands.push(`${h.role}: ${cmd}`);
        if (cmd.includes("echo $!")) return startServer();
        if (cmd.includes("listening")) return { stdout: "listening" };
        return { stdout: "sockperf: == version #3.10-0.git == " };
      }).ssh;
    return { commands, connect };
  };

  it("starts each server once, before any client, and makes every cell's work folder in one command per client host", async () => {
    const hosts = sockperfHosts(() => ({ stdout: "4242" }));
    const { results } = await runExperiment({ source: "fake.ts", plan: repeated, target: fakeTarget(), runId: "unit", runDir: tempDir("latlab-unit-run-"), progress: silentProgress, signal: new AbortController().signal, connect: hosts.connect }).then((r) => ({ results: r }));
    expect(results.measurements).toHaveLength(4);
    const starts = hosts.commands.filter((c) => c.startsWith("server: ") && c.includes("echo $!"));
    expect(starts).toHaveLength(2);
    const firstClient = hosts.commands.findIndex((c) => /^(a|c): .*sockperf (pp|ping-pong)/.test(c));
    expect(firstClient).toBeGreaterThan(-1);
    expect(hosts.commands.findLastIndex((c) => c.includes("echo $!"))).toBeLessThan(firstClient);
    // One mkdir per client host, naming both of its cells; none per cell afterwards.
    const mkdirs = hosts.commands.filter((c) => /^(a|c): mkdir -p /.test(c));
    expect(mkdirs).toHaveLength(2);
    for (const m of mkdirs) expect(m.split(" ").length).toBe(5); // "a: mkdir -p <dir> <dir>"
  });

  it("a server that will not start is tried once before the cells, then by each of its cells, which report it", async () => {
    let attempts = 0;
    const hosts = sockperfHosts(() => (++attempts, { code: 1, stdout: "", stderr: "sockperf: bind failed" } as never));
    const { results } = await runExperiment({ source: "fake.ts", plan: repeated, target: fakeTarget(), runId: "unit", runDir: tempDir("latlab-unit-run-"), progress: silentProgress, signal: new AbortController().signal, connect: hosts.connect }).then((r) => ({ results: r }));
    // Two measures' servers: each tried once while preparing, then once per cell (2 cells each).
    expect(attempts).toBe(2 + 4);
    for (const m of results.measurements) expect(m.error).toMatch(/could not start sockperf server/);
  });

  it("a client role the target did not bring up fails that role's cells only", async () => {
    const hosts = sockperfHosts(() => ({ stdout: "4242" }));
    const target = fakeTarget({ host: (d, role) => (role === "c" ? undefined : endpoint(d, role)) });
    const results = await runExperiment({ source: "fake.ts", plan: repeated, target, runId: "unit", runDir: tempDir("latlab-unit-run-"), progress: silentProgress, signal: new AbortController().signal, connect: hosts.connect });
    // a's cells ran their client (the fake's output is no sockperf summary: what fails them then is parsing, not c).
    for (const m of results.measurements) expect(m.error).toMatch(m.from === "a" ? /no latency summary/ : /no host "c"/);
    expect(hosts.commands.filter((c) => /^a: .*sockperf (pp|ping-pong)/.test(c))).toHaveLength(2);
  });
});
