/**
 * Which earlier runs a run may be judged against: the ones that measured the same thing the same
 * way, under the same conditions. Pure. The gate (issue 24 item 1) takes these as its independent
 * units; anything else would let a manual 30-second run, an edited experiment or another latlab
 * become next week's baseline.
 *
 * Comparable with run R: a run of R's experiment started before R, that finished `complete` (a
 * partial run's headline is over fewer cells), with R's plan hash (target, hosts and sizes,
 * replicas and repetitions, each measure's tool, parameters as run — so the duration —, pairs and
 * path: src/plan/planHash.ts), and by default R's latlab version, event (a scheduled run against
 * scheduled runs, not against a manual dispatch) and GitHub ref (branch or tag). Each run left out
 * is listed with why, so "learning (n of k)" can say what held it back.
 */
import type { RunRow } from "./historySchema.ts";

/** GitHub Actions' ref the run was made on (provenance.ts records GITHUB_REF as this fact). */
export const GITHUB_REF_FACT = "github.ref";

export interface ComparableOptions {
  /** Require the same latlab version (default true): a change of latlab's measuring code is no change of the network. */
  sameLatlabVersion?: boolean;
  /** Require the same event (default true); a run whose event is unknown (null) then matches none. */
  sameEvent?: boolean;
  /** Require the same GitHub ref (default true); runs outside GitHub Actions have none, and match each other. */
  sameRef?: boolean;
  /** Statuses an earlier run may have (default: complete only). */
  statuses?: readonly RunRow["status"][];
}

export interface ComparableRuns {
  /** The comparable earlier runs, oldest first. */
  runs: RunRow[];
  /** The earlier runs of the experiment left out, oldest first, each with every reason. */
  excluded: { runId: string; why: string[] }[];
}

type RunFacts = Pick<RunRow, "runId" | "experiment" | "startedAt" | "status" | "latlabVersion" | "planHash" | "event" | "facts">;

const short = (hash: string | null) => (hash ? hash.slice(0, 8) : "none");
const before = (a: RunFacts, b: RunFacts) => a.startedAt < b.startedAt || (a.startedAt === b.startedAt && a.runId < b.runId);

/** Why `earlier` is not comparable with `run`; empty when it is. */
export function whyNotComparable(run: RunFacts, earlier: RunFacts, options: ComparableOptions = {}): string[] {
  const why: string[] = [];
  const statuses = options.statuses ?? ["complete"];
  if (!statuses.includes(earlier.status)) why.push(`status ${earlier.status}`);
  if (earlier.planHash === null) why.push("recorded before plan hashes: its plan is unknown");
  else if (earlier.planHash !== run.planHash) why.push(`another plan (${short(earlier.planHash)}, this run ${short(run.planHash)})`);
  if (options.sameLatlabVersion !== false && earlier.latlabVersion !== run.latlabVersion) why.push(`latlab ${earlier.latlabVersion} (this run ${run.latlabVersion})`);
  if (options.sameEvent !== false && (earlier.event === null || earlier.event !== run.event)) why.push(`started by ${earlier.event ?? "an unknown event"} (this run by ${run.event ?? "an unknown event"})`);
  const refOf = (r: RunFacts) => r.facts[GITHUB_REF_FACT] ?? null;
  if (options.sameRef !== false && refOf(earlier) !== refOf(run)) why.push(`ref ${refOf(earlier) ?? "none"} (this run ${refOf(run) ?? "none"})`);
  return why;
}

/**
 * The runs of `history` comparable with `run` (see the module comment), and those left out with
 * why. `run` need not be in the history yet; runs started after it are never considered. A run
 * without a plan hash has no comparable runs: every earlier run is listed as excluded.
 */
export function comparableRuns<R extends RunFacts>(history: { runs: readonly R[] }, run: RunFacts, options: ComparableOptions = {}): { runs: R[]; excluded: ComparableRuns["excluded"] } {
  // Strictly earlier: a run started in the same instant is no run's predecessor (the gate refuses one that is not before).
  const earlier = history.runs.filter((r) => r.experiment === run.experiment && r.runId !== run.runId && Date.parse(r.startedAt) < Date.parse(run.startedAt)).sort((a, b) => (before(a, b) ? -1 : 1));
  const runs: R[] = [];
  const excluded: ComparableRuns["excluded"] = [];
  for (const r of earlier) {
    const why = run.planHash === null ? ["this run was recorded before plan hashes: no run is known to be comparable with it"] : whyNotComparable(run, r, options);
    if (why.length) excluded.push({ runId: r.runId, why });
    else runs.push(r);
  }
  return { runs, excluded };
}

