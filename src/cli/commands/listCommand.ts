/**
 * `latlab list`: the experiments of ./experiments, then latlab's own, each with its description.
 */
import { basename } from "node:path";
import type { Command } from "commander";
import { importExperiment, listExperiments, type ListedExperiment } from "../experiments/loadExperiment.ts";
import { sanitizeForTerminal } from "../output/terminalText.ts";

export function registerListCommand(program: Command): void {
  program
    .command("list")
    .description("list the experiments in ./experiments, then latlab's own")
    .action(async () => {
      const line = async (e: ListedExperiment, note: string | undefined) => {
        let text: string;
        try {
          text = (await importExperiment(e.file)).description;
        } catch (error) {
          text = `(broken: ${(error as Error).message.split("\n")[0]})`;
        }
        // A description (and a file's name) is the user's text: terminal-safe (terminalText.ts), on one line.
        process.stdout.write(`${sanitizeForTerminal(`  ${e.name.padEnd(24)} ${text}${note ? ` (${note})` : ""}`).replaceAll("\n", "\\n")}\n`);
      };
      const { project, latlab } = listExperiments();
      if (project) {
        process.stdout.write("./experiments:\n");
        if (!project.length) process.stdout.write("  (none)\n");
        for (const e of project) await line(e, e.shadows ? "shadows latlab's own" : undefined);
      }
      process.stdout.write("latlab's own experiments:\n");
      for (const e of latlab) await line(e, e.shadowedBy ? `shadowed by ./experiments/${basename(e.shadowedBy)}` : undefined);
    });
}
