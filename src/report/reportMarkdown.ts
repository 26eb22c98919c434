/**
 * report.md: the verdicts, the Markdown summary's table and a Mermaid picture of where the hosts
 * were placed — GitHub renders all three, in $GITHUB_STEP_SUMMARY and pull-request comments. Pure.
 * The file keeps every column; a step summary may ask for the terminal's choice ({ wide: false }).
 */
import type { Results } from "../results/schema.ts";
import { topologyMermaid } from "./html/topology.ts";
import { markdownSummary, type SummaryColumns } from "./markdownSummary.ts";
import { verdicts } from "./verdicts.ts";

export function reportMarkdown(results: Results, samplesOf: (cell: string) => number[], columns: SummaryColumns = { wide: true }): string {
  const list = verdicts(results);
  const lines = [markdownSummary(results, samplesOf, columns).trimEnd(), "", "### Verdicts", ""];
  lines.push(...(list.length ? list.map((v) => `- ${v.text}`) : ["No comparisons to state."]), "");
  lines.push("### Where the hosts were placed", "", "```mermaid", topologyMermaid(results), "```", "");
  return `${lines.join("\n")}\n`;
}
