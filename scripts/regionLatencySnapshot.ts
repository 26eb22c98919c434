/**
 * Regenerates src/targets/local/model/regionLatency.snapshot.json from Microsoft's "Azure network
 * round-trip latency statistics" article (MicrosoftDocs/azure-docs,
 * articles/networking/azure-network-latency.md), so the snapshot names exactly what it was made
 * from. Either from a git clone of azure-docs at one commit (read with `git show`):
 *
 *   node scripts/regionLatencySnapshot.ts --docs /path/to/azure-docs/.git [--commit SHA] [--out FILE]
 *
 * or from a copy of the Markdown whose commit is not known, saying where the copy came from:
 *
 *   node scripts/regionLatencySnapshot.ts --file article.md --obtained "…" [--out FILE]
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { REGION_LATENCY_SNAPSHOT_FILE, RegionLatencySnapshotSchema, type RegionLatencySnapshot } from "../src/targets/local/model/regionLatency.ts";
import { parseLatencyArticle } from "../src/targets/local/model/regionLatencyMarkdown.ts";

export const ARTICLE_PATH = "articles/networking/azure-network-latency.md";

/** git's blob id of a file's bytes (what `git hash-object` prints), so a copy can be found in history. */
export function gitBlobId(bytes: Buffer): string {
  return createHash("sha1").update(`blob ${bytes.length}\0`).update(bytes).digest("hex");
}

export function makeRegionLatencySnapshot(markdown: Buffer, where: { commit: string | null; obtained: string }, today: string): RegionLatencySnapshot {
  const a = parseLatencyArticle(markdown.toString("utf8"));
  return RegionLatencySnapshotSchema.parse({
    source: {
      title: "Azure network round-trip latency statistics",
      url: "https://learn.microsoft.com/azure/networking/azure-network-latency",
      repository: "github.com/MicrosoftDocs/azure-docs",
      path: ARTICLE_PATH,
      commit: where.commit,
      blob: gitBlobId(markdown),
      obtained: where.obtained,
      msDate: a.msDate,
      statistic: a.statistic,
      datasetTakenOn: a.datasetTakenOn,
      periodEnding: a.periodEnding,
    },
    madeBy: "scripts/regionLatencySnapshot.ts",
    madeAt: today,
    note: `Round-trip times in ms, ${a.statistic} of a 30-day window, as Microsoft's tables give them: rttMs[i][j] is from regions[i] (the table's 'Source' row) to regions[j] (its column); null where the article gives none. Read from ${a.tables.pipe} tables${a.tables.csv ? " and checked against the article's CSV block, figure for figure" : ""}.`,
    regions: a.regions,
    rttMs: a.rttMs,
  });
}

/** JSON with one matrix row a line: diffable when Microsoft updates a figure, and not 3,000 lines long. */
export function formatSnapshot(s: RegionLatencySnapshot): string {
  const { rttMs, ...rest } = s;
  const head = JSON.stringify(rest, null, 2).replace(/\n}$/, "");
  return `${head},\n  "rttMs": [\n${rttMs.map((row) => `    ${JSON.stringify(row)}`).join(",\n")}\n  ]\n}\n`;
}

function main(): void {
  const { values } = parseArgs({ options: { docs: { type: "string" }, commit: { type: "string" }, file: { type: "string" }, obtained: { type: "string" }, out: { type: "string" } } });
  let markdown: Buffer;
  let where: { commit: string | null; obtained: string };
  if (values.docs) {
    const git = (...args: string[]) => execFileSync("git", ["--git-dir", values.docs!, ...args], { maxBuffer: 64 << 20 });
    const sha = git("rev-parse", `${values.commit ?? "HEAD"}^{commit}`).toString().trim();
    markdown = git("show", `${sha}:${ARTICLE_PATH}`);
    where = { commit: sha, obtained: `git show ${sha}:${ARTICLE_PATH}` };
  } else if (values.file && values.obtained) {
    markdown = readFileSync(values.file);
    where = { commit: null, obtained: values.obtained };
  } else {
    throw new Error("give --docs <azure-docs git dir> [--commit SHA], or --file <markdown> --obtained <where the copy came from>");
  }
  const out = values.out ?? fileURLToPath(REGION_LATENCY_SNAPSHOT_FILE);
  const snapshot = makeRegionLatencySnapshot(markdown, where, new Date().toISOString().slice(0, 10));
  writeFileSync(out, formatSnapshot(snapshot));
  process.stdout.write(`${out}: ${snapshot.regions.length} regions, ${snapshot.source.statistic} of the 30 days ending ${snapshot.source.periodEnding} (ms.date ${snapshot.source.msDate}, ${snapshot.source.commit ? `commit ${snapshot.source.commit}` : `blob ${snapshot.source.blob}`})\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
