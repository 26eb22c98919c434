import { z } from "zod";
import { NetworkPathSchema } from "../plan/types.ts";
import { RegionSchema, VmSizeSchema, VnetNameSchema } from "./placement.ts";

/**
 * Where the non-anchor hosts (every role but the first) sit relative to the anchor host,
 * when the hosts are not placed by hand.
 */
export const PlacementSchema = z.enum(["same-ppg", "same-zone", "cross-zone", "cross-region"]);
export type Placement = z.infer<typeof PlacementSchema>;

/**
 * The infrastructure axes: each is a list of values, and the experiment's variants are their
 * cartesian product (less the filter, with zipped axes moving together). Tools are not an axis:
 * every tool runs on every variant's hosts.
 */
export const AxesSchema = z
  .object({
    placement: z
      .array(PlacementSchema)
      .min(1)
      .describe("Where every host but the first (the anchor) sits relative to the anchor: in its PPG, its zone, another zone, or `peerRegion`."),
    ppg: z.array(z.boolean()).min(1).describe("Every host in the experiment's one shared proximity placement group, or none."),
    availabilitySet: z.array(z.boolean()).min(1).describe("Every host in the experiment's one shared availability set, or none."),
    accelnet: z.array(z.boolean()).min(1).describe("Accelerated Networking on every host."),
    size: z.array(VmSizeSchema).min(1).describe("The VM size of every host."),
    region: z.array(RegionSchema).min(1).describe("The region of every host."),
    path: z
      .array(NetworkPathSchema)
      .min(1)
      .describe("A measurement axis: private (VNet) or public addresses. It changes no host: both are measured between the same VMs."),
    vnet: z.array(VnetNameSchema).min(1).describe("The VNet of every host that does not name its own (compare one VNet with peered VNets)."),
  })
  .partial()
  .strict();

export type Axes = z.infer<typeof AxesSchema>;
export type AxisName = keyof Axes;
export const AXIS_NAMES = Object.keys(AxesSchema.shape) as AxisName[];

/**
 * Axes that change what is measured between the hosts, never the hosts themselves. Variants that
 * differ only in these (and resolve to the same hosts) share their deployments: `path=private`
 * and `path=public` are measured between the same two VMs, as the seeds measured them.
 */
export const MEASUREMENT_AXES: readonly AxisName[] = ["path"];

/** The values one variant takes: one value per declared axis. */
export type AxisValues<A extends Axes = Axes> = { [K in keyof A]: A[K] extends readonly (infer V)[] ? V : never };
