/**
 * A tool server killed mid-cell on the local target (issue 23, fault 2): while the first sockperf
 * client runs, its server is SIGKILLed. That cell's error names the server's death first (not only
 * the client's "connection closed by peer"); the server is found dead before the next cell and
 * restarted, so the later repetitions are measured; teardown is clean.
 *
 * Builds namespaces: run under `flock /tmp/latlab-ns.lock`, like every test that does.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ResultsSchema, type Results } from "../../src/results/schema.ts";
import { tempDirs } from "../tempDirs.ts";
import { leftovers } from "./leftovers.ts";
import { deploymentNamespace, namespaceProcesses, runLatlabWithFault, runsIn } from "./faultInjection.ts";

const tempDir = tempDirs();
const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "bin/latlab.js");

describe("a tool server killed mid-cell on the local target", () => {
  it("names the server's death as the cell's cause, restarts it before the next cell, and measures the later repetitions", async () => {
    const out = tempDir("latlab-e2e-server-");
    const killed: string[] = [];
    /** The run's short id (its namespaces are ll-<short>-…): what it leaves is told from other runs' by it. */
    let short = "";
    // As soon as the first client measures, kill the server it talks to (once).
    const run = await runLatlabWithFault(BIN, ["run", "tests/fixtures/experiments/sockperf-repetitions.ts", "--out", out, "--no-history"], {
      cwd: ROOT,
      tick: () => {
        if (killed.length) return;
        const clientNs = deploymentNamespace("client");
        const serverNs = deploymentNamespace("server");
        if (!clientNs || !serverNs) return;
        short = clientNs.split("-")[1]!;
        if (!runsIn(clientNs, /^sockperf (pp|ping-pong)\b/)) return;
        for (const [pid, args] of namespaceProcesses(serverNs)) {
          if (!/^sockperf (sr|server)\b/.test(args)) continue;
          process.kill(pid, "SIGKILL");
          killed.push(`${pid} ${args}`);
        }
      },
    });

    expect(killed.length, `no sockperf server was killed\n${run.stderr}`).toBeGreaterThan(0);
    expect(run.stderr + run.stdout).not.toMatch(/Error:.*at /);
    const results: Results = ResultsSchema.parse(JSON.parse(readFileSync(join(out, "results.json"), "utf8")));
    const [first, ...later] = results.measurements;
    // The cell in flight: the server's death first, then what the client said.
    expect(first).toMatchObject({ repetition: 0, status: "failed" });
    expect(first!.error).toMatch(/^the sockperf server on default\/server exited \(killed by SIGKILL\).*; then: /);
    // Found dead before the next cell and restarted: the later repetitions are measured.
    expect(later.map((m) => [m.repetition, m.status, m.error])).toEqual([
      [1, "ok", undefined],
      [2, "ok", undefined],
    ]);
    expect(run.stderr).toMatch(/default\/server: the sockperf server on default\/server exited \(killed by SIGKILL\).*; restarting it/);
    expect(results.status).toBe("partial");
    expect(run.code, run.stderr).toBe(2);
    expect(results.teardown).toMatchObject({ status: "ok", errors: [] });
    // Only this run's: another suite's run may be up on this machine at the same time.
    expect(leftovers(out).filter((l) => l.includes(short) || l.includes(out))).toEqual([]);
  });
});
