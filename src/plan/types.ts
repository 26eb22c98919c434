import { z } from "zod";
import { ResolvedHostSchema } from "../dsl/placement.ts";

/** How traffic between two hosts travels; decides the emulated path and the latency model. */
export const PathKindSchema = z.enum(["same-ppg", "same-zone", "same-region", "cross-zone", "cross-region"]);
export type PathKind = z.infer<typeof PathKindSchema>;

/** Which address the client measures to: the private (VNet/peered) one or the public one. */
export const NetworkPathSchema = z.enum(["private", "public"]);
export type NetworkPath = z.infer<typeof NetworkPathSchema>;

export const AxisValueSchema = z.union([z.string(), z.number(), z.boolean()]);
export type AxisValue = z.infer<typeof AxisValueSchema>;

export const VariantSchema = z.object({
  /** Stable id built from the axis values, e.g. `ppg=false`. */
  id: z.string(),
  axes: z.record(z.string(), AxisValueSchema),
  hosts: z.array(ResolvedHostSchema),
});
export type Variant = z.infer<typeof VariantSchema>;

/**
 * One set of hosts brought up together: a replica of the variants that resolve to these hosts
 * and differ only in measurement axes (MEASUREMENT_AXES: path=private and path=public run on
 * the same VMs). Most deployments serve one variant.
 */
export const DeploymentSchema = z.object({
  /** The variant's id when it serves one; else the variants' shared (non-measurement) axis values. */
  id: z.string(),
  index: z.number().int().nonnegative(),
  /** The first of `variants`. */
  variant: z.string(),
  /** Every variant whose cells run on these hosts, in plan order. */
  variants: z.array(z.string()).min(1),
  replica: z.number().int().nonnegative(),
  hosts: z.array(ResolvedHostSchema),
});
export type Deployment = z.infer<typeof DeploymentSchema>;

/** The smallest unit of measurement: one tool run from one host to another. */
export const CellSchema = z.object({
  id: z.string(),
  deployment: z.string(),
  variant: z.string(),
  replica: z.number().int().nonnegative(),
  repetition: z.number().int().nonnegative(),
  /** Index into the experiment's measure list (the same tool may be listed twice). */
  measure: z.number().int().nonnegative(),
  tool: z.string(),
  params: z.record(z.string(), z.unknown()),
  from: z.string(),
  to: z.string(),
  path: NetworkPathSchema,
  /** Where the two hosts are placed (PPG, zone, region); says nothing of VNets. */
  pathKind: PathKindSchema,
  /** The private path between two VNets (of one region or two): the traffic crosses a VNet peering. */
  crossesPeering: z.boolean(),
  estimatedSeconds: z.number().nonnegative(),
});
export type Cell = z.infer<typeof CellSchema>;

export const PlanSchema = z.object({
  experiment: z.object({
    name: z.string(),
    description: z.string(),
    /** Sizes the reproduced reports ran instead of this plan's (the experiment's `seedSizes`). */
    seedSizes: z.array(z.object({ seed: z.string(), size: z.string(), note: z.string().optional() })).optional(),
  }),
  /** The first baseline variant (the one, when every variant shares it). */
  baseline: z.string(),
  /** Each variant's baseline (a baseline maps to itself). */
  baselineOf: z.record(z.string(), z.string()),
  variants: z.array(VariantSchema),
  deployments: z.array(DeploymentSchema),
  cells: z.array(CellSchema),
  estimate: z.object({
    /** The cells' tool run times as scheduled (see schedule.ts): mostly one after another. */
    measurementSeconds: z.number().nonnegative(),
    cells: z.number().int().nonnegative(),
    hosts: z.number().int().nonnegative(),
  }),
});
export type Plan = z.infer<typeof PlanSchema>;
