import { existsSync, readdirSync, realpathSync, statSync } from "node:fs";
import { basename, extname, isAbsolute, relative, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ExperimentDefinitionError } from "../../dsl/errors.ts";
import { isExperiment, type Experiment } from "../../dsl/experiment.ts";
import { didYouMean } from "../../dsl/suggest.ts";
import { checkLoaded } from "./checkLoaded.ts";
import { probeLoad } from "./loadProbe.ts";

/** The experiments shipped with latlab. */
export const EXPERIMENTS_DIR = fileURLToPath(new URL("../../../experiments/", import.meta.url));

export function listExperimentFiles(dir = EXPERIMENTS_DIR): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => /\.(ts|mts|js|mjs)$/.test(f) && !f.endsWith(".d.ts"))
    .sort()
    .map((f) => resolve(dir, f));
}

const looksLikePath = (ref: string) => ref.includes("/") || /\.(ts|mts|js|mjs)$/.test(ref);

const experimentName = (file: string) => basename(file, extname(file));

const realpath = (path: string) => {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
};

/**
 * The current project's experiments folder (`./experiments`), or undefined when there is none
 * or it is latlab's own (latlab run from its own checkout).
 */
export function projectExperimentsDir(cwd = process.cwd(), latlabDir = EXPERIMENTS_DIR): string | undefined {
  const dir = resolve(cwd, "experiments");
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return undefined;
  return realpath(dir) === realpath(latlabDir) ? undefined : dir;
}

/** Where an experiment came from: the project's ./experiments, latlab's own, or a path given. */
export type ExperimentOrigin = "project" | "latlab" | "path";

export interface FoundExperiment {
  file: string;
  origin: ExperimentOrigin;
  /** A project experiment with the name of one of latlab's own: that file, which it hides. */
  shadows?: string;
}

export interface ExperimentDirs {
  /** The project's experiments folder; undefined: none. */
  project?: string | undefined;
  latlab: string;
}

const defaultDirs = (cwd: string): ExperimentDirs => ({ project: projectExperimentsDir(cwd), latlab: EXPERIMENTS_DIR });

/**
 * Where an experiment reference points. A path (it has a `/` or an extension) is that file; a
 * name is looked up in the project's ./experiments first, then in latlab's own.
 */
export function findExperiment(ref: string, cwd = process.cwd(), dirs: ExperimentDirs = defaultDirs(cwd)): FoundExperiment {
  if (looksLikePath(ref)) {
    const file = isAbsolute(ref) ? ref : resolve(cwd, ref);
    if (!existsSync(file)) throw new Error(`no experiment file at ${file}`);
    return { file, origin: "path" };
  }
  const project = dirs.project ? listExperimentFiles(dirs.project) : [];
  const latlab = listExperimentFiles(dirs.latlab);
  const own = latlab.find((f) => experimentName(f) === ref);
  const mine = project.find((f) => experimentName(f) === ref);
  if (mine) return { file: mine, origin: "project", ...(own ? { shadows: own } : {}) };
  if (own) return { file: own, origin: "latlab" };
  const names = [...new Set([...project, ...latlab].map(experimentName))];
  const where = dirs.project ? `${displayPath(dirs.project, cwd)} or latlab's own experiments (${dirs.latlab})` : dirs.latlab;
  throw new Error(`no experiment "${ref}" in ${where}${didYouMean(ref, names)}`);
}

/** Where an experiment reference points (the file only; see findExperiment). */
export function resolveExperimentRef(ref: string, cwd = process.cwd(), dir = EXPERIMENTS_DIR): string {
  return findExperiment(ref, cwd, dir === EXPERIMENTS_DIR ? defaultDirs(cwd) : { latlab: dir }).file;
}

/** `./experiments/x.ts` for a path under cwd, else the absolute path. */
function displayPath(dir: string, cwd: string): string {
  const rel = relative(cwd, dir);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? `.${sep}${rel}` : dir;
}

/**
 * Which file a name resolved to, for stderr: `experiment NAME: ./experiments/NAME.ts` or
 * `experiment NAME: latlab's own experiments/NAME.ts`. Undefined for a path: the user named it.
 */
export function describeFound(found: FoundExperiment, cwd = process.cwd()): string | undefined {
  const name = experimentName(found.file);
  const file = basename(found.file);
  if (found.origin === "latlab") return `experiment ${name}: latlab's own experiments/${file}`;
  if (found.origin === "project") {
    return `experiment ${name}: ${displayPath(found.file, cwd)}${found.shadows ? ` (shadows latlab's own experiments/${basename(found.shadows)})` : ""}`;
  }
  return undefined;
}

/**
 * Imports an experiment file and checks that it default-exports defineExperiment(...). The file
 * is first loaded under a time limit (loadProbe.ts), so that one whose top level never finishes
 * is refused, named, instead of hanging the command.
 */
export async function importExperiment(file: string): Promise<Experiment> {
  await probeLoad(file);
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
  checkLoaded(mod.default, file);
  return mod.default;
}

/** Finds (see findExperiment) and imports an experiment. */
export async function loadExperiment(ref: string, cwd = process.cwd()): Promise<{ experiment: Experiment } & FoundExperiment> {
  const found = findExperiment(ref, cwd);
  return { experiment: await importExperiment(found.file), ...found };
}

export interface ListedExperiment {
  name: string;
  file: string;
  /** Project: the latlab experiment it hides. Latlab: the project file that hides it. */
  shadows?: string;
  shadowedBy?: string;
}

/** Both groups `latlab list` shows: the project's (undefined when it has no ./experiments) and latlab's own. */
export function listExperiments(cwd = process.cwd(), dirs: ExperimentDirs = defaultDirs(cwd)): { project?: ListedExperiment[]; latlab: ListedExperiment[] } {
  const latlabFiles = listExperimentFiles(dirs.latlab);
  const projectFiles = dirs.project ? listExperimentFiles(dirs.project) : undefined;
  const byName = (files: readonly string[]) => new Map(files.map((f) => [experimentName(f), f]));
  const latlabByName = byName(latlabFiles);
  const projectByName = byName(projectFiles ?? []);
  const latlab = latlabFiles.map((file): ListedExperiment => {
    const hiddenBy = projectByName.get(experimentName(file));
    return { name: experimentName(file), file, ...(hiddenBy ? { shadowedBy: hiddenBy } : {}) };
  });
  if (!projectFiles || !dirs.project) return { latlab };
  const project = projectFiles.map((file): ListedExperiment => {
    const hides = latlabByName.get(experimentName(file));
    return { name: experimentName(file), file, ...(hides ? { shadows: hides } : {}) };
  });
  return { project, latlab };
}
