/**
 * What a local run's hosts are, saved beside their keys once they are up, so that `latlab resume`
 * can re-attach to them after the runner died: the endpoints (addresses, the client key, each
 * host's pinned key, work folders), the shaping and the facts — the Environment up() returned.
 * It lives in the run's key folder (root only, tmpfs), and goes with it.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { ShapingStatusSchema } from "../../../results/schema.ts";
import type { Environment } from "../../target.ts";

export const ENVIRONMENT_FILE = "environment.json";

const ScalarSchema = z.union([z.string(), z.number(), z.boolean(), z.null()]);

export const SavedEndpointSchema = z.object({
  deployment: z.string(),
  role: z.string(),
  ssh: z.object({ host: z.string(), port: z.number().int(), username: z.string(), privateKey: z.string() }),
  hostKey: z.string(),
  privateAddress: z.string(),
  publicAddress: z.string().optional(),
  publicPathArrivesAt: z.string().optional(),
  workDir: z.string(),
  actual: z.record(z.string(), ScalarSchema),
});

export const SavedEnvironmentSchema = z.object({
  /** The run the hosts were brought up for (their names carry its short id). */
  runId: z.string(),
  savedAt: z.string(),
  hosts: z.array(SavedEndpointSchema),
  shaping: ShapingStatusSchema,
  facts: z.record(z.string(), z.string()),
});
export type SavedEnvironment = z.infer<typeof SavedEnvironmentSchema>;

/** Writes the environment (0600) into the key folder; returns the file. Hosts with ready/probe steps are not for saving. */
export function saveEnvironment(keysDir: string, runId: string, environment: Environment): string {
  const file = join(keysDir, ENVIRONMENT_FILE);
  const saved: SavedEnvironment = SavedEnvironmentSchema.parse({
    runId,
    savedAt: new Date().toISOString(),
    hosts: environment.hosts.map(({ ready: _ready, probe: _probe, ...host }) => host),
    shaping: environment.shaping,
    facts: environment.facts,
  });
  writeFileSync(file, `${JSON.stringify(saved)}\n`, { mode: 0o600 });
  return file;
}

/** The saved environment, or an error naming the file and what is wrong with it. */
export function readSavedEnvironment(file: string): SavedEnvironment {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new Error(`${file}: not readable as JSON (${(error as Error).message.split("\n")[0]})`);
  }
  const checked = SavedEnvironmentSchema.safeParse(raw);
  if (!checked.success) throw new Error(`${file}: does not match its schema:\n${z.prettifyError(checked.error)}`);
  return checked.data;
}
