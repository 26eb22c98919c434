import { afterEach, describe, expect, it, vi } from "vitest";
import { ASSET_TIMEOUT_SECONDS, ensureAssets } from "../../../src/runner/assets.ts";
import { LISTEN_TIMEOUT_MS, startServer } from "../../../src/runner/servers.ts";
import type { ToolModule } from "../../../src/tools/types.ts";
import { endpoint, fakeSsh, never } from "./fakeSsh.ts";

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
