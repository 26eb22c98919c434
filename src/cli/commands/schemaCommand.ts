/**
 * `latlab schema [--write]`: the JSON Schema of results.json, made from its zod schema.
 */
import type { Command } from "commander";

const SCHEMA_FILE = new URL("../../../schema/results.schema.json", import.meta.url);

export function registerSchemaCommand(program: Command): void {
  program
    .command("schema")
    .description("print the JSON Schema of results.json (--write updates schema/results.schema.json)")
    .option("--write", "write it into the repository")
    .action(async (opts: { write?: boolean }) => {
      const { resultsJsonSchema } = await import("../../results/jsonSchema.ts");
      const text = `${JSON.stringify(resultsJsonSchema(), null, 2)}\n`;
      if (opts.write) {
        const { writeFileSync } = await import("node:fs");
        writeFileSync(SCHEMA_FILE, text);
        process.stdout.write(`wrote ${SCHEMA_FILE.pathname}\n`);
      } else process.stdout.write(text);
    });
}
