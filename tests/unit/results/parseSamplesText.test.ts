import { describe, expect, it } from "vitest";
import { memoizeSamples, parseSamplesText } from "../../../src/results/readRunFolder.ts";

describe("samples files", () => {
  it("one value a line, blank lines skipped, with or without a last newline", () => {
    expect(parseSamplesText("1.5\n2\n\n300.25\n")).toEqual([1.5, 2, 300.25]);
    expect(parseSamplesText("7\n8")).toEqual([7, 8]);
    expect(parseSamplesText("")).toEqual([]);
    expect(parseSamplesText("\n")).toEqual([]);
    // Whatever the old reader made of a line, this one makes the same.
    const text = "1e3\n-0\n 42 \nNaN\n";
    expect(parseSamplesText(text)).toEqual(text.split("\n").filter(Boolean).map(Number));
  });
  it("a memoized reader reads each cell once", () => {
    const reads: string[] = [];
    const read = memoizeSamples((cell) => (reads.push(cell), [1, 2]));
    expect(read("a")).toBe(read("a"));
    read("b");
    expect(reads).toEqual(["a", "b"]);
  });
});
