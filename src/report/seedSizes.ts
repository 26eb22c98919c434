import { sizeFacts } from "../targets/azure/catalog/sizes/sizeFacts.ts";

/**
 * One sentence per size a reproduced report ran that this run does not: what became of that size
 * (Azure's restriction on previous-generation series, with its source) and what this run uses,
 * so a reader comparing the figures with the seed's knows the hardware differs.
 */
export function seedSizeLines(seedSizes: readonly { seed: string; size: string; note?: string | undefined }[] | undefined, sizesUsed: readonly string[]): string[] {
  const used = [...new Set(sizesUsed)].sort();
  return (seedSizes ?? []).map(({ seed, size, note }) => {
    const pg = sizeFacts(size).previousGeneration;
    const why = pg
      ? `a previous-generation size (${pg.series} series) that Azure has not let new subscriptions deploy since ${pg.since}${pg.retires ? ` and retires on ${pg.retires}` : ""}`
      : "a size this experiment replaces";
    return `${seed} used ${size}, ${why}; this run uses ${used.join(", ") || "no VMs"}${note ? ` (${note})` : ""}.`;
  });
}
