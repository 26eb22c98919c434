import { existsSync, readFileSync } from "node:fs";
import { chmod, mkdir, rename, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { z } from "zod";

/**
 * Where an Azure run keeps what must not be shared: the stack's passphrase, its Pulumi state
 * (the default file backend), the Pulumi workspace, the client's and hosts' private keys, and
 * state.json (what `latlab destroy` needs). Not the results folder: that one is shared by
 * people and uploaded by CI. One folder per run, 0700, files 0600:
 *
 *   ${LATLAB_STATE_DIR:-${XDG_STATE_HOME:-~/.local/state}/latlab/runs}/<runId>/
 *
 * The results folder gets a pointer to it (POINTER_FILE, no secret), and results.json records it
 * in environment.facts.stateDir, so `latlab destroy <results folder>` finds it as well as
 * `latlab destroy <runId>`.
 */

/** Overrides the root of every run's state folder (CI: a folder that is not uploaded). */
export const STATE_DIR_ENV = "LATLAB_STATE_DIR";

/** The folder every run's state folder is in. */
export function stateRoot(env: NodeJS.ProcessEnv = process.env): string {
  if (env[STATE_DIR_ENV]) return resolve(env[STATE_DIR_ENV]);
  // XDG: a relative XDG_STATE_HOME is invalid and must be ignored.
  const xdg = env.XDG_STATE_HOME && env.XDG_STATE_HOME.startsWith("/") ? env.XDG_STATE_HOME : join(env.HOME || homedir(), ".local", "state");
  return join(xdg, "latlab", "runs");
}

/** A run id as a folder name: nothing that climbs out of the root. */
export function runStateDir(runId: string, env: NodeJS.ProcessEnv = process.env): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(runId) || runId.includes("..")) throw new Error(`run id "${runId}" cannot name a state folder`);
  return join(stateRoot(env), runId);
}

/** Creates the run's state folder 0700 (and its root, whose other runs are nobody else's business either). */
export async function makeStateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // mkdir's mode is masked by the umask and leaves existing folders alone.
  await chmod(dir, 0o700);
}

/** The pointer in the results folder: where the run's state is. Holds no secret. */
export const POINTER_FILE = "azure-state.json";
export const RunPointerSchema = z.object({
  runId: z.string(),
  /** The run's state folder (absolute). */
  stateDir: z.string(),
  note: z.string().optional(),
});
export type RunPointer = z.infer<typeof RunPointerSchema>;

export async function writePointer(runDir: string, pointer: Omit<RunPointer, "note">): Promise<void> {
  await mkdir(runDir, { recursive: true });
  const file = join(runDir, POINTER_FILE);
  const body: RunPointer = { ...pointer, note: "where this run's Azure state (keys, passphrase, Pulumi state) is kept, outside the results folder; `latlab destroy` reads it" };
  await writeFile(`${file}.tmp`, `${JSON.stringify(RunPointerSchema.parse(body), null, 2)}\n`);
  await rename(`${file}.tmp`, file);
}

/** Folders of runs before state moved out of the results folder: `<runDir>/.azure/` held it all. */
export const legacyStateDir = (runDir: string) => join(runDir, ".azure");

const STATE_FILE = "state.json";
const hasState = (dir: string | undefined): dir is string => dir !== undefined && existsSync(join(dir, STATE_FILE));

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return undefined;
  }
}

/** The state folder a results folder names: its pointer, else results.json's facts.stateDir, else the old `.azure/`. */
function stateDirOfResults(runDir: string): string | undefined {
  const pointer = RunPointerSchema.safeParse(readJson(join(runDir, POINTER_FILE)));
  if (pointer.success && hasState(pointer.data.stateDir)) return pointer.data.stateDir;
  const facts = (readJson(join(runDir, "results.json")) as { environment?: { facts?: Record<string, unknown> } } | undefined)?.environment?.facts;
  if (typeof facts?.stateDir === "string" && hasState(facts.stateDir)) return facts.stateDir;
  if (hasState(legacyStateDir(runDir))) return legacyStateDir(runDir);
  return undefined;
}

export interface LocatedRun {
  stateDir: string;
  /** The results folder, when known (to record a later teardown in its results.json). */
  runDir?: string;
}

/**
 * Finds a run's state from what a person types after `latlab destroy`: a run id (its state folder,
 * or results/<runId>) or a results folder's path. Undefined when nothing names a state folder.
 */
export function locateRun(ref: string, resultsRoot: string, env: NodeJS.ProcessEnv = process.env): LocatedRun | undefined {
  for (const dir of [resolve(resultsRoot, ref), resolve(ref)]) {
    const stateDir = existsSync(dir) ? stateDirOfResults(dir) : undefined;
    if (stateDir) return { stateDir, runDir: dir };
  }
  let byId: string | undefined;
  try {
    byId = runStateDir(ref, env);
  } catch {
    return undefined;
  }
  if (!hasState(byId)) return undefined;
  const recorded = (readJson(join(byId, STATE_FILE)) as { resultsDir?: unknown } | undefined)?.resultsDir;
  return { stateDir: byId, ...(typeof recorded === "string" && existsSync(recorded) ? { runDir: recorded } : {}) };
}
