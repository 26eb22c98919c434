/**
 * `latlab run <experiment>` (alias `experiment`): bring hosts up, measure, compare, tear down —
 * and on every path (error, Ctrl-C, --time-limit, a second signal) leave nothing up and say so.
 */
import { dirname, resolve } from "node:path";
import type { Command } from "commander";
import { didYouMean } from "../../dsl/suggest.ts";
import { buildPlan, type PlanOptions } from "../../plan/buildPlan.ts";
import { checkHistoryPlace, historyFile } from "../../history/historyStore.ts";
import { comparisonTable, terminalWidth } from "../../report/table.ts";
import { loadVega } from "../../report/html/renderSvg.ts";
import { prepareOutputFolder, type OutputFolder } from "../../results/outputFolder.ts";
import { memoizeSamples } from "../../results/readRunFolder.ts";
import { newRunId } from "../../results/runId.ts";
import { RunFiles } from "../../results/runFiles.ts";
import { barProgress, lineProgress } from "../../runner/progress.ts";
import { runExperiment } from "../../runner/runExperiment.ts";
import { armTimeLimit, formatMinutes, stopOf, stopSignalHandler } from "../../runner/runStop.ts";
import { TARGET_NAMES, findTarget, type TargetOptions } from "../../targets/registry.ts";
import type { Target } from "../../targets/target.ts";
import { findTool } from "../../tools/registry.ts";
import { namingFile, sayWhich } from "../experiments/foundExperiment.ts";
import { ignoreHangupWriteErrors } from "../output/hangup.ts";
import { recordRun } from "../run/recordRun.ts";
import { loadExperiment } from "../experiments/loadExperiment.ts";
import { parseDuration, parseMaxVcpus, parsePositive, parseReplicas, parseTimeLimit, planOptions, refuseFlagsOfOtherTargets, refuseWithNegation, withReplicas } from "../input/options.ts";
import { readSamples, reportLine, runExitCode } from "../output/runOutcome.ts";
import { provenanceFacts } from "../run/provenance.ts";
import { guardPlanSize, REHEARSAL_SECONDS } from "../run/planGuard.ts";
import { STOP_SIGNALS } from "../run/stopSignals.ts";
import { runWaves } from "../run/runWaves.ts";
import { sanitizeForTerminal } from "../output/terminalText.ts";

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
  /** Every column of the table, not only those that fit the terminal (--wide). */
  wide?: boolean;
}

export function registerRunCommand(program: Command, setExitCode: (code: number) => void): void {
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
    .option("--wide", "print every column of the table (default: the columns that answer the question, fitted to the terminal's width, 80 when it cannot tell)")
    .action(async (ref: string, opts: RunFlags) => setExitCode(await runCommand(ref, opts)));
  refuseWithNegation(run, "history");
}

/** The run itself; its exit code. */
async function runCommand(ref: string, opts: RunFlags): Promise<number> {
  let exitCode = 0;
  const factory = findTarget(opts.target);
  if (!factory) throw new Error(`unknown target "${opts.target}"${didYouMean(opts.target, TARGET_NAMES)}`);
  // --rehearse, --max-cost, --ssh-from… on --target local would be ignored silently.
  refuseFlagsOfOtherTargets(opts, opts.target);
  const found = await loadExperiment(ref);
  const { experiment, file } = found;
  if (!opts.quiet) sayWhich(found);
  // A rehearsal checks the run, not the network: seconds per tool run, not the hours an Azure run may measure for.
  // Its budget is still the real run's: the plan at the user's own duration goes along (realPlan).
  const realDuration = opts.duration;
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
  let running = false;
  /** The run's target once created: whether it can hand its teardown over. */
  let created: Target | undefined;
  // What each signal does (runStop.ts): the first stops the run, the same again never cancels the teardown.
  const onSignal = stopSignalHandler({ controller, handOver, running: () => running, canHandOver: () => Boolean(created?.handOver), write: (t) => process.stderr.write(t) });
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
      return exitCode;
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
      ...(opts.rehearse && realDuration !== opts.duration ? { realPlan: buildPlan(withReplicas(experiment, opts.replicas), planOptions(experiment, opts.target, realDuration)) } : {}),
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
      return exitCode;
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
    process.stdout.write(`\n${sanitizeForTerminal(comparisonTable(results, samplesOf, { wide: opts.wide === true, width: terminalWidth() }), { maxLineLength: 100_000 })}\n`);
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
  return exitCode;
}
