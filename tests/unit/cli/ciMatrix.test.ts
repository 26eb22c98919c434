import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  CI_SETUP_MARGIN_MINUTES,
  CI_STEP_MARGIN_MINUTES,
  CiMatrixEntrySchema,
  GITHUB_HOSTED_JOB_LIMIT_MINUTES,
  GITHUB_SELF_HOSTED_JOB_LIMIT_MINUTES,
  ciMatrix,
  jobMinutes,
  loadCiExperiments,
  planEntry,
} from "../../../src/cli/run/ciMatrix.ts";
import { CI_MATRIX_OVER_BUDGET_EXIT_CODE, CI_MATRIX_REFUSED_EXIT_CODE, ciMatrixOutput, parseUsd } from "../../../src/cli/commands/ciMatrixCommand.ts";
import { defineExperiment } from "../../../src/index.ts";
import { buildPlan } from "../../../src/plan/buildPlan.ts";
import { estimateCost, loadPriceSnapshot } from "../../../src/targets/azure/catalog/prices.ts";
import { BRING_UP_ALLOWANCE_SECONDS, TEARDOWN_ALLOWANCE_SECONDS, worstCaseRun } from "../../../src/targets/azure/catalog/validateAzure.ts";
import { tempDirs } from "../../tempDirs.ts";
import { runMain } from "./runMain.ts";

const ROOT = resolve(import.meta.dirname, "../../..");
const temp = tempDirs();

const base = {
  description: "x",
  defaults: { region: "uksouth", zone: "1", size: "Standard_D2s_v5" },
  hosts: { client: {}, server: {} },
} as const;
const short = defineExperiment({ ...base, name: "short", measure: [{ tool: "sockperf", params: { duration: 300 } }] });
// Ten hours of one long-lived probe: past a GitHub-hosted runner's 6 h, within a self-hosted one's 5 days.
const long = defineExperiment({ ...base, name: "long", measure: [{ tool: "tcp-echo", params: { duration: 10 * 3600 } }] });
// Six days: past even a self-hosted runner's 5 days.
const tooLong = defineExperiment({ ...base, name: "too-long", measure: [{ tool: "tcp-echo", params: { duration: 6 * 24 * 3600 } }] });

const snapshot = loadPriceSnapshot();
/** The same prices without any VM's: every plan's cost is UNKNOWN. */
const noVmPrices = { ...snapshot, vm: {} };

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("latlab ci-matrix: the three limits and the cost of one job", () => {
  it("time limit = bring-up + measurement; step = time limit + teardown allowance + margin; job = step + setup margin", () => {
    const plan = buildPlan(short);
    const worst = worstCaseRun(plan);
    const m = jobMinutes(worst);
    expect(m).toEqual({
      bringUp: Math.ceil(worst.bringUpSeconds / 60),
      measurement: Math.ceil(worst.cellsSeconds / 60),
      teardown: Math.ceil(worst.teardownSeconds / 60),
      timeLimit: Math.ceil(worst.bringUpSeconds / 60) + Math.ceil(worst.cellsSeconds / 60),
      stepTimeout: Math.ceil(worst.bringUpSeconds / 60) + Math.ceil(worst.cellsSeconds / 60) + Math.ceil(worst.teardownSeconds / 60) + CI_STEP_MARGIN_MINUTES,
      timeout: Math.ceil(worst.bringUpSeconds / 60) + Math.ceil(worst.cellsSeconds / 60) + Math.ceil(worst.teardownSeconds / 60) + CI_STEP_MARGIN_MINUTES + CI_SETUP_MARGIN_MINUTES,
    });
    // They nest, and between the time limit and the step's end there is the whole teardown allowance.
    expect(m.timeLimit).toBeLessThan(m.stepTimeout);
    expect(m.stepTimeout).toBeLessThan(m.timeout);
    expect((m.stepTimeout - m.timeLimit) * 60).toBeGreaterThan(TEARDOWN_ALLOWANCE_SECONDS);
    expect(m.timeLimit * 60).toBeGreaterThanOrEqual(BRING_UP_ALLOWANCE_SECONDS + worst.cellsSeconds);
    // Never shorter than the run's whole worst case.
    expect(m.stepTimeout * 60).toBeGreaterThan(worst.seconds);
  });

  it("a matrix entry carries them and the worst-case cost `latlab run --max-cost` checks, rounded up to the cent", () => {
    const plan = buildPlan(short);
    const worst = worstCaseRun(plan);
    const cost = estimateCost(plan, snapshot, worst.seconds / 3600);
    if (!cost.known) throw new Error("the bundled snapshot prices Standard_D2s_v5 in uksouth");
    const { include } = ciMatrix([{ name: "short", experiment: short }]).matrix;
    const m = jobMinutes(worst);
    expect(include).toEqual([{ experiment: "short", timeoutMinutes: m.timeout, stepTimeoutMinutes: m.stepTimeout, timeLimitMinutes: m.timeLimit, maxCostUsd: Math.ceil(cost.totalUsd * 100) / 100 }]);
    expect(include[0]!.maxCostUsd).toBeGreaterThanOrEqual(cost.totalUsd);
    expect(include[0]!.maxCostUsd - cost.totalUsd).toBeLessThan(0.01);
    // --duration changes the cells' timeouts, so the time limit, the step's and the job's, and the cost.
    const longer = planEntry("short", short, { duration: { factor: 30 } });
    expect(longer.minutes.timeLimit).toBeGreaterThan(m.timeLimit);
    expect(longer.minutes.teardown).toBe(m.teardown);
    expect(longer.cost.totalUsd).toBeGreaterThan(cost.totalUsd);
  });

  it("the schema refuses limits that do not nest", () => {
    const entry = { experiment: "x", timeoutMinutes: 100, stepTimeoutMinutes: 80, timeLimitMinutes: 40, maxCostUsd: 1 };
    expect(CiMatrixEntrySchema.parse(entry)).toEqual(entry);
    expect(() => CiMatrixEntrySchema.parse({ ...entry, stepTimeoutMinutes: 100 })).toThrow(/must nest/);
    expect(() => CiMatrixEntrySchema.parse({ ...entry, timeLimitMinutes: 80 })).toThrow(/must nest/);
  });
});

describe("latlab ci-matrix: refusals", () => {
  it("refuses a job longer than a GitHub-hosted runner's 6 h; --self-hosted allows up to 5 days", () => {
    const hosted = ciMatrix([
      { name: "short", experiment: short },
      { name: "long", experiment: long, named: true },
    ]);
    expect(hosted.matrix.include.map((e) => e.experiment)).toEqual(["short"]);
    expect(hosted.refused).toHaveLength(1);
    expect(hosted.refused[0]!.experiment).toBe("long");
    expect(hosted.refused[0]!.reason).toMatch(
      new RegExp(`^long refused: its job needs up to \\d+ min \\(run step \\d+ min: bring-up 45 \\+ measurement \\d+ \\+ teardown 30 \\+ ${CI_STEP_MARGIN_MINUTES} of margin; then ${CI_SETUP_MARGIN_MINUTES} min of setup, upload and cleanup\\), more than the ${GITHUB_HOSTED_JOB_LIMIT_MINUTES} min \\(6 h\\) a job may run on a GitHub-hosted runner; run it on a self-hosted runner \\(the workflow.s \`runner\` input, ci-matrix --self-hosted\\)`),
    );

    const selfHosted = ciMatrix([{ name: "long", experiment: long, named: true }], { selfHosted: true });
    expect(selfHosted.refused).toEqual([]);
    expect(selfHosted.matrix.include[0]!.timeoutMinutes).toBeGreaterThan(GITHUB_HOSTED_JOB_LIMIT_MINUTES);
    const beyond = ciMatrix([{ name: "too-long", experiment: tooLong, named: true }], { selfHosted: true });
    expect(beyond.matrix.include).toEqual([]);
    expect(beyond.refused[0]!.reason).toMatch(new RegExp(`more than the ${GITHUB_SELF_HOSTED_JOB_LIMIT_MINUTES} min \\(5 days\\) a job may run on a self-hosted runner`));

    // Listed, not named (the default list of a scheduled run): left out with a warning, not refused —
    // nobody asked for it, and the weekly run is not red for it.
    const listed = ciMatrix([{ name: "short", experiment: short }, { name: "long", experiment: long }]);
    expect(listed.matrix.include.map((e) => e.experiment)).toEqual(["short"]);
    expect(listed.refused).toEqual([]);
    expect(listed.warnings).toEqual([expect.stringMatching(/^long left out \(not named\): its job needs up to \d+ min .*GitHub-hosted runner.*; name it to ask for it$/)]);

    // A shorter duration brings it within the hosted limit.
    expect(ciMatrix([{ name: "long", experiment: long, named: true }], { duration: { factor: 0.1 } }).refused).toEqual([]);
  });

  it("refuses an experiment above --max-cost, and one whose cost is UNKNOWN; both reasons when both apply", () => {
    const cost = ciMatrix([{ name: "short", experiment: short }]).matrix.include[0]!.maxCostUsd;
    expect(ciMatrix([{ name: "short", experiment: short }], { maxCostUsd: cost }).refused).toEqual([]);
    const over = ciMatrix([{ name: "short", experiment: short }], { maxCostUsd: cost - 0.01 });
    expect(over.matrix.include).toEqual([]);
    expect(over.refused[0]!.reason).toBe(
      `short refused: its worst-case cost $${cost.toFixed(2)} (${(worstCaseRun(buildPlan(short)).seconds / 3600).toFixed(1)} h at list prices of ${snapshot.fetchedAt}) is above --max-cost $${(cost - 0.01).toFixed(2)}`,
    );
    const unknown = ciMatrix([{ name: "short", experiment: short }], { snapshot: noVmPrices });
    expect(unknown.refused[0]!.reason).toMatch(/^short refused: its cost is UNKNOWN: no price for Standard_D2s_v5 in uksouth/);
    const both = ciMatrix([{ name: "long", experiment: long, named: true }], { snapshot: noVmPrices });
    expect(both.refused[0]!.reason).toMatch(/^long refused: its job needs .*GitHub-hosted runner.*; and its cost is UNKNOWN/);
    expect(() => ciMatrix([{ name: "short", experiment: short }], { maxCostUsd: -1 })).toThrow(/--max-cost must be a non-negative number/);
  });

  it("--max-total-cost: when the costs add up to more, nothing runs, and each experiment's cost is listed", () => {
    const experiments = [
      { name: "short", experiment: short },
      { name: "long", experiment: long, named: true },
    ];
    const all = ciMatrix(experiments, { selfHosted: true });
    const [a, b] = all.matrix.include;
    const total = Math.round((a!.maxCostUsd + b!.maxCostUsd) * 100) / 100;
    expect(ciMatrix(experiments, { selfHosted: true, maxTotalCostUsd: total })).toEqual(all);
    const over = ciMatrix(experiments, { selfHosted: true, maxTotalCostUsd: total - 0.01 });
    expect(over.matrix.include).toEqual([]);
    expect(over.overBudget).toBe(
      `nothing runs: the experiments' worst-case costs add up to $${total.toFixed(2)}, above --max-total-cost $${(total - 0.01).toFixed(2)} (short $${a!.maxCostUsd.toFixed(2)}, long $${b!.maxCostUsd.toFixed(2)}); name fewer experiments, give a shorter --duration or a larger --max-total-cost`,
    );
    // A refused experiment does not run, so it does not count: on a hosted runner only short's cost is summed.
    expect(ciMatrix(experiments, { maxTotalCostUsd: a!.maxCostUsd }).overBudget).toBeUndefined();
  });

  it("refuses another target, a name that cannot name an artifact, and says which experiment a plan problem is in", () => {
    expect(() => ciMatrix([{ name: "short", experiment: short }], { target: "local" })).toThrow(/--target local: the scheduled workflow runs on azure only/);
    expect(() => ciMatrix([{ name: "a b", experiment: short }])).toThrow(/experiment "a b": a name for the workflow may hold only/);
    const huge = defineExperiment({ ...base, name: "huge", measure: [{ tool: "ping" }], replicas: 1e6 });
    expect(() => ciMatrix([{ name: "huge", experiment: huge }])).toThrow(/^ci-matrix: experiment "huge": /);
    // The same experiment twice is one job.
    expect(ciMatrix([{ name: "short", experiment: short }, { name: "short", experiment: short }]).matrix.include).toHaveLength(1);
  });
});

describe("latlab ci-matrix: what it prints and its exit code", () => {
  const refusedResult = ciMatrix([
    { name: "short", experiment: short },
    { name: "long", experiment: long, named: true },
  ]);

  it("refusals: the matrix of the others on stdout, each refusal on stderr, exit 3", () => {
    const plain = ciMatrixOutput(refusedResult, false);
    expect(plain.exitCode).toBe(CI_MATRIX_REFUSED_EXIT_CODE);
    expect(JSON.parse(plain.stdout)).toEqual(refusedResult.matrix);
    expect(plain.stderr).toBe(`error: ${refusedResult.refused[0]!.reason}\n`);
    const github = ciMatrixOutput(refusedResult, true);
    expect(github.stdout).toBe(plain.stdout);
    expect(github.stderr).toBe(`::error title=latlab ci-matrix::${refusedResult.refused[0]!.reason.replaceAll("%", "%25")}\n`);
    expect(ciMatrixOutput(ciMatrix([{ name: "short", experiment: short }]), true)).toMatchObject({ exitCode: 0, stderr: "" });
  });

  it("over the total budget: nothing on stdout, the reason as an annotation, exit 4; warnings are annotations too", () => {
    const over = ciMatrix([{ name: "short", experiment: short }], { maxTotalCostUsd: 0 });
    const out = ciMatrixOutput(over, true);
    expect(out).toEqual({ stdout: "", stderr: `::error title=latlab ci-matrix::${over.overBudget}\n`, exitCode: CI_MATRIX_OVER_BUDGET_EXIT_CODE });
    const empty = ciMatrix([]);
    expect(ciMatrixOutput(empty, true)).toEqual({ stdout: '{"include":[]}\n', stderr: "::warning title=latlab ci-matrix::no experiment to run: the matrix is empty\n", exitCode: 0 });
    expect(ciMatrixOutput(empty, false).stderr).toBe("warning: no experiment to run: the matrix is empty\n");
  });

  it("--max-cost and --max-total-cost take plain amounts in USD", () => {
    expect(parseUsd("20")).toBe(20);
    expect(parseUsd("7.50")).toBe(7.5);
    for (const bad of ["-1", "1e3", "", "$5", "abc"]) expect(() => parseUsd(bad)).toThrow(/expected an amount in USD/);
  });
});

describe("latlab ci-matrix: which experiments, with no names", () => {
  it("in a project: its own experiments only; latlab's built-ins when named", async () => {
    const project = temp("latlab-ci-matrix-");
    mkdirSync(join(project, "experiments"));
    const example = readFileSync(join(ROOT, "experiments/ppg-vs-zone.ts"), "utf8");
    writeFileSync(join(project, "experiments/mine.ts"), example.replace(/name: "ppg-vs-zone"/, 'name: "mine"'));
    writeFileSync(join(project, "experiments/ppg-vs-zone.ts"), example);
    expect((await loadCiExperiments([], project)).map((e) => e.name)).toEqual(["mine", "ppg-vs-zone"]);
    expect((await loadCiExperiments(["accelnet-on-off", "mine"], project)).map((e) => e.name)).toEqual(["accelnet-on-off", "mine"]);
    await expect(loadCiExperiments(["nope"], project)).rejects.toThrow(/no experiment "nope"/);
    await expect(loadCiExperiments(["./experiments/mine.ts"], project)).rejects.toThrow(/"\.\/experiments\/mine\.ts" is a path: give experiment names/);

    // A project whose ./experiments is empty measures nothing.
    const empty = temp("latlab-ci-matrix-");
    mkdirSync(join(empty, "experiments"));
    expect(await loadCiExperiments([], empty)).toEqual([]);
  });

  it("in latlab's own checkout: every built-in; anywhere else: refused, names needed", async () => {
    const builtIns = (await loadCiExperiments([], ROOT)).map((e) => e.name);
    expect(builtIns).toEqual(["accelnet-on-off", "ppg-availability-set", "ppg-peered-vnets", "ppg-vs-zone", "public-vs-peered", "zone-region-baseline"]);
    const elsewhere = temp("latlab-ci-matrix-");
    await expect(loadCiExperiments([], elsewhere)).rejects.toThrow(/^ci-matrix: no \.\/experiments in .*name experiments to run latlab's built-ins from here/);
    expect((await loadCiExperiments(["ppg-vs-zone"], elsewhere)).map((e) => e.name)).toEqual(["ppg-vs-zone"]);
  });
});

describe("latlab ci-matrix, the command", () => {
  it("outside GitHub Actions: the matrix on stdout, `error:` lines on stderr, exit 3 for a refusal", async () => {
    vi.stubEnv("GITHUB_ACTIONS", "");
    const r = await runMain(["ci-matrix", "ppg-vs-zone", "zone-region-baseline", "--duration", "1x"]);
    expect(r.code).toBe(CI_MATRIX_REFUSED_EXIT_CODE);
    expect(r.stdout.endsWith("\n")).toBe(true);
    expect(r.stdout.trimEnd().split("\n")).toHaveLength(1);
    const matrix = JSON.parse(r.stdout) as { include: { experiment: string }[] };
    expect(matrix.include.map((e) => e.experiment)).toEqual(["ppg-vs-zone"]);
    // zone-region-baseline measures 11 h on Azure: refused on a hosted runner, named or not.
    expect(r.stderr).toMatch(/^error: zone-region-baseline refused: its job needs up to \d+ min .*GitHub-hosted runner/);

    const selfHosted = await runMain(["ci-matrix", "ppg-vs-zone", "zone-region-baseline", "--self-hosted"]);
    expect(selfHosted.code).toBe(0);
    expect((JSON.parse(selfHosted.stdout) as typeof matrix).include.map((e) => e.experiment)).toEqual(["ppg-vs-zone", "zone-region-baseline"]);

    const unknown = await runMain(["ci-matrix", "ppg-vs-zone", "nope"]);
    expect(unknown).toMatchObject({ code: 1, stdout: "" });
    expect(unknown.stderr).toMatch(/^latlab: no experiment "nope"/);
  });

  it("in GitHub Actions: refusals and errors are ::error:: annotations on stderr; over --max-total-cost nothing runs", async () => {
    vi.stubEnv("GITHUB_ACTIONS", "true");
    const r = await runMain(["ci-matrix", "ppg-vs-zone", "zone-region-baseline"]);
    expect(r.code).toBe(CI_MATRIX_REFUSED_EXIT_CODE);
    expect(r.stderr).toMatch(/^::error title=latlab ci-matrix::zone-region-baseline refused: [^\n]+\n$/);
    expect(JSON.parse(r.stdout)).toMatchObject({ include: [{ experiment: "ppg-vs-zone" }] });

    const over = await runMain(["ci-matrix", "ppg-vs-zone", "accelnet-on-off", "--max-total-cost", "1"]);
    expect(over.code).toBe(CI_MATRIX_OVER_BUDGET_EXIT_CODE);
    expect(over.stdout).toBe("");
    expect(over.stderr).toMatch(/^::error title=latlab ci-matrix::nothing runs: .*above --max-total-cost \$1\.00 \(ppg-vs-zone \$\d+\.\d\d, accelnet-on-off \$\d+\.\d\d\)/);

    const unknown = await runMain(["ci-matrix", "nope"]);
    expect(unknown).toMatchObject({ code: 1, stdout: "" });
    // latlab's usual error, as one annotation on the run's page.
    expect(unknown.stderr).toMatch(/^::error title=latlab ci-matrix::no experiment "nope"[^\n]*\n$/);
  });
});
