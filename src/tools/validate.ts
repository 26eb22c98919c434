/**
 * What every parser checks before a number becomes a sample or a reported figure, and how it
 * says what is wrong. Shared by the tools' parse.ts; pure.
 *
 * - A value is checked against a {@link Range}: finite, within physical bounds (an RTT is
 *   above 0 and at most MAX_VALUE µs, a throughput 0…MAX_VALUE Mbit/s, a count a whole number
 *   ≥ 0…). MAX_VALUE is the largest value the statistics accept (results/distribution.ts).
 * - A problem is reported naming the tool (ToolOutputError adds it), the field as the tool
 *   names it (`latency`, `end.sum_received.bits_per_second`), the line for text output and the
 *   offending text, quoted with {@link quote}: sanitised for a terminal, at most ~200 characters.
 * - Each parser decides per field whether a bad value fails the cell (a summary figure, or the
 *   one value that is the result) or is dropped with a warning (one unreadable line among
 *   many samples), and says why where it decides. {@link LineProblems} counts the dropped
 *   lines and words the warning; nothing is dropped without one.
 */
import { MAX_VALUE } from "../results/distribution.ts";
import { excerpt, sanitizeForTerminal } from "./terminalText.ts";
import { ToolOutputError, type ToolResult } from "./types.ts";

export { MAX_VALUE };

/** Characters of tool output quoted in one message at most. */
export const QUOTE_CHARS = 200;
/** Characters quoted per example line in a warning that lists several. */
export const EXAMPLE_CHARS = 100;
/** Unreadable lines shown as examples in one warning. */
export const MAX_EXAMPLES = 3;

/** Tool text to put in a message unquoted (the tool's own error message): sanitised, one line, at most `max` characters. */
export function shorten(text: string, max = QUOTE_CHARS): string {
  return excerpt(text, max);
}

/** `text` quoted for a message: `"…"`, sanitised, one line, at most `max` characters. */
export function quote(text: string, max = QUOTE_CHARS): string {
  return `"${excerpt(text, max)}"`;
}

export interface Range {
  min: number;
  /** Whether `min` itself is allowed (default true). An RTT must be above 0, not 0. */
  minInclusive?: boolean;
  max: number;
  /** Whole numbers only (counts, TTLs, ports). */
  integer?: boolean;
  /** Unit shown in messages ("µs"). */
  unit?: string;
}

/** A round-trip time in µs: above 0 (nothing real takes no time), at most MAX_VALUE. */
export const RTT_US: Range = { min: 0, minInclusive: false, max: MAX_VALUE, unit: "µs" };
/**
 * A time statistic in µs that may be 0 (a standard deviation; a tool's own mean/min printed
 * with fewer digits than a fast loopback needs).
 */
export const TIME_STAT_US: Range = { min: 0, max: MAX_VALUE, unit: "µs" };
/** A throughput in Mbit/s: 0 (nothing got through) to MAX_VALUE. */
export const THROUGHPUT_MBPS: Range = { min: 0, max: MAX_VALUE, unit: "Mbit/s" };
/** A count: a whole number ≥ 0 that a double holds exactly. */
export const COUNT: Range = { min: 0, max: Number.MAX_SAFE_INTEGER, integer: true };
/** A positive count (streams, attempts). */
export const POSITIVE_COUNT: Range = { min: 1, max: Number.MAX_SAFE_INTEGER, integer: true };
/** An IP TTL, i.e. a hop number or hop count: 1…255. */
export const TTL: Range = { min: 1, max: 255, integer: true };
/** A TCP/UDP port. */
export const PORT: Range = { min: 1, max: 65535, integer: true };
/** A percentage 0…100. */
export const PERCENT: Range = { min: 0, max: 100, unit: "%" };
/** Any finite number ≥ 0 (seconds, bytes per second, CPU percentages above 100 on many cores). */
export const NON_NEGATIVE: Range = { min: 0, max: Number.MAX_VALUE };
/** Any finite number. */
export const FINITE: Range = { min: -Number.MAX_VALUE, max: Number.MAX_VALUE };

function show(v: number, unit?: string): string {
  return `${v}${unit ? ` ${unit}` : ""}`;
}

/** Why `v` is outside `range` ("is not a number", "is -5 Mbit/s, below 0 Mbit/s"), or undefined when it is inside. */
export function rangeProblem(v: number, range: Range): string | undefined {
  if (typeof v !== "number" || Number.isNaN(v)) return "is not a number";
  if (!Number.isFinite(v)) return `is ${v > 0 ? "" : "-"}infinite (too large for a number)`;
  if (range.integer && !Number.isInteger(v)) return `is ${v}, not a whole number`;
  if (range.integer && !Number.isSafeInteger(v)) return `is ${v}, too large to count exactly`;
  if (v < range.min) return `is ${show(v, range.unit)}, below ${show(range.min, range.unit)}`;
  if (v === range.min && range.minInclusive === false) return `is ${show(v, range.unit)}; it must be above ${show(range.min, range.unit)}`;
  if (v > range.max) return `is ${show(v, range.unit)}, above the limit of ${show(range.max, range.unit)}`;
  return undefined;
}

/** Where a value was read: the line (1-based) and its text, for text output. */
export interface Where {
  line?: number;
  /** The offending text (the line, or the value as printed); quoted shortened and sanitised. */
  text?: string;
  /** Which stream or file, when the tool has several ("stderr", "full log"). */
  source?: string;
}

/** "line 17 of the full log: " / "line 3: " / "" */
export function wherePrefix(where: Where): string {
  if (where.line === undefined) return where.source ? `${where.source}: ` : "";
  return `line ${where.line}${where.source ? ` of ${where.source}` : ""}: `;
}

/** `line 3: latency is infinite (…): "latency = 1e400 us"` (ToolOutputError prefixes the tool). */
export function problemText(field: string, problem: string, where: Where = {}, max = QUOTE_CHARS): string {
  return `${wherePrefix(where)}${field} ${problem}${where.text !== undefined ? `: ${quote(where.text, max)}` : ""}`;
}

export function valueError(tool: string, field: string, problem: string, where: Where = {}): ToolOutputError {
  return new ToolOutputError(tool, problemText(field, problem, where));
}

/** `v` when it is inside `range`; otherwise throws a ToolOutputError naming tool, field and where. */
export function checked(tool: string, field: string, v: number, range: Range, where: Where = {}): number {
  const problem = rangeProblem(v, range);
  if (problem !== undefined) throw valueError(tool, field, problem, where);
  return v;
}

/**
 * A number as tools print it: optional sign, digits, optional fraction and exponent. Anything
 * else (`abc`, `nan`, `inf`, `1.2.3`, an empty string) is NaN, never a partial read.
 */
export function strictNumber(text: string): number {
  const t = text.trim();
  return /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/.test(t) ? Number(t) : Number.NaN;
}

/** 1-based line number of character `index` in `text`. */
export function lineAt(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf("\n"); i >= 0 && i < index; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

/** The text of the line holding character `index`. */
export function lineTextAt(text: string, index: number): string {
  const start = text.lastIndexOf("\n", index - 1) + 1;
  const end = text.indexOf("\n", index);
  return text.slice(start, end < 0 ? text.length : end);
}

export interface LineProblem {
  line: number | undefined;
  text: string;
  problem: string;
}

/**
 * Lines a parser recognised as sample lines but could not read (or whose value is impossible),
 * and dropped. It words the warning ("ping: 1 of 40 reply lines could not be read (line 17:
 * time is not a number: "…")") and fails the cell when they are more than half of all such
 * lines: then the output is not what the parser knows, and what is left is no sample of the run.
 */
export class LineProblems {
  readonly list: LineProblem[] = [];
  readonly #tool: string;
  readonly #what: string;
  readonly #source: string | undefined;

  /** `what`: the kind of line, plural ("reply lines", "full-log rows"). */
  constructor(tool: string, what: string, source?: string) {
    this.#tool = tool;
    this.#what = what;
    this.#source = source;
  }

  /** `line` undefined for output without lines (JSON: the problem names the field's path). */
  add(line: number | undefined, text: string, problem: string): void {
    this.list.push({ line, text, problem });
  }

  get count(): number {
    return this.list.length;
  }

  #examples(): string {
    const shown = this.list.slice(0, MAX_EXAMPLES).map((p) => `${wherePrefix({ line: p.line })}${p.problem}: ${quote(p.text, EXAMPLE_CHARS)}`);
    const more = this.list.length > MAX_EXAMPLES ? `; … ${this.list.length - MAX_EXAMPLES} more` : "";
    return `${shown.join("; ")}${more}`;
  }

  /** The warning for `total` lines of this kind (read + unreadable), or undefined when all were read. */
  warning(total: number): string | undefined {
    if (this.list.length === 0) return undefined;
    const of = this.#source ? ` of ${this.#source}` : "";
    return `${this.#tool}: ${this.list.length} of ${total} ${this.#what}${of} could not be read and ${this.list.length === 1 ? "was" : "were"} left out (${this.#examples()})`;
  }

  /** Throws when more than half of the `total` lines could not be read (all of them, for one line). */
  failIfMost(total: number): void {
    if (this.list.length === 0 || this.list.length * 2 <= total) return;
    const of = this.#source ? ` of ${this.#source}` : "";
    throw new ToolOutputError(
      this.#tool,
      `${this.list.length} of ${total} ${this.#what}${of} could not be read (${this.#examples()}); the output is not ${this.#tool}'s as latlab knows it`,
    );
  }
}

/**
 * The result with every string made terminal-safe: warnings (which quote tool text: ping's
 * messages, a host's error, a hop's address…) and the string values of `reported`. The last
 * line of defence; parsers also quote tool text with {@link quote}.
 */
export function sanitizedResult(result: ToolResult): ToolResult {
  const out: ToolResult = { ...result, warnings: result.warnings.map((w) => sanitizeForTerminal(w)) };
  if (result.reported) {
    const reported: NonNullable<ToolResult["reported"]> = { ...result.reported };
    for (const [k, v] of Object.entries(reported)) if (typeof v === "string") reported[k] = excerpt(v, QUOTE_CHARS);
    out.reported = reported;
  }
  return out;
}
