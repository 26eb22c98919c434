import type { Plan } from "../../../plan/types.ts";
import { modelRtt, regionPairRtt } from "./latencyModel.ts";

/** One cross-region pair of a plan as the local target would emulate it. */
export interface ModelledPair {
  regionA: string;
  regionB: string;
  /** Both ends have Accelerated Networking (the model's rule applies). */
  accelnet: boolean;
  rttUs: number;
  basis: "published" | "fallback";
  source: string;
}

/**
 * The cross-region pairs a plan measures (each pair of regions and Accelerated Networking once,
 * whichever way round and in however many cells), with the round trip the local target would
 * emulate and where it comes from: what `latlab plan` shows before anything runs.
 */
export function modelledCrossRegionPairs(plan: Plan): ModelledPair[] {
  const hosts = new Map(plan.variants.flatMap((v) => v.hosts.map((h) => [`${v.id}\u0000${h.role}`, h] as const)));
  const pairs = new Map<string, ModelledPair>();
  for (const c of plan.cells) {
    if (c.pathKind !== "cross-region") continue;
    const from = hosts.get(`${c.variant}\u0000${c.from}`);
    const to = hosts.get(`${c.variant}\u0000${c.to}`);
    if (!from || !to) continue;
    const [regionA, regionB] = [from.region, to.region].sort() as [string, string];
    const accelnet = from.accelnet && to.accelnet;
    const key = `${regionA}\u0000${regionB}\u0000${accelnet}`;
    if (pairs.has(key)) continue;
    const m = modelRtt("cross-region", from.accelnet, to.accelnet, [regionA, regionB]);
    pairs.set(key, { regionA, regionB, accelnet, rttUs: m.rttUs, basis: regionPairRtt(regionA, regionB).basis, source: m.source });
  }
  return [...pairs.values()];
}
