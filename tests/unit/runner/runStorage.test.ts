// Where a run's files go when its results folder fails under it: results.json written as cells
// finish, files the folder cannot take saved in a rescue folder, a file that can be written
// nowhere failing its own cell only, an interrupted cell keeping what its client printed.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { NodeSSH } from "node-ssh";
import { describe, expect, it } from "vitest";
import { buildPlan, defineExperiment } from "../../../src/index.ts";
import { historyRecords } from "../../../src/history/historyRecords.ts";
import type { Plan } from "../../../src/plan/types.ts";
import { RunFiles } from "../../../src/results/runFiles.ts";
import { ResultsSchema, type Results } from "../../../src/results/schema.ts";
import { cellSlug, runCell } from "../../../src/runner/cellRunner.ts";
import type { Connect } from "../../../src/runner/connections.ts";
import { checkpointDue, runExperiment } from "../../../src/runner/runExperiment.ts";
import { findTool } from "../../../src/tools/registry.ts";
import { endpoint, fakeSsh, never, unwrap } from "./fakeSsh.ts";
import { tempDirs } from "../../tempDirs.ts";
import { fakeTarget, silentProgress } from "./fakeTarget.ts";

const tempDir = tempDirs();

/** Two variants → two deployments, one ping cell each. */
const plan: Plan = buildPlan(
  defineExperiment({
    name: "fake",
    description: "runner against fake hosts",
    axes: { ppg: [false, true] },
    hosts: { client: {}, server: {} },
    measure: [{ tool: "ping", params: { count: 3, interval: 0.1 } }],
  }),
);
const [first, second] = plan.cells as [Plan["cells"][0], Plan["cells"][0]];

const PING_OUT = readFileSync(join(import.meta.dirname, "../../fixtures/ping/normal.stdout"), "utf8");

/** Hosts that answer ping with a real capture; `onPing(deployment)` runs as each cell's ping does. */
const pinging =
  (onPing: (deployment: string) => void = () => {}): Connect =>
  async (h) =>
    fakeSsh(h.role, (cmd) => {
      if (!/\bping\b.*-c/.test(cmd)) return { stdout: "ping from iputils 20240117" };
      onPing(h.deployment);
      return { stdout: PING_OUT };
    }).ssh;

const run = (runDir: string, files: RunFiles, connect: Connect = pinging(), logged: string[] = []) =>
  runExperiment({ source: "fake.ts", plan, target: fakeTarget(), runId: "unit", runDir, progress: { ...silentProgress, log: (m) => logged.push(m) }, signal: new AbortController().signal, connect, files });

const readJson = (file: string): Results => ResultsSchema.parse(JSON.parse(readFileSync(file, "utf8")));

describe("results.json while the run goes on", () => {
  it("is written after each cell: valid, status running, the finished cells, no comparisons yet", async () => {
    const runDir = tempDir("latlab-unit-store-");
    const seen: Results[] = [];
    const connect = pinging((deployment) => {
      // The second cell runs: the first one's results are on disk already.
      if (deployment === second.deployment) seen.push(readJson(join(runDir, "results.json")));
    });
    const results = await run(runDir, new RunFiles(runDir, { runId: "unit" }), connect);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ status: "running", comparisons: [], teardown: { status: "not-started" } });
    expect(seen[0]!.error).toMatch(/^in progress: 1 of 2 cells finished/);
    expect(seen[0]!.measurements.map((m) => [m.cell, m.status])).toEqual([[first.id, "ok"]]);
    expect(results.status).toBe("complete");
    expect(readJson(join(runDir, "results.json")).status).toBe("complete");
    expect(readdirSync(runDir).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("is rewritten after every cell up to 200 cells, then after every n/200-th", () => {
    expect(checkpointDue(1, 0)).toBe(true);
    expect(checkpointDue(199, 198)).toBe(true);
    expect(checkpointDue(400, 399)).toBe(false);
    expect(checkpointDue(400, 398)).toBe(true);
    expect(checkpointDue(20_000, 19_901)).toBe(false);
    expect(checkpointDue(20_000, 19_900)).toBe(true);
  });

  it("is not taken into the history while it says running", () => {
    const results = { ...ResultsSchema.parse(JSON.parse(minimalResults)), status: "running" } as Results;
    expect(() => historyRecords(results, () => [])).toThrow(/run r1 has not finished \(results.json says "running"/);
  });
});

describe("a results folder that cannot take the run's files", () => {
  it("does not stop the measuring: files go to the rescue folder, each cell says where its files are, the first failure is said with the path", async () => {
    const runDir = tempDir("latlab-unit-store-");
    const rescueRoot = tempDir("latlab-unit-rescue-");
    writeFileSync(join(runDir, "raw"), "a file where latlab's raw/ folder goes");
    mkdirSync(join(runDir, "samples"));
    writeFileSync(join(runDir, "samples", `${cellSlug(first.id)}.txt`), "");
    const logged: string[] = [];
    const files = new RunFiles(runDir, { runId: "unit", rescueRoots: [rescueRoot], warn: (m) => logged.push(m) });
    const results = await run(runDir, files, pinging(), logged);

    const rescue = join(rescueRoot, "latlab-rescue-unit");
    expect(results.measurements.map((m) => m.status)).toEqual(["ok", "ok"]);
    expect(results.status).toBe("complete");
    const slug = cellSlug(first.id);
    expect(logged.find((m) => m.startsWith("cannot write"))).toBe(`cannot write ${join(runDir, "raw", slug, "command.txt")}: a part of the path is a file, not a folder (ENOTDIR); what cannot be written in ${runDir} is saved in ${rescue} instead`);
    expect(results.measurements[0]!.warnings).toContain(`${join("raw", slug, "stdout.txt")} is in ${join(rescue, "raw", slug, "stdout.txt")}: the results folder could not take it`);
    expect(readFileSync(join(rescue, "raw", slug, "stdout.txt"), "utf8")).toBe(PING_OUT);
    // results.json itself went where it was asked for, and names the files kept elsewhere.
    expect(files.resultsFile).toBe(join(runDir, "results.json"));
    expect(readJson(files.resultsFile!).measurements[0]!.warnings.join("\n")).toContain(rescue);
    expect(files.locate(results.measurements[0]!.samplesFile!)).toBe(join(runDir, results.measurements[0]!.samplesFile!));
    expect(files.summary()).toEqual([`storage: ${files.faults.length} file(s) could not be written in ${runDir} (a part of the path is a file, not a folder (ENOTDIR)); ${files.faults.length} saved in ${rescue}`]);
  });

  it("a file that can be written nowhere fails its own cell, naming the path and the reason; the next cell is measured", async () => {
    const runDir = tempDir("latlab-unit-store-");
    const nowhere = join(tempDir("latlab-unit-rescue-"), "a-file");
    writeFileSync(nowhere, "");
    mkdirSync(join(runDir, "raw"));
    writeFileSync(join(runDir, "raw", cellSlug(first.id)), "in the way");
    const files = new RunFiles(runDir, { runId: "unit", rescueRoots: [nowhere] });
    const results = await run(runDir, files);
    const [a, b] = results.measurements;
    const command = join(runDir, "raw", cellSlug(first.id), "command.txt");
    expect(a!.status).toBe("failed");
    expect(a!.error).toBe(
      `cannot write ${command}: a part of the path is a file, not a folder (ENOTDIR); nor in a rescue folder (${join(nowhere, "latlab-rescue-unit", "raw", cellSlug(first.id), "command.txt")}: a part of the path is a file, not a folder (ENOTDIR))`,
    );
    expect(b!.status).toBe("ok");
    expect(results.status).toBe("partial");
  });

  it("results.json the folder cannot take goes to the rescue folder, leaving no .tmp behind", async () => {
    const runDir = tempDir("latlab-unit-store-");
    const rescueRoot = tempDir("latlab-unit-rescue-");
    mkdirSync(join(runDir, "results.json"));
    const files = new RunFiles(runDir, { runId: "unit", rescueRoots: [rescueRoot] });
    const results = await run(runDir, files);
    const rescued = join(rescueRoot, "latlab-rescue-unit", "results.json");
    expect(files.resultsFile).toBe(rescued);
    expect(readJson(rescued)).toEqual(results);
    expect(readdirSync(runDir).sort()).toEqual(["plan.json", "raw", "results.json", "samples"]);
    expect(files.faults.every((f) => f.file === join(runDir, "results.json"))).toBe(true);
  });

  it("results.json written nowhere: the results are still returned, and it is said", async () => {
    const runDir = tempDir("latlab-unit-store-");
    const nowhere = join(tempDir("latlab-unit-rescue-"), "a-file");
    writeFileSync(nowhere, "");
    mkdirSync(join(runDir, "results.json"));
    const logged: string[] = [];
    const files = new RunFiles(runDir, { runId: "unit", rescueRoots: [nowhere], warn: (m) => logged.push(m) });
    const results = await run(runDir, files);
    expect(results.status).toBe("complete");
    expect(files.resultsFile).toBeUndefined();
    expect(logged.join("\n")).toContain(`cannot write ${join(runDir, "results.json")}: it is a folder where a file was expected (EISDIR); nor in a rescue folder`);
    expect(existsSync(join(runDir, "results.json.tmp"))).toBe(false);
  });
});

describe("an interrupted cell", () => {
  it("keeps what its client printed before Ctrl-C under raw/", async () => {
    const runDir = tempDir("latlab-unit-store-");
    const tool = findTool("ping")!;
    const client = fakeSsh("client", (cmd) => (/\bping\b.*-c/.test(cmd) ? never() : {}));
    const controller = new AbortController();
    const printed = PING_OUT.split("\n").slice(0, 3).join("\n");
    const execCommand = client.ssh.execCommand.bind(client.ssh);
    (client.ssh as { execCommand: NodeSSH["execCommand"] }).execCommand = ((command: string, options: { onStdout?: (b: Buffer) => void } = {}) => {
      if (/\bping\b.*-c/.test(unwrap(command))) {
        options.onStdout?.(Buffer.from(printed));
        setTimeout(() => controller.abort(), 20);
      }
      return execCommand(command, options);
    }) as NodeSSH["execCommand"];
    const { measurement } = await runCell(
      {
        cell: first,
        client: { endpoint: endpoint(first.deployment, "client"), ssh: client.ssh, assetsDir: "/assets" },
        server: { endpoint: endpoint(first.deployment, "server"), ssh: fakeSsh("server").ssh },
        runDir,
        signal: controller.signal,
      },
      tool,
    );
    const slug = cellSlug(first.id);
    expect(measurement.status).toBe("failed");
    expect(measurement.error).toMatch(/interrupted/);
    expect(measurement.raw).toEqual([join("raw", slug, "command.txt"), join("raw", slug, "stdout.txt"), join("raw", slug, "stderr.txt")]);
    expect(readFileSync(join(runDir, "raw", slug, "stdout.txt"), "utf8")).toBe(printed);
    expect(measurement.warnings).toContain("stdout.txt and stderr.txt hold what the client printed before it was cut off");
  });
});

const minimalResults = JSON.stringify({
  schemaVersion: 1,
  runId: "r1",
  experiment: { name: "x", description: "x", source: "x.ts" },
  target: "local",
  startedAt: "2026-11-21T05:00:00.000Z",
  finishedAt: "2026-11-21T05:01:00.000Z",
  status: "complete",
  environment: { latlabVersion: "0.1.0", node: "v24", kernel: "6", toolVersions: {}, shaping: { latency: "not-applicable", bandwidth: "not-applicable", note: "n/a" }, facts: {} },
  baseline: "v",
  variants: [],
  measurements: [],
  comparisons: [],
  pairComparisons: [],
  teardown: { status: "ok", errors: [], removed: [] },
});
