import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { lineProgress } from "../../../src/runner/progress.ts";

describe("progress output", () => {
  it("never passes a tool's escape sequences or control characters to the terminal", () => {
    const out = new PassThrough();
    let text = "";
    out.on("data", (d: Buffer) => (text += d.toString()));
    const p = lineProgress(out);
    p.start(1);
    p.log("server said \x1b]0;pwned\x07\x1b[2J\x1b[31mred\x1b[0m and \x07bell");
    p.cellFinished("v ping a->b", "failed", "ping: garbage \x1b[1;1H\x00\x9b");
    expect(text).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f\x9b]/);
    expect(text).toContain("server said red and");
    expect(text).toMatch(/\[1\/1\] failed v ping a->b: ping: garbage .*\\x00/);
  });
});
