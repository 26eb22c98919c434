/**
 * The scheduled workflow's own jobs, run here the way ci.yml's `rehearse-scheduled` job runs them
 * on GitHub: scheduled.yml's steps, its `${{ }}` expressions and `if:`s, with the inputs ci.yml
 * passes (`rehearse: true`), executed step by step by tests/integration/workflowRunner.ts. So the
 * exact commands the weekly job runs — `latlab ci-matrix`, `latlab run … --target azure --yes
 * --max-cost … --quiet --ssh-from auto --install-pulumi --duration … --rehearse`, `latlab destroy`,
 * `latlab report --markdown`, `latlab history add` and the git plumbing of the history branch —
 * are run for real, against latlab's Azure emulator and a local bare repository as `origin`.
 * Actions (`uses:`) are played by handlers: checkout and setup-node are what this test set up,
 * artifacts are folders, azure/login must never be reached in a rehearsal.
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { emulatorNamespacePrefix } from "../../src/targets/azure/emulator/emulator.ts";
import { pulumiBinDir } from "./pulumiCli.ts";
import { tempDirs } from "../tempDirs.ts";
import { runJob, type ActionHandler, type JobOptions, type Value, type Workflow } from "./workflowRunner.ts";

const tempDir = tempDirs();
const ROOT = resolve(import.meta.dirname, "../..");
const scheduled = parse(readFileSync(join(ROOT, ".github/workflows/scheduled.yml"), "utf8")) as Workflow & { on: { workflow_call: { inputs: Record<string, { default?: Value }> } } };
const ci = parse(readFileSync(join(ROOT, ".github/workflows/ci.yml"), "utf8")) as { jobs: Record<string, { uses?: string; with?: Record<string, Value> }> };

const git = (cwd: string, ...args: string[]) => {
  const r = spawnSync("git", args, { cwd, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
  return r.stdout.trim();
};

/** Every file under a folder, relative. */
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => statSync(join(dir, f)).isFile());

describe("scheduled.yml, rehearsed as ci.yml calls it: the weekly job's exact commands, here", () => {
  const call = ci.jobs["rehearse-scheduled"]!;
  const inputs: Record<string, Value> = Object.fromEntries(Object.entries(scheduled.on.workflow_call.inputs).map(([k, v]) => [k, v.default ?? ""]));
  Object.assign(inputs, call.with);

  it("ci.yml calls this workflow with rehearse: true", () => {
    expect(call.uses).toBe("./.github/workflows/scheduled.yml");
    expect(inputs["rehearse"]).toBe(true);
  });

  it("plan → measure (one experiment) → history: the run measures every cell, tears down, summarises, uploads no secret, and its results reach the history branch", () => {
    const base = tempDir("latlab-wf-");
    // A user's project: latlab installed (this checkout), a git repository with an `origin`.
    const workspace = join(base, "workspace");
    mkdirSync(join(workspace, "node_modules", ".bin"), { recursive: true });
    writeFileSync(join(workspace, "package.json"), `${JSON.stringify({ name: "measurements", private: true, type: "module", dependencies: { latlab: `file:${ROOT}` } }, null, 2)}\n`);
    symlinkSync(ROOT, join(workspace, "node_modules", "latlab"));
    symlinkSync(join(ROOT, "bin", "latlab.js"), join(workspace, "node_modules", ".bin", "latlab"));
    writeFileSync(join(workspace, ".gitignore"), "node_modules/\nresults/\n");
    const origin = join(base, "origin.git");
    spawnSync("git", ["init", "-q", "--bare", origin]);
    git(workspace, "init", "-q", "-b", "main");
    git(workspace, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "--allow-empty", "-m", "project");
    git(workspace, "add", ".");
    git(workspace, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "latlab");
    git(workspace, "remote", "add", "origin", origin);
    git(workspace, "push", "-q", "origin", "main");

    const runnerTemp = join(base, "runner-temp");
    mkdirSync(runnerTemp);
    const artifacts = join(base, "artifacts");
    const runId = "4242";
    const { LATLAB_HISTORY: _testHistory, ...inherited } = process.env;
    const env: Record<string, string> = {
      ...(inherited as Record<string, string>),
      PATH: `${pulumiBinDir()}:${process.env.PATH ?? ""}`,
      // npx must use the project's latlab and never ask a registry for one.
      npm_config_offline: "true",
      HOME: join(base, "home"),
    };
    mkdirSync(env.HOME!, { recursive: true });
    const loginCalls: string[] = [];
    const actions: Record<string, ActionHandler> = {
      "actions/checkout": () => ({ ok: true }),
      "actions/setup-node": () => ({ ok: true }),
      "azure/login": ({ step }) => {
        loginCalls.push(step.name ?? "azure/login");
        return { ok: false };
      },
      "actions/upload-artifact": ({ with: w, workspace: ws }) => {
        // A trailing * makes the folder holding the matches the artifact's root (as GitHub does).
        const pattern = w["path"]!;
        const dir = join(ws, dirname(pattern));
        const prefix = basename(pattern).replace(/\*$/, "");
        const matched = existsSync(dir) ? readdirSync(dir).filter((f) => f.startsWith(prefix)) : [];
        for (const m of matched) cpSync(join(dir, m), join(artifacts, runId, w["name"]!, m), { recursive: true });
        return { ok: matched.length > 0 || w["if-no-files-found"] === "warn" };
      },
      "actions/download-artifact": ({ with: w, workspace: ws }) => {
        const from = join(artifacts, w["run-id"] || runId);
        if (!existsSync(from)) return { ok: false };
        const names = readdirSync(from).filter((n) => (w["pattern"] ? new RegExp(`^${w["pattern"].replace(/\*/g, ".*")}$`).test(n) : n === w["name"]));
        for (const n of names) cpSync(join(from, n), w["pattern"] ? join(ws, w["path"]!, n) : join(ws, w["path"]!), { recursive: true });
        return { ok: names.length > 0 };
      },
    };
    const contexts: JobOptions["contexts"] = {
      inputs,
      github: { run_id: runId, repository: "example/measurements", token: "not-a-token", event_name: "workflow_call" },
      vars: {},
      runner: { temp: runnerTemp },
    };
    const npmCi = (script: string) => script.trim() === "npm ci --no-audit --no-fund";
    const options = (more: Partial<JobOptions["contexts"]>): JobOptions => ({ contexts: { ...contexts, ...more }, workspace, env, actions, skipScript: npmCi, tempDir: join(base, "gh") });
    const failedSteps = (r: ReturnType<typeof runJob>) => r.steps.filter((s) => s.conclusion === "failure").map((s) => `${s.label} (exit ${s.code}):\n${s.stdout}\n${s.stderr}`);

    // plan: every experiment that fits a hosted runner's 6 h, with its timeout.
    const plan = runJob(scheduled, "plan", options({}));
    expect(failedSteps(plan)).toEqual([]);
    const matrix = JSON.parse(plan.jobOutputs["matrix"]!) as { include: { experiment: string; timeoutMinutes: number }[] };
    const names = matrix.include.map((e) => e.experiment);
    // 1 s per tool run: even the 11-hour zone-region-baseline fits a hosted runner's 6 h here.
    expect([...names].sort()).toEqual(readdirSync(join(ROOT, "experiments")).map((f) => f.replace(/\.ts$/, "")).sort());
    expect(plan.jobOutputs["count"]).toBe(String(names.length));
    expect(plan.jobOutputs["duration"]).toBe("1");
    const entry = matrix.include.find((e) => e.experiment === "ppg-vs-zone")!;
    expect(entry.timeoutMinutes).toBeGreaterThan(20);

    // measure, for one entry of the matrix (the commands are the same for every entry).
    const needsPlan = { plan: { result: "success", outputs: plan.jobOutputs } };
    const measure = runJob(scheduled, "measure", options({ matrix: entry, needs: needsPlan }));
    expect(measure.skipped).toBe(false);
    expect(failedSteps(measure)).toEqual([]);
    expect(loginCalls).toEqual([]);
    expect(measure.skippedScripts).toEqual(["npm ci --no-audit --no-fund"]);
    const byLabel = (label: string) => measure.steps.find((s) => s.label === label)!;
    expect(measure.outputs["run"]).toEqual({ "exit-code": "0" });
    expect(byLabel("Run the experiment").outcome).toBe("success");
    expect(byLabel("Clean up").outcome).toBe("success");
    expect(byLabel("Summary").outcome).toBe("success");
    expect(byLabel("Verdict").outcome).toBe("success");
    expect(byLabel("Verdict").stdout).toContain("ppg-vs-zone: ok");
    // No Azure: no login, no previous run to download or compare with.
    for (const label of ["Azure login (OpenID Connect)", "Download the previous run's results", "Compare with the previous run"]) expect(byLabel(label).outcome, label).toBe("skipped");
    expect(measure.summary).toMatch(/^## ✅ ppg-vs-zone on azure: complete/m);
    expect(measure.summary).toContain("rehearsal:");
    expect(measure.summary).toContain("```mermaid");

    // The artifact: the results folder, complete, and nothing secret in it.
    const uploaded = join(artifacts, runId, "latlab-ppg-vs-zone");
    expect(readdirSync(uploaded)).toEqual([`ppg-vs-zone-${runId}`]);
    const files = filesUnder(uploaded);
    expect(files).toContain(`ppg-vs-zone-${runId}/results.json`);
    const results = JSON.parse(readFileSync(join(uploaded, `ppg-vs-zone-${runId}`, "results.json"), "utf8")) as { status: string; teardown: { status: string }; environment: { facts: Record<string, string> } };
    expect(results.status).toBe("complete");
    expect(results.teardown.status).toBe("ok");
    expect(results.environment.facts["github.runId"]).toBe(runId);
    expect(results.environment.facts["github.repository"]).toBe("example/measurements");
    for (const f of files) {
      const content = readFileSync(join(uploaded, f), "utf8");
      expect(content, f).not.toMatch(/PRIVATE KEY|passphrase"\s*:\s*"[^"]/);
    }
    // The run's state (keys, passphrase) went to $RUNNER_TEMP, not into the workspace.
    expect(existsSync(join(runnerTemp, "latlab-state"))).toBe(true);

    // Nothing of the emulator is left.
    const stateRoot = join(runnerTemp, "latlab-state");
    for (const run of readdirSync(stateRoot)) {
      const state = JSON.parse(readFileSync(join(stateRoot, run, "state.json"), "utf8")) as { rehearsal?: { emulatorHome: string } };
      const home = state.rehearsal!.emulatorHome;
      expect(existsSync(home), home).toBe(false);
      const prefix = emulatorNamespacePrefix(home);
      expect(spawnSync("ip", ["netns", "list"], { encoding: "utf8" }).stdout.split("\n").filter((l) => l.startsWith(prefix))).toEqual([]);
    }

    // The regression check as a later weekly job runs it, with this run as the previous one (a
    // rehearsal reads no history, so the step is run alone, with what its earlier steps give).
    const previous = join(workspace, "previous", `ppg-vs-zone-${Number(runId) - 1}`);
    cpSync(join(uploaded, `ppg-vs-zone-${runId}`), previous, { recursive: true });
    const compare = runJob(scheduled, "measure", {
      ...options({ matrix: entry, needs: needsPlan }),
      only: { names: ["Compare with the previous run", "Verdict"], steps: { download: { outcome: "success", conclusion: "success", outputs: {} }, previous: { outcome: "success", conclusion: "success", outputs: { "run-id": String(Number(runId) - 1) } }, run: { outcome: "success", conclusion: "success", outputs: { "exit-code": "0" } } } },
    });
    expect(failedSteps(compare)).toEqual([]);
    expect(compare.outputs["compare"]).toEqual({ "exit-code": "0" });
    expect(compare.summary).toMatch(/run \S+ against run \S+ — regression: worse by more than 20% with a 95% CI excluding 0/);
    expect(compare.summary).toContain("no regression beyond 20%");

    // history: this run's artifacts into the branch latlab-history (committed, not pushed in a rehearsal).
    const history = runJob(scheduled, "history", options({ needs: { ...needsPlan, measure: { result: "success" } } }));
    expect(failedSteps(history)).toEqual([]);
    const add = history.steps.find((s) => s.label === "Add them to the history and push it")!;
    expect(add.stdout).toContain("rehearsal: the history was committed locally and is not pushed");
    expect(git(workspace, "ls-remote", "--heads", "origin")).not.toContain("latlab-history");
    const branchFile = join(runnerTemp, "latlab-history", "history.duckdb");
    expect(git(join(runnerTemp, "latlab-history"), "log", "--format=%s", "-n", "1")).toContain(`workflow run ${runId}`);
    const listed = spawnSync(process.execPath, [join(ROOT, "bin/latlab.js"), "history", "ppg-vs-zone", "--history", branchFile, "--json"], { encoding: "utf8" });
    expect(listed.status, listed.stderr).toBe(0);
    const runs = JSON.parse(listed.stdout) as { facts: Record<string, string>; status: string }[];
    expect(runs.map((r) => [r.facts["github.runId"], r.status])).toEqual([[runId, "complete"]]);
  }, 1_800_000);
});
