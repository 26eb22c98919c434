/**
 * `latlab resume` on the local target: the hosts a run (or a resume of it) left up when its
 * runner died are re-attached to — the same hosts, so the run's cells go on where they stopped
 * and a detached client (tcp-echo) still running there is collected — instead of cleaned away.
 */
import type { Plan } from "../../../plan/types.ts";
import { LocalTarget, type LocalTargetOptions } from "../localTarget.ts";
import { cleanupLocal } from "./cleanup.ts";
import { readRunRecords, localRunsDir } from "./runRecord.ts";
import { readSavedEnvironment } from "./savedEnvironment.ts";

/** The run itself, or a resume of it (brought up under its own run id, working in `<runDir>/<resumeFolder>`). */
const ofRun = (runId: string, runDir: string, resumeFolder: string) => (r: { runId: string; runDir: string | null }) =>
  r.runId === runId || r.runDir === runDir || r.runDir === `${runDir}/${resumeFolder}`;

/**
 * What is the run's own, to re-attach to or remove: the run's, or a resume's of it — not merely
 * another run's that once wrote to the same folder (`--out X --force`).
 */
export const runOrItsResume = (runId: string, runDir: string, resumeFolder: string) => (r: { runId: string; runDir: string | null }) =>
  r.runId === runId || r.runDir === `${runDir}/${resumeFolder}`;

/** Throws when the run, or a resume of it, is still running here. */
export async function refuseLiveRun(runId: string, runDir: string, resumeFolder: string, recordsDir?: string): Promise<void> {
  const report = await cleanupLocal({ dryRun: true, ...(recordsDir ? { recordsDir } : {}) });
  const live = report.live.find(ofRun(runId, runDir, resumeFolder));
  if (live) throw new Error(`run ${runId} (or a resume of it, run ${live.runId}) is still running (pid ${live.pid}): it cannot be resumed while it runs`);
}

/**
 * A target holding the hosts the run left up, when they are whole and have every host `plan`
 * needs; null when the run left nothing up. Throws, saying to run `latlab cleanup`, when hosts are
 * left that cannot be re-attached to (the runner died while bringing them up, some are gone, or
 * they are not the ones the cells need).
 */
export async function reattachLocal(
  runId: string,
  runDir: string,
  resumeFolder: string,
  plan: Plan,
  options: { log: (message: string) => void; recordsDir?: string; target?: LocalTargetOptions },
): Promise<LocalTarget | null> {
  const recordsDir = options.recordsDir ?? localRunsDir();
  const report = await cleanupLocal({ dryRun: true, recordsDir });
  const left = report.runs.filter((r) => runOrItsResume(runId, runDir, resumeFolder)(r) && r.items.length);
  if (!left.length) return null;
  const cannot = (why: string) =>
    new Error(
      `run ${runId}'s hosts are still up (${left.map((l) => `run ${l.runId}, runner pid ${l.pid}, died; ${l.items.length} items`).join("; ")}) but cannot be re-attached to: ${why}. ` +
        "`latlab cleanup` removes them — what a detached tool (tcp-echo) was collecting on them goes with them — then resume brings up new hosts.",
    );
  if (left.length > 1) throw cannot("more than one run's hosts are left (the run's and a resume's)");
  const record = readRunRecords(recordsDir).records.find((r) => r.short === left[0]!.short);
  if (!record) throw cannot(`its run record in ${recordsDir} went away meanwhile`);
  if (!record.environmentFile) throw cannot("its runner died while bringing them up, before every host was up");
  let hosts;
  try {
    hosts = readSavedEnvironment(record.environmentFile).hosts;
  } catch (error) {
    throw cannot((error as Error).message);
  }
  const missing = plan.deployments.flatMap((d) => d.hosts.filter((h) => !hosts.some((s) => s.deployment === d.id && s.role === h.role)).map((h) => `${d.id}/${h.role}`));
  if (missing.length) throw cannot(`the cells to resume need ${missing.join(", ")}, which are not among them`);
  const target = new LocalTarget({ ...options.target, recordsDir });
  try {
    await target.adopt(record, options.log);
  } catch (error) {
    throw cannot((error as Error).message.replace(/^local target: /, ""));
  }
  return target;
}
