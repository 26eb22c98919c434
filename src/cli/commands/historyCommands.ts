/**
 * `latlab history [experiment]`: the runs recorded in the history, with their headline numbers;
 * `history add` records finished runs' folders, `history export --parquet` writes its tables.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { historyRecords } from "../../history/historyRecords.ts";
import { appendRuns, exportParquet, historyFile, loadHistory } from "../../history/historyStore.ts";
import { formatHistory } from "../../report/historyText.ts";
import { readRunFolder } from "../../results/readRunFolder.ts";
import { pathLengthProblem, shownPath } from "../../results/writablePath.ts";
import { refuseExperimentNotInHistory } from "../input/historyExperiments.ts";
import { HISTORY_HELP } from "../input/options.ts";

export function registerHistoryCommands(program: Command): void {
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
}
