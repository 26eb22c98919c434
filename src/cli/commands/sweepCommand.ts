/**
 * `latlab sweep`: lists the latlab resource groups it would delete — expired ones, or with
 * `--github-run` every group of that GitHub Actions run whatever its expiry — and deletes them
 * with `--delete` (lifecycle/sweeper.ts). `--rehearse` sweeps the rehearsal emulators on this
 * machine instead of Azure (emulator/sweepRehearsals.ts); `--summary <file>` appends a Markdown
 * account (sweepSummary.ts) — the workflows pass $GITHUB_STEP_SUMMARY.
 */
import { accessSync, constants, statSync } from "node:fs";
import { appendFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { InvalidArgumentError, type Command } from "commander";
import { GithubRunSchema } from "../../targets/azure/program/types.ts";
import type { GithubRunSelector, SweepReport } from "../../targets/azure/lifecycle/sweeper.ts";
import type { EmulatorSweep } from "../../targets/azure/emulator/sweepRehearsals.ts";
import { sweepSummaryMarkdown, type SweepScope } from "../output/sweepSummary.ts";

interface SweepFlags {
  delete?: boolean;
  subscription?: string;
  githubRun?: string;
  githubAttempt?: string;
  githubRepository?: string;
  rehearse?: boolean;
  summary?: string;
}

/** A commander parser from one field of program/types.ts GithubRunSchema: the values latlab tags are the values it selects by. */
const fieldParser = (field: keyof typeof GithubRunSchema.shape) => (value: string) => {
  const parsed = GithubRunSchema.shape[field].safeParse(value);
  if (!parsed.success) throw new InvalidArgumentError(`${parsed.error.issues[0]?.message ?? "invalid"}, got "${value}"`);
  return parsed.data;
};

/**
 * The GitHub run to select, from the flags. Without --github-repository, inside GitHub Actions
 * the run's own repository (GITHUB_REPOSITORY) narrows it: a run id is unique only within a
 * repository (program/types.ts). Throws for flags that make no sense together.
 */
export function githubRunSelector(opts: Pick<SweepFlags, "githubRun" | "githubAttempt" | "githubRepository">, env: NodeJS.ProcessEnv): GithubRunSelector | undefined {
  if (opts.githubRun === undefined) {
    const stray = [opts.githubAttempt !== undefined && "--github-attempt", opts.githubRepository !== undefined && "--github-repository"].filter(Boolean);
    if (stray.length) throw new Error(`${stray.join(" and ")} narrow(s) --github-run <id>: give the run id too`);
    return undefined;
  }
  let repository = opts.githubRepository;
  if (repository === undefined && env.GITHUB_ACTIONS === "true" && env.GITHUB_REPOSITORY) {
    const parsed = GithubRunSchema.shape.repository.safeParse(env.GITHUB_REPOSITORY);
    if (!parsed.success) throw new Error(`GITHUB_REPOSITORY: ${parsed.error.issues[0]?.message}, got "${env.GITHUB_REPOSITORY.slice(0, 80)}" (or pass --github-repository <owner/name>)`);
    repository = parsed.data;
  }
  return { runId: opts.githubRun, ...(opts.githubAttempt !== undefined ? { attempt: opts.githubAttempt } : {}), ...(repository !== undefined ? { repository } : {}) };
}

/** Refuses a summary file that cannot be appended to, before anything is swept. */
export function checkSummaryFile(file: string): void {
  let isFile = false;
  try {
    isFile = statSync(file).isFile();
    if (!isFile) throw new Error(`--summary ${file}: not a file`);
    accessSync(file, constants.W_OK);
    return;
  } catch (e) {
    if (isFile || (e as NodeJS.ErrnoException).code !== "ENOENT") throw new Error(`--summary ${file}: cannot append to it (${(e as Error).message})`, { cause: e });
  }
  try {
    if (!statSync(dirname(resolve(file))).isDirectory()) throw new Error("not a directory");
    accessSync(dirname(resolve(file)), constants.W_OK);
  } catch (e) {
    throw new Error(`--summary ${file}: its folder ${dirname(resolve(file))} cannot hold it (${(e as Error).message})`, { cause: e });
  }
}

function groupLines(report: SweepReport, indent = ""): string {
  return report.groups
    .map((g) => {
      const fate = !g.selected ? "kept" : report.deleted.includes(g.name) ? "deleted" : report.failed.some((f) => f.name === g.name) ? "FAILED" : report.dryRun ? "would delete" : "selected";
      return `${indent}${g.name}\t${g.state}\t${g.expiresAt ?? "unknown expiry"}\t${fate}: ${g.why}\n`;
    })
    .join("");
}

function leftLines(report: SweepReport, indent = ""): string {
  let text = "";
  if (report.left) text += report.left.length === 0 ? `${indent}left: none\n` : `${indent}left:\n${report.left.map((id) => `${indent}  ${id}\n`).join("")}`;
  for (const e of report.leftErrors) text += `${indent}left: unknown for ${e}\n`;
  return text;
}

/** Whether a report says the sweep did not finish its job: a failed delete, something left, an unknown. */
const incomplete = (report: SweepReport | undefined) => Boolean(report && (report.failed.length || report.left?.length || report.leftErrors.length));

function emulatorScope(e: EmulatorSweep): SweepScope {
  const notes: string[] = [];
  if (e.outcome === "live") notes.push("skipped: its emulator answers (a run is still going); never touched");
  if (e.outcome === "no-state") notes.push("skipped: no state.json (an emulator starting, or one that never saved anything)");
  if (e.outcome === "untouched") notes.push("nothing to delete in it: not touched");
  if (e.after === "removed") notes.push("holds nothing any more: its folder, namespaces and processes are removed");
  if (e.after === "resumable") notes.push(`still holds ${e.held?.length ?? 0} resource(s): left resumable (state kept, namespaces and VMs stopped)`);
  return { title: `emulator ${e.home}`, ...(e.report ? { report: e.report } : {}), notes, errors: e.errors };
}

export function registerSweepCommand(program: Command, setExitCode: (code: number) => void): void {
  program
    .command("sweep")
    .description("list latlab's Azure resource groups whose expiresAt has passed, or with --github-run every group of that GitHub run whatever its expiry (--delete removes them)")
    .option("--delete", "delete the selected groups, waiting until they are gone (default: only list them)")
    .option("--subscription <id>", "Azure subscription (default: AZURE_SUBSCRIPTION_ID or ARM_SUBSCRIPTION_ID)")
    .option("--github-run <id>", "select every latlab group tagged with this GitHub Actions run id (GITHUB_RUN_ID), whatever its expiry, and nothing else", fieldParser("runId"))
    .option("--github-attempt <n>", "with --github-run: only the groups of this attempt (GITHUB_RUN_ATTEMPT)", fieldParser("runAttempt"))
    .option("--github-repository <owner/name>", "with --github-run: only the groups of this repository's run (default inside GitHub Actions: GITHUB_REPOSITORY)", fieldParser("repository"))
    .option("--rehearse", "sweep the rehearsal emulators on this machine (runs of `latlab run --rehearse` whose runner died) instead of Azure")
    .option("--summary <file>", "append a Markdown account of the sweep to this file (in a workflow: \"$GITHUB_STEP_SUMMARY\")")
    .action(async (opts: SweepFlags) => {
      // Every flag checked before anything is listed or deleted.
      if (opts.rehearse && opts.subscription !== undefined) throw new Error("--rehearse sweeps this machine's emulators, not a subscription: drop --subscription");
      const githubRun = githubRunSelector(opts, process.env);
      if (opts.summary !== undefined) checkSummaryFile(opts.summary);
      const log = (m: string) => process.stderr.write(`${m}\n`);
      const now = new Date();
      const doDelete = Boolean(opts.delete);
      const selection = githubRun ? { githubRun } : {};
      const scopes: SweepScope[] = [];
      const where = opts.rehearse ? "The rehearsal emulators on this machine" : "Azure";
      let code = 0;
      try {
        if (opts.rehearse) {
          const { sweepRehearsals } = await import("../../targets/azure/emulator/sweepRehearsals.ts");
          const swept = await sweepRehearsals({ delete: doDelete, now, log, ...selection });
          if (!swept.length) process.stdout.write("no rehearsal emulator on this machine\n");
          for (const e of swept) {
            process.stdout.write(`emulator ${e.home}: ${e.outcome}${e.after ? `, ${e.after}` : ""}\n`);
            if (e.report) process.stdout.write(groupLines(e.report, "  ") + leftLines(e.report, "  "));
            for (const err of e.errors) process.stdout.write(`  error: ${err}\n`);
            if (e.errors.length || incomplete(e.report)) code = 1;
            scopes.push(emulatorScope(e));
          }
        } else {
          const { createAzureResourceGroupsClient, sweep } = await import("../../targets/azure/lifecycle/sweeper.ts");
          const report = await sweep({ client: await createAzureResourceGroupsClient(opts.subscription), now, delete: doDelete, log, ...selection });
          process.stdout.write(groupLines(report) + leftLines(report));
          if (incomplete(report)) code = 1;
          scopes.push({ title: "Azure subscription", report, notes: [], errors: [] });
        }
      } catch (e) {
        // The step summary says the sweep failed, not nothing: then the error goes on as usual.
        scopes.push({ title: opts.rehearse ? "Rehearsal emulators" : "Azure subscription", notes: [], errors: [`the sweep stopped: ${(e as Error).message}`] });
        if (opts.summary !== undefined) await appendFile(opts.summary, sweepSummaryMarkdown({ githubRun: githubRun ?? null, delete: doDelete, where, scopes, now }));
        throw e;
      }
      const anySelected = scopes.some((s) => s.report?.groups.some((g) => g.selected));
      if (!doDelete && anySelected) process.stdout.write("dry run: nothing deleted; add --delete to remove the selected groups\n");
      if (opts.summary !== undefined) await appendFile(opts.summary, sweepSummaryMarkdown({ githubRun: githubRun ?? null, delete: doDelete, where, scopes, now }));
      setExitCode(code);
    });
}
