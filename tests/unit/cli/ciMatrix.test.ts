import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { CI_SETUP_MARGIN_MINUTES, GITHUB_HOSTED_JOB_LIMIT_MINUTES, ciMatrix, loadCiExperiments, matrixEntry } from "../../../src/cli/ciMatrix.ts";
import { defineExperiment } from "../../../src/index.ts";
import { buildPlan } from "../../../src/plan/buildPlan.ts";
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
// Ten hours of one long-lived probe: past a GitHub-hosted runner's 6 h.
const long = defineExperiment({ ...base, name: "long", measure: [{ tool: "tcp-echo", params: { duration: 10 * 3600 } }] });

describe("latlab ci-matrix", () => {
  it("a job's timeout is the worst case on Azure in whole minutes plus the setup margin", () => {
    const entry = matrixEntry("short", short);
    const worst = worstCaseRun(buildPlan(short));
    expect(entry).toEqual({ experiment: "short", timeoutMinutes: Math.ceil(worst.seconds / 60) + CI_SETUP_MARGIN_MINUTES });
    // Bring-up and teardown allowances are in it: never less than those plus the margin.
    expect(entry.timeoutMinutes).toBeGreaterThan((BRING_UP_ALLOWANCE_SECONDS + TEARDOWN_ALLOWANCE_SECONDS) / 60 + CI_SETUP_MARGIN_MINUTES);
    // --duration changes the cells' timeouts and so the job's.
    expect(matrixEntry("short", short, { duration: { factor: 30 } }).timeoutMinutes).toBeGreaterThan(entry.timeoutMinutes);
    expect(matrixEntry("short", short, { duration: { seconds: 1 } }).timeoutMinutes).toBeLessThan(entry.timeoutMinutes);
  });

  it("leaves out a listed experiment too long for a GitHub-hosted job, keeps a named one, and warns about both", () => {
    const listed = ciMatrix([
      { name: "short", experiment: short, named: false },
      { name: "long", experiment: long, named: false },
    ]);
    expect(listed.matrix.include.map((e) => e.experiment)).toEqual(["short"]);
    expect(listed.warnings).toHaveLength(1);
    expect(listed.warnings[0]).toMatch(new RegExp(`^long left out: its job needs up to \\d+ min .*more than the ${GITHUB_HOSTED_JOB_LIMIT_MINUTES} min a job may run on a GitHub-hosted runner`));

    const named = ciMatrix([{ name: "long", experiment: long, named: true }]);
    expect(named.matrix.include.map((e) => e.experiment)).toEqual(["long"]);
    expect(named.matrix.include[0]!.timeoutMinutes).toBeGreaterThan(GITHUB_HOSTED_JOB_LIMIT_MINUTES);
    expect(named.warnings[0]).toMatch(/^long: .*stopped before it ends/);

    // A shorter duration brings it within the limit; so does a larger limit (self-hosted runners).
    expect(ciMatrix([{ name: "long", experiment: long, named: false }], { duration: { factor: 0.1 } }).matrix.include).toHaveLength(1);
    expect(ciMatrix([{ name: "long", experiment: long, named: false }], { maxMinutes: 2000 })).toEqual({ matrix: { include: [matrixEntry("long", long)] }, warnings: [] });
  });

  it("refuses another target, a name that cannot name an artifact, and says which experiment a plan problem is in", () => {
    expect(() => ciMatrix([{ name: "short", experiment: short, named: true }], { target: "local" })).toThrow(/--target local: the scheduled workflow runs on azure only/);
    expect(() => ciMatrix([{ name: "a b", experiment: short, named: true }])).toThrow(/experiment "a b": a name for the workflow may hold only/);
    const huge = defineExperiment({ ...base, name: "huge", measure: [{ tool: "ping" }], replicas: 1e6 });
    expect(() => ciMatrix([{ name: "huge", experiment: huge, named: true }])).toThrow(/^ci-matrix: experiment "huge": /);
    // The same experiment twice is one job.
    expect(ciMatrix([{ name: "short", experiment: short, named: true }, { name: "short", experiment: short, named: true }]).matrix.include).toHaveLength(1);
  });

  it("with no names: what `latlab list` runs — ./experiments, then latlab's own not shadowed", async () => {
    const project = temp("latlab-ci-matrix-");
    mkdirSync(join(project, "experiments"));
    const example = readFileSync(join(ROOT, "experiments/ppg-vs-zone.ts"), "utf8");
    writeFileSync(join(project, "experiments/mine.ts"), example.replace(/name: "ppg-vs-zone"/, 'name: "mine"'));
    writeFileSync(join(project, "experiments/ppg-vs-zone.ts"), example);
    const found = await loadCiExperiments([], project);
    expect(found.map((e) => [e.name, e.named])).toEqual([
      ["mine", false],
      ["ppg-vs-zone", false],
      ["accelnet-on-off", false],
      ["ppg-availability-set", false],
      ["ppg-peered-vnets", false],
      ["public-vs-peered", false],
      ["zone-region-baseline", false],
    ]);
    const named = await loadCiExperiments(["ppg-vs-zone"], project);
    expect(named.map((e) => [e.name, e.named])).toEqual([["ppg-vs-zone", true]]);
    await expect(loadCiExperiments(["nope"], project)).rejects.toThrow(/no experiment "nope"/);
    await expect(loadCiExperiments(["./experiments/mine.ts"], project)).rejects.toThrow(/"\.\/experiments\/mine\.ts" is a path: give experiment names/);
  });

  it("prints one line of JSON; warnings go to stderr (annotations in GitHub Actions); an unknown experiment is named", async () => {
    const r = await runMain(["ci-matrix", "ppg-vs-zone", "zone-region-baseline", "--duration", "1x"]);
    expect(r.code).toBe(0);
    expect(r.stdout.endsWith("\n")).toBe(true);
    expect(r.stdout.trimEnd().split("\n")).toHaveLength(1);
    const matrix = JSON.parse(r.stdout) as { include: { experiment: string; timeoutMinutes: number }[] };
    expect(matrix.include.map((e) => e.experiment)).toEqual(["ppg-vs-zone", "zone-region-baseline"]);
    for (const e of matrix.include) expect(Number.isInteger(e.timeoutMinutes)).toBe(true);
    // zone-region-baseline measures 11 h on Azure: named, it is kept, with a warning.
    expect(r.stderr).toMatch(/^warning: zone-region-baseline: its job needs up to \d+ min/m);

    const all = await runMain(["ci-matrix"]);
    expect(all.code).toBe(0);
    expect((JSON.parse(all.stdout) as typeof matrix).include.map((e) => e.experiment)).not.toContain("zone-region-baseline");
    expect(all.stderr).toMatch(/zone-region-baseline left out/);

    const unknown = await runMain(["ci-matrix", "ppg-vs-zone", "nope"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe("");
    expect(unknown.stderr).toMatch(/^latlab: no experiment "nope"/);
  });
});
