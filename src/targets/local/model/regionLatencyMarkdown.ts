import { parse as parseYaml } from "yaml";

/**
 * Reads Microsoft's "Azure network round-trip latency statistics" article
 * (MicrosoftDocs/azure-docs, articles/networking/azure-network-latency.md) into a directed
 * matrix: row = the source region, column = the destination, as the article's tables are laid
 * out ("organized … by source region in the first column of each table").
 *
 * The article splits the matrix over one GFM pipe table per tab (each tab a group of destination
 * regions); newer versions repeat the whole matrix as one CSV block. Both are read, and a figure
 * that differs between them (or between two tables) is an error, not a choice: the snapshot must
 * be what Microsoft published. latlab has no Markdown parser among its dependencies, so the pipe
 * tables are read here with the few rules these tables use (no escaped pipes, no inline code);
 * a cell that is neither empty nor a number is refused rather than guessed.
 */

export interface ParsedLatencyArticle {
  /** `ms.date` of the front matter, as ISO yyyy-mm-dd. */
  msDate: string;
  /** Which percentile the figures are, e.g. "P50". */
  statistic: string;
  /** "The current dataset was taken on …" as the article writes it. */
  datasetTakenOn: string;
  /** The last day of the 30-day window, as the article writes it. */
  periodEnding: string;
  /** Display names, sorted; the matrix's row and column order. */
  regions: string[];
  /** Milliseconds, [source][destination]; null where the article gives none (the diagonal, a region pair it lacks). */
  rttMs: (number | null)[][];
  /** How many tables (pipe tables, and the CSV block if any) the figures were read from. */
  tables: { pipe: number; csv: boolean };
}

type Directed = Map<string, Map<string, number>>;

function put(into: Directed, from: string, to: string, ms: number, where: string): void {
  const row = into.get(from) ?? new Map<string, number>();
  const had = row.get(to);
  if (had !== undefined && had !== ms) throw new Error(`${from} → ${to}: ${had} ms in one table, ${ms} ms in ${where}`);
  row.set(to, ms);
  into.set(from, row);
}

function cellMs(cell: string, where: string): number | null {
  const t = cell.trim();
  if (t === "") return null;
  if (!/^\d+(\.\d+)?$/.test(t)) throw new Error(`${where}: "${t}" is not a figure in ms`);
  return Number(t);
}

const splitRow = (line: string): string[] => {
  const inner = line.trim().replace(/^\|/, "").replace(/\|$/, "");
  return inner.split("|").map((c) => c.trim());
};

/** The GFM pipe tables of the article whose header starts with "Source". */
function readPipeTables(lines: readonly string[], into: Directed): number {
  let count = 0;
  for (let i = 0; i + 1 < lines.length; i++) {
    const header = lines[i]!;
    if (!header.trim().startsWith("|") || !/^\s*\|?\s*:?-{3,}/.test(lines[i + 1]!)) continue;
    const cols = splitRow(header);
    if (cols[0] !== "Source") continue;
    const destinations = cols.slice(1);
    count++;
    let r = i + 2;
    for (; r < lines.length && lines[r]!.trim().startsWith("|"); r++) {
      const cells = splitRow(lines[r]!);
      if (cells.length !== cols.length) throw new Error(`line ${r + 1}: ${cells.length} cells, the header has ${cols.length}`);
      const from = cells[0]!;
      destinations.forEach((to, k) => {
        const ms = cellMs(cells[k + 1]!, `line ${r + 1}, ${from} → ${to}`);
        if (ms !== null) put(into, from, to, ms, `the table at line ${i + 1}`);
      });
    }
    i = r - 1;
  }
  return count;
}

/** The ```csv block, when the article has one. Region names hold no commas or quotes: a quote is refused. */
function readCsvBlock(text: string, into: Directed): boolean {
  const m = /^```csv\r?\n([\s\S]*?)^```/m.exec(text);
  if (!m) return false;
  const rows = m[1]!.split(/\r?\n/).filter((l) => l.trim() !== "");
  if (rows.some((l) => l.includes('"'))) throw new Error("the CSV block has quoted fields, which this reader does not handle");
  const header = rows[0]!.split(",");
  if (header[0] !== "Source") throw new Error(`the CSV block starts with "${header[0]}", not "Source"`);
  for (const row of rows.slice(1)) {
    const cells = row.split(",");
    if (cells.length !== header.length) throw new Error(`CSV row "${cells[0]}": ${cells.length} fields, the header has ${header.length}`);
    header.slice(1).forEach((to, k) => {
      const ms = cellMs(cells[k + 1]!, `CSV ${cells[0]} → ${to}`);
      if (ms !== null) put(into, cells[0]!, to, ms, "the CSV block");
    });
  }
  return true;
}

function frontMatter(text: string): Record<string, unknown> {
  const m = /^---\r?\n([\s\S]*?)\r?\n---\r?\n/.exec(text);
  if (!m) throw new Error("no front matter");
  return parseYaml(m[1]!) as Record<string, unknown>;
}

/** ms.date is written mm/dd/yyyy in Microsoft's front matter. */
function isoDate(msDate: unknown): string {
  const m = /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(String(msDate));
  if (!m) throw new Error(`ms.date "${String(msDate)}" is not mm/dd/yyyy`);
  return `${m[3]}-${m[1]}-${m[2]}`;
}

export function parseLatencyArticle(text: string): ParsedLatencyArticle {
  const meta = frontMatter(text);
  const statistic = /monthly Percentile (P\d+) round trip times/i.exec(text)?.[1];
  if (!statistic) throw new Error('no "monthly Percentile Pnn round trip times" sentence: which statistic the figures are is unknown');
  const taken = /dataset was taken on \*([^*]+)\*/.exec(text)?.[1];
  const ending = /30-day period (?:ending on \*([^*]+)\*|from \*[^*]+\* to \*([^*]+)\*)/.exec(text);
  if (!taken || !ending) throw new Error('no "The current dataset was taken on …, and it covers the 30-day period …" sentence: the figures\' date is unknown');
  const tables: Directed = new Map();
  const pipe = readPipeTables(text.split(/\r?\n/), tables);
  if (pipe === 0) throw new Error('no table whose first column is "Source"');
  const fromTables = new Map([...tables].map(([k, v]) => [k, new Map(v)]));
  const csv = readCsvBlock(text, tables);
  if (csv) {
    // The CSV must say what the tables say, pair for pair: put() refused any different figure;
    // here a pair one of them lacks.
    const count = (d: Directed) => [...d.values()].reduce((n, row) => n + row.size, 0);
    if (count(tables) !== count(fromTables)) throw new Error(`the CSV block has ${count(tables)} figures, the tables ${count(fromTables)}`);
  }
  const names = new Set<string>();
  for (const [from, row] of tables) {
    names.add(from);
    for (const to of row.keys()) names.add(to);
  }
  const regions = [...names].sort();
  const rttMs = regions.map((from) => regions.map((to) => tables.get(from)?.get(to) ?? null));
  return { msDate: isoDate(meta["ms.date"]), statistic, datasetTakenOn: taken.trim(), periodEnding: (ending[1] ?? ending[2])!.trim(), regions, rttMs, tables: { pipe, csv } };
}
