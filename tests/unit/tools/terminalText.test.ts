import { describe, expect, it } from "vitest";
import { excerpt, sanitizeForTerminal } from "../../../src/tools/terminalText.ts";

/** True when `s` holds nothing a terminal would act on: no C0 but \t \n, no DEL, no C1, no bidi/invisible format characters. */
const inert = (s: string) => !/[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/.test(s);

describe("sanitizeForTerminal", () => {
  it("leaves ordinary text alone, newlines, tabs and non-ASCII included", () => {
    const text = "rtt min/avg/max/mdev = 0.021/0.038/0.048/0.005 ms\n\tlatency = 43.9 µs — ok ✓ 日本";
    expect(sanitizeForTerminal(text)).toBe(text);
  });

  it("removes colour codes (sockperf 3.7 prints them around its summary)", () => {
    expect(sanitizeForTerminal("\x1b[2;35msockperf: ====> avg-rtt=17.081\x1b[0m")).toBe("sockperf: ====> avg-rtt=17.081");
  });

  it("removes CSI sequences of every kind: cursor moves, erase, private modes, 8-bit CSI", () => {
    expect(sanitizeForTerminal("a\x1b[2Jb\x1b[1;1Hc\x1b[?25ld\x1b[Ke")).toBe("abcde");
    expect(sanitizeForTerminal("a\u009b31mb")).toBe("ab");
  });

  it("removes OSC, DCS, APC strings up to BEL or ST (title, clipboard, hyperlinks)", () => {
    expect(sanitizeForTerminal("x\x1b]0;pwned title\x07y")).toBe("xy");
    expect(sanitizeForTerminal("x\x1b]52;c;ZWNobyBoaQ==\x1b\\y")).toBe("xy");
    expect(sanitizeForTerminal("\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\")).toBe("link");
    expect(sanitizeForTerminal("x\x1bPq#0;2;0;0;0\x1b\\y")).toBe("xy");
    expect(sanitizeForTerminal("x\x1b_app\x9cy")).toBe("xy");
  });

  it("removes short escapes (reset, charset, save cursor)", () => {
    expect(sanitizeForTerminal("a\x1bcb\x1b(Bc\x1b7d")).toBe("abcd");
  });

  it("escapes an ESC that starts no complete sequence, so an unterminated OSC cannot swallow the text", () => {
    const s = sanitizeForTerminal("before\x1b]0;no terminator\nafter\x1b");
    expect(inert(s)).toBe(true);
    expect(s).toContain("after");
    expect(s).toContain("no terminator");
    expect(s.endsWith("\\x1b")).toBe(true);
  });

  it("shows other control characters escaped; keeps \\n and \\t; turns \\r\\n into \\n", () => {
    expect(sanitizeForTerminal("bell\x07 nul\x00 bs\x08 del\x7f c1\x85")).toBe("bell\\x07 nul\\x00 bs\\x08 del\\x7f c1\\x85");
    expect(sanitizeForTerminal("line 1\r\nline 2\r\n")).toBe("line 1\nline 2\n");
    // A lone CR would let the rest of the line overwrite what came before: shown, not obeyed.
    expect(sanitizeForTerminal("real error\rfake: all fine")).toBe("real error\\rfake: all fine");
    expect(sanitizeForTerminal("a\tb\nc")).toBe("a\tb\nc");
  });

  it("shows bidi and invisible format characters escaped (no reordering of what is displayed)", () => {
    expect(sanitizeForTerminal("ok\u202eevil\u202c")).toBe("ok\\u{202e}evil\\u{202c}");
    expect(sanitizeForTerminal("a\u200bb\u2066c\u2069\ufeff")).toBe("a\\u{200b}b\\u{2066}c\\u{2069}\\u{feff}");
    expect(sanitizeForTerminal("x\u2028y")).toBe("x\\u{2028}y");
  });

  it("replaces lone surrogates, and invalid UTF-8 in bytes, with U+FFFD", () => {
    expect(sanitizeForTerminal("a\uD800b\uDC00c")).toBe("a\uFFFDb\uFFFDc");
    expect(sanitizeForTerminal("😀")).toBe("😀");
    expect(sanitizeForTerminal(new Uint8Array([0x6f, 0x6b, 0xff, 0xfe, 0x20, 0xe2, 0x9c, 0x93]))).toBe("ok\uFFFD\uFFFD ✓");
    expect(sanitizeForTerminal(new Uint8Array([0x61, 0x1b, 0x5b, 0x33, 0x31, 0x6d, 0x62]))).toBe("ab");
  });

  it("caps very long lines, saying how much was cut, without splitting a surrogate pair", () => {
    const s = sanitizeForTerminal(`${"x".repeat(5000)}\nshort`);
    expect(s).toBe(`${"x".repeat(1000)}… [4000 more characters]\nshort`);
    expect(sanitizeForTerminal("abcdef", { maxLineLength: 4 })).toBe("abcd… [2 more characters]");
    expect(sanitizeForTerminal("abc😀def", { maxLineLength: 4 })).toBe("abc… [5 more characters]");
    expect(() => sanitizeForTerminal("x", { maxLineLength: 0 })).toThrow(RangeError);
  });

  it("never lets anything through a terminal acts on (every byte value, in every position)", () => {
    let all = "";
    for (let i = 0; i < 0x100; i++) all += `${String.fromCharCode(i)}x${String.fromCharCode(i)}`;
    const s = sanitizeForTerminal(`${all}\x1b[${all}\x1b]${all}`);
    expect(inert(s)).toBe(true);
  });
});

describe("excerpt", () => {
  it("is one line, sanitised, trimmed", () => {
    expect(excerpt("  first\nsecond\x1b[31m red\x07 \n")).toBe("first\\nsecond red\\x07");
  });

  it("keeps at most max characters and says how many were left out", () => {
    expect(excerpt("a".repeat(250))).toBe(`${"a".repeat(200)}… (50 more characters)`);
    expect(excerpt("abcdef", 3)).toBe("abc… (3 more characters)");
    expect(excerpt("abc", 3)).toBe("abc");
    expect(excerpt("ab😀", 3)).toBe("ab… (2 more characters)");
    expect(() => excerpt("x", 0)).toThrow(RangeError);
  });

  it("a megabyte of garbage becomes a short quote", () => {
    const garbage = "\x1b]0;t\x07".concat("\x00\xff garbage ".repeat(100_000));
    const e = excerpt(garbage);
    expect(e.length).toBeLessThan(260);
    expect(inert(e)).toBe(true);
  });
});
