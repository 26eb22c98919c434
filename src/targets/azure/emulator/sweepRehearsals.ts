/**
 * `latlab sweep --rehearse`: the sweep of lifecycle/sweeper.ts over the rehearsal emulators on this
 * machine instead of an Azure subscription — the emulator folders (`latlab-azemu-*` under the
 * system's temp dir, rehearsal.ts) whose runner died without tearing down.
 *
 * A folder whose ARM socket answers belongs to a run still going: listed, never touched. A dry
 * run reads the ARM state an emulator saved (state.json) and starts nothing. With --delete, an
 * emulator holding something to delete is resumed (emulator.ts startEmulator on its folder), the
 * same sweep runs through its ARM socket, and it is stopped: holding nothing any more, its
 * namespaces, processes and folder go; still holding groups the sweep kept, its state stays and
 * its fabric is stopped (a later sweep or `latlab destroy` resumes it).
 *
 * "Answers" is the same test `latlab destroy` makes before resuming a rehearsal (rehearsal.ts
 * resumeRehearsal), with the same blind spot: an emulator in the seconds between its folder
 * being made and its socket listening is not seen as live. One without a state.json yet is left
 * alone for that reason; one being resumed by a `latlab destroy` at that very moment is not told
 * apart — run the sweep when no destroy of a rehearsal is running.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { sweep, type GithubRunSelector, type ResourceGroupInfo, type ResourceGroupsClient, type SweepReport } from "../lifecycle/sweeper.ts";
import { RESOURCE_GROUP_TYPE } from "./arm/resourceId.ts";
import { API_VERSIONS } from "./arm/typeRules.ts";
import { startEmulator, type RunningEmulator } from "./emulator.ts";
import { ArmClient } from "./provider/armClient.ts";
import { EMULATOR_HOME_PREFIX, groupResourceIds, socketAnswers } from "./rehearsal.ts";

/** The part of an emulator's state.json (arm/cloud.ts CloudSnapshot) a dry run reads. */
const SavedStateSchema = z.object({
  subscription: z.string(),
  resources: z.array(
    z.object({
      type: z.string(),
      name: z.string(),
      state: z.string(),
      body: z.object({ location: z.string().optional(), tags: z.record(z.string(), z.string()).optional() }).passthrough(),
    }).passthrough(),
  ),
}).passthrough();
type SavedState = z.infer<typeof SavedStateSchema>;

/** The one `$filter` form the sweeper sends (sweeper.ts LATLAB_FILTER); any other is refused, not ignored. */
export function parseTagFilter(filter: string): { name: string; value: string } {
  const m = /^tagName eq '([^']*)' and tagValue eq '([^']*)'$/.exec(filter.trim());
  if (!m) throw new Error(`the emulator's resource group listing understands only "tagName eq '<name>' and tagValue eq '<value>'", not: ${filter}`);
  return { name: m[1]!, value: m[2]! };
}

/** Tag names are case-insensitive, tag values case-sensitive (as sweeper.ts, after MicrosoftDocs/azure-docs tag-resources.md). */
function hasTag(tags: Record<string, string> | undefined, wanted: { name: string; value: string }): boolean {
  return Object.entries(tags ?? {}).some(([k, v]) => k.toLowerCase() === wanted.name.toLowerCase() && v === wanted.value);
}

/**
 * The sweeper's client over a running emulator's ARM socket: each group as GET answers it, deleted
 * by DELETE (waiting for its operation, as Azure's poller does). The emulator's ARM has no
 * ResourceGroups_List route: the group names come from its state, every answer from the socket.
 */
export function emulatorGroupsClient(emulator: Pick<RunningEmulator, "socketPath" | "subscription" | "cloud">): ResourceGroupsClient {
  const arm = new ArmClient(emulator.socketPath);
  const groupId = (name: string) => `/subscriptions/${emulator.subscription}/resourceGroups/${name}`;
  return {
    async *list(filter) {
      const wanted = parseTagFilter(filter);
      for (const stored of emulator.cloud.all(RESOURCE_GROUP_TYPE)) {
        const group = await arm.get(groupId(stored.name), API_VERSIONS.resources);
        if (!group) continue;
        const tags = group.tags as Record<string, string> | undefined;
        if (!hasTag(tags, wanted)) continue;
        const state = (group.properties as { provisioningState?: unknown } | undefined)?.provisioningState;
        yield {
          name: stored.name,
          ...(typeof group.location === "string" ? { location: group.location } : {}),
          ...(tags ? { tags } : {}),
          ...(typeof state === "string" ? { provisioningState: state } : {}),
        } satisfies ResourceGroupInfo;
      }
    },
    beginDeleteAndWait: (name) => arm.delete(groupId(name), API_VERSIONS.resources),
    resources: async (name) => groupResourceIds(emulator.cloud, name),
  };
}

/** The sweeper's client over an emulator's saved state, for a dry run: lists, never deletes. */
export function savedStateGroupsClient(saved: SavedState): ResourceGroupsClient {
  return {
    async *list(filter) {
      const wanted = parseTagFilter(filter);
      for (const r of saved.resources) {
        if (r.type.toLowerCase() !== RESOURCE_GROUP_TYPE.toLowerCase() || !hasTag(r.body.tags, wanted)) continue;
        yield { name: r.name, ...(r.body.location ? { location: r.body.location } : {}), ...(r.body.tags ? { tags: r.body.tags } : {}), provisioningState: r.state };
      }
    },
    beginDeleteAndWait: async () => {
      throw new Error("internal: a sweep of an emulator's saved state deletes nothing");
    },
  };
}

/** What the sweep did with one emulator folder. */
export interface EmulatorSweep {
  home: string;
  /**
   * live: its ARM answers (a run still going): not touched. no-state: no state.json (an emulator
   * starting, or one that never saved anything): not touched. untouched: nothing in it to delete.
   * swept: the sweep ran (`report`). failed: see `errors`.
   */
  outcome: "live" | "no-state" | "untouched" | "swept" | "failed";
  report?: SweepReport;
  /** After a sweep with --delete: its folder and namespaces removed, or left resumable (it still holds groups). */
  after?: "removed" | "resumable";
  /** What ARM still held when it was left resumable (resource ids). */
  held?: string[];
  errors: string[];
}

export interface RehearsalSweepOptions {
  delete: boolean;
  githubRun?: GithubRunSelector;
  now: Date;
  log: (message: string) => void;
  /** Where the emulator folders are (default: the system's temp dir). */
  root?: string;
  /** Starts an emulator on a folder (tests). */
  start?: (home: string, log: (message: string) => void) => Promise<RunningEmulator>;
}

/** The emulator folders under `root`, oldest name first. */
export function emulatorHomes(root: string = tmpdir()): string[] {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  return names
    .filter((n) => n.startsWith(EMULATOR_HOME_PREFIX))
    .map((n) => join(root, n))
    .filter((p) => {
      try {
        return statSync(p).isDirectory();
      } catch {
        return false;
      }
    })
    .sort();
}

export async function sweepRehearsals(options: RehearsalSweepOptions): Promise<EmulatorSweep[]> {
  const out: EmulatorSweep[] = [];
  for (const home of emulatorHomes(options.root)) out.push(await sweepOne(home, options));
  return out;
}

async function sweepOne(home: string, options: RehearsalSweepOptions): Promise<EmulatorSweep> {
  const log = (m: string) => options.log(`${home}: ${m}`);
  if (await socketAnswers(join(home, "arm.sock"))) {
    log("its emulator answers (a run is still going): not touched");
    return { home, outcome: "live", errors: [] };
  }
  let text: string;
  try {
    text = readFileSync(join(home, "state.json"), "utf8");
  } catch {
    log("no state.json (an emulator starting, or one that never saved anything): not touched");
    return { home, outcome: "no-state", errors: [] };
  }
  let saved: SavedState;
  try {
    saved = SavedStateSchema.parse(JSON.parse(text));
  } catch (e) {
    const error = `${join(home, "state.json")}: not an emulator state: ${(e as Error).message.split("\n")[0]}`;
    log(error);
    return { home, outcome: "failed", errors: [error] };
  }
  const preview = await sweep({ client: savedStateGroupsClient(saved), now: options.now, delete: false, ...(options.githubRun ? { githubRun: options.githubRun } : {}), log: options.delete ? () => undefined : log });
  if (!options.delete) return { home, outcome: "swept", report: preview, errors: [] };

  // A group "Deleting" in a dead emulator never finishes: resumed, its operation ends Failed, and the sweep sees it again.
  const work = preview.groups.some((g) => g.selected || g.state === "deleting");
  if (!work && saved.resources.length > 0) {
    log(`nothing to delete (${preview.groups.length} latlab group(s) kept): not touched`);
    return { home, outcome: "untouched", report: { ...preview, dryRun: false }, errors: [] };
  }

  let emulator: RunningEmulator;
  try {
    emulator = await (options.start ?? ((h, l) => startEmulator({ home: h, log: l })))(home, log);
  } catch (e) {
    const error = `resuming its emulator: ${(e as Error).message}`;
    log(error);
    return { home, outcome: "failed", errors: [error] };
  }
  const errors: string[] = [];
  let report: SweepReport | undefined;
  try {
    report = await sweep({ client: emulatorGroupsClient(emulator), now: options.now, delete: true, ...(options.githubRun ? { githubRun: options.githubRun } : {}), log });
  } catch (e) {
    errors.push(`sweeping its ARM: ${(e as Error).message}`);
  }
  const held = emulator.cloud.all().map((r) => r.id);
  if (held.length === 0 && errors.length === 0) {
    const stopped = await emulator.stop();
    errors.push(...stopped.errors);
    try {
      await rm(home, { recursive: true, force: true });
    } catch (e) {
      errors.push(`removing ${home}: ${(e as Error).message}`);
    }
    log(errors.length ? `stopped; ${errors.join("; ")}` : "holds nothing any more: its namespaces, processes and folder are removed");
    return { home, outcome: errors.length ? "failed" : "swept", ...(report ? { report } : {}), after: "removed", errors };
  }
  // What it still holds stays resumable: its ARM state kept, its fabric (namespaces, VMs) stopped.
  const stopped = await emulator.stop({ keepState: true });
  errors.push(...stopped.errors);
  log(`still holds ${held.length} resource(s): left resumable (state.json kept, its namespaces and VMs stopped)`);
  return { home, outcome: errors.length ? "failed" : "swept", ...(report ? { report } : {}), after: "resumable", held, errors };
}
