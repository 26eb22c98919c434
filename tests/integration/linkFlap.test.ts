/**
 * A data link down for 3 s and back on the local target (issue 23, fault 3): while the first ping
 * runs, the client host's eth0 is set down, then up. The kernel deletes every route through it
 * and brings back only the connected subnet; latlab restores the routes it set up before the next
 * cell (Target.checkHosts), names what happened in the run, and the later repetitions are measured
 * rather than failing with "Network is unreachable". Teardown is clean.
 *
 * Builds namespaces: run under `flock /tmp/latlab-ns.lock`, like every test that does.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ResultsSchema, type Results } from "../../src/results/schema.ts";
import { tempDirs } from "../tempDirs.ts";
import { leftovers } from "./leftovers.ts";
import { deploymentNamespace, runLatlabWithFault, runsIn } from "./faultInjection.ts";

const tempDir = tempDirs();
const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "bin/latlab.js");

describe("a data link that goes down and comes back on the local target", () => {
  it("has its routes restored before the next cell, names the cause, and measures the later repetitions", async () => {
    const out = tempDir("latlab-e2e-flap-");
    let flapped = "";
    let short = "";
    // As soon as the first ping measures: `ip link set eth0 down; sleep 3; up` on the client host.
    const run = await runLatlabWithFault(BIN, ["run", "tests/fixtures/experiments/ping-flap.ts", "--out", out, "--no-history"], {
      cwd: ROOT,
      tick: () => {
        if (flapped) return;
        const ns = deploymentNamespace("client");
        if (!ns || !runsIn(ns, /^ping -D/)) return;
        flapped = ns;
        short = ns.split("-")[1]!;
        execFileSync("ip", ["-n", ns, "link", "set", "eth0", "down"]);
        setTimeout(() => execFileSync("ip", ["-n", ns, "link", "set", "eth0", "up"]), 3_000);
      },
    });

    expect(flapped, `the link was not flapped\n${run.stderr}`).not.toBe("");
    expect(run.stderr + run.stdout).not.toMatch(/Error:.*at /);
    const results: Results = ResultsSchema.parse(JSON.parse(readFileSync(join(out, "results.json"), "utf8")));
    const [first, ...later] = results.measurements;
    const restored = /host client \(\S+, namespace ll-[0-9a-f]+-0-client\): the kernel had dropped routes? default via [\d.]+ dev eth0.*\(a link went down\); restored/;
    // The cell in flight: when it failed, the lost routes are named before the client's symptom.
    if (first!.status === "failed") expect(first!.error).toMatch(new RegExp(`^during the cell, ${restored.source}.*; then: `));
    // Restored before the next cell at the latest: the later repetitions are measured.
    expect(later.map((m) => [m.repetition, m.status, m.error])).toEqual([
      [1, "ok", undefined],
      [2, "ok", undefined],
    ]);
    for (const m of later) expect(m.summary!.count).toBe(40);
    // What happened is said: in the failed cell's error or the next cell's warnings, and in the log.
    const said = [first!.error ?? "", ...later.flatMap((m) => m.warnings)].join("\n");
    expect(said).toMatch(restored);
    expect(results.teardown).toMatchObject({ status: "ok", errors: [] });
    // Only this run's: another suite's run may be up on this machine at the same time.
    expect(leftovers(out).filter((l) => l.includes(short) || l.includes(out))).toEqual([]);
  });
});
