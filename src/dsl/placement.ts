import { z } from "zod";

/**
 * Where one host goes. Azure names (region "uksouth", zone "1") are used on every target so
 * that one experiment file means the same thing locally and in the cloud.
 */
export const ZoneSchema = z.enum(["1", "2", "3"]);
export type Zone = z.infer<typeof ZoneSchema>;

export const RegionSchema = z
  .string()
  .regex(/^[a-z][a-z0-9]+$/, 'a region is an Azure region name in lower case, like "uksouth"');

export const VmSizeSchema = z
  .string()
  .regex(/^(Standard|Basic)_[A-Za-z0-9_]+$/, 'a VM size is an Azure size name, like "Standard_D2s_v5"');

/**
 * A VNet of a region, by a short name of the experiment's own ("a", "b"). Hosts of one region
 * naming different VNets sit in different VNets of that region, peered; a host naming none sits
 * in the region's one default VNet. Short: it becomes part of Azure and namespace names.
 */
export const VnetNameSchema = z
  .string()
  .regex(/^[a-z][a-z0-9]{0,7}$/, 'a VNet name is lower case letters and digits, starting with a letter, at most 8 characters, like "a"');

export const GroupNameSchema = z
  .string()
  .regex(/^[a-z][a-z0-9-]{0,30}$/, "a group name is lower case letters, digits and '-', at most 31 characters");

export const HostSpecSchema = z
  .object({
    region: RegionSchema.optional().describe('Azure region name, like "uksouth" (the same names on every target).'),
    zone: ZoneSchema.nullable().optional().describe("Availability zone; omit (or null) for a regional, non-zonal host."),
    ppg: z
      .union([GroupNameSchema, z.boolean()])
      .nullable()
      .optional()
      .describe("Proximity placement group: hosts naming the same group are placed in it; true = the experiment's one shared PPG; false or null: none."),
    availabilitySet: z
      .union([GroupNameSchema, z.boolean()])
      .nullable()
      .optional()
      .describe("Availability set: hosts naming the same set are placed in it; true = the experiment's one shared set; false or null: none. Cannot be combined with a zone."),
    size: VmSizeSchema.optional().describe('Azure VM size, like "Standard_D2s_v5".'),
    accelnet: z.boolean().optional().describe("Accelerated Networking on the host's NIC."),
    vnet: VnetNameSchema.nullable()
      .optional()
      .describe('The VNet of its region the host sits in, by a short name of the experiment\'s own ("a"); omit (or null) for the region\'s default VNet. Hosts of one region naming different VNets sit in peered VNets.'),
  })
  .strict();
export type HostSpec = z.infer<typeof HostSpecSchema>;

/** A host once defaults and axis values are applied: nothing left to guess. */
export const ResolvedHostSchema = z.object({
  role: z.string(),
  region: RegionSchema,
  zone: ZoneSchema.nullable(),
  ppg: GroupNameSchema.nullable(),
  availabilitySet: GroupNameSchema.nullable(),
  size: VmSizeSchema,
  accelnet: z.boolean(),
  /** null: the region's default VNet. */
  vnet: VnetNameSchema.nullable(),
});
export type ResolvedHost = z.infer<typeof ResolvedHostSchema>;
