import { defineExperiment, type ExperimentInput } from "../../../../src/index.ts";
import { buildPlan } from "../../../../src/plan/buildPlan.ts";
import type { Plan } from "../../../../src/plan/types.ts";
import { deriveHostKeys, throwawayRsaPublicKey } from "../../../../src/targets/azure/access/hostKeys.ts";
import { hostName, type AzureSettings } from "../../../../src/targets/azure/program/types.ts";
import type { Target } from "../../../../src/targets/target.ts";
import { recommendedExpiresAt } from "../../../../src/targets/azure/catalog/validateAzure.ts";

export const CREATED_AT = new Date("2026-11-21T10:00:00Z");
export const SSH_FROM = "198.51.100.7/32";
export const SEED = "test-seed-0123456789abcdef0123456789abcdef";

let rsa: string | undefined;
/** One throwaway RSA public key per test process (generating one takes ~50 ms). */
export const clientPublicKey = () => (rsa ??= throwawayRsaPublicKey());

export const hostNames = (plan: Plan) => plan.deployments.flatMap((d) => d.hosts.map((h) => hostName(d.index, h.role)));

/** Valid settings for a plan: derived host keys, a /32 SSH source, a TTL past the worst case. */
export function settingsFor(plan: Plan, overrides: Partial<AzureSettings> = {}): AzureSettings {
  return {
    runId: "t1",
    experiment: plan.experiment.name,
    sshFrom: SSH_FROM,
    adminUsername: "latlab",
    sshPublicKey: clientPublicKey(),
    hostKeys: deriveHostKeys(SEED, hostNames(plan)),
    createdAt: CREATED_AT,
    expiresAt: recommendedExpiresAt(plan, CREATED_AT),
    ...overrides,
  };
}

/** A plan from an inline experiment (two hosts, ping + sockperf unless told otherwise). */
export function planOf(input: Partial<ExperimentInput> & { name: string }): Plan {
  return buildPlan(
    defineExperiment({
      description: input.name,
      hosts: { client: {}, server: {} },
      measure: [{ tool: "sockperf", params: { duration: 1 } }, { tool: "ping", params: { count: 5, interval: 0.2 } }],
      ...input,
    } as ExperimentInput),
  );
}

/** A deep copy of a plan with one host of one variant (and its deployments) changed: for cases buildPlan itself refuses. */
export function withHost(plan: Plan, variant: string, role: string, change: Partial<Plan["variants"][number]["hosts"][number]>): Plan {
  const copy = structuredClone(plan);
  for (const v of copy.variants) if (v.id === variant) v.hosts = v.hosts.map((h) => (h.role === role ? { ...h, ...change } : h));
  for (const d of copy.deployments) if (d.variants.includes(variant)) d.hosts = d.hosts.map((h) => (h.role === role ? { ...h, ...change } : h));
  return copy;
}

/** Every experiments/*.ts, planned as `--target azure` would; those that do not load yet (being written) carry their error. */
export async function shippedExperimentPlans(): Promise<{ file: string; name: string; plan?: Plan; error?: string }[]> {
  const { listExperimentFiles, loadExperiment } = await import("../../../../src/cli/experiments/loadExperiment.ts");
  const { azurePlanOptions } = await import("../../../../src/targets/azure/program/entryConfig.ts");
  const out: { file: string; name: string; plan?: Plan; error?: string }[] = [];
  for (const file of listExperimentFiles()) {
    const name = file.split("/").pop()!.replace(/\.[^.]+$/, "");
    try {
      const { experiment } = await loadExperiment(file);
      out.push({ file, name, plan: buildPlan(experiment, azurePlanOptions(experiment)) });
    } catch (error) {
      out.push({ file, name, error: (error as Error).message.split("\n").slice(0, 3).join(" / ") });
    }
  }
  return out;
}

/**
 * The target, with `controller` aborted as soon as up() has succeeded: the real runner then
 * skips every cell (no SSH in unit tests) and tears down. Aborting before would deploy nothing,
 * since the runner hands its signal to up().
 */
export function abortAfterUp(target: Target, controller: AbortController): Target {
  return {
    name: target.name,
    up: async (plan, ctx) => {
      const env = await target.up(plan, ctx);
      controller.abort();
      return env;
    },
    down: () => target.down(),
  };
}
