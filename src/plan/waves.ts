import { z } from "zod";
import { scheduledSeconds } from "./schedule.ts";
import type { Plan } from "./types.ts";

/**
 * Quota-sized waves: when a plan's deployments do not fit the subscription's free quota (vCPUs
 * per region and VM family, total regional vCPUs, Standard public IPs) or the user's
 * `--max-vcpus`, they run in waves — each wave brought up, measured and torn down before the
 * next. Pure: what each deployment needs and what is available come from the caller (Azure:
 * catalog/quota.ts, from the offline catalog or the subscription's own figures).
 *
 * The fewest waves that fit, and interleaved: a wave is filled deployment by deployment in
 * replica order (replica 0 of every variant, then replica 1…), each going to the wave that holds
 * the fewest deployments of its variant, then to the one holding its baseline's deployment of
 * the same replica — so replica r of every variant lands in one wave where it fits, each
 * variant's replicas spread over the waves, and each variant sits beside its baseline, so that
 * a comparison with the baseline stays within a wave where the quota allows. What waves cannot
 * undo: variants of different baseline groups may run in different waves (other hosts, another
 * time), so reading across groups compares waves too (results/waveRecords.ts says so).
 */

// ---------------------------------------------------------------------------------------------
// Schemas

export const FamilyDemandSchema = z.object({
  /** The quota family (Compute usages' `name.value`, e.g. "standardDSv5Family"). */
  family: z.string(),
  /** vCPUs of the sizes whose vCPU count is known. */
  vcpus: z.number().int().nonnegative(),
  /** Sizes whose vCPU count is not known (offline, or in the live SKU list the caller read): counted as 0 here. */
  unknownSizes: z.array(z.string()).default([]),
});
export type FamilyDemand = z.infer<typeof FamilyDemandSchema>;

export const RegionDemandSchema = z.object({
  region: z.string(),
  /** Known vCPUs in the region (counted against the total regional vCPUs). */
  vcpus: z.number().int().nonnegative(),
  families: z.array(FamilyDemandSchema),
  /** Standard public IPv4 addresses (one per host on Azure). */
  publicIps: z.number().int().nonnegative(),
});
export type RegionDemand = z.infer<typeof RegionDemandSchema>;

/** What one deployment needs while it is up. */
export const DeploymentDemandSchema = z.object({
  deployment: z.string(),
  variants: z.array(z.string()).min(1),
  replica: z.number().int().nonnegative(),
  regions: z.array(RegionDemandSchema),
});
export type DeploymentDemand = z.infer<typeof DeploymentDemandSchema>;

/** What one region can hold; null: not known (not limited here; a live check still applies). */
export const RegionLimitsSchema = z.object({
  /** Total regional vCPUs free. */
  regionalVcpus: z.number().int().nonnegative().nullable(),
  /** vCPUs free per family (keys compared without case). */
  familyVcpus: z.record(z.string(), z.number().int().nonnegative()),
  /** vCPUs free in a family `familyVcpus` does not list (the profile's per-family default); null: not known. */
  otherFamilies: z.number().int().nonnegative().nullable(),
  /** Standard public IPv4 addresses free. */
  publicIps: z.number().int().nonnegative().nullable(),
});
export type RegionLimits = z.infer<typeof RegionLimitsSchema>;

export const WaveLimitsSchema = z.object({
  /** Where the figures come from, for messages ("new pay-as-you-go subscription (documented default quotas)", "the subscription's free quota, read live"). */
  source: z.string(),
  regions: z.record(z.string(), RegionLimitsSchema),
  /** Limits of a region `regions` does not list (a profile: the same everywhere); absent: not limited. */
  otherRegions: RegionLimitsSchema.optional(),
  /** `--max-vcpus N`: the vCPUs of all regions together, per wave. */
  maxVcpus: z.number().int().positive().optional(),
});
export type WaveLimits = z.infer<typeof WaveLimitsSchema>;

export const WaveSchema = z.object({
  /** 0-based; shown as "wave 1 of N". */
  index: z.number().int().nonnegative(),
  /** Deployment ids, in plan order. */
  deployments: z.array(z.string()).min(1),
  /** Variants measured in the wave, in plan order. */
  variants: z.array(z.string()),
  replicas: z.array(z.number().int().nonnegative()),
  regions: z.array(RegionDemandSchema),
  /** Known vCPUs of every region. */
  vcpus: z.number().int().nonnegative(),
});
export type Wave = z.infer<typeof WaveSchema>;

export const WavePlanSchema = z.object({
  limits: WaveLimitsSchema,
  waves: z.array(WaveSchema).min(1),
  /** Why there is more than one wave: the limits the plan as a whole exceeds. Empty for one wave. */
  reasons: z.array(z.string()),
  /** Sizes whose vCPUs are not known: "vCPUs UNKNOWN for X: counted as 0 in these waves; …" (see UNKNOWN_VCPUS_NOTE). */
  unknown: z.array(z.string()),
});
export type WavePlan = z.infer<typeof WavePlanSchema>;

/** One limit a deployment alone exceeds. */
export interface WaveRefusalIssue {
  deployment: string;
  /** The region, or "all regions" for --max-vcpus. */
  region: string;
  /** "total regional vCPUs", "<family> vCPUs", "Standard public IPv4 addresses", "--max-vcpus". */
  limit: string;
  needed: number;
  available: number;
  message: string;
}

/** A deployment that cannot fit even alone: no number of waves helps. */
export class WaveRefusal extends Error {
  readonly issues: WaveRefusalIssue[];
  constructor(issues: WaveRefusalIssue[], source: string) {
    super(`a deployment does not fit even alone in ${source}, whatever the number of waves:\n  ${issues.map((i) => i.message).join("\n  ")}`);
    this.name = "WaveRefusal";
    this.issues = issues;
  }
}

// ---------------------------------------------------------------------------------------------
// Fitting

const lower = (s: string) => s.toLowerCase();

function regionLimits(limits: WaveLimits, region: string): RegionLimits | undefined {
  const key = Object.keys(limits.regions).find((r) => lower(r) === lower(region));
  return key !== undefined ? limits.regions[key] : limits.otherRegions;
}

function familyLimit(l: RegionLimits, family: string): number | null {
  const key = Object.keys(l.familyVcpus).find((f) => lower(f) === lower(family));
  return key !== undefined ? l.familyVcpus[key]! : l.otherFamilies;
}

/** The sum of several deployments' demands, per region and family. */
export function sumDemands(demands: readonly Pick<DeploymentDemand, "regions">[]): RegionDemand[] {
  const regions = new Map<string, { region: string; vcpus: number; publicIps: number; families: Map<string, FamilyDemand> }>();
  for (const d of demands) {
    for (const r of d.regions) {
      const acc = regions.get(lower(r.region)) ?? { region: r.region, vcpus: 0, publicIps: 0, families: new Map<string, FamilyDemand>() };
      regions.set(lower(r.region), acc);
      acc.vcpus += r.vcpus;
      acc.publicIps += r.publicIps;
      for (const f of r.families) {
        const fam = acc.families.get(lower(f.family)) ?? { family: f.family, vcpus: 0, unknownSizes: [] };
        acc.families.set(lower(f.family), fam);
        fam.vcpus += f.vcpus;
        for (const s of f.unknownSizes) if (!fam.unknownSizes.includes(s)) fam.unknownSizes.push(s);
      }
    }
  }
  return [...regions.values()]
    .map((r) => ({ region: r.region, vcpus: r.vcpus, publicIps: r.publicIps, families: [...r.families.values()].sort((a, b) => a.family.localeCompare(b.family)) }))
    .sort((a, b) => a.region.localeCompare(b.region));
}

/** Every limit the summed demand exceeds (empty: it fits). `who` names the deployments in messages. */
export function exceeded(total: readonly RegionDemand[], limits: WaveLimits, who: string): WaveRefusalIssue[] {
  const issues: WaveRefusalIssue[] = [];
  const issue = (region: string, limit: string, needed: number, available: number, unit = "vCPUs") =>
    issues.push({ deployment: who, region, limit, needed, available, message: `${who}: ${region}: ${limit}: needs ${needed} ${unit}, ${available} available` });
  for (const r of total) {
    const l = regionLimits(limits, r.region);
    if (!l) continue;
    for (const f of r.families) {
      if (f.family.startsWith("UNKNOWN(")) continue;
      const allowed = familyLimit(l, f.family);
      if (allowed !== null && f.vcpus > allowed) issue(r.region, `${f.family} vCPUs`, f.vcpus, allowed);
    }
    if (l.regionalVcpus !== null && r.vcpus > l.regionalVcpus) issue(r.region, "total regional vCPUs", r.vcpus, l.regionalVcpus);
    if (l.publicIps !== null && r.publicIps > l.publicIps) issue(r.region, "Standard public IPv4 addresses", r.publicIps, l.publicIps, "addresses");
  }
  const all = total.reduce((n, r) => n + r.vcpus, 0);
  if (limits.maxVcpus !== undefined && all > limits.maxVcpus) issue("all regions", "--max-vcpus", all, limits.maxVcpus);
  return issues;
}

const fits = (demands: readonly DeploymentDemand[], limits: WaveLimits) => exceeded(sumDemands(demands), limits, "").length === 0;

/**
 * The order deployments are placed in: replica by replica; within a replica, baseline group by
 * baseline group (a baseline, then the variants compared with it), the groups rotated by the
 * replica's number — replica r starts with group r mod (number of groups) — so that when a
 * replica's deployments do not all fit one wave it is not always the same group that spills
 * into the next. Exported for its tests.
 */
export function placementOrder(demands: readonly DeploymentDemand[], variantOrder: readonly string[], baselineOf: Readonly<Record<string, string>>): DeploymentDemand[] {
  const rank = new Map(variantOrder.map((v, i) => [v, i]));
  const variant = (d: DeploymentDemand) => d.variants[0]!;
  const baselineOfD = (d: DeploymentDemand) => baselineOf[variant(d)] ?? variant(d);
  // The groups ranked densely (0, 1, 2… in the order of their baselines), so the rotation steps
  // one group per replica: the variants' ranks are sparse (a baseline every few variants).
  const groups = [...new Set(demands.map(baselineOfD))].sort((a, b) => (rank.get(a) ?? 0) - (rank.get(b) ?? 0) || a.localeCompare(b));
  const groupRank = new Map(groups.map((g, i) => [g, i]));
  const n = Math.max(1, groups.length);
  const group = (d: DeploymentDemand) => ((groupRank.get(baselineOfD(d)) ?? 0) + n - (d.replica % n)) % n;
  const own = (d: DeploymentDemand) => ((baselineOf[variant(d)] ?? variant(d)) === variant(d) ? 0 : 1);
  return [...demands].sort((a, b) => a.replica - b.replica || group(a) - group(b) || own(a) - own(b) || (rank.get(variant(a)) ?? 0) - (rank.get(variant(b)) ?? 0));
}

/** Places every deployment in `k` waves, or returns null when this greedy pass cannot. */
function place(ordered: readonly DeploymentDemand[], k: number, limits: WaveLimits, baselineOf: Readonly<Record<string, string>>): DeploymentDemand[][] | null {
  const waves: DeploymentDemand[][] = Array.from({ length: k }, () => []);
  const countOf = (w: DeploymentDemand[], variant: string) => w.filter((d) => d.variants.includes(variant)).length;
  for (const d of ordered) {
    const variant = d.variants[0]!;
    const baseline = baselineOf[variant] ?? variant;
    // The baseline's deployment of this replica, or deployments of this replica whose baseline this is.
    const partnerIn = (w: DeploymentDemand[]) =>
      w.some((o) => o.replica === d.replica && o !== d && (o.variants.includes(baseline) || o.variants.some((v) => baselineOf[v] === variant && v !== variant)));
    // Fits; fewest of this variant (its replicas spread over the waves); beside its partner of this
    // replica (the comparison stays within a wave); else the least loaded (a new group starts
    // where there is room for its partners); else the first.
    const load = (w: DeploymentDemand[]) => w.reduce((sum, o) => sum + o.regions.reduce((m, r) => m + r.vcpus + r.publicIps, 0), 0);
    const candidates = waves
      .map((w, i) => ({ w, i, partner: partnerIn(w), load: load(w) }))
      .filter(({ w }) => fits([...w, d], limits))
      .sort((a, b) => countOf(a.w, variant) - countOf(b.w, variant) || Number(b.partner) - Number(a.partner) || a.load - b.load || a.w.length - b.w.length || a.i - b.i);
    const chosen = candidates[0];
    if (!chosen) return null;
    chosen.w.push(d);
  }
  return waves.filter((w) => w.length > 0);
}

/** At least this many waves: each limit's total need over what it allows. */
function lowerBound(demands: readonly DeploymentDemand[], limits: WaveLimits): number {
  let k = 1;
  const total = sumDemands(demands);
  for (const r of total) {
    const l = regionLimits(limits, r.region);
    if (!l) continue;
    const ratio = (need: number, allowed: number | null) => (allowed === null || need === 0 ? 1 : allowed === 0 ? Infinity : Math.ceil(need / allowed));
    k = Math.max(k, ratio(r.vcpus, l.regionalVcpus), ratio(r.publicIps, l.publicIps), ...r.families.filter((f) => !f.family.startsWith("UNKNOWN(")).map((f) => ratio(f.vcpus, familyLimit(l, f.family))));
  }
  if (limits.maxVcpus !== undefined) k = Math.max(k, Math.ceil(total.reduce((n, r) => n + r.vcpus, 0) / limits.maxVcpus));
  return Number.isFinite(k) ? k : demands.length;
}

/**
 * What a size whose vCPUs latlab cannot tell means for the waves, wherever they are planned: a
 * run on Azure reads the subscription's SKU list first and refuses it (cli/run/runWaves.ts); the
 * local target has no SKU list to read.
 */
export const UNKNOWN_VCPUS_NOTE =
  "a run on Azure reads the subscription's SKU list before the first wave and refuses the size if its vCPUs are still unknown; the local target never checks it live";

/**
 * Splits the deployments into the fewest waves this placement finds that fit `limits`
 * (trying the lower bound first, then one more wave at a time). Throws WaveRefusal, naming
 * each limit, when a deployment cannot fit even alone. `plan` gives the variants' order and
 * baselines; `demands` one entry per deployment of the plan.
 */
export function planWaves(
  plan: Pick<Plan, "variants" | "deployments" | "baselineOf">,
  demands: readonly DeploymentDemand[],
  limits: WaveLimits,
  /** What becomes of a size whose vCPUs are UNKNOWN (said after "counted as 0 in these waves; "); default UNKNOWN_VCPUS_NOTE. */
  options: { unknownNote?: string } = {},
): WavePlan {
  const parsedLimits = WaveLimitsSchema.parse(limits);
  const byId = new Map(demands.map((d) => [d.deployment, DeploymentDemandSchema.parse(d)]));
  for (const d of plan.deployments) if (!byId.has(d.id)) throw new Error(`planWaves: no demand for deployment ${d.id}`);
  const list = plan.deployments.map((d) => byId.get(d.id)!);

  const refusals = list.flatMap((d) => exceeded(d.regions, parsedLimits, `deployment ${d.deployment} (variant ${d.variants.join("+")}, replica ${d.replica})`));
  if (refusals.length) throw new WaveRefusal(refusals, parsedLimits.source);

  const unknown = [...new Set(list.flatMap((d) => d.regions.flatMap((r) => r.families.flatMap((f) => f.unknownSizes))))].sort();
  const whole = exceeded(sumDemands(list), parsedLimits, "all deployments at once");
  let groups: DeploymentDemand[][] = [list];
  if (whole.length) {
    const ordered = placementOrder(list, plan.variants.map((v) => v.id), plan.baselineOf);
    groups = [];
    for (let k = lowerBound(list, parsedLimits); k <= list.length; k++) {
      const placed = place(ordered, k, parsedLimits, plan.baselineOf);
      if (placed) {
        groups = placed;
        break;
      }
    }
    // One deployment a wave always fits (each fits alone): never reached, kept as the floor.
    if (!groups.length) groups = list.map((d) => [d]);
  }
  const order = new Map(plan.deployments.map((d, i) => [d.id, i]));
  const variantOrder = new Map(plan.variants.map((v, i) => [v.id, i]));
  // Waves in the order they were filled (replica 0 first): A B A B over time, not every baseline first.
  const waves = groups
    .map((g) => [...g].sort((a, b) => order.get(a.deployment)! - order.get(b.deployment)!))
    .map((g, index) => {
      const regions = sumDemands(g);
      return {
        index,
        deployments: g.map((d) => d.deployment),
        variants: [...new Set(g.flatMap((d) => d.variants))].sort((a, b) => (variantOrder.get(a) ?? 0) - (variantOrder.get(b) ?? 0)),
        replicas: [...new Set(g.map((d) => d.replica))].sort((a, b) => a - b),
        regions,
        vcpus: regions.reduce((n, r) => n + r.vcpus, 0),
      };
    });
  return WavePlanSchema.parse({
    limits: parsedLimits,
    waves,
    reasons: waves.length > 1 ? whole.map((i) => i.message.replace(/^all deployments at once: /, "all deployments at once would need: ")) : [],
    unknown: unknown.map((s) => `vCPUs UNKNOWN for ${s}: counted as 0 in these waves; ${options.unknownNote ?? UNKNOWN_VCPUS_NOTE}`),
  });
}

/** One wave: every deployment of the plan (no limits asked for, or all fit at once). */
export function singleWave(plan: Pick<Plan, "deployments" | "variants">, source = "no limits"): WavePlan {
  return {
    limits: { source, regions: {} },
    waves: [
      {
        index: 0,
        deployments: plan.deployments.map((d) => d.id),
        variants: plan.variants.map((v) => v.id).filter((v) => plan.deployments.some((d) => d.variants.includes(v))),
        replicas: [...new Set(plan.deployments.map((d) => d.replica))].sort((a, b) => a - b),
        regions: [],
        vcpus: 0,
      },
    ],
    reasons: [],
    unknown: [],
  };
}

/**
 * The plan of one wave: its deployments, their cells and variants; the estimate recomputed.
 * The baselines map stays whole (a variant whose baseline runs in another wave keeps its name).
 */
export function wavePlan(plan: Plan, deployments: readonly string[]): Plan {
  const wanted = new Set(deployments);
  const ds = plan.deployments.filter((d) => wanted.has(d.id));
  const cells = plan.cells.filter((c) => wanted.has(c.deployment));
  const variants = plan.variants.filter((v) => ds.some((d) => d.variants.includes(v.id)));
  return {
    ...plan,
    variants,
    deployments: ds,
    cells,
    estimate: { measurementSeconds: scheduledSeconds(cells, (c) => c.estimatedSeconds), cells: cells.length, hosts: ds.reduce((n, d) => n + d.hosts.length, 0) },
  };
}

/** Which wave (0-based) each deployment is in: the runner's and the resume's map for the comparisons' wave notes. */
export function waveOfDeployment(waves: readonly Pick<Wave, "deployments">[]): Map<string, number> {
  const out = new Map<string, number>();
  waves.forEach((w, i) => w.deployments.forEach((d) => out.set(d, i)));
  return out;
}
