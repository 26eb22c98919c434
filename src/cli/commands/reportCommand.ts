/** `latlab report <runId|dir>`: a run's report.html and report.md made again, and its summary printed. */
import { dirname, resolve } from "node:path";
import type { Command } from "commander";
import { reportMarkdown } from "../../report/reportMarkdown.ts";
import { comparisonTable } from "../../report/table.ts";
import { writeReport } from "../../report/writeReport.ts";
import { memoizeSamples, readRunFolder } from "../../results/readRunFolder.ts";
import { sanitizeForTerminal } from "../../tools/terminalText.ts";
import { findRunFolder } from "../input/runSources.ts";

export function registerReportCommand(program: Command): void {
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
