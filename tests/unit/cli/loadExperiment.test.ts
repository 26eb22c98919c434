import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { listExperimentFiles, loadExperiment, resolveExperimentRef } from "../../../src/cli/experiments/loadExperiment.ts";
import { parseDuration } from "../../../src/cli/input/options.ts";

const fixtures = resolve(import.meta.dirname, "../../fixtures/experiments");

describe("loadExperiment", () => {
  it("finds a shipped experiment by name", async () => {
    const { experiment, file } = await loadExperiment("ppg-vs-zone");
    expect(experiment.name).toBe("ppg-vs-zone");
    expect(file).toMatch(/experiments\/ppg-vs-zone\.ts$/);
  });

  it("suggests the closest name for a misspelled experiment", () => {
    expect(() => resolveExperimentRef("ppg-vs-zon")).toThrow('no experiment "ppg-vs-zon" in');
    expect(() => resolveExperimentRef("ppg-vs-zon")).toThrow('did you mean "ppg-vs-zone"?');
  });

  it("names the file and the field of a malformed definition", async () => {
    await expect(loadExperiment(join(fixtures, "malformed-axis.ts"))).rejects.toThrow(/malformed-axis\.ts.*\n\s+axes\.ppg\[1\]: expected boolean, got "yes"/);
  });

  it("refuses a file that does not default-export defineExperiment(...)", async () => {
    await expect(loadExperiment(join(fixtures, "not-an-experiment.ts"))).rejects.toThrow(/must `export default defineExperiment/);
  });

  it("says when a path does not exist", () => {
    expect(() => resolveExperimentRef("./nope/missing.ts", "/tmp")).toThrow("no experiment file at /tmp/nope/missing.ts");
  });

  it("lists every shipped experiment file", () => {
    expect(listExperimentFiles().map((f) => f.split("/").pop())).toContain("ppg-vs-zone.ts");
    const empty = mkdtempSync(join(tmpdir(), "latlab-list-"));
    writeFileSync(join(empty, "notes.md"), "x");
    try {
      expect(listExperimentFiles(empty)).toEqual([]);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe("parseDuration", () => {
  it("takes seconds or a factor", () => {
    expect(parseDuration("30")).toEqual({ seconds: 30 });
    expect(parseDuration("2.5x")).toEqual({ factor: 2.5 });
    expect(() => parseDuration("0")).toThrow(/expected seconds/);
    expect(() => parseDuration("fast")).toThrow(/expected seconds/);
  });
});

describe("planOptions", () => {
  it("uses --duration first, then the experiment's default for the target", async () => {
    const { planOptions } = await import("../../../src/cli/input/options.ts");
    const { defineExperiment } = await import("../../../src/index.ts");
    const e = defineExperiment({ name: "x", description: "x", hosts: { a: {}, server: {} }, measure: [{ tool: "ping" }], durationByTarget: { local: 3 } });
    expect(planOptions(e, "local")).toEqual({ duration: { seconds: 3 } });
    expect(planOptions(e, "azure")).toEqual({});
    expect(planOptions(e, "local", { factor: 2 })).toEqual({ duration: { factor: 2 } });
  });
});
