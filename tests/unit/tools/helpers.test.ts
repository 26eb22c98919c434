/** The shared scaffolding checks what it claims to: a lenient helper would let every tool test pass. */
import { describe, expect, it } from "vitest";
import { ToolOutputError } from "../../../src/tools/types.ts";
import { capture, expectToolError, fixture, fixtureOutput } from "./helpers.ts";

describe("expectToolError", () => {
  it("returns the ToolOutputError thrown, checking its tool when given", () => {
    const thrown = new ToolOutputError("ping", "no reply");
    expect(expectToolError(() => { throw thrown; })).toBe(thrown);
    expect(expectToolError(() => { throw thrown; }, "ping")).toBe(thrown);
    expect(() => expectToolError(() => { throw thrown; }, "qperf")).toThrow(/expected 'ping' to be 'qperf'/);
  });

  it("fails when nothing, or something else, is thrown", () => {
    expect(() => expectToolError(() => 1)).toThrow(/nothing was thrown/);
    expect(() => expectToolError(() => { throw new RangeError("bad seconds"); })).toThrow(/got RangeError: bad seconds/);
  });
});

describe("fixtures", () => {
  it("reads tests/fixtures/<tool>/<name> and builds ClientOutputs from it", () => {
    expect(fixture("qperf", "version.txt")).toContain("0.4.11");
    const out = capture("ping", "network-unreachable", { exitCode: 2 });
    expect(out.stdout).toBe(fixture("ping", "network-unreachable.stdout"));
    expect(out.stderr).toBe("ping: connect: Network is unreachable\n");
    expect(out.exitCode).toBe(2);
    expect(capture("ping", "public-icmp-req-loss", { stderr: false }).stderr).toBe("");
    const csv = fixtureOutput("sockperf", { files: { "/tmp/ll/x.csv": "tcp-full-rtt.csv" } });
    expect(csv).toEqual({ stdout: "", stderr: "", exitCode: 0, files: { "/tmp/ll/x.csv": fixture("sockperf", "tcp-full-rtt.csv") } });
  });
});
