import type { Experiment } from "../dsl/experiment.ts";
import { expandMatrix, variantId, type AxisPoint, type AxisTable } from "../dsl/matrix.ts";
import { planMeasures, type PlanOptions } from "./buildPlan.ts";
import { hostSetKey } from "./hostSets.ts";
import { resolveHosts } from "./resolveHosts.ts";

/**
 * How big a plan latlab runs without asking, and how big it builds at all (README, "Commands").
 *
 * - `confirm`: above any of these, `latlab plan` prints a warning and `latlab run` needs --yes.
 *   The largest shipped experiment has 80 cells and 12 hosts, and the longest runs 11 h
 *   (zone-region-baseline on Azure); a plan past these is one somebody should look at before
 *   it runs: an hour of SSH overhead alone, more VMs than a subscription's default vCPU quota
 *   in most regions, a night of measuring.
 * - `refuse`: above any of these nothing is built. 20,000 cells is a 9 MB plan, and at even a
 *   second or two of overhead per tool run, more than a day of nothing but overhead; 500 hosts
 *   is 500 namespaces with an sshd each, or 500 VMs; 720 h is 30 days of measuring, not an
 *   experiment to run in one go. A typo such as `replicas: 1e6` lands here, refused before its
 *   plan (6 million cells, gigabytes) is expanded.
 *
 * The axes are never expanded past `refuse.cells` combinations (before the filter): each one
 * kept is at least one cell per replica.
 */
export const PLAN_LIMITS = {
  confirm: { cells: 1_000, hosts: 20, hours: 12 },
  refuse: { cells: 20_000, hosts: 500, hours: 720 },
} as const;

export interface Limits {
  cells: number;
  hosts: number;
  hours: number;
}

export interface PlanLimits {
  confirm: Limits;
  refuse: Limits;
}

/** What a plan would hold, computed from the experiment without building a single cell. */
export interface PlanSize {
  /** Combinations of the axes before the filter. */
  combinations: number;
  /** Variants after the filter. */
  variants: number;
  replicas: number;
  repetitions: number;
  /** Cells of one replica and one repetition of every variant: each variant's pairs summed over its measures. */
  cellsPerRound: number;
  deployments: number;
  hosts: number;
  cells: number;
  measurementSeconds: number;
}

/** A number past a limit. */
export interface Excess {
  what: "axis combinations" | "cells" | "hosts" | "hours";
  value: number;
  limit: number;
}

export interface PlanCheck {
  /** Undefined when the axes alone were past the limit: nothing else was counted. */
  size?: PlanSize;
  combinations: number;
  /** Never built, never run. */
  refused: Excess[];
  /** Shown by `plan`; `run` needs --yes. */
  confirm: Excess[];
}

/**
 * The number of points the axes expand to before the filter: the product of the axes' lengths,
 * a zip group counting once. Arithmetic only (may be Infinity).
 */
export function axisCombinations(axes: AxisTable, zip: readonly (readonly string[])[] = []): number {
  const grouped = new Set<string>();
  let product = 1;
  for (const group of zip) {
    const known = group.filter((name) => Object.hasOwn(axes, name) && !grouped.has(name));
    if (!known.length) continue;
    for (const name of known) grouped.add(name);
    product *= axes[known[0]!]!.length;
  }
  for (const [name, values] of Object.entries(axes)) if (!grouped.has(name)) product *= values.length;
  return product;
}


/** A variant's roles as its hosts spec names them; a spec buildPlan would refuse counts none. */
function rolesOf(experiment: Experiment, point: AxisPoint): { roles: string[]; spec: unknown } {
  let spec: unknown = experiment.hosts;
  if (typeof spec === "function") {
    try {
      spec = spec(point);
    } catch {
      return { roles: [], spec: undefined };
    }
  }
  return { roles: typeof spec === "object" && spec !== null ? Object.keys(spec) : [], spec };
}

/**
 * The plan's size as buildPlan would build it — variants, deployments, hosts, cells, scheduled
 * measurement seconds — multiplied out rather than expanded: replicas and repetitions are
 * factors, never loops, so `replicas: 1e9` costs what `replicas: 1` does. The variants are
 * enumerated (the filter and a hosts function need them), so the caller bounds the axes first
 * (see checkExperiment). A definition buildPlan would refuse is counted as far as it can be;
 * buildPlan then says what is wrong.
 */
export function experimentSize(experiment: Experiment, options: PlanOptions = {}): PlanSize {
  const axes = experiment.axes as AxisTable;
  const combinations = axisCombinations(axes, experiment.zip);
  const { points, issues } = expandMatrix(axes, experiment.zip, experiment.filter);
  const variants = issues.length ? [] : points;
  const measures = planMeasures(experiment, options);

  const hostSets = new Map<string, number>();
  let cellsPerRound = 0;
  let secondsPerRound = 0;
  for (const point of variants) {
    const { roles, spec } = rolesOf(experiment, point);
    // Keyed as buildPlan groups them (hostSets.ts): by the resolved hosts, so two specs that
    // resolve alike are one host set here too, not a false --yes prompt.
    let hosts: unknown = spec;
    try {
      hosts = resolveHosts(experiment, point, variantId(point));
    } catch {
      // buildPlan refuses it, with the reason; counted by its spec meanwhile.
    }
    hostSets.set(hostSetKey(point, hosts), roles.length);
    const clients = roles.filter((r) => r !== "server").length;
    for (const m of measures) {
      const pairs = m.pairs?.length ?? clients;
      const seconds = m.tool.estimateSeconds(m.params);
      cellsPerRound += pairs;
      // As scheduleGroups: a tool running its pairs in parallel takes one run's time per variant.
      secondsPerRound += m.tool.pairsInParallel ? (pairs > 0 ? seconds : 0) : pairs * seconds;
    }
  }
  const { replicas, repetitions } = experiment;
  const hostsPerRound = [...hostSets.values()].reduce((sum, n) => sum + n, 0);
  return {
    combinations,
    variants: variants.length,
    replicas,
    repetitions,
    cellsPerRound,
    deployments: hostSets.size * replicas,
    hosts: hostsPerRound * replicas,
    cells: cellsPerRound * replicas * repetitions,
    measurementSeconds: secondsPerRound * replicas * repetitions,
  };
}

function over(size: PlanSize, limits: Limits): Excess[] {
  const values: [Excess["what"], number, number][] = [
    ["cells", size.cells, limits.cells],
    ["hosts", size.hosts, limits.hosts],
    ["hours", size.measurementSeconds / 3600, limits.hours],
  ];
  return values.filter(([, value, limit]) => !(value <= limit)).map(([what, value, limit]) => ({ what, value, limit }));
}

/**
 * Checks an experiment against the limits before its plan is built: the axes first (arithmetic),
 * then the size (arithmetic over the variants). Pure.
 */
export function checkExperiment(experiment: Experiment, options: PlanOptions = {}, limits: PlanLimits = PLAN_LIMITS): PlanCheck {
  const combinations = axisCombinations(experiment.axes as AxisTable, experiment.zip);
  if (!(combinations <= limits.refuse.cells)) {
    return { combinations, refused: [{ what: "axis combinations", value: combinations, limit: limits.refuse.cells }], confirm: [] };
  }
  const size = experimentSize(experiment, options);
  const refused = over(size, limits.refuse);
  return { size, combinations, refused, confirm: refused.length ? [] : over(size, limits.confirm) };
}

/** 1,234,567; 12.5; 3.0e+21 past what grouping can show readably. */
export function formatCount(n: number): string {
  if (!Number.isFinite(n) || Math.abs(n) >= 1e15) return n.toExponential(1);
  return n.toLocaleString("en-US", { maximumFractionDigits: Number.isInteger(n) ? 0 : 1 });
}

const plural = (n: number, word: string) => `${formatCount(n)} ${word}${n === 1 ? "" : "s"}`;

function excessLine(e: Excess, size: PlanSize | undefined): string {
  const value = formatCount(e.value);
  const limit = formatCount(e.limit);
  switch (e.what) {
    case "axis combinations":
      return `axis combinations: ${value} before the filter (limit ${limit})`;
    case "cells":
      return `cells: ${value}${size ? ` = ${formatCount(size.cellsPerRound)} per replica and repetition (${plural(size.variants, "variant")}) × ${plural(size.replicas, "replica")} × ${plural(size.repetitions, "repetition")}` : ""} (limit ${limit})`;
    case "hosts":
      return `hosts: ${value}${size ? ` in ${plural(size.deployments, "deployment")}` : ""} (limit ${limit})`;
    case "hours":
      return `estimated measurement: ${value} h (limit ${limit} h)`;
  }
}

/** The message of a refused plan: what is too large, by how much. */
export function refusalText(name: string, check: PlanCheck): string {
  return [
    `experiment "${name}": the plan is too large to build, refused (nothing was built or written):`,
    ...check.refused.map((e) => `  ${excessLine(e, check.size)}`),
    "Lower replicas, repetitions, axes, measures or --duration.",
  ].join("\n");
}

/** The numbers of a plan above the confirm limits. */
export function confirmText(name: string, check: PlanCheck): string {
  return [`experiment "${name}" is above latlab's limits for a run without --yes:`, ...check.confirm.map((e) => `  ${excessLine(e, check.size)}`)].join("\n");
}
