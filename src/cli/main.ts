import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { randomBytes } from "node:crypto";
import { Command, CommanderError } from "commander";
import { ExperimentDefinitionError, issuesFromZod } from "../dsl/errors.ts";
import type { Experiment } from "../dsl/experiment.ts";
import { didYouMean } from "../dsl/suggest.ts";
import { buildPlan, type PlanOptions } from "../plan/buildPlan.ts";
import { checkExperiment, confirmText, refusalText } from "../plan/planGuards.ts";
import { formatPlan, formatWaves } from "../report/planText.ts";
import { comparisonTable } from "../report/table.ts";
import type { Results } from "../results/schema.ts";
import { summarize } from "../results/summarize.ts";
import { barProgress, lineProgress } from "../runner/progress.ts";
import { runExperiment } from "../runner/runExperiment.ts";
import { armTimeLimit, formatMinutes, RunStop, stopOf } from "../runner/runStop.ts";
import { prepareOutputFolder, type OutputFolder } from "../results/outputFolder.ts";
import { RunFiles } from "../results/runFiles.ts";
import { TARGET_NAMES, findTarget, type TargetOptions } from "../targets/registry.ts";
import type { Target } from "../targets/target.ts";
import { TOOL_NAMES, findTool } from "../tools/registry.ts";
import { LATLAB_VERSION } from "../version.ts";
import { ignoreHangupWriteErrors } from "./hangup.ts";
import { jsonForTerminal, sanitizeForTerminal } from "./terminalText.ts";
import { recordRun, registerHistoryCommands } from "./historyCommands.ts";
import { writeReport } from "../report/writeReport.ts";
import { loadVega } from "../report/html/renderSvg.ts";
import { memoizeSamples } from "../results/readRunFolder.ts";
import { registerResumeCommand } from "./resumeCommand.ts";
import { registerSweepCommand } from "./commands/sweepCommand.ts";
import { registerCiMatrixCommand } from "./commands/ciMatrixCommand.ts";
import { checkHistoryPlace, historyFile } from "../history/historyStore.ts";
import { provenanceFacts } from "./provenance.ts";
import { scaffold } from "./init/scaffold.ts";
import { describeFound, importExperiment, listExperiments, loadExperiment, type ListedExperiment } from "./loadExperiment.ts";
import { aboutCapture, readCapture } from "./readInput.ts";
import { runWaves } from "./runWaves.ts";
import { parseDuration, parseMaxVcpus, parsePositive, parseReplicas, parseTimeLimit, planOptions, refuseFlagsOfOtherTargets, refuseWithNegation, withReplicas } from "./options.ts";

const SCHEMA_FILE = new URL("../../schema/results.schema.json", import.meta.url);

/** Measurement time per tool run of a rehearsal without --duration. */
export const REHEARSAL_SECONDS = 1;

/**
 * The plan guard (src/plan/planGuards.ts), before anything is built: throws for a plan past the
 * refuse limits; returns the numbers of one past the confirm limits (`run` then needs --yes).
 */
export function guardPlanSize(experiment: Experiment, options: PlanOptions): string | undefined {
  const check = checkExperiment(experiment, options);
  if (check.refused.length) throw new Error(refusalText(experiment.name, check));
  return check.confirm.length ? confirmText(experiment.name, check) : undefined;
}

/** Says on stderr which file a name resolved to (nothing for a path: the user named it). */
function sayWhich(found: Parameters<typeof describeFound>[0]): void {
  const line = describeFound(found);
  // A file's name is the user's text: terminal-safe (terminalText.ts).
  if (line) process.stderr.write(`${sanitizeForTerminal(line)}\n`);
}

interface RunFlags {
  target: string;
  duration?: PlanOptions["duration"];
  out?: string;
  force?: boolean;
  quiet?: boolean;
  install: boolean;
  sshFrom?: string;
  backend?: string;
  maxCost?: number;
  livePrices?: boolean;
  yes?: boolean;
  installPulumi?: boolean;
  rehearse?: boolean;
  replicas?: number;
  /** One deployment at a time, even where deployments are separate machines (Azure). */
  serial?: boolean;
  /** At most this many vCPUs up at once (all regions): the deployments run in waves that fit. */
  maxVcpus?: number;
  /** Stop measuring this many minutes after the start, as on Ctrl-C, and tear down (--time-limit). */
  timeLimit?: number;
  /** The history file, or false (--no-history). */
  history: string | boolean;
}

/** A definition error a target finds (a size it does not know…) names the experiment's file, as the DSL's own do. */
const namingFile =
  (file: string) =>
  (error: unknown): never => {
    throw error instanceof ExperimentDefinitionError ? error.withSource(file) : error;
  };

export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `${stamp}-${randomBytes(2).toString("hex")}`;
}

/**
 * The exit code of a run. A teardown that failed wins over everything, an interruption
 * included: resources may be leaking, and scripts must not take it for a clean Ctrl-C. A teardown
 * handed over (a second signal) is such a failure: it did not finish here. A run stopped at its
 * --time-limit is partial (2) when it measured anything, failed (1) when it measured nothing.
 */
export function runExitCode(results: Pick<Results, "status" | "teardown">): number {
  if (results.teardown.status === "failed" || results.status === "failed") return 1;
  if (results.status === "interrupted") return 130;
  if (results.status === "partial") return 2;
  return 0;
}

/** Signals that stop a run gracefully: Ctrl-C, kill, and a dropped SSH session or terminal. */
/** Writes the run's report; the line says where, or why not and how to make it later. Never fails the run. */
export async function reportLine(dir: string, results: Results, samplesOf: (cell: string) => number[]): Promise<string> {
  try {
    const written = await writeReport(dir, results, samplesOf);
    return `report: ${written.html} (and report.md)`;
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return `report: not written in ${dir}: ${why.split("\n")[0]} (\`latlab report ${dir}\` makes it later)`;
  }
}

export const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const satisfies readonly NodeJS.Signals[];

/** A cell's samples, from the results folder or, for those it could not take, the rescue folder. */
function readSamples(runFiles: RunFiles, results: Results) {
  const files = new Map(results.measurements.map((m) => [m.cell, m.samplesFile]));
  return (cell: string) => {
    const rel = files.get(cell);
    const file = rel ? runFiles.locate(rel) : undefined;
    if (!file || !existsSync(file)) return [];
    return readFileSync(file, "utf8").split("\n").filter(Boolean).map(Number);
  };
}

export async function main(argv: string[]): Promise<number> {
  // `latlab list | head -1`: once the reader is gone, writes fail with EPIPE, and an 'error' event
  // nobody listens to is a stack trace. Nobody reads any more: what is left to print is dropped,
  // the command finishes as it would have and exits with its own code.
  ignoreHangupWriteErrors(process.stdout);
  ignoreHangupWriteErrors(process.stderr);
  const { program, exitCode } = buildProgram();
  try {
    await program.parseAsync(argv, { from: "user" });
    return exitCode();
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    if (error instanceof ExperimentDefinitionError) process.stderr.write(`${error.message}\n`);
    else process.stderr.write(`latlab: ${sanitizeForTerminal((error as Error).message)}\n`);
    return 1;
  }
}

/**
 * Every command and option, built without parsing anything (tests walk `program.commands`, e.g.
 * to check that the GitHub workflows call only commands and options latlab has). `exitCode()` is
 * what the action that ran decided.
 */
export function buildProgram(): { program: Command; exitCode: () => number } {
  let exitCode = 0;
  const program = new Command("latlab")
    .description("Repeatable, honest network-latency experiments on emulated hosts or Azure.")
    .version(LATLAB_VERSION)
    .exitOverride()
    .showSuggestionAfterError(true);

  const run = program
    .command("run")
    .alias("experiment")
    .description("run an experiment: bring hosts up, measure, compare, tear down")
    .argument("<experiment>", "a name from ./experiments, then latlab's own, or the path of your own .ts file")
    .option("-t, --target <name>", `where hosts run (${TARGET_NAMES.join(", ")})`, "local")
    .option("-d, --duration <seconds|Nx>", "measurement time per tool run, or a factor of the experiment's own", parseDuration)
    .option("-o, --out <dir>", "results folder (default results/<runId>); made if missing, refused if not empty (see --force) or in use by another run")
    .option("--force", "use a results folder that is not empty: remove what latlab recorded writing there (.latlab-manifest.json), nothing else, once every check has passed")
    .option("-q, --quiet", "print only failures and the final table (CI)")
    .option("--no-install", "never install missing system packages; say what to run instead")
    .option("--ssh-from <cidr>", "azure: the address your SSH comes from (the only SSH source the VMs accept), or \"auto\" to ask a public what-is-my-IP service")
    .option(
      "--backend <url>",
      "azure: Pulumi backend, e.g. azblob://<container>?storage_account=<account> (default: $LATLAB_PULUMI_BACKEND, else a file backend in the run's state folder, $LATLAB_STATE_DIR or ~/.local/state/latlab/runs/<runId>, never the results folder). One outside the state folder outlives this machine (`latlab destroy <runId> --backend <url>` works from another) and needs the stack passphrase in PULUMI_CONFIG_PASSPHRASE or PULUMI_CONFIG_PASSPHRASE_FILE",
    )
    .option("--max-cost <usd>", "azure: refuse to deploy above this estimated cost", parsePositive)
    .option("--live-prices", "azure: refresh prices from the Azure Retail Prices API")
    .option("--yes", "run a plan above latlab's size limits (see `latlab plan`); azure: deploy without asking")
    .option("--install-pulumi", "azure: let latlab install the Pulumi CLI if it is missing")
    .option("--replicas <n>", "independent host sets per variant, overriding the experiment's (comparisons are then over replicas)", parseReplicas)
    .option("--rehearse", "azure: run the same Pulumi program through the same engine against latlab's Azure emulator on this machine (no account, no cost)")
    .option("--serial", "measure one deployment at a time (on Azure, whose deployments are separate VMs, their cells otherwise run at the same time, each deployment's own one after another)")
    .option("--max-vcpus <n>", "at most this many vCPUs up at once (all regions together): the deployments run in waves that fit, each torn down before the next (azure: within the subscription's free quota too)", parseMaxVcpus)
    .option(
      "--time-limit <minutes>",
      "stop measuring this many minutes after the start, as on Ctrl-C, and tear down with the teardown's full allowance: what was measured is kept, the cells not reached are recorded as not run (exit 2 when something was measured; under a CI step's timeout-minutes, so the teardown is not what the timeout cuts)",
      parseTimeLimit,
    )
    .option("--history <file>", "record the finished run in this history file (default $LATLAB_HISTORY, else results/history.duckdb)")
    .option("--no-history", "do not record the run in the history")
    .action(async (ref: string, opts: RunFlags) => {
      const factory = findTarget(opts.target);
      if (!factory) throw new Error(`unknown target "${opts.target}"${didYouMean(opts.target, TARGET_NAMES)}`);
      // --rehearse, --max-cost, --ssh-from… on --target local would be ignored silently.
      refuseFlagsOfOtherTargets(opts, opts.target);
      const found = await loadExperiment(ref);
      const { experiment, file } = found;
      if (!opts.quiet) sayWhich(found);
      // A rehearsal checks the run, not the network: seconds per tool run, not the hours an Azure run may measure for.
      if (opts.rehearse && !opts.duration) opts.duration = { seconds: REHEARSAL_SECONDS };
      const options = planOptions(experiment, opts.target, opts.duration);
      // Before anything is built, installed or written: an absurd plan is refused, a large one needs --yes.
      const large = guardPlanSize(withReplicas(experiment, opts.replicas), options);
      if (large && !opts.yes) throw new Error(`${large}\nNothing was started. Add --yes to run it anyway.`);
      if (large) process.stderr.write(`${large}\n--yes: running it.\n`);
      const plan = buildPlan(withReplicas(experiment, opts.replicas), options);
      const runId = newRunId();
      const runDir = resolve(opts.out ?? `results/${runId}`);
      const quiet = opts.quiet || process.env.CI === "true";
      const progress = quiet || !process.stderr.isTTY ? lineProgress(process.stderr, opts.quiet) : barProgress();
      const log = (m: string) => progress.log(m);
      // What must be read even with --quiet: storage failures, what preparing the folder did.
      const say = (m: string) => (opts.quiet ? process.stderr.write(`${m}\n`) : progress.log(m));

      // Aborted with a RunStop (runner/runStop.ts): a signal's, or the time limit's; the first stands.
      const controller = new AbortController();
      // A second, different stop signal: the process is about to be killed (GitHub's runner sends
      // SIGINT, SIGTERM 7.5 s later and SIGKILL 2.5 s after that: actions/runner
      // src/Runner.Sdk/ProcessInvoker.cs @ 258d6c857db3519913f7deb6004b60172f8043ae lines 32-33,
      // 443-465). The target hands its teardown over (Target.handOver) and latlab exits at once.
      const handOver = new AbortController();
      let firstSignal: NodeJS.Signals | undefined;
      let signals = 0;
      let running = false;
      /** The run's target once created: whether it can hand its teardown over. */
      let created: Target | undefined;
      const onSignal = (signal: NodeJS.Signals) => {
        signals++;
        firstSignal ??= signal;
        if (!running) process.stderr.write(`\n${signal}: stopping; nothing has been brought up yet\n`);
        else if (signals === 1) process.stderr.write(controller.signal.aborted ? `\n${signal}: already stopping (its time limit); the teardown goes on…\n` : `\n${signal}: stopping after the current step and tearing everything down…\n`);
        else if (signal !== firstSignal && !handOver.signal.aborted && created?.handOver) {
          process.stderr.write(`${signal} after ${firstSignal}: the process is about to be killed; handing the teardown over and exiting…\n`);
          handOver.abort(new RunStop({ by: "signal", signal }));
        } else process.stderr.write(`${signal}: teardown is running; it reports what it could not remove when it ends\n`);
        controller.abort(new RunStop({ by: "signal", signal }));
      };
      // Armed before the output folder, the preflight and the deploy: the limit counts from the start of the command's work.
      const disarmTimeLimit =
        opts.timeLimit === undefined
          ? () => {}
          : armTimeLimit(controller, opts.timeLimit, undefined, () => process.stderr.write(`\ntime limit of ${formatMinutes(opts.timeLimit!)} reached (--time-limit): stopping after the current step and tearing everything down…\n`));
      // Nothing measured when the time limit stops a run before it started: a failure (1), not an interruption (130).
      const stoppedExitCode = () => (stopOf(controller.signal)?.stop.by === "time-limit" ? 1 : 130);
      // After a hang-up the terminal is gone: writes fail with EIO/EPIPE, and must not crash
      // the process before teardown has run and results.json is written.
      ignoreHangupWriteErrors(process.stdout);
      ignoreHangupWriteErrors(process.stderr);
      for (const s of STOP_SIGNALS) process.on(s, onSignal);
      let folder: OutputFolder | undefined;
      try {
        // Before anything is installed or brought up: a folder that cannot hold the run, or that
        // another run holds, is refused at once; it stays locked until the run has ended. So is a
        // history file's place that cannot hold it (/proc…): found now, not after the run.
        try {
          if (opts.history !== false) await checkHistoryPlace(historyFile(typeof opts.history === "string" ? opts.history : undefined), controller.signal);
          folder = await prepareOutputFolder(runDir, { runId, force: Boolean(opts.force), signal: controller.signal, log: say });
        } catch (error) {
          if (!controller.signal.aborted) throw error;
          process.stderr.write(`${(error as Error).message}\n`);
          exitCode = stoppedExitCode();
          return;
        }
        // Azure's preflight lists the resources in a subprocess that must plan the same run.
        // TargetOptions has no field for it yet: read as `duration` where present.
        const targetOptions: TargetOptions = {
          binaries: [...new Set(plan.cells.flatMap((c) => findTool(c.tool)!.binaries))],
          install: opts.install,
          log,
          source: file,
          resultsRoot: resolve("results"),
          ...(opts.sshFrom ? { sshFrom: opts.sshFrom } : {}),
          ...(opts.backend ? { backend: opts.backend } : {}),
          ...(opts.maxCost !== undefined ? { maxCost: opts.maxCost } : {}),
          livePrices: Boolean(opts.livePrices),
          yes: Boolean(opts.yes),
          installPulumi: Boolean(opts.installPulumi),
          rehearse: Boolean(opts.rehearse),
          ...(opts.duration ? { duration: opts.duration } : {}),
          ...(opts.replicas !== undefined ? { replicas: opts.replicas } : {}),
        };
        try {
          await factory.preflight(plan, targetOptions).catch(namingFile(file));
        } catch (error) {
          // Ctrl-C reaches the preflight's own commands (apt-get…) too: their failure is the interruption.
          if (!controller.signal.aborted) throw error;
        }
        if (controller.signal.aborted) {
          process.stderr.write(`${stopOf(controller.signal)?.stop.by === "time-limit" ? "the time limit was reached" : "interrupted"} before anything was brought up; nothing was started\n`);
          exitCode = stoppedExitCode();
          return;
        }
        progress.log(`${experiment.name}: ${plan.variants.length} variants, ${plan.estimate.hosts} hosts, ${plan.cells.length} cells, ~${Math.ceil(plan.estimate.measurementSeconds)} s of measurement; run ${runId}`);
        const target = await factory.create(targetOptions);
        created = target;
        // Every check that can refuse the run has passed: only now does --force remove what latlab wrote there before.
        await folder.claim();

        running = true;
        const facts = provenanceFacts(process.cwd());
        // Files the results folder cannot take (a full disk…) go to a rescue folder, said as it happens.
        const files = new RunFiles(runDir, { runId, warn: say });
        // Waves when the subscription's free quota (read live) or --max-vcpus cannot hold every deployment at once.
        const waves = () => runWaves(plan, target, { runId, runDir, log, signal: controller.signal }, opts.maxVcpus, { azureCost: opts.target === "azure" && !opts.rehearse, livePrices: Boolean(opts.livePrices) });
        const results = await runExperiment({ experiment, source: file, plan, target, runId, runDir, progress, signal: controller.signal, handOver: handOver.signal, facts, files, waves, whileBringingUp: () => Promise.all([loadVega(), opts.history === false ? undefined : import("@duckdb/node-api")]), ...(opts.serial ? { concurrency: "serial" as const } : {}) });
        disarmTimeLimit();
        if (results.teardown.handedOver) {
          // SIGKILL is about 2 s away: results.json and the run state are written; the table, the
          // report and the history (seconds each) are left for later, and the process exits now,
          // giving up the teardown in flight (what it was doing goes on, or is finished later).
          exitCode = runExitCode(results);
          const where = files.resultsFile;
          process.stdout.write(
            `results: ${where ?? `NOT SAVED — results.json could be written neither in ${runDir} nor in a rescue folder`}\n` +
              `teardown: handed over — ${results.teardown.handedOver.started.length ? results.teardown.handedOver.started.join("; ") : "nothing could be started"}\n` +
              results.teardown.handedOver.finishWith.map((c) => `  finish it with: ${c}\n`).join("") +
              (where ? `  later: \`latlab report ${dirname(where)}\` makes the report, \`latlab history add ${dirname(where)}\` records the run\n` : ""),
          );
          folder?.release();
          process.exit(exitCode);
        }
        // The table quotes failed cells' errors and tools' notes: terminal-safe, wide lines kept.
        // Read once, for the table and the report: a cell may hold millions of samples.
        const samplesOf = memoizeSamples(readSamples(files, results));
        process.stdout.write(`\n${sanitizeForTerminal(comparisonTable(results, samplesOf), { maxLineLength: 100_000 })}\n`);
        for (const line of files.summary()) process.stdout.write(`${line}\n`);
        const resultsFile = files.resultsFile;
        const elsewhere = resultsFile && resultsFile !== files.inRunFolder("results.json");
        if (!resultsFile) process.stdout.write(`results: NOT SAVED — results.json could be written neither in ${runDir} nor in a rescue folder; the table above is what is left\n`);
        else process.stdout.write(`results: ${resultsFile}${elsewhere ? ` (not in ${runDir}, which could not take it)` : ""}\n`);
        exitCode = runExitCode(results);
        // Results not where they were asked for (--out) are a failure for whoever reads them there.
        if ((files.faults.length || !resultsFile) && exitCode !== 130) exitCode = 1;
        // The history (DuckDB, mostly native work) and the report (charts rendered in JS) at the
        // same time: the hosts are gone, nothing measures any more.
        const report = resultsFile ? reportLine(dirname(resultsFile), results, samplesOf) : undefined;
        if (opts.history !== false && resultsFile) {
          // The results are on disk whatever happens here: a history that cannot be written is said, not fatal.
          const resultsDir = dirname(resultsFile);
          const file = historyFile(typeof opts.history === "string" ? opts.history : undefined);
          await recordRun(resultsDir, file, log)
            .then((line) => process.stderr.write(`${line}\n`))
            .catch((error: Error) => process.stderr.write(`history: not recorded in ${file}: ${error.message}\n  (the results are in ${resultsDir}; \`latlab history add ${resultsDir}\` records them later)\n`));
        }
        // Last: the page to open.
        if (report) process.stdout.write(`${await report}\n`);
      } finally {
        disarmTimeLimit();
        for (const s of STOP_SIGNALS) process.off(s, onSignal);
        folder?.release();
      }
    });
  refuseWithNegation(run, "history");

  program
    .command("plan")
    .description("show what an experiment would do: variants, hosts, cells, estimated time")
    .argument("<experiment>", "a name from ./experiments, then latlab's own, or the path of your own .ts file")
    .option("--json", "print the plan as JSON")
    .option("-t, --target <name>", `where hosts would run (${TARGET_NAMES.join(", ")})`, "local")
    .option("-d, --duration <seconds|Nx>", "measurement time per tool run, or a factor", parseDuration)
    .option("--live-prices", "azure: refresh prices from the Azure Retail Prices API")
    .option("--max-cost <usd>", "azure: fail when the estimated cost is above this", parsePositive)
    .option("--replicas <n>", "independent host sets per variant, overriding the experiment's", parseReplicas)
    .option("--max-vcpus <n>", "show the waves a run with at most this many vCPUs up at once would go in", parseMaxVcpus)
    .action(async (ref: string, opts: { json?: boolean; target: string; duration?: PlanOptions["duration"]; livePrices?: boolean; maxCost?: number; replicas?: number; maxVcpus?: number }) => {
      const factory = findTarget(opts.target);
      if (!factory) throw new Error(`unknown target "${opts.target}"${didYouMean(opts.target, TARGET_NAMES)}`);
      // --max-cost and --live-prices would be ignored silently on another target.
      refuseFlagsOfOtherTargets(opts, opts.target);
      const found = await loadExperiment(ref);
      const { experiment } = found;
      sayWhich(found);
      const options = planOptions(experiment, opts.target, opts.duration);
      const large = guardPlanSize(withReplicas(experiment, opts.replicas), options);
      if (large) process.stderr.write(`warning: ${large}\n\`latlab run\` will need --yes for it.\n`);
      const plan = buildPlan(withReplicas(experiment, opts.replicas), options);
      // What this target would refuse, and what a reader of the plan must know (sizes it cannot cap…).
      const notes = (await factory.planNotes?.(plan).catch(namingFile(found.file))) ?? [];
      if (opts.target !== "azure") {
        // Waves only when asked (--max-vcpus): this target has no quota.
        let waves: import("../plan/waves.ts").WavePlan | undefined;
        const waveLines: string[] = [];
        if (opts.maxVcpus !== undefined) {
          const { planWaves, WaveRefusal } = await import("../plan/waves.ts");
          const { deploymentDemands, maxVcpusLimits } = await import("../targets/azure/catalog/quota.ts");
          try {
            waves = planWaves(plan, deploymentDemands(plan), maxVcpusLimits(opts.maxVcpus));
            waveLines.push(formatWaves(waves));
          } catch (e) {
            if (!(e instanceof WaveRefusal)) throw e;
            process.stderr.write(`refused: ${e.message}\n`);
            exitCode = 1;
          }
        }
        // The description, the variants' values and the notes are the user's text: terminal-safe (terminalText.ts).
        process.stdout.write(opts.json ? `${jsonForTerminal({ ...plan, notes, ...(waves ? { waves } : {}) })}\n` : `${sanitizeForTerminal([formatPlan(plan), ...notes, ...waveLines].join("\n"), { maxLineLength: 100_000 })}\n`);
        return;
      }
      // Offline: the Pulumi program under mocks, no credentials, nothing created.
      const { azurePlanReport } = await import("../targets/azure/program/listing.ts");
      const report = await azurePlanReport(plan, { livePrices: Boolean(opts.livePrices), ...(opts.maxCost !== undefined ? { maxCostUsd: opts.maxCost } : {}), ...(opts.maxVcpus !== undefined ? { maxVcpus: opts.maxVcpus } : {}) });
      const { formatAzureReport } = await import("../report/azurePlanText.ts");
      process.stdout.write(opts.json ? `${jsonForTerminal({ plan, azure: report })}\n` : `${sanitizeForTerminal(`${formatPlan(plan)}\n\n${formatAzureReport(report)}`, { maxLineLength: 100_000 })}\n`);
      // `plan` fails for its cost only when asked to check one (--max-cost); the listing says what a deploy would refuse.
      if (report.refusals.length && opts.maxCost !== undefined) {
        process.stderr.write(`refused: ${report.refusals.map((r) => r.message).join("; ")}\n`);
        exitCode = 1;
      }
      // Waves that cannot be had under the user's own --max-vcpus fail `plan` (the default profile's only inform: a subscription may have more).
      if (report.waves.refusal && opts.maxVcpus !== undefined && /--max-vcpus/.test(report.waves.refusal)) {
        process.stderr.write(`refused: ${report.waves.refusal}\n`);
        exitCode = 1;
      }
    });

  program
    .command("destroy")
    .description("finish tearing down an Azure run whose teardown failed or never ran")
    .argument("<runId|dir>", "the run id (its state folder, or a folder under results/) or the run's results folder")
    .option(
      "--backend <url>",
      "the run's Pulumi backend, when its state folder is not on this machine (default: $LATLAB_PULUMI_BACKEND): its stack latlab-<runId> is destroyed from the backend, with the passphrase from PULUMI_CONFIG_PASSPHRASE or PULUMI_CONFIG_PASSPHRASE_FILE",
    )
    .option("--install-pulumi", "let latlab install the Pulumi CLI if it is missing")
    .action(async (ref: string, opts: { installPulumi?: boolean; backend?: string }) => {
      const { destroyRun } = await import("../targets/azure/lifecycle/destroyRun.ts");
      const { createPulumiStackFactory } = await import("../targets/azure/lifecycle/stack.ts");
      const { formatLeft } = await import("../targets/azure/lifecycle/teardown.ts");
      const log = (m: string) => process.stderr.write(`${m}\n`);
      const report = await destroyRun(ref, {
        resultsRoot: resolve("results"),
        stackFactory: createPulumiStackFactory({ installPulumi: Boolean(opts.installPulumi), log }),
        log,
        ...(opts.backend !== undefined ? { backendUrl: opts.backend } : {}),
      });
      process.stdout.write(`teardown: ${report.status}${report.errors.length ? `\n  ${report.errors.join("\n  ")}` : ""}\n${formatLeft(report)}\n`);
      if (report.status === "failed") exitCode = 1;
    });

  registerSweepCommand(program, (code) => {
    exitCode = code;
  });
  registerResumeCommand(program, (code) => {
    exitCode = code;
  });
  registerHistoryCommands(program, (code) => {
    exitCode = code;
  });

  program
    .command("cleanup")
    .description("remove what runs whose latlab process died left on this machine (namespaces, links, processes, temp folders with keys); never a live run")
    .option("--dry-run", "only list what would be removed")
    .option("--unrecorded", "also remove leftovers no run record accounts for (an older latlab's): only when no latlab is running")
    .action(async (opts: { dryRun?: boolean; unrecorded?: boolean }) => {
      const log = (m: string) => process.stderr.write(`${m}\n`);
      for (const name of TARGET_NAMES) {
        const factory = findTarget(name)!;
        if (!factory.cleanup) continue;
        const outcome = await factory.cleanup({ dryRun: Boolean(opts.dryRun), unrecorded: Boolean(opts.unrecorded), log: () => {} });
        process.stdout.write(`${name}: ${outcome.text.includes("\n") ? `\n${outcome.text}` : outcome.text}\n`);
        if (outcome.failed) exitCode = 1;
      }
      log("azure: runs on Azure are finished with `latlab destroy <runId>`; expired ones found with `latlab sweep`");
    });

  program
    .command("list")
    .description("list the experiments in ./experiments, then latlab's own")
    .action(async () => {
      const line = async (e: ListedExperiment, note: string | undefined) => {
        let text: string;
        try {
          text = (await importExperiment(e.file)).description;
        } catch (error) {
          text = `(broken: ${(error as Error).message.split("\n")[0]})`;
        }
        // A description (and a file's name) is the user's text: terminal-safe (terminalText.ts), on one line.
        process.stdout.write(`${sanitizeForTerminal(`  ${e.name.padEnd(24)} ${text}${note ? ` (${note})` : ""}`).replaceAll("\n", "\\n")}\n`);
      };
      const { project, latlab } = listExperiments();
      if (project) {
        process.stdout.write("./experiments:\n");
        if (!project.length) process.stdout.write("  (none)\n");
        for (const e of project) await line(e, e.shadows ? "shadows latlab's own" : undefined);
      }
      process.stdout.write("latlab's own experiments:\n");
      for (const e of latlab) await line(e, e.shadowedBy ? `shadowed by ./experiments/${basename(e.shadowedBy)}` : undefined);
    });

  program
    .command("init")
    .description("make a new experiments project: package.json, tsconfig.json, experiments/example.ts, .gitignore, README.md, and latlab's GitHub workflows in .github/workflows/ (scheduled.yml, latlab-measure.yml, latlab-history.yml, latlab-sweep.yml)")
    .argument("[dir]", "where (made if missing)", ".")
    .option("--force", "overwrite files that exist")
    .action(async (dir: string, opts: { force?: boolean }) => {
      const result = await scaffold(dir, { force: Boolean(opts.force) });
      if (!result.written.length) {
        process.stderr.write(`latlab init: these files exist in ${result.dir}; nothing was written (--force overwrites them):\n${result.existing.map((f) => `  ${f}\n`).join("")}`);
        exitCode = 1;
        return;
      }
      const overwritten = new Set(result.existing);
      process.stdout.write(`wrote in ${result.dir}:\n${result.written.map((f) => `  ${f}${overwritten.has(f) ? " (overwritten)" : ""}\n`).join("")}`);
      const cd = resolve(dir) === process.cwd() ? "" : `cd ${/^[\w./-]+$/.test(dir) ? dir : `'${dir.replaceAll("'", "'\\''")}'`} && `;
      // Not on the npm registry yet: `npm install` alone would find no latlab (or somebody else's).
      process.stdout.write(
        `next:\n  ${cd}npm install /path/to/latlab-<version>.tgz   # \`npm pack\` in a latlab clone makes it\n  npx latlab run example                       # as root: emulated hosts are network namespaces\n` +
          "  .github/workflows/scheduled.yml runs the experiments weekly on Azure: see latlab's README, \"Scheduled runs in GitHub Actions\"\n",
      );
    });

  program
    .command("parse")
    .description("normalise an output captured by hand (RTT in µs), to compare old measurements with new runs")
    .argument("<tool>", `one of ${TOOL_NAMES.join(", ")}`)
    .argument("<file>", "the tool's captured stdout (stderr may be appended)")
    .option("--file <path...>", "extra files the tool wrote (e.g. sockperf --full-log)")
    .option("--params <json>", "the tool parameters the capture was made with, e.g. '{\"parallel\": 4}' (default: the tool's defaults)")
    .option("--json", "print JSON")
    .action((toolName: string, file: string, opts: { file?: string[]; json?: boolean; params?: string }) => {
      const tool = findTool(toolName);
      if (!tool) throw new Error(`unknown tool "${toolName}"${didYouMean(toolName, TOOL_NAMES)}`);
      const text = readCapture(file);
      const files = Object.fromEntries((opts.file ?? []).map((f) => [f, readCapture(f, "--file")]));
      let given: unknown = {};
      if (opts.params) {
        try {
          given = JSON.parse(opts.params);
        } catch {
          throw new Error(`--params: not JSON: ${opts.params}`);
        }
      }
      const parsedParams = tool.params.safeParse(given, { reportInput: true });
      if (!parsedParams.success) throw new Error(`--params: ${issuesFromZod(parsedParams.error).map((i) => `${i.path}: ${i.message}`).join("; ")}`);
      const params = parsedParams.data;
      const result = aboutCapture(file, () => tool.parse({ stdout: text, stderr: "", exitCode: 0, files }, params));
      const summary = summarize(result);
      const out = { tool: tool.name, file: resolve(file), summary, reported: result.reported, warnings: result.warnings, samples: result.samples.length };
      if (opts.json) process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
      else {
        const s = summary;
        process.stdout.write(
          s
            ? `${tool.name} ${s.metric} (${s.unit}): n=${s.count} mean=${s.mean.toFixed(2)} p50=${s.p50.toFixed(2)} p90=${s.p90.toFixed(2)} p99=${s.p99.toFixed(2)} p99.9=${s.p999.toFixed(2)} min=${s.min.toFixed(2)} max=${s.max.toFixed(2)} stddev=${s.stddev.toFixed(2)}\n`
            : `${tool.name}: no summary could be made\n`,
        );
        for (const w of result.warnings) process.stdout.write(`warning: ${w}\n`);
      }
    });

  registerCiMatrixCommand(program, (code) => {
    exitCode = code;
  });

  program
    .command("schema")
    .description("print the JSON Schema of results.json (--write updates schema/results.schema.json)")
    .option("--write", "write it into the repository")
    .action(async (opts: { write?: boolean }) => {
      const { resultsJsonSchema } = await import("../results/jsonSchema.ts");
      const text = `${JSON.stringify(resultsJsonSchema(), null, 2)}\n`;
      if (opts.write) {
        const { writeFileSync } = await import("node:fs");
        writeFileSync(SCHEMA_FILE, text);
        process.stdout.write(`wrote ${SCHEMA_FILE.pathname}\n`);
      } else process.stdout.write(text);
    });

  return { program, exitCode: () => exitCode };
}
