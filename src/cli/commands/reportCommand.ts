/**
 * `latlab report <runId|dir>`: a run's report.html and report.md made again, and its summary
 * printed. `latlab report --history [file] [--out <dir>]`: the trend page of a history instead
 * (src/report/trend/), its path printed.
 */
import { dirname, resolve } from "node:path";
import type { Command } from "commander";
import { historyFile } from "../../history/historyStore.ts";
import { DEFAULT_TREND_DIR, writeTrendPage } from "../../report/trend/writeTrendPage.ts";
import { reportMarkdown } from "../../report/reportMarkdown.ts";
import { comparisonTable, terminalWidth } from "../../report/table.ts";
import { writeReport } from "../../report/writeReport.ts";
import { memoizeSamples, readRunFolder } from "../../results/readRunFolder.ts";
import { sanitizeForTerminal } from "../../tools/terminalText.ts";
import { HISTORY_HELP } from "../input/options.ts";
import { findRunFolder } from "../input/runSources.ts";

export function registerReportCommand(program: Command): void {
  program
    .command("report")
    .description(
      "make a run's report.html and report.md again (older runs too) and print its summary: the comparison table, or --markdown for a CI summary; or, with --history, write the trend page of the recorded runs",
    )
    .argument("[runId|dir]", "a run's results folder, or its id under ./results")
    .option("--markdown", "print report.md: GitHub Markdown with the verdicts and a Mermaid picture of the placement (for $GITHUB_STEP_SUMMARY)")
    .option("--no-html", "only print; do not write report.html, report.md and charts/")
    .option("--history [file]", `${HISTORY_HELP}: instead of a run's report, write its trend page (a self-contained <dir>/index.html)`)
    .option("--out <dir>", `with --history: the page's folder (default ${DEFAULT_TREND_DIR}/)`)
    .option("--wide", "print every column of the table (default: the columns that answer the question, fitted to the terminal's width, 80 when it cannot tell)")
    .action(async (ref: string | undefined, opts: { markdown?: boolean; html: boolean; history?: string | true; out?: string; wide?: boolean }, command: Command) => {
      if (opts.history !== undefined) {
        if (ref !== undefined) throw new Error(`a run ("${ref}") and --history: give one — a run for its report, or --history for the trend page of the recorded runs`);
        const runOnly = [opts.markdown ? "--markdown" : "", command.getOptionValueSource("html") === "cli" ? "--no-html" : "", opts.wide ? "--wide" : ""].filter(Boolean);
        if (runOnly.length) throw new Error(`${runOnly.join(" and ")}: for a run's report, not with --history (the trend page is HTML only)`);
        const page = await writeTrendPage(historyFile(opts.history === true ? undefined : opts.history), resolve(opts.out ?? DEFAULT_TREND_DIR));
        process.stdout.write(`${page}\n`);
        return;
      }
      if (opts.out !== undefined) throw new Error("--out is for the trend page: give --history too (a run's report is written beside its results.json)");
      if (ref === undefined) throw new Error("which report? give a run (its results folder, or its id under ./results), or --history [file] for the trend page of the recorded runs");
      const dir = findRunFolder(ref);
      if (!dir) throw new Error(`"${ref}": no results folder (looked for ${resolve(ref, "results.json")} and ${resolve("results", ref, "results.json")})`);
      const folder = readRunFolder(dir);
      const { results } = folder;
      const samplesOf = memoizeSamples(folder.samplesOf);
      // results.json may hold tool text from before the parsers cleaned it: made terminal-safe.
      // --markdown is report.md: the table, the verdicts and the Mermaid placement, for CI summaries.
      // The table as `latlab run` printed it: fitted to the terminal unless --wide (report.md keeps every column).
      const text = opts.markdown ? reportMarkdown(results, samplesOf) : `${comparisonTable(results, samplesOf, { wide: opts.wide === true, width: terminalWidth() })}\n`;
      process.stdout.write(sanitizeForTerminal(text, { maxLineLength: 100_000 }));
      if (opts.html) {
        const written = await writeReport(dir, results, samplesOf);
        process.stderr.write(`report: ${written.html} (and report.md, ${written.specs.length} chart specs in ${dirname(written.specs[0] ?? `${dir}/charts/x`)})\n`);
      }
    });
}
