import { readFileSync } from "node:fs";
import { ExcerptFileSchema, type ExcerptFile } from "./excerptSchema.ts";

/**
 * The shipped spec excerpts, each read and schema-checked once, on first use. Read with
 * readFileSync(new URL(…, import.meta.url)) rather than a JSON import: it behaves the same under
 * tsx, vitest and `node --import tsx`, and keeps tsc from typing 60 kB of literals.
 */

export const EXCERPT_FILES = ["resources-2024-03-01.json", "network-2024-05-01.json", "compute-2024-11-01.json"] as const;
export type ExcerptName = (typeof EXCERPT_FILES)[number];

const cache = new Map<ExcerptName, ExcerptFile>();

export function loadExcerpt(name: ExcerptName): ExcerptFile {
  let excerpt = cache.get(name);
  if (excerpt === undefined) {
    const text = readFileSync(new URL(`./${name}`, import.meta.url), "utf8");
    const parsed = ExcerptFileSchema.safeParse(JSON.parse(text));
    if (!parsed.success) throw new Error(`spec excerpt ${name} is malformed: ${parsed.error.message}`);
    excerpt = parsed.data;
    cache.set(name, excerpt);
  }
  return excerpt;
}
