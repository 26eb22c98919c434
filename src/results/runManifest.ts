/**
 * The record of what latlab wrote in a run's results folder: `.latlab-manifest.json`, beside the
 * run's files. `--force` removes what it lists and nothing else, so a user's own file is never
 * removed because its name happens to be one of latlab's (a plan.json, a raw/ of captures).
 *
 * The record is of the folder's top-level entries (raw/ as a whole, not each file in it): latlab
 * writes its files into folders it made itself. An entry is recorded *before* it is written, so a
 * crash between the two leaves a listed entry that does not exist (harmless), never an unlisted
 * entry of latlab's. It is written by the results folder's preparation (outputFolder.ts: a new
 * record for the new run) and kept up to date by RunFiles; a folder without a record (a user's, or
 * one from a latlab before the record) is never written into by --force.
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";

export const MANIFEST_FILE = ".latlab-manifest.json";

/** A top-level entry's name: no path, never the manifest itself. */
const EntryName = z
  .string()
  .min(1)
  .refine((n) => !n.includes("/") && n !== "." && n !== ".." && n !== MANIFEST_FILE, "a name in the folder, not a path");

export const ManifestSchema = z.object({
  format: z.literal(1),
  /** The run that started this record (a resume adds to its run's record). */
  runId: z.string(),
  written: z.array(z.object({ name: EntryName, kind: z.enum(["file", "folder"]) })),
});
export type Manifest = z.infer<typeof ManifestSchema>;
export type ManifestEntry = Manifest["written"][number];

/** The folder's record: undefined when there is none; `invalid` (why) when it is not one latlab wrote. */
export function readManifest(dir: string): { manifest?: Manifest; invalid?: string } {
  const file = join(dir, MANIFEST_FILE);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return {};
  }
  try {
    const parsed = ManifestSchema.safeParse(JSON.parse(text));
    return parsed.success ? { manifest: parsed.data } : { invalid: z.prettifyError(parsed.error).split("\n").join("; ") };
  } catch (error) {
    return { invalid: (error as Error).message };
  }
}

/** Writes the record whole or not at all (temp file + rename). */
function writeManifest(dir: string, manifest: Manifest): void {
  const file = join(dir, MANIFEST_FILE);
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, `${JSON.stringify(ManifestSchema.parse(manifest), null, 2)}\n`);
    renameSync(tmp, file);
  } finally {
    rmSync(tmp, { force: true });
  }
}

/** A new record for run `runId`, listing nothing yet. */
export function startManifest(dir: string, runId: string): void {
  writeManifest(dir, { format: 1, runId, written: [] });
}

/**
 * Records that latlab writes the top-level entry `name` in `dir`, if the folder has a record
 * (one latlab did not prepare gets none). A record that cannot be written is not an error: the
 * entry is then simply not one --force will remove.
 */
export function recordWritten(dir: string, name: string, kind: ManifestEntry["kind"]): void {
  try {
    const { manifest } = readManifest(dir);
    if (!manifest || manifest.written.some((e) => e.name === name)) return;
    writeManifest(dir, { ...manifest, written: [...manifest.written, { name, kind }] });
  } catch {
    // A full or read-only disk: RunFiles says so for the file itself.
  }
}
