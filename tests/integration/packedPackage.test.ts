/**
 * latlab as a user gets it: `npm pack` (whose prepack builds dist/), installed into a scratch
 * project outside this repository, used with a strict tsconfig and plain node. Source-only
 * shortcuts — Node's type stripping, which it refuses under node_modules; .ts exports; this
 * repository's own tsconfig — cannot help here, so what passes here works for a user.
 *
 * Needs npm and its cache or registry for latlab's dependencies; the last test runs an experiment
 * on the local target (root, namespaces).
 */
import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { tempDirs } from "../tempDirs.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const temp = tempDirs();

/** What npm set for the script running these tests describes this repository, not the scratch project; a chosen cache, registry or user config stays. */
function childEnv(): NodeJS.ProcessEnv {
  const keep = new Set(["npm_config_cache", "npm_config_registry", "npm_config_userconfig"]);
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k) || keep.has(k.toLowerCase())));
  // Plain node: no loader a test runner may have put there.
  delete env.NODE_OPTIONS;
  return { ...env, CI: "true" };
}

function run(command: string, args: string[], cwd: string): SpawnSyncReturns<string> {
  return spawnSync(command, args, { cwd, env: childEnv(), encoding: "utf8", timeout: 540_000 });
}

/** Fails with what the command printed, not only its exit code. */
function ok(r: SpawnSyncReturns<string>, what: string): SpawnSyncReturns<string> {
  if (r.status !== 0) throw new Error(`${what} failed (${r.error?.message ?? `exit ${r.status}`}):\n${r.stdout}\n${r.stderr}`);
  return r;
}

const MINE = `import { defineExperiment } from "latlab";

export default defineExperiment({
  name: "mine",
  description: "A user's own experiment, in a project that installed latlab from its tarball.",
  defaults: { region: "uksouth", zone: "1", size: "Standard_D2s_v5" },
  axes: { ppg: [false, true] },
  baseline: { ppg: false },
  hosts: { client: {}, server: {} },
  measure: [{ tool: "ping", params: { count: 10, interval: 0.2 } }],
});
`;

/** Files under `dir`, relative to it. */
const filesUnder = (dir: string) => readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name)));

describe("the packed package in a user's project", () => {
  let project = "";
  let installed = "";

  beforeAll(() => {
    const packDir = temp("latlab-pack-");
    ok(run("npm", ["pack", "--pack-destination", packDir], ROOT), "npm pack");
    const tarball = readdirSync(packDir).find((f) => f.endsWith(".tgz"));
    if (!tarball) throw new Error(`npm pack left no tarball in ${packDir}`);

    // The project as `latlab init` makes it: its strict tsconfig (skipLibCheck off) checks latlab's declarations too.
    project = join(temp("latlab-user-"), "my-lab");
    installed = join(project, "node_modules", "latlab");
    ok(run(process.execPath, [join(ROOT, "bin", "latlab.js"), "init", project], ROOT), "latlab init");
    const tsconfig = JSON.parse(readFileSync(join(project, "tsconfig.json"), "utf8")) as { compilerOptions: Record<string, unknown> };
    expect(tsconfig.compilerOptions).toMatchObject({ strict: true, exactOptionalPropertyTypes: true, noUncheckedIndexedAccess: true, noPropertyAccessFromIndexSignature: true, erasableSyntaxOnly: true, verbatimModuleSyntax: true, skipLibCheck: false });
    writeFileSync(join(project, "experiments", "mine.ts"), MINE);
    // The TypeScript this repository builds with, so the check is about latlab's types, not a TypeScript release.
    const typescript = JSON.parse(readFileSync(join(ROOT, "node_modules/typescript/package.json"), "utf8")).version;
    // npm 11 runs no dependency install scripts unless allowed: the install must work without them.
    ok(run("npm", ["install", join(packDir, tarball), `typescript@${typescript}`, "--prefer-offline", "--no-audit", "--no-fund"], project), "npm install");
  }, 600_000);

  it("ships the JavaScript, its declarations and every file the code reads at run time; no TypeScript source", () => {
    expect(existsSync(join(installed, "dist/index.js"))).toBe(true);
    expect(existsSync(join(installed, "dist/index.d.ts"))).toBe(true);
    expect(existsSync(join(installed, "src"))).toBe(false);
    const assets = filesUnder(join(ROOT, "src")).filter((f) => !/\.(ts|md)$/.test(f) && !f.includes("__pycache__"));
    expect(assets).toContain("targets/azure/catalog/prices.snapshot.json");
    const shipped = new Set(filesUnder(join(installed, "dist")));
    expect(assets.filter((f) => !shipped.has(f))).toEqual([]);
  });

  it("type-checks the user's experiment under strict flags, latlab's declarations included (skipLibCheck off)", () => {
    const r = run("npx", ["tsc", "--noEmit", "-p", "."], project);
    expect(r.stdout).toBe("");
    expect(r.status).toBe(0);
  });

  it("the same check fails on a wrong definition: the types are latlab's, not any", () => {
    writeFileSync(join(project, "experiments", "wrong.ts"), MINE.replace("ppg: [false, true]", 'ppg: ["yes"]').replace('"mine"', '"wrong"'));
    try {
      const r = run("npx", ["tsc", "--noEmit", "-p", "."], project);
      expect(r.stdout).toMatch(/experiments\/wrong\.ts\(\d+,\d+\): error TS2322: Type 'string' is not assignable to type 'boolean'/);
      expect(r.status).not.toBe(0);
    } finally {
      rmSync(join(project, "experiments", "wrong.ts"));
    }
  });

  it("imports under plain node (no tsx, no type stripping)", () => {
    const r = ok(run(process.execPath, ["-e", 'const m = await import("latlab"); console.log(typeof m.defineExperiment, m.TOOL_NAMES.join(","))'], project), "import");
    expect(r.stdout.trim()).toMatch(/^function .*sockperf/);
  });

  it("`latlab plan` plans the user's experiment", () => {
    const r = ok(run("npx", ["latlab", "plan", "./experiments/mine.ts"], project), "latlab plan");
    expect(r.stdout).toMatch(/^mine: A user's own experiment/);
    expect(r.stdout).toMatch(/ppg=true\/ping#0\/client->server/);
    expect(r.stdout).toMatch(/2 deployments, 4 hosts, 2 cells/);
  });

  it("`latlab list` shows the user's experiment and latlab's shipped ones, which load from the package", () => {
    const list = ok(run("npx", ["latlab", "list"], project), "latlab list");
    expect(list.stdout).toMatch(/\bmine\b/);
    expect(list.stdout).toMatch(/\bppg-vs-zone\b/);
    const plan = ok(run("npx", ["latlab", "plan", "ppg-vs-zone"], project), "latlab plan ppg-vs-zone");
    expect(plan.stdout).toMatch(/^ppg-vs-zone: /);
  });

  it("the scheduled workflows work there: the package's `latlab init` writes them byte for byte, and `latlab ci-matrix` plans the project's experiments only", () => {
    const other = join(temp("latlab-user-"), "lab2");
    ok(run(process.execPath, [join(installed, "bin", "latlab.js"), "init", other], project), "latlab init from the package");
    for (const name of ["scheduled.yml", "latlab-measure.yml", "latlab-history.yml", "latlab-sweep.yml"]) {
      expect(readFileSync(join(other, ".github/workflows", name)), name).toEqual(readFileSync(join(ROOT, ".github/workflows", name)));
    }
    // What the workflow's plan job runs (`npx latlab ci-matrix …`): with no names, the project's own experiments only.
    const matrix = JSON.parse(ok(run("npx", ["latlab", "ci-matrix", "--duration", "1x", "--target", "azure"], project), "latlab ci-matrix").stdout) as { include: { experiment: string }[] };
    expect(matrix.include.map((e) => e.experiment)).toEqual(["example", "mine"]);
    // latlab's built-ins when named, loaded from the package.
    const named = JSON.parse(ok(run("npx", ["latlab", "ci-matrix", "mine", "ppg-vs-zone"], project), "latlab ci-matrix mine ppg-vs-zone").stdout) as typeof matrix;
    expect(named.include.map((e) => e.experiment)).toEqual(["mine", "ppg-vs-zone"]);
  });

  it("`latlab run` measures the user's experiment for real with plain node, and tears down", () => {
    const out = join(project, "results", "mine-run");
    const r = run("npx", ["latlab", "run", "./experiments/mine.ts", "--duration", "1", "--no-install", "--quiet", "--out", out], project);
    expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
    const results = JSON.parse(readFileSync(join(out, "results.json"), "utf8")) as { status: string; teardown: { status: string }; measurements: { status: string }[] };
    expect(results.status).toBe("complete");
    expect(results.teardown.status).toBe("ok");
    expect(results.measurements.map((m) => m.status)).toEqual(["ok", "ok"]);
    expect(r.stdout).toContain("teardown: ok");
  }, 300_000);
});
