/**
 * latlab's command line: only wiring. Each command is one module in ./commands/ that registers
 * itself on the program; an action's exit code is handed back through `setExitCode`.
 */
import { Command, CommanderError } from "commander";
import { ExperimentDefinitionError } from "../dsl/errors.ts";
import { LATLAB_VERSION } from "../version.ts";
import { registerCiMatrixCommand } from "./commands/ciMatrixCommand.ts";
import { registerCleanupCommand } from "./commands/cleanupCommand.ts";
import { registerCompareCommand } from "./commands/compareCommand.ts";
import { registerGateCommand } from "./commands/gateCommand.ts";
import { registerDestroyCommand } from "./commands/destroyCommand.ts";
import { registerInitCommand } from "./commands/initCommand.ts";
import { registerListCommand } from "./commands/listCommand.ts";
import { registerParseCommand } from "./commands/parseCommand.ts";
import { registerPlanCommand } from "./commands/planCommand.ts";
import { registerReportCommand } from "./commands/reportCommand.ts";
import { registerRunCommand } from "./commands/runCommand.ts";
import { registerSchemaCommand } from "./commands/schemaCommand.ts";
import { registerSweepCommand } from "./commands/sweepCommand.ts";
import { registerTrendCommand } from "./commands/trendCommand.ts";
import { registerHistoryCommands } from "./commands/historyCommands.ts";
import { registerResumeCommand } from "./commands/resumeCommand.ts";
import { ignoreHangupWriteErrors } from "./output/hangup.ts";
import { sanitizeForTerminal } from "./output/terminalText.ts";

export async function main(argv: string[]): Promise<number> {
  // `latlab list | head -1`: once the reader is gone, writes fail with EPIPE, and an 'error' event
  // nobody listens to is a stack trace. Nobody reads any more: what is left to print is dropped,
  // the command finishes as it would have and exits with its own code.
  ignoreHangupWriteErrors(process.stdout);
  ignoreHangupWriteErrors(process.stderr);
  const { program, exitCode } = buildProgram();
  try {
    await program.parseAsync(argv, { from: "user" });
    return exitCode();
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    if (error instanceof ExperimentDefinitionError) process.stderr.write(`${error.message}\n`);
    else process.stderr.write(`latlab: ${sanitizeForTerminal((error as Error).message)}\n`);
    return 1;
  }
}

/**
 * Every command and option, built without parsing anything (tests walk `program.commands`, e.g.
 * to check that the GitHub workflows call only commands and options latlab has). `exitCode()` is
 * what the action that ran decided.
 */
export function buildProgram(): { program: Command; exitCode: () => number } {
  let exitCode = 0;
  const setExitCode = (code: number) => {
    exitCode = code;
  };
  const program = new Command("latlab")
    .description("Repeatable, honest network-latency experiments on emulated hosts or Azure.")
    .version(LATLAB_VERSION)
    .exitOverride()
    .showSuggestionAfterError(true);
  // In the order `latlab --help` lists them: the main job first.
  registerRunCommand(program, setExitCode);
  registerPlanCommand(program, setExitCode);
  registerDestroyCommand(program, setExitCode);
  registerSweepCommand(program, setExitCode);
  registerResumeCommand(program, setExitCode);
  registerHistoryCommands(program);
  registerTrendCommand(program, setExitCode);
  registerCompareCommand(program, setExitCode);
  registerGateCommand(program, setExitCode);
  registerReportCommand(program);
  registerCleanupCommand(program, setExitCode);
  registerListCommand(program);
  registerInitCommand(program, setExitCode);
  registerParseCommand(program, setExitCode);
  registerCiMatrixCommand(program, setExitCode);
  registerSchemaCommand(program);
  return { program, exitCode: () => exitCode };
}
