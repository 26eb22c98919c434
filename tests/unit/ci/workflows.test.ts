import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { buildProgram } from "../../../src/cli/main.ts";

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
const scheduled = load("scheduled.yml");
const ci = load("ci.yml");
const workflows = { "scheduled.yml": scheduled, "ci.yml": ci };

const steps = (w: Workflow) => Object.entries(w.jobs).flatMap(([job, j]) => (j.steps ?? []).map((s) => ({ job, ...s })));
const runSteps = (w: Workflow) => steps(w).filter((s): s is typeof s & { run: string } => typeof s.run === "string");
const allRunSteps = Object.entries(workflows).flatMap(([file, w]) => runSteps(w).map((s) => ({ file, ...s })));
const measure = scheduled.jobs["measure"]!;
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

/** Every `npx latlab <subcommand> …` in a script, continuation lines joined. */
function latlabCalls(script: string): LatlabCall[] {
  const joined = script.replace(/\s*\\\n\s*/g, " ");
  // Arrays a script builds and expands into a command: `rehearse_flag=(--rehearse)` … `"${rehearse_flag[@]}"`.
  const arrays = new Map<string, string[]>();
  for (const m of joined.matchAll(/(\w+)=\(([^)]*)\)/g)) arrays.set(m[1]!, [...(arrays.get(m[1]!) ?? []), ...m[2]!.split(/\s+/).filter(Boolean)]);
  const calls: LatlabCall[] = [];
  for (const line of joined.split("\n")) {
    for (const m of line.matchAll(/npx latlab ([^|;&>]*)/g)) {
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

describe("the scheduled workflow (.github/workflows/scheduled.yml)", () => {
  it("runs weekly, by hand with the inputs, and as a reusable workflow that can rehearse", () => {
    const on = scheduled.on as { schedule: { cron: string }[]; workflow_dispatch: { inputs: Dict }; workflow_call: { inputs: Dict } };
    expect(on.schedule).toHaveLength(1);
    // minute hour * * weekday: once a week.
    expect(on.schedule[0]!.cron).toMatch(/^\d{1,2} \d{1,2} \* \* [0-6]$/);
    const inputs = ["experiments", "duration", "max-cost", "regression-threshold"];
    expect(Object.keys(on.workflow_dispatch.inputs)).toEqual(inputs);
    expect(Object.keys(on.workflow_call.inputs)).toEqual([...inputs, "rehearse"]);
    expect(on.workflow_call.inputs["rehearse"]).toMatchObject({ type: "boolean", default: false });
    for (const [name, input] of Object.entries(on.workflow_dispatch.inputs)) expect((on.workflow_call.inputs[name] as Dict)["default"]).toBe((input as Dict)["default"]);
    // A scheduled run has no inputs: it uses the SCHEDULED_ values, which are the inputs' defaults,
    // and every input falls back to its SCHEDULED_ value where it is read.
    const env = (scheduled as unknown as { env: Dict }).env;
    const yaml = text("scheduled.yml");
    for (const name of inputs) {
      const variable = `SCHEDULED_${name.replaceAll("-", "_").toUpperCase()}`;
      expect(env[variable], variable).toBe((on.workflow_dispatch.inputs[name] as Dict)["default"]);
      const reads = yaml.match(new RegExp(`inputs\\.${name}\\b[^}]*\\}\\}`, "g")) ?? [];
      expect(reads.length, name).toBeGreaterThan(0);
      for (const read of reads) expect(read).toBe(`inputs.${name} || env.${variable} }}`);
    }
  });

  it("is read-only at the top; measure has exactly id-token write, contents read, actions read; only history writes", () => {
    expect(scheduled.permissions).toEqual({ "contents": "read" });
    expect(measure.permissions).toEqual({ "id-token": "write", "contents": "read", "actions": "read" });
    const writers = Object.entries(scheduled.jobs).filter(([, j]) => j.permissions?.["contents"] === "write");
    expect(writers.map(([name]) => name)).toEqual(["history"]);
    expect(scheduled.jobs["history"]!.permissions).toEqual({ "contents": "write" });
    expect(scheduled.jobs["plan"]!.permissions).toBeUndefined();
    const idTokens = Object.entries(scheduled.jobs).filter(([, j]) => j.permissions?.["id-token"] === "write");
    expect(idTokens.map(([name]) => name)).toEqual(["measure"]);
  });

  it("logs in to Azure with OpenID Connect from repository variables, never with a secret, and not in a rehearsal", () => {
    const logins = steps(scheduled).filter((s) => s.uses?.startsWith("azure/login@"));
    expect(logins.length).toBeGreaterThanOrEqual(1);
    for (const login of logins) {
      expect(login.uses).toBe("azure/login@v2");
      expect(login.with).toEqual({ "client-id": "${{ vars.AZURE_CLIENT_ID }}", "tenant-id": "${{ vars.AZURE_TENANT_ID }}", "subscription-id": "${{ vars.AZURE_SUBSCRIPTION_ID }}" });
      expect(login.if).toMatch(/!inputs\.rehearse/);
    }
    // The first login comes before the run, the second before the cleanup.
    const names = measure.steps!.map((s) => s.name ?? s.uses);
    expect(names.indexOf(logins[0]!.name)).toBeLessThan(names.indexOf("Run the experiment"));
    for (const [file, w] of Object.entries(workflows)) {
      const yaml = text(file);
      expect(yaml, file).not.toMatch(/client-secret|\bcreds\b|secrets\./);
      for (const s of steps(w)) expect(Object.keys(s.with ?? {}), `${file} ${s.name}`).not.toContain("creds");
    }
  });

  it("reads the duration input as the user wrote it: 1 and 2x are factors (2x stays 2x, never 2xx), 30s is seconds", () => {
    const script = step(scheduled.jobs["plan"]!, "Experiments and their timeouts").run!;
    // The workflow's own case block, run by bash as the runner runs it.
    const block = /^\s*case "\$DURATION" in[\s\S]*?^\s*esac$/m.exec(script)![0];
    const asRun = (value: string) => execFileSync("bash", ["-c", `${block}\nprintf %s "$duration"`], { env: { DURATION: value }, encoding: "utf8" });
    expect(["1", "2x", "0.5", "30s"].map(asRun)).toEqual(["1x", "2x", "0.5x", "30"]);
  });

  it("a cancelled run's verdict says it was cancelled, not that it did not start", () => {
    const script = step(measure, "Verdict").run!;
    const verdict = (env: Record<string, string>) => spawnSync("bash", ["-c", script], { env: { PATH: process.env.PATH ?? "", EXPERIMENT: "x", OUT: "/nonexistent", RUN_CODE: "", COMPARE_CODE: "", ...env }, encoding: "utf8" });
    for (const env of [{ RUN_OUTCOME: "cancelled", JOB_STATUS: "cancelled" }, { RUN_OUTCOME: "", JOB_STATUS: "cancelled" }]) {
      const r = verdict(env);
      expect(r.status).toBe(1);
      expect(r.stdout).toMatch(/::error::x: the run was cancelled/);
    }
    const failed = verdict({ RUN_OUTCOME: "failure", JOB_STATUS: "failure" });
    expect(failed.stdout).toMatch(/::error::x: the run did not start/);
    expect(verdict({ RUN_CODE: "0", RUN_OUTCOME: "success", JOB_STATUS: "success" }).status).toBe(0);
  });

  it("plans with `latlab ci-matrix`: one job per experiment, its timeout from the plan, two at a time, none cancelling another", () => {
    const plan = scheduled.jobs["plan"]!;
    expect(plan.outputs?.["matrix"]).toBe("${{ steps.matrix.outputs.matrix }}");
    const script = step(plan, "Experiments and their timeouts").run!;
    expect(script).toMatch(/npx latlab ci-matrix "\$\{names\[@\]\}" --duration "\$duration" --target azure/);
    expect(script).toMatch(/matrix=\$matrix"?\s*$/m);
    expect(script).toContain('>> "$GITHUB_OUTPUT"');
    expect(measure.needs).toBe("plan");
    expect(measure.strategy).toEqual({ "matrix": "${{ fromJSON(needs.plan.outputs.matrix) }}", "max-parallel": 2, "fail-fast": false });
    expect(measure["timeout-minutes"]).toBe("${{ matrix.timeoutMinutes }}");
    expect(measure.concurrency?.group).toMatch(/^latlab-\$\{\{ matrix\.experiment \}\}/);
    expect(measure.concurrency?.["cancel-in-progress"]).toBe(false);
    // A real run's group is exactly latlab-<experiment>; only a rehearsal gets one of its own.
    expect(measure.concurrency?.group).toBe("latlab-${{ matrix.experiment }}${{ inputs.rehearse && format('-rehearsal-{0}', github.run_id) || '' }}");
  });

  it("runs the experiment with the same command whether it rehearses or not, and records its exit code without stopping", () => {
    const run = step(measure, "Run the experiment");
    const [call, ...more] = latlabCalls(run.run!);
    expect(more).toEqual([]);
    expect(call!.line).toBe(
      '"${as_root[@]}" npx latlab run "$EXPERIMENT" --target azure --yes --max-cost "$MAX_COST" --quiet --ssh-from auto --install-pulumi --duration "$DURATION_ARG" --out "$OUT" "${rehearse_flag[@]}" || code=$?',
    );
    // The only differences of a rehearsal: --rehearse, and root (sudo) when not root already.
    expect(run.run).toContain("rehearse_flag=(--rehearse)");
    expect(run.run).toMatch(/if \[ "\$\(id -u\)" != 0 \]; then as_root=\(sudo -E env "PATH=\$PATH" HOME=\/root\); fi/);
    expect(run.run).toContain('echo "exit-code=$code" >> "$GITHUB_OUTPUT"');
    expect(measure.env).toMatchObject({ EXPERIMENT: "${{ matrix.experiment }}", OUT: "results/${{ matrix.experiment }}-${{ github.run_id }}" });
  });

  it("cleans up on every path: latlab destroy, then latlab sweep --delete (not in a rehearsal), before anything else can fail", () => {
    const cleanup = step(measure, "Clean up");
    expect(cleanup.if).toBe("always()");
    const calls = latlabCalls(cleanup.run!);
    expect(calls.map((c) => c.words.slice(0, 2).join(" "))).toEqual(['destroy $OUT', "sweep --delete"]);
    expect(cleanup.run!.indexOf("npx latlab destroy")).toBeLessThan(cleanup.run!.indexOf("npx latlab sweep --delete"));
    expect(cleanup.run).toMatch(/if \[ "\$REHEARSE" = true \]; then[\s\S]*rehearsal: no sweep[\s\S]*else[\s\S]*npx latlab sweep --delete/);
    // Right after the run: the report, the comparison and the upload come after it.
    const names = measure.steps!.map((s) => s.name);
    expect(names.indexOf("Clean up")).toBe(names.indexOf("Run the experiment") + 2);
    for (const later of ["Summary", "Compare with the previous run", "Upload the results", "Verdict"]) {
      expect(names.indexOf(later)).toBeGreaterThan(names.indexOf("Clean up"));
      expect(step(measure, later).if).toMatch(/^always\(\)/);
    }
  });

  it("uploads the results folder only, kept 90 days, whatever happened", () => {
    const upload = steps(scheduled).filter((s) => s.uses?.startsWith("actions/upload-artifact@"));
    expect(upload).toHaveLength(1);
    expect(upload[0]!.if).toBe("always()");
    expect(upload[0]!.with).toMatchObject({ "name": "latlab-${{ matrix.experiment }}", "retention-days": 90, "if-no-files-found": "warn" });
    // The run's folder (OUT) and nothing else: a trailing * only so the artifact keeps the folder's name.
    expect(upload[0]!.with?.["path"]).toBe(`${String(measure.env?.["OUT"])}*`);
  });

  it("compares with the previous run of the same experiment made by this workflow, downloaded as an artifact that may have expired", () => {
    const previous = step(measure, "Find the previous run");
    expect(previous.run).toContain('runs=$(npx latlab history "$EXPERIMENT" --json)');
    expect(previous.run).toContain('.facts["github.runId"]');
    const download = steps(scheduled).find((s) => s.id === "download")!;
    expect(download.uses).toBe("actions/download-artifact@v4");
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

  it("history: after every measure job, one writer at a time, adds every run and pushes with retries (never in a rehearsal)", () => {
    const history = scheduled.jobs["history"]!;
    expect(history.needs).toEqual(["plan", "measure"]);
    expect(history.if).toBe("always() && needs.plan.result == 'success'");
    expect(history.concurrency?.group).toMatch(/^latlab-history/);
    expect(history.concurrency?.["cancel-in-progress"]).toBe(false);
    const download = history.steps!.find((s) => s.uses?.startsWith("actions/download-artifact@"))!;
    expect(download.with).toEqual({ pattern: "latlab-*", path: "downloaded/" });
    const script = history.steps!.find((s) => s.run?.includes("history add"))!.run!;
    expect(script).toContain('runs=(downloaded/*/*/)');
    expect(script).toContain('npx latlab history add "${runs[@]}" --history "$branch_dir/history.duckdb"');
    expect(script).toMatch(/for attempt in [\d ]+; do[\s\S]*git -C "\$branch_dir" push origin HEAD:refs\/heads\/latlab-history[\s\S]*checkout_branch[\s\S]*add_and_commit[\s\S]*done/);
    // A rehearsal stops before the push.
    expect(script.indexOf('if [ "$REHEARSE" = true ]')).toBeLessThan(script.indexOf("git -C \"$branch_dir\" push"));
  });
});

describe("ci.yml", () => {
  it("is read-only at the top, runs the tests as root, and rehearses the scheduled workflow once per change (pushes to main, pull requests)", () => {
    // Once per change: main's pushes and pull requests, not a branch's push beside its pull request, not latlab-history's pushes.
    expect(ci.on).toEqual({ push: { branches: ["main"] }, pull_request: null });
    expect(ci.permissions).toEqual({ contents: "read" });
    const test = ci.jobs["test"]!;
    expect(test.steps!.some((s) => s.uses === "pulumi/actions@v6" && s.with?.["pulumi-version"] === "3.259.0")).toBe(true);
    expect(runSteps(ci).some((s) => s.run.includes("go install github.com/rhysd/actionlint/cmd/actionlint@v1.7.12"))).toBe(true);
    expect(runSteps(ci).some((s) => s.run.trim() === 'sudo -E env "PATH=$PATH" npm test')).toBe(true);
    const rehearse = ci.jobs["rehearse-scheduled"]!;
    expect(rehearse.uses).toBe("./.github/workflows/scheduled.yml");
    expect(rehearse.with).toMatchObject({ rehearse: true });
    // What the called workflow's jobs declare, and no more (a caller's grant caps them).
    expect(rehearse.permissions).toEqual({ "contents": "write", "id-token": "write", "actions": "read" });
  });
});

describe("every workflow's scripts", () => {
  it("run in bash (errors stop the step), with no ${{ }} spliced into a script, no tracing, no secret echoed", () => {
    for (const [file, w] of Object.entries(workflows)) {
      expect(w.defaults?.run?.shell, file).toBe("bash");
      for (const s of runSteps(w)) expect(s.shell ?? "bash", `${file} ${s.name}`).toBe("bash");
    }
    expect(allRunSteps.length).toBeGreaterThan(10);
    for (const s of allRunSteps) {
      const where = `${s.file} ${s.job}: ${s.name ?? s.run.slice(0, 40)}`;
      // Values reach scripts through env: a ${{ }} in a script is pasted in as code (script injection).
      expect(s.run, where).not.toContain("${{");
      expect(s.run, where).not.toMatch(/\bset\s+-[a-wyz]*x|set -o xtrace|bash -x/);
      for (const line of s.run.split("\n").filter((l) => /\b(echo|printf|cat)\b/.test(l))) {
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
    const r = spawnSync(actionlint, ["-no-color", ".github/workflows/ci.yml", ".github/workflows/scheduled.yml"], { cwd: ROOT, encoding: "utf8", timeout: 120_000 });
    expect(r.error).toBeUndefined();
    expect(`${r.stdout}${r.stderr}`).toBe("");
    expect(r.status).toBe(0);
  });
});
