/**
 * `latlab cleanup`: remove what runs whose latlab process died left on this machine, every target
 * that keeps something here asked in turn.
 */
import type { Command } from "commander";
import { TARGET_NAMES, findTarget } from "../../targets/registry.ts";

export function registerCleanupCommand(program: Command, setExitCode: (code: number) => void): void {
  program
    .command("cleanup")
    .description("remove what runs whose latlab process died left on this machine (namespaces, links, processes, temp folders with keys); never a live run")
    .option("--dry-run", "only list what would be removed")
    .option("--unrecorded", "also remove leftovers no run record accounts for (an older latlab's): only when no latlab is running")
    .action(async (opts: { dryRun?: boolean; unrecorded?: boolean }) => {
      const log = (m: string) => process.stderr.write(`${m}\n`);
      for (const name of TARGET_NAMES) {
        const factory = findTarget(name)!;
        if (!factory.cleanup) continue;
        const outcome = await factory.cleanup({ dryRun: Boolean(opts.dryRun), unrecorded: Boolean(opts.unrecorded), log: () => {} });
        process.stdout.write(`${name}: ${outcome.text.includes("\n") ? `\n${outcome.text}` : outcome.text}\n`);
        if (outcome.failed) setExitCode(1);
      }
      log("azure: runs on Azure are finished with `latlab destroy <runId>`; expired ones found with `latlab sweep`");
    });
}
