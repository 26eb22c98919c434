import { existsSync, readdirSync } from "node:fs";
import { basename, extname, isAbsolute, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ExperimentDefinitionError } from "../dsl/errors.ts";
import { isExperiment, type Experiment } from "../dsl/experiment.ts";
import { didYouMean } from "../dsl/suggest.ts";

/** The experiments shipped with latlab. */
export const EXPERIMENTS_DIR = fileURLToPath(new URL("../../experiments/", import.meta.url));

export function listExperimentFiles(dir = EXPERIMENTS_DIR): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => /\.(ts|mts|js|mjs)$/.test(f) && !f.endsWith(".d.ts"))
    .sort()
    .map((f) => resolve(dir, f));
}

const looksLikePath = (ref: string) => ref.includes("/") || /\.(ts|mts|js|mjs)$/.test(ref);

/** Where an experiment reference points: a name in experiments/ or a user's file. */
export function resolveExperimentRef(ref: string, cwd = process.cwd(), dir = EXPERIMENTS_DIR): string {
  if (looksLikePath(ref)) {
    const file = isAbsolute(ref) ? ref : resolve(cwd, ref);
    if (!existsSync(file)) throw new Error(`no experiment file at ${file}`);
    return file;
  }
  const files = listExperimentFiles(dir);
  const names = files.map((f) => basename(f, extname(f)));
  const index = names.indexOf(ref);
  if (index < 0) throw new Error(`no experiment "${ref}" in ${dir}${didYouMean(ref, names)}`);
  return files[index]!;
}

/** Imports an experiment file and checks that it default-exports defineExperiment(...). */
export async function loadExperiment(ref: string, cwd = process.cwd()): Promise<{ experiment: Experiment; file: string }> {
  const file = resolveExperimentRef(ref, cwd);
  let mod: { default?: unknown };
  try {
    mod = await import(pathToFileURL(file).href);
  } catch (error) {
    if (error instanceof ExperimentDefinitionError) throw error.withSource(file);
    throw new Error(`${file}: could not load: ${(error as Error).message}`, { cause: error });
  }
  if (!isExperiment(mod.default)) {
    throw new Error(`${file}: must \`export default defineExperiment({...})\` (imported from "latlab")`);
  }
  return { experiment: mod.default, file };
}
