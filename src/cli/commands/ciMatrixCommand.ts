/**
 * `latlab ci-matrix [names…]`: the scheduled workflows' plan (src/cli/run/ciMatrix.ts) as the plan job
 * reads it — the matrix on stdout, one line of JSON; refusals and warnings on stderr, as
 * annotations in GitHub Actions (githubAnnotations.ts); and an exit code that says what runs:
 *
 *   0  every experiment runs: stdout is the matrix.
 *   3  some were refused (too long for the runner, above --max-cost, cost UNKNOWN), each named on
 *      stderr: stdout is still the matrix of the others, so the workflow can run them and fail
 *      afterwards for the refused ones. One experiment that cannot run does not cancel a week of
 *      the others' measurements, and is not hidden in a green run either.
 *   4  --max-total-cost: the experiments that would run cost more together; nothing runs and
 *      stdout is empty, so no workflow can start them by mistake (checked in the plan job, before
 *      anything is deployed).
 *   1  anything else (an unknown experiment, a plan latlab would refuse): stdout is empty.
 */
import { InvalidArgumentError, type Command } from "commander";
import type { PlanOptions } from "../../plan/buildPlan.ts";
import type { CiMatrixResult } from "../run/ciMatrix.ts";
import { parseDuration } from "../input/options.ts";
import { diagnosticLine, inGithubActions } from "../output/githubAnnotations.ts";

/** Some experiments were refused; stdout holds the matrix of the others (see the module comment). */
export const CI_MATRIX_REFUSED_EXIT_CODE = 3;
/** --max-total-cost refused the whole matrix; stdout is empty. */
export const CI_MATRIX_OVER_BUDGET_EXIT_CODE = 4;

/** The title of ci-matrix's annotations on the run's page. */
const TITLE = "latlab ci-matrix";

/** `--max-cost 20`, `--max-total-cost 7.50`: USD, decimal digits, at least 0. */
export function parseUsd(value: string): number {
  if (!/^\d+(\.\d+)?$/.test(value.trim())) throw new InvalidArgumentError(`expected an amount in USD such as 20 or 7.50, got "${value}"`);
  return Number(value);
}

/** What the command prints and its exit code, for a result (pure: tests read it as text). */
export function ciMatrixOutput(result: CiMatrixResult, githubActions: boolean): { stdout: string; stderr: string; exitCode: number } {
  const line = (level: "error" | "warning", message: string) => diagnosticLine(level, message, { githubActions, title: TITLE });
  let stderr = [...result.refused.map((r) => line("error", r.reason)), ...result.warnings.map((w) => line("warning", w))].join("");
  if (result.overBudget !== undefined) {
    stderr += line("error", result.overBudget);
    return { stdout: "", stderr, exitCode: CI_MATRIX_OVER_BUDGET_EXIT_CODE };
  }
  return { stdout: `${JSON.stringify(result.matrix)}\n`, stderr, exitCode: result.refused.length ? CI_MATRIX_REFUSED_EXIT_CODE : 0 };
}

interface CiMatrixFlags {
  duration?: PlanOptions["duration"];
  target: string;
  selfHosted?: boolean;
  maxCost?: number;
  maxTotalCost?: number;
}

export function registerCiMatrixCommand(program: Command, setExitCode: (code: number) => void): void {
  program
    .command("ci-matrix")
    .description(
      'the scheduled GitHub workflows\' plan: one line of JSON, {"include":[{"experiment","timeoutMinutes","stepTimeoutMinutes","timeLimitMinutes","maxCostUsd"}…]}; ' +
        "refused experiments on stderr (annotations in GitHub Actions); exit 3 when some were refused (stdout: the others), 4 when --max-total-cost refuses all (stdout empty)",
    )
    .argument("[experiments...]", "experiment names (default: a project's own ./experiments; latlab's built-ins in latlab's own checkout, elsewhere only when named)")
    .option("-d, --duration <seconds|Nx>", "measurement time per tool run, or a factor, as given to `latlab run`", parseDuration)
    .option("-t, --target <name>", "where the runs go (azure only: the timeouts are Azure's worst cases)", "azure")
    .option("--self-hosted", "the jobs run on a self-hosted runner: up to 5 days per job instead of a GitHub-hosted runner's 6 hours")
    .option("--max-cost <usd>", "refuse an experiment whose worst-case cost is above this (USD, list prices)", parseUsd)
    .option("--max-total-cost <usd>", "refuse the whole matrix, nothing runs, when the experiments' worst-case costs add up to more (USD)", parseUsd)
    .action(async (names: string[], opts: CiMatrixFlags) => {
      const githubActions = inGithubActions();
      let result: CiMatrixResult;
      try {
        const { ciMatrix, loadCiExperiments } = await import("../run/ciMatrix.ts");
        result = ciMatrix(await loadCiExperiments(names), {
          target: opts.target,
          selfHosted: Boolean(opts.selfHosted),
          ...(opts.duration ? { duration: opts.duration } : {}),
          ...(opts.maxCost !== undefined ? { maxCostUsd: opts.maxCost } : {}),
          ...(opts.maxTotalCost !== undefined ? { maxTotalCostUsd: opts.maxTotalCost } : {}),
        });
      } catch (error) {
        // Outside GitHub Actions, latlab's usual `latlab: …` line; in a job, an annotation on the run's page.
        if (!githubActions) throw error;
        process.stderr.write(diagnosticLine("error", (error as Error).message, { githubActions, title: TITLE }));
        setExitCode(1);
        return;
      }
      const out = ciMatrixOutput(result, githubActions);
      process.stderr.write(out.stderr);
      process.stdout.write(out.stdout);
      setExitCode(out.exitCode);
    });
}
