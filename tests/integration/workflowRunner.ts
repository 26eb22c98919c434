/**
 * Runs a GitHub Actions job of one of our workflows on this machine, step by step, as the runner
 * would: `${{ }}` expressions evaluated (the subset our workflows use: contexts, literals, !, &&,
 * ||, ==, !=, always/success/failure/cancelled, format, fromJSON, toJSON), `if:` conditions,
 * env at workflow, job and step level, `run:` scripts through `bash --noprofile --norc -eo
 * pipefail` with GITHUB_OUTPUT, GITHUB_ENV and GITHUB_STEP_SUMMARY files, continue-on-error, and
 * `uses:` steps played by handlers the test gives (an action without one fails the job: nothing
 * is skipped silently). No network: a test gives its own handlers for checkout, artifacts, login,
 * and points GITHUB_API_URL (the context github.api_url, as on GitHub) at a local fake.
 *
 * A test can also play what GitHub does to a job (`interrupt`): cancel the run while a step runs
 * (the runner's SIGINT, SIGTERM 7.5 s later, then a kill: tests/integration/stepSignals.ts), after
 * which only steps whose condition holds with `cancelled()` true and `success()` false run
 * (`always()`), within the time GitHub leaves them; or lose the runner (everything of the job
 * SIGKILLed, no later step runs).
 */
import { spawnSync } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export type Value = string | number | boolean | null | Value[] | { [key: string]: Value };
type Context = Record<string, Value>;

interface Step {
  id?: string;
  name?: string;
  if?: string | boolean;
  uses?: string;
  with?: Record<string, string | number | boolean>;
  run?: string;
  env?: Record<string, string | number | boolean>;
  "continue-on-error"?: boolean | string;
  "timeout-minutes"?: number | string;
  shell?: string;
}

export interface Workflow {
  env?: Record<string, string | number | boolean>;
  jobs: Record<string, { if?: string; env?: Record<string, string | number | boolean>; outputs?: Record<string, string>; steps: Step[] }>;
}

export interface StepResult {
  label: string;
  outcome: "success" | "failure" | "skipped" | "cancelled";
  conclusion: "success" | "failure" | "skipped" | "cancelled";
  stdout: string;
  stderr: string;
  code: number | null;
}

export type ActionHandler = (args: { with: Record<string, string>; env: Record<string, string>; workspace: string; step: Step }) => { outputs?: Record<string, string>; ok: boolean };

export interface JobOptions {
  contexts: { inputs: Context; matrix?: Context; needs?: Context; github: Context; vars?: Context; runner: Context };
  workspace: string;
  /** Base environment of every process (PATH…). */
  env: Record<string, string>;
  /** `uses:` by action name without the version (`actions/upload-artifact`). */
  actions: Record<string, ActionHandler>;
  /** `run:` scripts that are not run (e.g. `npm ci`, whose work the test has done): counted, asserted by the caller. */
  skipScript?: (script: string) => boolean;
  /** Files for GITHUB_OUTPUT & co. */
  tempDir: string;
  /** Run only the steps with these names (the others count as skipped), with `steps` as given. */
  only?: { names: string[]; steps: Record<string, Value> };
  /**
   * What GitHub does to the job while the step named `step` runs, once its output matches
   * `marker`: "cancel" (the run is cancelled: the step gets SIGINT, SIGTERM 7.5 s later, then a
   * kill; later steps run only under always()), or "vanish" (the runner is lost: the step's whole
   * process group is SIGKILLed and no later step runs).
   */
  interrupt?: { step: string; marker?: RegExp; poll?: string; mode: "cancel" | "vanish" };
  /**
   * Seconds the steps that run after a cancel get, together (GitHub docs, "Workflow
   * cancellation": the runner re-evaluates `if:` and then has a limited time for those steps;
   * see CANCELLED_STEPS_SECONDS). A step still running at the end is killed, as there.
   */
  afterCancelSeconds?: number;
}

/**
 * What GitHub leaves the steps that still run once a job is cancelled: the job's cancel timeout,
 * 5 minutes by default (GitHub docs, content/actions/reference/workflows-and-actions/
 * workflow-cancellation.md @ 159bd1b: "After the 5 minute cancellation timeout period, the server
 * will forcibly terminate all jobs and steps that are still running"; actions/runner
 * src/Sdk/DTPipelines/Pipelines/PipelineConstants.cs @ 98aabcd4, DefaultJobCancelTimeoutInMinutes),
 * less the 15 s before it at which the listener kills the worker (src/Runner.Listener/
 * JobDispatcher.cs @ 98aabcd4, l. 1279-1285).
 */
export const CANCELLED_STEPS_SECONDS = 5 * 60 - 15;

// ---------------------------------------------------------------- expressions

interface Status {
  failed: boolean;
  cancelled?: boolean;
}

const truthy = (v: Value | undefined) => !(v === null || v === undefined || v === false || v === 0 || v === "" || Number.isNaN(v));
const text = (v: Value | undefined): string => (v === null || v === undefined ? "" : typeof v === "object" ? JSON.stringify(v) : String(v));

export function evaluate(expression: string, ctx: Context, status: Status): Value {
  const tokens = expression.match(/\s*(\|\||&&|==|!=|!|\(|\)|\[|\]|,|\.|'(?:[^']|'')*'|-?\d+(?:\.\d+)?|[A-Za-z_][\w-]*)/gy);
  if (!tokens || tokens.join("").trim() !== expression.trim()) throw new Error(`expression not understood: ${expression}`);
  const ts = tokens.map((t) => t.trim());
  let i = 0;
  const peek = () => ts[i];
  const take = (want?: string) => {
    const t = ts[i++];
    if (want !== undefined && t !== want) throw new Error(`expected ${want} at ${i} in ${expression}`);
    return t!;
  };
  const primary = (): Value => {
    const t = take();
    if (t === "(") {
      const v = or();
      take(")");
      return v;
    }
    if (t.startsWith("'")) return t.slice(1, -1).replaceAll("''", "'");
    if (/^-?\d/.test(t)) return Number(t);
    if (t === "true" || t === "false") return t === "true";
    if (t === "null") return null;
    if (peek() === "(") {
      take("(");
      const args: Value[] = [];
      while (peek() !== ")") {
        args.push(or());
        if (peek() === ",") take(",");
      }
      take(")");
      switch (t) {
        case "always":
          return true;
        case "success":
          return !status.failed && !status.cancelled;
        case "failure":
          return status.failed && !status.cancelled;
        case "cancelled":
          return Boolean(status.cancelled);
        case "format":
          return text(args[0]).replace(/\{(\d+)\}/g, (_, n: string) => text(args[Number(n) + 1]));
        case "fromJSON":
          return JSON.parse(text(args[0])) as Value;
        case "toJSON":
          return JSON.stringify(args[0]);
        default:
          throw new Error(`function ${t}() not supported in ${expression}`);
      }
    }
    let v: Value | undefined = ctx[t];
    for (;;) {
      if (peek() === ".") {
        take(".");
        const key = take();
        v = v && typeof v === "object" && !Array.isArray(v) ? v[key] : undefined;
      } else if (peek() === "[") {
        take("[");
        const key = text(or());
        take("]");
        v = v && typeof v === "object" ? (v as Record<string, Value>)[key] : undefined;
      } else break;
    }
    return v ?? null;
  };
  const unary = (): Value => (peek() === "!" ? (take(), !truthy(unary())) : primary());
  const eq = (): Value => {
    let v = unary();
    while (peek() === "==" || peek() === "!=") {
      const op = take();
      const r = unary();
      const same = text(v).toLowerCase() === text(r).toLowerCase();
      v = op === "==" ? same : !same;
    }
    return v;
  };
  const and = (): Value => {
    let v = eq();
    while (peek() === "&&") {
      take();
      const r = eq();
      v = truthy(v) ? r : v;
    }
    return v;
  };
  const or = (): Value => {
    let v = and();
    while (peek() === "||") {
      take();
      const r = and();
      v = truthy(v) ? v : r;
    }
    return v;
  };
  const v = or();
  if (i !== ts.length) throw new Error(`trailing tokens in ${expression}`);
  return v;
}

/** A string with `${{ }}` parts replaced by their values. */
export function interpolate(value: string | number | boolean, ctx: Context, status: Status): string {
  if (typeof value !== "string") return String(value);
  return value.replace(/\$\{\{([\s\S]*?)\}\}/g, (_, e: string) => text(evaluate(e, ctx, status)));
}

// ---------------------------------------------------------------- jobs

function readKeyValues(file: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = readFileSync(file, "utf8").split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc) {
      const body: string[] = [];
      while (++i < lines.length && lines[i] !== heredoc[2]) body.push(lines[i]!);
      out[heredoc[1]!] = body.join("\n");
    } else if (line.includes("=")) out[line.slice(0, line.indexOf("="))] = line.slice(line.indexOf("=") + 1);
  }
  return out;
}

export interface JobResult {
  steps: StepResult[];
  /** steps.<id>.outputs */
  outputs: Record<string, Record<string, string>>;
  summary: string;
  skippedScripts: string[];
  failed: boolean;
  /** The job's `outputs:`, evaluated at its end. */
  jobOutputs: Record<string, string>;
  /** The job's own `if:` was false: no step ran. */
  skipped: boolean;
  /** GitHub cancelled it (options.interrupt "cancel"). */
  cancelled: boolean;
  /** Its runner was lost (options.interrupt "vanish"): the steps after that one never ran. */
  vanished: boolean;
  /** What happened to the interrupted step, with times (ms from its start). */
  interruptEvents: { at: number; what: string }[];
}

export function runJob(workflow: Workflow, jobId: string, o: JobOptions): JobResult {
  const job = workflow.jobs[jobId];
  if (!job) throw new Error(`no job ${jobId}`);
  mkdirSync(o.tempDir, { recursive: true });
  const files = { output: join(o.tempDir, `${jobId}.output`), env: join(o.tempDir, `${jobId}.env`), summary: join(o.tempDir, `${jobId}.summary.md`) };
  writeFileSync(files.summary, "");
  const status: Status = { failed: false, cancelled: false };
  let vanished = false;
  let interruptEvents: JobResult["interruptEvents"] = [];
  let cancelDeadline = Infinity;
  const steps: Record<string, Value> = { ...o.only?.steps };
  const outputs: Record<string, Record<string, string>> = {};
  const results: StepResult[] = [];
  const skippedScripts: string[] = [];
  const jobContext: Record<string, Value> = { status: "success" };
  const base: Context = { inputs: o.contexts.inputs, matrix: o.contexts.matrix ?? {}, needs: o.contexts.needs ?? {}, github: o.contexts.github, vars: o.contexts.vars ?? {}, runner: o.contexts.runner, secrets: {}, steps, job: jobContext };
  const env: Record<string, string> = {};
  if (job.if !== undefined) {
    const condition = job.if.replace(/^\s*\$\{\{([\s\S]*)\}\}\s*$/, "$1");
    const gated = /\b(always|success|failure|cancelled)\(\)/.test(condition) ? condition : `success() && (${condition})`;
    if (!truthy(evaluate(gated, base, status))) return { steps: [], outputs: {}, summary: "", skippedScripts: [], failed: false, jobOutputs: {}, skipped: true, cancelled: false, vanished: false, interruptEvents: [] };
  }
  for (const [k, v] of Object.entries(workflow.env ?? {})) env[k] = interpolate(v, { ...base, env }, status);
  for (const [k, v] of Object.entries(job.env ?? {})) env[k] = interpolate(v, { ...base, env }, status);
  const addedEnv: Record<string, string> = {};

  job.steps.forEach((step, index) => {
    const label = step.name ?? step.uses ?? step.run?.split("\n")[0] ?? `step ${index}`;
    const ctx: Context = { ...base, env: { ...env, ...addedEnv } };
    const condition = step.if === undefined ? "success()" : typeof step.if === "boolean" ? String(step.if) : step.if.replace(/^\s*\$\{\{([\s\S]*)\}\}\s*$/, "$1");
    // A condition without a status function is ANDed with success(), as GitHub does.
    const gated = /\b(always|success|failure|cancelled)\(\)/.test(condition) ? condition : `success() && (${condition})`;
    const result: StepResult = { label, outcome: "skipped", conclusion: "skipped", stdout: "", stderr: "", code: null };
    jobContext["status"] = status.cancelled ? "cancelled" : status.failed ? "failure" : "success";
    if (vanished || (o.only && !o.only.names.includes(label))) {
      results.push(result);
      return;
    }
    if (!truthy(evaluate(gated, ctx, status))) {
      results.push(result);
      if (step.id) steps[step.id] = { outcome: "skipped", conclusion: "skipped", outputs: {} };
      return;
    }
    const stepEnv: Record<string, string> = { ...env, ...addedEnv };
    for (const [k, v] of Object.entries(step.env ?? {})) stepEnv[k] = interpolate(v, ctx, status);
    let ok: boolean;
    let stepOutputs: Record<string, string> = {};
    if (step.run !== undefined) {
      const script = interpolate(step.run, ctx, status);
      if (o.skipScript?.(script)) {
        skippedScripts.push(script);
        ok = true;
      } else {
        writeFileSync(files.output, "");
        writeFileSync(files.env, "");
        const scriptFile = join(o.tempDir, `${jobId}-${index}.sh`);
        writeFileSync(scriptFile, script);
        const processEnv = { ...o.env, ...stepEnv, GITHUB_OUTPUT: files.output, GITHUB_ENV: files.env, GITHUB_STEP_SUMMARY: files.summary, GITHUB_WORKSPACE: o.workspace, RUNNER_TEMP: text(o.contexts.runner["temp"]), GITHUB_RUN_ID: text(o.contexts.github["run_id"]), GITHUB_RUN_ATTEMPT: text(o.contexts.github["run_attempt"] ?? "1"), GITHUB_REPOSITORY: text(o.contexts.github["repository"]), GITHUB_SERVER_URL: text(o.contexts.github["server_url"] ?? "https://github.com"), GITHUB_API_URL: text(o.contexts.github["api_url"] ?? "https://api.github.com"), GITHUB_ACTIONS: "true", CI: "true" };
        if (o.interrupt && o.interrupt.step === label) {
          const resultFile = join(o.tempDir, `${jobId}-${index}.interrupt.json`);
          const jobFile = join(o.tempDir, `${jobId}-${index}.interrupt-job.json`);
          writeFileSync(jobFile, JSON.stringify({ script: scriptFile, cwd: o.workspace, env: processEnv, marker: o.interrupt.marker?.source, poll: o.interrupt.poll, mode: o.interrupt.mode, resultFile }));
          const driver = spawnSync(process.execPath, [join(import.meta.dirname, "stepSignals.ts"), jobFile], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
          if (!existsSync(resultFile)) throw new Error(`step ${label}: the signal driver wrote no result (exit ${driver.status}): ${driver.stderr}`);
          const r = JSON.parse(readFileSync(resultFile, "utf8")) as { stdout: string; stderr: string; code: number | null; triggered: boolean; events: JobResult["interruptEvents"] };
          interruptEvents = r.events;
          Object.assign(result, { stdout: r.stdout, stderr: r.stderr, code: r.code });
          if (!r.triggered) throw new Error(`step ${label}: its output never matched ${o.interrupt.marker ?? o.interrupt.poll} (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
          stepOutputs = readKeyValues(files.output);
          Object.assign(addedEnv, readKeyValues(files.env));
          result.outcome = result.conclusion = "cancelled";
          if (step.id) steps[step.id] = { outcome: "cancelled", conclusion: "cancelled", outputs: stepOutputs };
          if (step.id) outputs[step.id] = stepOutputs;
          results.push(result);
          if (o.interrupt.mode === "vanish") vanished = true;
          else {
            status.cancelled = true;
            cancelDeadline = Date.now() + (o.afterCancelSeconds ?? CANCELLED_STEPS_SECONDS) * 1000;
          }
          return;
        }
        // After a cancel, what is left of GitHub's allowance; a step still running then is killed.
        const left = status.cancelled ? Math.max(1, cancelDeadline - Date.now()) : undefined;
        const r = spawnSync("bash", ["--noprofile", "--norc", "-eo", "pipefail", scriptFile], {
          cwd: o.workspace,
          encoding: "utf8",
          env: processEnv,
          maxBuffer: 64 * 1024 * 1024,
          ...(left !== undefined ? { timeout: left, killSignal: "SIGKILL" as const } : {}),
        });
        Object.assign(result, { stdout: r.stdout ?? "", stderr: `${r.stderr ?? ""}${r.error ? `\n[runner] ${r.error.message}` : ""}`, code: r.status });
        ok = r.status === 0;
        stepOutputs = readKeyValues(files.output);
        Object.assign(addedEnv, readKeyValues(files.env));
      }
    } else if (step.uses) {
      const name = step.uses.replace(/@.*$/, "");
      const handler = o.actions[name];
      if (!handler) throw new Error(`job ${jobId}: no handler for action ${step.uses} (step "${label}"): give one or the test would pretend it ran`);
      const withArgs = Object.fromEntries(Object.entries(step.with ?? {}).map(([k, v]) => [k, interpolate(v, ctx, status)]));
      const r = handler({ with: withArgs, env: stepEnv, workspace: o.workspace, step });
      ok = r.ok;
      stepOutputs = r.outputs ?? {};
    } else throw new Error(`step ${label}: neither run nor uses`);
    const continueOnError = truthy(typeof step["continue-on-error"] === "string" ? evaluate(step["continue-on-error"].replace(/^\s*\$\{\{([\s\S]*)\}\}\s*$/, "$1"), ctx, status) : (step["continue-on-error"] ?? false));
    result.outcome = ok ? "success" : "failure";
    result.conclusion = ok || continueOnError ? "success" : "failure";
    if (result.conclusion === "failure") status.failed = true;
    if (step.id) {
      steps[step.id] = { outcome: result.outcome, conclusion: result.conclusion, outputs: stepOutputs };
      outputs[step.id] = stepOutputs;
    }
    results.push(result);
  });
  const jobOutputs = Object.fromEntries(Object.entries(job.outputs ?? {}).map(([k, v]) => [k, interpolate(v, { ...base, env }, status)]));
  return { steps: results, outputs, summary: readFileSync(files.summary, "utf8"), skippedScripts, failed: status.failed, jobOutputs, skipped: false, cancelled: Boolean(status.cancelled), vanished, interruptEvents };
}

/** Appends a line to a file (a handler's log). */
export const logTo = (file: string, line: string) => appendFileSync(file, `${line}\n`);
