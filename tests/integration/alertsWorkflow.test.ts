/**
 * scheduled.yml's job `alerts`, played step by step by workflowRunner.ts as GitHub's runner would
 * run it, against a fake of GitHub's issues REST API on 127.0.0.1 (GITHUB_API_URL points at it, as
 * the runner sets it from github.api_url): a regression opens one issue per experiment, labelled;
 * a regression while it is open is a comment; a run still learning changes nothing; a run back
 * inside the band comments and closes it; fail-on-regression fails the job only when asked.
 *
 * The verdicts are fed to the job as the history job's artifact gate-verdicts: JSON in the shape
 * `latlab gate --json` prints, its `report` made by the gate's own statistics (src/history/gate.ts)
 * from made-up previous runs (a real series of runs long enough for a band takes root and minutes:
 * tests/integration/regressionGate.test.ts), and a Markdown section beside it. The last test
 * plays the history job's own gate steps on a recorded run (tests/fixtures/runs/ppg-vs-zone) and
 * hands what `latlab gate` printed to the alerts job.
 *
 * The fake runs in a worker thread: runJob runs each step with spawnSync, which blocks this
 * thread's event loop while the step's curl waits for an answer.
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Worker } from "node:worker_threads";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { ALERT_VERDICTS, gate } from "../../src/history/gate.ts";
import type { GateRun } from "../../src/history/gateSchema.ts";
import { tempDirs } from "../tempDirs.ts";
import { runJob, type JobOptions, type JobResult, type Workflow } from "./workflowRunner.ts";

const tempDir = tempDirs();
const ROOT = resolve(import.meta.dirname, "../..");
const scheduled = parse(readFileSync(join(ROOT, ".github/workflows/scheduled.yml"), "utf8")) as Workflow;
const historyWorkflow = parse(readFileSync(join(ROOT, ".github/workflows/latlab-history.yml"), "utf8")) as Workflow;
const REPOSITORY = "example/measurements";
const TOKEN = "not-a-token";
const TREND_URL = "https://example.github.io/measurements/";

/** GitHub's issues API as far as the job uses it, in memory; GET /__state shows it to the test. */
const FAKE_GITHUB = `
const http = require("node:http");
const { parentPort } = require("node:worker_threads");
const state = { issues: [], labels: [], requests: [] };
let next = 1;
// Already there: a pull request with the title and label the job looks for (the issues endpoint
// lists pull requests too), and another experiment's open issue.
state.issues.push({ number: next++, title: "latlab: regression in ppg-vs-zone", body: "a pull request", state: "open", labels: [{ name: "latlab-regression" }], pull_request: { url: "x" }, comments: [] });
state.issues.push({ number: next++, title: "latlab: regression in other", body: "", state: "open", labels: [{ name: "latlab-regression" }], comments: [] });
const server = http.createServer((req, res) => {
  let raw = "";
  req.on("data", (c) => (raw += c));
  req.on("end", () => {
    const url = new URL(req.url, "http://x");
    const send = (status, body) => { res.writeHead(status, { "content-type": "application/json" }); res.end(JSON.stringify(body)); };
    if (url.pathname === "/__state") return send(200, state);
    state.requests.push({ method: req.method, path: url.pathname + url.search, auth: req.headers.authorization ?? null, apiVersion: req.headers["x-github-api-version"] ?? null });
    if (req.headers.authorization !== "Bearer ${TOKEN}") return send(401, { message: "Bad credentials" });
    const body = raw ? JSON.parse(raw) : {};
    const prefix = "/repos/${REPOSITORY}/";
    if (!url.pathname.startsWith(prefix)) return send(404, { message: "Not Found" });
    const path = url.pathname.slice(prefix.length - 1);
    let r;
    if (req.method === "GET" && path === "/issues") {
      const labels = (url.searchParams.get("labels") ?? "").split(",").filter(Boolean);
      const want = url.searchParams.get("state") ?? "open";
      return send(200, state.issues.filter((i) => (want === "all" || i.state === want) && labels.every((l) => i.labels.some((x) => x.name === l))).map(({ comments, ...i }) => i));
    }
    if (req.method === "POST" && path === "/issues") {
      const issue = { number: next++, title: body.title, body: body.body, state: "open", labels: (body.labels ?? []).map((name) => ({ name })), comments: [] };
      state.issues.push(issue);
      return send(201, issue);
    }
    if ((r = /^\\/issues\\/(\\d+)\\/comments$/.exec(path)) && req.method === "POST") {
      const issue = state.issues.find((i) => i.number === Number(r[1]));
      if (!issue) return send(404, { message: "Not Found" });
      issue.comments.push(body.body);
      return send(201, { id: issue.comments.length, body: body.body });
    }
    if ((r = /^\\/issues\\/(\\d+)$/.exec(path)) && req.method === "PATCH") {
      const issue = state.issues.find((i) => i.number === Number(r[1]));
      if (!issue) return send(404, { message: "Not Found" });
      Object.assign(issue, body);
      return send(200, issue);
    }
    if ((r = /^\\/labels\\/([^/]+)$/.exec(path)) && req.method === "GET") {
      const label = state.labels.find((l) => l.name === decodeURIComponent(r[1]));
      return label ? send(200, label) : send(404, { message: "Not Found" });
    }
    if (req.method === "POST" && path === "/labels") {
      state.labels.push(body);
      return send(201, body);
    }
    send(404, { message: "Not Found" });
  });
});
server.listen(0, "127.0.0.1", () => parentPort.postMessage(server.address().port));
`;

interface Issue {
  number: number;
  title: string;
  body: string;
  state: string;
  state_reason?: string;
  labels: { name: string }[];
  pull_request?: unknown;
  comments: string[];
}
interface FakeState {
  issues: Issue[];
  labels: { name: string }[];
  requests: { method: string; path: string; auth: string | null; apiVersion: string | null }[];
}

let worker: Worker;
let apiUrl: string;
beforeAll(async () => {
  worker = new Worker(FAKE_GITHUB, { eval: true });
  const port = await new Promise<number>((ok, fail) => {
    worker.once("message", ok);
    worker.once("error", fail);
  });
  apiUrl = `http://127.0.0.1:${port}`;
});
afterAll(async () => {
  await worker?.terminate();
});
const fakeState = async () => (await (await fetch(`${apiUrl}/__state`)).json()) as FakeState;

/** Runs of one experiment, RTT mean around 100 µs, one a day. */
const runOf = (runId: string, day: number, value: number): GateRun => ({
  runId,
  startedAt: new Date(Date.UTC(2026, 0, day)).toISOString(),
  headlines: [{ variant: "ppg", measure: "0", pair: "a→b", metric: "rtt", unit: "us", statistic: "mean", value }],
});
const PREVIOUS = [99, 101, 100, 102, 98, 100].map((v, i) => runOf(`prev-${i}`, i + 1, v));

/** What `latlab gate --json` prints for a run of `value` after `previous`, and a Markdown section beside it. */
function verdict(experiment: string, runId: string, value: number, previous: GateRun[] = PREVIOUS) {
  const report = gate(runOf(runId, 20, value), previous);
  const regressions = report.checks.filter((c) => ALERT_VERDICTS.includes(c.verdict)).length;
  const learning = report.checks.some((c) => c.verdict === "learning");
  const json = { experiment, runId, regressions, learning, report, comparable: { used: report.previousRuns, excluded: [] } };
  const markdown = `### ${experiment}: ${regressions ? `${regressions} regression(s)` : learning ? "learning" : "inside the band"}\n\n${report.checks.map((c) => `- ${c.text}`).join("\n")}\n`;
  return { json, markdown };
}

/** The alerts job of workflow run `runId`, given these verdicts (or this folder) as the artifact gate-verdicts. */
function alerts(runId: string, verdicts: ReturnType<typeof verdict>[] | string, inputs: Record<string, string> = {}): JobResult {
  const base = tempDir("latlab-alerts-");
  let artifact = join(base, "artifact");
  if (typeof verdicts === "string") artifact = verdicts;
  else {
    mkdirSync(artifact);
    for (const v of verdicts) {
      writeFileSync(join(artifact, `${v.json.experiment}-${v.json.runId}.json`), JSON.stringify(v.json, null, 2));
      writeFileSync(join(artifact, `${v.json.experiment}-${v.json.runId}.md`), v.markdown);
    }
  }
  const workspace = join(base, "workspace");
  mkdirSync(workspace);
  const downloads: string[] = [];
  const options: JobOptions = {
    contexts: {
      inputs,
      needs: { history: { result: "success", outputs: { verdicts: String(typeof verdicts === "string" ? readdirSync(verdicts).length : verdicts.length), pages: "true" } }, pages: { result: "success", outputs: { "page-url": TREND_URL } } },
      github: { run_id: runId, run_attempt: "1", repository: REPOSITORY, token: TOKEN, api_url: apiUrl, server_url: "https://github.com", event_name: "schedule" },
      vars: { AZURE_CLIENT_ID: "x" },
      runner: { temp: join(base, "runner") },
    },
    workspace,
    env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", HOME: base },
    actions: {
      "actions/download-artifact": ({ with: w, workspace: ws }) => {
        downloads.push(w["name"]!);
        cpSync(artifact, join(ws, w["path"]!), { recursive: true });
        return { ok: w["name"] === "gate-verdicts" };
      },
    },
    tempDir: join(base, "gh"),
  };
  const result = runJob(scheduled, "alerts", options);
  expect(downloads).toEqual(["gate-verdicts"]);
  return result;
}

const step = (r: JobResult) => r.steps.find((s) => s.label === "Open, update or close the regression issues")!;
const ourIssues = (s: FakeState, experiment: string) => s.issues.filter((i) => i.title === `latlab: regression in ${experiment}` && !i.pull_request);

describe("scheduled.yml's job alerts, against a fake GitHub issues API", () => {
  it("opens one issue on a regression, comments while it lasts, leaves it while learning, comments and closes on recovery, and opens a new one on the next regression", async () => {
    // Week 1: ppg-vs-zone regressed (150 µs against ~100), other is inside its band.
    const week1 = alerts("501", [verdict("ppg-vs-zone", "run-1", 150), verdict("other", "run-o1", 100.5)]);
    expect(week1.failed, step(week1).stdout + step(week1).stderr).toBe(false);
    expect(step(week1).stdout).toMatch(/ppg-vs-zone: regression \(1\); opened issue #3/);
    let s = await fakeState();
    expect(s.requests.every((r) => r.auth === `Bearer ${TOKEN}` && r.apiVersion === "2022-11-28")).toBe(true);
    expect(s.labels.map((l) => l.name)).toEqual(["latlab-regression"]);
    const [opened, ...more] = ourIssues(s, "ppg-vs-zone");
    expect(more).toEqual([]);
    expect(opened).toMatchObject({ number: 3, state: "open", labels: [{ name: "latlab-regression" }] });
    expect(opened!.body).toContain("Run run-1 is outside the band of its previous comparable runs (1 regression(s)):");
    expect(opened!.body).toContain("### ppg-vs-zone: 1 regression(s)");
    expect(opened!.body).toMatch(/regression/);
    expect(opened!.body).toContain(`Workflow run: https://github.com/${REPOSITORY}/actions/runs/501`);
    expect(opened!.body).toContain(`Trend page: ${TREND_URL}`);
    // The other experiment was inside its band: its open issue (from an earlier week) is closed.
    expect(step(week1).stdout).toMatch(/other: back inside the band; closed issue #2/);
    expect(ourIssues(s, "other")).toMatchObject([{ number: 2, state: "closed", state_reason: "completed" }]);
    // The pull request with the same title was never touched.
    expect(s.issues.find((i) => i.pull_request)).toMatchObject({ number: 1, state: "open", comments: [] });

    // Week 2: still regressed, and fail-on-regression asked for: a comment on the same issue, and a red job.
    const week2 = alerts("502", [verdict("ppg-vs-zone", "run-2", 155)], { "fail-on-regression": "true" });
    expect(step(week2).stdout).toMatch(/commented on issue #3/);
    expect(week2.failed).toBe(true);
    expect(step(week2).stdout).toContain("::error::regression in ppg-vs-zone (see the issues); fail-on-regression is true");
    s = await fakeState();
    expect(ourIssues(s, "ppg-vs-zone")).toHaveLength(1);
    expect(ourIssues(s, "ppg-vs-zone")[0]!.comments).toHaveLength(1);
    expect(ourIssues(s, "ppg-vs-zone")[0]!.comments[0]).toContain("Still outside the band in run run-2");
    expect(ourIssues(s, "ppg-vs-zone")[0]!.comments[0]).toContain("actions/runs/502");

    // Week 3: the experiment changed (too few comparable runs): learning, the issue stays as it is.
    const week3 = alerts("503", [verdict("ppg-vs-zone", "run-3", 100, PREVIOUS.slice(0, 2))]);
    expect(week3.failed).toBe(false);
    expect(step(week3).stdout).toMatch(/ppg-vs-zone: learning .*issue #3 stays open/);
    s = await fakeState();
    expect(ourIssues(s, "ppg-vs-zone")[0]).toMatchObject({ state: "open" });
    expect(ourIssues(s, "ppg-vs-zone")[0]!.comments).toHaveLength(1);

    // Week 4: back inside the band: a comment saying so, and the issue closed.
    const week4 = alerts("504", [verdict("ppg-vs-zone", "run-4", 100.5)], { "fail-on-regression": "true" });
    expect(week4.failed).toBe(false);
    expect(step(week4).stdout).toMatch(/ppg-vs-zone: back inside the band; closed issue #3/);
    s = await fakeState();
    const closed = ourIssues(s, "ppg-vs-zone")[0]!;
    expect(closed).toMatchObject({ state: "closed", state_reason: "completed" });
    expect(closed.comments.at(-1)).toContain("Back inside the band in run run-4: closing.");
    expect(closed.comments.at(-1)).toContain("actions/runs/504");

    // Week 5: a new regression is a new issue (the closed one stays closed), and the label is not made twice.
    const week5 = alerts("505", [verdict("ppg-vs-zone", "run-5", 160)]);
    expect(week5.failed).toBe(false);
    s = await fakeState();
    expect(ourIssues(s, "ppg-vs-zone").map((i) => [i.number, i.state])).toEqual([
      [3, "closed"],
      [4, "open"],
    ]);
    expect(s.labels).toHaveLength(1);
  });

  it("does not run when the history job judged no run", () => {
    const base = tempDir("latlab-alerts-none-");
    const result = runJob(scheduled, "alerts", {
      contexts: { inputs: {}, needs: { history: { result: "success", outputs: { verdicts: "0", pages: "" } }, pages: { result: "skipped", outputs: {} } }, github: { run_id: "600", repository: REPOSITORY, token: TOKEN, api_url: apiUrl }, runner: { temp: base } },
      workspace: base,
      env: { PATH: process.env["PATH"] ?? "" },
      actions: {},
      tempDir: join(base, "gh"),
    });
    expect(result.skipped).toBe(true);
  });

  it("reads what `latlab gate` prints in the history job: the job's gate steps on a recorded run (the history's only run: learning), their artifact handed to alerts, which changes nothing", async () => {
    const base = tempDir("latlab-alerts-chain-");
    // The history job's runner: latlab installed in the workspace, the run downloaded, the history branch's file with the run added.
    const workspace = join(base, "workspace");
    mkdirSync(join(workspace, "node_modules", ".bin"), { recursive: true });
    symlinkSync(ROOT, join(workspace, "node_modules", "latlab"));
    symlinkSync(join(ROOT, "bin", "latlab.js"), join(workspace, "node_modules", ".bin", "latlab"));
    writeFileSync(join(workspace, "package.json"), JSON.stringify({ name: "measurements", private: true, dependencies: { latlab: `file:${ROOT}` } }));
    cpSync(join(ROOT, "tests/fixtures/runs/ppg-vs-zone"), join(workspace, "downloaded", "ppg-vs-zone-700"), { recursive: true });
    const runnerTemp = join(base, "runner");
    mkdirSync(join(runnerTemp, "latlab-history"), { recursive: true });
    const added = spawnSync(process.execPath, [join(ROOT, "bin/latlab.js"), "history", "add", join(workspace, "downloaded", "ppg-vs-zone-700"), "--history", join(runnerTemp, "latlab-history", "history.duckdb")], { encoding: "utf8" });
    expect(added.status, added.stderr).toBe(0);
    const artifacts = join(base, "artifacts");
    const history = runJob(historyWorkflow, "history", {
      contexts: { inputs: { rehearse: false }, github: { run_id: "700", repository: REPOSITORY, token: TOKEN }, vars: {}, runner: { temp: runnerTemp } },
      workspace,
      env: { PATH: process.env["PATH"] ?? "", HOME: base, npm_config_offline: "true" },
      actions: {
        "actions/upload-artifact": ({ with: w, workspace: ws }) => {
          cpSync(join(ws, w["path"]!), join(artifacts, w["name"]!), { recursive: true });
          return { ok: true };
        },
      },
      tempDir: join(base, "gh"),
      only: { names: ["Judge each run against the history", "Upload the verdicts"], steps: {} },
    });
    const judge = history.steps.find((s) => s.label === "Judge each run against the history")!;
    expect(judge.outcome, `${judge.stdout}\n${judge.stderr}`).toBe("success");
    expect(history.outputs["gate"]).toEqual({ verdicts: "1" });
    expect(history.summary).toMatch(/^### ppg-vs-zone/m);
    expect(history.summary).toMatch(/learning \(0 of 5\)/);
    expect(readdirSync(join(artifacts, "gate-verdicts")).sort()).toEqual(["ppg-vs-zone-700.json", "ppg-vs-zone-700.md"]);

    const before = (await fakeState()).requests.length;
    const result = alerts("700", join(artifacts, "gate-verdicts"));
    expect(result.failed, step(result).stdout + step(result).stderr).toBe(false);
    expect(step(result).stdout).toMatch(/ppg-vs-zone: learning/);
    const after = (await fakeState()).requests.slice(before);
    // It looked for the issue, and wrote nothing.
    expect(after.map((r) => r.method)).toEqual(["GET"]);
    expect(existsSync(join(artifacts, "gate-verdicts", "ppg-vs-zone-700.json"))).toBe(true);
  });
});
