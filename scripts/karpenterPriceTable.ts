/**
 * Reads the price table Azure's Karpenter provider generates from the Retail Prices API
 * (github.com/Azure/karpenter-provider-azure, pkg/providers/pricing/zz_generated.pricing.go,
 * written by its hack/code/prices_gen): for every region, the `priceType eq 'Consumption'`,
 * `currencyCode eq 'USD'`, `serviceName eq 'Virtual Machines'` rows, Windows, Spot and
 * Low Priority left out, keyed by armSkuName. A dated copy of the API made by Microsoft's own
 * generator: what latlab's snapshot is made from where prices.azure.com cannot be reached.
 *
 * The file is Go source, but generated in one fixed shape (gofmt'ed map literals), so it is read
 * line by line; anything else in it is refused rather than guessed at.
 */

export interface KarpenterPriceTable {
  /** The generator's "// generated at <RFC 3339>" line: when the API was read. */
  generatedAt: string;
  /** region → armSkuName → USD per hour. */
  prices: Record<string, Record<string, number>>;
}

const GENERATED_AT = /^\/\/ generated at (\d{4}-\d\d-\d\dT[\d:]+Z)\s*$/;
const REGION_START = /^\s*initialOnDemandPrices\["([a-z0-9]+)"\] = map\[string\]float64\{\s*$/;
const ENTRY = /^\s*"([^"]+)":\s*([0-9]+(?:\.[0-9]+)?),\s*$/;
const BLOCK_END = /^\s*\}\s*$/;

export function parseKarpenterPriceTable(text: string, file = "zz_generated.pricing.go"): KarpenterPriceTable {
  let generatedAt: string | undefined;
  const prices: Record<string, Record<string, number>> = {};
  let region: string | undefined;
  text.split("\n").forEach((line, i) => {
    const where = `${file}:${i + 1}`;
    if (region) {
      if (line.trim() === "") return;
      if (BLOCK_END.test(line)) {
        region = undefined;
        return;
      }
      const entry = ENTRY.exec(line);
      if (!entry) throw new Error(`${where}: expected "Size": price, inside the ${region} map, got ${JSON.stringify(line.trim())}`);
      const price = Number(entry[2]);
      if (!Number.isFinite(price)) throw new Error(`${where}: price ${entry[2]} for ${entry[1]} in ${region} is not a number`);
      // The API lists some sizes at 0 (retired or not sold): no price, not a free VM.
      if (price > 0) prices[region]![entry[1]!] = price;
      return;
    }
    const g = GENERATED_AT.exec(line);
    if (g) generatedAt = g[1];
    const start = REGION_START.exec(line);
    if (start) {
      region = start[1]!;
      if (prices[region]) throw new Error(`${where}: region ${region} appears twice`);
      prices[region] = {};
    }
  });
  if (region) throw new Error(`${file}: the ${region} map is not closed`);
  if (!generatedAt) throw new Error(`${file}: no "// generated at <time>" line: not a table written by karpenter-provider-azure's prices_gen`);
  if (Object.keys(prices).length === 0) throw new Error(`${file}: no initialOnDemandPrices["<region>"] map`);
  return { generatedAt, prices };
}
