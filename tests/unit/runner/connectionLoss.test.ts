/**
 * A dropped SSH connection, cell by cell (issue 12, point 2): the cell in flight fails as
 * "connection to <host> (<address>) lost at <time> during <tool> <role>" and its output is never
 * parsed; the next cell that needs the host reconnects with bounded retries and backoff; a host
 * that cannot be reconnected fails only its own cells; Ctrl-C ends the backoff at once.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { buildPlan, defineExperiment } from "../../../src/index.ts";
import type { Plan } from "../../../src/plan/types.ts";
import { runCell } from "../../../src/runner/cellRunner.ts";
import { DETACHED_RECONNECT_DELAYS_MS, HostConnections, RECONNECT_DELAYS_MS, ReconnectFailedError, type Connect } from "../../../src/runner/connections.ts";
import type { Progress } from "../../../src/runner/progress.ts";
import { runExperiment } from "../../../src/runner/runExperiment.ts";
import { ConnectionLostError, execWithTimeout, watchConnection } from "../../../src/runner/ssh.ts";
import type { ClientOutput, ToolModule } from "../../../src/tools/types.ts";
import { tempDirs } from "../../tempDirs.ts";
import { endpoint, fakeSsh, never, type FakeSsh, type Handler } from "./fakeSsh.ts";
import { fakeCell } from "./fakeCell.ts";
import { fakeTarget, silentProgress } from "./fakeTarget.ts";

const tempDir = tempDirs();
const FIXTURES = join(import.meta.dirname, "../../fixtures");
const PING_OUT = readFileSync(join(FIXTURES, "ping/normal.stdout"), "utf8");
const QPERF_OUT = readFileSync(join(FIXTURES, "qperf/tcp_lat.vv-uu.stdout"), "utf8");
const ISO = String.raw`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z`;


// ---------------------------------------------------------------------------------------------
// execWithTimeout: an exit code is never null

describe("execWithTimeout and a connection that drops", () => {
  it("a command in flight when the connection drops fails with ConnectionLostError, not a result with exit code null", async () => {
    const host = fakeSsh("client", () => never());
    watchConnection(host.ssh);
    const running = execWithTimeout(host.ssh, "ping -c 100 198.18.0.2", 30);
    setTimeout(() => host.drop(), 10);
    const error = await running.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConnectionLostError);
    expect((error as ConnectionLostError).message).toMatch(new RegExp(`^connection lost at ${ISO} \\(the host closed the connection\\)$`));
  });

  it("names ssh2's own error as the reason when there is one (a reset)", async () => {
    const host = fakeSsh("client", () => never());
    watchConnection(host.ssh);
    const running = execWithTimeout(host.ssh, "sleep 60", 90);
    setTimeout(() => host.drop("read ECONNRESET"), 10);
    await expect(running).rejects.toThrow(/connection lost at .* \(read ECONNRESET\)/);
  });

  it("also without a watcher: a channel that closes with no exit code on a dead connection is a lost connection", async () => {
    const host = fakeSsh("client", () => never());
    const running = execWithTimeout(host.ssh, "sleep 60", 90);
    setTimeout(() => host.drop(), 10);
    await expect(running).rejects.toBeInstanceOf(ConnectionLostError);
  });

  it("a command killed by a signal on a live connection is an error naming the signal, never a success", async () => {
    const host = fakeSsh("client", () => ({ stdout: "partial", code: null, signal: "KILL" }));
    watchConnection(host.ssh);
    await expect(execWithTimeout(host.ssh, "ping -c 3 x", 30)).rejects.toThrow("`ping` ended without an exit code (killed by signal KILL)");
  });

  it("a channel closed without an exit code on a live connection is an error too", async () => {
    const host = fakeSsh("client", () => ({ stdout: "partial", code: null }));
    watchConnection(host.ssh);
    await expect(execWithTimeout(host.ssh, "ping -c 3 x", 30)).rejects.toThrow("`ping` ended without an exit code (its channel closed)");
  });

  it("a command on a connection already known lost is not sent", async () => {
    const host = fakeSsh("client");
    watchConnection(host.ssh);
    host.drop();
    await expect(execWithTimeout(host.ssh, "true", 5)).rejects.toBeInstanceOf(ConnectionLostError);
    expect(host.afterDispose).toEqual([]);
    expect(host.commands).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// runCell: the cell in flight

const cell = fakeCell("spy", { id: "v=1/ping/client->server" });

/** A tool that records every output handed to its parser. */
function spyTool() {
  const parsed: ClientOutput[] = [];
  const tool = {
    name: "spy",
    client: () => ({ command: "spy-client --run", timeoutSeconds: 30, files: [] }),
    measurementSeconds: () => 1,
    parse: (out: ClientOutput) => {
      parsed.push(out);
      return { metric: "rtt", unit: "us", samples: [100], warnings: [] };
    },
  } as unknown as ToolModule;
  return { tool, parsed };
}

const cellCtx = (client: FakeSsh, server: FakeSsh = fakeSsh("server")) => ({
  cell,
  client: { endpoint: endpoint("d0", "client", { ssh: { host: "198.18.1.2", port: 22, username: "root", privateKey: "unused" } }), ssh: client.ssh, assetsDir: "/assets" },
  server: { endpoint: endpoint("d0", "server", { ssh: { host: "198.18.1.3", port: 22, username: "root", privateKey: "unused" } }), ssh: server.ssh },
  runDir: tempDir("latlab-unit-loss-"),
});

describe("runCell when the client's connection drops", () => {
  it("fails the cell in flight as `connection to client (<address>) lost at <time> during <tool> client`, and never parses", async () => {
    const { tool, parsed } = spyTool();
    let client!: FakeSsh;
    client = fakeSsh("client", (cmd) => {
      if (!cmd.startsWith("spy-client")) return {};
      setTimeout(() => client.drop(), 10);
      return never();
    });
    watchConnection(client.ssh);
    const { measurement } = await runCell(cellCtx(client), tool);
    expect(measurement.status).toBe("failed");
    expect(measurement.error).toMatch(new RegExp(`^connection to client \\(198\\.18\\.1\\.2:22\\) lost at ${ISO} during spy client \\(the host closed the connection\\)$`));
    expect(parsed).toEqual([]);
  });

  it("an exit code null on a live connection (a signal) fails the cell and is not parsed either", async () => {
    const { tool, parsed } = spyTool();
    const client = fakeSsh("client", (cmd) => (cmd.startsWith("spy-client") ? { stdout: "half an output", code: null, signal: "TERM" } : {}));
    watchConnection(client.ssh);
    const { measurement } = await runCell(cellCtx(client), tool);
    expect(measurement.status).toBe("failed");
    expect(measurement.error).toBe("`spy-client` ended without an exit code (killed by signal TERM)");
    expect(parsed).toEqual([]);
  });

  it("the server's connection dropping during the cell keeps the client's output, with a warning naming the loss", async () => {
    const { tool, parsed } = spyTool();
    const server = fakeSsh("server");
    watchConnection(server.ssh);
    const client = fakeSsh("client", (cmd) => {
      if (cmd.startsWith("spy-client")) server.drop();
      return { stdout: "fine" };
    });
    watchConnection(client.ssh);
    const { measurement } = await runCell(cellCtx(client, server), tool);
    expect(measurement.status).toBe("ok");
    expect(parsed).toHaveLength(1);
    expect(measurement.warnings.join("\n")).toMatch(new RegExp(`connection to server \\(198\\.18\\.1\\.3:22\\) lost at ${ISO} during spy server`));
  });
});

// ---------------------------------------------------------------------------------------------
// HostConnections: reconnect policy

describe("HostConnections.use after a drop", () => {
  async function pool(connectAgain: (attempt: number) => FakeSsh | Error, delays = [1, 2, 3], signal = new AbortController().signal) {
    const logs: string[] = [];
    const made: FakeSsh[] = [];
    let again = 0;
    const connect: Connect = async (h) => {
      if (made.some((f) => f.name.startsWith(h.role))) {
        const next = connectAgain(++again);
        if (next instanceof Error) throw next;
        made.push(next);
        return next.ssh;
      }
      const f = fakeSsh(`${h.role}#0`);
      made.push(f);
      return f.ssh;
    };
    const p = await HostConnections.connectAll("d0", [endpoint("d0", "client"), endpoint("d0", "server")], { connect, signal, log: (m) => logs.push(m), reconnectDelaysMs: delays });
    return { p, made, logs, attempts: () => again };
  }

  it("returns the live connection as it is, and a fresh one after a drop (retrying, each attempt logged)", async () => {
    const { p, made, logs, attempts } = await pool((n) => (n < 2 ? new Error(`d0/client (127.0.0.1:1): SSH not ready: connect ECONNREFUSED`) : fakeSsh(`client#${n}`)));
    const first = await p.use("client");
    expect(first).toBe(made[0]!.ssh);
    made[0]!.drop();
    const fresh = await p.use("client");
    expect(fresh).not.toBe(first);
    expect(attempts()).toBe(2);
    expect(p.generation("client")).toBe(2);
    expect(p.generation("server")).toBe(1);
    expect(await p.use("client")).toBe(fresh);
    expect(logs.filter((l) => /reconnect attempt \d\/3/.test(l))).toEqual([
      "d0/client: reconnect attempt 1/3 in 0.001 s",
      "d0/client: reconnect attempt 1/3 failed: d0/client (127.0.0.1:1): SSH not ready: connect ECONNREFUSED",
      "d0/client: reconnect attempt 2/3 in 0.002 s",
    ]);
    expect(logs).toContain("d0/client: reconnected (attempt 2/3)");
    p.close();
    expect(made.every((f) => f.disposed || f.dropped)).toBe(true);
  });

  it("gives a host up after its attempts: `connection to <host> lost; reconnect failed after N attempts: <reason>`, later uses fail at once, other hosts go on", async () => {
    const { p, made, attempts } = await pool(() => new Error("d0/client (127.0.0.1:1): SSH not ready: connect ECONNREFUSED"));
    made[0]!.drop();
    const failure = await p.use("client").catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ReconnectFailedError);
    expect((failure as Error).message).toBe("connection to client lost; reconnect failed after 3 attempts: d0/client (127.0.0.1:1): SSH not ready: connect ECONNREFUSED");
    expect(attempts()).toBe(3);
    await expect(p.use("client")).rejects.toBe(failure);
    expect(attempts()).toBe(3);
    expect(await p.use("server")).toBe(made[1]!.ssh);
    p.close();
  });

  it("a detached client's collection may wait out a longer outage: its reconnect takes its own, longer list of pauses", async () => {
    const { p, made, attempts } = await pool((n) => (n < 6 ? new Error("d0/client (127.0.0.1:1): SSH not ready: connect ECONNREFUSED") : fakeSsh(`client#${n}`)));
    made[0]!.drop();
    const fresh = await p.reconnect("client", made[0]!.ssh, [1, 1, 1, 1, 1, 1, 1]);
    expect(attempts()).toBe(6);
    expect(fresh).toBe(made.at(-1)!.ssh);
    expect(DETACHED_RECONNECT_DELAYS_MS.reduce((a, b) => a + b, 0)).toBeGreaterThan(5 * 60_000);
    expect(DETACHED_RECONNECT_DELAYS_MS.length).toBeGreaterThan(RECONNECT_DELAYS_MS.length);
    p.close();
  });

  it("Ctrl-C during the backoff ends it at once: nothing more is dialled", async () => {
    vi.useFakeTimers();
    try {
      const controller = new AbortController();
      const { p, made, logs, attempts } = await pool(() => fakeSsh("client#1"), [60_000, 60_000, 60_000], controller.signal);
      made[0]!.drop();
      const using = p.use("client").catch((e: unknown) => e);
      await vi.advanceTimersByTimeAsync(0);
      expect(logs.at(-1)).toBe("d0/client: reconnect attempt 1/3 in 60 s");
      controller.abort();
      // No clock moves: only the abort can end the 60 s pause.
      const error = await using;
      expect((error as Error).message).toBe("d0/client: reconnect interrupted");
      expect(attempts()).toBe(0);
      p.close();
    } finally {
      vi.useRealTimers();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// runExperiment: the cells after a drop

/** Two deployments (ppg=false, ppg=true) of client + server, three ping repetitions each. */
const pingPlan: Plan = buildPlan(
  defineExperiment({
    name: "fake-loss",
    description: "runner against fake hosts whose connections drop",
    axes: { ppg: [false, true] },
    hosts: { client: {}, server: {} },
    measure: [{ tool: "ping", params: { count: 20, interval: 0.2 } }],
    repetitions: 3,
  }),
);

const pingHost: Handler = (cmd) => (cmd.includes("ping -D") ? { stdout: PING_OUT } : { stdout: "ping from iputils 20240117" });

async function runWith(plan: Plan, connect: Connect, progress: Progress = silentProgress) {
  return runExperiment({ source: "fake.ts", plan, target: fakeTarget(), runId: "unit", runDir: tempDir("latlab-unit-loss-run-"), progress, signal: new AbortController().signal, connect, reconnectDelaysMs: [1, 1, 1] });
}

describe("runExperiment when a client's connection drops during a cell", () => {
  it("fails only the cell in flight with the lost connection; the host is reconnected and its later cells are measured", async () => {
    const connects: string[] = [];
    let dropped = false;
    const logs: string[] = [];
    const connect: Connect = async (h) => {
      connects.push(`${h.deployment}/${h.role}`);
      let fake!: FakeSsh;
      fake = fakeSsh(h.role, (cmd) => {
        if (h.deployment === "ppg=false" && h.role === "client" && cmd.includes("ping -D") && !dropped) {
          dropped = true;
          setTimeout(() => fake.drop(), 5);
          return never();
        }
        return pingHost(cmd, undefined);
      });
      return fake.ssh;
    };
    const results = await runWith(pingPlan, connect, { ...silentProgress, log: (m) => logs.push(m) });
    const byCell = results.measurements.map((m) => `${m.variant} rep${m.repetition}: ${m.status}${m.error ? ` ${m.error}` : ""}`);
    expect(byCell[0]).toMatch(new RegExp(`^ppg=false rep0: failed connection to client \\(127\\.0\\.0\\.1:1\\) lost at ${ISO} during ping client \\(the host closed the connection\\)$`));
    expect(byCell.slice(1)).toEqual(["ppg=false rep1: ok", "ppg=false rep2: ok", "ppg=true rep0: ok", "ppg=true rep1: ok", "ppg=true rep2: ok"]);
    expect(results.status).toBe("partial");
    // One reconnect of that one host, and it was said.
    expect(connects.filter((c) => c === "ppg=false/client")).toHaveLength(2);
    expect(connects.filter((c) => c !== "ppg=false/client")).toHaveLength(3);
    expect(logs).toContain("ppg=false/client: reconnected (attempt 1/3)");
  });

  it("when reconnecting fails, that host's remaining cells fail with the reconnect error and the other deployment is measured", async () => {
    const connects: string[] = [];
    let dropped = false;
    const connect: Connect = async (h) => {
      const where = `${h.deployment}/${h.role}`;
      if (connects.includes(where)) {
        connects.push(where);
        throw new Error(`${where} (127.0.0.1:1): SSH not ready: connect ECONNREFUSED`);
      }
      connects.push(where);
      let fake!: FakeSsh;
      fake = fakeSsh(h.role, (cmd) => {
        if (where === "ppg=false/client" && cmd.includes("ping -D") && !dropped) {
          dropped = true;
          setTimeout(() => fake.drop(), 5);
          return never();
        }
        return pingHost(cmd, undefined);
      });
      return fake.ssh;
    };
    const results = await runWith(pingPlan, connect);
    const ppgFalse = results.measurements.filter((m) => m.variant === "ppg=false");
    const ppgTrue = results.measurements.filter((m) => m.variant === "ppg=true");
    expect(ppgFalse[0]!.error).toMatch(/^connection to client \(127\.0\.0\.1:1\) lost at .* during ping client/);
    for (const m of ppgFalse.slice(1)) expect(m.error).toBe("connection to client lost; reconnect failed after 3 attempts: ppg=false/client (127.0.0.1:1): SSH not ready: connect ECONNREFUSED");
    expect(ppgTrue.map((m) => m.status)).toEqual(["ok", "ok", "ok"]);
    // Three attempts once; the later cells did not dial again.
    expect(connects.filter((c) => c === "ppg=false/client")).toHaveLength(4);
    expect(results.status).toBe("partial");
  });
});

describe("runExperiment when a server host's connection drops", () => {
  const qperfPlan: Plan = buildPlan(
    defineExperiment({
      name: "fake-server-loss",
      description: "a server host whose connection drops",
      hosts: { client: {}, server: {} },
      measure: [{ tool: "qperf", params: { duration: 1 } }],
      repetitions: 2,
    }),
  );

  /** A server host: the start command answers a pid; the readiness check says what `serverUp` says. */
  const serverHost = (state: { serverUp: boolean; pid: number }): Handler => (cmd) => {
    if (cmd.startsWith("mkdir -p") && cmd.includes("setsid")) {
      state.serverUp = true;
      return { stdout: `${++state.pid}\n` };
    }
    if (cmd.startsWith("ss -Hlnptu")) return { stdout: state.serverUp ? "listening\nalive\n" : "gone\n" };
    return {};
  };

  async function run(serverSurvives: boolean) {
    const state = { serverUp: false, pid: 4000 };
    const servers: FakeSsh[] = [];
    let dropped = false;
    const logs: string[] = [];
    const connect: Connect = async (h) => {
      if (h.role === "server") {
        const f = fakeSsh(`server#${servers.length}`, serverHost(state));
        servers.push(f);
        return f.ssh;
      }
      return fakeSsh("client", (cmd) => {
        if (cmd.includes("tcp_lat")) {
          if (!dropped) {
            // The server host's connection dies while the client measures; with it, maybe the server.
            dropped = true;
            servers[0]!.drop();
            if (!serverSurvives) state.serverUp = false;
          }
          return { stdout: QPERF_OUT };
        }
        return { stdout: "qperf 0.4.11" };
      }).ssh;
    };
    const results = await runWith(qperfPlan, connect, { ...silentProgress, log: (m) => logs.push(m) });
    return { results, servers, logs };
  }

  it("reconnects it before the next cell and restarts a server that died with the connection", async () => {
    const { results, servers, logs } = await run(false);
    expect(servers).toHaveLength(2);
    expect(results.measurements.map((m) => m.status)).toEqual(["ok", "ok"]);
    expect(results.measurements[0]!.warnings.join("\n")).toMatch(/connection to server \(127\.0\.0\.1:1\) lost at .* during qperf server/);
    // On the new connection: the check found the old pid gone, and the server was started again.
    expect(servers[1]!.commands.filter((c) => c.startsWith("mkdir -p") && c.includes("setsid"))).toHaveLength(1);
    expect(logs).toContain("default/server: the qperf server on default/server exited (pid 4001 is gone); restarting it");
    // The server stopped at the end is the one that runs (pid 4002), on the connection that is up.
    expect(servers[1]!.commands.some((c) => /^kill 4002\b/.test(c))).toBe(true);
  });

  it("keeps a server that survived the drop: checked on the new connection, not started twice", async () => {
    const { results, servers } = await run(true);
    expect(results.measurements.map((m) => m.status)).toEqual(["ok", "ok"]);
    expect(servers[1]!.commands.some((c) => c.startsWith("ss -Hlnptu") && c.includes("pid=4001,"))).toBe(true);
    expect(servers[1]!.commands.some((c) => c.includes("setsid"))).toBe(false);
  });
});
