/**
 * What the CLI prints of text users wrote (an experiment's description, its file's name, a
 * variant's values), made safe for the terminal it lands on.
 *
 * Text goes through sanitizeForTerminal (src/tools/terminalText.ts), the one rule latlab already
 * applies to tool output, error messages and `latlab report`: complete ANSI sequences (colour,
 * cursor, window title, OSC 52) are removed whole, since they carry nothing a reader needs; every
 * other control, DEL, the C1 controls and the bidi/invisible format characters are shown escaped
 * (`\x07`, `\u{202e}`), so the reader sees that something is there and where. `list` and `plan`
 * then show a description as `latlab report` shows the same text.
 *
 * JSON cannot drop anything (it must stay the same value): {@link jsonForTerminal} writes the
 * characters JSON.stringify leaves raw but a terminal acts on as `\uXXXX` escapes, which JSON
 * reads back as the same characters.
 */
export { sanitizeForTerminal } from "../../tools/terminalText.ts";

// JSON.stringify escapes C0 and lone surrogates already; it leaves DEL, the C1 controls (0x9B is
// a CSI) and the format characters sanitizeForTerminal escapes (ALM, zero-width characters,
// LRM/RLM, line/paragraph separators, bidi embeddings, overrides and isolates, BOM) as they are.
// Outside strings JSON is ASCII, so each of these is inside a string, where `\uXXXX` is the same.
const RAW_IN_JSON = /[\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;

/** `JSON.stringify(value, null, space)` with nothing a terminal would act on left raw; parses back to the same value. */
export function jsonForTerminal(value: unknown, space = 2): string {
  return JSON.stringify(value, null, space).replace(RAW_IN_JSON, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
