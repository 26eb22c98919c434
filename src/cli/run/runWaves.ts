import type { Plan } from "../../plan/types.ts";
import { planWaves, WaveRefusal, wavePlan, type WaveLimits, type WavePlan } from "../../plan/waves.ts";
import { formatWaves } from "../../report/planText.ts";
import type { Target, TargetContext } from "../../targets/target.ts";

/** --max-vcpus alone, or on top of what the target can hold. */
export function withMaxVcpus(limits: WaveLimits | undefined, maxVcpus: number | undefined, fallback: (n: number) => WaveLimits): WaveLimits | undefined {
  if (!limits) return maxVcpus === undefined ? undefined : fallback(maxVcpus);
  // The limits alone (WaveLimitsSchema's fields): a target's answer may carry more (its SKU list).
  const { source, regions, otherRegions } = limits;
  const cap = maxVcpus ?? limits.maxVcpus;
  return { source, regions, ...(otherRegions ? { otherRegions } : {}), ...(cap !== undefined ? { maxVcpus: cap } : {}) };
}

/**
 * The waves of a run, decided once it has started (runExperiment's `waves`): what the target can
 * hold at once (Azure: the subscription's free quota, read live) and --max-vcpus; each
 * deployment's vCPUs and quota family from the SKU list the target read with its limits (Azure:
 * the subscription's own), else latlab's size catalog. Logged for the person waiting. Undefined:
 * one wave (no limit known and none asked for). Refused before anything is brought up, naming
 * what: a deployment that cannot fit even alone (naming the limit), and — where the target read
 * a SKU list — a size whose vCPUs that list and the catalog both leave UNKNOWN (counted as 0, the
 * waves could be too big, and a later wave refused after earlier ones ran).
 */
export async function runWaves(plan: Plan, target: Target, ctx: TargetContext, maxVcpus: number | undefined, show: { azureCost?: boolean; livePrices?: boolean } = {}): Promise<WavePlan | undefined> {
  const { deploymentDemands, maxVcpusLimits } = await import("../../targets/azure/catalog/quota.ts");
  const read = await target.waveLimits?.(plan, ctx);
  const skus = read?.skus;
  const limits = withMaxVcpus(read, maxVcpus, maxVcpusLimits);
  if (!limits) return undefined;
  const demands = deploymentDemands(plan, skus);
  if (skus) {
    const unknown = [...new Set(demands.flatMap((d) => d.regions.flatMap((r) => r.families.flatMap((f) => f.unknownSizes))))].sort();
    if (unknown.length) {
      throw new Error(
        `${target.name} target: not deploying (nothing was created): vCPUs UNKNOWN for ${unknown.join(", ")}: neither latlab's size catalog nor the SKU list the ${target.name} target read live gives ${unknown.length === 1 ? "its" : "their"} vCPUs, so the waves cannot be sized against the quota (counted as 0, a wave could need more than is free, and be refused after earlier waves ran); pick a size the subscription lists with its vCPUs (\`az vm list-skus --location <region> --size <size> --all\`)`,
      );
    }
  }
  let waves: WavePlan;
  try {
    waves = planWaves(plan, demands, limits, skus ? {} : { unknownNote: `the ${target.name} target reads no SKU list, so it is never checked live` });
  } catch (e) {
    if (e instanceof WaveRefusal) throw new Error(`${target.name} target: not deploying (nothing was created): ${e.message}`, { cause: e });
    throw e;
  }
  // Each wave's cost and wall time on Azure (list prices); elsewhere its measurement time.
  let more = (w: WavePlan["waves"][number]) => [`measurement: about ${Math.ceil(wavePlan(plan, w.deployments).estimate.measurementSeconds)} s`];
  if (show.azureCost && waves.waves.length > 1) {
    const { waveCosts } = await import("../../targets/azure/program/listing.ts");
    const { loadPriceSnapshot } = await import("../../targets/azure/catalog/prices.ts");
    const { waveCostLines } = await import("../../report/azurePlanText.ts");
    const costs = waveCosts(plan, waves, loadPriceSnapshot());
    more = (w) => waveCostLines(costs[w.index]!, show.livePrices);
  }
  ctx.log(formatWaves(waves, waves.waves.length > 1 ? more : () => []));
  return waves;
}
