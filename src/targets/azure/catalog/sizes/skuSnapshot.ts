import { readFileSync } from "node:fs";
import { z } from "zod";
import { ResourceSkuSchema, type ResourceSku } from "./resourceSku.ts";

/**
 * The offline catalog of VM sizes: what Azure's Resource SKUs API said, as data some other tool
 * recorded from that API (see `source`), never a hand-written table. Made by
 * `npm run skus:snapshot` (scripts/updateSkuSnapshot.ts); at run time the live API is the truth
 * (computeCapacity.ts reads it for the quota check) and this file only plans offline.
 */
export const SkuSnapshotSchema = z
  .object({
    /** Where the data came from: repository, commit, files and when their generator ran (the file's own "generated at", else the commit that last regenerated it: `what` says which). */
    source: z.object({
      repository: z.string(),
      commit: z.string().regex(/^[0-9a-f]{40}$/),
      committedAt: z.string(),
      files: z.array(z.object({ path: z.string(), generatedAt: z.string().nullable(), what: z.string() })).min(1),
      generator: z.string(),
    }),
    madeBy: z.string(),
    madeAt: z.string(),
    note: z.string(),
    /** Full SKU entries, in ARM's `ResourceSku` shape, one per region the source recorded. */
    skus: z.array(ResourceSkuSchema),
    /** Every size name the source saw in any region, with its quota family (name.value of the usages API). */
    names: z.record(z.string(), z.object({ family: z.string(), discoveredOn: z.string().nullable() })),
  })
  .strict();
export type SkuSnapshot = z.infer<typeof SkuSnapshotSchema>;

export const SKU_SNAPSHOT_FILE = new URL("./skus.snapshot.json", import.meta.url);

let cached: SkuSnapshot | undefined;

/** The shipped snapshot, read and checked once. */
export function skuSnapshot(): SkuSnapshot {
  if (!cached) cached = SkuSnapshotSchema.parse(JSON.parse(readFileSync(SKU_SNAPSHOT_FILE, "utf8")));
  return cached;
}

/** The snapshot's full SKU entries for a size (any region), by Azure's case-insensitive name. */
export function snapshotSkus(size: string, snapshot: SkuSnapshot = skuSnapshot()): ResourceSku[] {
  const key = size.toLowerCase();
  return snapshot.skus.filter((s) => s.name?.toLowerCase() === key);
}

/** The snapshot's family record for a size name, case-insensitive. */
export function snapshotName(size: string, snapshot: SkuSnapshot = skuSnapshot()): { name: string; family: string; discoveredOn: string | null } | undefined {
  if (Object.hasOwn(snapshot.names, size)) return { name: size, ...snapshot.names[size]! };
  const key = size.toLowerCase();
  const found = Object.keys(snapshot.names).find((n) => n.toLowerCase() === key);
  return found ? { name: found, ...snapshot.names[found]! } : undefined;
}
