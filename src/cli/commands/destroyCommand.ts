/**
 * `latlab destroy <runId|dir>`: finish tearing down an Azure run (or its rehearsal) whose teardown
 * failed or never ran.
 */
import { resolve } from "node:path";
import type { Command } from "commander";

export function registerDestroyCommand(program: Command, setExitCode: (code: number) => void): void {
  program
    .command("destroy")
    .description("finish tearing down an Azure run whose teardown failed or never ran")
    .argument("<runId|dir>", "the run id (its state folder, or a folder under results/) or the run's results folder")
    .option(
      "--backend <url>",
      "the run's Pulumi backend, when its state folder is not on this machine (default: $LATLAB_PULUMI_BACKEND): its stack latlab-<runId> is destroyed from the backend, with the passphrase from PULUMI_CONFIG_PASSPHRASE or PULUMI_CONFIG_PASSPHRASE_FILE",
    )
    .option("--install-pulumi", "let latlab install the Pulumi CLI if it is missing")
    .action(async (ref: string, opts: { installPulumi?: boolean; backend?: string }) => {
      const { destroyRun } = await import("../../targets/azure/lifecycle/destroyRun.ts");
      const { createPulumiStackFactory } = await import("../../targets/azure/lifecycle/stack.ts");
      const { formatLeft } = await import("../../targets/azure/lifecycle/teardown.ts");
      const log = (m: string) => process.stderr.write(`${m}\n`);
      const report = await destroyRun(ref, {
        resultsRoot: resolve("results"),
        stackFactory: createPulumiStackFactory({ installPulumi: Boolean(opts.installPulumi), log }),
        log,
        ...(opts.backend !== undefined ? { backendUrl: opts.backend } : {}),
      });
      process.stdout.write(`teardown: ${report.status}${report.errors.length ? `\n  ${report.errors.join("\n  ")}` : ""}\n${formatLeft(report)}\n`);
      if (report.status === "failed") setExitCode(1);
    });
}
