import { MEASUREMENT_AXES } from "../dsl/axes.ts";
import { variantId, type AxisPoint } from "../dsl/matrix.ts";
import type { Variant } from "./types.ts";

/** Variants measured on one set of hosts (each replica of it is one deployment). */
export interface HostSet {
  /** Stable and unique: the variant's id when the set serves one variant. */
  id: string;
  variants: Variant[];
}

export const isMeasurementAxis = (name: string) => (MEASUREMENT_AXES as readonly string[]).includes(name);

function axesWhere(point: AxisPoint, keep: (name: string) => boolean): AxisPoint {
  return Object.fromEntries(Object.entries(point).filter(([name]) => keep(name)));
}

/** The variant's values of the axes that change no host (`path=public`), as an id part. */
export function measurementAxesId(variant: Variant): string {
  return variantId(axesWhere(variant.axes, isMeasurementAxis));
}

/**
 * Groups variants that resolve to identical hosts and differ only in measurement axes, so that
 * they run on the same VMs: comparing the public with the private path between two different
 * pairs of VMs would blend the path with the VMs' own placement draw. Variants that differ in
 * an infrastructure axis are never merged, even when a host function makes their hosts equal:
 * they are separate draws by definition.
 */
/** What decides a host set: the infrastructure axes' values and the resolved hosts (the plan guard counts by it too). */
export function hostSetKey(axes: AxisPoint, hosts: unknown): string {
  return JSON.stringify([axesWhere(axes, (n) => !isMeasurementAxis(n)), hosts]);
}

export function groupHostSets(variants: readonly Variant[]): HostSet[] {
  const byKey = new Map<string, Variant[]>();
  for (const v of variants) {
    const key = hostSetKey(v.axes, v.hosts);
    byKey.set(key, [...(byKey.get(key) ?? []), v]);
  }
  const groups = [...byKey.values()];
  // A shared set is named by the axes its variants share (`size=Standard_DS13_v2`), unless
  // another set would get the same name; a single variant keeps its own id, as before sharing.
  const shared = (g: Variant[]) => variantId(axesWhere(g[0]!.axes, (n) => !isMeasurementAxis(n)));
  const counts = new Map<string, number>();
  for (const g of groups) if (g.length > 1) counts.set(shared(g), (counts.get(shared(g)) ?? 0) + 1);
  const singles = new Set(groups.filter((g) => g.length === 1).map((g) => g[0]!.id));
  const sets = groups.map((g): HostSet => {
    if (g.length === 1) return { id: g[0]!.id, variants: g };
    const name = shared(g);
    return { id: counts.get(name) === 1 && !singles.has(name) ? name : g[0]!.id, variants: g };
  });
  if (new Set(sets.map((s) => s.id)).size !== sets.length) throw new Error(`internal: host set ids are not unique: ${sets.map((s) => s.id).join(", ")}`);
  return sets;
}
