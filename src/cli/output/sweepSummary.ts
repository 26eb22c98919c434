/**
 * `latlab sweep --summary <file>`: the sweep's account in Markdown, appended to the file — the
 * workflows pass $GITHUB_STEP_SUMMARY, which GitHub shows on the run's page. What was found, what
 * was deleted, what was kept and why, what ARM still holds; "Nothing to do" when nothing was.
 * Pure: the command appends what this returns.
 *
 * A step's summary holds at most 1 MiB ("each step is restricted to a maximum size of 1MiB":
 * github/docs content/actions/reference/workflows-and-actions/workflow-commands.md @ 2f266f0, "Step
 * isolation and limits"): groups of other GitHub runs are counted, not listed, and long lists are cut.
 */
import type { GithubRunSelector, SweepReport, SweptGroup } from "../../targets/azure/lifecycle/sweeper.ts";
import { describeGithubRun } from "../../targets/azure/lifecycle/sweeper.ts";

/** One place swept: the Azure subscription, or one rehearsal emulator. */
export interface SweepScope {
  /** "Azure subscription", "emulator /tmp/latlab-azemu-x". */
  title: string;
  report?: SweepReport;
  /** Why nothing was swept here, or what became of it (an emulator skipped, removed, left resumable). */
  notes: string[];
  errors: string[];
}

export interface SweepSummaryInput {
  githubRun: GithubRunSelector | null;
  delete: boolean;
  /** "Azure" or "the rehearsal emulators on this machine". */
  where: string;
  scopes: SweepScope[];
  now: Date;
}

/** Rows listed per table at most; the rest are counted. */
export const MAX_ROWS = 200;

/** A value shown as code: Markdown in it is inert; a pipe would end a table cell, a newline the row. */
function code(text: string): string {
  const flat = text.replace(/[\r\n]+/g, " ").replace(/`/g, "'").replace(/\|/g, "\\|");
  return `\`${flat}\``;
}

/** Our own words in a table cell. */
const cell = (text: string) => text.replace(/[\r\n]+/g, " ").replace(/\|/g, "\\|");

function outcome(g: SweptGroup, report: SweepReport): string {
  if (!g.selected) return `kept: ${cell(g.why)}`;
  if (report.deleted.includes(g.name)) return `**deleted** (${cell(g.why)})`;
  const failed = report.failed.find((f) => f.name === g.name);
  if (failed) return `**delete failed**: ${code(failed.error)}`;
  return report.dryRun ? `would be deleted with --delete (${cell(g.why)})` : `selected (${cell(g.why)})`;
}

/** Groups this account lists: with a GitHub run, only its own (the others are counted). */
function listed(report: SweepReport): { rows: SweptGroup[]; others: number } {
  if (!report.githubRun) return { rows: report.groups, others: 0 };
  const ofRun = report.groups.filter((g) => g.github?.runId === report.githubRun!.runId);
  return { rows: ofRun, others: report.groups.length - ofRun.length };
}

function scopeLines(scope: SweepScope): string[] {
  const lines = [`#### ${cell(scope.title)}`, ""];
  for (const n of scope.notes) lines.push(`- ${cell(n)}`);
  for (const e of scope.errors) lines.push(`- **error**: ${code(e)}`);
  if (scope.notes.length || scope.errors.length) lines.push("");
  const report = scope.report;
  if (!report) return lines;
  const { rows, others } = listed(report);
  if (rows.length) {
    lines.push("| Resource group | Location | Expires | Outcome |", "| --- | --- | --- | --- |");
    for (const g of rows.slice(0, MAX_ROWS)) lines.push(`| ${code(g.name)} | ${g.location ? code(g.location) : ""} | ${g.expiresAt ?? "unknown"} | ${outcome(g, report)} |`);
    if (rows.length > MAX_ROWS) lines.push(`| … | | | ${rows.length - MAX_ROWS} more not listed |`);
    lines.push("");
  } else {
    lines.push(report.githubRun ? `No latlab resource group of ${cell(describeGithubRun(report.githubRun))} here.` : "No latlab resource group here.", "");
  }
  if (others) lines.push(`${others} other latlab resource group(s), not of this run: not touched.`, "");
  if (report.left !== null) {
    if (report.left.length === 0) lines.push("Left in ARM: nothing.", "");
    else {
      lines.push(`Left in ARM (${report.left.length}):`, "");
      for (const id of report.left.slice(0, MAX_ROWS)) lines.push(`- ${code(id)}`);
      if (report.left.length > MAX_ROWS) lines.push(`- … ${report.left.length - MAX_ROWS} more`);
      lines.push("");
    }
  }
  for (const e of report.leftErrors) lines.push(`- left in ARM: unknown for ${code(e)}`);
  if (report.leftErrors.length) lines.push("");
  return lines;
}

export function sweepSummaryMarkdown(input: SweepSummaryInput): string {
  const selection = input.githubRun ? `every latlab resource group of ${describeGithubRun(input.githubRun)}` : "expired latlab resource groups";
  const lines = [`### latlab sweep: ${cell(selection)}`, "", `${cell(input.where)}, ${input.now.toISOString()}; ${input.delete ? "with --delete" : "dry run (nothing deleted)"}.`, ""];
  const reports = input.scopes.flatMap((s) => (s.report ? [s.report] : []));
  const selected = reports.reduce((n, r) => n + r.groups.filter((g) => g.selected).length, 0);
  const deleted = reports.reduce((n, r) => n + r.deleted.length, 0);
  const failed = reports.reduce((n, r) => n + r.failed.length, 0);
  const left = reports.reduce((n, r) => n + (r.left?.length ?? 0), 0);
  const errors = input.scopes.reduce((n, s) => n + s.errors.length, 0) + reports.reduce((n, r) => n + r.leftErrors.length, 0);
  if (selected === 0 && left === 0 && errors === 0) {
    lines.push(`**Nothing to do**: no ${input.githubRun ? `latlab resource group of ${cell(describeGithubRun(input.githubRun))}` : "expired latlab resource group"} found.`, "");
  } else {
    const counts = [`${selected} selected`, input.delete ? `${deleted} deleted` : "none deleted (dry run)", ...(failed ? [`${failed} failed`] : []), ...(input.delete ? [left ? `${left} resource(s) still in ARM` : "nothing of them left in ARM"] : []), ...(errors ? [`${errors} error(s)`] : [])];
    lines.push(counts.join(", ") + ".", "");
  }
  for (const scope of input.scopes) lines.push(...scopeLines(scope));
  return `${lines.join("\n").replace(/\n{3,}/g, "\n\n").trimEnd()}\n\n`;
}
