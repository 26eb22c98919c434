import { execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import type { NodeSSH } from "node-ssh";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ASSET_TIMEOUT_SECONDS, ensureAssets } from "../../../src/runner/assets.ts";
import { LISTEN_TIMEOUT_MS, serverRunning, startServer, stopServer, stopServers } from "../../../src/runner/servers.ts";
import type { ToolModule } from "../../../src/tools/types.ts";
import { tempDirs } from "../../tempDirs.ts";
import { endpoint, fakeSsh, never } from "./fakeSsh.ts";

const tempDir = tempDirs();

/** Just enough of a tool for the runner's server and asset steps. */
const tool = {
  name: "fake-tool",
  assets: { "probe.sh": "#!/bin/sh\necho it's me\n" },
  server: (ctx: { port: number }) => ({ command: "fake-server", port: ctx.port }),
} as unknown as ToolModule;

describe("startServer", () => {
  afterEach(() => vi.useRealTimers());

  it("kills its server when it is not listening in time, so no stale server holds the port", async () => {
    vi.useFakeTimers();
    const ssh = fakeSsh("server", (cmd) => {
      if (cmd.startsWith("mkdir -p")) return { stdout: "4242\n" };
      if (cmd.startsWith("ss -Hlnptu")) return { stdout: "alive\n" }; // running, never listening
      return {};
    });
    const started = startServer(ssh.ssh, endpoint("d0", "server"), tool, {}, 11_000, "/assets");
    const failed = expect(started).rejects.toThrow(`d0/server: fake-tool server not listening on port 11000 after ${LISTEN_TIMEOUT_MS / 1000} s`);
    await vi.advanceTimersByTimeAsync(LISTEN_TIMEOUT_MS + 1_000);
    await failed;
    expect(ssh.commands.at(-1)).toMatch(/^kill 4242 .*kill -9 4242/);
  });

  it("kills its server when waiting for it fails (a check that gets no answer)", async () => {
    let checks = 0;
    const ssh = fakeSsh("server", (cmd) => {
      if (cmd.startsWith("mkdir -p")) return { stdout: "4243\n" };
      if (cmd.startsWith("ss -Hlnptu") && ++checks === 2) throw new Error("No response from server");
      if (cmd.startsWith("ss -Hlnptu")) return { stdout: "alive\n" };
      return {};
    });
    await expect(startServer(ssh.ssh, endpoint("d0", "server"), tool, {}, 11_000, "/assets")).rejects.toThrow("No response from server");
    expect(ssh.commands.at(-1)).toMatch(/^kill 4243 /);
  });

  it("does not kill a pid that is already gone", async () => {
    const ssh = fakeSsh("server", (cmd) => {
      if (cmd.startsWith("mkdir -p")) return { stdout: "4244\n" };
      if (cmd.startsWith("ss -Hlnptu")) return { stdout: "gone\n" };
      if (cmd.startsWith("tail")) return { stdout: "bind: Address already in use" };
      return {};
    });
    await expect(startServer(ssh.ssh, endpoint("d0", "server"), tool, {}, 11_000, "/assets")).rejects.toThrow(/exited at start: bind: Address already in use/);
    expect(ssh.commands.some((c) => c.startsWith("kill"))).toBe(false);
  });
});

describe("ensureAssets", () => {
  it("writes each asset through the guarded exec, with its content on stdin", async () => {
    const ssh = fakeSsh("client");
    const dir = await ensureAssets(ssh.ssh, endpoint("d0", "client"), tool, new Set());
    expect(dir).toBe("/tmp/latlab/client/tools/fake-tool");
    expect(ssh.wrapped[0]).toMatch(new RegExp(`^timeout --kill-after=5 ${ASSET_TIMEOUT_SECONDS} sh -c `));
    expect(ssh.commands[0]).toBe(`mkdir -p '/tmp/latlab/client/tools/fake-tool' && cat > '/tmp/latlab/client/tools/fake-tool/probe.sh' && chmod 0755 '/tmp/latlab/client/tools/fake-tool/probe.sh'`);
    expect(ssh.stdins[0]).toBe("#!/bin/sh\necho it's me\n");
  });

  it("a wedged host does not hang the run: the write stops on interruption", async () => {
    const ssh = fakeSsh("client", () => never());
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    const started = Date.now();
    await expect(ensureAssets(ssh.ssh, endpoint("d0", "client"), tool, new Set(), controller.signal)).rejects.toThrow(/^d0\/client: cannot write .*probe.sh: interrupted/);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("a wedged host does not hang the run: the write times out", async () => {
    vi.useFakeTimers();
    try {
      const ssh = fakeSsh("client", () => never());
      const writing = ensureAssets(ssh.ssh, endpoint("d0", "client"), tool, new Set());
      const failed = expect(writing).rejects.toThrow(/cannot write .*probe.sh: no answer/);
      await vi.advanceTimersByTimeAsync((ASSET_TIMEOUT_SECONDS + 16) * 1000);
      await failed;
    } finally {
      vi.useRealTimers();
    }
  });
});

/** node-ssh's execCommand, run by this machine's sh: the real shell text, no SSH. */
function localShell(): NodeSSH {
  return {
    isConnected: () => true,
    execCommand: (command: string) =>
      new Promise((resolve) => {
        const child = spawn("sh", ["-c", command], { stdio: ["ignore", "pipe", "pipe"] });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (d) => (stdout += d));
        child.stderr.on("data", (d) => (stderr += d));
        child.on("close", (code, signal) => resolve({ code, signal, stdout: stdout.trim(), stderr: stderr.trim() }));
      }),
  } as unknown as NodeSSH;
}

/** Alive = exists and is not a zombie waiting for its reaper. */
const alive = (pid: number) => existsSync(`/proc/${pid}`) && !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));

describe("startServer on a real shell: a server of ours whose pid latlab never learnt", () => {
  // A server that listens on 127.0.0.1 (this test's own), on a port picked per run.
  const listener = {
    name: "listener",
    server: (ctx: { port: number }) => ({
      command: `python3 -c 'import socket,time; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", ${ctx.port})); s.listen(); time.sleep(120)'`,
      port: ctx.port,
    }),
  } as unknown as ToolModule;

  it("is stopped before a new one starts on its port (its start was answered on a connection that then dropped); a pid file naming someone else's process is not", async () => {
    const ssh = localShell();
    const host = endpoint("d0", "server", { workDir: tempDir("latlab-unit-server-") });
    const port = 40_000 + Math.floor(Math.random() * 20_000);
    const bystander = spawn("sleep", ["120"], { stdio: "ignore" });
    // Whatever happens, no server of this test outlives it (the pid file names the latest).
    const pidFile = `${host.workDir}/servers/listener-${port}.pid`;
    const started: number[] = [];
    const start = async () => {
      const s = await startServer(ssh, host, listener, {}, port, "/assets").finally(() => {
        if (existsSync(pidFile)) started.push(Number(readFileSync(pidFile, "utf8")));
      });
      return s!;
    };
    try {
      const first = await start();
      expect(await serverRunning(ssh, first)).toBe(true);
      // A resume re-attaching to a client of this server keeps it: same pid, nothing started.
      const kept = (await startServer(ssh, host, listener, {}, port, "/assets", undefined, "0.0.0.0", { reuse: true }))!;
      expect(kept.pid).toBe(first.pid);
      expect(alive(first.pid)).toBe(true);
      // The runner lost the answer to that start: it starts the server again on the same port.
      const second = await start();
      expect(second.pid).not.toBe(first.pid);
      expect(alive(first.pid)).toBe(false);
      expect(await serverRunning(ssh, second)).toBe(true);
      expect(readFileSync(pidFile, "utf8").trim()).toBe(String(second.pid));
      await stopServer(ssh, second);
      expect(await serverRunning(ssh, second)).toBe(false);
      // A pid file left behind whose pid now belongs to another process (not on our port): untouched.
      writeFileSync(pidFile, `${bystander.pid}\n`);
      // Nor is it taken for our server by a resume: a new one is started.
      const third = (await startServer(ssh, host, listener, {}, port, "/assets", undefined, "0.0.0.0", { reuse: true }).finally(() => {
        if (existsSync(pidFile)) started.push(Number(readFileSync(pidFile, "utf8")));
      }))!;
      expect(third.pid).not.toBe(bystander.pid);
      expect(alive(bystander.pid!)).toBe(true);
      expect(await serverRunning(ssh, third)).toBe(true);
      await stopServer(ssh, third);
    } finally {
      // Also a listener whose pid never reached the pid file: one whose command line is this test's.
      const holders = execFileSync("ss", ["-Hlnpt", `sport = :${port}`], { encoding: "utf8" }).matchAll(/pid=(\d+),/g);
      for (const [, pid] of holders) {
        const cmdline = existsSync(`/proc/${pid}/cmdline`) ? readFileSync(`/proc/${pid}/cmdline`, "utf8") : "";
        if (cmdline.includes(`("127.0.0.1", ${port})`)) started.push(Number(pid));
      }
      for (const pid of started.filter((p) => p > 0 && p !== bystander.pid)) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // gone already
        }
      }
      bystander.kill("SIGKILL");
    }
  });
});

describe("stopServers on a real shell", () => {
  it("stops several servers in one command, SIGKILLs one that ignores SIGTERM, and leaves other processes alone", async () => {
    const ssh = localShell();
    const polite = spawn("sleep", ["120"], { stdio: "ignore" });
    // Ignores SIGTERM: only the SIGKILL after the wait stops it.
    const stubborn = spawn("sh", ["-c", "trap '' TERM; echo ready; while :; do sleep 1; done"], { stdio: ["ignore", "pipe", "ignore"] });
    const bystander = spawn("sleep", ["120"], { stdio: "ignore" });
    const server = (pid: number) => ({ tool: "t", host: "d0/server", port: 1, pid, log: "/dev/null" });
    try {
      // Not before the shell has installed its trap (it says so), however slow the machine.
      await new Promise((r) => stubborn.stdout!.once("data", r));
      await stopServers(ssh, [server(polite.pid!), server(stubborn.pid!)]);
      // Reaped by this process once exited: wait for both exit events rather than poll /proc.
      const exited = (c: ReturnType<typeof spawn>) => (c.exitCode !== null || c.signalCode !== null ? Promise.resolve() : new Promise((r) => c.once("exit", r)));
      await Promise.all([exited(polite), exited(stubborn)]);
      expect(polite.signalCode).toBe("SIGTERM");
      expect(stubborn.signalCode).toBe("SIGKILL");
      expect(alive(bystander.pid!)).toBe(true);
      const counting = fakeSsh("server", () => ({}));
      await stopServers(counting.ssh, [server(11), server(12), server(13)]);
      expect(counting.commands).toHaveLength(1);
      expect(counting.commands[0]).toMatch(/^kill 11 12 13 /);
      await stopServers(counting.ssh, []);
      expect(counting.commands).toHaveLength(1);
    } finally {
      for (const c of [polite, stubborn, bystander]) c.kill("SIGKILL");
    }
  });
});
