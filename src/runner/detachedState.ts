/**
 * What a runner knows of a detached client it started (tcp-echo runs for hours on its host, apart
 * from the SSH session that started it), kept beside the cell's raw output as soon as the client
 * runs: if the runner dies, `latlab resume` re-attaches to the client on the same host and
 * collects the rest from where the local copy stops.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";

export const DETACHED_STATE_FILE = "detached.json";

export const DetachedStateSchema = z.object({
  cell: z.string(),
  /** The client's host, `<deployment>/<role>`. */
  host: z.string(),
  /**
   * That host's own key, as the runner pinned it: a resume re-attaches only to the very host that
   * runs the client (not to another bring-up's host of the same name).
   */
  hostKey: z.string(),
  pidFile: z.string(),
  outputFile: z.string(),
  /** The local copy of outputFile, in the cell's raw folder. */
  localName: z.string(),
  pollSeconds: z.number().positive(),
  startedAt: z.string(),
  /** When the client is stopped if it has not ended by itself. */
  deadline: z.string().refine((d) => Number.isFinite(Date.parse(d)), "not a date"),
});
export type DetachedState = z.infer<typeof DetachedStateSchema>;

/** The state kept in a cell's raw folder, or undefined when there is none (or it cannot be read: then the cell is measured again). */
export function readDetachedState(rawCellDir: string): DetachedState | undefined {
  const file = join(rawCellDir, DETACHED_STATE_FILE);
  if (!existsSync(file)) return undefined;
  try {
    return DetachedStateSchema.parse(JSON.parse(readFileSync(file, "utf8")));
  } catch {
    return undefined;
  }
}
