/**
 * `latlab plan <experiment>`: what a run would do — variants, hosts, cells, time; on Azure the
 * resources, cost, quota and waves — built offline, nothing created.
 */
import { resolve } from "node:path";
import type { Command } from "commander";
import { didYouMean } from "../../dsl/suggest.ts";
import { buildPlan, type PlanOptions } from "../../plan/buildPlan.ts";
import { formatPlan, formatWaves } from "../../report/planText.ts";
import { TARGET_NAMES, findTarget } from "../../targets/registry.ts";
import { namingFile, sayWhich } from "../experiments/foundExperiment.ts";
import { loadExperiment } from "../experiments/loadExperiment.ts";
import { parseDuration, parseMaxVcpus, parsePositive, parseReplicas, planOptions, refuseFlagsOfOtherTargets, withReplicas } from "../input/options.ts";
import { guardPlanSize } from "../run/planGuard.ts";
import { jsonForTerminal, sanitizeForTerminal } from "../output/terminalText.ts";

export function registerPlanCommand(program: Command, setExitCode: (code: number) => void): void {
  program
    .command("plan")
    .description("show what an experiment would do: variants, hosts, cells, estimated time")
    .argument("<experiment>", "a name from ./experiments, then latlab's own, or the path of your own .ts file")
    .option("--json", "print the plan as JSON")
    .option("-t, --target <name>", `where hosts would run (${TARGET_NAMES.join(", ")})`, "local")
    .option("-d, --duration <seconds|Nx>", "measurement time per tool run, or a factor", parseDuration)
    .option("--live-prices", "azure: refresh prices from the Azure Retail Prices API")
    .option("--max-cost <usd>", "azure: fail when the estimated cost is above this", parsePositive)
    .option("--replicas <n>", "independent host sets per variant, overriding the experiment's", parseReplicas)
    .option("--max-vcpus <n>", "show the waves a run with at most this many vCPUs up at once would go in", parseMaxVcpus)
    .action(async (ref: string, opts: { json?: boolean; target: string; duration?: PlanOptions["duration"]; livePrices?: boolean; maxCost?: number; replicas?: number; maxVcpus?: number }) => {
      const factory = findTarget(opts.target);
      if (!factory) throw new Error(`unknown target "${opts.target}"${didYouMean(opts.target, TARGET_NAMES)}`);
      // --max-cost and --live-prices would be ignored silently on another target.
      refuseFlagsOfOtherTargets(opts, opts.target);
      const found = await loadExperiment(ref);
      const { experiment } = found;
      sayWhich(found);
      const options = planOptions(experiment, opts.target, opts.duration);
      const large = guardPlanSize(withReplicas(experiment, opts.replicas), options);
      if (large) process.stderr.write(`warning: ${large}\n\`latlab run\` will need --yes for it.\n`);
      const plan = buildPlan(withReplicas(experiment, opts.replicas), options);
      // What this target would refuse, and what a reader of the plan must know (sizes it cannot cap…).
      const notes = (await factory.planNotes?.(plan).catch(namingFile(found.file))) ?? [];
      if (opts.target !== "azure") {
        // Waves only when asked (--max-vcpus): this target has no quota.
        let waves: import("../../plan/waves.ts").WavePlan | undefined;
        const waveLines: string[] = [];
        if (opts.maxVcpus !== undefined) {
          const { planWaves, WaveRefusal } = await import("../../plan/waves.ts");
          const { deploymentDemands, maxVcpusLimits } = await import("../../targets/azure/catalog/quota.ts");
          try {
            waves = planWaves(plan, deploymentDemands(plan), maxVcpusLimits(opts.maxVcpus));
            waveLines.push(formatWaves(waves));
          } catch (e) {
            if (!(e instanceof WaveRefusal)) throw e;
            process.stderr.write(`refused: ${e.message}\n`);
            setExitCode(1);
          }
        }
        // The description, the variants' values and the notes are the user's text: terminal-safe (terminalText.ts).
        process.stdout.write(opts.json ? `${jsonForTerminal({ ...plan, notes, ...(waves ? { waves } : {}) })}\n` : `${sanitizeForTerminal([formatPlan(plan), ...notes, ...waveLines].join("\n"), { maxLineLength: 100_000 })}\n`);
        return;
      }
      // Offline: the Pulumi program under mocks, no credentials, nothing created.
      const { azurePlanReport } = await import("../../targets/azure/program/listing.ts");
      const report = await azurePlanReport(plan, { livePrices: Boolean(opts.livePrices), ...(opts.maxCost !== undefined ? { maxCostUsd: opts.maxCost } : {}), ...(opts.maxVcpus !== undefined ? { maxVcpus: opts.maxVcpus } : {}) });
      const { formatAzureReport } = await import("../../report/azurePlanText.ts");
      process.stdout.write(opts.json ? `${jsonForTerminal({ plan, azure: report })}\n` : `${sanitizeForTerminal(`${formatPlan(plan)}\n\n${formatAzureReport(report)}`, { maxLineLength: 100_000 })}\n`);
      // `plan` fails for its cost only when asked to check one (--max-cost); the listing says what a deploy would refuse.
      if (report.refusals.length && opts.maxCost !== undefined) {
        process.stderr.write(`refused: ${report.refusals.map((r) => r.message).join("; ")}\n`);
        setExitCode(1);
      }
      // Waves that cannot be had under the user's own --max-vcpus fail `plan` (the default profile's only inform: a subscription may have more).
      if (report.waves.refusal && opts.maxVcpus !== undefined && /--max-vcpus/.test(report.waves.refusal)) {
        process.stderr.write(`refused: ${report.waves.refusal}\n`);
        setExitCode(1);
      }
    });
}
