import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { CONFOUNDED_REGRESSION_EXIT_CODE, REGRESSION_EXIT_CODE } from "../../../src/cli/historyCommands.ts";
import { around, fakeRun } from "../history/fakeRun.ts";
import { tempDirs } from "../../tempDirs.ts";

const tempDir = tempDirs();
const BIN = resolve(import.meta.dirname, "../../../bin/latlab.js");

/** A results folder as a run writes it: results.json and samples/ (or no samples). */
function folder(runId: string, centre: number, opts: { replicas?: number; repetitions?: number; samples?: boolean }): string {
  const dir = join(tempDir("latlab-cmp-"), runId);
  const run = fakeRun(runId, (c) => around(centre + c.replica, 40, c.replica + c.repetition), opts);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "results.json"), JSON.stringify(run.results));
  if (opts.samples !== false) {
    for (const m of run.results.measurements) {
      mkdirSync(dirname(join(dir, m.samplesFile!)), { recursive: true });
      writeFileSync(join(dir, m.samplesFile!), `${run.samplesOf(m.cell).join("\n")}\n`);
    }
  }
  return dir;
}

const compare = (a: string, b: string) => spawnSync(process.execPath, [BIN, "compare", a, b, "--fail-on-regression", "20"], { encoding: "utf8" });

describe("latlab compare --fail-on-regression: exit codes a scheduled job acts on", () => {
  it("3 for a regression over replicas; 0 the other way round", () => {
    const r = compare(folder("a", 100, { replicas: 3 }), folder("b", 140, { replicas: 3 }));
    expect(r.status, r.stdout + r.stderr).toBe(REGRESSION_EXIT_CODE);
    expect(r.stdout).toMatch(/regression\s*│/);
    expect(compare(folder("b", 140, { replicas: 3 }), folder("a", 100, { replicas: 3 })).status).toBe(0);
  });

  it("4 when the CI is over one deployment a run: worse, but possibly the hosts drawn", () => {
    const r = compare(folder("a", 100, { repetitions: 3 }), folder("b", 140, { repetitions: 3 }));
    expect(r.status, r.stdout + r.stderr).toBe(CONFOUNDED_REGRESSION_EXIT_CODE);
    expect(r.stdout).toContain("regression (hosts confounded)");
    expect(r.stdout).toMatch(/over one deployment a run: they may be the hosts drawn/);
  });

  it("1 when something both runs measured could not be compared: a gate that skipped it must not pass", () => {
    const r = compare(folder("a", 100, { repetitions: 3, samples: false }), folder("b", 200, { repetitions: 3, samples: false }));
    expect(r.status, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toContain("not compared: accelnet=false measure 0 client->server");
    expect(r.stderr).toMatch(/2 variant × measure × pair measured in both runs could not be compared: the regression check cannot pass/);
  });
});
