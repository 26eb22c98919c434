/**
 * The regression gate on real local runs (issue 24, done when): a series of short runs of one
 * experiment (iperf3, the server sending through the local target's tbf cap of 750 Mbit/s) is
 * recorded into a history, with one run of another plan among them (a longer --duration), then
 * one run during which the test lowers the server's egress cap to 150 Mbit/s with tc inside its
 * namespace — the same plan hash, a real change of the network. `latlab gate` judges each run as
 * it would have been when it finished: learning for the first five, within the band for the
 * sixth, and a regression (exit 3) for the capped run only.
 *
 * Builds namespaces: run under `flock /tmp/latlab-ns.lock`, like every test that does.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { GATE_REGRESSION_EXIT_CODE, type GateOutput } from "../../src/cli/commands/gateCommand.ts";
import { ResultsSchema } from "../../src/results/schema.ts";
import { tbfCommands } from "../../src/targets/local/network/shaping.ts";
import { tempDirs } from "../tempDirs.ts";
import { deploymentNamespace, runLatlabWithFault, runsIn } from "./faultInjection.ts";

const tempDir = tempDirs();
const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "bin/latlab.js");
const FIXTURE = "tests/fixtures/experiments/gate-iperf3.ts";
/** The cap the test sets on the server's egress while the last run measures (the size's is 750 Mbit/s). */
const LOWERED_MBIT = 150;

function latlab(args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: "utf8", env: { ...process.env, CI: "true" }, timeout: 600_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const results = (dir: string) => ResultsSchema.parse(JSON.parse(readFileSync(join(dir, "results.json"), "utf8")));
const throughput = (dir: string) => results(dir).measurements[0]!.summary!.mean;

describe("latlab gate on a series of real local runs", () => {
  const dir = tempDir("latlab-gate-it-");
  const history = join(dir, "history.duckdb");
  /** Each run's folder, in the order they were made; the last is the one with the lowered cap. */
  const runs: { dir: string; kind: "same plan" | "other plan" | "lowered cap" }[] = [];
  let lowered = "";

  beforeAll(async () => {
    // Six runs of the plan, and one of another plan (a 3 s duration) after the second.
    for (let i = 0; i < 7; i++) {
      const other = i === 2;
      const out = join(dir, `run-${i}`);
      const r = latlab(["run", FIXTURE, "--out", out, "--history", history, ...(other ? ["--duration", "3"] : [])]);
      expect(r.code, r.stderr).toBe(0);
      runs.push({ dir: out, kind: other ? "other plan" : "same plan" });
    }
    // The change: as soon as the client's iperf3 runs, the server's egress cap goes down.
    const out = join(dir, "run-capped");
    const r = await runLatlabWithFault(BIN, ["run", FIXTURE, "--out", out, "--history", history], {
      cwd: ROOT,
      tick: () => {
        if (lowered) return;
        const server = deploymentNamespace("server");
        const client = deploymentNamespace("client");
        if (!server || !client || !runsIn(client, /^iperf3 -c /)) return;
        lowered = server;
        // The local target's own tbf command, replacing the cap it set for the size.
        for (const [cmd, ...args] of tbfCommands(server, "eth0", LOWERED_MBIT)) execFileSync(cmd!, args);
      },
    });
    expect(r.code, r.stderr).toBe(0);
    runs.push({ dir: out, kind: "lowered cap" });
  }, 1_800_000);

  it("the lowered cap was real: the capped run moved far less than the others", () => {
    expect(lowered, "the cap was not lowered").not.toBe("");
    const others = runs.filter((r) => r.kind === "same plan").map((r) => throughput(r.dir));
    for (const t of others) expect(t).toBeGreaterThan(500);
    expect(throughput(runs.at(-1)!.dir)).toBeLessThan(LOWERED_MBIT * 2);
  });

  it("each run judged in turn: learning for the first five of the plan, within band for the sixth, exactly the capped run flagged (exit 3)", () => {
    const judged = runs.map((run) => {
      const r = latlab(["gate", run.dir, "--history", history, "--json"]);
      const out = JSON.parse(r.stdout) as GateOutput;
      return { kind: run.kind, code: r.code, learning: out.learning, n: out.comparable.used.length, verdicts: [...new Set(out.report.checks.map((c) => c.verdict))], stderr: r.stderr };
    });
    expect(judged.map(({ stderr: _, ...j }) => j)).toEqual([
      { kind: "same plan", code: 0, learning: true, n: 0, verdicts: ["learning"] },
      { kind: "same plan", code: 0, learning: true, n: 1, verdicts: ["learning"] },
      // Its own plan has no earlier run: the two before it are of another plan.
      { kind: "other plan", code: 0, learning: true, n: 0, verdicts: ["learning"] },
      { kind: "same plan", code: 0, learning: true, n: 2, verdicts: ["learning"] },
      { kind: "same plan", code: 0, learning: true, n: 3, verdicts: ["learning"] },
      { kind: "same plan", code: 0, learning: true, n: 4, verdicts: ["learning"] },
      { kind: "same plan", code: 0, learning: false, n: 5, verdicts: ["within band"] },
      { kind: "lowered cap", code: GATE_REGRESSION_EXIT_CODE, learning: false, n: 6, verdicts: ["regression"] },
    ]);
  });

  it("the text says the unit, the method, the run of another plan excluded and why, and the regression in words", () => {
    const capped = runs.at(-1)!.dir;
    const r = latlab(["gate", capped, "--history", history]);
    expect(r.code, r.stderr).toBe(GATE_REGRESSION_EXIT_CODE);
    const text = r.stdout.replace(/\n {2}(?=\S)/g, " ");
    expect(text).toMatch(new RegExp(`^gate-iperf3: run ${results(capped).runId}: regression \\(1 of 1 figures\\)$`, "m"));
    expect(text).toContain("unit: previous runs, one value each (every run an independent draw of hosts); 6 comparable previous run(s) used, 1 excluded");
    expect(text).toMatch(/^method: 99 % prediction band for one new run/m);
    expect(text).toMatch(new RegExp(`^excluded ${results(runs[2]!.dir).runId}: another plan \\([0-9a-f]{8}, this run [0-9a-f]{8}\\)$`, "m"));
    expect(text).toMatch(/^default m0 iperf3 client->server throughput mean: regression: [\d.]+ Mbit\/s, 99 % prediction band [\d.]+–[\d.]+ Mbit\/s from 6 previous runs \(one unit each, log scale\); −\d+(\.\d+)? % vs their geometric mean/m);
    for (const line of r.stdout.split("\n")) expect([...line].length).toBeLessThanOrEqual(80);
  });
});
