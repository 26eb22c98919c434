/**
 * The history on real local runs (network namespaces, iperf3 through tbf): two runs of one plan
 * (Standard_D2_v2, capped at 1,500 Mbit/s by the local target) where, in the second, the test
 * lowers each client's egress cap to 750 Mbit/s (Standard_D1_v2's) with the local target's own tbf
 * command as soon as latlab has set it — so the second run's throughput really halves while its
 * plan stays the same (runs of different plans are not compared: src/history/compareRuns.ts).
 * Every command a scheduled job uses is run as a user would: run (recording), history, trend,
 * compare with --fail-on-regression both ways and from the history alone, export --parquet,
 * report --markdown.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { REGRESSION_EXIT_CODE } from "../../src/cli/commands/compareCommand.ts";
import { ResultsSchema } from "../../src/results/schema.ts";
import { tbfCommands } from "../../src/targets/local/network/shaping.ts";
import { tempDirs } from "../tempDirs.ts";
import { runLatlabWithFault } from "./faultInjection.ts";

const tempDir = tempDirs();
const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "bin/latlab.js");

const experiment = (size: string) => `import { defineExperiment } from "latlab";
export default defineExperiment({
  name: "history-bw",
  description: "iperf3 between two hosts, for the history tests",
  defaults: { region: "uksouth", zone: "1", size: "${size}", accelnet: false },
  hosts: { client: {}, server: {} },
  measure: [{ tool: "iperf3" }],
  // Two independent deployments a run: a regression verdict over replicas, not over one host pair.
  replicas: 2,
});
`;

function latlab(args: string[]) {
  // cwd: this checkout, so the run records its git commit.
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: "utf8", env: { ...process.env, CI: "true" }, timeout: 900_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("history, trend and compare on real local runs", () => {
  const dir = tempDir("latlab-history-it-");
  const history = join(dir, "history.duckdb");
  const runA = join(dir, "run-a");
  const runB = join(dir, "run-b");
  const runId = (d: string) => ResultsSchema.parse(JSON.parse(readFileSync(join(d, "results.json"), "utf8"))).runId;

  /** The client namespaces whose cap the second run had lowered. */
  const lowered = new Set<string>();

  beforeAll(async () => {
    writeFileSync(join(dir, "bw.ts"), experiment("Standard_D2_v2"));
    const first = latlab(["run", join(dir, "bw.ts"), "--duration", "2", "--out", runA, "--history", history]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain(`history: run ${runId(runA)} recorded in ${history}`);
    // The second run: each replica's client (the sender) held to 750 Mbit/s once latlab has capped it.
    const second = await runLatlabWithFault(BIN, ["run", join(dir, "bw.ts"), "--duration", "2", "--out", runB, "--history", history], {
      cwd: ROOT,
      tick: () => {
        if (lowered.size === 2) return;
        const clients = execFileSync("ip", ["netns", "list"], { encoding: "utf8" }).match(/^ll-[0-9a-f]+-[01]-client\b/gm) ?? [];
        for (const ns of clients) {
          if (lowered.has(ns)) continue;
          try {
            const qdisc = execFileSync("tc", ["-n", ns, "qdisc", "show", "dev", "eth0"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
            if (!/\btbf\b/.test(qdisc)) continue;
            for (const [cmd, ...args] of tbfCommands(ns, "eth0", 750)) execFileSync(cmd!, args);
            lowered.add(ns);
          } catch {
            // Not wired yet (or gone): the next tick looks again.
          }
        }
      },
    });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toContain(`history: run ${runId(runB)} recorded in ${history}`);
    expect([...lowered], "both replicas' clients capped").toHaveLength(2);
  }, 1_800_000);

  it("each finished run is recorded with its provenance; `history` lists both with their headline", () => {
    const list = latlab(["history", "history-bw", "--history", history, "--json"]);
    expect(list.code, list.stderr).toBe(0);
    const runs = JSON.parse(list.stdout) as { runId: string; status: string; gitCommit: string | null }[];
    expect(runs.map((r) => r.runId)).toEqual([runId(runA), runId(runB)]);
    const head = spawnSync("git", ["rev-parse", "HEAD"], { cwd: ROOT, encoding: "utf8" }).stdout.trim();
    expect(runs[0]!.gitCommit).toMatch(new RegExp(`^${head}(-dirty)?$`));
    const text = latlab(["history", "--history", history]);
    expect(text.stdout).toMatch(/history-bw .* complete .* m0 iperf3 p50 \d+ Mbit\/s/);
    expect(text.stdout).toContain("2 run(s) in");
  });

  it("`trend` shows the throughput per run, halved in the second", () => {
    const t = latlab(["trend", "history-bw", "--metric", "mean", "--history", history, "--json"]);
    expect(t.code, t.stderr).toBe(0);
    const series = JSON.parse(t.stdout) as { runs: { runId: string }[]; series: { variant: string; values: number[] }[] };
    expect(series.series).toHaveLength(1);
    const [fast, slow] = series.series[0]!.values as [number, number];
    expect(fast).toBeGreaterThan(1000);
    expect(fast).toBeLessThanOrEqual(1500 * 1.05);
    expect(slow).toBeLessThanOrEqual(750 * 1.05);
    expect(slow / fast).toBeLessThan(0.7);
    const table = latlab(["trend", "history-bw", "--history", history]);
    expect(table.stdout).toMatch(/p50 per run/);
    expect(table.stdout).toContain(runId(runB));
  });

  it("`compare --fail-on-regression` fails for the halved throughput and passes the other way round", () => {
    const worse = latlab(["compare", runA, runB, "--fail-on-regression", "20"]);
    expect(worse.code, worse.stderr + worse.stdout).toBe(REGRESSION_EXIT_CODE);
    expect(worse.stdout).toMatch(/mean Mbit\/s .*−|-\d/);
    expect(worse.stdout).toMatch(/regression\s*│?\s*$/m);
    expect(worse.stdout).toMatch(/2\+2 replicas/);
    expect(worse.stdout).toMatch(/\d regression\(s\) beyond 20%/);
    const better = latlab(["compare", runB, runA, "--fail-on-regression", "20", "--json"]);
    expect(better.code, better.stderr).toBe(0);
    const verdicts = (JSON.parse(better.stdout) as { verdicts: { verdict: string }[] }).verdicts.map((v) => v.verdict);
    expect(verdicts).toEqual(["improvement", "improvement"]);
    // A threshold above the change: the CI excludes 0, but it is within what the job tolerates.
    const tolerant = latlab(["compare", runA, runB, "--fail-on-regression", "90"]);
    expect(tolerant.code, tolerant.stdout).toBe(0);
    expect(tolerant.stdout).toContain("no regression beyond 90%");
  });

  it("`compare` by run id from the history alone reaches the same verdict over the same units", () => {
    const ids = latlab(["compare", runId(runA), runId(runB), "--fail-on-regression", "20", "--history", history, "--markdown"]);
    expect(ids.code, ids.stderr + ids.stdout).toBe(REGRESSION_EXIT_CODE);
    expect(ids.stdout).toContain("**regression**");
    expect(ids.stdout).toContain("(history)");
    const unknown = latlab(["compare", "no-such-run", runB, "--history", history]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/"no-such-run": no results folder .* and no run with that id in the history/);
  });

  it("`history export --parquet` writes the tables; `report --markdown` gives the run's summary", () => {
    const out = join(dir, "parquet");
    const exported = latlab(["history", "export", "--parquet", out, "--history", history]);
    expect(exported.code, exported.stderr).toBe(0);
    for (const t of ["runs", "variants", "hosts", "summaries", "comparisons"]) expect(existsSync(join(out, `${t}.parquet`))).toBe(true);
    const md = latlab(["report", runB, "--markdown"]);
    expect(md.code, md.stderr).toBe(0);
    expect(md.stdout).toMatch(/^## ✅ history-bw on local: complete/);
    expect(md.stdout).toMatch(/^\| default \(baseline\) \| iperf3 \| client->server \| throughput Mbit\/s \| 4 \| \d+/m);
    expect(md.stdout).toContain("- teardown: ok");
    // report.md's content: the verdicts and the placement in Mermaid, as GitHub renders them.
    expect(md.stdout).toContain("### Verdicts");
    expect(md.stdout).toContain("```mermaid\nflowchart LR");
  });
});
