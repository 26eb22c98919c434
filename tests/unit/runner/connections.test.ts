import type { NodeSSH } from "node-ssh";
import { describe, expect, it } from "vitest";
import { HostConnections, type Connect } from "../../../src/runner/connections.ts";
import { execWithTimeout } from "../../../src/runner/ssh.ts";
import type { HostEndpoint } from "../../../src/targets/target.ts";
import { delay, endpoint, fakeSsh, never, type FakeSsh } from "./fakeSsh.ts";

const quiet = { log: () => undefined };

describe("HostConnections.connectAll", () => {
  it("when one host fails, waits for the others, closes every connection that opened and throws that host's error", async () => {
    const hosts = ["a", "b", "c"].map((r) => endpoint("d0", r));
    const opened: FakeSsh[] = [];
    const connect: Connect = async (h) => {
      if (h.role === "a") {
        await delay(20);
        throw new Error("d0/a (127.0.0.1:1): host key does not match the one latlab generated — refusing to connect");
      }
      if (h.role === "c") await delay(60); // still connecting when a fails
      const f = fakeSsh(h.role, (cmd) => (cmd === "ready" ? never() : {}));
      opened.push(f);
      return f.ssh;
    };
    // b (and later c) wait in their ready check, which never answers.
    const prepare = async (_h: HostEndpoint, ssh: NodeSSH, signal: AbortSignal) => {
      await execWithTimeout(ssh, "ready", 600, signal);
    };
    const started = Date.now();
    await expect(HostConnections.connectAll("d0", hosts, { connect, signal: new AbortController().signal, ...quiet }, prepare)).rejects.toThrow(
      /^d0\/a .*host key does not match/,
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(opened.map((f) => f.name).sort()).toEqual(["b", "c"]);
    expect(opened.every((f) => f.disposed)).toBe(true);
    // Nothing of this deployment runs afterwards (no ready check, no probe).
    const before = opened.map((f) => f.commands.length + f.afterDispose.length);
    await delay(100);
    expect(opened.map((f) => f.commands.length + f.afterDispose.length)).toEqual(before);
  });

  it("names the host when a ready check or probe fails with an error that does not", async () => {
    const connect: Connect = async (h) => fakeSsh(h.role).ssh;
    const prepare = async (h: HostEndpoint) => {
      if (h.role === "server") throw new Error("no answer 75 s after start");
    };
    await expect(
      HostConnections.connectAll("d1", [endpoint("d1", "client"), endpoint("d1", "server")], { connect, signal: new AbortController().signal, ...quiet }, prepare),
    ).rejects.toThrow("d1/server: no answer 75 s after start");
  });

  it("returns every connection when all hosts are ready", async () => {
    const fakes = new Map<string, FakeSsh>();
    const connect: Connect = async (h) => {
      const f = fakeSsh(h.role);
      fakes.set(h.role, f);
      return f.ssh;
    };
    const pool = await HostConnections.connectAll("d0", [endpoint("d0", "client"), endpoint("d0", "server")], { connect, signal: new AbortController().signal, ...quiet });
    expect(pool.get("client")).toBe(fakes.get("client")!.ssh);
    expect(pool.get("server")).toBe(fakes.get("server")!.ssh);
    pool.close();
    expect([...fakes.values()].every((f) => f.disposed)).toBe(true);
  });

  it("an unknown role is an error naming deployment and role, not a TypeError", async () => {
    const pool = await HostConnections.connectAll("ppg=true#0", [endpoint("ppg=true#0", "client")], {
      connect: async (h) => fakeSsh(h.role).ssh,
      signal: new AbortController().signal,
      ...quiet,
    });
    expect(() => pool.endpoint("server")).toThrow(/^ppg=true#0: the target brought up no host "server"/);
    expect(() => pool.get("server")).toThrow(/^ppg=true#0\/server: not connected/);
    pool.close();
  });
});

describe("HostConnections.reconnect", () => {
  async function pool(slowConnect = 30) {
    const fakes: FakeSsh[] = [];
    let connects = 0;
    const connect: Connect = async (h) => {
      connects++;
      if (fakes.length) await delay(slowConnect);
      const f = fakeSsh(`${h.role}#${fakes.length}`);
      fakes.push(f);
      return f.ssh;
    };
    const p = await HostConnections.connectAll("d0", [endpoint("d0", "client")], { connect, signal: new AbortController().signal, ...quiet });
    return { p, fakes, connects: () => connects };
  }

  it("two cells that saw the same connection drop share one fresh connection; neither closes the other's", async () => {
    const { p, fakes, connects } = await pool();
    const dropped = p.get("client");
    const [first, second] = await Promise.all([p.reconnect("client", dropped), p.reconnect("client", dropped)]);
    expect(first).toBe(second);
    expect(connects()).toBe(2); // the initial connect and one reconnect
    expect(fakes[0]!.disposed).toBe(true);
    expect(fakes[1]!.disposed).toBe(false);
    // A cell that noticed the drop late gets the fresh connection, which stays open.
    expect(await p.reconnect("client", dropped)).toBe(first);
    expect(fakes[1]!.disposed).toBe(false);
    expect(connects()).toBe(2);
    // When the fresh one drops too, only it is replaced.
    const third = await p.reconnect("client", first);
    expect(third).not.toBe(first);
    expect(fakes[1]!.disposed).toBe(true);
    expect(p.get("client")).toBe(third);
    p.close();
  });

  it("a reconnect that completes after close() is closed too", async () => {
    const { p, fakes } = await pool(50);
    const pending = p.reconnect("client", p.get("client"));
    p.close();
    await expect(pending).rejects.toThrow(/closed/);
    expect(fakes.every((f) => f.disposed)).toBe(true);
  });
});
