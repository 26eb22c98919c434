import { checkPairs, type Experiment } from "../dsl/experiment.ts";
import { ExperimentDefinitionError } from "../dsl/errors.ts";
import { baselineMap, expandMatrix, variantId } from "../dsl/matrix.ts";
import { findTool } from "../tools/registry.ts";
import { groupHostSets, measurementAxesId } from "./hostSets.ts";
import { crossesPeering, pathKind } from "./pathKind.ts";
import { scheduledSeconds } from "./schedule.ts";
import { resolveHosts } from "./resolveHosts.ts";
import { PlanSchema, type Cell, type Deployment, type NetworkPath, type Plan, type Variant } from "./types.ts";

export interface PlanOptions {
  /**
   * Measurement time per tool run: `{ seconds }` sets it, `{ factor }` scales each tool's
   * own duration. Tools express duration their own way (ping: count × interval).
   */
  duration?: { seconds: number } | { factor: number };
}

/** The experiment's measures with their tool and their parameters as run (--duration applied). */
export function planMeasures(experiment: Experiment, options: PlanOptions = {}) {
  return experiment.measure.map((m) => {
    const tool = findTool(m.tool);
    if (!tool) throw new Error(`unknown tool "${m.tool}" in a validated experiment`);
    let params = m.params;
    if (options.duration) {
      const seconds = "seconds" in options.duration ? options.duration.seconds : tool.measurementSeconds(params) * options.duration.factor;
      params = tool.withDuration(params, seconds) as Record<string, unknown>;
    }
    return { ...m, tool, params };
  });
}

/**
 * experiment → variants → host sets (variants that differ only in measurement axes share one)
 * → deployments (a host set's replicas) → measurement cells.
 * Pure: the same experiment and options always give the same plan.
 */
export function buildPlan(experiment: Experiment, options: PlanOptions = {}): Plan {
  const { points, issues } = expandMatrix(experiment.axes as Record<string, readonly (string | boolean)[]>, experiment.zip, experiment.filter);
  if (issues.length) throw new ExperimentDefinitionError(issues, experiment.name);

  const variants: Variant[] = points.map((point) => {
    const id = variantId(point);
    return { id, axes: point, hosts: resolveHosts(experiment, point, id) };
  });

  const pairIssues = variants.flatMap((v) => checkPairs(experiment.measure, v.hosts.map((h) => h.role)).map((i) => ({ ...i, message: `${i.message} (variant ${v.id})` })));
  if (pairIssues.length) throw new ExperimentDefinitionError(pairIssues, experiment.name);

  const measures = planMeasures(experiment, options);

  const deployments: Deployment[] = [];
  const cells: Cell[] = [];
  for (const set of groupHostSets(variants)) {
    const hosts = set.variants[0]!.hosts;
    const byRole = new Map(hosts.map((h) => [h.role, h]));
    const shared = set.variants.length > 1;
    for (let replica = 0; replica < experiment.replicas; replica++) {
      const deployment: Deployment = {
        id: experiment.replicas > 1 ? `${set.id}#r${replica}` : set.id,
        index: deployments.length,
        variant: set.variants[0]!.id,
        variants: set.variants.map((v) => v.id),
        replica,
        hosts,
      };
      deployments.push(deployment);
      for (let repetition = 0; repetition < experiment.repetitions; repetition++) {
        measures.forEach((m, measureIndex) => {
          // The variants of a shared deployment take turns measure by measure, so that a drift
          // over the run (a noisy neighbour arriving) does not land on one path only.
          for (const variant of set.variants) {
            const pairs = m.pairs ?? hosts.filter((h) => h.role !== "server").map((h) => ({ from: h.role, to: "server" }));
            for (const pair of pairs) {
              const path: NetworkPath = m.path ?? (variant.axes.path as NetworkPath | undefined) ?? "private";
              const from = byRole.get(pair.from)!;
              const to = byRole.get(pair.to)!;
              const suffix = `${shared ? `@${measurementAxesId(variant)}` : ""}${experiment.repetitions > 1 ? `/rep${repetition}` : ""}`;
              cells.push({
                id: `${deployment.id}/${m.tool.name}#${measureIndex}/${pair.from}->${pair.to}${suffix}`,
                deployment: deployment.id,
                variant: variant.id,
                replica,
                repetition,
                measure: measureIndex,
                tool: m.tool.name,
                params: m.params,
                from: pair.from,
                to: pair.to,
                path,
                pathKind: pathKind(from, to),
                crossesPeering: crossesPeering(from, to, path),
                estimatedSeconds: m.tool.estimateSeconds(m.params),
              });
            }
          }
        });
      }
    }
  }

  const baselines = baselineMap(points, experiment.baseline);
  if (baselines.issues.length) throw new ExperimentDefinitionError(baselines.issues, experiment.name);

  return PlanSchema.parse({
    experiment: { name: experiment.name, description: experiment.description, ...(experiment.seedSizes.length ? { seedSizes: experiment.seedSizes } : {}) },
    baseline: baselines.map[variants[0]!.id],
    baselineOf: baselines.map,
    variants,
    deployments,
    cells,
    estimate: {
      measurementSeconds: scheduledSeconds(cells, (c) => c.estimatedSeconds),
      cells: cells.length,
      hosts: deployments.reduce((sum, d) => sum + d.hosts.length, 0),
    },
  });
}
