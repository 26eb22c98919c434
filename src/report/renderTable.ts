import Table from "cli-table3";

/** A table as terminal text (cli-table3, as the run's own table) or as GitHub Markdown. */
export function renderTable(head: readonly string[], rows: readonly (readonly string[])[], markdown: boolean): string {
  if (markdown) {
    const cell = (v: string) => v.replaceAll("|", "\\|").replaceAll("\n", " ");
    const line = (cells: readonly string[]) => `| ${cells.map(cell).join(" | ")} |`;
    return [line(head), line(head.map(() => "---")), ...rows.map(line)].join("\n");
  }
  const table = new Table({ head: [...head], style: { head: [], border: [], compact: true } });
  for (const r of rows) table.push([...r]);
  return table.toString();
}
