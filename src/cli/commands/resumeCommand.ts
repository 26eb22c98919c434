/**
 * `latlab resume <runId|dir>`: finishes a run that stopped before it finished (see
 * src/runner/resumeRun.ts) — measuring the cells no folder holds, or, every cell measured,
 * finishing it (killed in its teardown) or bringing its results back from a rescue folder — or
 * says exactly why it cannot.
 */
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { Command } from "commander";
import { historyFile } from "../../history/historyStore.ts";
import { comparisonTable, terminalWidth } from "../../report/table.ts";
import { lockRunFolder } from "../../results/outputFolder.ts";
import { lineProgress, barProgress } from "../../runner/progress.ts";
import { hostsLeftBy, pendingWork, resumePlan, resumeRun } from "../../runner/resumeRun.ts";
import { findTarget } from "../../targets/registry.ts";
import { findTool } from "../../tools/registry.ts";
import { sanitizeForTerminal } from "../../tools/terminalText.ts";
import { recordRun } from "../run/recordRun.ts";
import { ignoreHangupWriteErrors } from "../output/hangup.ts";
import { provenanceFacts } from "../run/provenance.ts";
import { newRunId } from "../../results/runId.ts";
import { readSamples, reportLine, runExitCode } from "../output/runOutcome.ts";
import { memoizeSamples } from "../../results/readRunFolder.ts";
import { STOP_SIGNALS } from "../run/stopSignals.ts";
import { stopSignalHandler } from "../../runner/runStop.ts";
import { refuseWithNegation } from "../input/options.ts";

function runFolder(ref: string): string {
  for (const dir of [resolve(ref), resolve("results", ref)]) if (existsSync(resolve(dir, "plan.json")) || existsSync(resolve(dir, "results.json"))) return dir;
  throw new Error(`"${ref}": no run folder (looked for ${resolve(ref)} and ${resolve("results", ref)} with a plan.json)`);
}

export function registerResumeCommand(program: Command, setExitCode: (code: number) => void): void {
  const resume = program
    .command("resume")
    .description(
      "finish a run that stopped before every cell was measured (Ctrl-C, a crash, kill -9): its cells not measured run into the same folder — on the hosts it left up (local target: re-attached, detached clients collected where it stopped) or on hosts brought up again",
    )
    .argument("<runId|dir>", "the run's results folder, or its id under ./results")
    .option("--retry-failed", "also run again the cells that failed for a reason of their own (by default only those never measured or cut off: interrupted, connection lost)")
    .option("--no-install", "never install missing system packages; say what to run instead")
    .option("--history <file>", "record the finished run in this history file (default $LATLAB_HISTORY, else results/history.duckdb)")
    .option("--no-history", "do not record the run in the history")
    .option("--wide", "print every column of the table (default: the columns that answer the question, fitted to the terminal's width, 80 when it cannot tell)")
    .action(async (ref: string, opts: { install: boolean; history: string | boolean; retryFailed?: boolean; wide?: boolean }) => {
      const runDir = runFolder(ref);
      // What is left to do, its rescue folders and a dead resume counted: nothing is changed yet.
      const { plan, results: earlier, cells, action } = pendingWork(runDir, { retryFailed: Boolean(opts.retryFailed) });
      if (action === "nothing") {
        const failed = earlier.measurements.filter((m) => m.status === "failed").length;
        process.stdout.write(
          `nothing to resume: every one of the ${plan.cells.length} cells of run ${earlier.runId} was measured${failed ? ` or failed for a reason of its own (${failed}; --retry-failed runs them again)` : ""} (status ${earlier.status})\n`,
        );
        return;
      }
      const factory = findTarget(earlier.target);
      if (!factory) throw new Error(`run ${earlier.runId} ran on target "${earlier.target}", which this latlab does not have`);
      // Results brought back from a rescue folder need no host: the folder's lock (below) keeps a live run's out.
      const onTarget = action !== "bring-home";
      if (onTarget && !factory.checkResume) {
        throw new Error(
          action === "finish"
            ? `runs on ${earlier.target} cannot be resumed yet: every cell of run ${earlier.runId} was measured, but it stopped before its results were final; \`latlab destroy ${runDir}\` tears down what is left of it`
            : `runs on ${earlier.target} cannot be resumed yet: \`latlab destroy ${runDir}\` tears down what is left of run ${earlier.runId}, and \`latlab run\` measures again (its ${cells.length} cells not measured: ${cells.map((c) => c.id).join(", ")})`,
        );
      }
      // Before anything else: hosts of the run (or of a resume of it) still up, or its runner alive.
      if (onTarget) await factory.checkResume!(earlier.runId, runDir);
      const lock = lockRunFolder(runDir, earlier.runId, (m) => process.stderr.write(`${m}\n`));
      const controller = new AbortController();
      let running = false;
      // The same decisions as `latlab run` (runStop.ts): a second Ctrl-C never cancels the teardown.
      // A resume runs on the local target only, which cannot hand its teardown over.
      const onSignal = stopSignalHandler({ controller, handOver: new AbortController(), running: () => running, canHandOver: () => false, write: (t) => process.stderr.write(t) });
      ignoreHangupWriteErrors(process.stdout);
      ignoreHangupWriteErrors(process.stderr);
      for (const s of STOP_SIGNALS) process.on(s, onSignal);
      try {
        // Nothing to measure (finishing, bringing back): a plan of no cells, so no host is needed but those left up.
        const sub = resumePlan(plan, cells);
        const quiet = process.env.CI === "true";
        const progress = quiet || !process.stderr.isTTY ? lineProgress(process.stderr) : barProgress();
        const log = (m: string) => progress.log(m);
        const targetOptions = { binaries: [...new Set(sub.cells.flatMap((c) => findTool(c.tool)!.binaries))], install: opts.install, log, source: earlier.experiment.source, resultsRoot: resolve("results") };
        if (cells.length) {
          await factory.preflight(sub, targetOptions).catch((error: unknown) => {
            if (!controller.signal.aborted) throw error;
          });
        }
        if (controller.signal.aborted) {
          process.stderr.write("interrupted before anything was brought up; results.json was not changed\n");
          setExitCode(130);
          return;
        }
        // The hosts the run left up, when they are whole: the same hosts, and its detached clients
        // collected — or, finishing a run killed in its teardown, what is left of them torn down
        // (re-attached) or removed (half torn down already: only that run's).
        running = true;
        const { reattached, removeLeftovers } = onTarget
          ? await hostsLeftBy(factory, { runId: earlier.runId, runDir, ref, action }, sub, targetOptions)
          : { reattached: null, removeLeftovers: undefined };
        // Nothing to measure: no new hosts.
        const target = reattached ?? (action === "measure" ? await factory.create(targetOptions) : null);
        const { results, resumedCells, files } = await resumeRun({
          reattached: reattached !== null,
          runDir,
          resumeRunId: newRunId(),
          target,
          progress,
          signal: controller.signal,
          retryFailed: Boolean(opts.retryFailed),
          facts: provenanceFacts(process.cwd()),
          ...(removeLeftovers ? { removeLeftovers } : {}),
        }).catch(async (error: unknown) => {
          // Thrown before its run began (nothing left to resume after all): hosts taken over are not left behind.
          if (reattached) {
            const down = await reattached.down();
            if (down.status === "failed") process.stderr.write(`teardown of the re-attached hosts FAILED:\n  ${down.errors.join("\n  ")}\n`);
          }
          throw error;
        });
        // Read once, for the table and the report, as `latlab run` does.
        const samplesOf = memoizeSamples(readSamples(files, results));
        process.stdout.write(`\n${sanitizeForTerminal(comparisonTable(results, samplesOf, { wide: opts.wide === true, width: terminalWidth() }), { maxLineLength: 100_000 })}\n`);
        for (const line of files.summary()) process.stdout.write(`${line}\n`);
        const resultsFile = files.resultsFile;
        if (!resultsFile) process.stdout.write(`results: NOT SAVED — results.json could be written neither in ${runDir} nor in a rescue folder; the table above is what is left\n`);
        else {
          const what = action === "finish" ? "finished: no cell measured again" : action === "bring-home" ? "brought back from its rescue folder: no cell measured again" : `${resumedCells} cell(s) resumed`;
          process.stdout.write(`results: ${resultsFile} (${what})\n`);
        }
        let code = runExitCode(results);
        if ((files.faults.length || !resultsFile) && code !== 130) code = 1;
        setExitCode(code);
        if (opts.history !== false && resultsFile && results.status !== "running") {
          const file = historyFile(typeof opts.history === "string" ? opts.history : undefined);
          // The run may be in the history already, as it stood when it stopped: its rows are replaced.
          await recordRun(dirname(resultsFile), file, log, { replace: true })
            .then((line) => process.stderr.write(`${line}\n`))
            .catch((error: Error) => process.stderr.write(`history: not recorded in ${file}: ${error.message}\n`));
        }
        if (resultsFile) process.stdout.write(`${await reportLine(dirname(resultsFile), results, samplesOf)}\n`);
      } finally {
        for (const s of STOP_SIGNALS) process.off(s, onSignal);
        lock.release();
      }
    });
  refuseWithNegation(resume, "history");
}
