import { readFileSync } from "node:fs";
import { z } from "zod";
import { regionCapability } from "../../azure/catalog/capabilities.ts";

/**
 * Round-trip times between Azure regions as Microsoft publishes them ("Azure network round-trip
 * latency statistics", learn.microsoft.com/azure/networking/azure-network-latency), kept as a
 * snapshot with its source: made by scripts/regionLatencySnapshot.ts from the article's Markdown
 * (tests/fixtures/azure-latency/ holds the copy it was made from), never typed in by hand.
 */
export const RegionLatencySnapshotSchema = z
  .object({
    source: z.object({
      title: z.string(),
      url: z.string(),
      repository: z.string(),
      path: z.string(),
      /** The azure-docs commit the Markdown was read at; null when it was read from a copy whose commit is not known (`obtained` says how). */
      commit: z.string().regex(/^[0-9a-f]{40}$/).nullable(),
      /** git's blob id of the Markdown read (`git hash-object`): with a clone, `git log --find-object=<blob>` finds the commits that have it. */
      blob: z.string().regex(/^[0-9a-f]{40}$/),
      obtained: z.string(),
      /** The article's ms.date, yyyy-mm-dd. */
      msDate: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
      statistic: z.string(),
      datasetTakenOn: z.string(),
      periodEnding: z.string(),
    }),
    madeBy: z.string(),
    madeAt: z.string(),
    note: z.string(),
    regions: z.array(z.string()).min(2),
    /** Milliseconds, [source][destination] in `regions` order; null where the article gives none. */
    rttMs: z.array(z.array(z.number().positive().nullable())),
  })
  .strict()
  .refine((s) => s.rttMs.length === s.regions.length && s.rttMs.every((row) => row.length === s.regions.length), "rttMs must be regions × regions");
export type RegionLatencySnapshot = z.infer<typeof RegionLatencySnapshotSchema>;

export const REGION_LATENCY_SNAPSHOT_FILE = new URL("./regionLatency.snapshot.json", import.meta.url);

let cached: RegionLatencySnapshot | undefined;

/** The shipped snapshot, read and checked once. */
export function regionLatencySnapshot(): RegionLatencySnapshot {
  if (!cached) cached = RegionLatencySnapshotSchema.parse(JSON.parse(readFileSync(REGION_LATENCY_SNAPSHOT_FILE, "utf8")));
  return cached;
}

/** "Microsoft, '…', P50 of the 30 days ending …(file, date, commit or blob)": what a figure of this snapshot cites. */
export function snapshotCitation(s: RegionLatencySnapshot = regionLatencySnapshot()): string {
  const at = s.source.commit ? `commit ${s.source.commit.slice(0, 12)}` : `blob ${s.source.blob.slice(0, 12)}`;
  return `Microsoft, '${s.source.title}', ${s.source.statistic} of the 30 days ending ${s.source.periodEnding} (${s.source.repository} ${s.source.path}, ms.date ${s.source.msDate}, ${at})`;
}

export interface PublishedRegionRtt {
  rttUs: number;
  /** The table's two directed figures, ms (null: not published in that direction). */
  forwardMs: number | null;
  backwardMs: number | null;
  source: string;
}

/**
 * The published round trip between two of latlab's regions (ARM names, as in capabilities.ts
 * REGIONS), or undefined when the table lacks the pair. The table is directed (row = source) and
 * its two directions differ by a ms or so; latlab models one RTT per pair (RTT/2 on each end), so
 * it takes the mean of the two, or the one direction published. Symmetric by construction.
 */
export function publishedRegionRtt(regionA: string, regionB: string, s: RegionLatencySnapshot = regionLatencySnapshot()): PublishedRegionRtt | undefined {
  const nameA = regionCapability(regionA)?.displayName;
  const nameB = regionCapability(regionB)?.displayName;
  if (!nameA || !nameB || nameA === nameB) return undefined;
  const i = s.regions.indexOf(nameA);
  const j = s.regions.indexOf(nameB);
  if (i < 0 || j < 0) return undefined;
  const forwardMs = s.rttMs[i]![j] ?? null;
  const backwardMs = s.rttMs[j]![i] ?? null;
  const both = [forwardMs, backwardMs].filter((v): v is number => v !== null);
  if (!both.length) return undefined;
  const meanMs = both.reduce((a, b) => a + b, 0) / both.length;
  const directions = [forwardMs !== null ? `${nameA}→${nameB} ${forwardMs} ms` : null, backwardMs !== null ? `${nameB}→${nameA} ${backwardMs} ms` : null].filter(Boolean).join(", ");
  const how = both.length === 2 ? "mean of the two directions" : "the one direction published";
  return { rttUs: Math.round(meanMs * 1000), forwardMs, backwardMs, source: `${snapshotCitation(s)}: ${directions}; ${how}` };
}
