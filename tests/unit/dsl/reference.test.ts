import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { REFERENCE_FILE, renderDslReference } from "../../../scripts/dslReference.ts";
import { tools } from "../../../src/tools/registry.ts";

/** docs/dsl-reference.md is generated from the zod schemas: a schema change without `npm run docs` fails here. */
describe("the DSL reference (docs/dsl-reference.md)", () => {
  const text = renderDslReference();

  it("is the committed file, regenerated: run `npm run docs` after changing a schema", () => {
    expect(existsSync(REFERENCE_FILE), "docs/dsl-reference.md is missing: run `npm run docs`").toBe(true);
    expect(readFileSync(REFERENCE_FILE, "utf8"), "docs/dsl-reference.md is out of date: run `npm run docs`").toBe(text);
  });

  it("has a section per schema and every tool's parameters, each field with a description", () => {
    for (const heading of ["## Experiment", "## Host placement", "## Axes", "## Measure", "## Pairs", "## Tools"]) expect(text).toContain(`\n${heading}\n`);
    for (const [name, tool] of Object.entries(tools)) {
      expect(text).toContain(`### \`${name}\``);
      const shape = (tool.params as unknown as { shape?: Record<string, unknown> }).shape ?? {};
      for (const param of Object.keys(shape)) expect(text).toMatch(new RegExp(`\\| \`${param}\` \\|`));
    }
    // No field row without its description: `.describe()` it in the schema.
    const rows = text.split("\n").filter((l) => /^\| `/.test(l));
    expect(rows.length).toBeGreaterThan(40);
    expect(rows.filter((row) => row.trimEnd().endsWith("|  |"))).toEqual([]);
  });

  it("shows types, defaults and units from the schemas", () => {
    expect(text).toContain("| `interval` | number ≥ 0.002 | `0.2` | s |");
    expect(text).toContain("| `pairs` | [Pair](#pairs)[], at least 1 | — | — |");
    expect(text).toContain("| `from` | string matching `^[a-z][a-z0-9]{0,11}$` | required | — |");
    expect(text).toContain("| `hosts` | `{ [role]: Host } \\| (variant) => { [role]: Host }` | required |");
    expect(text).toContain("| `size` | string matching `^(Standard\\|Basic)_[A-Za-z0-9_]+$` |");
  });
});
