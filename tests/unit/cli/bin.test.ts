import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../../..");
const VERSION = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version;
const node = (args: string[], cwd = ROOT) => spawnSync(process.execPath, args, { cwd, encoding: "utf8", env: { ...process.env, CI: "true" } });

describe("bin/latlab.js", () => {
  const scratch = mkdtempSync(join(tmpdir(), "latlab-bin-"));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it("runs from a checkout whose path has a space in it", () => {
    // A real copy: Node resolves a symlinked main script to its real path, which has no space.
    const checkout = join(scratch, "my checkouts", "lat lab");
    for (const part of ["bin", "src", "experiments", "schema", "package.json"]) cpSync(join(ROOT, part), join(checkout, part), { recursive: true });
    symlinkSync(join(ROOT, "node_modules"), join(checkout, "node_modules"), "dir");
    const version = node([join(checkout, "bin/latlab.js"), "--version"], scratch);
    expect(version.stderr).toBe("");
    expect(version.stdout.trim()).toBe(VERSION);
    expect(version.status).toBe(0);
    // And a user's experiment in a folder with a space, importing "latlab" from outside any project.
    const user = join(scratch, "my experiments");
    cpSync(join(ROOT, "tests/unit/cli/fixtures/outside.ts"), join(user, "outside.ts"));
    const plan = node([join(checkout, "bin/latlab.js"), "plan", "./outside.ts"], user);
    expect(plan.stderr).toBe("");
    expect(plan.stdout).toMatch(/^outside: an experiment outside any project/);
    expect(plan.status).toBe(0);
  });

  // Node versions this machine does not have, simulated before bin/latlab.js loads.
  const preload = (code: string) => `data:text/javascript,${encodeURIComponent(code)}`;

  it("on a Node without module.registerHooks (22.0–22.14, 23.0–23.4) says which Node it needs, instead of crashing", () => {
    const r = node(["--import", preload('const m = process.getBuiltinModule("node:module"); delete m.registerHooks; m.syncBuiltinESMExports(); Object.defineProperty(process.versions, "node", { value: "22.14.0" });'), "bin/latlab.js", "--version"]);
    expect(r.stderr.trim()).toBe("latlab needs Node.js >= 22.15; this is v22.14.0. Install it (for example: npm install -g node@24) and try again.");
    expect(r.stdout).toBe("");
    expect(r.status).toBe(1);
  });

  it("on Node 18 and 20 says the same", () => {
    const r = node(["--import", preload('Object.defineProperty(process.versions, "node", { value: "18.20.4" });'), "bin/latlab.js", "--version"]);
    expect(r.stderr).toMatch(/^latlab needs Node\.js >= 22\.15; this is v18\.20\.4\./);
    expect(r.status).toBe(1);
  });

  it("links on any Node: its only static import is a namespace, which cannot be a SyntaxError", () => {
    // A named import (`import { registerHooks } from "node:module"`) of an export an older Node
    // lacks fails at link time, before the version check can run; namespaces never do.
    const source = readFileSync(join(ROOT, "bin/latlab.js"), "utf8");
    const statics = [...source.matchAll(/^import\s+(.+?)\s+from\s+["']([^"']+)["']/gm)].map((m) => `${m[1]} from ${m[2]}`);
    expect(statics).toEqual(["* as nodeModule from node:module"]);
  });

  it("package.json's engines say the same as the check", () => {
    expect(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).engines.node).toBe("^22.15.0 || >=23.5.0");
  });
});
