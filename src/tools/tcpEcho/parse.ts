/**
 * Pure parser for the CSV latlab_echo.py writes in client mode (see the script's docstring and
 * tests/fixtures/tcp-echo/README.md). One line per event, always 8 columns:
 *
 *   event,seq,time,mono_ns,rtt_ns,count,outage_ms,detail
 *
 * Every line reaches the file whole (one write() each), but the runner may copy the file while
 * the client is mid-write at the very end, so a last line without its newline is ignored.
 */
import { ToolOutputError, type ToolResult } from "../types.ts";
import { COUNT, LineProblems, MAX_VALUE, NON_NEGATIVE, quote, rangeProblem, sanitizedResult, shorten, type Range } from "../validate.ts";

const TOOL = "tcp-echo";

export const TCP_ECHO_HEADER = "event,seq,time,mono_ns,rtt_ns,count,outage_ms,detail";
const COLUMNS = 8;
const EVENTS = new Set(["start", "connect", "probe", "skip", "lost", "break", "reconnect", "error", "end"]);
/** Break warnings past this many are summed up in one line (a flapping link over 11 h). */
export const MAX_BREAK_WARNINGS = 50;

export interface TcpEchoRecord {
  event: string;
  seq: number | undefined;
  /** Wall clock, ISO 8601 UTC. */
  time: string;
  /** Monotonic ns since the schedule origin. */
  monoNs: number | undefined;
  rttNs: number | undefined;
  count: number | undefined;
  outageMs: number | undefined;
  detail: string;
  /** 1-based line number in the file. */
  line: number;
}

export interface TcpEchoBreak {
  at: string;
  error: string;
  /** Probes measured before this break. */
  probesBefore: number;
  reconnectedAt?: string;
  outageMs?: number;
  attempts?: number;
}

export interface TcpEchoReading {
  records: TcpEchoRecord[];
  /** The unterminated last line, if the copy ended mid-write. */
  truncated?: string;
  /**
   * Complete lines that could not be read (wrong number of columns, a field that is not a
   * number or is impossible, a probe without its seq or RTT): left out of `records`.
   */
  unreadable: LineProblems;
  /** Complete data lines (records plus unreadable), the header not counted. */
  lines: number;
}

/** An RTT in ns: at least 1 ns, at most the statistics' limit (MAX_VALUE µs). */
const RTT_NS: Range = { min: 1, max: MAX_VALUE * 1000, integer: true };
const OUTAGE_MS: Range = NON_NEGATIVE;

class Unreadable extends Error {}

/** Integer (or decimal) field, undefined when empty; throws Unreadable (the line's problem) on anything else. */
function field(value: string, name: string, range: Range, decimal = false): number | undefined {
  if (value === "") return undefined;
  const ok = decimal ? /^-?\d+(?:\.\d+)?$/.test(value) : /^-?\d+$/.test(value);
  if (!ok) throw new Unreadable(`${name} is not a number`);
  const problem = rangeProblem(Number(value), range);
  if (problem !== undefined) throw new Unreadable(`${name} ${problem}`);
  return Number(value);
}

/**
 * Splits the file into records; throws ToolOutputError when it is not latlab_echo's CSV.
 *
 * The script writes each line whole, so a line that cannot be read mid-file means the copy was
 * damaged. It is one record among thousands (an 11-hour run has ~800,000): it is left out and
 * counted in `unreadable`, for parseTcpEcho to warn about — failing would throw away hours of
 * probes for one line. parseTcpEcho fails the cell when most lines cannot be read.
 */
export function readTcpEchoCsv(text: string): TcpEchoReading {
  const lines = text.split("\n");
  // A complete file ends with "\n", leaving "" last; anything else is a line cut mid-write.
  const tail = lines.pop() ?? "";
  const truncated = tail.replace(/\r$/, "") === "" ? undefined : tail;
  const unreadable = new LineProblems(TOOL, "lines");
  if (lines.length === 0) {
    if (truncated !== undefined && TCP_ECHO_HEADER.startsWith(truncated)) return { records: [], truncated, unreadable, lines: 0 };
    if (truncated !== undefined) throw new ToolOutputError(TOOL, `not a latlab_echo CSV (first line: ${quote(truncated, 80)})`);
    return { records: [], unreadable, lines: 0 };
  }
  const header = lines[0]!.replace(/\r$/, "");
  if (header !== TCP_ECHO_HEADER) {
    throw new ToolOutputError(TOOL, `not a latlab_echo CSV: expected the header "${TCP_ECHO_HEADER}", got ${quote(header, 80)}`);
  }
  const records: TcpEchoRecord[] = [];
  let count = 0;
  for (let i = 1; i < lines.length; i++) {
    const line = i + 1;
    const raw = lines[i]!.replace(/\r$/, "");
    if (raw === "") continue;
    count++;
    const cols = raw.split(",");
    if (cols.length !== COLUMNS) {
      unreadable.add(line, raw, `expected ${COLUMNS} columns, got ${cols.length}`);
      continue;
    }
    const [event, seq, time, mono, rtt, n, outage, detail] = cols as [string, string, string, string, string, string, string, string];
    try {
      const record: TcpEchoRecord = {
        event,
        seq: field(seq, "seq", COUNT),
        time,
        monoNs: field(mono, "mono_ns", COUNT),
        rttNs: field(rtt, "rtt_ns", RTT_NS),
        count: field(n, "count", COUNT),
        outageMs: field(outage, "outage_ms", OUTAGE_MS, true),
        detail,
        line,
      };
      if (event === "probe" && (record.rttNs === undefined || record.seq === undefined)) throw new Unreadable("probe without seq or rtt_ns");
      records.push(record);
    } catch (e) {
      if (!(e instanceof Unreadable)) throw e;
      unreadable.add(line, raw, e.message);
    }
  }
  return truncated === undefined ? { records, unreadable, lines: count } : { records, truncated, unreadable, lines: count };
}

/** `key=value` pairs of a detail field (start, end). */
export function detailPairs(detail: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const word of detail.split(" ")) {
    const eq = word.indexOf("=");
    if (eq > 0) out[word.slice(0, eq)] = word.slice(eq + 1);
  }
  return out;
}

export interface TcpEchoInput {
  /** The client's CSV (ClientSpec.detached.outputFile), undefined when it was not collected. */
  csv: string | undefined;
  /** The client's stderr log, quoted when there is nothing else to go on. */
  log?: string | undefined;
}

const ms = (ns: number) => Math.round(ns / 1e3) / 1e3;

/**
 * Samples: every probe's RTT in µs, in file order. `reported`: probes, lost, breaks,
 * reconnects, totalOutageMs, firstBreakAt, lastBreakAt, skippedSlots, probesBeforeFirstBreak,
 * endedBy. Warnings: one per connection break (time, error, how long until reconnected).
 */
export function parseTcpEcho(input: TcpEchoInput): ToolResult {
  const logTail = lastLines(input.log ?? "", 5);
  if (input.csv === undefined || input.csv === "") {
    throw new ToolOutputError(TOOL, `the client wrote no CSV${logTail ? `; its log ends: ${shorten(logTail)}` : ""}`);
  }
  const { records, truncated, unreadable, lines } = readTcpEchoCsv(input.csv);
  unreadable.failIfMost(lines);
  const warnings: string[] = [];
  const unreadableWarning = unreadable.warning(lines);
  const samples: number[] = [];
  const breaks: TcpEchoBreak[] = [];
  let lost = 0;
  let skipped = 0;
  let reconnects = 0;
  let totalOutageNs = 0;
  let firstError: string | undefined;
  let end: TcpEchoRecord | undefined;
  let lastMono: number | undefined;
  let openBreakMono: number | undefined;
  const unknown = new Set<string>();

  for (const r of records) {
    if (r.monoNs !== undefined && r.event !== "lost") lastMono = r.monoNs;
    switch (r.event) {
      case "probe":
        samples.push(r.rttNs! / 1000);
        break;
      case "lost":
        lost++;
        break;
      case "skip":
        skipped += r.count ?? 0;
        break;
      case "break":
        breaks.push({ at: r.time, error: r.detail, probesBefore: samples.length });
        firstError ??= r.detail;
        openBreakMono = r.monoNs;
        break;
      case "reconnect": {
        reconnects++;
        const b = breaks.at(-1);
        if (b && b.reconnectedAt === undefined) {
          b.reconnectedAt = r.time;
          if (r.outageMs !== undefined) b.outageMs = r.outageMs;
          if (r.count !== undefined) b.attempts = r.count;
        }
        if (r.outageMs !== undefined) totalOutageNs += r.outageMs * 1e6;
        openBreakMono = undefined;
        break;
      }
      case "connect":
        if (r.outageMs !== undefined) {
          warnings.push(`the first connection took ${r.outageMs} ms and ${r.count ?? "?"} attempts (${firstError ?? "connect failed"})`);
        }
        break;
      case "error":
        firstError ??= r.detail;
        if (!/^connect:/.test(r.detail)) warnings.push(`client error at ${shorten(r.time, 40)}: ${shorten(r.detail)}`);
        break;
      case "end":
        end = r;
        break;
      case "start":
        break;
      default:
        if (!EVENTS.has(r.event)) unknown.add(r.event);
    }
  }

  if (samples.length === 0) {
    const why = firstError ?? (end ? `no probe before the end (${end.detail})` : "no probe recorded");
    throw new ToolOutputError(TOOL, shorten(`no probes: ${why}${!firstError && logTail ? `; client log: ${logTail}` : ""}${unreadableWarning ? `; ${unreadableWarning}` : ""}`, 600));
  }
  if (unreadableWarning) warnings.push(unreadableWarning);

  // A break never followed by a reconnect: the outage lasted until the last record.
  if (openBreakMono !== undefined && lastMono !== undefined) totalOutageNs += Math.max(0, lastMono - openBreakMono);

  breaks.slice(0, MAX_BREAK_WARNINGS).forEach((b, i) => {
    const after = b.reconnectedAt
      ? `reconnected at ${b.reconnectedAt}${b.outageMs !== undefined ? ` after ${b.outageMs} ms` : ""}${b.attempts !== undefined ? ` (${b.attempts} attempt${b.attempts === 1 ? "" : "s"})` : ""}`
      : "not reconnected before the end";
    const which = breaks.length > 1 ? `connection break ${i + 1} of ${breaks.length}` : "connection broke";
    warnings.push(`${which} at ${shorten(b.at, 40)} after ${b.probesBefore} probes: ${shorten(b.error)}; ${after}`);
  });
  if (breaks.length > MAX_BREAK_WARNINGS) warnings.push(`… and ${breaks.length - MAX_BREAK_WARNINGS} more connection breaks (see the CSV)`);
  if (lost) warnings.push(`${lost} probe(s) lost: due while there was no working connection`);
  if (skipped) warnings.push(`${skipped} slot(s) skipped: an echo took longer than the interval`);
  if (unknown.size) warnings.push(`ignored unknown record kind(s): ${shorten([...unknown].join(", "))}`);
  if (truncated !== undefined) warnings.push(`ignored a truncated last line (the copy ended mid-write): ${quote(truncated, 60)}`);

  let endedBy: string;
  if (end) {
    const told = detailPairs(end.detail);
    endedBy = told.reason ?? "unknown";
    if (endedBy === "crash") warnings.push(`the client crashed: ${shorten(firstError ?? "see its log")}`);
    const mine: Record<string, number> = { probes: samples.length, lost, breaks: breaks.length, reconnects, skipped };
    const differ = Object.entries(mine).filter(([k, v]) => told[k] !== undefined && Number(told[k]) !== v);
    if (differ.length) {
      const why = unreadable.count ? `records are missing or unreadable (${unreadable.count} line${unreadable.count === 1 ? "" : "s"} left out)` : "records are missing";
      warnings.push(`the client counted ${differ.map(([k]) => `${k}=${told[k]}`).join(" ")}, the file has ${differ.map(([k, v]) => `${k}=${v}`).join(" ")}: ${why}`);
    }
  } else {
    endedBy = "no end record";
    warnings.push("no end record: the client was killed or collection stopped before it finished");
  }

  const first = breaks[0];
  const last = breaks.at(-1);
  return sanitizedResult({
    metric: "rtt",
    unit: "us",
    samples,
    reported: {
      probes: samples.length,
      lost,
      breaks: breaks.length,
      reconnects,
      totalOutageMs: ms(totalOutageNs),
      firstBreakAt: first?.at,
      lastBreakAt: last?.at,
      probesBeforeFirstBreak: first?.probesBefore,
      skippedSlots: skipped,
      endedBy,
    },
    warnings,
  });
}

/** "latlab_echo 1 / Python 3.11.7" from `python3 --version` output (either stream). */
export function parseTcpEchoVersion(output: string, scriptVersion: string): string | undefined {
  const m = output.match(/Python\s+(\d+\.\d+(?:\.\d+)?[A-Za-z0-9+.-]*)/);
  return m ? `latlab_echo ${scriptVersion} / Python ${m[1]}` : undefined;
}

function lastLines(text: string, n: number): string {
  return text.trim().split("\n").slice(-n).join(" | ").trim();
}
