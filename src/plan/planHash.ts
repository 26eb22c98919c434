/**
 * What makes two runs comparable, as a hash: the plan hash, and per measure its identity. Pure.
 *
 * The plan hash covers what the run measured and on what:
 * - the target (a local run and an Azure run measure different networks);
 * - per variant (by id): its axes; its hosts as resolved (role, region, zone, PPG, availability
 *   set, size, AccelNet, VNet); its number of replicas and of repetitions (a run's headline
 *   merges them all, so runs with other counts are not draws of one distribution);
 * - per variant, the identity of each measure it ran (below), as a set.
 * Measure identity: the tool, its parameters as run (defaults filled in and --duration applied,
 * so the duration is in here: sockperf's time, ping's count × interval…), the host pairs it
 * measured, the network path (private or public).
 *
 * Deliberately left out: the experiment's name (the history already keys runs by it),
 * description, source file and seedSizes (words and reports, not measurement); the run id, cell
 * and deployment ids, dates; the baseline choice (it changes the run's own comparisons, not its
 * measurements); estimates; the order of the measures and of the pairs (a scheduling matter: an
 * edited file that moves a measure still measures the same thing); the latlab and tool
 * versions and the event (recorded beside the hash: a trend marks a version change, the
 * comparable-runs filter decides on them separately).
 *
 * The inputs are what a Plan and a finished results.json both hold (plan.cells / results
 * .measurements; plan.variants / results.variants), so a results.json made before the hash was
 * recorded gets the same hash its run would have had (a finished run's measurements hold every
 * planned cell, not-run ones included).
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { ResolvedHostSchema, type ResolvedHost } from "../dsl/placement.ts";
import { canonicalJson } from "./canonicalJson.ts";
import { AxisValueSchema, NetworkPathSchema, type AxisValue, type NetworkPath } from "./types.ts";

/** Bumped when what the hash covers changes, so that hashes of different definitions never meet. */
export const PLAN_HASH_FORMAT = "latlab.plan/1";

/** What one cell contributes: a Plan's cells and a results.json's measurements both have these fields. */
export interface MeasuredCell {
  variant: string;
  measure: number;
  tool: string;
  params: Record<string, unknown>;
  from: string;
  to: string;
  path: NetworkPath;
  replica: number;
  repetition: number;
}

export interface PlannedVariant {
  id: string;
  axes: Record<string, AxisValue>;
  /** A Plan's variant hosts, or results.json's host records (one per host and deployment: deduplicated by role). */
  hosts: readonly ResolvedHost[];
}

export interface PlanHashInput {
  target: string;
  variants: readonly PlannedVariant[];
  cells: readonly MeasuredCell[];
}

/** A measure as one variant ran it. */
export interface MeasureDefinition {
  tool: string;
  params: Record<string, unknown>;
  pairs: readonly { from: string; to: string }[];
  path: NetworkPath;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const pairText = (p: { from: string; to: string }) => `${p.from}->${p.to}`;

/** The measure's canonical form: pairs as a sorted set. */
export function canonicalMeasure(m: MeasureDefinition): { tool: string; params: Record<string, unknown>; pairs: string[]; path: NetworkPath } {
  return { tool: m.tool, params: m.params, pairs: [...new Set(m.pairs.map(pairText))].sort(), path: m.path };
}

/** The measure's identity: sha256 (hex) of its canonical JSON. */
export function measureIdentity(m: MeasureDefinition): string {
  return sha256(canonicalJson(canonicalMeasure(m)));
}

const variantMeasureKey = (variant: string, measure: number) => `${variant}\u0000${measure}`;

/**
 * Each variant's measures (by index) and their identity, from the cells. Two measures of one
 * variant that are the same in every respect get the identity with `-2`, `-3`… by index order
 * (they measure the same thing; their order is all that tells them apart).
 */
export function measureIdentities(cells: readonly MeasuredCell[]): Map<string, string> {
  const byMeasure = new Map<string, { variant: string; measure: number; def: MeasureDefinition; pairs: { from: string; to: string }[] }>();
  for (const c of cells) {
    const key = variantMeasureKey(c.variant, c.measure);
    const entry = byMeasure.get(key) ?? { variant: c.variant, measure: c.measure, def: { tool: c.tool, params: c.params, pairs: [], path: c.path }, pairs: [] };
    entry.pairs.push({ from: c.from, to: c.to });
    byMeasure.set(key, entry);
  }
  const out = new Map<string, string>();
  const seen = new Map<string, number>();
  for (const e of [...byMeasure.values()].sort((a, b) => a.measure - b.measure)) {
    const id = measureIdentity({ ...e.def, pairs: e.pairs });
    const count = (seen.get(`${e.variant}\u0000${id}`) ?? 0) + 1;
    seen.set(`${e.variant}\u0000${id}`, count);
    out.set(variantMeasureKey(e.variant, e.measure), count === 1 ? id : `${id}-${count}`);
  }
  return out;
}

/** The identity of `measure` as `variant` ran it, from measureIdentities' map. */
export const identityOf = (identities: ReadonlyMap<string, string>, variant: string, measure: number): string | undefined => identities.get(variantMeasureKey(variant, measure));

const HOST_FIELDS = { role: true, region: true, zone: true, ppg: true, availabilitySet: true, size: true, accelnet: true, vnet: true } as const;

/** A measure in the plan content: its identity and canonical form. */
export const PlanContentMeasureSchema = z.object({
  identity: z.string(),
  tool: z.string(),
  params: z.record(z.string(), z.unknown()),
  /** "from->to", sorted. */
  pairs: z.array(z.string()),
  path: NetworkPathSchema,
});

export const PlanContentVariantSchema = z.object({
  id: z.string(),
  axes: z.record(z.string(), AxisValueSchema),
  /** One per role, sorted by role. */
  hosts: z.array(ResolvedHostSchema.pick(HOST_FIELDS)),
  replicas: z.number().int().nonnegative(),
  repetitions: z.number().int().nonnegative(),
  /** Sorted by identity. */
  measures: z.array(PlanContentMeasureSchema),
});
export type PlanContentVariant = z.infer<typeof PlanContentVariantSchema>;

/** What the plan hash is the hash of (stored in the history, so that a changed plan can be explained: planDifferences.ts). */
export const PlanContentSchema = z.object({
  format: z.string(),
  target: z.string(),
  /** Sorted by id. */
  variants: z.array(PlanContentVariantSchema),
});
export type PlanContent = z.infer<typeof PlanContentSchema>;

const HOST_KEYS = Object.keys(HOST_FIELDS) as (keyof typeof HOST_FIELDS)[];

export function planContent(input: PlanHashInput): PlanContent {
  const identities = measureIdentities(input.cells);
  const variants = [...input.variants]
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((v): PlanContentVariant => {
      const cells = input.cells.filter((c) => c.variant === v.id);
      const hosts = new Map<string, PlanContentVariant["hosts"][number]>();
      for (const h of v.hosts) if (!hosts.has(h.role)) hosts.set(h.role, Object.fromEntries(HOST_KEYS.map((k) => [k, h[k]])) as PlanContentVariant["hosts"][number]);
      const measures = new Map<string, PlanContentVariant["measures"][number]>();
      for (const measure of new Set(cells.map((c) => c.measure))) {
        const own = cells.filter((c) => c.measure === measure);
        const first = own[0]!;
        const identity = identityOf(identities, v.id, measure)!;
        measures.set(identity, { identity, ...canonicalMeasure({ tool: first.tool, params: first.params, pairs: own, path: first.path }) });
      }
      return {
        id: v.id,
        axes: v.axes,
        hosts: [...hosts.values()].sort((a, b) => (a.role < b.role ? -1 : a.role > b.role ? 1 : 0)),
        replicas: new Set(cells.map((c) => c.replica)).size,
        repetitions: new Set(cells.map((c) => c.repetition)).size,
        measures: [...measures.values()].sort((a, b) => (a.identity < b.identity ? -1 : 1)),
      };
    });
  return { format: PLAN_HASH_FORMAT, target: input.target, variants };
}

/** sha256 (hex) of the plan content's canonical JSON. */
export function planHashOfContent(content: PlanContent): string {
  return sha256(canonicalJson(content));
}

export function planHash(input: PlanHashInput): string {
  return planHashOfContent(planContent(input));
}
