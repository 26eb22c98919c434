import { z } from "zod";
import { ResultsSchema, SCHEMA_VERSION } from "./schema.ts";

/** The JSON Schema of results.json, generated from the zod schema so the two never drift. */
export function resultsJsonSchema(): Record<string, unknown> {
  return {
    $id: `https://latlab.dev/schema/results-v${SCHEMA_VERSION}.json`,
    title: "latlab results",
    ...z.toJSONSchema(ResultsSchema, { target: "draft-2020-12" }),
  };
}
