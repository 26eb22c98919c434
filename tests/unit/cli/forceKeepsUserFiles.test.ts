import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MANIFEST_FILE, readManifest } from "../../../src/results/runManifest.ts";
import type { TeardownReport } from "../../../src/results/schema.ts";
import { targets } from "../../../src/targets/registry.ts";
import { tempDirs } from "../../tempDirs.ts";
import { runMain } from "./runMain.ts";

const tempDir = tempDirs();

/** A folder holding a user's own files, two of them named like latlab's (plan.json, raw/). */
function usersFolder(): string {
  const dir = tempDir("latlab-force-");
  writeFileSync(join(dir, "data.csv"), "a,b\n");
  mkdirSync(join(dir, "raw"));
  writeFileSync(join(dir, "raw", "capture.pcap"), "cap");
  writeFileSync(join(dir, "plan.json"), '{"mine":1}\n');
  return dir;
}

const everything = (dir: string) => readdirSync(dir, { recursive: true }).map(String).sort();

describe("latlab run --force: only what latlab recorded writing, only once the run cannot be refused", () => {
  it("a folder without latlab's record: refused, naming the files it would have removed; nothing removed", async () => {
    const dir = usersFolder();
    const before = everything(dir);
    const r = await runMain(["run", "ppg-vs-zone", "--target", "azure", "--out", dir, "--force"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`--force removes only what latlab recorded writing in ${dir} (its ${MANIFEST_FILE}), and there is no such record there for plan.json, raw`);
    expect(r.stderr).toContain("Nothing was removed.");
    expect(r.stderr).not.toMatch(/removed what latlab had written/);
    expect(everything(dir)).toEqual(before);
    expect(readFileSync(join(dir, "plan.json"), "utf8")).toBe('{"mine":1}\n');
  });

  it("latlab's own earlier files (in its record): a run refused by a later check (no --ssh-from) removes none of them", async () => {
    const dir = tempDir("latlab-force-");
    writeFileSync(join(dir, "plan.json"), "{}\n");
    mkdirSync(join(dir, "raw"));
    writeFileSync(join(dir, "raw", "stdout.txt"), "old");
    writeFileSync(join(dir, "notes.txt"), "mine");
    writeFileSync(join(dir, MANIFEST_FILE), JSON.stringify({ format: 1, runId: "old", written: [{ name: "plan.json", kind: "file" }, { name: "raw", kind: "folder" }] }));
    const before = everything(dir);
    const r = await runMain(["run", "ppg-vs-zone", "--target", "azure", "--out", dir, "--force"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/--ssh-from CIDR is required with --target azure/);
    expect(r.stderr).not.toMatch(/--force: removed/);
    expect(everything(dir)).toEqual(before);
    expect(existsSync(join(dir, ".latlab.lock"))).toBe(false);
  });
});

/**
 * A target that brings nothing up: its preflight refuses when `refuse` is set; its up() notes what
 * the results folder holds at that moment (the deploy), then fails.
 */
const probe: { refuse?: string; atUp?: string[]; resultsAtUp?: string } = {};
targets["force-probe"] = {
  description: "test double",
  async preflight() {
    if (probe.refuse) throw new Error(probe.refuse);
  },
  async create() {
    return {
      name: "force-probe",
      up: async (_plan, ctx) => {
        probe.atUp = everything(ctx.runDir);
        probe.resultsAtUp = readFileSync(join(ctx.runDir, "results.json"), "utf8");
        throw new Error("force-probe: nothing is brought up in a unit test");
      },
      down: async (): Promise<TeardownReport> => ({ status: "ok", errors: [], removed: [] }),
    };
  },
};

describe("latlab run --force, in order: the checks, then the removal, then the run", () => {
  function previousRun(): string {
    const dir = tempDir("latlab-force-");
    writeFileSync(join(dir, "results.json"), "{}\n");
    mkdirSync(join(dir, "samples"));
    writeFileSync(join(dir, "samples", "cell.txt"), "1\n");
    writeFileSync(join(dir, "notes.txt"), "mine");
    writeFileSync(join(dir, MANIFEST_FILE), JSON.stringify({ format: 1, runId: "old", written: [{ name: "results.json", kind: "file" }, { name: "samples", kind: "folder" }] }));
    return dir;
  }

  it("a check that refuses the run (the target's preflight): nothing removed", async () => {
    const dir = previousRun();
    const before = everything(dir);
    probe.refuse = "force-probe: refused by the preflight";
    probe.atUp = undefined;
    try {
      const r = await runMain(["run", "ppg-vs-zone", "--target", "force-probe", "--out", dir, "--force", "--no-history"]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("refused by the preflight");
    } finally {
      probe.refuse = undefined;
    }
    expect(everything(dir)).toEqual(before);
  });

  it("every check passed: latlab's recorded files are gone before the deploy, the user's stay, and the new record lists what this run wrote", async () => {
    const dir = previousRun();
    probe.atUp = undefined;
    const r = await runMain(["run", "ppg-vs-zone", "--target", "force-probe", "--out", dir, "--force", "--no-history"]);
    expect(r.stderr).toContain(`--force: removed what latlab had written in ${dir}: results.json, samples/`);
    expect(r.stderr).toContain(`--force: kept what latlab did not write in ${dir}: notes.txt`);
    // At the deploy: the old samples gone, the user's notes kept, this run's plan and results.json (status running) written.
    expect(probe.atUp).toEqual([MANIFEST_FILE, ".latlab.lock", "notes.txt", "plan.json", "results.json"]);
    expect(probe.resultsAtUp).toContain('"status": "running"');
    expect(readFileSync(join(dir, "notes.txt"), "utf8")).toBe("mine");
    const { manifest } = readManifest(dir);
    expect(manifest?.runId).not.toBe("old");
    expect(manifest?.written.map((e) => e.name)).toEqual(expect.arrayContaining(["plan.json", "results.json"]));
    expect(manifest?.written.map((e) => e.name)).not.toContain("notes.txt");
  });
});
