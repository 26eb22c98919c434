// Issue 14, point 2: `npm run experiment -- ppg-vs-zone` end to end (a new process, as a user
// runs it: start, bring-up, cells, teardown, history, report) against what its tools were asked
// to measure, with where the rest went (results.json `timing`) and the part no harness can
// remove: each tool's own run time beyond what it was asked to measure. Builds namespaces: run
// under `flock /tmp/latlab-ns.lock` when other runs share the machine.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Results } from "../src/results/schema.ts";

const LABEL = "npm run experiment -- ppg-vs-zone, whole command";

export async function runOverheadBench(experiment = "ppg-vs-zone"): Promise<void> {
  if (process.getuid?.() !== 0) {
    console.log(`${LABEL.padEnd(56)} skipped: the local target builds network namespaces, which needs root`);
    return;
  }
  const out = mkdtempSync(join(tmpdir(), "latlab-bench-run-"));
  try {
    const started = performance.now();
    const run = spawnSync(process.execPath, [new URL("../bin/latlab.js", import.meta.url).pathname, "run", experiment, "--quiet", "--force", "--out", out, "--no-history"], { encoding: "utf8", maxBuffer: 64 << 20 });
    const wall = (performance.now() - started) / 1000;
    if (run.status !== 0) {
      console.log(`${LABEL.padEnd(56)} failed (exit ${run.status}): ${(run.stderr || run.stdout).trim().split("\n").slice(-3).join(" | ")}`);
      return;
    }
    const results = JSON.parse(readFileSync(join(out, "results.json"), "utf8")) as Results;
    const t = results.timing!;
    const asked = t.measurementSeconds;
    // What the tools themselves took (the client command, start to exit) beyond what they were asked to measure.
    const toolsOwn = results.measurements.reduce((s, m) => s + (m.timing?.clientSeconds ?? 0), 0);
    const setup = results.measurements.reduce((s, m) => s + (m.timing?.setupSeconds ?? 0), 0);
    const collect = results.measurements.reduce((s, m) => s + (m.timing?.collectSeconds ?? 0) + (m.timing?.parseSeconds ?? 0), 0);
    const ready = (t.deployments ?? []).reduce((s, d) => s + (d.readySeconds ?? 0), 0);
    console.log(LABEL.padEnd(56), `${wall.toFixed(1)} s for ${asked.toFixed(1)} s of measurement asked: ${(wall / asked).toFixed(2)}× (reference: measurement time; issue 14's target 1.25×)`);
    console.log(
      "".padEnd(56),
      `the tools' own run time ${toolsOwn.toFixed(1)} s (${(toolsOwn / asked).toFixed(2)}×: sockperf's fixed 2 s pre-test sleep and 0.45 s warm-up/cool-down per run, ssh and start per client);` +
        ` latlab's part: process start, report and exit ${(wall - t.totalSeconds).toFixed(1)} s, bring-up ${t.bringUpSeconds.toFixed(1)} s, connect + warm (versions, assets, servers) ${ready.toFixed(1)} s,` +
        ` per-cell setup ${setup.toFixed(1)} s, collect + parse ${collect.toFixed(1)} s, teardown ${t.teardownSeconds.toFixed(1)} s`,
    );
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
