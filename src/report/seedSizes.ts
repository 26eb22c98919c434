import { sizeFacts } from "../targets/azure/catalog/sizes/sizeFacts.ts";

/**
 * One sentence per size a reproduced report ran that this run does not: what became of that size
 * (Azure's restriction on previous-generation series, with its source) and what this run uses,
 * so a reader comparing the figures with the seed's knows the hardware differs.
 */
export function seedSizeLines(seedSizes: readonly { seed: string; size: string; note?: string | undefined }[] | undefined, sizesUsed: readonly string[]): string[] {
  const used = [...new Set(sizesUsed)].sort();
  // One sentence per seed: a seed that ran two sizes names both before saying what this run uses.
  const bySeed = new Map<string, { size: string; note?: string | undefined }[]>();
  for (const s of seedSizes ?? []) bySeed.set(s.seed, [...(bySeed.get(s.seed) ?? []), s]);
  return [...bySeed].map(([seed, sizes]) => {
    const what = sizes.map(({ size }) => {
      const pg = sizeFacts(size).previousGeneration;
      return pg
        ? `${size}, a previous-generation size (${pg.series} series) that Azure has not let new subscriptions deploy since ${pg.since}${pg.retires ? ` and retires on ${pg.retires}` : ""}`
        : `${size}, a size this experiment replaces`;
    });
    const notes = sizes.map((s) => s.note).filter(Boolean);
    return `${seed} used ${what.join("; and ")}; this run uses ${used.join(", ") || "no VMs"}${notes.length ? ` (${notes.join("; ")})` : ""}.`;
  });
}
