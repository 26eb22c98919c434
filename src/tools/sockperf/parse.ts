/**
 * Pure parsers for sockperf output (ping-pong client summary, --full-log CSV, --version).
 *
 * Formats seen (see tests/fixtures/sockperf/README.md for the captured texts):
 *  - 2.x/3.0–3.5: `====> avg-lat=  6.703 (std-dev=2.345)`; the value may be space-padded.
 *  - 3.6/3.7:     `====> avg-latency=65.420 (std-dev=45.757)` or `avg-rtt=` with --full-rtt,
 *                 wrapped in ANSI colour codes (`\x1b[2;35m … \x1b[0m`).
 *  - 3.8+:        `avg-rtt=11.198 (std-dev=0.540, mean-ad=…, median-ad=…, siqr=…, cv=…,
 *                 std-error=…, 99.0% ci=[11.192, 11.204])`.
 * Without --full-rtt every printed number is RTT/2 ("latency"); with it, RTT. Everything
 * returned here is RTT in microseconds.
 *
 * sockperf 3.7 exits 0 even when it fails (connection refused, bad arguments; a TCP server
 * killed mid-run gives 7), and prints everything on stdout, so failure is recognised from the
 * text alone. 3.7 is also what Ubuntu 24.04 ships (3.7-1).
 */
import { ToolOutputError, type ToolResult } from "../types.ts";
import {
  checked,
  COUNT,
  FINITE,
  LineProblems,
  lineAt,
  lineTextAt,
  MAX_VALUE,
  NON_NEGATIVE,
  PERCENT,
  quote,
  rangeProblem,
  RTT_US,
  sanitizedResult,
  shorten,
  strictNumber,
  TIME_STAT_US,
  type Range,
} from "../validate.ts";

const TOOL = "sockperf";

/** What the numbers sockperf printed are: full round trips, or RTT/2. */
export type SockperfPrinted = "rtt" | "one-way";

export type SockperfReported = NonNullable<ToolResult["reported"]>;

export interface SockperfSummary {
  printed: SockperfPrinted;
  /** RTT/µs values, already normalised (×2 when printed one-way). */
  reported: SockperfReported;
  warnings: string[];
}

export interface SockperfFullLog {
  column: SockperfPrinted;
  /** RTT in µs, one per row that could be read, in file order. */
  samples: number[];
  /** Rows that could not be read (left out of samples), with their line numbers in the file. */
  unreadable: LineProblems;
  /** Rows in the file: samples plus unreadable. */
  rows: number;
}

// ANSI SGR sequences ("\x1b[2;35m", "\x1b[0m"); also the bare "[2;35m" left when ESC was lost.
const ANSI = /\x1b\[[0-9;]*m/g;
const BARE_SGR = /\[(?:\d+;)*\d+m/g;

/** Removes colour codes and carriage returns. */
export function stripAnsi(text: string): string {
  return text.replace(ANSI, "").replace(BARE_SGR, "").replace(/\r/g, "");
}

/** Rounds away float noise from ×2 and ×1000 (sockperf prints 3 decimals; keep ns). */
function roundUs(v: number): number {
  return Math.round(v * 1000) / 1000;
}

/** A token that is not a number where sockperf prints one. */
const TOKEN = String.raw`[^\s,;()\[\]]+`;

/** "99.990" → "p99_99", "99.000" → "p99", "50.000" → "p50", "99.900" → "p999" (Summary's key). */
export function percentileKey(label: string): string {
  const v = Number(label);
  if (v === 99.9) return "p999";
  const [int, frac] = String(v).split(".");
  return frac ? `p${int}_${frac}` : `p${int}`;
}

/**
 * The fatal messages sockperf prints instead of results. Returned text is sockperf's own.
 * Order matters only for which message is quoted first.
 */
function fatalMessages(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.replace(/\*\*/g, "").trim();
    let m: RegExpMatchArray | null;
    if ((m = line.match(/(?:^|\s|:)(ERROR\b.*)$/))) {
      out.push(m[1]!.trim());
    } else if (/No messages were received from the server/i.test(line)) {
      out.push(line.replace(/^sockperf:\s*/, ""));
    } else if (/No valid observations found/i.test(line)) {
      out.push(line.replace(/^sockperf:\s*/, ""));
    } else if (/Test end before test start/i.test(line)) {
      out.push(line.replace(/^sockperf:\s*/, ""));
    } else if (/^sockperf:\s*'[^']*'\s+Invalid\b/i.test(line) || /^sockperf:\s*Invalid\b/i.test(line)) {
      out.push(line.replace(/^sockperf:\s*/, ""));
    } else if (/program exits because of an error/i.test(line)) {
      out.push(line.replace(/^sockperf:\s*/, ""));
    } else if (/Test ends uncompleted/i.test(line)) {
      out.push(line.replace(/^sockperf:\s*/, ""));
    }
  }
  return [...new Set(out)];
}

function hasUsage(text: string): boolean {
  return /^\s*Usage: sockperf\b/m.test(text);
}

/**
 * Parses the printed summary block. Returns undefined when the text has none (no
 * "Total N observations" and no avg line). Throws ToolOutputError when a figure in it is not a
 * number or is impossible (negative, infinite, an RTT of 0): the summary is sockperf's account
 * of the whole run, and without a full log it is the result, so a garbage figure fails the cell.
 * `source` names the text in messages ("full log") when it is not sockperf's printed output.
 */
export function parseSockperfSummary(rawText: string, source?: string): SockperfSummary | undefined {
  const text = stripAnsi(rawText);
  const warnings: string[] = [];

  /** The figure `token` printed at `index`, checked (after ×f for RTT/2 values). */
  const value = (field: string, token: string, index: number, range: Range, factor = 1): number => {
    const where = { line: lineAt(text, index), text: lineTextAt(text, index), ...(source ? { source } : {}) };
    const v = strictNumber(token);
    return checked(TOOL, field, Number.isNaN(v) ? v : roundUs(v * factor), range, where);
  };

  // avg line: "====> avg-rtt=118.478 (std-dev=…, …)" — tolerate any spacing around "=".
  const avg = text.match(new RegExp(String.raw`avg-(rtt|latency|lat)\s*=\s*(${TOKEN})\s*(?:\(([^)\n]*)\))?`));
  const summaryLine = text.match(new RegExp(String.raw`Summary:\s*(Round trip|Latency)\b[^\n]*?\bis\s+(${TOKEN})\s*usec`));
  const total = text.match(new RegExp(String.raw`Total\s+(${TOKEN})\s+observations`));
  if (!avg && !summaryLine && !total) return undefined;

  let printed: SockperfPrinted | undefined;
  if (avg) printed = avg[1] === "rtt" ? "rtt" : "one-way";
  if (summaryLine) {
    const fromSummary: SockperfPrinted = summaryLine[1] === "Round trip" ? "rtt" : "one-way";
    if (printed && printed !== fromSummary) {
      warnings.push(
        `sockperf's avg line says ${printed} but its Summary line says ${fromSummary}; using the avg line`,
      );
    }
    printed ??= fromSummary;
  }
  if (!printed) {
    // Percentiles without any avg/Summary line (a hand-cut paste). sockperf's default is one-way.
    printed = "one-way";
    warnings.push("sockperf output has no avg-rtt/avg-latency line; assuming one-way latency (sockperf's default)");
  }
  const f = printed === "rtt" ? 1 : 2;

  const r: SockperfReported = { metric: "rtt", unit: "us", printed };

  const version = text.match(/==\s*version\s*#\s*([^\s=]+)\s*==/);
  if (version) r.version = shorten(version[1]!, 80);

  if (avg) r.mean = value(`avg-${avg[1]}`, avg[2]!, avg.index!, RTT_US, f);
  if (summaryLine) {
    r.summaryAvg = value(`Summary "${summaryLine[1]} is"`, summaryLine[2]!, summaryLine.index!, RTT_US, f);
    r.mean ??= r.summaryAvg;
  }

  // Inside the parentheses: "std-dev=0.540, mean-ad=0.358, …, cv=0.048, …, 99.0% ci=[a, b]".
  const inner = avg?.[3];
  if (avg && inner !== undefined) {
    const at = avg.index!;
    const ci = inner.match(new RegExp(String.raw`(${TOKEN})\s*%\s*ci\s*=\s*\[\s*(${TOKEN})\s*,\s*(${TOKEN})\s*\]`));
    if (ci) {
      r.ciLevel = value("ci level", ci[1]!, at, PERCENT);
      r.ciLow = value("ci", ci[2]!, at, FINITE, f);
      r.ciHigh = value("ci", ci[3]!, at, FINITE, f);
    }
    const pairs = inner.replace(/[^,]*ci\s*=\s*\[[^\]]*\]/, "");
    for (const m of pairs.matchAll(new RegExp(String.raw`([a-z][a-z-]*)\s*=\s*(${TOKEN})`, "gi"))) {
      const key = m[1]!.toLowerCase();
      const token = m[2]!;
      switch (key) {
        case "std-dev":
          r.stddev = value(key, token, at, TIME_STAT_US, f);
          break;
        case "mean-ad":
          r.meanAbsDev = value(key, token, at, TIME_STAT_US, f);
          break;
        case "median-ad":
          r.medianAbsDev = value(key, token, at, TIME_STAT_US, f);
          break;
        case "siqr":
          r.siqr = value(key, token, at, TIME_STAT_US, f);
          break;
        case "std-error":
          r.stdError = value(key, token, at, TIME_STAT_US, f);
          break;
        case "cv":
          r.cv = value(key, token, at, NON_NEGATIVE); // dimensionless: the same for RTT and RTT/2
          break;
        default:
          r[key] = value(key, token, at, FINITE);
          warnings.push(`sockperf printed an unknown statistic "${shorten(key, 40)}"; kept unscaled`);
      }
    }
  }

  if (total) r.count = value("Total observations", total[1]!, total.index!, COUNT);

  // "---> <MAX> observation = 2901.641" (some pastes lose the angle brackets).
  const max = text.match(new RegExp(String.raw`<?MAX>?\s+observation\s*=\s*(${TOKEN})`));
  const min = text.match(new RegExp(String.raw`<?MIN>?\s+observation\s*=\s*(${TOKEN})`));
  if (max) r.max = value("<MAX> observation", max[1]!, max.index!, RTT_US, f);
  if (min) r.min = value("<MIN> observation", min[1]!, min.index!, RTT_US, f);

  for (const m of text.matchAll(new RegExp(String.raw`percentile\s+(${TOKEN})\s*=\s*(${TOKEN})`, "g"))) {
    const label = m[1]!;
    value("percentile", label, m.index, PERCENT);
    const key = percentileKey(label);
    if (r[key] === undefined) r[key] = value(`percentile ${label}`, m[2]!, m.index, RTT_US, f);
  }

  // "[Valid Duration] RunTime=0.550 sec; SentMessages=4641; ReceivedMessages=4641"
  const valid = text.match(
    new RegExp(String.raw`\[Valid Duration\]\s*RunTime\s*=\s*(${TOKEN})\s*sec;\s*SentMessages\s*=\s*(${TOKEN});\s*ReceivedMessages\s*=\s*(${TOKEN})`),
  );
  if (valid) {
    r.validDurationSeconds = value("[Valid Duration] RunTime", valid[1]!, valid.index!, NON_NEGATIVE);
    r.validSentMessages = value("[Valid Duration] SentMessages", valid[2]!, valid.index!, COUNT);
    r.validReceivedMessages = value("[Valid Duration] ReceivedMessages", valid[3]!, valid.index!, COUNT);
  }
  const totalRun = text.match(
    new RegExp(
      String.raw`\[Total Run\]\s*RunTime\s*=\s*(${TOKEN})\s*sec;(?:\s*Warm up time\s*=\s*(${TOKEN})\s*msec;)?\s*SentMessages\s*=\s*(${TOKEN});\s*ReceivedMessages\s*=\s*(${TOKEN})`,
    ),
  );
  if (totalRun) {
    r.totalRunSeconds = value("[Total Run] RunTime", totalRun[1]!, totalRun.index!, NON_NEGATIVE);
    if (totalRun[2] !== undefined) r.warmupMs = value("[Total Run] Warm up time", totalRun[2], totalRun.index!, COUNT);
    r.totalSentMessages = value("[Total Run] SentMessages", totalRun[3]!, totalRun.index!, COUNT);
    r.totalReceivedMessages = value("[Total Run] ReceivedMessages", totalRun[4]!, totalRun.index!, COUNT);
  }
  const stalled = stalledRun(r);
  if (stalled) warnings.push(stalled);

  const errs = text.match(
    new RegExp(String.raw`#\s*dropped messages\s*=\s*(${TOKEN});\s*#\s*duplicated messages\s*=\s*(${TOKEN});\s*#\s*out-of-order messages\s*=\s*(${TOKEN})`),
  );
  if (errs) {
    r.dropped = value("dropped messages", errs[1]!, errs.index!, COUNT);
    r.duplicated = value("duplicated messages", errs[2]!, errs.index!, COUNT);
    r.outOfOrder = value("out-of-order messages", errs[3]!, errs.index!, COUNT);
    const bad: string[] = [];
    if (r.dropped) bad.push(`${r.dropped} dropped`);
    if (r.duplicated) bad.push(`${r.duplicated} duplicated`);
    if (r.outOfOrder) bad.push(`${r.outOfOrder} out-of-order`);
    if (bad.length) warnings.push(`sockperf reported ${bad.join(", ")} messages`);
  }

  const servers = new Set([...text.matchAll(/Printing statistics for Server No:\s*(\d+)/g)].map((m) => m[1]));
  if (servers.size > 1) {
    warnings.push(`sockperf printed statistics for ${servers.size} servers; only the first block was read`);
  }

  return { printed, reported: r, warnings };
}

/**
 * sockperf keeps the samples of its "valid duration": the run less the warm-up and about 50 ms
 * at the end (3.7: `-t 1` → 0.55 s valid, `-t 10` → 9.55 s). A ping-pong client whose replies
 * stop (the server killed mid-run: `udp-server-killed` in the fixtures) waits for the timer
 * and reports only what came before, with no error and sent ≈ received. A valid duration under
 * half of the run after its warm-up is that case: warned, the samples kept.
 */
function stalledRun(r: SockperfReported): string | undefined {
  const valid = r.validDurationSeconds;
  const total = r.totalRunSeconds;
  if (typeof valid !== "number" || typeof total !== "number") return undefined;
  const expected = total - (typeof r.warmupMs === "number" ? r.warmupMs / 1000 : 0);
  if (expected < 1 || valid >= 0.5 * expected) return undefined;
  const sent = typeof r.totalSentMessages === "number" ? `; ${r.totalSentMessages} messages sent in all` : "";
  return `sockperf measured only ${valid} s of its ${total} s run ([Valid Duration] vs [Total Run]${sent}): the replies stopped partway (server gone or path stalled), so the samples cover only the start of the run`;
}

const FULL_LOG_FIELDS = ["packet", "txTime", "rxTime"] as const;
/** A full-log row as sockperf writes it: packet, txTime, rxTime, value (captured). */
const ROW = /^\d+\s*,\s*\d+(?:\.\d+)?\s*,\s*\d+(?:\.\d+)?\s*,\s*(\d+(?:\.\d+)?)$/;

/**
 * Parses a --full-log file: an optional copy of the summary, a "------" line, the header
 * `packet, txTime(sec), rxTime(sec), rtt(usec)` (or `latency(usec)` without --full-rtt),
 * one row per valid observation, and a closing "------" line (3.8+ may append a histogram).
 * Returns undefined when there is no header (empty file, or sockperf gave up before it).
 *
 * A row that cannot be read — not 4 fields, a field that is not a number, an impossible value
 * (an RTT ≤ 0 or above the statistics' limit, a negative time) — is one observation among
 * hundreds: it is left out and listed in `unreadable` for a warning. When more than half of
 * the rows cannot be read this throws: the file is not a sockperf full log as latlab knows it.
 */
export function parseSockperfFullLog(rawText: string): SockperfFullLog | undefined {
  const lines = stripAnsi(rawText).split("\n");
  const headerAt = lines.findIndex((l) => /^\s*packet\s*,\s*txTime\(sec\)\s*,\s*rxTime\(sec\)\s*,/i.test(l));
  if (headerAt < 0) return undefined;
  const header = lines[headerAt]!;
  const col = header.match(/,\s*(rtt|latency)\s*\(usec\)\s*$/i);
  if (!col) throw new ToolOutputError(TOOL, `line ${headerAt + 1} of the full log: unrecognised full-log header: ${quote(header.trim())}`);
  const column: SockperfPrinted = col[1]!.toLowerCase() === "rtt" ? "rtt" : "one-way";
  const columnName = col[1]!.toLowerCase();
  const f = column === "rtt" ? 1 : 2;
  const samples: number[] = [];
  const unreadable = new LineProblems(TOOL, "full-log rows");
  let rows = 0;
  for (let i = headerAt + 1; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === "") continue;
    if (/^-{3,}/.test(line)) break;
    rows++;
    // Fast path (a 60 s run has ~350k rows): a well-formed row with a possible RTT.
    const ok = ROW.exec(line);
    if (ok) {
      const v = roundUs(Number(ok[1]) * f);
      if (v > 0 && v <= MAX_VALUE) {
        samples.push(v);
        continue;
      }
    }
    const cells = line.split(",").map((c) => c.trim());
    if (cells.length !== 4) {
      unreadable.add(i + 1, line, `has ${cells.length} fields, not 4`);
      continue;
    }
    let problem: string | undefined;
    for (let c = 0; c < 3 && problem === undefined; c++) {
      const p = rangeProblem(strictNumber(cells[c]!), c === 0 ? COUNT : NON_NEGATIVE);
      if (p !== undefined) problem = `${FULL_LOG_FIELDS[c]} ${p}`;
    }
    const raw = strictNumber(cells[3]!);
    const v = Number.isNaN(raw) ? raw : roundUs(raw * f);
    if (problem === undefined) {
      const p = rangeProblem(v, RTT_US);
      if (p !== undefined) problem = `${columnName} ${p}`;
    }
    if (problem !== undefined) {
      unreadable.add(i + 1, line, problem);
      continue;
    }
    samples.push(v);
  }
  unreadable.failIfMost(rows);
  return { column, samples, unreadable, rows };
}

/** `sockperf --version` → "3.7-no.git"; also accepts the "== version #3.8-0.gitabc ==" banner. */
export function parseSockperfVersion(output: string): string | undefined {
  const text = stripAnsi(output);
  const m = text.match(/sockperf,?\s+version\s+([^\s,]+)/i) ?? text.match(/==\s*version\s*#\s*([^\s=]+)\s*==/);
  return m?.[1] === undefined ? undefined : shorten(m[1], 80);
}

export interface ParseSockperfInput {
  stdout: string;
  stderr?: string;
  /** Contents of the --full-log file, if there is one. */
  fullLog?: string;
  exitCode?: number | null;
}

/**
 * Parses one ping-pong client run. With a full log, samples are its rows; without, samples
 * is empty and `reported` carries sockperf's summary. Throws ToolOutputError when sockperf
 * failed, printed nothing usable, or made zero observations.
 */
export function parseSockperf(input: ParseSockperfInput, expect?: { fullRtt?: boolean }): ToolResult {
  const printedText = stripAnsi(`${input.stdout}\n${input.stderr ?? ""}`);
  const logText = input.fullLog ?? "";
  const warnings: string[] = [];

  const fatal = fatalMessages(printedText);
  let summary = parseSockperfSummary(printedText);
  let full: SockperfFullLog | undefined;
  try {
    full = logText.trim() ? parseSockperfFullLog(logText) : undefined;
  } catch (e) {
    if (!(e instanceof ToolOutputError) || fatal.length === 0) throw e;
  }

  if (!summary || summary.reported.count === undefined) {
    const logFatal = fatalMessages(stripAnsi(logText));
    const all = [...new Set([...fatal, ...logFatal])];
    if (all.length > 0) throw new ToolOutputError(TOOL, explain(all));
    if (hasUsage(printedText)) {
      throw new ToolOutputError(
        TOOL,
        "sockperf rejected its arguments and printed its usage text (no error message; an unknown option does this)",
      );
    }
    // stdout lost but the full log has its own copy of the summary (minus the Summary: line).
    const fromLog = parseSockperfSummary(logText, "the full log");
    if (fromLog && fromLog.reported.count !== undefined) {
      summary = fromLog;
      warnings.push("sockperf's printed summary was missing; read the copy in its full log");
    }
  }
  if (!summary) {
    const tail = printedText.trim().split("\n").slice(-3).join("\n");
    throw new ToolOutputError(TOOL, `no latency summary in sockperf output${tail ? ` (last lines: ${quote(tail)})` : " (output is empty)"}`);
  }
  if (fatal.length > 0) {
    // A summary was printed, yet sockperf also complained: keep the numbers, say so.
    for (const m of fatal.slice(0, 5)) warnings.push(`sockperf: ${shorten(m)}`);
  }
  warnings.push(...summary.warnings);
  const reported = summary.reported;

  if (reported.count === 0) {
    throw new ToolOutputError(TOOL, "zero observations");
  }
  if (reported.count === undefined && !full) {
    throw new ToolOutputError(TOOL, "sockperf printed no observation count (Total N observations)");
  }

  if (expect?.fullRtt !== undefined) {
    const want: SockperfPrinted = expect.fullRtt ? "rtt" : "one-way";
    if (want !== summary.printed) {
      warnings.push(
        `expected sockperf to print ${want} (fullRtt=${expect.fullRtt}) but it printed ${summary.printed}; normalised to RTT from what it printed`,
      );
    }
  }

  let samples: number[] = [];
  if (full) {
    samples = full.samples;
    reported.fullLogColumn = full.column;
    if (full.column !== summary.printed) {
      warnings.push(
        `full-log column is ${full.column} but the printed summary is ${summary.printed}; each normalised on its own`,
      );
    }
    const unreadable = full.unreadable.warning(full.rows);
    if (unreadable) warnings.push(unreadable);
    if (samples.length === 0) throw new ToolOutputError(TOOL, `zero observations in the full log${unreadable ? ` (${unreadable})` : ""}`);
    // Rows (read or not) against sockperf's own count: a difference means rows went missing.
    if (reported.count !== undefined && reported.count !== full.rows) {
      warnings.push(`full log has ${full.rows} rows but sockperf reported ${reported.count} observations`);
    }
  } else if (input.fullLog !== undefined) {
    warnings.push("sockperf's full log has no sample rows; samples are empty, only sockperf's summary is kept");
  }
  if (!samples.length) {
    // Without samples the printed summary is the result; one cut short (a paste or a capture
    // truncated, a client killed while printing) would be a result with no distribution.
    const missing = SUMMARY_FIGURES.filter(([key]) => typeof reported[key] !== "number").map(([, printedAs]) => printedAs);
    if (missing.length) {
      throw new ToolOutputError(TOOL, `sockperf's summary is incomplete (output cut short?): no ${missing.join(", ")}; without a full log (--full-log) the summary is the result, and it needs every one of these`);
    }
  }

  if (input.exitCode !== undefined && input.exitCode !== null && input.exitCode !== 0) {
    warnings.push(`sockperf exited with code ${input.exitCode} although it printed results`);
  }

  return sanitizedResult({ metric: "rtt", unit: "us", samples, reported, warnings });
}

/** What a summary needs (src/results/summary.ts), as sockperf prints each. */
const SUMMARY_FIGURES: ReadonlyArray<readonly [keyof SockperfReported & string, string]> = [
  ["mean", "avg-rtt/avg-latency"],
  ["stddev", "std-dev"],
  ["count", "Total N observations"],
  ["max", "<MAX> observation"],
  ["p999", "percentile 99.900"],
  ["p99", "percentile 99.000"],
  ["p90", "percentile 90.000"],
  ["p50", "percentile 50.000"],
  ["min", "<MIN> observation"],
];

function explain(messages: string[]): string {
  const text = shorten(messages.join("; "));
  if (messages.some((m) => /_seqN\s*>\s*m_maxSequenceNo/.test(m))) {
    return `${text} (known sockperf 3.6/3.7 bug in its packet-count estimate, often with a low --mps; try another --mps or a newer sockperf)`;
  }
  return text;
}
