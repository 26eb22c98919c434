import { ExperimentDefinitionError } from "../../dsl/errors.ts";
import { describeFound } from "./loadExperiment.ts";
import { sanitizeForTerminal } from "../output/terminalText.ts";

/** Says on stderr which file a name resolved to (nothing for a path: the user named it). */
export function sayWhich(found: Parameters<typeof describeFound>[0]): void {
  const line = describeFound(found);
  // A file's name is the user's text: terminal-safe (terminalText.ts).
  if (line) process.stderr.write(`${sanitizeForTerminal(line)}\n`);
}

/** A definition error a target finds (a size it does not know…) names the experiment's file, as the DSL's own do. */
export const namingFile =
  (file: string) =>
  (error: unknown): never => {
    throw error instanceof ExperimentDefinitionError ? error.withSource(file) : error;
  };
