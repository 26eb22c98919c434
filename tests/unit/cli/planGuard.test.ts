import { existsSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { Experiment } from "../../../src/dsl/experiment.ts";
import { tempDirs } from "../../tempDirs.ts";
import { runMain } from "./runMain.ts";

// buildPlan, counted: a refused plan must be refused before it is built. A call for more than a
// handful of replicas throws at once instead of building gigabytes, so a broken guard fails the
// test quickly rather than exhausting the machine.
const built: Experiment[] = [];
vi.mock("../../../src/plan/buildPlan.ts", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../../src/plan/buildPlan.ts")>();
  return {
    ...actual,
    buildPlan: (experiment: Experiment, options?: Parameters<typeof actual.buildPlan>[1]) => {
      built.push(experiment);
      if (experiment.replicas > 100) throw new Error(`test: buildPlan called with ${experiment.replicas} replicas`);
      return actual.buildPlan(experiment, options);
    },
  };
});

const { main } = await import("../../../src/cli/main.ts");
// Every `run` here names the Azure target and no --ssh-from: should the guard ever let a plan
// through, Azure's preflight stops the run at its first check, before anything is created.
const temp = tempDirs();
const MANY = join(import.meta.dirname, "fixtures/many-repetitions.ts");

const cli = runMain;

beforeEach(() => {
  built.length = 0;
});

describe("an absurd plan (replicas: 1e6) is refused before it is built or anything is written", () => {
  it("plan: exit 1 with the numbers, buildPlan never called", async () => {
    const r = await cli(["plan", "ppg-vs-zone", "--replicas", "1000000"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('latlab: experiment "ppg-vs-zone": the plan is too large to build, refused (nothing was built or written):');
    expect(r.stderr).toContain("cells: 6,000,000 = 6 per replica and repetition (2 variants) × 1,000,000 replicas × 1 repetition (limit 20,000)");
    expect(r.stdout).toBe("");
    expect(built).toEqual([]);
  });

  it("run: exit 1, buildPlan never called, no results folder", async () => {
    const out = join(temp("latlab-guard-"), "results", "run");
    const r = await cli(["run", "ppg-vs-zone", "--replicas", "1000000", "--target", "azure", "--out", out, "--yes"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("hosts: 4,000,000 in 2,000,000 deployments (limit 500)");
    expect(r.stderr).not.toMatch(/ssh-from/);
    expect(built).toEqual([]);
    expect(existsSync(join(out, ".."))).toBe(false);
  });
});

describe("a large plan (1,200 cells) is shown by plan and needs --yes to run", () => {
  it("plan: prints the plan and the warning, exit 0", async () => {
    const r = await cli(["plan", MANY]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('warning: experiment "many-repetitions" is above latlab\'s limits for a run without --yes:\n  cells: 1,200 = 6 per replica and repetition (2 variants) × 1 replica × 200 repetitions (limit 1,000)\n`latlab run` will need --yes for it.');
    expect(r.stdout).toMatch(/^many-repetitions: a plan that needs --yes/);
    expect(built).toHaveLength(1);
  });

  it("run without --yes: exit 1 with the numbers, nothing built, no results folder", async () => {
    const out = join(temp("latlab-guard-"), "results", "run");
    const r = await cli(["run", MANY, "--target", "azure", "--out", out]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("cells: 1,200 = 6 per replica and repetition (2 variants) × 1 replica × 200 repetitions (limit 1,000)");
    expect(r.stderr).toContain("Nothing was started. Add --yes to run it anyway.");
    expect(r.stderr).not.toMatch(/ssh-from/);
    expect(built).toEqual([]);
    expect(existsSync(join(out, ".."))).toBe(false);
  });

  it("run --yes goes past the guard (here to Azure's preflight, which stops at --ssh-from)", async () => {
    const out = join(temp("latlab-guard-"), "results", "run");
    const r = await cli(["run", MANY, "--yes", "--target", "azure", "--out", out]);
    expect(r.stderr).toContain("cells: 1,200");
    expect(r.stderr).toContain("--yes: running it.");
    expect(r.stderr).toMatch(/--ssh-from CIDR is required/);
    expect(r.code).toBe(1);
    expect(built).toHaveLength(1);
    expect(existsSync(out)).toBe(false);
  });
});
