import { distance } from "fastest-levenshtein";

/**
 * The closest known name to a misspelled one, or undefined when nothing is close enough
 * to be a plausible typo (a third of the word's length, at least 2 edits).
 */
export function closestName(input: string, known: readonly string[]): string | undefined {
  const wanted = input.toLowerCase();
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const name of known) {
    const d = distance(wanted, name.toLowerCase());
    if (d < bestDistance) {
      best = name;
      bestDistance = d;
    }
  }
  const allowed = Math.max(2, Math.ceil(wanted.length / 3));
  return bestDistance <= allowed ? best : undefined;
}

export function didYouMean(input: string, known: readonly string[]): string {
  const match = closestName(input, known);
  return match ? ` — did you mean "${match}"?` : ` (known: ${known.join(", ")})`;
}
