/**
 * `npm run build` (also run by `npm pack`/`npm publish` through prepack): src/ → dist/.
 *
 * tsc compiles src/ to JavaScript and .d.ts (tsconfig.build.json); the files the code reads at
 * run time next to its own module — `new URL("./x", import.meta.url)`: the price snapshot, the
 * emulator's spec excerpts, Python scripts and provider plugin, tcp-echo's script — are copied
 * to the same place under dist/, so a module finds them in dist/ as it does in src/. What lies
 * outside src/ (experiments/, schema/, bin/, package.json) is shipped as it is: dist/ sits at the
 * same depth as src/, so the `../../experiments/`-style URLs of src/ hold in dist/ too.
 */
import { spawnSync } from "node:child_process";
import { cpSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(fileURLToPath(new URL("..", import.meta.url)));
const SRC = join(ROOT, "src");
const DIST = join(ROOT, "dist");

/** What tsc does not compile and a module may load; TypeScript, docs and Python caches are not. */
export function isRuntimeAsset(path: string): boolean {
  const name = basename(path);
  if (statSync(path).isDirectory()) return name !== "__pycache__";
  return !name.endsWith(".ts") && !name.endsWith(".md");
}

function build(): number {
  // A module deleted from src/ must not linger in the package.
  rmSync(DIST, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const r = spawnSync(process.execPath, [tsc, "-p", join(ROOT, "tsconfig.build.json")], { stdio: "inherit" });
  if (r.status !== 0) return r.status ?? 1;
  cpSync(SRC, DIST, { recursive: true, filter: isRuntimeAsset });
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = build();
