/**
 * The scheduled workflow's own jobs, run here the way ci.yml's rehearsal jobs run them on GitHub:
 * latlab-measure.yml's and latlab-history.yml's steps (scheduled.yml calls them), their `${{ }}`
 * expressions and `if:`s, with the inputs ci.yml passes (`rehearse: true`), executed step by step
 * by tests/integration/workflowRunner.ts. So the exact commands the weekly job runs — `latlab
 * ci-matrix`, `latlab run … --target azure --yes --max-cost … --time-limit … --rehearse` in the
 * background behind its signal traps, `latlab destroy`, `latlab sweep --github-run … --delete`,
 * `latlab report --markdown`, `latlab history add` and the git plumbing of the history branch — are
 * run for real, against latlab's Azure emulator and a local bare repository as `origin`. Actions
 * (`uses:`) are played by handlers: checkout and setup-node are what this test set up, artifacts
 * are folders.
 *
 * And what GitHub does to a job, played against the rehearsal: a cancel (SIGINT to the run step's
 * shell, SIGTERM 7.5 s later, then a kill; then the always() steps within GitHub's allowance and
 * the cleanup job), and a runner that vanishes mid-`up` (everything of the job SIGKILLed, its
 * Pulumi state gone with it; the cleanup job on another runner; the hourly sweep).
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { mkdtemp } from "node:fs/promises";
import { emulatorNamespacePrefix, startEmulator } from "../../src/targets/azure/emulator/emulator.ts";
import { ArmClient } from "../../src/targets/azure/emulator/provider/armClient.ts";
import { EMULATOR_HOME_PREFIX } from "../../src/targets/azure/emulator/rehearsal.ts";
import { R } from "./azureEmulatorHelpers.ts";
import { pulumiBinDir } from "./pulumiCli.ts";
import { tempDirs } from "../tempDirs.ts";
import { CANCELLED_STEPS_SECONDS, runJob, type ActionHandler, type JobOptions, type JobResult, type Value, type Workflow } from "./workflowRunner.ts";

const tempDir = tempDirs();
const ROOT = resolve(import.meta.dirname, "../..");
type Inputs = { inputs: Record<string, { default?: Value }> };
const workflow = (file: string) => parse(readFileSync(join(ROOT, ".github/workflows", file), "utf8")) as Workflow & { on: { workflow_call?: Inputs; workflow_dispatch?: Inputs } };
const measureWorkflow = workflow("latlab-measure.yml");
const historyWorkflow = workflow("latlab-history.yml");
const sweepWorkflow = workflow("latlab-sweep.yml");
const ci = parse(readFileSync(join(ROOT, ".github/workflows/ci.yml"), "utf8")) as { jobs: Record<string, { uses?: string; with?: Record<string, Value> }> };

const git = (cwd: string, ...args: string[]) => {
  const r = spawnSync("git", args, { cwd, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
  return r.stdout.trim();
};

/** Every file under a folder, relative. */
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => statSync(join(dir, f)).isFile());

/** A called workflow's inputs as a caller's `with:` sets them, over their defaults. */
const inputsOf = (w: typeof measureWorkflow, given: Record<string, Value> = {}): Record<string, Value> => ({ ...Object.fromEntries(Object.entries((w.on.workflow_call ?? w.on.workflow_dispatch)!.inputs).map(([k, v]) => [k, v.default ?? ""])), ...given });

const failedSteps = (r: JobResult) => r.steps.filter((s) => s.conclusion === "failure").map((s) => `${s.label} (exit ${s.code}):\n${s.stdout}\n${s.stderr}`);

/** The emulator folders of rehearsals on this machine (where `latlab sweep --rehearse` looks). */
const emulatorHomes = () => readdirSync(tmpdir()).filter((f) => f.startsWith("latlab-azemu-")).map((f) => join(tmpdir(), f));
const netnsWith = (prefix: string) => spawnSync("ip", ["netns", "list"], { encoding: "utf8" }).stdout.split("\n").filter((l) => l.startsWith(prefix));

/**
 * A user's project (latlab installed from this checkout, a git repository with an `origin`), the
 * GitHub contexts of one workflow run, and handlers for the actions the jobs use.
 */
function project(runId: string) {
  const base = tempDir("latlab-wf-");
  const workspace = join(base, "workspace");
  mkdirSync(join(workspace, "node_modules", ".bin"), { recursive: true });
  writeFileSync(join(workspace, "package.json"), `${JSON.stringify({ name: "measurements", private: true, type: "module", dependencies: { latlab: `file:${ROOT}` } }, null, 2)}\n`);
  symlinkSync(ROOT, join(workspace, "node_modules", "latlab"));
  symlinkSync(join(ROOT, "bin", "latlab.js"), join(workspace, "node_modules", ".bin", "latlab"));
  writeFileSync(join(workspace, ".gitignore"), "node_modules/\nresults/\n");
  // The project's own experiment (a copy of latlab's ppg-vs-zone, which it shadows): with no names,
  // the plan lists the project's experiments only.
  mkdirSync(join(workspace, "experiments"));
  cpSync(join(ROOT, "experiments", "ppg-vs-zone.ts"), join(workspace, "experiments", "ppg-vs-zone.ts"));
  const origin = join(base, "origin.git");
  spawnSync("git", ["init", "-q", "--bare", origin]);
  git(workspace, "init", "-q", "-b", "main");
  git(workspace, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "--allow-empty", "-m", "project");
  git(workspace, "add", ".");
  git(workspace, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "latlab");
  git(workspace, "remote", "add", "origin", origin);
  git(workspace, "push", "-q", "origin", "main");

  const artifacts = join(base, "artifacts");
  const { LATLAB_HISTORY: _testHistory, ...inherited } = process.env;
  const env: Record<string, string> = {
    ...(inherited as Record<string, string>),
    PATH: `${pulumiBinDir()}:${process.env.PATH ?? ""}`,
    // npx must use the project's latlab and never ask a registry for one.
    npm_config_offline: "true",
    HOME: join(base, "home"),
  };
  mkdirSync(env.HOME!, { recursive: true });
  const actions: Record<string, ActionHandler> = {
    "actions/checkout": ({ with: w }) => ({ ok: w["persist-credentials"] === "false" }),
    "actions/setup-node": () => ({ ok: true }),
    "actions/upload-artifact": ({ with: w, workspace: ws }) => {
      // A trailing * makes the folder holding the matches the artifact's root (as GitHub does).
      const pattern = w["path"]!;
      const dir = join(ws, dirname(pattern));
      const prefix = basename(pattern).replace(/\*$/, "");
      const matched = existsSync(dir) ? readdirSync(dir).filter((f) => f.startsWith(prefix)) : [];
      const target = join(artifacts, runId, w["name"]!);
      if (matched.length && w["overwrite"] === "true") rmSync(target, { recursive: true, force: true });
      for (const m of matched) cpSync(join(dir, m), join(target, m), { recursive: true });
      return { ok: matched.length > 0 || w["if-no-files-found"] === "warn" };
    },
    // As actions/download-artifact does (src/download-artifact.ts @ 3e5f45b, l. 189-193): one
    // artifact — by name, or the only one a pattern matched — or merge-multiple: its contents
    // straight into path; several by pattern: a folder per artifact.
    "actions/download-artifact": ({ with: w, workspace: ws }) => {
      const from = join(artifacts, w["run-id"] || runId);
      if (!existsSync(from)) return { ok: !w["name"] };
      const names = readdirSync(from).filter((n) => (w["pattern"] ? new RegExp(`^${w["pattern"].replace(/\*/g, ".*")}$`).test(n) : n === w["name"]));
      const flat = names.length === 1 || w["merge-multiple"] === "true";
      for (const n of names) cpSync(join(from, n), flat ? join(ws, w["path"]!) : join(ws, w["path"]!, n), { recursive: true });
      // A name that matches nothing fails; a pattern that matches nothing does not.
      return { ok: names.length > 0 || !w["name"] };
    },
  };
  const github = { run_id: runId, run_attempt: "1", repository: "example/measurements", token: "not-a-token", event_name: "workflow_call" };
  const npmCi = (script: string) => script.trim() === "npm ci --no-audit --no-fund";
  /** A job's options on a runner of its own ($RUNNER_TEMP: a new one for each runner). */
  const runner = (name: string) => {
    const temp = join(base, `runner-${name}`);
    mkdirSync(temp, { recursive: true });
    return (inputs: Record<string, Value>, more: Partial<JobOptions["contexts"]> = {}, extra: Partial<JobOptions> = {}): JobOptions => ({
      contexts: { inputs, github, vars: {}, runner: { temp }, ...more },
      workspace,
      env,
      actions,
      skipScript: npmCi,
      tempDir: join(base, `gh-${name}`),
      ...extra,
    });
  };
  return { base, workspace, origin, artifacts, env, runner, uploaded: (experiment: string) => join(artifacts, runId, `latlab-${experiment}`) };
}

/** What the rehearsal left: emulator folders of this run's state, their namespaces. */
function leftOfRun(stateRoot: string): string[] {
  const left: string[] = [];
  for (const run of existsSync(stateRoot) ? readdirSync(stateRoot) : []) {
    const file = join(stateRoot, run, "state.json");
    if (!existsSync(file)) continue;
    const state = JSON.parse(readFileSync(file, "utf8")) as { rehearsal?: { emulatorHome: string } };
    const home = state.rehearsal?.emulatorHome;
    if (!home) continue;
    if (existsSync(home)) left.push(`emulator folder ${home}`);
    left.push(...netnsWith(emulatorNamespacePrefix(home)).map((n) => `namespace ${n}`));
  }
  return left;
}

/** The plan job, and the matrix entry of one experiment. */
function planFor(p: ReturnType<typeof project>, inputs: Record<string, Value>, experiment: string) {
  const plan = runJob(measureWorkflow, "plan", p.runner("plan")(inputs));
  expect(failedSteps(plan)).toEqual([]);
  const matrix = JSON.parse(plan.jobOutputs["matrix"]!) as { include: Record<string, Value>[] };
  const entry = matrix.include.find((e) => e["experiment"] === experiment);
  if (!entry) throw new Error(`${experiment} is not in the matrix: ${plan.jobOutputs["matrix"]}`);
  return { plan, matrix, entry, needs: { plan: { result: "success", outputs: plan.jobOutputs } } };
}

describe("the scheduled workflow's jobs, rehearsed as ci.yml calls them: the weekly job's exact commands, here", () => {
  const call = ci.jobs["rehearse-measure"]!;
  const inputs = inputsOf(measureWorkflow, call.with);

  it("ci.yml calls the measuring and history workflows with rehearse: true", () => {
    expect(call.uses).toBe("./.github/workflows/latlab-measure.yml");
    expect(inputs["rehearse"]).toBe(true);
    expect(ci.jobs["rehearse-history"]!.uses).toBe("./.github/workflows/latlab-history.yml");
    expect(ci.jobs["rehearse-history"]!.with).toEqual({ rehearse: true });
  });

  it("plan → measure (one experiment) → cleanup → history: the run measures every cell, tears down, summarises, uploads no secret, and its results reach the history branch", () => {
    const runId = "4242";
    const p = project(runId);
    const { matrix, entry, needs } = planFor(p, inputs, "ppg-vs-zone");
    // The project's own experiments only: latlab's built-ins run in a project only when named.
    expect(matrix.include.map((e) => e["experiment"])).toEqual(["ppg-vs-zone"]);
    // latlab's own limit < the run step's timeout < the job's.
    expect(Number(entry["timeLimitMinutes"])).toBeLessThan(Number(entry["stepTimeoutMinutes"]));
    expect(Number(entry["stepTimeoutMinutes"])).toBeLessThan(Number(entry["timeoutMinutes"]));

    // measure, for one entry of the matrix (the commands are the same for every entry).
    const measureRunner = p.runner("measure");
    const measure = runJob(measureWorkflow, "measure", measureRunner(inputs, { matrix: entry, needs }));
    expect(measure.skipped).toBe(false);
    expect(failedSteps(measure)).toEqual([]);
    expect(measure.skippedScripts).toEqual(["npm ci --no-audit --no-fund"]);
    const byLabel = (label: string) => measure.steps.find((s) => s.label === label)!;
    expect(measure.outputs["run"]).toEqual({ "exit-code": "0" });
    for (const label of ["Run the experiment", "Upload the results", "Clean up", "Upload the results again", "Summary", "Verdict"]) expect(byLabel(label).outcome, label).toBe("success");
    expect(byLabel("Verdict").stdout).toContain("ppg-vs-zone: ok");
    // No Azure: no previous run to download or compare with.
    for (const label of ["Download the previous run's results", "Compare with the previous run"]) expect(byLabel(label).outcome, label).toBe("skipped");
    expect(measure.summary).toMatch(/^## ✅ ppg-vs-zone on azure: complete/m);
    expect(measure.summary).toContain("rehearsal:");
    expect(measure.summary).toContain("```mermaid");

    // The artifact: the results folder, complete, and nothing secret in it.
    const uploaded = p.uploaded("ppg-vs-zone");
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
    // The run's state (keys, passphrase) went to $RUNNER_TEMP, not into the workspace; nothing of the emulator is left.
    const stateRoot = join(measureRunner(inputs).contexts.runner["temp"] as string, "latlab-state");
    expect(readdirSync(stateRoot).length).toBeGreaterThan(0);
    expect(leftOfRun(stateRoot)).toEqual([]);

    // cleanup: the run tore down itself, so there is nothing of it to delete.
    const cleanup = runJob(measureWorkflow, "cleanup", p.runner("cleanup")(inputs, { needs: { ...needs, measure: { result: "success" } } }));
    expect(failedSteps(cleanup)).toEqual([]);
    expect(cleanup.summary).toContain(runId);

    // The regression check as a later weekly job runs it, with this run as the previous one (a
    // rehearsal reads no history, so the step is run alone, with what its earlier steps give).
    // It stands for an earlier week's run with the same numbers: a run of its own (latlab compare
    // refuses a run compared with itself), so the copy gets another run id.
    const previous = join(p.workspace, "previous", `ppg-vs-zone-${Number(runId) - 1}`);
    cpSync(join(uploaded, `ppg-vs-zone-${runId}`), previous, { recursive: true });
    const previousResults = JSON.parse(readFileSync(join(previous, "results.json"), "utf8")) as { runId: string };
    writeFileSync(join(previous, "results.json"), JSON.stringify({ ...previousResults, runId: `${previousResults.runId}-previous-week` }, null, 2));
    const compare = runJob(measureWorkflow, "measure", {
      ...measureRunner(inputs, { matrix: entry, needs }),
      only: { names: ["Compare with the previous run", "Verdict"], steps: { download: { outcome: "success", conclusion: "success", outputs: {} }, previous: { outcome: "success", conclusion: "success", outputs: { "run-id": String(Number(runId) - 1) } }, run: { outcome: "success", conclusion: "success", outputs: { "exit-code": "0" } } } },
    });
    expect(failedSteps(compare)).toEqual([]);
    expect(compare.outputs["compare"]).toEqual({ "exit-code": "0" });
    expect(compare.summary).toMatch(/run \S+ against run \S+ — regression: worse by more than 20% with a 95% CI excluding 0/);
    expect(compare.summary).toContain("no regression beyond 20%");

    // history: this run's artifacts into the branch latlab-history (committed, not pushed in a rehearsal).
    const historyRunner = p.runner("history");
    const history = runJob(historyWorkflow, "history", historyRunner(inputsOf(historyWorkflow, ci.jobs["rehearse-history"]!.with)));
    expect(failedSteps(history)).toEqual([]);
    const add = history.steps.find((s) => s.label === "Add them to the history and push it")!;
    expect(add.stdout).toContain("rehearsal: the history was committed locally and is not pushed");
    expect(git(p.workspace, "ls-remote", "--heads", "origin")).not.toContain("latlab-history");
    const branchDir = join(historyRunner({}).contexts.runner["temp"] as string, "latlab-history");
    expect(git(branchDir, "log", "--format=%s", "-n", "1")).toContain(`workflow run ${runId}`);
    // The token reached git on the command line only: nothing of it in the repository's config.
    expect(readFileSync(join(p.workspace, ".git", "config"), "utf8")).not.toMatch(/extraheader|not-a-token/i);
    const listed = spawnSync(process.execPath, [join(ROOT, "bin/latlab.js"), "history", "ppg-vs-zone", "--history", join(branchDir, "history.duckdb"), "--json"], { encoding: "utf8" });
    expect(listed.status, listed.stderr).toBe(0);
    const runs = JSON.parse(listed.stdout) as { facts: Record<string, string>; status: string }[];
    expect(runs.map((r) => [r.facts["github.runId"], r.status])).toEqual([[runId, "complete"]]);
    // Then `latlab gate` judged the run against the history it was added to (its only run: learning),
    // into the summary and the artifact gate-verdicts; the trend page was built and, in a rehearsal, not uploaded for Pages.
    expect(history.outputs["gate"]).toEqual({ verdicts: "1" });
    expect(history.summary).toMatch(/^### ppg-vs-zone/m);
    expect(history.summary).toMatch(/learning \(0 of 5\)/);
    expect(readdirSync(join(p.artifacts, runId, "gate-verdicts", "verdicts")).sort()).toEqual([`ppg-vs-zone-${runId}.json`, `ppg-vs-zone-${runId}.md`]);
    expect(existsSync(join(p.workspace, "site", "index.html"))).toBe(true);
    expect(history.jobOutputs).toEqual({ verdicts: "1", pages: "" });
    expect(history.steps.find((s) => s.label === "Upload the trend page for GitHub Pages")!.outcome).toBe("skipped");
  }, 1_800_000);

  it("a cancelled run (SIGINT to the run step's shell, SIGTERM 7.5 s later, then a kill): latlab hears it, the always() steps upload and clean up within GitHub's allowance, the cleanup job finds nothing left, and the artifact holds what was measured", () => {
    const runId = "4343";
    const p = project(runId);
    // Tool runs long enough that the cancel lands while the hosts measure.
    const cancelInputs = { ...inputs, duration: "20s" };
    const { entry, needs } = planFor(p, cancelInputs, "ppg-vs-zone");
    const measureRunner = p.runner("measure");
    const out = join(p.workspace, "results", `ppg-vs-zone-${runId}`);
    const measure = runJob(measureWorkflow, "measure", {
      // Every ARM operation of the emulator takes 2 s: the teardown outlasts the 7.5 s before
      // GitHub's SIGTERM, so the hand-over is what happens, as with a real Azure teardown.
      ...measureRunner(cancelInputs, { matrix: entry, needs }, { env: { ...p.env, LATLAB_EMULATOR_DELAY_MS: "2000" } }),
      // Cancelled once a tool has run on the hosts: its raw output is in the results folder.
      interrupt: { step: "Run the experiment", mode: "cancel", poll: `find ${JSON.stringify(out)}/raw -type f -size +0 2>/dev/null | grep -q .` },
      afterCancelSeconds: CANCELLED_STEPS_SECONDS,
    });
    const events = measure.interruptEvents.map((e) => e.what);
    expect(events[0]).toMatch(/^poll/);
    expect(events.slice(1, 3)).toEqual(["SIGINT to the step's shell", "SIGTERM to the step's shell"]);
    // latlab ended before the runner's kill: it heard the signals and did not leave it to SIGKILL.
    const exited = events.findIndex((e) => e.startsWith("exited"));
    expect(exited).toBeGreaterThan(0);
    expect(events.slice(0, exited)).not.toContain("SIGKILL to the process group");
    expect(measure.cancelled).toBe(true);
    const byLabel = (label: string) => measure.steps.find((s) => s.label === label)!;
    expect(byLabel("Run the experiment").outcome).toBe("cancelled");
    expect(byLabel("Run the experiment").stdout).toContain("run step: INT received: passing it to latlab");
    expect(byLabel("Run the experiment").stdout).toContain("run step: TERM received: passing it to latlab");
    // After the cancel: the always() steps, and only those.
    for (const label of ["Upload the results", "Clean up", "Upload the results again", "Summary"]) expect(byLabel(label).outcome, `${label}: ${byLabel(label).stderr}`).toBe("success");
    expect(byLabel("Compare with the previous run").outcome).toBe("skipped");
    expect(byLabel("Verdict").outcome).toBe("failure");
    expect(byLabel("Verdict").stdout).toMatch(/::error::ppg-vs-zone: (the run was cancelled|run interrupted|partial run)/);

    // The artifact has results.json with what was measured before the cancel.
    // Uploaded again after the cleanup step's `latlab destroy` finished the teardown latlab handed over.
    const results = JSON.parse(readFileSync(join(p.uploaded("ppg-vs-zone"), `ppg-vs-zone-${runId}`, "results.json"), "utf8")) as { status: string; stopped?: { by: string }; teardown: { status: string; handedOver?: { signal: string } } };
    expect(["interrupted", "partial"]).toContain(results.status);
    expect(results.stopped?.by).toBe("signal");
    expect(results.teardown.handedOver?.signal).toBe("SIGTERM");
    expect(results.teardown.status).toBe("ok");
    // Nothing of the run is left once the job's steps are done…
    const stateRoot = join(measureRunner({}).contexts.runner["temp"] as string, "latlab-state");
    expect(leftOfRun(stateRoot)).toEqual([]);
    // …and the cleanup job (needs: measure, if: always()) runs after a cancelled job and finds nothing.
    const cleanup = runJob(measureWorkflow, "cleanup", p.runner("cleanup")(inputs, { needs: { ...needs, measure: { result: "cancelled" } } }));
    expect(cleanup.skipped).toBe(false);
    expect(failedSteps(cleanup)).toEqual([]);
  }, 1_800_000);

  it("a runner that vanishes mid-`up` (everything of the job SIGKILLed, its Pulumi state with it): the cleanup job deletes the run's groups by their tags, and the hourly sweep deletes an expired group", async () => {
    const runId = "4444";
    const p = project(runId);
    // A run of an earlier week whose cleanup never happened: its emulator (the "subscription") holds
    // its group, tagged as latlab tags it, expired an hour ago; the runner that made it is gone.
    const leakedHome = await mkdtemp(join(tmpdir(), EMULATOR_HOME_PREFIX));
    const leakedGroup = "latlab-leaked-earlier";
    {
      const emulator = await startEmulator({ home: leakedHome });
      const tags = { owner: "latlab", runId: "leaked-earlier", experiment: "ppg-vs-zone", createdAt: new Date(Date.now() - 7 * 86_400_000).toISOString(), expiresAt: new Date(Date.now() - 3_600_000).toISOString(), githubRunId: "4000", githubRunAttempt: "1", githubRepository: "example/measurements" };
      await new ArmClient(emulator.socketPath).put(`/subscriptions/${emulator.subscription}/resourceGroups/${leakedGroup}`, R, { location: "eastus", tags });
      await emulator.stop({ keepState: true });
    }
    const { entry, needs } = planFor(p, inputs, "ppg-vs-zone");
    const measureRunner = p.runner("measure");
    const runnerTemp = measureRunner({}).contexts.runner["temp"] as string;
    const homesBefore = new Set(emulatorHomes());
    const measure = runJob(measureWorkflow, "measure", {
      ...measureRunner(inputs, { matrix: entry, needs }),
      // Mid-`up`: the emulator has been asked for a VM.
      interrupt: {
        step: "Run the experiment",
        mode: "vanish",
        poll: `home=$(jq -r '.rehearsal.emulatorHome // empty' "$RUNNER_TEMP"/latlab-state/*/state.json 2>/dev/null | head -n 1); [ -n "$home" ] && grep -qs '"method":"PUT","type":"Microsoft.Compute/virtualMachines"' "$home/operations.jsonl"`,
      },
    });
    expect(measure.vanished).toBe(true);
    // Nothing after the run step ran: the machine is gone.
    const ran = measure.steps.filter((s) => s.outcome !== "skipped").map((s) => s.label);
    expect(ran.at(-1)).toBe("Run the experiment");
    expect(ran).not.toContain("Upload the results");
    // What the run left: its emulator (ARM state, VMs), and no one to tear it down.
    const home = emulatorHomes().find((h) => !homesBefore.has(h));
    expect(home, "the vanished run's emulator folder").toBeDefined();
    expect(netnsWith(emulatorNamespacePrefix(home!)).length).toBeGreaterThan(0);
    // The runner is gone, and its Pulumi state with it.
    rmSync(runnerTemp, { recursive: true, force: true });

    const cleanup = runJob(measureWorkflow, "cleanup", p.runner("cleanup")(inputs, { needs: { ...needs, measure: { result: "failure" } } }));
    expect(failedSteps(cleanup)).toEqual([]);
    expect(cleanup.summary).toContain(`latlab-`);
    expect(existsSync(home!), `${home} after the cleanup job`).toBe(false);
    expect(netnsWith(emulatorNamespacePrefix(home!))).toEqual([]);
    // Another run's group is not this run's cleanup's business, expired or not.
    expect(existsSync(join(leakedHome, "state.json")), "the earlier run's emulator after this run's cleanup").toBe(true);
    expect(cleanup.summary).not.toContain(leakedGroup);

    // The hourly sweep (latlab-sweep.yml, rehearsed): the expired group goes, and says so.
    const sweep = runJob(sweepWorkflow, "sweep", p.runner("sweep")(inputsOf(sweepWorkflow, { rehearse: true })));
    expect(failedSteps(sweep)).toEqual([]);
    expect(sweep.summary).toContain(leakedGroup);
    expect(sweep.summary).toMatch(/deleted/);
    expect(existsSync(leakedHome), `${leakedHome} after the hourly sweep`).toBe(false);
    expect(netnsWith(emulatorNamespacePrefix(leakedHome))).toEqual([]);
  }, 1_800_000);
});
