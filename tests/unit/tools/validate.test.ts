import { describe, expect, it } from "vitest";
import { ToolOutputError } from "../../../src/tools/types.ts";
import {
  checked,
  COUNT,
  LineProblems,
  lineAt,
  lineTextAt,
  quote,
  rangeProblem,
  RTT_US,
  sanitizedResult,
  strictNumber,
  THROUGHPUT_MBPS,
  TTL,
} from "../../../src/tools/validate.ts";
import { expectToolError } from "./helpers.ts";

describe("rangeProblem", () => {
  it("accepts what is in range and says why what is not", () => {
    expect(rangeProblem(0.021, RTT_US)).toBeUndefined();
    expect(rangeProblem(1e9, RTT_US)).toBeUndefined();
    expect(rangeProblem(0, THROUGHPUT_MBPS)).toBeUndefined();
    expect(rangeProblem(Number.NaN, RTT_US)).toBe("is not a number");
    expect(rangeProblem(Number.POSITIVE_INFINITY, RTT_US)).toBe("is infinite (too large for a number)");
    expect(rangeProblem(Number.NEGATIVE_INFINITY, RTT_US)).toBe("is -infinite (too large for a number)");
    expect(rangeProblem(0, RTT_US)).toBe("is 0 µs; it must be above 0 µs");
    expect(rangeProblem(-5, THROUGHPUT_MBPS)).toBe("is -5 Mbit/s, below 0 Mbit/s");
    expect(rangeProblem(1.5e9, RTT_US)).toBe("is 1500000000 µs, above the limit of 1000000000 µs");
    expect(rangeProblem(2.5, COUNT)).toBe("is 2.5, not a whole number");
    expect(rangeProblem(2 ** 60, COUNT)).toBe(`is ${2 ** 60}, too large to count exactly`);
    expect(rangeProblem(256, TTL)).toBe("is 256, above the limit of 255");
  });
});

describe("strictNumber", () => {
  it("reads numbers as tools print them and nothing else, never a prefix", () => {
    expect(strictNumber(" 0.115 ")).toBe(0.115);
    expect(strictNumber("-5")).toBe(-5);
    expect(strictNumber("1e400")).toBe(Number.POSITIVE_INFINITY);
    expect(strictNumber(".5")).toBe(0.5);
    for (const bad of ["", "abc", "nan", "NaN", "inf", "Infinity", "1.2.3", "12x4", "0x10", "1e", "--"]) expect(strictNumber(bad), bad).toBeNaN();
  });
});

describe("where", () => {
  it("finds the line of an index and its text", () => {
    const text = "one\ntwo\nthree";
    expect(lineAt(text, 0)).toBe(1);
    expect(lineAt(text, 4)).toBe(2);
    expect(lineAt(text, text.indexOf("three") + 2)).toBe(3);
    expect(lineTextAt(text, text.indexOf("wo"))).toBe("two");
    expect(lineTextAt(text, text.length - 1)).toBe("three");
  });

  it("checked: the value, or an error naming tool, field, line and text", () => {
    expect(checked("ping", "time", 5, RTT_US)).toBe(5);
    const e = expectToolError(() => checked("ping", "time", -1, RTT_US, { line: 3, text: "time=-0.001 ms" }), "ping");
    expect(e.message).toBe('ping: line 3: time is -1 µs, below 0 µs: "time=-0.001 ms"');
  });

  it("quote: short, one line, terminal-safe", () => {
    expect(quote("a\nb\x1b[31m")).toBe('"a\\nb"');
    expect(quote("x".repeat(300))).toBe(`"${"x".repeat(200)}… (100 more characters)"`);
  });
});

describe("LineProblems", () => {
  it("no problems: no warning, no failure", () => {
    const p = new LineProblems("ping", "reply lines");
    expect(p.warning(40)).toBeUndefined();
    expect(() => p.failIfMost(40)).not.toThrow();
  });

  it("counts, shows three examples and how many more, fails past half", () => {
    const p = new LineProblems("sockperf", "full-log rows");
    for (let i = 1; i <= 5; i++) p.add(10 + i, `${i}, 1, 2, abc`, "rtt is not a number");
    expect(p.warning(20)).toBe(
      'sockperf: 5 of 20 full-log rows could not be read and were left out (line 11: rtt is not a number: "1, 1, 2, abc"; line 12: rtt is not a number: "2, 1, 2, abc"; line 13: rtt is not a number: "3, 1, 2, abc"; … 2 more)',
    );
    expect(() => p.failIfMost(10)).not.toThrow(); // exactly half: still a warning
    expect(() => p.failIfMost(9)).toThrow(ToolOutputError);
    expect(() => p.failIfMost(9)).toThrow(/^sockperf: 5 of 9 full-log rows could not be read \(line 11: /);
  });

  it("without line numbers (JSON): the problem names the path", () => {
    const p = new LineProblems("iperf3", "intervals");
    p.add(undefined, "null", "intervals[2].sum.bits_per_second is not a number");
    expect(p.warning(3)).toBe('iperf3: 1 of 3 intervals could not be read and was left out (intervals[2].sum.bits_per_second is not a number: "null")');
  });
});

describe("sanitizedResult and ToolOutputError", () => {
  it("make warnings, reported strings and error messages terminal-safe", () => {
    const r = sanitizedResult({ metric: "rtt", unit: "us", samples: [1], reported: { hop1Name: "evil\x1b]0;t\x07.example", count: 3 }, warnings: ["ping: x\x1b[2Jy\r"] });
    expect(r.warnings).toEqual(["ping: xy\\r"]);
    expect(r.reported).toEqual({ hop1Name: "evil.example", count: 3 });
    expect(new ToolOutputError("qperf", "a\x07b\x1b[1;1H").message).toBe("qperf: a\\x07b");
  });
});
