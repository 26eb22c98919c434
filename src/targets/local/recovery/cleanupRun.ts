/**
 * `latlab resume` finishing a local run killed in the middle of its teardown: some of its
 * namespaces, processes or links are gone already, so its hosts cannot be re-attached to; what is
 * left of them is removed here — `latlab cleanup` limited to this run's record (and a resume's of
 * it), so another run's, live or dead, and leftovers no record accounts for are never touched.
 * The outcome is a teardown report, as the run's own teardown would have written it.
 */
import type { TeardownReport } from "../../../results/schema.ts";
import { cleanupLocal, type CleanupOptions } from "./cleanup.ts";
import { runOrItsResume } from "./reattach.ts";

export async function cleanupLocalRun(
  runId: string,
  runDir: string,
  resumeFolder: string,
  options: Pick<CleanupOptions, "exec" | "recordsDir" | "tempRoots" | "graceMs"> & { log: (message: string) => void },
): Promise<TeardownReport> {
  const onlyRuns = runOrItsResume(runId, runDir, resumeFolder);
  const report = await cleanupLocal({ ...options, onlyRuns });
  const errors = [...report.errors];
  // checkResume refused a live one before; one that came alive since (another resume) is its own.
  for (const l of report.live) errors.push(`run ${l.runId} (pid ${l.pid}) is running: what it has up is its own, not removed`);
  if (errors.length) {
    // What is still there, item by item, for the user (and `latlab cleanup`, which tries again).
    const left = (await cleanupLocal({ ...options, onlyRuns, dryRun: true }).catch(() => null))?.runs.flatMap((r) => r.items) ?? [];
    if (left.length) errors.push(`still left: ${left.join(", ")} (\`latlab cleanup\` tries again)`);
  }
  const removed = report.runs.flatMap((r) => r.items);
  return { status: errors.length ? "failed" : "ok", errors, removed };
}
