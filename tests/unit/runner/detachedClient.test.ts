import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { getEventListeners } from "node:events";
import { join } from "node:path";
import type { NodeSSH } from "node-ssh";
import { describe, expect, it } from "vitest";
import { followDetached, REMOTE_FAILURES_TOLERATED, sleep, type DetachedOptions } from "../../../src/runner/detachedClient.ts";
import { fakeSsh, type FakeSsh, type Handler } from "./fakeSsh.ts";
import { tempDirs } from "../../tempDirs.ts";

const tempDir = tempDirs();

const spec = { pidFile: "/w/client.pid", outputFile: "/w/client.csv", pollSeconds: 0.05 };

/**
 * A detached client on a fake host: `csv` is what it has written so far (tests append to it);
 * it is alive until `alive` is false. `failures = n` makes the next n commands fail: like a
 * dropped link when `lose` is set (the connection is dropped first, as a real one is declared
 * lost), like a command failing on a live connection otherwise.
 */
function host() {
  const state = {
    csv: "",
    alive: true,
    failures: 0,
    lose: undefined as (() => void) | undefined,
    onTail: undefined as (() => void) | undefined,
    onKill: undefined as (() => void) | undefined,
  };
  const handler: Handler = (cmd) => {
    if (state.failures > 0) {
      state.failures--;
      state.lose?.();
      throw new Error("No response from server");
    }
    const tail = /^tail -c \+(\d+) /.exec(cmd);
    if (tail) {
      state.onTail?.();
      return { stdout: Buffer.from(state.csv).subarray(Number(tail[1]) - 1).toString("base64") };
    }
    if (cmd.includes("ps -o stat=")) return { stdout: state.alive ? "alive" : "gone" };
    if (cmd.startsWith("kill ")) {
      state.onKill?.();
      if (state.failures > 0) {
        state.lose?.();
        throw new Error("No response from server");
      }
      state.alive = false;
      return {};
    }
    throw new Error(`unexpected command ${cmd}`);
  };
  return { state, handler };
}

function options(over: Partial<DetachedOptions> & { getSsh: () => NodeSSH }): DetachedOptions & { logs: string[] } {
  const dir = tempDir("latlab-unit-detached-");
  const logs: string[] = [];
  return {
    spec,
    localFile: join(dir, "client.csv"),
    deadline: Date.now() + 60_000,
    reconnect: async () => {
      throw new Error("no reconnect in this test");
    },
    log: (m) => logs.push(m),
    logs,
    ...over,
  };
}

describe("followDetached", () => {
  it("keeps what was collected when the connection drops after the deadline (connection-lost, with a warning)", async () => {
    const { state, handler } = host();
    state.csv = "t,rtt\n1,100\n2,101\n";
    const ssh = fakeSsh("client", handler);
    state.lose = () => ssh.drop();
    const o = options({ getSsh: () => ssh.ssh, deadline: Date.now() + 120 });
    // The link dies for good just as the deadline passes: the client cannot be stopped nor its tail fetched.
    state.onKill = () => (state.failures = 1_000);
    const outcome = await followDetached(o);
    expect(outcome.ended).toBe("connection-lost");
    expect(outcome.content).toBe("t,rtt\n1,100\n2,101\n");
    expect(outcome.warnings.join("\n")).toMatch(/connection lost while collecting .*after the deadline.*collected until then are kept/);
  });

  it("keeps what was collected when reconnecting fails", async () => {
    const { state, handler } = host();
    state.csv = "t,rtt\n1,100\n";
    const ssh = fakeSsh("client", handler);
    state.lose = () => ssh.drop();
    let attempts = 0;
    const o = options({
      getSsh: () => ssh.ssh,
      reconnect: async () => {
        attempts++;
        throw new Error("d0/client (10.0.0.4:22): SSH not ready after 9 attempts: connect ECONNREFUSED");
      },
    });
    setTimeout(() => (state.failures = 1_000), 30);
    const outcome = await followDetached(o);
    expect(attempts).toBe(1);
    expect(outcome.ended).toBe("connection-lost");
    expect(outcome.content).toBe("t,rtt\n1,100\n");
    expect(outcome.warnings.join("\n")).toMatch(/reconnecting failed: .*ECONNREFUSED/);
  });

  it("retries a command that failed on a live connection on that same connection: no reconnect, nothing lost", async () => {
    const { state, handler } = host();
    state.csv = "a\n";
    const ssh = fakeSsh("client", handler);
    let reconnects = 0;
    const o = options({
      getSsh: () => ssh.ssh,
      reconnect: async () => {
        reconnects++;
        return ssh.ssh;
      },
    });
    setTimeout(() => {
      state.failures = REMOTE_FAILURES_TOLERATED - 1;
      state.csv += "b\n";
      setTimeout(() => {
        state.csv += "c\n";
        state.alive = false;
      }, 200);
    }, 30);
    const outcome = await followDetached(o);
    expect(reconnects).toBe(0);
    expect(ssh.disposed).toBe(false);
    expect(outcome).toMatchObject({ ended: "exited", reconnects: 0, content: "a\nb\nc\n" });
    expect(o.logs.join("\n")).toMatch(/a command on the host failed while collecting \(No response from server\); trying again in 0.05 s on the same connection/);
  });

  it("gives up after failures in a row on a live connection, keeping what was collected, without reconnecting", async () => {
    const { state, handler } = host();
    state.csv = "a\n";
    const ssh = fakeSsh("client", handler);
    let reconnects = 0;
    const o = options({
      getSsh: () => ssh.ssh,
      reconnect: async () => {
        reconnects++;
        return ssh.ssh;
      },
    });
    setTimeout(() => (state.failures = 1_000), 30);
    const outcome = await followDetached(o);
    expect(reconnects).toBe(0);
    expect(outcome.ended).toBe("remote-failed");
    expect(outcome.content).toBe("a\n");
    expect(outcome.warnings.join("\n")).toMatch(new RegExp(`failed ${REMOTE_FAILURES_TOLERATED} time\\(s\\) in a row on a live connection .*the 2 bytes collected until then are kept`));
  });

  it("continues from what an earlier runner collected (continueFrom): asks only for the bytes after it and keeps both", async () => {
    const { state, handler } = host();
    state.csv = "a\nb\nc\nd\n";
    state.alive = false;
    const ssh = fakeSsh("client", handler);
    const o = options({ getSsh: () => ssh.ssh, continueFrom: { bytes: 4 } });
    writeFileSync(o.localFile, "a\nb\n");
    const outcome = await followDetached(o);
    expect(ssh.commands.find((c) => c.startsWith("tail "))).toMatch(/^tail -c \+5 /);
    expect(outcome).toMatchObject({ ended: "exited", content: "a\nb\nc\nd\n" });
    expect(readFileSync(o.localFile, "utf8")).toBe("a\nb\nc\nd\n");
  });

  it("waits pollSeconds before reconnecting, and resumes at the same offset", async () => {
    const { state, handler } = host();
    state.csv = "a\n";
    const first = fakeSsh("first", handler);
    const second = fakeSsh("second", handler);
    let failedAt = 0;
    let reconnectedAt = 0;
    const o = options({
      getSsh: () => first.ssh,
      spec: { ...spec, pollSeconds: 0.3 },
      reconnect: async () => {
        reconnectedAt = Date.now();
        return second.ssh;
      },
    });
    setTimeout(() => {
      first.ssh.dispose();
      failedAt = Date.now();
      state.csv += "b\n";
      setTimeout(() => {
        state.csv += "c\n";
        state.alive = false;
      }, 400);
    }, 100);
    const outcome = await followDetached(o);
    expect(reconnectedAt - failedAt).toBeGreaterThanOrEqual(250);
    expect(outcome).toMatchObject({ ended: "exited", reconnects: 1, content: "a\nb\nc\n" });
  });

  it("does not take a local error (our disk) for a dropped connection: no reconnect, the error is thrown", async () => {
    const { state, handler } = host();
    state.csv = "a\n";
    const ssh = fakeSsh("client", handler);
    let reconnects = 0;
    const o = options({
      getSsh: () => ssh.ssh,
      reconnect: async () => {
        reconnects++;
        return ssh.ssh;
      },
    });
    // The local copy can no longer be written (EISDIR stands in for ENOSPC).
    state.onTail = () => {
      rmSync(o.localFile, { force: true });
      mkdirSync(o.localFile, { recursive: true });
    };
    await expect(followDetached(o)).rejects.toThrow(/cannot keep \/w\/client.csv in .*EISDIR/);
    expect(reconnects).toBe(0);
  });

  it("leaves no abort listener behind however many polls it made", async () => {
    const { state, handler } = host();
    const ssh: FakeSsh = fakeSsh("client", handler);
    const controller = new AbortController();
    let polls = 0;
    state.onTail = () => {
      polls++;
      state.csv += `${polls}\n`;
      if (polls === 8) state.alive = false;
    };
    const outcome = await followDetached(options({ getSsh: () => ssh.ssh, signal: controller.signal, spec: { ...spec, pollSeconds: 0.01 } }));
    expect(outcome.ended).toBe("exited");
    expect(polls).toBeGreaterThanOrEqual(8);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("on interruption returns at once with what was collected and says the tail was not", async () => {
    const { state, handler } = host();
    state.csv = "a\n";
    const ssh = fakeSsh("client", handler);
    const controller = new AbortController();
    setTimeout(() => {
      state.csv += "late\n";
      controller.abort();
      // What the runner does on abort: close the connections for teardown.
      ssh.ssh.dispose();
    }, 80);
    const outcome = await followDetached(options({ getSsh: () => ssh.ssh, signal: controller.signal, spec: { ...spec, pollSeconds: 10 } }));
    expect(outcome.ended).toBe("interrupted");
    expect(outcome.content).toBe("a\n");
    expect(outcome.warnings.join("\n")).toMatch(/interrupted .*not collected/);
    expect(ssh.afterDispose).toEqual([]);
  });
});

describe("sleep", () => {
  it("removes its abort listener when the time is up", async () => {
    const controller = new AbortController();
    await sleep(5, controller.signal);
    await sleep(5, controller.signal);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("ends early on abort", async () => {
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 10);
    await sleep(5_000, controller.signal);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
