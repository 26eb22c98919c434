import { spawnSync } from "node:child_process";
import { createInterface } from "node:readline/promises";
import { fileURLToPath } from "node:url";
import type { Plan } from "../../plan/types.ts";
import type { TargetOptions } from "../registry.ts";
import type { Target } from "../target.ts";
import { AzureTarget } from "./azureTarget.ts";
import { checkMaxCost, estimateCost, fetchLivePrices, loadPriceSnapshot, mergeSnapshots } from "./prices.ts";
import { createPulumiStackFactory, locatePulumiCli } from "./stack.ts";
import { AzureValidationError, recommendedExpiresAt, sshFromProblem, validateForAzure, worstCaseRun } from "./validateAzure.ts";

const BIN = fileURLToPath(new URL("../../../bin/latlab.js", import.meta.url));

/**
 * Everything checked before a real deploy, cheapest first and all offline until the last step:
 * the SSH source, the plan against Azure's rules, the cost against --max-cost, the resource
 * listing (in a separate process: Pulumi's mocks are process-wide and must not meet a real
 * deploy), and finally the Pulumi CLI.
 */
export async function azurePreflight(plan: Plan, options: TargetOptions): Promise<void> {
  if (!options.sshFrom) {
    throw new Error(
      "--ssh-from CIDR is required with --target azure: the address your SSH comes from (e.g. 203.0.113.7/32). " +
        "The VMs accept SSH from it only; latlab does not ask an outside service what your address is.",
    );
  }
  const sshProblem = sshFromProblem(options.sshFrom);
  if (sshProblem) throw new Error(`--ssh-from: ${sshProblem}`);

  const issues = validateForAzure(plan);
  if (issues.length) throw new AzureValidationError(issues, plan.experiment.name);

  let snapshot = loadPriceSnapshot();
  if (options.livePrices) {
    const regions = [...new Set(plan.deployments.flatMap((d) => d.hosts.map((h) => h.region)))];
    const sizes = [...new Set(plan.deployments.flatMap((d) => d.hosts.map((h) => h.size)))];
    snapshot = mergeSnapshots(snapshot, (await fetchLivePrices(regions, sizes)).snapshot);
  }
  const hours = worstCaseRun(plan).seconds / 3600;
  const cost = estimateCost(plan, snapshot, hours);
  options.log(
    `estimated cost: $${cost.hourlyUsd.toFixed(2)}/h, at most $${cost.totalUsd.toFixed(2)} for the worst case of ${hours.toFixed(1)} h` +
      (cost.missing.length ? ` (no price for: ${[...new Set(cost.missing.map((m) => `${m.sku} in ${m.region}`))].join(", ")}; the total leaves them out)` : ""),
  );
  if (options.maxCost !== undefined) {
    const refusals = checkMaxCost(cost, options.maxCost);
    if (refusals.length) throw new Error(`not deploying: ${refusals.map((r) => r.message).join("; ")}`);
  }

  const listing = spawnSync(process.execPath, [BIN, "plan", options.source, "--target", "azure"], { encoding: "utf8" });
  if (listing.status !== 0) throw new Error(`the offline Azure listing failed:\n${listing.stderr || listing.stdout}`);
  options.log(listing.stdout.trimEnd());

  await locatePulumiCli({ installPulumi: options.installPulumi ?? false, log: options.log });
}

/** Asks on the terminal; without one (CI) the answer is no unless --yes was given. */
async function confirmOnTerminal(summary: string): Promise<boolean> {
  if (!process.stdin.isTTY) {
    process.stderr.write(`${summary}\nnot a terminal and no --yes: not deploying\n`);
    return false;
  }
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(`${summary}\nDeploy? [y/N] `)).trim());
  } finally {
    rl.close();
  }
}

export async function createAzureTarget(options: TargetOptions): Promise<Target> {
  const { createProgram } = await import("./program.ts");
  return new AzureTarget({
    stackFactory: createPulumiStackFactory({ installPulumi: options.installPulumi ?? false, log: options.log }),
    createProgram,
    sshFrom: options.sshFrom!,
    ...(options.backend ? { backendUrl: options.backend } : {}),
    ...(options.yes ? {} : { confirm: confirmOnTerminal }),
    resultsRoot: options.resultsRoot,
    expiresAt: recommendedExpiresAt,
  });
}
