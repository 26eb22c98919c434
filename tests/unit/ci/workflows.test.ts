import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { buildProgram } from "../../../src/cli/main.ts";
import { scaffold } from "../../../src/cli/init/scaffold.ts";
import { LATLAB_WORKFLOW_FILES } from "../../../src/cli/init/templates.ts";
import { CI_SETUP_MARGIN_MINUTES } from "../../../src/cli/run/ciMatrix.ts";

/**
 * The GitHub workflows (.github/workflows/): the properties that keep them safe and correct, read
 * from the YAML — no GitHub needed — and actionlint's verdict on them.
 */

const ROOT = resolve(import.meta.dirname, "../../..");
const WORKFLOWS = join(ROOT, ".github/workflows");

type Dict = Record<string, unknown>;
interface Step {
  name?: string;
  id?: string;
  if?: string;
  uses?: string;
  run?: string;
  shell?: string;
  with?: Dict;
  env?: Dict;
  "continue-on-error"?: boolean;
}
interface Job {
  "runs-on"?: string;
  environment?: string | { name?: string; url?: string };
  needs?: string | string[];
  if?: string;
  uses?: string;
  with?: Dict;
  permissions?: Dict;
  strategy?: { matrix?: unknown; "max-parallel"?: number; "fail-fast"?: boolean };
  "timeout-minutes"?: unknown;
  concurrency?: { group?: string; "cancel-in-progress"?: boolean };
  outputs?: Dict;
  env?: Dict;
  steps?: Step[];
}
interface Workflow {
  on: Dict;
  permissions?: Dict;
  defaults?: { run?: { shell?: string } };
  jobs: Record<string, Job>;
}

const text = (file: string) => readFileSync(join(WORKFLOWS, file), "utf8");
const load = (file: string) => parse(text(file)) as Workflow;
const WORKFLOW_FILES = ["scheduled.yml", "latlab-measure.yml", "latlab-history.yml", "latlab-sweep.yml", "ci.yml"] as const;
const workflows = Object.fromEntries(WORKFLOW_FILES.map((f) => [f, load(f)])) as Record<(typeof WORKFLOW_FILES)[number], Workflow>;
const scheduled = workflows["scheduled.yml"];
const measureFile = workflows["latlab-measure.yml"];
const historyFile = workflows["latlab-history.yml"];
const sweepFile = workflows["latlab-sweep.yml"];
const ci = workflows["ci.yml"];

const steps = (w: Workflow) => Object.entries(w.jobs).flatMap(([job, j]) => (j.steps ?? []).map((s) => ({ job, ...s })));
const runSteps = (w: Workflow) => steps(w).filter((s): s is typeof s & { run: string } => typeof s.run === "string");
const allRunSteps = Object.entries(workflows).flatMap(([file, w]) => runSteps(w).map((s) => ({ file, ...s })));
const allSteps = Object.entries(workflows).flatMap(([file, w]) => steps(w).map((s) => ({ file, ...s })));
const measure = measureFile.jobs["measure"]!;
const step = (job: Job, name: string) => {
  const found = job.steps?.find((s) => s.name === name);
  if (!found) throw new Error(`no step "${name}"`);
  return found;
};

/** A `npx latlab …` command in a run: script, with the options it passes (those in arrays expanded after it included). */
interface LatlabCall {
  line: string;
  words: string[];
  options: string[];
}

/** Every `npx latlab <subcommand> …` (or `node "$latlab_bin" <subcommand> …`) in a script, continuation lines joined. */
function latlabCalls(script: string): LatlabCall[] {
  const joined = script.replace(/\s*\\\n\s*/g, " ");
  // Arrays a script builds and expands into a command: `rehearse_flag=(--rehearse)` … `"${rehearse_flag[@]}"`.
  const arrays = new Map<string, string[]>();
  for (const m of joined.matchAll(/(\w+)=\(([^)]*)\)/g)) arrays.set(m[1]!, [...(arrays.get(m[1]!) ?? []), ...m[2]!.split(/\s+/).filter(Boolean)]);
  const calls: LatlabCall[] = [];
  for (const line of joined.split("\n")) {
    // `npx latlab …`, or the package's bin run by node (the run step: npx would not pass signals on).
    for (const m of line.matchAll(/(?:npx latlab|node "\$latlab_bin") ([^|;&>]*)/g)) {
      const rest = m[1]!;
      const words = rest.split(/\s+/).filter(Boolean).map((w) => w.replace(/^["']|["']$/g, ""));
      const expanded = [...rest.matchAll(/"\$\{(\w+)\[@\]\}"/g)].flatMap((a) => arrays.get(a[1]!) ?? []);
      const options = [...words, ...expanded].filter((w) => /^--?[A-Za-z][\w-]*$/.test(w));
      calls.push({ line: line.trim(), words, options });
    }
  }
  return calls;
}

/** The command a call names (a subcommand of a subcommand too: `history add`), or why there is none. */
function findCommand(program: Command, words: readonly string[]): { command?: Command; path: string } {
  let command: Command = program;
  const path: string[] = [];
  for (const word of words) {
    if (word.startsWith("-")) break;
    const sub = command.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (!sub) {
      // An argument (an experiment, a folder) once the command is found; a missing command otherwise.
      if (command === program) return { path: word };
      break;
    }
    command = sub;
    path.push(word);
  }
  return { command, path: path.join(" ") };
}

const hasOption = (command: Command, flag: string) => command.options.some((o) => o.long === flag || o.short === flag);

type Inputs = Record<string, { type?: string; default?: unknown }>;

describe("scheduled.yml: the triggers, calling the measuring and history workflows", () => {
  const on = scheduled.on as { schedule: { cron: string }[]; workflow_dispatch: { inputs: Inputs }; workflow_call?: unknown };
  const callInputs = (measureFile.on as { workflow_call: { inputs: Inputs } }).workflow_call.inputs;
  const INPUTS = ["experiments", "duration", "max-cost", "max-total-cost", "regression-threshold", "runner"];

  it("runs weekly and by hand with the inputs; it is not itself callable (the rehearsal calls latlab-measure.yml)", () => {
    expect(on.schedule).toHaveLength(1);
    // minute hour * * weekday: once a week.
    expect(on.schedule[0]!.cron).toMatch(/^\d{1,2} \d{1,2} \* \* [0-6]$/);
    // fail-on-regression is the alerts job's, not the measuring workflow's.
    expect(Object.keys(on.workflow_dispatch.inputs)).toEqual([...INPUTS, "fail-on-regression"]);
    expect(on.workflow_dispatch.inputs["fail-on-regression"]).toMatchObject({ type: "choice", default: "false" });
    expect(on.workflow_call).toBeUndefined();
    expect(Object.keys(callInputs)).toEqual([...INPUTS, "rehearse"]);
    expect(callInputs["rehearse"]).toMatchObject({ type: "boolean", default: false });
  });

  it("passes each input, falling back (a scheduled run has none) to the same default the dispatch form and the called workflow show", () => {
    const withs = scheduled.jobs["measure"]!.with!;
    for (const name of INPUTS) {
      const fallback = String(on.workflow_dispatch.inputs[name]!.default);
      expect(withs[name], name).toBe(`\${{ inputs.${name} || '${fallback}' }}`);
      expect(String(callInputs[name]!.default), name).toBe(fallback);
    }
    expect(withs["rehearse"]).toBe(false);
  });

  it("grants nothing at the top; the measuring call gets id-token, contents read and actions read; only the history call writes", () => {
    expect(scheduled.permissions).toEqual({});
    expect(scheduled.jobs["measure"]).toMatchObject({ uses: "./.github/workflows/latlab-measure.yml", permissions: { "contents": "read", "id-token": "write", "actions": "read" } });
    expect(scheduled.jobs["history"]).toMatchObject({ uses: "./.github/workflows/latlab-history.yml", needs: "measure", if: "always() && vars.AZURE_CLIENT_ID != ''", with: { rehearse: false } });
    expect(scheduled.jobs["history"]!.permissions).toEqual({ contents: "write" });
    expect(scheduled.jobs["alerts"]!.permissions).toEqual({ issues: "write" });
    expect(scheduled.jobs["pages"]!.permissions).toEqual({ "pages": "write", "id-token": "write" });
    // A project not yet set up for Azure (fresh from `latlab init`) does not fail every week.
    expect(scheduled.jobs["measure"]!.if).toBe("vars.AZURE_CLIENT_ID != ''");
  });
});

describe("issues and Pages: one job each, in scheduled.yml (never in a workflow ci.yml's rehearsal calls)", () => {
  /** Every job of every workflow (a call included, its `permissions:` being its grant), with its permissions. */
  const grants = Object.entries(workflows).flatMap(([file, w]) => [
    ...(w.permissions ? [{ where: `${file} (top)`, permissions: w.permissions }] : []),
    ...Object.entries(w.jobs).map(([job, j]) => ({ where: `${file} ${job}`, permissions: j.permissions ?? {} })),
  ]);

  it("only the job alerts has issues: write, only the job pages has pages: write; neither has anything else", () => {
    expect(grants.filter((g) => "issues" in g.permissions).map((g) => g.where)).toEqual(["scheduled.yml alerts"]);
    expect(grants.filter((g) => "pages" in g.permissions).map((g) => g.where)).toEqual(["scheduled.yml pages"]);
    // Not in latlab-history.yml: ci.yml calls it, and a called job asking for more than its caller grants fails the run at start-up.
    for (const w of [historyFile, measureFile]) for (const job of Object.values(w.jobs)) expect(job.permissions).toBeUndefined();
  });

  it("alerts: after the history job (and the page, for its link), only when runs were judged; no checkout, no npm: the verdicts artifact, then curl and jq against $GITHUB_API_URL", () => {
    const alerts = scheduled.jobs["alerts"]!;
    expect(alerts.needs).toEqual(["history", "pages"]);
    expect(alerts.if).toBe("${{ !cancelled() && needs.history.outputs.verdicts != '' && needs.history.outputs.verdicts != '0' }}");
    expect(alerts.env).toEqual({ FAIL_ON_REGRESSION: "${{ inputs.fail-on-regression || 'false' }}", TREND_URL: "${{ needs.pages.outputs.page-url }}" });
    expect(alerts.steps!.map((s) => s.uses?.replace(/@.*/, "") ?? s.name)).toEqual(["actions/download-artifact", "Open, update or close the regression issues"]);
    expect(alerts.steps![0]!.with).toEqual({ name: "gate-verdicts", path: "verdicts/" });
    const script = step(alerts, "Open, update or close the regression issues");
    expect(script.env).toEqual({ GH_TOKEN: "${{ github.token }}" });
    // GitHub's (or GitHub Enterprise Server's) API as the runner names it; a test points it at a fake.
    expect(script.run).toContain('repo_api="$GITHUB_API_URL/repos/$GITHUB_REPOSITORY"');
    expect(script.run).toContain('run_url="$GITHUB_SERVER_URL/$GITHUB_REPOSITORY/actions/runs/$GITHUB_RUN_ID"');
    expect(script.run).not.toMatch(/api\.github\.com|\bgh (api|issue)\b/);
    // The token in a header file curl reads (bash's builtin printf in a process substitution), never on a command line.
    expect(script.run!.match(/GH_TOKEN/g)).toHaveLength(1);
    expect(script.run).toContain(`-H @<(printf 'Authorization: Bearer %s\\n' "$GH_TOKEN")`);
    // The job fails on a regression only when asked.
    expect(script.run).toMatch(/if \[ "\$\{#regressed\[@\]\}" -gt 0 \] && \[ "\$FAIL_ON_REGRESSION" = true \]; then[^\n]*\n[^\n]*::error::[^\n]*\n\s*exit 1/);
  });

  it("pages: deploys the page the history job uploaded, in the environment github-pages, and runs nothing else", () => {
    const pages = scheduled.jobs["pages"]!;
    expect(pages.needs).toBe("history");
    expect(pages.if).toBe("${{ !cancelled() && needs.history.outputs.pages == 'true' }}");
    expect(pages.environment).toEqual({ name: "github-pages", url: "${{ steps.deployment.outputs.page_url }}" });
    expect(pages.outputs).toEqual({ "page-url": "${{ steps.deployment.outputs.page_url }}" });
    expect(pages.steps!.map((s) => s.uses?.replace(/@.*/, ""))).toEqual(["actions/deploy-pages"]);
  });
});

describe("the reusable workflows: no job asks for a permission, so each gets exactly its caller's grant", () => {
  it("latlab-measure.yml and latlab-history.yml are only called, and none of their jobs declares permissions (a called job asking for more than its caller grants fails the whole run at start-up)", () => {
    for (const w of [measureFile, historyFile]) {
      expect(Object.keys(w.on)).toEqual(["workflow_call"]);
      expect(w.permissions).toBeUndefined();
      for (const [name, job] of Object.entries(w.jobs)) expect(job.permissions, name).toBeUndefined();
    }
  });

  it("ci.yml's rehearsals are granted no id-token: the pull request's code gets no token to exchange", () => {
    expect(ci.jobs["rehearse-measure"]).toMatchObject({ uses: "./.github/workflows/latlab-measure.yml", with: { rehearse: true }, permissions: { contents: "read", actions: "read" } });
    expect(ci.jobs["rehearse-history"]).toMatchObject({ uses: "./.github/workflows/latlab-history.yml", with: { rehearse: true }, permissions: { contents: "read" } });
    for (const [name, job] of Object.entries(ci.jobs)) expect(job.permissions?.["id-token"], name).toBeUndefined();
  });

  it("the jobs that reach Azure run in the environment latlab-azure (the federated credential names it), a rehearsal in none", () => {
    const azureJobs = [measure, measureFile.jobs["cleanup"]!, sweepFile.jobs["sweep"]!];
    for (const job of azureJobs) expect(job.environment).toBe("${{ !inputs.rehearse && 'latlab-azure' || '' }}");
    expect(measureFile.jobs["plan"]!.environment).toBeUndefined();
    expect(historyFile.jobs["history"]!.environment).toBeUndefined();
  });

  it("no Azure CLI login anywhere: latlab and Pulumi renew their OIDC tokens themselves (ARM_USE_OIDC), and nothing is a secret but the optional remote Pulumi backend's passphrase and SAS", () => {
    expect(allSteps.filter((s) => s.uses?.startsWith("azure/login"))).toEqual([]);
    for (const file of WORKFLOW_FILES) {
      const yaml = text(file);
      expect(yaml, file).not.toMatch(/client-secret|\bcreds\b/);
      expect([...yaml.matchAll(/secrets\.(\w+)/g)].map((m) => m[1]).filter((n) => n !== "LATLAB_PULUMI_PASSPHRASE" && n !== "LATLAB_PULUMI_BACKEND_SAS"), file).toEqual([]);
    }
    for (const s of [step(measure, "Run the experiment"), step(measure, "Clean up"), step(measureFile.jobs["cleanup"]!, "Delete this workflow run's resource groups"), step(sweepFile.jobs["sweep"]!, "Delete expired latlab resource groups")]) {
      expect(s.run, s.name).toContain('export ARM_USE_OIDC=true ARM_CLIENT_ID="$OIDC_CLIENT_ID" ARM_TENANT_ID="$OIDC_TENANT_ID"');
      expect(s.env, s.name).toMatchObject({ OIDC_CLIENT_ID: "${{ vars.AZURE_CLIENT_ID }}", OIDC_TENANT_ID: "${{ vars.AZURE_TENANT_ID }}" });
    }
  });
});

describe("latlab-measure.yml", () => {
  it("reads the duration input as the user wrote it: 1 and 2x are factors (2x stays 2x, never 2xx), 30s is seconds", () => {
    const script = step(measureFile.jobs["plan"]!, "Experiments, their limits and the budget").run!;
    // The workflow's own case block, run by bash as the runner runs it.
    const block = /^\s*case "\$DURATION" in[\s\S]*?^\s*esac$/m.exec(script)![0];
    const asRun = (value: string) => execFileSync("bash", ["-c", `${block}\nprintf %s "$duration"`], { env: { DURATION: value }, encoding: "utf8" });
    expect(["1", "2x", "0.5", "30s"].map(asRun)).toEqual(["1x", "2x", "0.5x", "30"]);
  });

  it("plans with `latlab ci-matrix` under both budgets; a refusal (exit 3) lets the others run and makes the run red through the job `refused`", () => {
    const plan = measureFile.jobs["plan"]!;
    expect(plan.outputs).toMatchObject({ matrix: "${{ steps.matrix.outputs.matrix }}", refused: "${{ steps.matrix.outputs.refused }}" });
    const script = step(plan, "Experiments, their limits and the budget").run!;
    expect(script).toContain('matrix=$(npx latlab ci-matrix "${names[@]}" --duration "$duration" --target azure --max-cost "$MAX_COST" --max-total-cost "$MAX_TOTAL_COST" "${runner_flag[@]}") || code=$?');
    expect(script).toContain("runner_flag=(--self-hosted)");
    expect(script).toMatch(/3\) refused=1 ;;/);
    expect(measureFile.jobs["refused"]).toMatchObject({ needs: "plan", if: "needs.plan.outputs.refused == '1'" });
    expect(measure.needs).toBe("plan");
    expect(measure.strategy).toEqual({ "matrix": "${{ fromJSON(needs.plan.outputs.matrix) }}", "max-parallel": 2, "fail-fast": false });
    expect(measure["runs-on"]).toBe("${{ inputs.runner || 'ubuntu-latest' }}");
    // A real run's concurrency group is exactly latlab-<experiment>; only a rehearsal gets one of its own.
    expect(measure.concurrency).toEqual({ "group": "latlab-${{ matrix.experiment }}${{ inputs.rehearse && format('-rehearsal-{0}', github.run_id) || '' }}", "cancel-in-progress": false });
  });

  it("three limits, each inside the next: latlab's own --time-limit, the run step's timeout-minutes, the job's", () => {
    expect(measure["timeout-minutes"]).toBe("${{ matrix.timeoutMinutes }}");
    const run = step(measure, "Run the experiment") as Step & { "timeout-minutes"?: string };
    expect(run["timeout-minutes"]).toBe("${{ matrix.stepTimeoutMinutes }}");
    expect(run.env).toMatchObject({ TIME_LIMIT: "${{ matrix.timeLimitMinutes }}" });
    const [call, ...more] = latlabCalls(run.run!);
    expect(more).toEqual([]);
    expect(call!.line).toBe(
      '"${as_root[@]}" node "$latlab_bin" run "$EXPERIMENT" --target azure --yes --max-cost "$MAX_COST" --quiet --ssh-from auto --install-pulumi --duration "$DURATION_ARG" --time-limit "$TIME_LIMIT" --out "$OUT" "${rehearse_flag[@]}" > "$log" 2>&1 &',
    );
    // The only differences of a rehearsal: --rehearse, and root (sudo) when not root already.
    expect(run.run).toContain("rehearse_flag=(--rehearse)");
    expect(run.run).toMatch(/if \[ "\$\(id -u\)" != 0 \]; then as_root=\(sudo -E env "PATH=\$PATH" HOME=\/root\); fi/);
    expect(measure.env).toMatchObject({ EXPERIMENT: "${{ matrix.experiment }}", OUT: "results/${{ matrix.experiment }}-${{ github.run_id }}" });
  });

  it("the run step passes GitHub's SIGINT and SIGTERM on to latlab and records latlab's own exit code (its script, run by bash with a stand-in for latlab's bin)", () => {
    const script = step(measure, "Run the experiment").run!;
    const dir = mkdtempSync(join(tmpdir(), "latlab-trap-"));
    try {
      // A stand-in for latlab's bin, where the step finds it (node_modules/latlab, package.json "bin"):
      // it logs the signals it gets and exits as latlab would (130 after SIGINT's teardown, 143 on SIGTERM).
      mkdirSync(join(dir, "node_modules", "latlab"), { recursive: true });
      writeFileSync(join(dir, "node_modules", "latlab", "package.json"), JSON.stringify({ name: "latlab", bin: { latlab: "stub.cjs" } }));
      writeFileSync(join(dir, "node_modules", "latlab", "stub.cjs"), `const fs=require("fs");const log=(m)=>fs.appendFileSync(process.env.SIGNAL_LOG,m+"\\n");\nlog("started latlab "+process.argv.slice(2,4).join(" "));\nprocess.on("SIGINT",()=>{log("INT");setTimeout(()=>{log("INT teardown done");process.exit(130)},3000)});\nprocess.on("SIGTERM",()=>{log("TERM");process.exit(143)});\nsetTimeout(()=>{log("finished");process.exit(0)},Number(process.env.RUN_MS));\n`);
      const play = (signals: NodeJS.Signals[], runMs: number) => {
        const out = join(dir, `out-${signals.join("-") || "none"}`);
        const log = join(dir, `log-${signals.join("-") || "none"}`);
        writeFileSync(out, "");
        writeFileSync(log, "");
        const env = { PATH: process.env.PATH ?? "", RUNNER_TEMP: dir, GITHUB_OUTPUT: out, SIGNAL_LOG: log, RUN_MS: String(runMs), REHEARSE: "true", EXPERIMENT: "x", OUT: join(dir, "results"), MAX_COST: "1", DURATION_ARG: "1x", TIME_LIMIT: "5" };
        // The signals go to bash only, as the runner sends them (the stand-in hears them through the traps).
        const driver = `const {spawn}=require("child_process");const p=spawn("bash",["--noprofile","--norc","-eo","pipefail",process.argv[1]],{stdio:"inherit"});const sig=${JSON.stringify(signals)};let t=700;for(const s of sig){setTimeout(()=>p.kill(s),t);t+=400;}p.on("exit",(c)=>process.exit(c??99));`;
        writeFileSync(join(dir, "step.sh"), script);
        const r = spawnSync(process.execPath, ["-e", driver, join(dir, "step.sh")], { cwd: dir, env, encoding: "utf8", timeout: 60_000 });
        return { status: r.status, stdout: r.stdout, output: readFileSync(out, "utf8"), log: readFileSync(log, "utf8").trim().split("\n") };
      };
      const quiet = play([], 100);
      expect(quiet.log).toEqual(["started latlab run x", "finished"]);
      expect(quiet.output).toBe("exit-code=0\n");
      const int = play(["SIGINT"], 20_000);
      expect(int.log).toEqual(["started latlab run x", "INT", "INT teardown done"]);
      expect(int.output).toBe("exit-code=130\n");
      expect(int.stdout).toContain("run step: INT received: passing it to latlab");
      const intTerm = play(["SIGINT", "SIGTERM"], 20_000);
      expect(intTerm.log).toEqual(["started latlab run x", "INT", "TERM"]);
      expect(intTerm.output).toBe("exit-code=143\n");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the cleanup step keeps to what a cancelled job leaves (3 of its ~4 min 45 s), and fits the job's margin after a step timeout", () => {
    const clean = step(measure, "Clean up") as Step & { "timeout-minutes"?: string };
    expect(clean["timeout-minutes"]).toBe("${{ job.status == 'cancelled' && 3 || 30 }}");
    // After a run step that timed out (the job goes on), the cleanup's 30 min and the uploads fit the job's margin.
    expect(CI_SETUP_MARGIN_MINUTES).toBeGreaterThanOrEqual(30 + 5);
    // It waits for a latlab that outlived the run step through /proc (the pid may be root's sudo).
    expect(clean.run).toContain('while [ -d "/proc/$pid" ]; do sleep 2; done');
  });

  it("uploads the results before any cleanup, again after it, then the cleanup job deletes every group of the workflow run by its tags", () => {
    const names = measure.steps!.map((s) => s.name);
    const at = (n: string) => names.indexOf(n);
    expect(at("Upload the results")).toBe(at("Run the experiment") + 1);
    expect(at("Clean up")).toBe(at("Upload the results") + 1);
    expect(at("Upload the results again")).toBe(at("Clean up") + 1);
    for (const later of ["Upload the results", "Clean up", "Upload the results again", "Summary", "Compare with the previous run", "Verdict"]) expect(step(measure, later).if, later).toMatch(/^always\(\)/);
    const uploads = measure.steps!.filter((s) => s.uses?.startsWith("actions/upload-artifact@"));
    expect(uploads).toHaveLength(2);
    for (const u of uploads) {
      expect(u.with).toMatchObject({ "name": "latlab-${{ matrix.experiment }}", "retention-days": 90, "if-no-files-found": "warn", "overwrite": true });
      // The run's folder (OUT) and nothing else: a trailing * only so the artifact keeps the folder's name.
      expect(u.with?.["path"]).toBe(`${String(measure.env?.["OUT"])}*`);
    }
    expect(latlabCalls(step(measure, "Clean up").run!).map((c) => c.words.slice(0, 2).join(" "))).toEqual(["destroy $OUT"]);
    const cleanup = measureFile.jobs["cleanup"]!;
    expect(cleanup.needs).toEqual(["plan", "measure"]);
    // Hosted, even when the measuring was self-hosted: the lost runner may be that one.
    expect(cleanup["runs-on"]).toBe("ubuntu-latest");
    expect(cleanup.if).toBe("always() && needs.plan.result == 'success' && needs.plan.outputs.count != '0'");
    const [sweep, ...others] = latlabCalls(step(cleanup, "Delete this workflow run's resource groups").run!);
    expect(others).toEqual([]);
    expect(sweep!.line).toBe('"${as_root[@]}" npx latlab sweep --github-run "$GITHUB_RUN_ID" --delete --summary "$GITHUB_STEP_SUMMARY" "${sweep_flag[@]}"');
  });

  it("compares with the previous run of the same experiment made by this workflow, downloaded as an artifact that may have expired", () => {
    const previous = step(measure, "Find the previous run");
    expect(previous.run).toContain('runs=$(npx latlab history "$EXPERIMENT" --json)');
    expect(previous.run).toContain('.facts["github.runId"]');
    const download = measure.steps!.find((s) => s.id === "download")!;
    expect(download["continue-on-error"]).toBe(true);
    expect(download.with).toEqual({ "name": "latlab-${{ matrix.experiment }}", "run-id": "${{ steps.previous.outputs.run-id }}", "github-token": "${{ github.token }}", "path": "previous/" });
    const compare = step(measure, "Compare with the previous run");
    expect(compare.run).toContain('npx latlab compare "$previous" "$OUT" --fail-on-regression "$THRESHOLD" --markdown >> "$GITHUB_STEP_SUMMARY"');
    expect(step(measure, "Summary").run).toContain('npx latlab report "$OUT" --markdown >> "$GITHUB_STEP_SUMMARY"');
    // The last step fails the job for a failed run and for a regression (exit 3), with one ::error:: line.
    const verdict = step(measure, "Verdict");
    expect(verdict.env).toMatchObject({ RUN_CODE: "${{ steps.run.outputs.exit-code }}", COMPARE_CODE: "${{ steps.compare.outputs.exit-code }}" });
    expect(verdict.run).toMatch(/3\) echo "::error::[^"]*regression[^"]*"; exit 1 ;;/);
    expect(measure.steps!.at(-1)!.name).toBe("Verdict");
  });

  it("a cancelled run's verdict says it was cancelled, not that it did not start", () => {
    const script = step(measure, "Verdict").run!;
    const verdict = (env: Record<string, string>) => spawnSync("bash", ["-c", script], { env: { PATH: process.env.PATH ?? "", EXPERIMENT: "x", OUT: "/nonexistent", RUN_CODE: "", COMPARE_CODE: "", ...env }, encoding: "utf8" });
    for (const env of [{ RUN_OUTCOME: "cancelled", JOB_STATUS: "cancelled" }, { RUN_OUTCOME: "", JOB_STATUS: "cancelled" }]) {
      const r = verdict(env);
      expect(r.status).toBe(1);
      expect(r.stdout).toMatch(/::error::x: the run was cancelled/);
    }
    // A run step that failed with no exit code of latlab's (its timeout killed latlab) started.
    const timedOut = verdict({ RUN_OUTCOME: "failure", JOB_STATUS: "failure" });
    expect(timedOut.stdout).toMatch(/::error::x: the run step failed or timed out before latlab ended/);
    expect(timedOut.status).toBe(1);
    const notStarted = verdict({ RUN_OUTCOME: "skipped", JOB_STATUS: "failure" });
    expect(notStarted.stdout).toMatch(/::error::x: the run did not start/);
    // Cancelled, whatever latlab's own code (1 after handing its teardown over).
    expect(verdict({ RUN_CODE: "1", RUN_OUTCOME: "cancelled", JOB_STATUS: "cancelled" }).stdout).toMatch(/::error::x: the run was cancelled .*; latlab exited 1;/);
    expect(verdict({ RUN_CODE: "0", RUN_OUTCOME: "success", JOB_STATUS: "success" }).status).toBe(0);
  });
});

describe("latlab-history.yml", () => {
  it("after every measure job, one writer at a time, adds every run and pushes with retries (never in a rehearsal), the token given to git on its command line only", () => {
    const history = historyFile.jobs["history"]!;
    expect(history.concurrency?.group).toMatch(/^latlab-history/);
    expect(history.concurrency?.["cancel-in-progress"]).toBe(false);
    // After a cancelled run too: the caller's always() does not carry into a called job.
    expect(history.if).toBe("always()");
    const download = history.steps!.find((s) => s.uses?.startsWith("actions/download-artifact@"))!;
    // merge-multiple: every run's folder straight under downloaded/, one artifact or many.
    expect(download.with).toEqual({ "pattern": "latlab-*", "path": "downloaded/", "merge-multiple": true });
    const add = step(history, "Add them to the history and push it");
    expect(add.env).toEqual({ PUSH_TOKEN: "${{ github.token }}" });
    const script = add.run!;
    expect(script).toContain("runs=(downloaded/*/)");
    expect(script).toContain('npx latlab history add "${runs[@]}" --history "$branch_dir/history.duckdb"');
    expect(script).toMatch(/for attempt in [\d ]+; do[\s\S]*git_auth -C "\$branch_dir" push origin HEAD:refs\/heads\/latlab-history[\s\S]*checkout_branch[\s\S]*add_and_commit[\s\S]*done/);
    // Every git call that talks to the remote carries the token; none stores it.
    for (const line of script.split("\n").filter((l) => /\bgit\b.*\b(push|fetch|ls-remote)\b/.test(l))) expect(line.trim(), line).toMatch(/^(if )?git_auth /);
    // In git's environment (GIT_CONFIG_*), not on a command line other processes can read, nor in a config file.
    expect(script).toContain('git_auth() { GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0="http.$GITHUB_SERVER_URL/.extraheader" GIT_CONFIG_VALUE_0="AUTHORIZATION: basic $auth" git "$@"; }');
    expect(script).not.toMatch(/git config[^\n]*extraheader|git remote set-url|git -c/);
    // A rehearsal stops before the push.
    expect(script.indexOf('if [ "$REHEARSE" = true ]')).toBeLessThan(script.indexOf('git_auth -C "$branch_dir" push'));
  });

  it("then judges every run with `latlab gate` against the history it was added to (JSON and Markdown, into the summary), and hands the verdicts to scheduled.yml's alerts as the artifact gate-verdicts", () => {
    const history = historyFile.jobs["history"]!;
    const names = history.steps!.map((s) => s.name ?? s.uses);
    expect(names.indexOf("Judge each run against the history")).toBeGreaterThan(names.indexOf("Add them to the history and push it"));
    const judge = step(history, "Judge each run against the history");
    expect(judge.if).toBe("always()");
    const calls = latlabCalls(judge.run!).map((c) => c.line);
    expect(calls).toEqual([
      'npx latlab gate "$run" --history "$history" --json > "verdicts/$name.json" || code=$?',
      'npx latlab gate "$run" --history "$history" --markdown > "verdicts/$name.md" || code=$?',
    ]);
    expect(judge.run).toContain('history="$RUNNER_TEMP/latlab-history/history.duckdb"');
    expect(judge.run).toContain('cat "verdicts/$name.md" >> "$GITHUB_STEP_SUMMARY"');
    const upload = step(history, "Upload the verdicts");
    expect(upload.uses).toMatch(/^actions\/upload-artifact@/);
    // Not latlab-*: the pattern this job downloads the runs by.
    expect(upload.with).toMatchObject({ name: "gate-verdicts", path: "verdicts/" });
    expect(history.outputs).toEqual({ verdicts: "${{ steps.gate.outputs.verdicts }}", pages: "${{ steps.trend.outputs.pages }}" });
    const outputs = (historyFile.on as { workflow_call: { outputs: Record<string, { value: string }> } }).workflow_call.outputs;
    expect(outputs["verdicts"]!.value).toBe("${{ jobs.history.outputs.verdicts }}");
    expect(outputs["pages"]!.value).toBe("${{ jobs.history.outputs.pages }}");
  });

  it("builds the trend page from the history (a rehearsal too) and uploads it for Pages only in a real run of a repository that set LATLAB_PAGES", () => {
    const history = historyFile.jobs["history"]!;
    const build = step(history, "Build the trend page");
    expect(latlabCalls(build.run!).map((c) => c.line)).toEqual(['npx latlab report --history "$history" --out site']);
    expect(build.env).toEqual({ PAGES: "${{ vars.LATLAB_PAGES }}" });
    expect(build.run).toMatch(/if \[ "\$REHEARSE" != true \] && \[ "\$PAGES" = true \]; then\n\s*echo "pages=true" >> "\$GITHUB_OUTPUT"/);
    const upload = step(history, "Upload the trend page for GitHub Pages");
    expect(upload.uses).toMatch(/^actions\/upload-pages-artifact@/);
    expect(upload.if).toBe("always() && steps.trend.outputs.pages == 'true'");
    expect(upload.with).toEqual({ path: "site/" });
  });
});

describe("latlab-sweep.yml", () => {
  it("every hour, whatever is scheduled, deletes expired latlab groups in the environment latlab-azure and says what in the step summary", () => {
    const on = sweepFile.on as { schedule: { cron: string }[]; workflow_dispatch: { inputs: Inputs }; workflow_call?: unknown };
    // Not callable: a caller granting no id-token would fail at start-up (its job asks for one).
    expect(on.workflow_call).toBeUndefined();
    expect(on.workflow_dispatch.inputs["rehearse"]).toMatchObject({ type: "boolean", default: false });
    expect(on.schedule).toHaveLength(1);
    // minute * * * *: hourly.
    expect(on.schedule[0]!.cron).toMatch(/^\d{1,2} \* \* \* \*$/);
    expect("workflow_dispatch" in on).toBe(true);
    expect(sweepFile.permissions).toEqual({ contents: "read" });
    const sweep = sweepFile.jobs["sweep"]!;
    expect(sweep.permissions).toEqual({ "contents": "read", "id-token": "write" });
    // A repository not yet set up for Azure does not fail every hour.
    expect(sweep.if).toBe("inputs.rehearse || vars.AZURE_CLIENT_ID != ''");
    expect(sweep.concurrency).toMatchObject({ "cancel-in-progress": false });
    const [call, ...others] = latlabCalls(step(sweep, "Delete expired latlab resource groups").run!);
    expect(others).toEqual([]);
    expect(call!.line).toBe('"${as_root[@]}" npx latlab sweep --delete --summary "$GITHUB_STEP_SUMMARY" "${sweep_flag[@]}"');
  });
});

describe("ci.yml", () => {
  it("is read-only at the top, runs the tests as root, and rehearses the measuring and history workflows once per change (pushes to main, pull requests)", () => {
    // Once per change: main's pushes and pull requests, not a branch's push beside its pull request, not latlab-history's pushes.
    expect(ci.on).toEqual({ push: { branches: ["main"] }, pull_request: null });
    expect(ci.permissions).toEqual({ contents: "read" });
    const test = ci.jobs["test"]!;
    expect(test.steps!.some((s) => s.uses?.startsWith("pulumi/actions@") && s.with?.["pulumi-version"] === "3.259.0")).toBe(true);
    expect(runSteps(ci).some((s) => s.run.includes("go install github.com/rhysd/actionlint/cmd/actionlint@v1.7.12"))).toBe(true);
    expect(runSteps(ci).some((s) => s.run.trim() === 'sudo -E env "PATH=$PATH" npm test')).toBe(true);
    expect(ci.jobs["rehearse-history"]).toMatchObject({ needs: "rehearse-measure", if: "always()" });
  });
});

describe("every workflow's actions", () => {
  it("check out with persist-credentials: false: no token is left in .git/config for `npm ci` and the rest to read", () => {
    const checkouts = allSteps.filter((s) => s.uses?.startsWith("actions/checkout@"));
    expect(checkouts.length).toBeGreaterThanOrEqual(6);
    for (const c of checkouts) expect(c.with?.["persist-credentials"], `${c.file} ${c.job}`).toBe(false);
  });
});

/**
 * Each action on its newest major that runs on Node 24 (`runs.using: node24` in its action.yml; the
 * runner no longer provides Node 20), pinned by the full commit its release tag points to (tags
 * can be moved; a commit cannot). Read from each repository's snapshot (git tag, `git rev-list -n 1
 * <tag>`, `git show <tag>:action.yml`), 2026-11-27. zizmor checks the pinning offline but not that
 * the comment names the pinned commit's tag: this table does.
 */
const ACTION_PINS: Record<string, { sha: string; tag: string }> = {
  "actions/checkout": { sha: "3d3c42e5aac5ba805825da76410c181273ba90b1", tag: "v7.0.1" },
  "actions/setup-node": { sha: "820762786026740c76f36085b0efc47a31fe5020", tag: "v7.0.0" },
  "actions/upload-artifact": { sha: "bbbca2ddaa5d8feaa63e36b76fdaad77386f024f", tag: "v7.0.0" },
  "actions/download-artifact": { sha: "3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c", tag: "v8.0.1" },
  "pulumi/actions": { sha: "8e5e406f4007fca908480587cb9893c07090f58d", tag: "v7.0.0" },
  "actions/setup-go": { sha: "b7ad1dad31e06c5925ef5d2fc7ad053ef454303e", tag: "v7.0.0" },
  // Read 2026-12 from their snapshots, as above (deploy-pages: runs.using node24; upload-pages-artifact
  // is a composite action around actions/upload-artifact at the commit pinned above).
  "actions/upload-pages-artifact": { sha: "fc324d3547104276b827a68afc52ff2a11cc49c9", tag: "v5.0.0" },
  "actions/deploy-pages": { sha: "cd2ce8fcbc39b97be8ca5fce6e763baed58fa128", tag: "v5.0.0" },
};

describe("every workflow's actions are pinned", () => {
  it("by the full commit of their release tag, with the tag in a comment", () => {
    const problems: string[] = [];
    let count = 0;
    for (const file of WORKFLOW_FILES) {
      for (const line of text(file).split("\n").filter((l) => /^\s*(- )?uses:/.test(l))) {
        const m = /uses: ([^@\s]+)(?:@(\S+))?(?:\s+#\s*(\S+))?/.exec(line)!;
        const [, name, ref, comment] = m;
        // This repository's own reusable workflows: same commit as the caller.
        if (name!.startsWith("./")) continue;
        count++;
        const pin = ACTION_PINS[name!];
        if (!pin) problems.push(`${file}: ${name} is not in ACTION_PINS`);
        else if (ref !== pin.sha || comment !== pin.tag) problems.push(`${file}: ${line.trim()} (want ${name}@${pin.sha} # ${pin.tag})`);
      }
    }
    expect(problems).toEqual([]);
    expect(count).toBeGreaterThanOrEqual(15);
  });
});

describe("every workflow's scripts", () => {
  it("run in bash (errors stop the step), with no ${{ }} spliced into a script, no tracing, no secret echoed", () => {
    for (const [file, w] of Object.entries(workflows)) {
      // scheduled.yml only calls the others: it has no script.
      if (runSteps(w).length) expect(w.defaults?.run?.shell, file).toBe("bash");
      for (const s of runSteps(w)) expect(s.shell ?? "bash", `${file} ${s.name}`).toBe("bash");
    }
    expect(allRunSteps.length).toBeGreaterThan(10);
    for (const s of allRunSteps) {
      const where = `${s.file} ${s.job}: ${s.name ?? s.run.slice(0, 40)}`;
      // Values reach scripts through env: a ${{ }} in a script is pasted in as code (script injection).
      expect(s.run, where).not.toContain("${{");
      expect(s.run, where).not.toMatch(/\bset\s+-[a-wyz]*x|set -o xtrace|bash -x/);
      // A secret piped into another command (base64 for git's header) or given to curl as a header
      // file (a process substitution: curl reads it) is not printed.
      for (const line of s.run.split("\n").filter((l) => /\b(echo|printf|cat)\b/.test(l) && !/\b(printf|echo)\b[^|]*\|\s*base64\b/.test(l) && !/-H @<\(printf\b/.test(l))) {
        expect(line, where).not.toMatch(/\$\{?\w*(SECRET|TOKEN|PASSWORD|KEY)\w*/i);
      }
    }
  });

  it("call only commands and options latlab has (the real commander program)", () => {
    const { program } = buildProgram();
    const calls = allRunSteps.flatMap((s) => latlabCalls(s.run).map((c) => ({ ...c, where: `${s.file} ${s.job}: ${s.name ?? ""}` })));
    // run, destroy, sweep, report, compare, history, history add, ci-matrix at least.
    expect(calls.length).toBeGreaterThanOrEqual(8);
    const problems: string[] = [];
    for (const c of calls) {
      const { command, path } = findCommand(program, c.words);
      if (!command) {
        problems.push(`${c.where}: latlab has no command "${path}" (${c.line})`);
        continue;
      }
      for (const option of c.options) if (!hasOption(command, option)) problems.push(`${c.where}: \`latlab ${path}\` has no option ${option} (${c.line})`);
    }
    expect(problems).toEqual([]);
  });

  it("the call finder sees subcommands, options and options passed in arrays", () => {
    expect(latlabCalls('x=(--rehearse)\n"${a[@]}" npx latlab run "$E" --out "$O" \\\n  --yes "${x[@]}" || c=$?')).toEqual([
      { line: '"${a[@]}" npx latlab run "$E" --out "$O" --yes "${x[@]}" || c=$?', words: ["run", "$E", "--out", "$O", "--yes", "${x[@]}"], options: ["--out", "--yes", "--rehearse"] },
    ]);
    const { program } = buildProgram();
    expect(findCommand(program, ["run", "x", "--yes"]).command?.name()).toBe("run");
    expect(findCommand(program, ["nonsense", "x"])).toEqual({ path: "nonsense" });
    expect(hasOption(findCommand(program, ["run"]).command!, "--no-such-option")).toBe(false);
  });
});

/** actionlint: $ACTIONLINT, else on PATH, else where `go install` or .ci/run put it. */
function findActionlint(): string | undefined {
  const candidates = [
    process.env["ACTIONLINT"],
    ...(process.env["PATH"] ?? "").split(delimiter).filter(Boolean).map((d) => join(d, "actionlint")),
    join(homedir(), "go/bin/actionlint"),
    "/root/go/bin/actionlint",
    join(homedir(), ".cache/latlab/actionlint-v1.7.12/actionlint"),
    "/root/.cache/latlab/actionlint-v1.7.12/actionlint",
  ];
  return candidates.find((c): c is string => Boolean(c) && existsSync(c!));
}

describe("actionlint", () => {
  it("finds nothing wrong in the workflows (shellcheck on their scripts too, when it is installed)", (ctx) => {
    const actionlint = findActionlint();
    if (!actionlint) {
      const why = "actionlint not found ($ACTIONLINT, PATH, ~/go/bin, ~/.cache/latlab/actionlint-v1.7.12): .ci/run installs it (go install github.com/rhysd/actionlint/cmd/actionlint@v1.7.12)";
      // In CI a missing linter is a failure, not a pass.
      if (process.env["CI"] === "true") throw new Error(why);
      ctx.skip(why);
      return;
    }
    const r = spawnSync(actionlint, ["-no-color", ...WORKFLOW_FILES.map((f) => `.github/workflows/${f}`)], { cwd: ROOT, encoding: "utf8", timeout: 120_000 });
    expect(r.error).toBeUndefined();
    expect(`${r.stdout}${r.stderr}`).toBe("");
    expect(r.status).toBe(0);
  });
});

/** zizmor: $ZIZMOR, else on PATH, else where .ci/run installs it. */
function findZizmor(): string | undefined {
  const candidates = [
    process.env["ZIZMOR"],
    ...(process.env["PATH"] ?? "").split(delimiter).filter(Boolean).map((d) => join(d, "zizmor")),
    join(homedir(), ".cache/latlab/zizmor-1.32.0/bin/zizmor"),
    "/root/.cache/latlab/zizmor-1.32.0/bin/zizmor",
  ];
  return candidates.find((c): c is string => Boolean(c) && existsSync(c!));
}

describe("zizmor", () => {
  it("finds nothing to report in the workflows (offline: no GitHub API, even with a token in the environment)", (ctx) => {
    const zizmor = findZizmor();
    if (!zizmor) {
      const why = "zizmor not found ($ZIZMOR, PATH, ~/.cache/latlab/zizmor-1.32.0): .ci/run installs it from PyPI";
      if (process.env["CI"] === "true") throw new Error(why);
      ctx.skip(why);
      return;
    }
    const r = spawnSync(zizmor, ["--offline", "--no-progress", "--color=never", ".github/workflows/"], { cwd: ROOT, encoding: "utf8", timeout: 120_000 });
    expect(r.error).toBeUndefined();
    expect(r.stdout).toContain("No findings to report");
    // 0: no finding (ignored ones, each with its reason inline, do not count); 11-14: findings by severity.
    expect(r.status, r.stdout).toBe(0);
  });
});

describe("the workflows `latlab init` writes", () => {
  it("are latlab's own files, byte for byte, every one of them, and pass actionlint and zizmor there too", async (ctx) => {
    // Every workflow but ci.yml (latlab's own tests) goes to a project.
    expect([...LATLAB_WORKFLOW_FILES].sort()).toEqual(WORKFLOW_FILES.filter((f) => f !== "ci.yml").sort());
    const dir = mkdtempSync(join(tmpdir(), "latlab-init-wf-"));
    try {
      await scaffold(dir, { context: { name: "measurements" } });
      for (const f of LATLAB_WORKFLOW_FILES) expect(readFileSync(join(dir, ".github/workflows", f), "utf8"), f).toBe(text(f));
      const actionlint = findActionlint();
      const zizmor = findZizmor();
      if (!actionlint || !zizmor) {
        const why = `actionlint or zizmor not found (${actionlint ?? "no actionlint"}, ${zizmor ?? "no zizmor"}): .ci/run installs both`;
        if (process.env["CI"] === "true") throw new Error(why);
        ctx.skip(why);
        return;
      }
      const lint = spawnSync(actionlint, ["-no-color", ...LATLAB_WORKFLOW_FILES.map((f) => `.github/workflows/${f}`)], { cwd: dir, encoding: "utf8", timeout: 120_000 });
      expect(`${lint.stdout}${lint.stderr}`).toBe("");
      expect(lint.status).toBe(0);
      const audit = spawnSync(zizmor, ["--offline", "--no-progress", "--color=never", ".github/workflows/"], { cwd: dir, encoding: "utf8", timeout: 120_000 });
      expect(audit.stdout).toContain("No findings to report");
      expect(audit.status, audit.stdout).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
