/**
 * The commands over the history of runs: `history` (list, `add`, `export --parquet`), `trend`,
 * `compare`, and `report` (a run's summary, `--markdown` for CI). The run command records each
 * finished run with {@link recordRun}.
 */
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { Command, Option } from "commander";
import { compareRuns, type RunSource } from "../../history/compareRuns.ts";
import { historyRecords } from "../../history/historyRecords.ts";
import { appendRuns, exportParquet, historyFile, loadHistory, HISTORY_ENV } from "../../history/historyStore.ts";
import { assess } from "../../history/regression.ts";
import { TREND_METRICS, trend, unknownMeasure, type TrendMetric } from "../../history/trend.ts";
import { formatHistory, formatRunComparison, formatTrend } from "../../report/historyText.ts";
import { writeReport } from "../../report/writeReport.ts";
import { reportMarkdown } from "../../report/reportMarkdown.ts";
import { comparisonTable } from "../../report/table.ts";
import { sanitizeForTerminal } from "../../tools/terminalText.ts";
import { memoizeSamples, readRunFolder, type RunFolder } from "../../results/readRunFolder.ts";
import { parseMeasure, parsePercent } from "../input/options.ts";
import { completeRunFolder, refuseSameRun } from "../input/compareInputs.ts";
import { refuseExperimentNotInHistory } from "../input/historyExperiments.ts";
import { pathLengthProblem, shownPath } from "../../results/writablePath.ts";

/** `latlab compare --fail-on-regression`'s exit code when a regression over replicas was found (1 stays "error"). */
export const REGRESSION_EXIT_CODE = 3;
/** …when the only regressions found are over one deployment a run: possibly the hosts drawn (see regression.ts). */
export const CONFOUNDED_REGRESSION_EXIT_CODE = 4;

const HISTORY_HELP = `the history file (default $${HISTORY_ENV}, else results/history.duckdb)`;

/** A run folder by path, or by run id under ./results; undefined when neither exists. */
function findRunFolder(ref: string): string | undefined {
  for (const dir of [resolve(ref), resolve("results", ref)]) if (existsSync(resolve(dir, "results.json")) || (existsSync(dir) && dir.endsWith(".json"))) return dir;
  return undefined;
}

function fromFolder(folder: RunFolder): RunSource {
  const { results, samplesOf } = folder;
  const records = historyRecords(results, samplesOf);
  return {
    runId: results.runId,
    experiment: results.experiment.name,
    summaries: records.summaries,
    facts: records.run,
    sampled: results.measurements.map((measurement) => ({ measurement, samples: samplesOf(measurement.cell) })),
  };
}

/** A run to compare: its results folder (with samples) when there is one, else its rows in the history. */
async function runSource(ref: string, file: string): Promise<RunSource> {
  const dir = findRunFolder(ref);
  if (dir) return fromFolder(completeRunFolder(ref, dir));
  const data = existsSync(file) ? await loadHistory(file) : undefined;
  const run = data?.runs.find((r) => r.runId === ref);
  if (!data || !run) {
    throw new Error(`"${ref}": no results folder (looked for ${resolve(ref)} and ${resolve("results", ref)}) and no run with that id in the history ${file}${data ? "" : " (which does not exist)"}`);
  }
  return { runId: run.runId, experiment: run.experiment, summaries: data.summaries.filter((s) => s.runId === run.runId), facts: run };
}

/** Adds a finished run's folder to the history; returns the line to print. */
export async function recordRun(runDir: string, file: string, log: (m: string) => void = () => {}, options: { replace?: boolean } = {}): Promise<string> {
  const folder = readRunFolder(runDir);
  const { added } = await appendRuns(file, [historyRecords(folder.results, folder.samplesOf)], log, options);
  return added.length ? `history: run ${folder.results.runId} recorded in ${file}` : `history: run ${folder.results.runId} was already in ${file}`;
}

export function registerHistoryCommands(program: Command, setExitCode: (code: number) => void): void {
  const log = (m: string) => process.stderr.write(`${m}\n`);

  const history = program
    .command("history")
    .description("list the runs recorded in the history, with their headline numbers (subcommands: add, export)")
    .argument("[experiment]", "only the runs of this experiment")
    .option("--history <file>", HISTORY_HELP)
    .option("--json", "print the runs as JSON (oldest first)")
    .option("--markdown", "print a GitHub Markdown table")
    .action(async (experiment: string | undefined, opts: { history?: string; json?: boolean; markdown?: boolean }) => {
      const file = historyFile(opts.history);
      // A path no file can have is a typo to name, not an empty history.
      const tooLong = pathLengthProblem(file);
      if (tooLong) throw new Error(`--history ${shownPath(file)}: ${tooLong}`);
      if (!existsSync(file)) {
        // Said apart from an empty history: a mistyped --history reads as "nothing recorded" otherwise.
        process.stdout.write(`no runs recorded in ${file}: there is no such file yet (\`latlab run\` records each finished run there)\n`);
        return;
      }
      const data = await loadHistory(file, experiment);
      if (experiment !== undefined && !data.runs.length) await refuseExperimentNotInHistory(experiment, file);
      if (opts.json) {
        // Each run with its headline: every variant × measure × pair merged over replicas and repetitions.
        const runs = data.runs.map((run) => ({
          ...run,
          headline: data.summaries
            .filter((x) => x.runId === run.runId && x.level === "all")
            .map(({ variant, measure, tool, pair, metric, unit, n, mean, p50, p99 }) => ({ variant, measure, tool, pair, metric, unit, n, mean, p50, p99 })),
        }));
        process.stdout.write(`${JSON.stringify(runs, null, 2)}\n`);
      }
      else process.stdout.write(`${formatHistory(data, file, Boolean(opts.markdown))}\n`);
    });

  history
    .command("add")
    .description("record finished runs' results folders in the history (a run already there is left as it is)")
    .argument("<dir...>", "results folders (each holding a results.json)")
    .option("--history <file>", HISTORY_HELP)
    .action(async (dirs: string[], opts: { history?: string }) => {
      const file = historyFile(opts.history ?? history.opts<{ history?: string }>().history);
      // Every folder is read (and checked) before anything is written: a bad one changes nothing.
      const folders = dirs.map((d) => readRunFolder(d));
      const { added, present } = await appendRuns(file, folders.map((f) => historyRecords(f.results, f.samplesOf)), log);
      process.stdout.write(`history ${file}: ${added.length} run(s) added${added.length ? ` (${added.join(", ")})` : ""}${present.length ? `; already there: ${present.join(", ")}` : ""}\n`);
    });

  history
    .command("export")
    .description("write the history's tables as Parquet files (runs, variants, hosts, summaries, comparisons), for a warehouse or DuckDB")
    .requiredOption("--parquet <dir>", "the folder to write <table>.parquet into")
    .option("--history <file>", HISTORY_HELP)
    .action(async (opts: { parquet: string; history?: string }) => {
      const file = historyFile(opts.history ?? history.opts<{ history?: string }>().history);
      const written = await exportParquet(file, resolve(opts.parquet));
      process.stdout.write(`${written.map((f) => `wrote ${f}`).join("\n")}\n`);
    });

  program
    .command("trend")
    .description("one metric of every variant across an experiment's recorded runs")
    .argument("<experiment>", "the experiment's name")
    .option("--measure <index>", "only this measure (its index in the experiment's measure list)", parseMeasure)
    .addOption(new Option("--metric <name>", "the figure to follow").choices(TREND_METRICS).default("p50"))
    .option("--history <file>", HISTORY_HELP)
    .option("--json", "print the series as JSON")
    .option("--markdown", "print a GitHub Markdown table")
    .action(async (experiment: string, opts: { measure?: number; metric: TrendMetric; history?: string; json?: boolean; markdown?: boolean }) => {
      const file = historyFile(opts.history);
      const data = await loadHistory(file, experiment);
      if (!data.runs.length) await refuseExperimentNotInHistory(experiment, file);
      // The flag's own mistake, not the history's: parseMeasure cannot know the experiment's measures.
      const badMeasure = unknownMeasure(data, opts.measure);
      if (badMeasure) throw new Error(`--measure ${opts.measure}: the runs of "${experiment}" in ${file} ${badMeasure}`);
      const t = trend(data, opts.metric, opts.measure);
      if (opts.json) process.stdout.write(`${JSON.stringify(t, null, 2)}\n`);
      else process.stdout.write(`${formatTrend(t, experiment, Boolean(opts.markdown))}\n`);
      if (!t.runs.length) setExitCode(1);
    });

  program
    .command("compare")
    .description("compare two runs of one experiment, variant by variant, with the statistics variants are compared with")
    .argument("<runA>", "the earlier run (baseline): a results folder, or a run id (under ./results, else in the history)")
    .argument("<runB>", "the later run")
    .option(
      "--fail-on-regression <percent>",
      `exit ${REGRESSION_EXIT_CODE} when a figure got worse by more than this with a 95% CI over replicas that excludes 0; ${CONFOUNDED_REGRESSION_EXIT_CODE} when such a CI is only over one deployment a run (the change may be the hosts drawn); 1 when something measured in both runs could not be compared`,
      parsePercent,
    )
    .option("--history <file>", HISTORY_HELP)
    .option("--json", "print the comparisons and verdicts as JSON")
    .option("--markdown", "print GitHub Markdown")
    .action(async (refA: string, refB: string, opts: { failOnRegression?: number; history?: string; json?: boolean; markdown?: boolean }) => {
      const file = historyFile(opts.history);
      const a = await runSource(refA, file);
      const b = await runSource(refB, file);
      refuseSameRun(refA, a, refB, b);
      const compared = compareRuns(a, b);
      // Without a threshold every change whose CI excludes 0 is shown (as worse / better).
      const findings = assess(compared.comparisons, opts.failOnRegression ?? 0);
      if (opts.json) {
        const verdicts = findings.map(({ comparison, ...f }) => ({ variant: comparison.variant, measure: comparison.measure, pair: comparison.pair, ...f }));
        process.stdout.write(`${JSON.stringify({ ...compared, verdicts, threshold: opts.failOnRegression ?? null }, null, 2)}\n`);
      } else process.stdout.write(`${formatRunComparison(compared, findings, opts.failOnRegression, Boolean(opts.markdown))}\n`);
      if (opts.failOnRegression === undefined) return;
      // A gate that compared nothing, or skipped something both runs measured, must not pass.
      if (!compared.comparisons.length || compared.notComparable.length) {
        const why = compared.notComparable.length ? `${compared.notComparable.length} variant × measure × pair measured in both runs could not be compared` : "nothing was compared (no variant × measure × pair was measured in both runs)";
        process.stderr.write(`latlab compare: ${why}: the regression check cannot pass\n`);
        setExitCode(1);
        return;
      }
      const regressions = findings.filter((f) => f.verdict === "regression");
      if (regressions.some((f) => !f.confounded)) setExitCode(REGRESSION_EXIT_CODE);
      else if (regressions.length) setExitCode(CONFOUNDED_REGRESSION_EXIT_CODE);
    });

  program
    .command("report")
    .description("make a run's report.html and report.md again (older runs too) and print its summary: the comparison table, or --markdown for a CI summary")
    .argument("<runId|dir>", "a run's results folder, or its id under ./results")
    .option("--markdown", "print report.md: GitHub Markdown with the verdicts and a Mermaid picture of the placement (for $GITHUB_STEP_SUMMARY)")
    .option("--no-html", "only print; do not write report.html, report.md and charts/")
    .action(async (ref: string, opts: { markdown?: boolean; html: boolean }) => {
      const dir = findRunFolder(ref);
      if (!dir) throw new Error(`"${ref}": no results folder (looked for ${resolve(ref, "results.json")} and ${resolve("results", ref, "results.json")})`);
      const folder = readRunFolder(dir);
      const { results } = folder;
      const samplesOf = memoizeSamples(folder.samplesOf);
      // results.json may hold tool text from before the parsers cleaned it: made terminal-safe.
      // --markdown is report.md: the table, the verdicts and the Mermaid placement, for CI summaries.
      const text = opts.markdown ? reportMarkdown(results, samplesOf) : `${comparisonTable(results, samplesOf)}\n`;
      process.stdout.write(sanitizeForTerminal(text, { maxLineLength: 100_000 }));
      if (opts.html) {
        const written = await writeReport(dir, results, samplesOf);
        process.stderr.write(`report: ${written.html} (and report.md, ${written.specs.length} chart specs in ${dirname(written.specs[0] ?? `${dir}/charts/x`)})\n`);
      }
    });
}
