import { z } from "zod";

/**
 * Azure's Resource SKUs API (`ResourceSkus_List`, Azure/azure-rest-api-specs
 * specification/compute/resource-manager/Microsoft.Compute/Skus/stable/2021-07-01/skus.json):
 * the fields latlab reads. Lenient where Azure is: fields are read-only and optional in the
 * spec; unknown fields are dropped.
 */

/** `ResourceSkuRestrictions` (Skus/stable/2021-07-01/skus.json). */
export const SkuRestrictionSchema = z.object({
  /** "Location" or "Zone". */
  type: z.string().optional(),
  values: z.array(z.string()).optional(),
  restrictionInfo: z.object({ locations: z.array(z.string()).optional(), zones: z.array(z.string()).optional() }).optional(),
  /** "NotAvailableForSubscription" or "QuotaId" (the subscription's offer type excludes the size). */
  reasonCode: z.string().optional(),
});
export type SkuRestriction = z.infer<typeof SkuRestrictionSchema>;

/** `ResourceSku`: the fields the check reads. */
export const ResourceSkuSchema = z.object({
  resourceType: z.string().optional(),
  name: z.string().optional(),
  family: z.string().optional(),
  locations: z.array(z.string()).optional(),
  locationInfo: z
    .array(
      z.object({
        location: z.string().optional(),
        zones: z.array(z.string()).optional(),
        /** "EdgeZone" for an extended location; absent for the region itself. */
        type: z.string().optional(),
      }),
    )
    .optional(),
  capabilities: z.array(z.object({ name: z.string().optional(), value: z.string().optional() })).optional(),
  restrictions: z.array(SkuRestrictionSchema).optional(),
});
export type ResourceSku = z.infer<typeof ResourceSkuSchema>;

export const ResourceSkuListSchema = z.object({
  value: z.array(ResourceSkuSchema),
  nextLink: z.string().nullish(),
});
export type ResourceSkuList = z.infer<typeof ResourceSkuListSchema>;
