/** `latlab trend <experiment>`: one metric of every variant across an experiment's recorded runs. */
import { Option, type Command } from "commander";
import { historyFile, loadHistory } from "../../history/historyStore.ts";
import { TREND_METRICS, trend, unknownMeasure, type TrendMetric } from "../../history/trend.ts";
import { formatTrend } from "../../report/historyText.ts";
import { HISTORY_HELP, parseMeasure } from "../input/options.ts";
import { refuseExperimentNotInHistory } from "../input/historyExperiments.ts";

export function registerTrendCommand(program: Command, setExitCode: (code: number) => void): void {
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
}
