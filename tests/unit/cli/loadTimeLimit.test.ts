import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { loadExperiment } from "../../../src/cli/experiments/loadExperiment.ts";
import { DEFAULT_LOAD_TIMEOUT_MS, loadTimeoutMs } from "../../../src/cli/experiments/loadProbe.ts";
import { tempDirs } from "../../tempDirs.ts";
import { spawnLatlab } from "./spawnLatlab.ts";

const ROOT = resolve(import.meta.dirname, "../../..");
const tempDir = tempDirs();

/** Files whose top level never finishes, each its own way. */
const HANGS = {
  "loops.ts": 'import { defineExperiment } from "latlab";\nwhile (true) {}\nexport default defineExperiment({ name: "loops", description: "x", hosts: { client: {}, server: {} }, measure: [{ tool: "ping" }] });\n',
  "waits.mts": "await new Promise(() => setInterval(() => {}, 1000));\nexport default {};\n",
};

/** A user's folder: the given files in ./experiments. */
function project(files: Record<string, string>): string {
  const dir = tempDir("latlab-load-limit-");
  mkdirSync(join(dir, "experiments"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, "experiments", name), text);
  return dir;
}

/**
 * bin/latlab.js in `cwd`. The kill is only a guard so that a hang fails this test instead of
 * hanging the suite; the time limit under test is 1 s.
 */
const latlab = (args: string[], cwd: string) => spawnLatlab(args, { cwd, env: { LATLAB_LOAD_TIMEOUT_MS: "1000" } });

describe("experiment files load with a time limit", () => {
  afterEach(() => vi.unstubAllEnvs());

  it.each(Object.keys(HANGS))("refuses %s, naming it, instead of hanging", async (name) => {
    vi.stubEnv("LATLAB_LOAD_TIMEOUT_MS", "1000");
    const file = join(project(HANGS), "experiments", name);
    await expect(loadExperiment(file)).rejects.toThrow(`${file}: did not finish loading within 1 s`);
  });

  it("refuses a file that ends the process while loading, and latlab goes on", async () => {
    const file = join(project({ "exits.ts": "process.exit(3);\n" }), "experiments", "exits.ts");
    await expect(loadExperiment(file)).rejects.toThrow(`${file}: ended the process while loading (exit code 3)`);
    // The next file gets a new worker.
    await expect(loadExperiment("ppg-vs-zone")).resolves.toMatchObject({ experiment: { name: "ppg-vs-zone" } });
  });

  it("takes its limit from LATLAB_LOAD_TIMEOUT_MS in decimal milliseconds, 20 s by default", () => {
    expect(DEFAULT_LOAD_TIMEOUT_MS).toBe(20_000);
    expect(loadTimeoutMs({})).toBe(20_000);
    expect(loadTimeoutMs({ LATLAB_LOAD_TIMEOUT_MS: "1500" })).toBe(1500);
    for (const bad of ["0", "0x10", "1e3", "-5", "1.5", "soon"]) expect(() => loadTimeoutMs({ LATLAB_LOAD_TIMEOUT_MS: bad })).toThrow(`LATLAB_LOAD_TIMEOUT_MS="${bad}": expected a whole number of milliseconds`);
  });

  it("`list` reports the file that loops and lists the others; `plan` of it ends non-zero naming it", async () => {
    const dir = project(HANGS);
    cpSync(join(ROOT, "tests/unit/cli/fixtures/outside.ts"), join(dir, "experiments", "outside.ts"));
    const list = await latlab(["list"], dir);
    expect(list.stdout).toMatch(/^ {2}loops {2,}\(broken: .*experiments\/loops\.ts: did not finish loading within 1 s/m);
    expect(list.stdout).toMatch(/^ {2}outside {2,}an experiment outside any project$/m);
    expect(list.stdout).toMatch(/^ {2}waits {2,}\(broken: .*experiments\/waits\.mts: did not finish loading within 1 s/m);
    expect(list.stdout).toMatch(/^latlab's own experiments:\n {2}\S+/m);
    expect(list.code).toBe(0);

    const plan = await latlab(["plan", "loops"], dir);
    expect(plan.stderr).toContain(`${join(dir, "experiments", "loops.ts")}: did not finish loading within 1 s`);
    expect(plan.stdout).toBe("");
    expect(plan.code).not.toBe(0);
  });
});
