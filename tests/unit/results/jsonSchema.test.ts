import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { resultsJsonSchema } from "../../../src/results/jsonSchema.ts";

describe("schema/results.schema.json", () => {
  it("is the one generated from the zod schema (run `npm run schema` after changing it)", () => {
    const committed = JSON.parse(readFileSync(new URL("../../../schema/results.schema.json", import.meta.url), "utf8"));
    expect(committed).toEqual(resultsJsonSchema());
  });

  it("requires the fields users rely on", () => {
    const schema = resultsJsonSchema() as { required: string[] };
    for (const field of ["schemaVersion", "runId", "experiment", "target", "startedAt", "finishedAt", "environment", "variants", "measurements", "teardown"]) {
      expect(schema.required).toContain(field);
    }
  });
});
