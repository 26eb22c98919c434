/**
 * latlab as a library: declare experiments with the DSL, plan them, read results.
 *   import { defineExperiment } from "latlab";
 */
export { defineExperiment, isExperiment } from "./dsl/experiment.ts";
export type { Experiment, ExperimentInput, MeasureSpec, HostsSpec } from "./dsl/experiment.ts";
export type { Axes, AxisValues, Placement } from "./dsl/axes.ts";
export type { HostSpec, ResolvedHost, Zone } from "./dsl/placement.ts";
export { ExperimentDefinitionError } from "./dsl/errors.ts";
export { buildPlan } from "./plan/buildPlan.ts";
export type { Plan, Cell, Variant, Deployment, PathKind } from "./plan/types.ts";
export { ResultsSchema } from "./results/schema.ts";
export type { Results, Measurement, Comparison } from "./results/schema.ts";
export { TOOL_NAMES } from "./tools/registry.ts";
export type { ToolName } from "./tools/registry.ts";
