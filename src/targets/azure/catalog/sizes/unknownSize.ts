import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { isKnownSize, knownSizeNames, sizeFacts, suggestSize } from "./sizeFacts.ts";
import { SKU_SNAPSHOT_FILE, skuSnapshot, type SkuSnapshot } from "./skuSnapshot.ts";

/**
 * One sentence for a VM size latlab's catalog does not know, said the same way wherever a run
 * meets it (the plan's warnings, the cost gate, the live availability check, the local target):
 * the closest known size, and the file the sizes are in — derived from the file the catalog
 * really reads, so the message cannot name a file that has moved (issue 23).
 */

/** latlab's root: this file sits in <root>/{src,dist}/targets/azure/catalog/sizes/. */
const ROOT = fileURLToPath(new URL("../../../../../", import.meta.url));

/** Where the size names are, relative to latlab's root: `src/targets/azure/catalog/sizes/skus.snapshot.json` in a checkout. */
export const SKU_SNAPSHOT_PATH = relative(ROOT, fileURLToPath(SKU_SNAPSHOT_FILE)).split("\\").join("/");

/** ` — did you mean "X"?` when a known size is close, else "". */
export function didYouMeanSize(size: string, snapshot: SkuSnapshot = skuSnapshot()): string {
  const close = suggestSize(size, snapshot);
  return close ? ` — did you mean "${close}"?` : "";
}

/**
 * `X is not a size latlab knows (not among the N sizes of <file>, <source>) — did you mean "Y"?`,
 * or undefined when some source of the catalog knows the size.
 */
export function unknownSizeNote(size: string, snapshot: SkuSnapshot = skuSnapshot()): string | undefined {
  if (isKnownSize(sizeFacts(size, undefined, snapshot))) return undefined;
  return `${size} is not a size latlab knows (not among the ${knownSizeNames(snapshot).length} sizes of ${SKU_SNAPSHOT_PATH}, from ${snapshot.source.repository}@${snapshot.source.commit.slice(0, 7)})${didYouMeanSize(size, snapshot)}`;
}
