/**
 * Text that came from outside latlab (a tool's output, a remote host's error message) made safe
 * to print on a terminal: nothing in it can move the cursor, change colours, set the window
 * title, write the clipboard (OSC 52), ring the bell, reorder what is shown (bidi controls) or
 * hide text (a carriage return overwriting the line), and no line is longer than a screenful.
 *
 * - ANSI escape sequences are removed whole: CSI (`ESC [ … final`, also the 8-bit CSI 0x9B),
 *   OSC / DCS / SOS / PM / APC strings up to their terminator (BEL or ST), and the short
 *   two- and three-byte escapes (`ESC c`, `ESC ( B`, `ESC 7`…). They carry nothing a reader
 *   needs (tools use them for colour).
 * - Every other C0 control but `\t` and `\n`, DEL and the C1 controls are shown escaped
 *   (`\x07`, `\r`, `\x9b`…), so the reader sees that something was there. `\r\n` becomes `\n`.
 *   An ESC that starts no complete sequence (an unterminated OSC, say) is escaped too.
 * - Unicode format characters that reorder or hide text (bidi embeddings, overrides and
 *   isolates, LRM/RLM/ALM, zero-width characters, BOM, the line/paragraph separators) are
 *   shown as `\u{202e}`.
 * - Lone surrogates become U+FFFD; bytes are decoded as UTF-8 with invalid sequences replaced
 *   by U+FFFD.
 * - Lines longer than `maxLineLength` (default 1000) characters are cut, saying how much was cut.
 *
 * Pure, no I/O. {@link excerpt} is the one-line, shortened form for quoting inside a message.
 */

export interface SanitizeOptions {
  /** Longest line kept, in UTF-16 code units (default 1000); longer ones are cut with a note. */
  maxLineLength?: number;
}

export const DEFAULT_MAX_LINE_LENGTH = 1000;

// String-type sequences (OSC, DCS, SOS, PM, APC) up to BEL or ST (ESC \ or 0x9C), 7- and 8-bit.
const STRING_SEQUENCE = /(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)/g;
// CSI: ESC [ (or 0x9B), parameter bytes 0x30–0x3F, intermediate bytes 0x20–0x2F, final 0x40–0x7E.
const CSI = /(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]/g;
// Other escapes: ESC, intermediate bytes 0x20–0x2F, a final byte 0x30–0x7E (ESC c, ESC ( B, ESC 7).
const SHORT_ESCAPE = /\x1b[ -/]*[0-~]/g;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
// C0 but \t and \n, DEL, C1.
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;
// Bidi and invisible format characters: ALM, zero-width space/non-joiner/joiner, LRM, RLM,
// line and paragraph separators, LRE…RLO, word joiner…invisible plus, LRI…PDI, BOM.
const FORMAT = /[\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;

function hex2(code: number): string {
  return code.toString(16).padStart(2, "0");
}

function escapeControl(c: string): string {
  if (c === "\r") return "\\r";
  return `\\x${hex2(c.charCodeAt(0))}`;
}

/** Cuts `line` to `max` code units (never inside a surrogate pair), noting how much was cut. */
function capLine(line: string, max: number): string {
  if (line.length <= max) return line;
  let end = max;
  const last = line.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${line.slice(0, end)}… [${line.length - end} more characters]`;
}

/**
 * `text` (or UTF-8 bytes) made safe for a terminal, as described in the module comment.
 * Newlines and tabs are kept; everything else that is not printable is removed or escaped.
 */
export function sanitizeForTerminal(text: string | Uint8Array, options: SanitizeOptions = {}): string {
  const max = options.maxLineLength ?? DEFAULT_MAX_LINE_LENGTH;
  if (!(Number.isInteger(max) && max > 0)) throw new RangeError(`sanitizeForTerminal: maxLineLength must be a positive integer, got ${max}`);
  let s = typeof text === "string" ? text : new TextDecoder("utf-8", { fatal: false }).decode(text);
  s = s
    .replace(LONE_SURROGATE, "\uFFFD")
    .replace(STRING_SEQUENCE, "")
    .replace(CSI, "")
    .replace(SHORT_ESCAPE, "")
    .replace(/\r\n/g, "\n")
    .replace(CONTROL, escapeControl)
    .replace(FORMAT, (c) => `\\u{${c.charCodeAt(0).toString(16)}}`);
  return s
    .split("\n")
    .map((line) => capLine(line, max))
    .join("\n");
}

/**
 * A short, one-line, terminal-safe excerpt of `text` for quoting inside a message: sanitised,
 * newlines shown as `\n`, surrounding whitespace trimmed, and at most `max` characters (default
 * 200) followed by `…` and how many characters were left out.
 */
export function excerpt(text: string, max = 200): string {
  if (!(Number.isInteger(max) && max > 0)) throw new RangeError(`excerpt: max must be a positive integer, got ${max}`);
  const flat = sanitizeForTerminal(text, { maxLineLength: Number.MAX_SAFE_INTEGER }).trim().replace(/\n/g, "\\n");
  if (flat.length <= max) return flat;
  let end = max;
  const last = flat.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${flat.slice(0, end)}… (${flat.length - end} more characters)`;
}
