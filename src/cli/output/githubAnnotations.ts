import { sanitizeForTerminal } from "../../tools/terminalText.ts";

/**
 * Errors and warnings a command reports: in a GitHub Actions job (GITHUB_ACTIONS=true) as
 * workflow commands, `::error::` / `::warning::`, which the run's page shows as annotations; elsewhere
 * as plain `error: …` / `warning: …` lines.
 *
 * They go to stderr, which leaves stdout to what a workflow captures (`matrix=$(latlab ci-matrix)`
 * would swallow an annotation written there), and the runner honours them on stderr too: a `run:`
 * step's stdout and stderr each get an OutputManager (actions/runner
 * src/Runner.Worker/Handlers/ScriptHandler.cs @ 258d6c857db3519913f7deb6004b60172f8043ae, lines
 * 332-336: `StepHost.OutputDataReceived += stdoutManager.OnDataReceived; StepHost.ErrorDataReceived
 * += stderrManager.OnDataReceived;`), and OutputManager.OnDataReceived hands every line holding
 * `::` to ActionCommandManager.TryProcessCommand (src/Runner.Worker/Handlers/OutputManager.cs,
 * same commit, lines 77-90).
 */

export type AnnotationLevel = "error" | "warning";

/**
 * A workflow command's message escaped as the toolkit does (actions/toolkit
 * packages/core/src/command.ts @ a944251692e50709e44d95e64d43c80236b9f6af, escapeData: `%` → %25,
 * CR → %0D, LF → %0A; `%` first, so the others' `%` are not escaped again), and as the runner
 * undoes it (actions/runner src/Runner.Common/ActionCommand.cs @ 258d6c8, _escapeDataMappings and
 * UnescapeData): a message of several lines stays one command, shown with its line breaks.
 */
export function escapeData(text: string): string {
  return text.replaceAll("%", "%25").replaceAll("\r", "%0D").replaceAll("\n", "%0A");
}

/** A property value (`title=…`): the message's escapes, and `:` → %3A, `,` → %2C, which end a property (escapeProperty, same files). */
export function escapeProperty(text: string): string {
  return escapeData(text).replaceAll(":", "%3A").replaceAll(",", "%2C");
}

/** One `::error title=…::message` line (without its newline). */
export function annotation(level: AnnotationLevel, message: string, title?: string): string {
  const properties = title === undefined ? "" : ` title=${escapeProperty(title)}`;
  return `::${level}${properties}::${escapeData(message)}`;
}

/**
 * The line (with its newline) that reports `message` on stderr: an annotation in GitHub Actions,
 * else `error: message`. Made safe for a terminal first (no escape sequences from a file name).
 */
export function diagnosticLine(level: AnnotationLevel, message: string, options: { githubActions: boolean; title?: string }): string {
  const text = sanitizeForTerminal(message);
  return options.githubActions ? `${annotation(level, text, options.title)}\n` : `${level}: ${text}\n`;
}

/**
 * Is this process a step of a GitHub Actions job? "GITHUB_ACTIONS: Always set to `true` when
 * GitHub Actions is running the workflow" (github/docs
 * content/actions/reference/workflows-and-actions/variables.md @ 159bd1b02c0465b685f397f3f667fc20cfdf3f67).
 */
export const inGithubActions = (env: NodeJS.ProcessEnv = process.env): boolean => env["GITHUB_ACTIONS"] === "true";
