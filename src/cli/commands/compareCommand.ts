/**
 * `latlab compare <runA> <runB>`: two runs of one experiment, variant by variant, with the
 * statistics variants are compared with; `--fail-on-regression` makes it a CI gate.
 */
import type { Command } from "commander";
import { compareRuns } from "../../history/compareRuns.ts";
import { historyFile } from "../../history/historyStore.ts";
import { assess } from "../../history/regression.ts";
import { formatRunComparison } from "../../report/historyText.ts";
import { refuseSameRun } from "../input/compareInputs.ts";
import { HISTORY_HELP, parsePercent } from "../input/options.ts";
import { runSource } from "../input/runSources.ts";

/** `latlab compare --fail-on-regression`'s exit code when a regression over replicas was found (1 stays "error"). */
export const REGRESSION_EXIT_CODE = 3;
/** …when the only regressions found are over one deployment a run: possibly the hosts drawn (see regression.ts). */
export const CONFOUNDED_REGRESSION_EXIT_CODE = 4;

export function registerCompareCommand(program: Command, setExitCode: (code: number) => void): void {
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
}
