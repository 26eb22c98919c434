/**
 * Scaffolding shared by the tool tests: fixtures, ClientOutputs built from them, the standard
 * contexts, and the one way to expect a ToolOutputError. What every tool must do is checked once,
 * in contract.test.ts; the per-tool files keep what is particular to each tool.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, vi } from "vitest";
import type { ToolName } from "../../../src/tools/registry.ts";
import { ToolOutputError, type ClientContext, type ClientOutput, type ServerContext } from "../../../src/tools/types.ts";

const FIXTURES = fileURLToPath(new URL("../../fixtures/", import.meta.url));

/** Text of a captured file: tests/fixtures/<tool>/<name>, the folder named as the registry names the tool. */
export function fixture(tool: ToolName, name: string): string {
  return readFileSync(join(FIXTURES, tool, name), "utf8");
}

/** A ClientOutput from text: what is not given is empty, exit code 0. */
export function clientOutput(over: Partial<ClientOutput> = {}): ClientOutput {
  return { stdout: "", stderr: "", exitCode: 0, files: {}, ...over };
}

/**
 * A ClientOutput from fixture files of one tool, each named in full; `files` maps the path on the
 * client host (what ClientSpec.files lists) to a fixture name.
 */
export function fixtureOutput(
  tool: ToolName,
  from: { stdout?: string; stderr?: string; files?: Record<string, string>; exitCode?: number | null },
): ClientOutput {
  const read = (name: string | undefined) => (name === undefined ? "" : fixture(tool, name));
  return clientOutput({
    stdout: read(from.stdout),
    stderr: read(from.stderr),
    exitCode: from.exitCode === undefined ? 0 : from.exitCode,
    files: Object.fromEntries(Object.entries(from.files ?? {}).map(([path, name]) => [path, read(name)])),
  });
}

/**
 * A run captured as `<base>.stdout` and `<base>.stderr`. `stderr: false` for a capture that has
 * only its stdout (public output pasted from elsewhere).
 */
export function capture(
  tool: ToolName,
  base: string,
  opts: { exitCode?: number | null; stderr?: boolean; files?: Record<string, string> } = {},
): ClientOutput {
  return fixtureOutput(tool, {
    stdout: `${base}.stdout`,
    ...(opts.stderr === false ? {} : { stderr: `${base}.stderr` }),
    ...(opts.files === undefined ? {} : { files: opts.files }),
    ...(opts.exitCode === undefined ? {} : { exitCode: opts.exitCode }),
  });
}

/** The server side of a cell: binds every address, port 11001, scratch and assets under /tmp. */
export function serverContext(over: Partial<ServerContext> = {}): ServerContext {
  return { bindAddress: "0.0.0.0", port: 11001, workDir: "/tmp/ll", assetsDir: "/tmp/assets", ...over };
}

/** The client side of the same cell: measures to 198.18.0.2:11001. */
export function clientContext(over: Partial<ClientContext> = {}): ClientContext {
  return { targetAddress: "198.18.0.2", port: 11001, workDir: "/tmp/ll", assetsDir: "/tmp/assets", ...over };
}

/**
 * Runs `fn` and returns the ToolOutputError it throws (of `tool`, when given). The test fails
 * when `fn` returns, or throws anything else.
 */
export const expectToolError = vi.defineHelper((fn: () => unknown, tool?: string): ToolOutputError => {
  let thrown: unknown;
  let threw = false;
  try {
    fn();
  } catch (e) {
    threw = true;
    thrown = e;
  }
  if (!threw) expect.unreachable("expected a ToolOutputError, but nothing was thrown");
  if (!(thrown instanceof ToolOutputError)) {
    expect.unreachable(`expected a ToolOutputError, got ${thrown instanceof Error ? thrown.stack ?? thrown.message : String(thrown)}`);
  }
  if (tool !== undefined) expect(thrown.tool).toBe(tool);
  return thrown;
});

export const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
