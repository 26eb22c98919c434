/**
 * `latlab gate`: a run judged against its comparable previous runs in a history built with the
 * store's own writer (appendRuns) from runs made with latlab's own result code (fakeRun).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { GATE_REGRESSION_EXIT_CODE } from "../../../src/cli/commands/gateCommand.ts";
import { GateReportSchema } from "../../../src/history/gateSchema.ts";
import { historyRecords } from "../../../src/history/historyRecords.ts";
import { appendRuns } from "../../../src/history/historyStore.ts";
import type { Cell } from "../../../src/plan/types.ts";
import { defineExperiment } from "../../../src/index.ts";
import { tempDirs } from "../../tempDirs.ts";
import { around, fakeRun, twoVariants } from "../history/fakeRun.ts";
import { runMain } from "./runMain.ts";

const tempDir = tempDirs();
const at = (day: number) => `2026-11-${String(day).padStart(2, "0")}T03:00:00.000Z`;
const SCHEDULED = { "github.event": "schedule", "github.ref": "refs/heads/main", "github.repository": "octo/lab", "github.runId": "4242" };
/** Run-to-run spread of the previous runs' level (µs): what the band is made from. */
const LEVELS = [100, 102, 98, 101, 99, 100.5, 101.5, 99.5];

type RunOptions = { day: number; level?: number | ((c: Cell) => number); facts?: Record<string, string>; experiment?: ReturnType<typeof twoVariants> };
function made(runId: string, o: RunOptions) {
  const level = o.level ?? 100;
  return fakeRun(runId, (c) => around(typeof level === "number" ? level : level(c), 50, o.day), { startedAt: at(o.day), facts: o.facts ?? SCHEDULED, ...(o.experiment ? { experiment: o.experiment } : {}) });
}
const record = (runId: string, o: RunOptions) => {
  const run = made(runId, o);
  return historyRecords(run.results, run.samplesOf);
};

/** A history of `n` comparable scheduled runs, days 1..n, at LEVELS; plus `extra` records. */
async function history(n: number, extra: ReturnType<typeof record>[] = []): Promise<string> {
  const file = join(tempDir("latlab-gate-"), "history.duckdb");
  await appendRuns(file, [...Array.from({ length: n }, (_, i) => record(`s${i + 1}`, { day: i + 1, level: LEVELS[i]! })), ...extra]);
  return file;
}

/** The new run's results folder (results.json and samples), as a run writes it. */
function folder(runId: string, o: RunOptions): string {
  const run = made(runId, o);
  const dir = join(tempDir("latlab-gate-run-"), runId);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "results.json"), JSON.stringify(run.results));
  for (const m of run.results.measurements) {
    mkdirSync(dirname(join(dir, m.samplesFile!)), { recursive: true });
    writeFileSync(join(dir, m.samplesFile!), `${run.samplesOf(m.cell).join("\n")}\n`);
  }
  return dir;
}

/** The interface the lead fixed for --json (the alert job reads it). */
const GateOutputSchema = z
  .object({
    experiment: z.string(),
    runId: z.string(),
    runUrl: z.string().optional(),
    regressions: z.number().int().nonnegative(),
    learning: z.boolean(),
    report: GateReportSchema,
    comparable: z.object({ used: z.array(z.string()), excluded: z.array(z.object({ runId: z.string(), why: z.array(z.string()) }).strict()) }).strict(),
  })
  .strict();
const json = async (args: string[]) => {
  const r = await runMain(["gate", ...args, "--json"]);
  return { ...r, out: GateOutputSchema.parse(JSON.parse(r.stdout)) };
};
/** Text as one line per paragraph: the prose wraps to 80 columns, continuation lines indented by two. */
const unwrapped = (text: string) => text.replace(/\n {2}(?=\S)/g, " ");
const verdicts = (out: z.infer<typeof GateOutputSchema>) => Object.fromEntries(out.report.checks.map((c) => [`${c.variant} ${c.metric} ${c.statistic}`, c.verdict]));

/** The accelnet=true variant at `level`, the baseline as usual: only that variant's figures can move. */
const onlyAccelnet = (level: number) => (c: Cell) => (c.variant === "accelnet=true" ? level : 100);

describe("latlab gate: verdicts and exit codes", () => {
  it("a regression: exactly the variant that moved is flagged, exit 3, in words with its unit and method", async () => {
    const file = await history(6);
    const r = await runMain(["gate", folder("new", { day: 10, level: onlyAccelnet(150) }), "--history", file]);
    expect(r.code, r.stderr).toBe(GATE_REGRESSION_EXIT_CODE);
    expect(r.stdout).toMatch(/^hist: run new: regression \(2 of 4 figures\)$/m);
    expect(r.stdout).toContain("unit: previous runs, one value each");
    expect(unwrapped(r.stdout)).toContain("6 comparable previous run(s) used, 0 excluded");
    expect(r.stdout).toMatch(/method: 99 % prediction band for one new run/);
    expect(unwrapped(r.stdout)).toMatch(/accelnet=true m0 ping client->server rtt mean: regression: .* from 6 previous runs \(one unit each, log scale\)/);
    const { out } = await json([folder("new", { day: 10, level: onlyAccelnet(150) }), "--history", file]);
    expect(verdicts(out)).toEqual({ "accelnet=false rtt mean": "within band", "accelnet=false rtt p50": "within band", "accelnet=true rtt mean": "regression", "accelnet=true rtt p50": "regression" });
    expect(out.regressions).toBe(2);
  });

  it("an improvement is said, and passes (exit 0)", async () => {
    const file = await history(6);
    const { code, out } = await json([folder("new", { day: 10, level: onlyAccelnet(60) }), "--history", file]);
    expect(code).toBe(0);
    expect(verdicts(out)["accelnet=true rtt mean"]).toBe("improvement");
    expect(out).toMatchObject({ regressions: 0, learning: false });
  });

  it("a run like the previous ones passes: within band (exit 0)", async () => {
    const file = await history(6);
    const r = await runMain(["gate", folder("new", { day: 10, level: 100.2 }), "--history", file]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^hist: run new: no regression \(4 figures\)$/m);
  });

  it("below k comparable runs: learning (n of k), exit 0 but never a silent pass, even for a run far off", async () => {
    const file = await history(3);
    const r = await runMain(["gate", folder("new", { day: 10, level: 500 }), "--history", file]);
    expect(r.code, r.stderr).toBe(0);
    expect(unwrapped(r.stdout)).toMatch(/^hist: run new: learning \(3 of 5\): 5 comparable previous runs make the band, 3 so far; not judged, not a pass$/m);
    expect(r.stdout).not.toMatch(/regression \(|no regression/);
    const { out } = await json([folder("new", { day: 10, level: 500 }), "--history", file]);
    expect(out).toMatchObject({ learning: true, regressions: 0 });
    expect(new Set(Object.values(verdicts(out)))).toEqual(new Set(["learning"]));
    // --min-runs 3: three runs are enough, and the far-off run is flagged.
    expect((await runMain(["gate", folder("new", { day: 10, level: 500 }), "--history", file, "--min-runs", "3"])).code).toBe(GATE_REGRESSION_EXIT_CODE);
  });

  it("--threshold: outside the band but by no more than the threshold is not a regression", async () => {
    const file = await history(6);
    const { code, out } = await json([folder("new", { day: 10, level: onlyAccelnet(150) }), "--history", file, "--threshold", "60"]);
    expect(code).toBe(0);
    expect(verdicts(out)["accelnet=true rtt mean"]).toBe("within threshold");
    expect(out.report.config.thresholdPct).toBe(60);
  });
});

describe("latlab gate: which previous runs count", () => {
  const otherPlan = defineExperiment({ name: "hist", description: "history test", axes: { accelnet: [false, true] }, hosts: { server: {}, client: {} }, measure: [{ tool: "ping", params: { count: 5 } }] });
  const noisy = () => [
    record("manual", { day: 7, level: 300, facts: { ...SCHEDULED, "github.event": "workflow_dispatch" } }),
    record("short", { day: 8, level: 300, experiment: otherPlan }),
    { ...record("old-latlab", { day: 9, level: 300 }), run: { ...record("old-latlab", { day: 9, level: 300 }).run, latlabVersion: "0.0.9" } },
    record("later", { day: 20, level: 300 }),
  ];

  it("other plans, events and latlab versions are excluded, each in one line with why; later runs are not considered", async () => {
    const file = await history(5, noisy());
    const r = await runMain(["gate", folder("new", { day: 10, level: 100.3 }), "--history", file]);
    // Had any of the excluded runs (all at 300 µs) counted, the band would be far wider and centred elsewhere.
    expect(r.code, r.stderr).toBe(0);
    const excluded = unwrapped(r.stdout).split("\n").filter((l) => l.startsWith("excluded "));
    expect(excluded).toEqual([
      "excluded manual: started by workflow_dispatch (this run by schedule)",
      expect.stringMatching(/^excluded short: another plan \([0-9a-f]{8}, this run [0-9a-f]{8}\)$/),
      "excluded old-latlab: latlab 0.0.9 (this run 0.1.0)",
    ]);
    expect(unwrapped(r.stdout)).toContain("5 comparable previous run(s) used, 3 excluded");
    const { out } = await json([folder("new", { day: 10, level: 100.3 }), "--history", file]);
    expect(out.comparable.used).toEqual(["s1", "s2", "s3", "s4", "s5"]);
    expect(out.comparable.excluded.map((e) => e.runId)).toEqual(["manual", "short", "old-latlab"]);
    expect(out.report.checks.every((c) => c.verdict === "within band" && c.n === 5)).toBe(true);
  });

  it("a run already in the history, named by id, is judged as when it finished: not its own baseline, later runs left out", async () => {
    const file = await history(6, [record("new", { day: 10, level: onlyAccelnet(150) }), record("after", { day: 11, level: onlyAccelnet(150) })]);
    const { code, out } = await json(["new", "--history", file]);
    expect(code).toBe(GATE_REGRESSION_EXIT_CODE);
    expect(out.comparable.used).toEqual(["s1", "s2", "s3", "s4", "s5", "s6"]);
    expect(out.runUrl).toBe("https://github.com/octo/lab/actions/runs/4242");
    // The same run given as its folder: the same verdicts.
    expect(verdicts((await json([folder("new", { day: 10, level: onlyAccelnet(150) }), "--history", file])).out)).toEqual(verdicts(out));
  });
});

describe("latlab gate: output", () => {
  it("--json: the fixed shape, the gate's report included", async () => {
    const file = await history(6);
    const { out } = await json([folder("new", { day: 10, level: onlyAccelnet(150) }), "--history", file]);
    expect(out).toMatchObject({ experiment: "hist", runId: "new", runUrl: "https://github.com/octo/lab/actions/runs/4242", regressions: 2, learning: false });
    expect(out.report.previousRuns).toEqual(out.comparable.used);
    expect(out.report.checks.every((c) => c.basis === "previous runs")).toBe(true);
  });

  it("--markdown: a section titled with the experiment and the verdict, the run linked, flagged figures in bold", async () => {
    const file = await history(6);
    const r = await runMain(["gate", folder("new", { day: 10, level: onlyAccelnet(150) }), "--history", file, "--markdown"]);
    expect(r.code).toBe(GATE_REGRESSION_EXIT_CODE);
    const lines = r.stdout.split("\n");
    expect(lines[0]).toBe("### hist: regression (2 of 4 figures)");
    expect(r.stdout).toContain("run [new](https://github.com/octo/lab/actions/runs/4242)");
    expect(r.stdout).toContain("- unit: previous runs, one value each");
    expect(r.stdout).toMatch(/^\| accelnet=true \| m0 ping client->server \| rtt mean \(µs\) \| [\d.]+ \| [\d.]+–[\d.]+ \| \+\d+\.\d % \| \*\*regression\*\* \|$/m);
  });

  it("text fits 80 columns when the terminal cannot tell its width, with four variants and long names", async () => {
    const wide = defineExperiment({
      name: "hist",
      description: "history test",
      axes: { accelnet: [false, true], size: ["Standard_D2s_v5", "Standard_D16s_v5"] },
      hosts: { server: {}, client: {} },
      measure: [{ tool: "ping" }],
    });
    const file = join(tempDir("latlab-gate-"), "history.duckdb");
    await appendRuns(file, LEVELS.slice(0, 5).map((level, i) => record(`s${i + 1}`, { day: i + 1, level, experiment: wide })));
    const r = await runMain(["gate", folder("a-rather-long-run-identifier-20261110-030000", { day: 10, level: 100.4, experiment: wide }), "--history", file]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^D = accelnet=true,size=Standard_D16s_v5$/m);
    expect(r.stdout).toMatch(/^│ D +│ m0 ping +│/m);
    const widest = Math.max(...r.stdout.split("\n").map((l) => [...l].length));
    expect(widest).toBeLessThanOrEqual(80);
  });
});

describe("latlab gate: errors (exit 1)", () => {
  it("a history that does not exist, an unknown run, --min-runs below 3", async () => {
    const missing = await runMain(["gate", folder("new", { day: 10 }), "--history", join(tempDir("latlab-gate-"), "none.duckdb")]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/none\.duckdb does not exist: there are no previous runs to judge against/);
    const file = await history(2);
    const unknown = await runMain(["gate", "no-such-run", "--history", file]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/"no-such-run": no results folder .* and no run with that id in the history/);
    const k = await runMain(["gate", "s2", "--history", file, "--min-runs", "2"]);
    expect(k.code).toBe(1);
    expect(k.stderr).toMatch(/--min-runs.*at least 3/);
  });
});
