import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { EXPERIMENTS_DIR, describeFound, findExperiment, listExperiments, projectExperimentsDir } from "../../../src/cli/experiments/loadExperiment.ts";
import { tempDirs } from "../../tempDirs.ts";

const ROOT = resolve(import.meta.dirname, "../../..");
const temp = tempDirs();

/** A project folder with ./experiments holding these files (the lookup never imports them). */
function project(files: string[]): string {
  const dir = temp("latlab-lookup-");
  mkdirSync(join(dir, "experiments"));
  for (const f of files) writeFileSync(join(dir, "experiments", f), "export default {};\n");
  return dir;
}

describe("experiment names: the project's ./experiments first, then latlab's own", () => {
  it("finds a project experiment and says where", () => {
    const cwd = project(["mine.ts"]);
    const found = findExperiment("mine", cwd);
    expect(found).toEqual({ file: join(cwd, "experiments/mine.ts"), origin: "project" });
    expect(describeFound(found, cwd)).toBe("experiment mine: ./experiments/mine.ts");
  });

  it("falls back to latlab's own and says so", () => {
    const cwd = project(["mine.ts"]);
    const found = findExperiment("ppg-vs-zone", cwd);
    expect(found).toEqual({ file: join(EXPERIMENTS_DIR, "ppg-vs-zone.ts"), origin: "latlab" });
    expect(describeFound(found, cwd)).toBe("experiment ppg-vs-zone: latlab's own experiments/ppg-vs-zone.ts");
  });

  it("a project experiment with a shipped one's name wins, and says what it shadows", () => {
    const cwd = project(["ppg-vs-zone.ts"]);
    const found = findExperiment("ppg-vs-zone", cwd);
    expect(found).toEqual({ file: join(cwd, "experiments/ppg-vs-zone.ts"), origin: "project", shadows: join(EXPERIMENTS_DIR, "ppg-vs-zone.ts") });
    expect(describeFound(found, cwd)).toBe("experiment ppg-vs-zone: ./experiments/ppg-vs-zone.ts (shadows latlab's own experiments/ppg-vs-zone.ts)");
  });

  it("a path is that file, whatever the folders hold, and needs no line on stderr", () => {
    const cwd = project(["ppg-vs-zone.ts"]);
    const found = findExperiment("./experiments/ppg-vs-zone.ts", cwd);
    expect(found).toEqual({ file: join(cwd, "experiments/ppg-vs-zone.ts"), origin: "path" });
    expect(describeFound(found, cwd)).toBeUndefined();
    expect(findExperiment(join(EXPERIMENTS_DIR, "ppg-vs-zone.ts"), cwd).origin).toBe("path");
  });

  it("an unknown name names both folders and suggests from both", () => {
    const cwd = project(["my-latency.ts"]);
    expect(() => findExperiment("my-latncy", cwd)).toThrow(/no experiment "my-latncy" in \.\/experiments or latlab's own experiments \(.*\) — did you mean "my-latency"\?/);
    expect(() => findExperiment("ppg-vs-zon", cwd)).toThrow(/did you mean "ppg-vs-zone"\?/);
  });

  it("in latlab's own checkout, ./experiments is latlab's own, not a project", () => {
    expect(projectExperimentsDir(ROOT)).toBeUndefined();
    expect(findExperiment("ppg-vs-zone", ROOT).origin).toBe("latlab");
    expect(listExperiments(ROOT).project).toBeUndefined();
  });

  it("a folder without ./experiments has no project group", () => {
    const cwd = temp("latlab-lookup-");
    expect(projectExperimentsDir(cwd)).toBeUndefined();
    expect(findExperiment("ppg-vs-zone", cwd).origin).toBe("latlab");
  });

  it("listExperiments gives both groups and marks the shadowing both ways", () => {
    const cwd = project(["ppg-vs-zone.ts", "mine.ts", "notes.md"]);
    const { project: mine, latlab } = listExperiments(cwd);
    expect(mine).toEqual([
      { name: "mine", file: join(cwd, "experiments/mine.ts") },
      { name: "ppg-vs-zone", file: join(cwd, "experiments/ppg-vs-zone.ts"), shadows: join(EXPERIMENTS_DIR, "ppg-vs-zone.ts") },
    ]);
    expect(latlab.find((e) => e.name === "ppg-vs-zone")).toEqual({ name: "ppg-vs-zone", file: join(EXPERIMENTS_DIR, "ppg-vs-zone.ts"), shadowedBy: join(cwd, "experiments/ppg-vs-zone.ts") });
    expect(latlab.find((e) => e.name === "accelnet-on-off")?.shadowedBy).toBeUndefined();
  });
});
