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
}

/** Integer (or decimal) field, undefined when empty; throws on anything else. */
function field(value: string, name: string, line: number, decimal = false): number | undefined {
  if (value === "") return undefined;
  const ok = decimal ? /^-?\d+(?:\.\d+)?$/.test(value) : /^-?\d+$/.test(value);
  if (!ok) throw new ToolOutputError(TOOL, `line ${line}: ${name} is not a number: "${value}"`);
  return Number(value);
}

/** Splits the file into records; throws ToolOutputError when it is not latlab_echo's CSV. */
export function readTcpEchoCsv(text: string): TcpEchoReading {
  const lines = text.split("\n");
  // A complete file ends with "\n", leaving "" last; anything else is a line cut mid-write.
  const tail = lines.pop() ?? "";
  const truncated = tail.replace(/\r$/, "") === "" ? undefined : tail;
  if (lines.length === 0) {
    if (truncated !== undefined && TCP_ECHO_HEADER.startsWith(truncated)) return { records: [], truncated };
    if (truncated !== undefined) throw new ToolOutputError(TOOL, `not a latlab_echo CSV (first line: "${truncated.slice(0, 80)}")`);
    return { records: [] };
  }
  const header = lines[0]!.replace(/\r$/, "");
  if (header !== TCP_ECHO_HEADER) {
    throw new ToolOutputError(TOOL, `not a latlab_echo CSV: expected the header "${TCP_ECHO_HEADER}", got "${header.slice(0, 80)}"`);
  }
  const records: TcpEchoRecord[] = [];
  for (let i = 1; i < lines.length; i++) {
    const line = i + 1;
    const raw = lines[i]!.replace(/\r$/, "");
    if (raw === "") continue;
    const cols = raw.split(",");
    if (cols.length !== COLUMNS) {
      throw new ToolOutputError(TOOL, `line ${line}: expected ${COLUMNS} columns, got ${cols.length}: "${raw.slice(0, 120)}"`);
    }
    const [event, seq, time, mono, rtt, count, outage, detail] = cols as [string, string, string, string, string, string, string, string];
    records.push({
      event,
      seq: field(seq, "seq", line),
      time,
      monoNs: field(mono, "mono_ns", line),
      rttNs: field(rtt, "rtt_ns", line),
      count: field(count, "count", line),
      outageMs: field(outage, "outage_ms", line, true),
      detail,
      line,
    });
  }
  return truncated === undefined ? { records } : { records, truncated };
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
    throw new ToolOutputError(TOOL, `the client wrote no CSV${logTail ? `; its log ends: ${logTail}` : ""}`);
  }
  const { records, truncated } = readTcpEchoCsv(input.csv);
  const warnings: string[] = [];
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
        if (r.rttNs === undefined || r.seq === undefined) throw new ToolOutputError(TOOL, `line ${r.line}: probe without seq or rtt_ns`);
        samples.push(r.rttNs / 1000);
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
        if (!/^connect:/.test(r.detail)) warnings.push(`client error at ${r.time}: ${r.detail}`);
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
    throw new ToolOutputError(TOOL, `no probes: ${why}${!firstError && logTail ? `; client log: ${logTail}` : ""}`);
  }

  // A break never followed by a reconnect: the outage lasted until the last record.
  if (openBreakMono !== undefined && lastMono !== undefined) totalOutageNs += Math.max(0, lastMono - openBreakMono);

  breaks.slice(0, MAX_BREAK_WARNINGS).forEach((b, i) => {
    const after = b.reconnectedAt
      ? `reconnected at ${b.reconnectedAt}${b.outageMs !== undefined ? ` after ${b.outageMs} ms` : ""}${b.attempts !== undefined ? ` (${b.attempts} attempt${b.attempts === 1 ? "" : "s"})` : ""}`
      : "not reconnected before the end";
    const which = breaks.length > 1 ? `connection break ${i + 1} of ${breaks.length}` : "connection broke";
    warnings.push(`${which} at ${b.at} after ${b.probesBefore} probes: ${b.error}; ${after}`);
  });
  if (breaks.length > MAX_BREAK_WARNINGS) warnings.push(`… and ${breaks.length - MAX_BREAK_WARNINGS} more connection breaks (see the CSV)`);
  if (lost) warnings.push(`${lost} probe(s) lost: due while there was no working connection`);
  if (skipped) warnings.push(`${skipped} slot(s) skipped: an echo took longer than the interval`);
  if (unknown.size) warnings.push(`ignored unknown record kind(s): ${[...unknown].join(", ")}`);
  if (truncated !== undefined) warnings.push(`ignored a truncated last line (the copy ended mid-write): "${truncated.slice(0, 60)}"`);

  let endedBy: string;
  if (end) {
    const told = detailPairs(end.detail);
    endedBy = told.reason ?? "unknown";
    if (endedBy === "crash") warnings.push(`the client crashed: ${firstError ?? "see its log"}`);
    const mine: Record<string, number> = { probes: samples.length, lost, breaks: breaks.length, reconnects, skipped };
    const differ = Object.entries(mine).filter(([k, v]) => told[k] !== undefined && Number(told[k]) !== v);
    if (differ.length) {
      warnings.push(`the client counted ${differ.map(([k]) => `${k}=${told[k]}`).join(" ")}, the file has ${differ.map(([k, v]) => `${k}=${v}`).join(" ")}: records are missing`);
    }
  } else {
    endedBy = "no end record";
    warnings.push("no end record: the client was killed or collection stopped before it finished");
  }

  const first = breaks[0];
  const last = breaks.at(-1);
  return {
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
  };
}

/** "latlab_echo 1 / Python 3.11.7" from `python3 --version` output (either stream). */
export function parseTcpEchoVersion(output: string, scriptVersion: string): string | undefined {
  const m = output.match(/Python\s+(\d+\.\d+(?:\.\d+)?[A-Za-z0-9+.-]*)/);
  return m ? `latlab_echo ${scriptVersion} / Python ${m[1]}` : undefined;
}

function lastLines(text: string, n: number): string {
  return text.trim().split("\n").slice(-n).join(" | ").trim();
}
