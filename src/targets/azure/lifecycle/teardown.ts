import { removeStaleLocks, repairCheckpoint } from "./fileBackendRecovery.ts";
import { describeArmError, isGroupNotFound, ownedByRun, type RunGroups } from "./runGroups.ts";
import { summarizeCommandError, type StackDriver } from "./stack.ts";

/**
 * The one teardown of an Azure run, used by AzureTarget at the end of a run and by `latlab
 * destroy` later. It always goes as far as it can and ends by saying exactly what ARM still holds:
 *
 *   1. a stale lock goes: a file backend's lock of a dead Pulumi process is removed (a live one
 *      stops everything: the run is still going), another backend's update is cancelled;
 *   2. `pulumi refresh`: what is already gone leaves the state;
 *   3. `pulumi destroy`, tried again after Azure's passing refusals (409s);
 *   4. if destroy failed or the resource group is still in ARM: the group is deleted through ARM
 *      — only when its tags say owner=latlab and runId=<this run> — and waited for;
 *   5. the stack is removed once its resources are gone;
 *   6. what ARM still holds of the group is listed (`left`).
 */

export interface TeardownSubject {
  runId: string;
  stackName: string;
  backendUrl: string;
  /** The run's resource group (every Azure name of a run starts with its prefix). */
  resourceGroup: string;
  expiresAt: string;
  /** The command that finishes the teardown later (`npx latlab destroy …`). */
  finishCommand: string;
  /** A rehearsal: the emulator removes what is left when it stops. */
  rehearsal?: boolean;
}

export interface TeardownDeps {
  /** Opens the stack; called once stale locks are gone. */
  open: () => Promise<StackDriver>;
  /** The run's resource groups in ARM (Azure's, or a rehearsal's emulator). */
  groups: () => Promise<RunGroups>;
  log: (message: string) => void;
  /** Applied to every error text and output line (the run's secrets). */
  redact?: (text: string) => string;
  /** Destroys tried before giving up (default 3), and the pause before the n-th retry: n × this (default 5 s). */
  attempts?: number;
  retryDelayMs?: number;
  /**
   * Aborted when the teardown is handed over (AzureTarget.handOver: the process is about to be
   * killed): Pulumi's refresh or destroy in flight gets SIGINT — it starts no new operation —,
   * nothing is retried or deleted from here any more, and the teardown returns at once.
   */
  handedOver?: AbortSignal;
}

export interface TeardownOutcome {
  /**
   * destroyed: nothing left, stack removed; stack-left: nothing left in Azure, the stack record
   * remains; leaked: Azure still holds (or may hold) resources; live: a live Pulumi process holds
   * the stack's lock, nothing was touched.
   */
  status: "destroyed" | "stack-left" | "leaked" | "live";
  errors: string[];
  removed: string[];
  /** Ids ARM still holds of the run's group (none = []), or null when ARM could not be asked. */
  left: string[] | null;
  /** Why `left` is null. */
  leftUnknown?: string;
}

/** The run is still going (a live Pulumi lock, a live emulator): teardown touches nothing. */
export class LiveRunError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LiveRunError";
  }
}

/** The sentence every leaked run carries. */
export function leakedMessage(state: { runId: string; resourceGroup: string | null; expiresAt: string }, command: string): string {
  return (
    `the Azure resources of run ${state.runId} are leaked (they keep costing money)` +
    `${state.resourceGroup ? `: resource group ${state.resourceGroup}` : ""}, tagged owner=latlab, expiresAt=${state.expiresAt}. ` +
    `Finish the teardown with: ${command}`
  );
}

/** A rehearsal's failed destroy: what Azure would have left, and that the emulator removed it. */
export function rehearsedLeakMessage(runId: string): string {
  return `rehearsal ${runId}: pulumi destroy did not remove everything — on Azure these resources would now be leaked (and billed); the emulator removed them when it stopped (listed above)`;
}

/** "left: none", or one line per id still in ARM. */
export function formatLeft(outcome: Pick<TeardownOutcome, "left" | "leftUnknown">): string {
  if (outcome.left === null) return `left: unknown (${outcome.leftUnknown ?? "ARM could not be asked"})`;
  return outcome.left.length === 0 ? "left: none" : `left:\n${outcome.left.map((id) => `  ${id}`).join("\n")}`;
}

/** The line results.json's teardown.removed gets: what ARM held of the group at the end ("left: none" is the proof of a clean teardown). */
export function leftRecord(group: string, outcome: Pick<TeardownOutcome, "left" | "leftUnknown">): string {
  return `resource group ${group} as ARM has it after the teardown — ${formatLeft(outcome).replace(/\n\s*/g, " ")}`;
}

const DESTROY_ATTEMPTS = 3;
const DESTROY_BACKOFF_MS = 5000;

export async function tearDownStack(subject: TeardownSubject, deps: TeardownDeps): Promise<TeardownOutcome> {
  const { stackName, backendUrl, resourceGroup: group, runId } = subject;
  const redact = deps.redact ?? ((t: string) => t);
  const log = (m: string) => deps.log(redact(m));
  const why = (e: unknown) => redact(summarizeCommandError(e));
  const errors: string[] = [];
  const removed: string[] = [];
  const lines = lineBuffer((l) => log(`azure: ${l}`));
  const output = { onOutput: lines.push };

  // 1. Locks. A Pulumi killed mid-operation leaves its lock, and every later command fails on it.
  const fileBackend = backendUrl.startsWith("file://");
  if (fileBackend) {
    let locks: Awaited<ReturnType<typeof removeStaleLocks>>;
    try {
      locks = await removeStaleLocks(backendUrl, stackName);
    } catch (e) {
      // A backend latlab cannot read (an odd file URL, a folder gone): say so, and go on to destroy,
      // which finds any lock itself; a teardown never stops before it tried.
      errors.push(`could not look for stale Pulumi locks in ${backendUrl}: ${(e as Error).message}`);
      locks = { removed: [], kept: [] };
    }
    for (const l of locks.removed) {
      log(`azure: removed a stale Pulumi lock of stack ${stackName} (pid ${l.pid} on ${l.hostname} is gone): ${l.path}`);
      removed.push(`stale Pulumi lock ${l.path}`);
    }
    // A live owner: the run (or another destroy) is still going. Touching anything now would tear
    // its resources out from under it: nothing is repaired, opened or deleted.
    if (locks.kept.length > 0) {
      const message =
        `stack ${stackName} is locked by a Pulumi process that may still be running (${locks.kept.map((l) => `pid ${l.pid ?? "?"} on ${l.hostname ?? "?"}: ${l.path}`).join(", ")}): ` +
        "is the run still going? Wait for it to end (or stop it), then run this again. A lock of another machine cannot be checked from here: " +
        "if that machine or process is gone, delete the lock file named above and run this again";
      return { status: "live", errors: [message], removed, left: null, leftUnknown: "not asked: the run is still going" };
    }
    const repairs = await repairCheckpoint(backendUrl, stackName).catch((e: Error) => {
      errors.push(`could not check stack ${stackName}'s checkpoint in ${backendUrl}: ${e.message}`);
      return [] as string[];
    });
    for (const repair of repairs) {
      log(`azure: ${repair}`);
      removed.push(repair);
    }
  }

  let driver: StackDriver | undefined;
  try {
    driver = await deps.open();
  } catch (e) {
    if (e instanceof LiveRunError) return { status: "live", errors: [e.message], removed, left: null, leftUnknown: "not asked: the run is still going" };
    errors.push(`opening stack ${stackName} failed: ${why(e)}`);
  }
  if (driver && !fileBackend) {
    try {
      await driver.cancel();
      log(`azure: cancelled an update of stack ${stackName} that was still in progress (pulumi cancel)`);
      removed.push(`update in progress of stack ${stackName} (pulumi cancel)`);
    } catch {
      // No update in progress: the usual case.
    }
  }

  const handedOver = deps.handedOver;
  const stopping = handedOver ? { ...output, signal: handedOver } : output;
  // 2. Refresh: not fatal — destroy works from the recorded state too.
  if (driver && !handedOver?.aborted) {
    try {
      await driver.refresh(stopping);
    } catch (e) {
      lines.flush();
      log(`azure: pulumi refresh of stack ${stackName} failed (${why(e).split("\n")[0]}); destroying from the recorded state`);
    } finally {
      lines.flush();
    }
  }

  // 3. Destroy, again after Azure's passing refusals: the stack knows what is left.
  let destroyed = false;
  let lastError = "";
  const destroy = async (attempts: number) => {
    for (let attempt = 1; attempt <= attempts && !destroyed && driver && !handedOver?.aborted; attempt++) {
      try {
        // No signal: a second Ctrl-C must not stop the teardown from latlab's side (a hand-over does).
        await driver.destroy(stopping);
        destroyed = true;
      } catch (e) {
        lines.flush();
        lastError = why(e);
        if (attempt < attempts && !handedOver?.aborted) {
          const pause = attempt * (deps.retryDelayMs ?? DESTROY_BACKOFF_MS);
          log(`azure: destroy attempt ${attempt} of ${attempts} failed (${lastError.split("\n")[0]}); trying again in ${Math.round(pause / 1000)} s`);
          await new Promise((r) => setTimeout(r, pause));
        }
      } finally {
        lines.flush();
      }
    }
  };
  const attempts = deps.attempts ?? DESTROY_ATTEMPTS;
  await destroy(attempts);
  if (handedOver?.aborted) {
    // The hand-over's own ARM deletion is what goes on now; this process is about to end, and
    // `latlab destroy` confirms what is left and removes the stack.
    if (!destroyed) errors.push(`the teardown of stack ${stackName} was handed over before it finished (the run's resource group is deleted through ARM); finish with: ${subject.finishCommand}`);
    return { status: destroyed ? "stack-left" : "leaked", errors, removed, left: null, leftUnknown: "not asked: the teardown was handed over" };
  }
  if (driver && !destroyed) errors.push(`destroy of stack ${stackName} failed${attempts > 1 ? ` ${attempts} times; the last time` : ""}: ${lastError}`);
  if (destroyed) removed.push(`Azure resources of stack ${stackName} (resource group ${group})`);

  // 4. ARM: whatever Pulumi could not delete, or never knew of, goes with the run's group.
  let groups: RunGroups | undefined;
  let leftUnknown: string | undefined;
  try {
    groups = await deps.groups();
  } catch (e) {
    leftUnknown = `ARM could not be asked: ${(e as Error).message}`;
  }
  const holding = async (): Promise<string[] | null> => {
    if (!groups) return null;
    try {
      return await groups.resources(group);
    } catch (e) {
      leftUnknown = `listing resource group ${group} failed: ${describeArmError(e)}`;
      return null;
    }
  };
  if (groups) {
    const before = await holding();
    if (!destroyed || (before !== null && before.length > 0)) {
      let groupGone = false;
      try {
        const tags = await groups.tags(group);
        if (tags === undefined) groupGone = true;
        else if (!ownedByRun(tags, runId)) errors.push(`resource group ${group} is not tagged owner=latlab, runId=${runId}: not deleting it`);
        else {
          log(`azure: deleting the run's resource group ${group} through ARM${destroyed ? " (pulumi destroy left it behind)" : " (pulumi destroy failed)"} and waiting for it…`);
          try {
            await groups.delete(group);
            removed.push(`resource group ${group} (deleted through ARM)`);
            groupGone = true;
          } catch (e) {
            if (isGroupNotFound(e)) groupGone = true;
            else errors.push(`deleting resource group ${group} through ARM failed: ${describeArmError(e)}`);
          }
        }
      } catch (e) {
        errors.push(`reading resource group ${group} from ARM failed: ${describeArmError(e)}`);
      }
      // The resources are gone with their group: a new destroy clears the state (deletes of what is gone succeed).
      if (groupGone && driver && !destroyed) {
        await destroy(1);
        if (destroyed) {
          // The earlier failure is what the group's deletion made good.
          const earlier = errors.findIndex((e) => e.startsWith(`destroy of stack ${stackName} failed`));
          if (earlier >= 0) errors.splice(earlier, 1);
          removed.push(`Azure resources of stack ${stackName} (resource group ${group})`);
        }
      }
    }
  }

  // 5. The stack, once nothing of it is left.
  let stackRemoved = false;
  if (destroyed && driver) {
    try {
      await driver.remove();
      stackRemoved = true;
      removed.push(`Pulumi stack ${stackName}`);
    } catch (e) {
      errors.push(`resources destroyed, but removing stack ${stackName} failed: ${why(e)}; finish with: ${subject.finishCommand}`);
    }
  }

  // 6. What is left, as ARM has it.
  const left = await holding();
  if (left === null) log(`azure: resource group ${group}: left: unknown (${leftUnknown})`);
  else log(`azure: resource group ${group}: ${formatLeft({ left })}`);

  let status: TeardownOutcome["status"];
  if (left !== null && left.length > 0) status = "leaked";
  else if (destroyed) status = stackRemoved ? "destroyed" : "stack-left";
  // Destroy never went through: only ARM's word that nothing is there makes that harmless.
  else status = left !== null ? "stack-left" : "leaked";

  if (status === "leaked") {
    const message = subject.rehearsal ? rehearsedLeakMessage(runId) : leakedMessage({ runId, resourceGroup: group, expiresAt: subject.expiresAt }, subject.finishCommand);
    errors.push(message);
    log(`azure: teardown FAILED — ${subject.rehearsal ? message : `run ${runId} is leaked; finish with: ${subject.finishCommand}`}`);
  } else if (status === "stack-left" && !destroyed) {
    errors.push(`nothing of run ${runId} is left in Azure, but Pulumi's stack ${stackName} still lists resources; finish with: ${subject.finishCommand}`);
  }
  return { status, errors, removed, left, ...(left === null && leftUnknown ? { leftUnknown } : {}) };
}

/** What startGroupDeletion did: a line for what goes on without latlab, or why nothing does. */
export type GroupDeletionStart = { started: string } | { gone: string } | { error: string };

const ARM_RETRY_PAUSE_MS = 100;

/**
 * Asks ARM to delete the run's resource group and returns as soon as ARM has accepted it,
 * without waiting for the group to go: ARM's ResourceGroups_Delete is a long-running operation
 * that answers 202 Accepted (with a Location to poll) and deletes the group and everything in it
 * on its own (Azure/azure-rest-api-specs specification/resources/resource-manager/
 * Microsoft.Resources/stable/2024-03-01/resources.json @ 1eb311c3f6f22913eab7d5ad755aa474ae15d67f,
 * ResourceGroups_Delete: responses 200, 202 "Accepted" with a location header,
 * x-ms-long-running-operation). Only a group tagged owner=latlab, runId=<this run> is deleted, as
 * in the teardown. A 409 (another operation in progress in the group, e.g. a delete Pulumi still
 * has in flight) is asked again until `until` (epoch ms); each ARM call is given up at `until` too.
 */
export async function startGroupDeletion(groups: RunGroups, group: string, runId: string, until: number, now: () => number = Date.now): Promise<GroupDeletionStart> {
  if (!groups.startDelete) return { error: `resource group ${group}: this ARM client cannot start a deletion without waiting for it` };
  const startDelete = groups.startDelete.bind(groups);
  const late = Symbol("late");
  const beforeDeadline = <T>(p: Promise<T>): Promise<T | typeof late> => {
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([p, new Promise<typeof late>((r) => (timer = setTimeout(() => r(late), Math.max(0, until - now()))))]).finally(() => clearTimeout(timer));
  };
  const tooLate = (what: string) => ({ error: `resource group ${group}: ${what} did not answer in time; its deletion was not started` });
  let tags: Record<string, string> | undefined | typeof late;
  try {
    tags = await beforeDeadline(groups.tags(group));
  } catch (e) {
    return { error: `reading resource group ${group} from ARM failed: ${describeArmError(e)}; its deletion was not started` };
  }
  if (tags === late) return tooLate("ARM (reading the group's tags)");
  if (tags === undefined) return { gone: `resource group ${group}: not in ARM (nothing of the run was created there, or it is gone already)` };
  if (!ownedByRun(tags, runId)) return { error: `resource group ${group} is not tagged owner=latlab, runId=${runId}: not deleting it` };
  let lastConflict = "";
  for (;;) {
    try {
      const accepted = await beforeDeadline(startDelete(group));
      if (accepted === late) return tooLate("ARM (the delete request)");
      return { started: `resource group ${group}: deletion accepted by ARM, which goes on deleting it and everything in it` };
    } catch (e) {
      if (isGroupNotFound(e)) return { gone: `resource group ${group}: gone already` };
      const status = (e as { statusCode?: number; status?: number }).statusCode ?? (e as { status?: number }).status;
      if (status !== 409) return { error: `deleting resource group ${group} through ARM failed: ${describeArmError(e)}` };
      lastConflict = describeArmError(e);
    }
    if (now() + ARM_RETRY_PAUSE_MS >= until) return { error: `resource group ${group}: ARM refused its deletion until the time ran out (${lastConflict}); its deletion was not started` };
    await new Promise((r) => setTimeout(r, ARM_RETRY_PAUSE_MS));
  }
}

/** Splits streamed output into lines. */
export function lineBuffer(onLine: (line: string) => void): { push: (chunk: string) => void; flush: () => void } {
  let pending = "";
  return {
    push: (chunk: string) => {
      pending += chunk;
      const parts = pending.split(/\r?\n|\r/);
      pending = parts.pop() ?? "";
      for (const p of parts) if (p.trim()) onLine(p.trimEnd());
    },
    flush: () => {
      if (pending.trim()) onLine(pending.trimEnd());
      pending = "";
    },
  };
}
