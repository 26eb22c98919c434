import Table from "cli-table3";

const STYLE = { head: [], border: [], compact: true };

/** A table as terminal text (cli-table3, as the run's own table) or as GitHub Markdown. */
export function renderTable(head: readonly string[], rows: readonly (readonly string[])[], markdown: boolean): string {
  if (markdown) {
    const cell = (v: string) => v.replaceAll("|", "\\|").replaceAll("\n", " ");
    const line = (cells: readonly string[]) => `| ${cells.map(cell).join(" | ")} |`;
    return [line(head), line(head.map(() => "---")), ...rows.map(line)].join("\n");
  }
  const table = new Table({ head: [...head], style: STYLE });
  for (const r of rows) table.push([...r]);
  return table.toString();
}

/**
 * Columns a terminal shows a character of ours in: the tables' characters (µ, Δ, —, ×, box
 * drawing) are one column each, so code points, not UTF-16 units ("𝑥".length is 2).
 */
export const displayWidth = (text: string) => [...text].length;

/** What cli-table3 adds around n columns: a border before each, one after the last, a space each side of a cell. */
const frameWidth = (columns: number) => 3 * columns + 1;

/**
 * `text` as lines of at most `width` columns, broken between words; a word longer than a line is
 * cut (a figure split over two lines beats a line the terminal wraps into the next row). Lines
 * after the first keep the first's indentation, two more when it wraps a note's own text.
 */
export function wrapText(text: string, width: number, hangingIndent = ""): string[] {
  const out: string[] = [];
  for (const line of text.split("\n")) {
    let indent = /^\s*/.exec(line)![0];
    const words = line.slice(indent.length).split(/ +/).filter(Boolean);
    if (displayWidth(indent) >= width) indent = "";
    const next = displayWidth(indent + hangingIndent) < width ? indent + hangingIndent : "";
    let current = indent;
    let bare = true;
    for (let word of words) {
      if (displayWidth(current) + (bare ? 0 : 1) + displayWidth(word) <= width) {
        current += (bare ? "" : " ") + word;
        bare = false;
        continue;
      }
      if (!bare) {
        out.push(current);
        current = next;
      }
      // A word wider than a whole line: cut into pieces that fit.
      while (displayWidth(current) + displayWidth(word) > width) {
        const chars = [...word];
        const fit = width - displayWidth(current);
        out.push(current + chars.slice(0, fit).join(""));
        word = chars.slice(fit).join("");
        current = next;
      }
      current += word;
      bare = false;
    }
    out.push(current);
  }
  return out;
}

/** The widest line of each column (head included). */
const naturalWidths = (head: readonly string[], rows: readonly (readonly string[])[]) =>
  head.map((h, c) => Math.max(...[h, ...rows.map((r) => r[c] ?? "")].flatMap((cell) => cell.split("\n")).map(displayWidth)));

/**
 * The width of each column's text so that the table is at most `width` columns wide: as wide as
 * its content where everything fits; otherwise the widest column gives a character at a time,
 * first down to its longest word (cells then wrap between words), only then below it.
 */
export function fitWidths(head: readonly string[], rows: readonly (readonly string[])[], width: number): number[] {
  let widths = naturalWidths(head, rows);
  const budget = Math.max(head.length, width - frameWidth(head.length));
  const longestWord = head.map((h, c) => Math.max(1, ...[h, ...rows.map((r) => r[c] ?? "")].flatMap((cell) => cell.split(/\s+/)).map(displayWidth)));
  const natural = [...widths];
  let total = widths.reduce((a, b) => a + b, 0);
  while (total > budget) {
    const wrappable = widths.map((w, c) => (w > longestWord[c]! ? w : 0));
    const pool = wrappable.some(Boolean) ? wrappable : widths.map((w) => (w > 1 ? w : 0));
    const widest = pool.indexOf(Math.max(...pool));
    if (pool[widest]! <= 0) break;
    widths[widest]! -= 1;
    total -= 1;
  }
  // Wrapping between words leaves a column narrower than it was given: that room goes back to a
  // column still wrapped, the one it takes least to unwrap first.
  for (;;) {
    const used = widths.map((w, c) => (w < natural[c]! ? Math.max(...[head[c]!, ...rows.map((r) => r[c] ?? "")].flatMap((cell) => wrapText(cell, w)).map(displayWidth)) : w));
    const room = budget - used.reduce((a, b) => a + b, 0);
    const deficits = used.map((w, c) => (w < natural[c]! ? natural[c]! - w : Number.POSITIVE_INFINITY));
    const c = deficits.indexOf(Math.min(...deficits));
    if (deficits[c]! > room) return widths;
    used[c] = natural[c]!;
    widths = used;
  }
}

/** A terminal table at most `width` columns wide (see {@link fitWidths}): cells wrap, nothing is cut off. */
export function fitTable(head: readonly string[], rows: readonly (readonly string[])[], width: number): string {
  const widths = fitWidths(head, rows, width);
  const wrap = (cells: readonly string[]) => cells.map((cell, c) => wrapText(cell, widths[c]!).join("\n"));
  const table = new Table({ head: wrap(head), style: STYLE });
  for (const r of rows) table.push(wrap(r));
  return table.toString();
}
