import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { CONFOUNDED_REGRESSION_EXIT_CODE, REGRESSION_EXIT_CODE } from "../../../src/cli/commands/compareCommand.ts";
import { around, fakeRun } from "../history/fakeRun.ts";
import { tempDirs } from "../../tempDirs.ts";

const tempDir = tempDirs();
const BIN = resolve(import.meta.dirname, "../../../bin/latlab.js");

/** A results folder as a run writes it: results.json and samples/ (or no samples kept). */
function folder(runId: string, centre: number, opts: { replicas?: number; repetitions?: number; samples?: boolean }): string {
  const dir = join(tempDir("latlab-cmp-"), runId);
  const run = fakeRun(runId, (c) => around(centre + c.replica, 40, c.replica + c.repetition), opts);
  mkdirSync(dir, { recursive: true });
  // A run that kept no samples records no samples files (one whose files are gone is another case).
  const measurements = opts.samples === false ? run.results.measurements.map(({ samplesFile: _, ...m }) => m) : run.results.measurements;
  writeFileSync(join(dir, "results.json"), JSON.stringify({ ...run.results, measurements }));
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
    expect(r.stdout).toContain("not compared: accelnet=false measure 0 ping client->server");
    expect(r.stderr).toMatch(/2 variant × measure × pair measured in both runs could not be compared: the regression check cannot pass/);
  });
});

describe("latlab compare refuses what would read as a finding and is none", () => {
  const run = (args: string[]) => spawnSync(process.execPath, [BIN, "compare", ...args], { encoding: "utf8" });

  it("a run compared with itself: named twice, or as its folder and its results.json", () => {
    const a = folder("a", 100, { replicas: 3 });
    for (const [x, y] of [[a, a], [a, join(a, "results.json")]] as const) {
      const r = run([x, y]);
      expect(r.stderr).toBe(`latlab: ${x === y ? `"${x}" twice` : `"${x}" and "${y}"`}: both are run a, and a run compared with itself shows no change whatever it measured; name two different runs\n`);
      expect(r.stdout).toBe("");
      expect(r.status).toBe(1);
    }
  });

  it("a folder whose recorded samples were deleted, naming the files and cells missing, gate or not", () => {
    const a = folder("a", 100, { replicas: 3 });
    const b = folder("b", 140, { replicas: 3 });
    // One replica's samples gone: the rest would have compared (2+3 replicas) as if whole.
    rmSync(join(a, "samples", `${encodeURIComponent("accelnet=true#r1/ping#0/client->server")}.txt`));
    for (const args of [[a, b], [a, b, "--fail-on-regression", "20"]]) {
      const r = run(args);
      expect(r.stderr).toBe(
        `latlab: "${a}" (${a}): 1 of the 6 sample files its results.json records are missing, so a comparison would be of part of the run, or of nothing; restore them:\n  samples/accelnet%3Dtrue%23r1%2Fping%230%2Fclient-%3Eserver.txt (cell accelnet=true#r1/ping#0/client->server)\n`,
      );
      expect(r.stdout).toBe("");
      expect(r.status).toBe(1);
    }
    // Every one gone: named as well (first five, then how many more).
    rmSync(join(b, "samples"), { recursive: true });
    expect(run([folder("c", 100, { replicas: 3 }), b]).stderr).toMatch(/^latlab: ".*\/b" \(.*\/b\): 6 of the 6 sample files .*:\n( {2}samples\/\S+ \(cell \S+\)\n){5} {2}and 1 more\n$/);
  });
});
