/**
 * One dropped SSH connection on the local target (issue 12, point 2): while the first ping runs,
 * the sshd process serving latlab's session on the client host is killed (not sshd's listener,
 * which goes on accepting). That cell fails with the lost connection; the host is reconnected
 * and its later repetitions are measured; teardown is clean.
 *
 * Builds namespaces: run under `flock /tmp/latlab-ns.lock`, like every test that does.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ResultsSchema, type Results } from "../../src/results/schema.ts";
import { tempDirs } from "../tempDirs.ts";
import { leftovers } from "./leftovers.ts";
import { deploymentNamespace, namespaceProcesses, runLatlabWithFault, runsIn } from "./faultInjection.ts";

const tempDir = tempDirs();

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "bin/latlab.js");

describe("a dropped SSH connection on the local target", () => {
  it("fails the cell in flight with the lost connection, reconnects, measures the later cells and leaves nothing behind", async () => {
    const out = tempDir("latlab-e2e-ssh-");
    const killed: string[] = [];
    // As soon as the first measuring ping runs on the client host, kill the sshd process that
    // serves latlab's connection to it (the per-connection "sshd: root@notty"), not the listener.
    const run = await runLatlabWithFault(BIN, ["run", "tests/fixtures/experiments/ping-repetitions.ts", "--out", out, "--no-history"], {
      cwd: ROOT,
      tick: () => {
        if (killed.length) return;
        const ns = deploymentNamespace("client");
        if (!ns || !runsIn(ns, /^ping -D/)) return;
        for (const [pid, args] of namespaceProcesses(ns)) {
          if (!args.startsWith("sshd: ") || args.includes("[listener]")) continue;
          process.kill(pid, "SIGKILL");
          killed.push(`${pid} ${args}`);
        }
      },
    });

    expect(killed.length, `no sshd session was killed\n${run.stderr}`).toBeGreaterThan(0);
    expect(run.stderr + run.stdout).not.toMatch(/Error:.*at /);
    expect(run.code, run.stderr).toBe(2);
    const results: Results = ResultsSchema.parse(JSON.parse(readFileSync(join(out, "results.json"), "utf8")));
    expect(results.status).toBe("partial");
    const [first, ...later] = results.measurements;
    // The cell in flight: the lost connection, named, never the parser's complaint.
    expect(first).toMatchObject({ repetition: 0, status: "failed" });
    expect(first!.error).toMatch(/^connection to client \(198\.\d+\.\d+\.\d+:22\) lost at \d{4}-\d\d-\d\dT[\d:.]+Z during ping client \(/);
    // Later cells on that host: measured over a new connection.
    expect(later.map((m) => [m.repetition, m.status])).toEqual([
      [1, "ok"],
      [2, "ok"],
    ]);
    for (const m of later) expect(m.summary!.count).toBe(10);
    expect(run.stderr).toMatch(/default\/client: reconnected \(attempt \d\/3\)/);
    expect(results.teardown).toMatchObject({ status: "ok", errors: [] });
    expect(leftovers(out)).toEqual([]);
  });
});
