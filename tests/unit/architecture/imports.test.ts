import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * The shape the README promises: data flows one way, and the CLI is wiring over one module per
 * command. Read from the source with TypeScript's own parser — static imports only: a dynamic
 * `await import()` runs after every module has loaded and cannot be caught half-initialised.
 */
const ROOT = resolve(import.meta.dirname, "../../..");
const SRC = join(ROOT, "src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith(".ts") ? [path] : [];
  });
}

/**
 * The files a module loads when it loads: static imports and re-exports. `import type` is left
 * out: Node strips it, so it loads nothing and cannot close a cycle (`import { type A }` is kept:
 * it still loads the module).
 */
export function staticImports(file: string, text = readFileSync(file, "utf8")): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: string[] = [];
  for (const statement of source.statements) {
    const typeOnly = ts.isImportDeclaration(statement) ? Boolean(statement.importClause?.isTypeOnly) : ts.isExportDeclaration(statement) && statement.isTypeOnly;
    if (typeOnly) continue;
    if ((ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) && statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier)) {
      const spec = statement.moduleSpecifier.text;
      if (spec.startsWith(".")) found.push(resolve(dirname(file), spec));
    }
  }
  return found;
}

/** Every cycle among the files, each once, as the list of files around it. */
export function importCycles(graph: Map<string, string[]>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, "open");
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (state.get(next) === "open") cycles.push(stack.slice(stack.indexOf(next)));
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, "done");
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return cycles;
}

const graph = new Map(sourceFiles(SRC).map((f) => [f, staticImports(f)]));
const rel = (f: string) => relative(ROOT, f);

describe("import structure of src/", () => {
  it("finds a cycle when there is one (the check itself can fail)", () => {
    const a = join(SRC, "a.ts");
    const b = join(SRC, "b.ts");
    expect(staticImports(a, 'import { x } from "./b.ts";\nimport type { T } from "./d.ts";\nexport const y = 1;\nconst z = await import("./c.ts");')).toEqual([b]);
    expect(importCycles(new Map([[a, [b]], [b, [a]]])).map((c) => c.map(rel))).toEqual([["src/a.ts", "src/b.ts"]]);
    expect(importCycles(new Map([[a, [b]], [b, []]]))).toEqual([]);
  });

  it("has no import cycle", () => {
    expect(importCycles(graph).map((c) => c.map(rel).join(" → "))).toEqual([]);
  });

  it("src/cli/main.ts is only wiring: it imports the commands and what prints an error, nothing that does work", () => {
    const main = join(SRC, "cli/main.ts");
    const allowed = new Set(["src/dsl/errors.ts", "src/version.ts", "src/cli/output/hangup.ts", "src/cli/output/terminalText.ts"].map((f) => join(ROOT, f)));
    const work = graph.get(main)!.filter((f) => !allowed.has(f) && !f.startsWith(join(SRC, "cli/commands/")));
    expect(work.map(rel)).toEqual([]);
  });

  it("every command module registers exactly one command group and main.ts registers every command module", () => {
    const commands = readdirSync(join(SRC, "cli/commands")).filter((f) => /Commands?\.ts$/.test(f));
    const mainText = readFileSync(join(SRC, "cli/main.ts"), "utf8");
    for (const file of commands) {
      const text = readFileSync(join(SRC, "cli/commands", file), "utf8");
      const registers = [...text.matchAll(/^export function (register\w+)\(/gm)].map((m) => m[1]);
      expect(registers, file).toHaveLength(1);
      // One top-level command per module (a command's own subcommands, `history add`, live with it).
      expect(text.match(/\bprogram\s*\.command\(/g), `${file}: top-level commands`).toHaveLength(1);
      expect(mainText, `${file}'s ${registers[0]} is not called in main.ts`).toMatch(new RegExp(`\\b${registers[0]}\\(program`));
    }
    expect(commands.length).toBeGreaterThanOrEqual(10);
  });
});
