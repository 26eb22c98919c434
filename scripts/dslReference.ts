/**
 * Renders docs/dsl-reference.md — the experiment DSL's fields, host placement, axes, measures and
 * `pairs`, and every tool's parameters — from the zod schemas, through z.toJSONSchema() and the
 * schemas' `.describe()` text, so that the reference cannot drift from what defineExperiment
 * accepts. tests/unit/dsl/reference.test.ts fails when the committed file is not this output.
 *
 *   npm run docs              writes docs/dsl-reference.md
 *   npm run docs -- --check   exits 1 when the file differs (what the test checks)
 *
 * A description may end with `Unit: <unit>.`: that goes in the Unit column.
 */
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { AxesSchema } from "../src/dsl/axes.ts";
import { ExperimentShapeSchema, MeasureShapeSchema, PairSchema } from "../src/dsl/experiment.ts";
import { HostSpecSchema } from "../src/dsl/placement.ts";
import { tools } from "../src/tools/registry.ts";

export const REFERENCE_FILE = fileURLToPath(new URL("../docs/dsl-reference.md", import.meta.url));

type Json = Record<string, unknown>;

/** Schemas with a section of their own: where they appear inside another, the type links to it. */
const SECTIONS = new Map<z.ZodType, { name: string; anchor: string }>([
  [HostSpecSchema, { name: "Host", anchor: "host-placement" }],
  [AxesSchema, { name: "Axes", anchor: "axes" }],
  [MeasureShapeSchema, { name: "Measure", anchor: "measure" }],
  [PairSchema, { name: "Pair", anchor: "pairs" }],
]);

/** The JSON Schema of what a user writes (defaults make fields optional); functions become `{}`. */
function jsonSchema(schema: z.ZodType): Json {
  return z.toJSONSchema(schema, {
    io: "input",
    unrepresentable: "any",
    override(ctx) {
      const zodSchema = ctx.zodSchema as unknown as z.ZodType;
      const section = zodSchema === schema ? undefined : SECTIONS.get(zodSchema);
      if (!section) return;
      const json = ctx.jsonSchema as Json;
      for (const key of Object.keys(json)) delete json[key];
      json["x-section"] = section;
    },
  }) as Json;
}

const SAFE = Number.MAX_SAFE_INTEGER;

function numberText(s: Json): string {
  const min = typeof s.minimum === "number" && s.minimum > -SAFE ? s.minimum : undefined;
  const max = typeof s.maximum === "number" && s.maximum < SAFE ? s.maximum : undefined;
  const parts: string[] = [];
  if (min !== undefined && max !== undefined) parts.push(`${min} to ${max}`);
  else if (min !== undefined) parts.push(`≥ ${min}`);
  if (typeof s.exclusiveMinimum === "number") parts.push(`> ${s.exclusiveMinimum}`);
  if (max !== undefined && min === undefined) parts.push(`≤ ${max}`);
  if (typeof s.exclusiveMaximum === "number") parts.push(`< ${s.exclusiveMaximum}`);
  return [String(s.type), parts.join(", ")].filter(Boolean).join(" ");
}

/** A JSON Schema as a short TypeScript-like type, constraints included. */
function typeText(s: Json, nested = false): string {
  const section = s["x-section"] as { name: string; anchor: string } | undefined;
  if (section) return `[${section.name}](#${section.anchor})`;
  if (typeof s.typeText === "string") return `\`${s.typeText}\``;
  if ("const" in s) return `\`${JSON.stringify(s.const)}\``;
  if (Array.isArray(s.enum)) return s.enum.map((v) => `\`${JSON.stringify(v)}\``).join(" \\| ");
  if (Array.isArray(s.anyOf)) return (s.anyOf as Json[]).map((t) => typeText(t, nested)).join(" \\| ");
  if (Array.isArray(s.type)) return s.type.join(" \\| ");
  switch (s.type) {
    case "array": {
      // Only the outer list says how short it may be: `string[][]`, not `(string[], at least 2)[]`.
      const items = typeText((s.items as Json) ?? {}, true);
      const list = /^[\w`"[\]()#-]+$/.test(items) ? `${items}[]` : `(${items})[]`;
      return !nested && typeof s.minItems === "number" && s.minItems > 0 ? `${list}, at least ${s.minItems}` : list;
    }
    case "object":
      if (s.properties) return `{ ${Object.keys(s.properties as Json).join(", ")} }`;
      return `{ [key]: ${typeText((s.additionalProperties as Json) ?? {}, true)} }`;
    case "integer":
    case "number":
      return numberText(s);
    case "string":
      return typeof s.pattern === "string" ? `string matching \`${s.pattern}\`` : typeof s.minLength === "number" && s.minLength > 0 ? "non-empty string" : "string";
    case "boolean":
    case "null":
      return s.type;
    default:
      return "any";
  }
}

/** `Time between probes. Unit: s.` → description and unit. */
function splitUnit(description: string): { text: string; unit: string } {
  const match = /\s*Unit: ([^\n]+?)\.\s*$/.exec(description);
  return match ? { text: description.slice(0, match.index).trim(), unit: match[1]! } : { text: description.trim(), unit: "" };
}

/** Table cells: one line, pipes escaped (GFM reads `\|` as a pipe in code spans too). */
const cell = (text: string) => text.replace(/\s*\n\s*/g, " ").replace(/(?<!\\)\|/g, "\\|");

function fieldTable(schema: z.ZodType, options: { axes?: boolean } = {}): string {
  const json = jsonSchema(schema);
  const properties = (json.properties ?? {}) as Record<string, Json>;
  const required = new Set((json.required as string[] | undefined) ?? []);
  if (!Object.keys(properties).length) return "No parameters.\n";
  const rows = Object.entries(properties).map(([name, field]) => {
    const { text, unit } = splitUnit(typeof field.description === "string" ? field.description : "");
    if (options.axes) return `| \`${name}\` | ${cell(typeText((field.items as Json) ?? {}))} | ${cell(text)} |`;
    const fallback = required.has(name) ? "required" : "—";
    const def = "default" in field ? `\`${JSON.stringify(field.default)}\`` : fallback;
    return `| \`${name}\` | ${cell(typeText(field))} | ${def} | ${cell(unit) || "—"} | ${cell(text)} |`;
  });
  const head = options.axes ? "| Axis | Each value | Description |\n|---|---|---|" : "| Field | Type | Default | Unit | Description |\n|---|---|---|---|---|";
  return `${head}\n${rows.join("\n")}\n`;
}

/** The whole reference, deterministic: the same schemas always give the same bytes. */
export function renderDslReference(): string {
  const out: string[] = [
    "# Experiment DSL reference",
    "",
    "<!-- Generated by `npm run docs` (scripts/dslReference.ts) from the zod schemas in src/dsl and src/tools/*/index.ts. Do not edit by hand: a test fails when this file differs from the schemas. -->",
    "",
    "An experiment file default-exports `defineExperiment({...})` (see the README, \"Writing an experiment\"). Every field below is checked before anything is created; a wrong one is reported with the file and the field's path.",
    "",
    "- [Experiment](#experiment)",
    "- [Host placement](#host-placement)",
    "- [Axes](#axes)",
    "- [Measure](#measure)",
    "- [Pairs](#pairs)",
    "- [Tools](#tools)",
    ...Object.keys(tools).map((name) => `  - [\`${name}\`](#${name.replace(/[^a-z0-9-]/g, "")})`),
    "",
    "## Experiment",
    "",
    "The object given to `defineExperiment`.",
    "",
    fieldTable(ExperimentShapeSchema),
    "## Host placement",
    "",
    "A host's fields, in `defaults` and in each role of `hosts`. A host's own field wins over the variant's axis value, which wins over `placement`, which wins over `defaults`; an explicit `false` or `null` counts.",
    "",
    fieldTable(HostSpecSchema),
    "## Axes",
    "",
    "Each axis is a list of at least one value; `axes: { accelnet: [false, true], placement: [\"same-zone\", \"cross-zone\"] }` gives four variants. A value may appear once in an axis, except in a zipped axis (see `zip`), where only the combinations must differ.",
    "",
    fieldTable(AxesSchema, { axes: true }),
    "## Measure",
    "",
    "One entry of `measure`: a tool, its parameters and the pairs it measures.",
    "",
    fieldTable(MeasureShapeSchema),
    "## Pairs",
    "",
    "One entry of a measure's `pairs`: the tool's client runs on `from` and measures to `to`. Both must be roles of `hosts` (in every variant, for a hosts function), differ, and a pair may appear once per measure.",
    "",
    "```ts",
    "measure: [",
    "  { tool: \"sockperf\", pairs: [{ from: \"client\", to: \"server\" }, { from: \"client2\", to: \"server\" }] },",
    "  { tool: \"ping\" }, // no pairs: every role but \"server\" measures to \"server\"",
    "]",
    "```",
    "",
    fieldTable(PairSchema),
    "## Tools",
    "",
    "A measure's `params`, per tool. Parameters left out take the default; unknown ones are refused.",
    "",
  ];
  for (const [name, tool] of Object.entries(tools)) {
    out.push(`### \`${name}\``, "", `${tool.description}. Needs: ${tool.binaries.map((b) => `\`${b}\``).join(", ")}.`, "", fieldTable(tool.params));
  }
  return `${out.join("\n").replace(/\n{3,}/g, "\n\n").trimEnd()}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const text = renderDslReference();
  if (process.argv.includes("--check")) {
    let current = "";
    try {
      current = readFileSync(REFERENCE_FILE, "utf8");
    } catch {}
    if (current !== text) {
      process.stderr.write(`${REFERENCE_FILE} is out of date: run \`npm run docs\`\n`);
      process.exitCode = 1;
    }
  } else {
    mkdirSync(dirname(REFERENCE_FILE), { recursive: true });
    writeFileSync(REFERENCE_FILE, text);
    process.stdout.write(`wrote ${REFERENCE_FILE}\n`);
  }
}
