/**
 * What every tool in the registry promises the DSL, the plan and the runner (the ToolModule
 * contract). It iterates the registry, so a tool added there is covered without a new line here;
 * what is particular to one tool stays in that tool's own test file.
 */
import { isDeepStrictEqual } from "node:util";
import { describe, expect, it } from "vitest";
import { tools } from "../../../src/tools/registry.ts";
import type { ToolModule } from "../../../src/tools/types.ts";
import { clientContext, clientOutput, expectToolError, serverContext } from "./helpers.ts";

const registered = Object.entries(tools) as [string, ToolModule][];

/** Durations asked of withDuration: the shortest allowed, fractional ones, and long ones. */
const DURATIONS = [1, 2.6, 7.4, 30, 600];

describe("ToolModule contract", () => {
  it("the registry lists tools", () => {
    expect(registered.length).toBeGreaterThan(0);
  });

  it.each(registered)("%s", (key, tool) => {
    expect(tool.name).toBe(key);

    // params: defaults fill an empty object; an unknown key is a mistake, not ignored.
    const params: unknown = tool.params.parse({});
    const unknownKey = tool.params.safeParse({ notAParameterOfAnyTool: 1 });
    expect(unknownKey.success).toBe(false);
    expect(unknownKey.error?.issues[0]?.code).toBe("unrecognized_keys");

    expect(tool.binaries.length).toBeGreaterThan(0);
    for (const binary of tool.binaries) expect(binary).toMatch(/\S/);

    const client = tool.client(clientContext(), params);
    expect(client.command.trim()).not.toBe("");
    expect(client.timeoutSeconds).toBeGreaterThan(0);
    expect(client.timeoutSeconds).toBeGreaterThanOrEqual(tool.estimateSeconds(params));
    expect(tool.measurementSeconds(params)).toBeGreaterThan(0);
    expect(tool.measurementSeconds(params)).toBeLessThanOrEqual(tool.estimateSeconds(params));

    // withDuration: either the measurement now takes about `seconds` (tools round to their own
    // resolution, whole seconds at worst), or the tool has no duration and returns the params as
    // they were (traceroute). Never a throw for seconds ≥ 1, never params the schema refuses.
    for (const seconds of DURATIONS) {
      const changed: unknown = tool.withDuration(params, seconds);
      expect(tool.params.safeParse(changed).success, `withDuration(${seconds})`).toBe(true);
      if (!isDeepStrictEqual(changed, params)) {
        expect(Math.abs(tool.measurementSeconds(changed) - seconds), `measurementSeconds after withDuration(${seconds})`).toBeLessThanOrEqual(0.5);
      }
      expect(tool.measurementSeconds(changed)).toBeLessThanOrEqual(tool.estimateSeconds(changed));
      expect(tool.client(clientContext(), changed).timeoutSeconds).toBeGreaterThanOrEqual(tool.estimateSeconds(changed));
    }

    const server = tool.server(serverContext({ port: 12345 }), params);
    if (server !== undefined) {
      expect(server.command.trim()).not.toBe("");
      expect(server.port).toBe(12345);
    }

    expectToolError(() => tool.parse(clientOutput(), params), key);
  });
});
