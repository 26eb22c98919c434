import type { AxisValue } from "../plan/types.ts";
import type { DefinitionIssue } from "./errors.ts";

export type AxisTable = Record<string, readonly AxisValue[]>;
export type AxisPoint = Record<string, AxisValue>;

/**
 * Expands axes into their points: the cartesian product of the axes, except that axes named
 * together in one zip group advance together (element-wise) and count as one dimension.
 * Order is deterministic: the first axis varies slowest. Returns issues instead of throwing
 * so that the caller can report every problem with its path at once.
 */
export function expandMatrix(
  axes: AxisTable,
  zip: readonly (readonly string[])[] = [],
  filter?: (point: AxisPoint) => boolean,
): { points: AxisPoint[]; issues: DefinitionIssue[] } {
  const issues: DefinitionIssue[] = [];
  const names = Object.keys(axes);
  const groupOf = new Map<string, number>();
  const zipIssues: DefinitionIssue[] = [];
  /** Zip groups whose axes can be read position by position (every name known, same lengths). */
  const zippable = new Set<number>();
  zip.forEach((group, g) => {
    group.forEach((name, i) => {
      if (!Object.hasOwn(axes, name)) zipIssues.push({ path: `zip[${g}][${i}]`, message: `"${name}" is not one of the declared axes (${names.join(", ") || "none"})` });
      else if (groupOf.has(name)) zipIssues.push({ path: `zip[${g}][${i}]`, message: `axis "${name}" is already in zip group ${groupOf.get(name)}` });
      else groupOf.set(name, g);
    });
    const known = group.filter((n) => Object.hasOwn(axes, n));
    if (new Set(known.map((n) => axes[n]!.length)).size > 1) {
      zipIssues.push({ path: `zip[${g}]`, message: `zipped axes must have the same number of values, got ${known.map((n) => `${n}: ${axes[n]!.length}`).join(", ")}` });
    } else zippable.add(g);
  });
  // A repeated value would give two variants with one id, their cells and results mixed up. A
  // zipped axis is read position by position: its values may repeat (same-zone with and without
  // AccelNet), only the group's tuples must not.
  for (const name of names) {
    if (groupOf.has(name)) continue;
    axes[name]!.forEach((value, i) => {
      if (axes[name]!.indexOf(value) < i) issues.push({ path: `axes.${name}[${i}]`, message: `duplicate value ${JSON.stringify(value)}` });
    });
  }
  zip.forEach((group, g) => {
    if (!zippable.has(g)) return;
    const members = names.filter((n) => groupOf.get(n) === g);
    if (!members.length) return;
    const seen = new Map<string, number>();
    axes[members[0]!]!.forEach((_, i) => {
      const tuple = members.map((n) => `${n}=${JSON.stringify(axes[n]![i])}`).join(", ");
      const first = seen.get(tuple);
      if (first === undefined) seen.set(tuple, i);
      else {
        const where = members.length === 1 ? `axes.${members[0]}[${i}]` : `zip[${g}]`;
        const message = members.length === 1 ? `duplicate value ${JSON.stringify(axes[members[0]!]![i])}` : `position ${i} repeats position ${first} (${tuple}): zipped axes must not give the same combination twice`;
        issues.push({ path: where, message });
      }
    });
  });
  issues.push(...zipIssues);
  if (issues.length) return { points: [], issues };

  // One dimension per zip group (at the position of its first axis) or per lone axis.
  const dimensions: string[][] = [];
  const seenGroups = new Set<number>();
  for (const name of names) {
    const g = groupOf.get(name);
    if (g === undefined) dimensions.push([name]);
    else if (!seenGroups.has(g)) {
      seenGroups.add(g);
      dimensions.push(zip[g]!.filter((n) => Object.hasOwn(axes, n)));
    }
  }

  let points: AxisPoint[] = [{}];
  for (const dimension of dimensions) {
    const length = axes[dimension[0]!]!.length;
    const next: AxisPoint[] = [];
    for (const point of points) {
      for (let i = 0; i < length; i++) {
        const extended: AxisPoint = { ...point };
        for (const name of dimension) extended[name] = axes[name]![i]!;
        next.push(extended);
      }
    }
    points = next;
  }
  // Keep the declared axis order inside each point, whatever the zip grouping did.
  points = points.map((p) => Object.fromEntries(names.map((n) => [n, p[n]!])));

  if (filter) {
    const kept: AxisPoint[] = [];
    for (const point of points) {
      let keep: boolean;
      try {
        keep = filter(point);
      } catch (error) {
        issues.push({ path: "filter", message: `threw on ${variantId(point)}: ${(error as Error).message}` });
        continue;
      }
      if (typeof keep !== "boolean") {
        issues.push({ path: "filter", message: `must return true or false, returned ${JSON.stringify(keep)} for ${variantId(point)}` });
        continue;
      }
      if (keep) kept.push(point);
    }
    points = kept;
    if (!issues.length && !points.length) issues.push({ path: "filter", message: "removes every variant" });
  }
  return { points, issues };
}

/** A variant's id from its axis values, stable and readable: `accelnet=true,placement=same-zone`. */
export function variantId(point: AxisPoint): string {
  const parts = Object.entries(point).map(([k, v]) => `${k}=${String(v)}`);
  return parts.length ? parts.join(",") : "default";
}

/**
 * Each variant's baseline. A baseline naming every axis is one variant that all others are
 * compared with; one naming only some axes compares each variant with the variant that differs
 * from it only in those (`{accelnet: false}`: AccelNet on vs off within each placement).
 */
export function baselineMap(points: readonly AxisPoint[], baseline: AxisPoint | undefined): { map: Record<string, string>; issues: DefinitionIssue[] } {
  const ids = points.map(variantId);
  if (!baseline || !Object.keys(baseline).length) return { map: Object.fromEntries(ids.map((id) => [id, ids[0]!])), issues: [] };
  const map: Record<string, string> = {};
  const issues: DefinitionIssue[] = [];
  points.forEach((point, i) => {
    const wanted = { ...point, ...baseline };
    const match = points.findIndex((p) => Object.keys(wanted).every((k) => p[k] === wanted[k]));
    if (match < 0) issues.push({ path: "baseline", message: `variant ${ids[i]} has no baseline: no variant ${variantId(wanted)} (removed by the filter?)` });
    else map[ids[i]!] = ids[match]!;
  });
  return { map, issues };
}
