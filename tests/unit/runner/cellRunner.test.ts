import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { NodeSSH } from "node-ssh";
import { describe, expect, it } from "vitest";
import { cellSlug, failedCell, runCell } from "../../../src/runner/cellRunner.ts";
import type { ClientOutput, ToolModule } from "../../../src/tools/types.ts";
import { endpoint, fakeSsh, type Handler } from "./fakeSsh.ts";
import { fakeCell } from "./fakeCell.ts";
import { tempDirs } from "../../tempDirs.ts";

const tempDir = tempDirs();

const cell = fakeCell("fake-probe", { id: "v=1/probe/client->server" });

/** A detached tool like tcp-echo: one RTT per CSV line, plus a side log. */
const probe = {
  name: "fake-probe",
  client: (ctx: { workDir: string }) => ({
    command: "start-probe",
    timeoutSeconds: 60,
    files: [`${ctx.workDir}/probe.csv`, `${ctx.workDir}/probe.log`],
    detached: { pidFile: `${ctx.workDir}/probe.pid`, outputFile: `${ctx.workDir}/probe.csv`, pollSeconds: 0.02 },
  }),
  parse: (out: ClientOutput) => {
    const csv = Object.entries(out.files).find(([k]) => k.endsWith(".csv"))![1];
    return { metric: "rtt", unit: "us", samples: csv.trim().split("\n").map(Number), warnings: [] };
  },
  measurementSeconds: () => 60,
} as unknown as ToolModule;

/** The client host: a CSV that grows, a pid alive until `exit`. */
function clientHost(state: { csv: string; alive: boolean; dead: boolean }): Handler {
  return (cmd) => {
    if (state.dead) throw new Error("No response from server");
    const tail = /^tail -c \+(\d+) /.exec(cmd);
    if (tail) return { stdout: Buffer.from(state.csv).subarray(Number(tail[1]) - 1).toString("base64") };
    if (cmd.includes("ps -o stat=")) return { stdout: state.alive ? "alive" : "gone" };
    if (cmd.startsWith("cat ") && cmd.includes("probe.log")) return { stdout: "log line" };
    return {};
  };
}

const slug = cellSlug(cell.id);

const ctx = (ssh: NodeSSH, reconnectClient?: (failed: NodeSSH) => Promise<NodeSSH>) => ({
  cell,
  client: { endpoint: endpoint("d0", "client"), ssh, assetsDir: "/assets" },
  server: { endpoint: endpoint("d0", "server"), ssh: fakeSsh("server").ssh },
  runDir: tempDir("latlab-unit-cell-"),
  ...(reconnectClient ? { reconnectClient } : {}),
});

describe("runCell with a detached client", () => {
  it("parses what was collected when the connection is lost for good, with a warning", async () => {
    const state = { csv: "100\n101\n", alive: true, dead: false };
    const first = fakeSsh("client", clientHost(state));
    // The link dies: declared lost (as ssh2 does), and nothing answers any more.
    setTimeout(() => {
      state.dead = true;
      first.drop();
    }, 60);
    const c = ctx(first.ssh, async () => {
      throw new Error("d0/client: SSH not ready after 9 attempts");
    });
    const { measurement, samples } = await runCell(c, probe);
    expect(measurement.status).toBe("ok");
    expect(samples).toEqual([100, 101]);
    expect(measurement.warnings.join("\n")).toMatch(/connection lost while collecting .*SSH not ready/);
    expect(measurement.raw).toContain(join("raw", slug, "probe.csv"));
    expect(readFileSync(join(c.runDir, "raw", slug, "probe.csv"), "utf8")).toBe("100\n101\n");
  });

  it("asks to replace the very connection that dropped, and fetches the other files on the new one", async () => {
    const state = { csv: "100\n", alive: true, dead: false };
    const first = fakeSsh("first", clientHost(state));
    const second = fakeSsh("second", clientHost(state));
    const asked: NodeSSH[] = [];
    setTimeout(() => {
      first.ssh.dispose();
      state.csv += "102\n";
      setTimeout(() => (state.alive = false), 50);
    }, 40);
    const { measurement, samples } = await runCell(
      ctx(first.ssh, async (failed) => {
        asked.push(failed);
        return second.ssh;
      }),
      probe,
    );
    expect(asked).toEqual([first.ssh]);
    expect(measurement.status).toBe("ok");
    expect(samples).toEqual([100, 102]);
    expect(second.commands.some((c) => c.startsWith("cat ") && c.includes("probe.log"))).toBe(true);
    expect(measurement.raw.some((r) => r.endsWith("probe.log"))).toBe(true);
  });
});

describe("failedCell", () => {
  it("is the one shape of a failed cell: one that never ran, and one that ran and keeps its start and raw files", async () => {
    const never = failedCell(cell, "not run");
    expect(never.measurement).toMatchObject({ status: "failed", error: "not run", raw: [], warnings: [] });
    const ssh = fakeSsh("client", (cmd) => (cmd.startsWith("mkdir") ? { code: 1, stderr: "read-only file system" } : {}));
    const { measurement } = await runCell(ctx(ssh.ssh), probe);
    expect(measurement).toMatchObject({ status: "failed", error: expect.stringMatching(/cannot create .*read-only file system/) as unknown as string });
    expect(measurement.raw).toEqual([join("raw", slug, "command.txt")]);
  });

  it("re-attached (latlab resume on the hosts a dead runner left): not started again, the earlier copy kept and continued from its last whole line", async () => {
    const state = { csv: "100\n101\n102\n103\n", alive: false, dead: false };
    const ssh = fakeSsh("client", clientHost(state));
    const earlierRawDir = join(tempDir("latlab-unit-earlier-"), "raw", slug);
    mkdirSync(earlierRawDir, { recursive: true });
    // The dead runner copied two lines and half of the third.
    writeFileSync(join(earlierRawDir, "probe.csv"), "100\n101\n10");
    writeFileSync(join(earlierRawDir, "stdout.txt"), "started\n");
    const detached = {
      cell: cell.id,
      host: "d0/client",
      hostKey: endpoint("d0", "client").hostKey,
      pidFile: `/tmp/latlab/client/${slug}/probe.pid`,
      outputFile: `/tmp/latlab/client/${slug}/probe.csv`,
      localName: "probe.csv",
      pollSeconds: 0.02,
      startedAt: "2026-11-23T10:00:00.000Z",
      deadline: new Date(Date.now() + 60_000).toISOString(),
    };
    const c = { ...ctx(ssh.ssh), reattach: { state: detached, earlierRawDir } };
    const { measurement, samples } = await runCell(c, probe);
    expect(ssh.commands).not.toContain("start-probe");
    expect(ssh.commands.some((x) => x.startsWith("mkdir"))).toBe(false);
    expect(ssh.commands.find((x) => x.startsWith("tail "))).toMatch(/^tail -c \+9 /);
    expect(samples).toEqual([100, 101, 102, 103]);
    expect(measurement.status).toBe("ok");
    expect(measurement.startedAt).toBe("2026-11-23T10:00:00.000Z");
    expect(measurement.warnings.join("\n")).toMatch(/re-attached by latlab resume at 20\d\d-\S+ to the client started at 2026-11-23T10:00:00.000Z .*the 8 bytes collected before are kept/);
    expect(measurement.warnings.join("\n")).not.toMatch(/resume at 2026-11-23T10:00:00.000Z/);
    expect(readFileSync(join(c.runDir, "raw", slug, "probe.csv"), "utf8")).toBe("100\n101\n102\n103\n");
    expect(readFileSync(join(c.runDir, "raw", slug, "stdout.txt"), "utf8")).toBe("started\n");
    expect(measurement.raw).toContain(join("raw", slug, "detached.json"));

    // Another host of the same name (a new bring-up: another key) is not the one running that client.
    const other = fakeSsh("client", clientHost({ csv: "200\n", alive: false, dead: false }));
    const elsewhere = await runCell({ ...ctx(other.ssh), reattach: { state: { ...detached, hostKey: "ssh-ed25519 AAAAother" }, earlierRawDir } }, probe);
    expect(other.commands).toContain("start-probe");
    expect(elsewhere.samples).toEqual([200]);
    expect(elsewhere.measurement.startedAt).not.toBe("2026-11-23T10:00:00.000Z");
    expect(elsewhere.measurement.warnings.join("\n")).toMatch(/not re-attached: the client the earlier runner started .* is not this cell's on this host; measured again/);
  });

  it("a detached client it starts leaves what a resume needs beside its raw output (detached.json)", async () => {
    const state = { csv: "100\n", alive: false, dead: false };
    const ssh = fakeSsh("client", clientHost(state));
    const c = ctx(ssh.ssh);
    const { measurement } = await runCell(c, probe);
    expect(measurement.status).toBe("ok");
    const saved = JSON.parse(readFileSync(join(c.runDir, "raw", slug, "detached.json"), "utf8"));
    expect(saved).toMatchObject({ cell: cell.id, host: "d0/client", localName: "probe.csv", pidFile: "/tmp/latlab/client/" + slug + "/probe.pid", startedAt: measurement.startedAt });
    expect(Date.parse(saved.deadline) - Date.parse(saved.startedAt)).toBeGreaterThanOrEqual(59_000);
  });
});
