import { InvalidArgumentError } from "commander";
import type { Plan } from "../plan/types.ts";
import { planWaves, WaveRefusal, wavePlan, type WaveLimits, type WavePlan } from "../plan/waves.ts";
import { formatWaves } from "../report/planText.ts";
import type { Target, TargetContext } from "../targets/target.ts";

/** `--max-vcpus N`: decimal digits only, at least 1. */
export function parseMaxVcpus(value: string): number {
  const n = Number(value);
  if (!/^[0-9]+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1) {
    throw new InvalidArgumentError(`expected a whole number of vCPUs of at least 1, in decimal digits (e.g. 16), got "${value}"`);
  }
  return n;
}

/** --max-vcpus alone, or on top of what the target can hold. */
export function withMaxVcpus(limits: WaveLimits | undefined, maxVcpus: number | undefined, fallback: (n: number) => WaveLimits): WaveLimits | undefined {
  if (maxVcpus === undefined) return limits;
  return limits ? { ...limits, maxVcpus } : fallback(maxVcpus);
}

/**
 * The waves of a run, decided once it has started (runExperiment's `waves`): what the target can
 * hold at once (Azure: the subscription's free quota, read live) and --max-vcpus; each
 * deployment's vCPUs from latlab's size catalog. Logged for the person waiting. Undefined: one
 * wave (no limit known and none asked for). A deployment that cannot fit even alone is refused,
 * naming the limit: nothing is brought up.
 */
export async function runWaves(plan: Plan, target: Target, ctx: TargetContext, maxVcpus: number | undefined, show: { azureCost?: boolean; livePrices?: boolean } = {}): Promise<WavePlan | undefined> {
  const { deploymentDemands, maxVcpusLimits } = await import("../targets/azure/catalog/quota.ts");
  const limits = withMaxVcpus(await target.waveLimits?.(plan, ctx), maxVcpus, maxVcpusLimits);
  if (!limits) return undefined;
  let waves: WavePlan;
  try {
    waves = planWaves(plan, deploymentDemands(plan), limits);
  } catch (e) {
    if (e instanceof WaveRefusal) throw new Error(`${target.name} target: not deploying (nothing was created): ${e.message}`, { cause: e });
    throw e;
  }
  // Each wave's cost and wall time on Azure (list prices); elsewhere its measurement time.
  let more = (w: WavePlan["waves"][number]) => [`measurement: about ${Math.ceil(wavePlan(plan, w.deployments).estimate.measurementSeconds)} s`];
  if (show.azureCost && waves.waves.length > 1) {
    const { waveCosts } = await import("../targets/azure/program/listing.ts");
    const { loadPriceSnapshot } = await import("../targets/azure/catalog/prices.ts");
    const { waveCostLines } = await import("../report/azurePlanText.ts");
    const costs = waveCosts(plan, waves, loadPriceSnapshot());
    more = (w) => waveCostLines(costs[w.index]!, show.livePrices);
  }
  ctx.log(formatWaves(waves, waves.waves.length > 1 ? more : () => []));
  return waves;
}
