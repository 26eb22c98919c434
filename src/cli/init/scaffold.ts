import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { checkWritableFolder, makeWritableFolder } from "../../results/writablePath.ts";
import { TEMPLATES, type TemplateContext, type TemplateFile } from "./templates.ts";

const WHAT = "the project folder";

const LATLAB_PACKAGE = new URL("../../../package.json", import.meta.url);

/** latlab's version and the TypeScript it is checked with, from its own package.json. */
export function latlabPackageFacts(): Omit<TemplateContext, "name"> {
  const pkg = JSON.parse(readFileSync(LATLAB_PACKAGE, "utf8")) as { version: string; devDependencies?: Record<string, string> };
  return { latlabVersion: pkg.version, typescript: pkg.devDependencies?.["typescript"], typesNode: pkg.devDependencies?.["@types/node"] };
}

/** An npm package name from a folder's name: lower case, URL-safe, never empty. */
export function packageName(dir: string): string {
  const name = basename(resolve(dir))
    .toLowerCase()
    .replace(/[^a-z0-9._~-]+/g, "-")
    .replace(/^[._-]+|-+$/g, "");
  return name || "latlab-experiments";
}

export interface ScaffoldResult {
  dir: string;
  /** Files written, relative to dir. */
  written: string[];
  /** Files that were there already, relative to dir: without `force`, nothing was written. */
  existing: string[];
}

/**
 * Writes a new experiments project into `dir` (made if missing). Refuses, writing nothing, when
 * any of its files exists, unless `force`; and at once, naming it and why, when `dir` cannot hold
 * files (a pseudo-filesystem such as /proc, a read-only disk…: writablePath.ts).
 */
export async function scaffold(dir: string, options: { force?: boolean; templates?: readonly TemplateFile[]; context?: Partial<TemplateContext> } = {}): Promise<ScaffoldResult> {
  const root = resolve(dir);
  if (existsSync(root) && !statSync(root).isDirectory()) throw new Error(`${root} exists and is not a folder`);
  // Checked before anything else, creating nothing yet.
  await checkWritableFolder(root, { what: WHAT });
  const templates = options.templates ?? TEMPLATES;
  const context: TemplateContext = { name: packageName(root), ...latlabPackageFacts(), ...options.context };
  const existing = templates.map((t) => t.path).filter((path) => existsSync(join(root, path)));
  if (existing.length && !options.force) return { dir: root, written: [], existing };
  // Every content first: a template that throws leaves nothing half-written.
  const files = templates.map((t) => ({ path: t.path, text: t.content(context) }));
  // Folders through the guard, one level at a time: never mkdir -p (it spins for ever on /proc).
  for (const f of files) {
    await makeWritableFolder(dirname(join(root, f.path)), { what: WHAT });
    writeFileSync(join(root, f.path), f.text);
  }
  return { dir: root, written: files.map((f) => f.path), existing };
}
