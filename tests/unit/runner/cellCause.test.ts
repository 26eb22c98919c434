/**
 * A failed cell names its first cause (issue 23, faults 2 and 3): the server's death, a link down,
 * routes the kernel dropped; and a link still down before a cell fails it at once, naming it.
 */
import { describe, expect, it } from "vitest";
import { runCell } from "../../../src/runner/cellRunner.ts";
import { describeExitStatus, serverExit, type RunningServer } from "../../../src/runner/servers.ts";
import type { HostCheck } from "../../../src/targets/target.ts";
import { ToolOutputError, type ToolModule } from "../../../src/tools/types.ts";
import { endpoint, fakeSsh, type Handler } from "./fakeSsh.ts";
import { fakeCell } from "./fakeCell.ts";
import { tempDirs } from "../../tempDirs.ts";

const tempDir = tempDirs();

const cell = fakeCell("fake-pp", { id: "v=1/pp/client->server" });

/** A client that fails as sockperf's does when its server dies under it. */
const pp = {
  name: "fake-pp",
  client: () => ({ command: "pp-client", timeoutSeconds: 10, files: [] }),
  parse: () => {
    throw new ToolOutputError("fake-pp", "connection closed by peer");
  },
  measurementSeconds: () => 1,
} as unknown as ToolModule;

const server: RunningServer = { tool: "sockperf", host: "d0/server", port: 11_000, pid: 4242, log: "/w/servers/sockperf-11000.log", status: "/w/servers/sockperf-11000.status" };

/** The server host: the server's pid gone, its status file written by the waiting sh. */
const deadServer = (status: string): Handler => (cmd) => {
  if (cmd.startsWith("ss -Hlnptu")) return { stdout: `gone\nstatus=${status}\n` };
  if (cmd.startsWith("tail -n 3")) return { stdout: "sockperf: [Server] listening\n" };
  return {};
};
const liveServer: Handler = (cmd) => (cmd.startsWith("ss -Hlnptu") ? { stdout: "listening\nalive\nstatus=\n" } : {});

const ctx = (serverHandler: Handler, checkNetwork?: () => Promise<HostCheck>) => ({
  cell,
  client: { endpoint: endpoint("d0", "client"), ssh: fakeSsh("client", (c) => (c.startsWith("mkdir") ? {} : { code: 1, stderr: "sockperf: connection closed by peer" })).ssh, assetsDir: "/assets" },
  server: { endpoint: endpoint("d0", "server"), ssh: fakeSsh("server", serverHandler).ssh, process: server },
  runDir: tempDir("latlab-unit-cause-"),
  ...(checkNetwork ? { checkNetwork } : {}),
});

describe("a failed cell's first cause", () => {
  it("a server killed mid-cell: its death and how, before the client's symptom", async () => {
    const { measurement } = await runCell(ctx(deadServer("137")), pp);
    expect(measurement.status).toBe("failed");
    expect(measurement.error).toBe(
      "the sockperf server on d0/server exited (killed by SIGKILL); its log ends: sockperf: [Server] listening; then: fake-pp: connection closed by peer",
    );
  });

  it("a server that runs: only the client's error", async () => {
    const { measurement } = await runCell(ctx(liveServer), pp);
    expect(measurement.error).toBe("fake-pp: connection closed by peer");
  });

  it("routes dropped during the cell: named first (restored for the next cell)", async () => {
    let calls = 0;
    const check = async (): Promise<HostCheck> => (++calls === 1 ? { restored: [], problems: [] } : { restored: ["host client: the kernel had dropped route default via 10.0.0.1 dev eth0 (a link went down); restored"], problems: [] });
    const { measurement } = await runCell(ctx(liveServer, check), pp);
    expect(calls).toBe(2);
    expect(measurement.error).toBe("during the cell, host client: the kernel had dropped route default via 10.0.0.1 dev eth0 (a link went down); restored; then: fake-pp: connection closed by peer");
  });

  it("a link still down before the cell: not measured, the link named, the client never started", async () => {
    const c = ctx(liveServer, async () => ({ restored: [], problems: ["host client: link eth0 down (network unreachable through it)"] }));
    const { measurement } = await runCell(c, pp);
    expect(measurement.error).toBe("not measured: host client: link eth0 down (network unreachable through it)");
  });

  it("routes restored before the cell: a warning on the cell, which then measures", async () => {
    const ok = { ...pp, parse: () => ({ metric: "rtt", unit: "us", samples: [100], warnings: [] }) } as unknown as ToolModule;
    const c = { ...ctx(liveServer, async () => ({ restored: ["host client: … restored"], problems: [] })), client: { endpoint: endpoint("d0", "client"), ssh: fakeSsh("client").ssh, assetsDir: "/assets" } };
    const { measurement } = await runCell(c, ok);
    expect(measurement.status).toBe("ok");
    expect(measurement.warnings).toContain("before this cell, host client: … restored");
  });
});

describe("serverExit", () => {
  it("undefined while the server runs and listens", async () => {
    expect(await serverExit(fakeSsh("server", liveServer).ssh, server)).toBeUndefined();
  });
  it("names a pid gone without a status (a server started before status files), and one that stopped listening", async () => {
    expect(await serverExit(fakeSsh("server", (c) => (c.startsWith("ss") ? { stdout: "gone\nstatus=\n" } : {})).ssh, server)).toBe("the sockperf server on d0/server exited (pid 4242 is gone)");
    expect(await serverExit(fakeSsh("server", (c) => (c.startsWith("ss") ? { stdout: "alive\nstatus=\n" } : {})).ssh, server)).toBe(
      "the sockperf server on d0/server stopped listening (pid 4242 runs but no longer listens on port 11000)",
    );
  });
  it("exit statuses as sh gives them", () => {
    expect(describeExitStatus(137)).toBe("killed by SIGKILL");
    expect(describeExitStatus(143)).toBe("killed by SIGTERM");
    expect(describeExitStatus(1)).toBe("exit code 1");
  });
});
