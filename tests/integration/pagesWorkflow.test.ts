/**
 * The trend page's way to GitHub Pages, played step by step by workflowRunner.ts as GitHub's runner
 * would run it: latlab-history.yml's job `history` builds the page from a history (the committed
 * real run tests/fixtures/runs/ppg-vs-zone, recorded with `latlab history add`) with the variable
 * LATLAB_PAGES=true in a real run (not a rehearsal) and uploads it with
 * actions/upload-pages-artifact; scheduled.yml's job `pages` deploys it with actions/deploy-pages;
 * its output page-url reaches the job `alerts`, whose issue body links the page.
 *
 * The two actions are played by handlers that do what their sources at the SHAs the workflows pin
 * do (checked below: a new pin means reading the sources again):
 * - actions/upload-pages-artifact action.yml @ fc324d3547104276b827a68afc52ff2a11cc49c9 (v5.0.0):
 *   inputs name (default github-pages), path (default _site/), retention-days (1),
 *   include-hidden-files (false); its Linux step runs `tar --dereference --hard-dereference
 *   --directory "$INPUT_PATH" -cvf "$RUNNER_TEMP/artifact.tar" --exclude=.git --exclude=.github
 *   --exclude=.[^/]* .` and uploads that one file with actions/upload-artifact under the name,
 *   if-no-files-found: error. Its README, "Artifact validation": the tar must "not contain any
 *   symbolic or hard links" and "contain only files and directories".
 * - actions/deploy-pages action.yml, src/index.js, src/internal/{context,deployment,api-client}.js
 *   @ cd2ce8fcbc39b97be8ca5fce6e763baed58fa128 (v5.0.0): input artifact_name (default
 *   github-pages); fails with `Ensure GITHUB_TOKEN has permission "id-token: write".` when it gets
 *   no OIDC token, with `... Ensure GITHUB_TOKEN has permission "pages: write".` on a 403; exactly
 *   one artifact of that name in the workflow run ("No artifacts named …" / "Multiple artifacts
 *   named …"); Pages refuses content with links (deployment_content_failed: "Please ensure the
 *   content does not contain any hard links, symlinks …"); output page_url. Its README, "Security
 *   Considerations": the job needs `pages: write` and `id-token: write`, and should target the
 *   environment `github-pages`.
 *
 * No root, no network: latlab runs from this checkout (as in alertsWorkflow.test.ts), the GitHub
 * API of the job `alerts` is a fake curl on PATH that records what would be sent.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { ALERT_VERDICTS, gate } from "../../src/history/gate.ts";
import { tempDirs } from "../tempDirs.ts";
import { runJob, type ActionHandler, type JobResult, type Workflow } from "./workflowRunner.ts";

const tempDir = tempDirs();
const ROOT = resolve(import.meta.dirname, "../..");
const readWorkflow = (file: string) => parse(readFileSync(join(ROOT, ".github/workflows", file), "utf8")) as PagesWorkflow;
const REPOSITORY = "example/measurements";
/** What Pages answers for a project site (deploy-pages' output page_url). */
const PAGE_URL = "https://example.github.io/measurements/";
const UPLOAD_PAGES_ARTIFACT = "actions/upload-pages-artifact@fc324d3547104276b827a68afc52ff2a11cc49c9";
const DEPLOY_PAGES = "actions/deploy-pages@cd2ce8fcbc39b97be8ca5fce6e763baed58fa128";

/** The keys the runner does not play, read here from the YAML: a job's permissions and environment. */
type PagesWorkflow = Workflow & { jobs: Record<string, Workflow["jobs"][string] & { permissions?: Record<string, string>; environment?: { name: string; url?: string } }> };

/** The artifacts of one workflow run: name → the folders uploaded under it (more than one: deploy-pages refuses). */
type Artifacts = Map<string, string[]>;

/** actions/upload-pages-artifact @ fc324d3 (see the top): tar the folder, upload the one file. */
function uploadPagesArtifact(runnerTemp: string, store: string, artifacts: Artifacts): ActionHandler {
  return ({ with: w, workspace }) => {
    const input = { name: "github-pages", path: "_site/", "include-hidden-files": "false", ...w };
    mkdirSync(runnerTemp, { recursive: true });
    const tarFile = join(runnerTemp, "artifact.tar");
    const hidden = input["include-hidden-files"] !== "true" ? ["--exclude=.[^/]*"] : [];
    // A composite action's steps run in the workspace, as `run:` steps do.
    const tar = spawnSync("tar", ["--dereference", "--hard-dereference", "--directory", input.path, "-cvf", tarFile, "--exclude=.git", "--exclude=.github", ...hidden, "."], { cwd: workspace, encoding: "utf8" });
    if (tar.status !== 0 || !existsSync(tarFile)) return { ok: false };
    // actions/upload-artifact, if-no-files-found: error (the tar is there): one artifact holding artifact.tar.
    const uploaded = join(store, `${input.name}-${(artifacts.get(input.name) ?? []).length}`);
    mkdirSync(uploaded, { recursive: true });
    copyFileSync(tarFile, join(uploaded, "artifact.tar"));
    artifacts.set(input.name, [...(artifacts.get(input.name) ?? []), uploaded]);
    return { ok: true, outputs: { artifact_id: String([...artifacts.values()].flat().length) } };
  };
}

/** What Pages would serve from an artifact.tar: its entries (name, tar's type letter). */
function entriesOf(tarFile: string): { name: string; type: string }[] {
  const names = spawnSync("tar", ["-tf", tarFile], { encoding: "utf8" }).stdout.split("\n").filter(Boolean);
  const types = spawnSync("tar", ["-tvf", tarFile], { encoding: "utf8" }).stdout.split("\n").filter(Boolean).map((l) => l[0]!);
  return names.map((name, i) => ({ name, type: types[i]! }));
}

/** actions/deploy-pages @ cd2ce8f (see the top), for the job `jobId` of `workflow`: what it deployed is pushed on `deployed`. */
function deployPages(workflow: PagesWorkflow, jobId: string, artifacts: Artifacts, deployed: string[], log: string[]): ActionHandler {
  return ({ with: w }) => {
    const permissions = workflow.jobs[jobId]!.permissions ?? {};
    if (permissions["id-token"] !== "write") return (log.push('Ensure GITHUB_TOKEN has permission "id-token: write".'), { ok: false });
    if (permissions["pages"] !== "write") return (log.push('Failed to create deployment (status: 403). Ensure GITHUB_TOKEN has permission "pages: write".'), { ok: false });
    const name = w["artifact_name"] || "github-pages";
    const found = artifacts.get(name) ?? [];
    if (found.length === 0) return (log.push(`No artifacts named "${name}" were found for this workflow run.`), { ok: false });
    if (found.length > 1) return (log.push(`Multiple artifacts named "${name}" were unexpectedly found for this workflow run. Artifact count is ${found.length}.`), { ok: false });
    const tarFile = join(found[0]!, "artifact.tar");
    // Pages' own check of the content (deployment_content_failed): only files and directories.
    if (!existsSync(tarFile) || entriesOf(tarFile).some((e) => e.type !== "-" && e.type !== "d")) return (log.push("Artifact could not be deployed. Please ensure the content does not contain any hard links, symlinks and total size is less than 10GB."), { ok: false });
    deployed.push(tarFile);
    return { ok: true, outputs: { page_url: PAGE_URL } };
  };
}

let recordedHistory: string;
beforeAll(() => {
  // The history the job finds on its runner: the committed real run, recorded as the job records runs.
  const base = tempDir("latlab-pages-history-");
  recordedHistory = join(base, "history.duckdb");
  const added = spawnSync(process.execPath, [join(ROOT, "bin/latlab.js"), "history", "add", join(ROOT, "tests/fixtures/runs/ppg-vs-zone"), "--history", recordedHistory], { encoding: "utf8" });
  expect(added.status, added.stderr).toBe(0);
});

interface Played {
  history: JobResult;
  pages: JobResult;
  artifacts: Artifacts;
  deployed: string[];
  deployLog: string[];
  workspace: string;
}

/** The history job's trend-page steps, then scheduled.yml's job pages on what they uploaded. */
function play(history: PagesWorkflow = readWorkflow("latlab-history.yml"), scheduled: PagesWorkflow = readWorkflow("scheduled.yml"), prepare?: (workspace: string) => void): Played {
  const base = tempDir("latlab-pages-");
  // The history job's runner: latlab installed in the workspace, the history branch's file.
  const workspace = join(base, "workspace");
  mkdirSync(join(workspace, "node_modules", ".bin"), { recursive: true });
  symlinkSync(ROOT, join(workspace, "node_modules", "latlab"));
  symlinkSync(join(ROOT, "bin", "latlab.js"), join(workspace, "node_modules", ".bin", "latlab"));
  writeFileSync(join(workspace, "package.json"), JSON.stringify({ name: "measurements", private: true, dependencies: { latlab: `file:${ROOT}` } }));
  prepare?.(workspace);
  const runnerTemp = join(base, "runner");
  mkdirSync(join(runnerTemp, "latlab-history"), { recursive: true });
  copyFileSync(recordedHistory, join(runnerTemp, "latlab-history", "history.duckdb"));
  const artifacts: Artifacts = new Map();
  const github = { run_id: "900", run_attempt: "1", repository: REPOSITORY, token: "not-a-token", event_name: "schedule" };
  const env = { PATH: process.env["PATH"] ?? "/usr/bin:/bin", HOME: base, npm_config_offline: "true" };
  const historyJob = runJob(history, "history", {
    contexts: { inputs: { rehearse: false }, github, vars: { LATLAB_PAGES: "true", AZURE_CLIENT_ID: "x" }, runner: { temp: runnerTemp, os: "Linux" } },
    workspace,
    env,
    actions: { "actions/upload-pages-artifact": uploadPagesArtifact(runnerTemp, join(base, "artifacts"), artifacts) },
    tempDir: join(base, "gh-history"),
    only: { names: ["Build the trend page", "Upload the trend page for GitHub Pages"], steps: {} },
  });
  // The pages job runs on a runner of its own: nothing of the history job's workspace but the artifact.
  const deployed: string[] = [];
  const deployLog: string[] = [];
  const pagesRunner = join(base, "pages-runner");
  mkdirSync(pagesRunner);
  const pagesJob = runJob(scheduled, "pages", {
    contexts: { inputs: {}, needs: { history: { result: historyJob.failed ? "failure" : "success", outputs: historyJob.jobOutputs } }, github, vars: { LATLAB_PAGES: "true", AZURE_CLIENT_ID: "x" }, runner: { temp: join(pagesRunner, "temp"), os: "Linux" } },
    workspace: pagesRunner,
    env,
    actions: { "actions/deploy-pages": deployPages(scheduled, "pages", artifacts, deployed, deployLog) },
    tempDir: join(base, "gh-pages"),
  });
  return { history: historyJob, pages: pagesJob, artifacts, deployed, deployLog, workspace };
}

/** What is wrong with the deployed site for a trend page: nothing when it is index.html (and folders). */
function problemsOf(p: Played): string[] {
  if (p.deployed.length !== 1) return [`deployed ${p.deployed.length} artifacts`];
  const entries = entriesOf(p.deployed[0]!);
  const problems = entries.filter((e) => e.type !== "-" && e.type !== "d").map((e) => `${e.name}: not a file or a folder (${e.type})`);
  if (!entries.some((e) => e.name === "./index.html" && e.type === "-")) problems.push("no index.html at the top");
  return problems;
}

const stepOf = (r: JobResult, label: string) => r.steps.find((s) => s.label === label)!;
const mutate = (workflow: PagesWorkflow, change: (w: PagesWorkflow) => void) => {
  const copy = structuredClone(workflow);
  change(copy);
  return copy;
};

describe("the trend page on GitHub Pages: latlab-history.yml uploads it, scheduled.yml's job pages deploys it", () => {
  it("pins the action versions whose sources the handlers follow, and grants Pages' permissions to the job pages only", () => {
    const history = readWorkflow("latlab-history.yml");
    const scheduled = readWorkflow("scheduled.yml");
    const uses = (w: PagesWorkflow) => Object.values(w.jobs).flatMap((j) => (j.steps ?? []).map((s) => s.uses).filter(Boolean));
    // A new version: read its action.yml (and deploy-pages' src/) again and update the handlers.
    expect(uses(history)).toContain(UPLOAD_PAGES_ARTIFACT);
    expect(uses(scheduled)).toContain(DEPLOY_PAGES);
    const upload = history.jobs["history"]!.steps.find((s) => s.uses === UPLOAD_PAGES_ARTIFACT)!;
    // The default artifact name github-pages, which deploy-pages' default artifact_name looks for.
    expect(upload.with).toEqual({ path: "site/" });
    expect(scheduled.jobs["pages"]!.steps.find((s) => s.uses === DEPLOY_PAGES)!.with).toBeUndefined();
    // deploy-pages README, "Security Considerations": these two, and the environment github-pages.
    expect(scheduled.jobs["pages"]!.permissions).toEqual({ pages: "write", "id-token": "write" });
    expect(scheduled.jobs["pages"]!.environment).toEqual({ name: "github-pages", url: "${{ steps.deployment.outputs.page_url }}" });
    // pages: write in that job only (issue 24, item 4).
    const others = [...Object.entries(scheduled.jobs).filter(([id]) => id !== "pages"), ...Object.entries(history.jobs)];
    expect(others.filter(([, j]) => j.permissions?.["pages"] !== undefined).map(([id]) => id)).toEqual([]);
  });

  it("uploads site/ as the tar upload-pages-artifact makes (index.html, no link), deploys it, and hands the page's URL to the job alerts, whose issue links it", () => {
    const played = play();
    const build = stepOf(played.history, "Build the trend page");
    expect(build.outcome, `${build.stdout}\n${build.stderr}`).toBe("success");
    expect(stepOf(played.history, "Upload the trend page for GitHub Pages").outcome).toBe("success");
    expect(played.history.jobOutputs["pages"]).toBe("true");
    // One artifact, github-pages, holding one file: artifact.tar.
    expect([...played.artifacts.keys()]).toEqual(["github-pages"]);
    // The job pages ran, deployed that artifact, and its output is deploy-pages' page_url.
    expect(played.pages.skipped).toBe(false);
    expect(played.pages.failed, played.deployLog.join("\n")).toBe(false);
    expect(played.deployed).toEqual([join(played.artifacts.get("github-pages")![0]!, "artifact.tar")]);
    expect(played.pages.jobOutputs).toEqual({ "page-url": PAGE_URL });
    // What Pages serves: the page latlab wrote, alone.
    expect(problemsOf(played)).toEqual([]);
    expect(entriesOf(played.deployed[0]!).map((e) => e.name)).toEqual(["./", "./index.html"]);
    const served = spawnSync("tar", ["-xOf", played.deployed[0]!, "./index.html"], { encoding: "utf8" }).stdout;
    expect(served).toBe(readFileSync(join(played.workspace, "site", "index.html"), "utf8"));
    expect(served).toMatch(/^<!doctype html>/i);
    expect(served).toContain("ppg-vs-zone");

    // The job alerts, after both (needs: [history, pages]), on a regression verdict: its issue
    // links the page by the URL the job pages put out. GitHub's API is a fake curl that records.
    const base = tempDir("latlab-pages-alerts-");
    const bin = join(base, "bin");
    mkdirSync(bin);
    const sent = join(base, "sent.jsonl");
    writeFileSync(
      join(bin, "curl"),
      `#!${process.execPath}
const fs = require("node:fs");
const args = process.argv.slice(2);
const method = args[args.indexOf("-X") + 1], url = args.at(-1);
const body = args.includes("--data-binary") ? fs.readFileSync(0, "utf8") : null;
fs.appendFileSync(${JSON.stringify(sent)}, JSON.stringify({ method, url, body }) + "\\n");
if (method === "GET" && /\\/labels\\//.test(url)) { process.stdout.write('{"message":"Not Found"}'); process.exit(22); }
process.stdout.write(method === "GET" ? "[]" : method === "POST" && /\\/issues$/.test(url) ? '{"number":7}' : "{}");
`,
    );
    chmodSync(join(bin, "curl"), 0o755);
    const report = gate({ runId: "run-9", startedAt: "2026-01-20T00:00:00.000Z", headlines: [{ variant: "ppg", measure: "0", pair: "a→b", metric: "rtt", unit: "us", statistic: "mean", value: 150 }] }, [99, 101, 100, 102, 98, 100].map((value, i) => ({ runId: `prev-${i}`, startedAt: new Date(Date.UTC(2026, 0, i + 1)).toISOString(), headlines: [{ variant: "ppg", measure: "0", pair: "a→b", metric: "rtt", unit: "us", statistic: "mean", value }] })));
    const regressions = report.checks.filter((c) => ALERT_VERDICTS.includes(c.verdict)).length;
    expect(regressions).toBe(1);
    const verdicts = join(base, "gate-verdicts");
    mkdirSync(verdicts);
    writeFileSync(join(verdicts, "ppg-vs-zone-run-9.json"), JSON.stringify({ experiment: "ppg-vs-zone", runId: "run-9", regressions, learning: false, report, comparable: { used: report.previousRuns, excluded: [] } }));
    const scheduled = readWorkflow("scheduled.yml");
    const alerts = runJob(scheduled, "alerts", {
      contexts: {
        inputs: {},
        // The history job's outputs as it put them out (its gate steps were not played here: one verdict).
        needs: { history: { result: "success", outputs: { ...played.history.jobOutputs, verdicts: "1" } }, pages: { result: "success", outputs: played.pages.jobOutputs } },
        github: { run_id: "900", repository: REPOSITORY, token: "not-a-token", api_url: "https://api.example", server_url: "https://github.com" },
        runner: { temp: join(base, "runner") },
      },
      workspace: base,
      env: { PATH: `${bin}:${process.env["PATH"] ?? "/usr/bin:/bin"}`, HOME: base },
      actions: {
        "actions/download-artifact": ({ with: w, workspace }) => {
          cpSync(verdicts, join(workspace, w["path"]!), { recursive: true });
          return { ok: w["name"] === "gate-verdicts" };
        },
      },
      tempDir: join(base, "gh"),
    });
    const script = stepOf(alerts, "Open, update or close the regression issues");
    expect(alerts.failed, `${script.stdout}\n${script.stderr}`).toBe(false);
    expect(script.stdout).toContain("ppg-vs-zone: regression (1); opened issue #7");
    const requests = readFileSync(sent, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { method: string; url: string; body: string | null });
    const opened = requests.find((r) => r.method === "POST" && r.url === `https://api.example/repos/${REPOSITORY}/issues`)!;
    expect((JSON.parse(opened.body!) as { body: string }).body).toContain(`Trend page: ${PAGE_URL}`);
  });

  it("fails when the upload is skipped, when the folder uploaded has no index.html, or when the job pages lacks a permission the deploy needs", () => {
    const history = readWorkflow("latlab-history.yml");
    const scheduled = readWorkflow("scheduled.yml");
    const uploadStep = (w: PagesWorkflow) => w.jobs["history"]!.steps.find((s) => s.name === "Upload the trend page for GitHub Pages")!;

    // The upload step skipped (its condition false) while the build says pages=true: nothing to deploy.
    const skipped = play(mutate(history, (w) => (uploadStep(w).if = false)));
    expect(stepOf(skipped.history, "Upload the trend page for GitHub Pages").outcome).toBe("skipped");
    expect(skipped.pages.failed).toBe(true);
    expect(skipped.deployLog).toEqual(['No artifacts named "github-pages" were found for this workflow run.']);
    expect(skipped.pages.jobOutputs["page-url"]).toBe("");
    expect(problemsOf(skipped)).toEqual(["deployed 0 artifacts"]);

    // The page written elsewhere, and site/ holding something else: Pages takes it, the check does not.
    const elsewhere = play(
      mutate(history, (w) => {
        const build = w.jobs["history"]!.steps.find((s) => s.name === "Build the trend page")!;
        build.run = build.run!.replace("--out site", "--out trend");
      }),
      scheduled,
      (workspace) => {
        mkdirSync(join(workspace, "site"));
        writeFileSync(join(workspace, "site", "stale.html"), "<!doctype html><title>stale</title>");
      },
    );
    expect(elsewhere.pages.failed).toBe(false);
    expect(problemsOf(elsewhere)).toEqual(["no index.html at the top"]);

    // No folder at all: upload-pages-artifact's tar fails.
    const none = play(mutate(history, (w) => (uploadStep(w).with = { path: "nowhere/" })));
    expect(stepOf(none.history, "Upload the trend page for GitHub Pages").outcome).toBe("failure");
    expect(none.pages.skipped || none.pages.failed).toBe(true);

    // Without id-token: write, or without pages: write, deploy-pages fails as its sources say.
    const noIdToken = play(history, mutate(scheduled, (w) => delete w.jobs["pages"]!.permissions!["id-token"]));
    expect(noIdToken.pages.failed).toBe(true);
    expect(noIdToken.deployLog).toEqual(['Ensure GITHUB_TOKEN has permission "id-token: write".']);
    const noPages = play(history, mutate(scheduled, (w) => delete w.jobs["pages"]!.permissions!["pages"]));
    expect(noPages.deployLog[0]).toMatch(/"pages: write"/);
  });
});
