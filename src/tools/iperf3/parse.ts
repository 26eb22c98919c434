/**
 * Pure parsers for iperf3 `--json` client output and `iperf3 --version`.
 *
 * Layout (3.x; see tests/fixtures/iperf3/README.md for captured files):
 *  - start: version, system_info, sock_bufsize (the -w asked for, bytes, 0 = none),
 *    sndbuf_actual / rcvbuf_actual (what the kernel granted the client's sockets; Linux
 *    reports twice the value set, capped at 2 × net.core.wmem_max / rmem_max),
 *    test_start {protocol, num_streams, omit, duration, reverse, …}, target_bitrate.
 *  - intervals[]: {streams[], sum}; sum.bits_per_second per interval, sum.omitted for the -O
 *    warm-up (after it the clock restarts at 0), sum.sender = whether the client sent.
 *  - end: sum_sent / sum_received, streams[].sender.{mean_rtt, min_rtt, max_rtt} in µs (0
 *    when unknown: reverse mode, macOS), cpu_utilization_percent. UDP (3.12, 3.16 captured):
 *    sum_received is the RECEIVER (its bytes / bits_per_second are the goodput, with its
 *    jitter_ms, lost_packets and packets = its Lost/Total datagrams); sum_sent is the sender
 *    alone (jitter 0, lost 0); `sum` is the SENDER's bytes, rate and packet count with the
 *    receiver's jitter and lost count copied in, and lost_percent = lost / sent. iperf3 before
 *    esnet/iperf pull request #1174 (2021, after 3.10) has `sum` alone.
 *  - server_output_json (with --get-server-output, the server started with -J): the server's
 *    own document, whose intervals are the receiver's per-interval report when the client sent.
 *    A server without -J gives server_output_text instead.
 *  - error: a string when the test failed. Present even when intervals exist (server killed
 *    mid-test). iperf3 3.12 exits 0 in that case; 3.18 (Debian trixie, the closest to Ubuntu
 *    24.04's 3.16) exits 1. 3.17+ words a refused connection "unable to connect to server -
 *    server may have stopped running or use a different port, firewall issue, etc.: …".
 *
 * Parameter errors (`-P 129`) are printed as text on stderr with the usage on stdout, no JSON.
 */
import { ToolOutputError, type ToolResult } from "../types.ts";
import {
  COUNT,
  FINITE,
  LineProblems,
  MAX_VALUE,
  NON_NEGATIVE,
  POSITIVE_COUNT,
  quote,
  rangeProblem,
  sanitizedResult,
  shorten,
  THROUGHPUT_MBPS,
  TIME_STAT_US,
  valueError,
  type Range,
} from "../validate.ts";

const TOOL = "iperf3";

export type Iperf3Reported = NonNullable<ToolResult["reported"]>;

type Json = Record<string, unknown>;

function obj(v: unknown): Json | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Json) : undefined;
}
function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}
function num(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}
/** A JSON value as it stood in the document, for quoting (Infinity is what JSON.parse made of 1e400). */
function shown(v: unknown): string {
  return typeof v === "number" ? String(v) : (JSON.stringify(v) ?? String(v));
}
/** Why the value at a path is not a number in `range` (after × `scale`), or undefined when it is. */
function figureProblem(v: unknown, range: Range, scale = 1): string | undefined {
  if (v === null) return "is not a number (null: iperf3 writes NaN and infinity as null)";
  if (typeof v !== "number") return "is not a number";
  return rangeProblem(scale === 1 ? v : Number((v * scale).toPrecision(12)), range);
}
/**
 * A figure of iperf3's JSON that becomes a reported figure: undefined when absent; a
 * ToolOutputError naming its path when present but not a number in `range` (× `scale`). These
 * are iperf3's summary of the run (or how it was set up), so a garbage one fails the cell.
 */
function figure(v: unknown, path: string, range: Range, scale = 1): number | undefined {
  if (v === undefined) return undefined;
  const problem = figureProblem(v, range, scale);
  if (problem !== undefined) throw valueError(TOOL, path, problem, { text: shown(v) });
  return v as number;
}
const BITS_PER_SECOND = 1e-6; // scale of bits_per_second to THROUGHPUT_MBPS
const JITTER_MS: Range = { min: 0, max: MAX_VALUE / 1000, unit: "ms" };
/** Lost datagrams: iperf3 has printed negative counts (esnet/iperf#412, #914, #1866): warned about, not failed. */
const LOST: Range = { min: -Number.MAX_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER, integer: true };
function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}
/** bits/s → Mbit/s, float noise removed. */
function mbps(bps: number): number {
  return Number((bps / 1e6).toPrecision(12));
}
function round(v: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}

/** `iperf3 --version` → "3.12" ("iperf 3.12 (cJSON 1.7.15)"); also the JSON's "iperf 3.16". */
export function parseIperf3Version(output: string): string | undefined {
  const v = output.match(/^\s*iperf\s+(3\.[0-9][^\s(]*)/m)?.[1];
  return v === undefined ? undefined : shorten(v, 80);
}

/** "32M" → 33554432 (iperf3's -w suffixes are 1024-based: K, M, G). */
export function iperf3WindowBytes(window: string): number | undefined {
  const m = window.trim().match(/^(\d+(?:\.\d+)?)([kKmMgG]?)$/);
  if (!m) return undefined;
  const f = { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[m[2]!.toLowerCase() as "" | "k" | "m" | "g"];
  return Math.floor(Number(m[1]) * f);
}

function human(bytes: number): string {
  if (bytes >= 1024 ** 2 && bytes % 1024 ** 2 === 0) return `${bytes / 1024 ** 2} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/**
 * Finds the iperf3 JSON document in `text`. Throws ToolOutputError quoting the text when there
 * is none (text output, a parameter error, a truncated file).
 */
/** The top-level sections of iperf3's --json document, in the order iperf3 writes them. */
const SECTIONS = ["start", "intervals", "end"] as const;

/**
 * When `text` holds a JSON object that starts and is never closed (the output was cut): the
 * top-level keys it got to. Undefined for anything else (complete, or not JSON at all). A
 * scan of brackets and strings, not a parser: what it does not close is what was cut.
 */
export function unclosedJsonKeys(text: string): string[] | undefined {
  const start = text.indexOf("{");
  if (start < 0) return undefined;
  const stack: string[] = [];
  const keys: string[] = [];
  let stringStart = -1;
  for (let i = start; i < text.length; i++) {
    const c = text[i]!;
    if (stringStart >= 0) {
      if (c === "\\") i++;
      else if (c === '"') {
        // A string at depth 1 followed by ":" is a top-level key.
        if (stack.length === 1 && /^\s*:/.test(text.slice(i + 1, i + 20))) keys.push(text.slice(stringStart + 1, i));
        stringStart = -1;
      }
      continue;
    }
    if (c === '"') stringStart = i;
    else if (c === "{" || c === "[") stack.push(c === "{" ? "}" : "]");
    else if (c === "}" || c === "]") {
      if (stack.pop() !== c) return undefined; // not JSON as iperf3 writes it
      if (!stack.length) return undefined; // closed: complete (or something else follows)
    }
  }
  return stack.length ? keys : undefined;
}

export function extractIperf3Json(text: string, stderr = ""): Json {
  const trimmed = text.trim();
  const tryParse = (s: string): Json | undefined => {
    try {
      return obj(JSON.parse(s));
    } catch {
      return undefined;
    }
  };
  let doc = trimmed ? tryParse(trimmed) : undefined;
  if (!doc) {
    // A capture with a prompt or a note around the JSON: take the outermost braces.
    const a = trimmed.indexOf("{");
    const b = trimmed.lastIndexOf("}");
    if (a >= 0 && b > a) doc = tryParse(trimmed.slice(a, b + 1));
  }
  if (doc && ("start" in doc || "end" in doc || "intervals" in doc || "error" in doc)) return doc;

  const all = `${trimmed}\n${stderr}`;
  const err = all.match(/^iperf3:\s*((?:parameter )?error\b.*)$/m);
  if (err) throw new ToolOutputError(TOOL, shorten(err[1]!.trim()));
  if (/^\s*\{\s*"event"\s*:/m.test(trimmed)) {
    throw new ToolOutputError(TOOL, "this is --json-stream output (one event per line); latlab reads --json");
  }
  if (!trimmed) {
    const e = stderr.trim();
    throw new ToolOutputError(TOOL, e ? `no JSON on stdout; stderr: ${shorten(e)}` : "output is empty");
  }
  // Cut short (a client killed mid-write, a copy taken too early): say so, and what is missing.
  const cut = unclosedJsonKeys(trimmed);
  if (cut && cut.some((k) => (SECTIONS as readonly string[]).includes(k))) {
    const missing = SECTIONS.filter((k) => !cut.includes(k));
    const has = `it has ${cut.map((k) => `"${k}"`).join(", ")}`;
    throw new ToolOutputError(
      TOOL,
      `iperf3's JSON ends before it is complete (output cut short?): ${missing.length ? `${has} but no ${missing.map((k) => `"${k}"`).join(", ")}, which holds the results` : `${has}, but the document is not closed`}`,
    );
  }
  const hint = /\[\s*ID\]\s+Interval|Connecting to host/.test(trimmed) ? " (iperf3's text output: run it with --json)" : "";
  throw new ToolOutputError(TOOL, `output is not iperf3 JSON${hint}: ${quote(trimmed.replace(/\s+/g, " "), 160)}`);
}

/** Extra words for iperf3 errors whose cause is not obvious. */
function explainError(raw: string): string {
  const message = shorten(raw);
  if (/socket buffer size not set correctly/i.test(message)) {
    return `${message} (iperf3 (3.12, 3.18) refuses a -w window the kernel will not grant in full: it is capped by net.core.wmem_max / rmem_max; raise them or ask for less)`;
  }
  if (/server is busy/i.test(message)) {
    return `${message} (another client's test was running on this iperf3 server; it serves one at a time)`;
  }
  if (/control socket has closed unexpectedly/i.test(message)) {
    return `${message} (the iperf3 server closed its control connection during the test: it was killed, crashed or restarted)`;
  }
  if (/unable to connect to server/i.test(message)) {
    return `${message} (no iperf3 server reachable on that address and port)`;
  }
  return message;
}

export interface Iperf3Expect {
  /** The -w asked for, as given ("32M"). */
  window?: string;
  /**
   * Bytes actually passed to -w when latlab lowered the window to the host's socket-buffer
   * limit (the client's clamp, see iperf3/index.ts); undefined when -w got `window` itself.
   */
  windowApplied?: number;
  protocol?: "tcp" | "udp";
  reverse?: boolean;
  bitrate?: string;
  parallel?: number;
}

export interface ParseIperf3Input {
  stdout: string;
  stderr?: string;
  exitCode?: number | null;
}

/**
 * Parses one iperf3 --json client run. Samples are the per-interval rates of all streams
 * together (`intervals[].sum.bits_per_second`, Mbit/s), omitted (-O) intervals left out.
 * Throws ToolOutputError when iperf3 reports an error or the output is not its JSON.
 */
export function parseIperf3(input: ParseIperf3Input, expect: Iperf3Expect = {}): ToolResult {
  const doc = extractIperf3Json(input.stdout, input.stderr ?? "");
  const error = str(doc.error);
  if (error !== undefined) throw new ToolOutputError(TOOL, explainError(error));
  if (doc.error !== undefined && doc.error !== null) throw new ToolOutputError(TOOL, `iperf3 reports an error that is not text: ${quote(shown(doc.error))}`);

  const warnings: string[] = [];
  const start = obj(doc.start) ?? {};
  const testStart = obj(start.test_start) ?? {};
  const end = obj(doc.end) ?? {};
  const protocol = shorten(str(testStart.protocol) ?? (expect.protocol ?? "tcp"), 20).toUpperCase();
  const udp = protocol === "UDP";
  const reverseFlag = figure(testStart.reverse, "start.test_start.reverse", COUNT);
  const reverse = reverseFlag !== undefined ? reverseFlag !== 0 : (expect.reverse ?? false);

  const r: Iperf3Reported = { protocol, reverse: reverse ? "yes" : "no" };
  const version = parseIperf3Version(str(start.version) ?? "");
  if (version) r.version = version;
  // test_start.num_streams is the -P iperf3 ran with. end.streams lists one entry per stream
  // and direction (--bidir: twice -P), so it only stands in when num_streams is missing.
  const listed = arr(end.streams).length;
  const bidirFlag = figure(testStart.bidir, "start.test_start.bidir", COUNT);
  const bidir = bidirFlag !== undefined && bidirFlag !== 0;
  const streams = figure(testStart.num_streams, "start.test_start.num_streams", POSITIVE_COUNT) ?? ((bidir ? listed / 2 : listed) || undefined);
  if (streams !== undefined) r.streams = streams;
  const omit = figure(testStart.omit, "start.test_start.omit", NON_NEGATIVE);
  if (omit !== undefined) r.omitSeconds = omit;
  const duration = figure(testStart.duration, "start.test_start.duration", NON_NEGATIVE);
  if (duration !== undefined) r.durationSeconds = duration;

  // --- end-of-test summary ---------------------------------------------------------------------
  const sumSent = obj(end.sum_sent);
  const sumReceived = obj(end.sum_received);
  const sum = obj(end.sum);
  // iperf3's summary of the run: a garbage figure here fails the cell (it is what the results
  // report as sender and receiver rates, and the UDP result when there are no intervals).
  const sumSentBps = figure(sumSent?.bits_per_second, "end.sum_sent.bits_per_second", THROUGHPUT_MBPS, BITS_PER_SECOND);
  const sumBps = figure(sum?.bits_per_second, "end.sum.bits_per_second", THROUGHPUT_MBPS, BITS_PER_SECOND);
  const sentBps = sumSentBps ?? (udp && sum?.sender !== false ? sumBps : undefined);
  let receivedBps = figure(sumReceived?.bits_per_second, "end.sum_received.bits_per_second", THROUGHPUT_MBPS, BITS_PER_SECOND);
  if (sentBps !== undefined) r.senderMbps = mbps(sentBps);
  if (receivedBps === undefined && udp && sum) {
    // Old iperf3 (before 3.11) UDP: only end.sum, whose rate is the sender's; the receiver got
    // that minus the lost share.
    const bps = sumBps;
    const lost = sum.lost_percent === null ? undefined : figure(sum.lost_percent, "end.sum.lost_percent", FINITE);
    if (bps !== undefined && lost !== undefined && lost >= 0 && lost <= 100) {
      receivedBps = bps * (1 - lost / 100);
      warnings.push("no end.sum_received in this iperf3's UDP output; receiver goodput estimated as sum × (1 − lost_percent)");
    } else if (bps !== undefined && lost !== undefined) {
      warnings.push(`no end.sum_received in this iperf3's UDP output, and end.sum.lost_percent is ${lost} (an iperf3 counting bug): no receiver goodput can be estimated`);
    }
  }
  if (receivedBps !== undefined) r.receiverMbps = mbps(receivedBps);

  // --- samples: one per interval, all streams summed ------------------------------------------
  // TCP: the client's intervals (the sender's rate; receiverMbps has the goodput). UDP: the
  // receiver's intervals, because a UDP sender's rate is only the rate it was told to send.
  const clientIntervals = intervalSums(doc.intervals, "intervals");
  let chosen = clientIntervals;
  if (udp) {
    const serverIntervals = intervalSums(obj(doc.server_output_json)?.intervals, "server_output_json.intervals");
    if (clientIntervals.length > 0 && clientIntervals.every((s) => s.sender === false)) {
      r.goodputFrom = "receiver intervals (client, -R)";
    } else if (serverIntervals.length > 0 && serverIntervals.every((s) => s.sender === false)) {
      chosen = serverIntervals;
      r.goodputFrom = "receiver intervals (server report)";
    } else {
      chosen = [];
    }
  }
  const measured = chosen.filter((s) => s.omitted !== true);
  const omitted = chosen.length - measured.length;
  // One interval's rate is one sample among many: one that is not a number or impossible
  // (negative, infinite, null — cJSON's NaN after a zero-length interval) is left out with a
  // warning naming its path; when most are, the cell fails.
  const unreadable = new LineProblems(TOOL, "intervals");
  const kept = measured.filter((s) => {
    const rate = figureProblem(s.bits_per_second, THROUGHPUT_MBPS, BITS_PER_SECOND);
    const seconds = s.seconds === undefined ? undefined : figureProblem(s.seconds, NON_NEGATIVE);
    if (rate !== undefined) unreadable.add(undefined, shown(s.bits_per_second), `${s.path}.bits_per_second ${rate}`);
    else if (seconds !== undefined) unreadable.add(undefined, shown(s.seconds), `${s.path}.seconds ${seconds}`);
    return rate === undefined && seconds === undefined;
  });
  unreadable.failIfMost(measured.length);
  const unreadableWarning = unreadable.warning(measured.length);
  if (unreadableWarning) warnings.push(unreadableWarning);
  const lengths = kept.map((s) => num(s.seconds) ?? 0).sort((a, b) => a - b);
  const median = lengths.length ? lengths[Math.floor(lengths.length / 2)]! : 0;
  const samples: number[] = [];
  let short = 0;
  for (const s of kept) {
    const bps = s.bits_per_second as number;
    const secs = num(s.seconds);
    // A trailing partial interval (a few ms) is a noisy rate over nothing: leave it out.
    if (secs !== undefined && median > 0 && secs < 0.25 * median) {
      short++;
      continue;
    }
    samples.push(mbps(bps));
  }
  if (omitted) r.omittedIntervals = omitted;
  if (short) {
    r.partialIntervalsLeftOut = short;
    // The server's UDP report always ends with one (the datagrams in flight at the end): routine.
    const routine = r.goodputFrom === "receiver intervals (server report)" && short === 1 && kept.at(-1) !== undefined && (num(kept.at(-1)!.seconds) ?? 0) < 0.25 * median;
    if (!routine) warnings.push(`left out ${short} interval(s) shorter than a quarter of the others (a partial last report)`);
  }
  if (udp && chosen.length === 0 && clientIntervals.length > 0 && receivedBps !== undefined) {
    // A hand run without --get-server-output: the only receiver figure is the average.
    samples.push(mbps(receivedBps));
    r.goodputFrom = sumReceived ? "receiver average (end.sum_received)" : "receiver average (estimated from end.sum)";
    warnings.push(
      "UDP: no per-interval receiver report in this output (run the client with --get-server-output against a server started with -J): the value is one sample, the receiver's average goodput",
    );
  }
  const intervalsSenderSide = kept.some((s) => s.sender === true);

  if (!udp) {
    const retr = figure(sumSent?.retransmits, "end.sum_sent.retransmits", COUNT);
    if (retr !== undefined) r.retransmits = retr;
    Object.assign(r, rttFromStreams(arr(end.streams)));
    const cc = str(end.sender_tcp_congestion);
    if (cc) r.senderCongestion = shorten(cc, 40);
  } else {
    // The receiver's statistics: end.sum_received (3.x), else end.sum (old iperf3). The loss is
    // the receiver's Lost/Total datagrams, as its own report prints it; iperf3's lost_percent
    // divides by the datagrams sent instead, which also counts the last ones still in flight.
    const u = sumReceived ?? sum;
    const at = sumReceived ? "end.sum_received" : "end.sum";
    const jitter = figure(u?.jitter_ms, `${at}.jitter_ms`, JITTER_MS);
    const lostPackets = figure(u?.lost_packets, `${at}.lost_packets`, LOST);
    const packets = figure(u?.packets, `${at}.packets`, COUNT);
    // lost_percent is null (cJSON's NaN) when no datagram came: then there is no percentage.
    const printedLost = u?.lost_percent === null ? undefined : figure(u?.lost_percent, `${at}.lost_percent`, FINITE);
    const lostPercent = lostPackets !== undefined && packets ? (100 * lostPackets) / packets : printedLost;
    const sentPackets = figure(sumSent?.packets, "end.sum_sent.packets", COUNT);
    if (jitter !== undefined) r.jitterMs = round(jitter, 6);
    if (lostPackets !== undefined) r.lostPackets = lostPackets;
    if (packets !== undefined) r.packets = packets;
    if (sentPackets !== undefined) r.sentPackets = sentPackets;
    if (lostPercent !== undefined) {
      r.lostPercent = round(lostPercent, 4);
      if (lostPercent < 0 || lostPercent > 100) {
        // iperf3's own counting bugs (esnet/iperf#412, #914, #1866: negative counts; #1489: above
        // 100 %): kept as printed, but no loss figure of this run can be trusted.
        warnings.push(
          `UDP: iperf3 counted ${lostPackets ?? "?"} lost datagrams of ${packets ?? "?"} (${round(lostPercent, 2)}%): impossible, a known iperf3 counting bug (esnet/iperf#412, #1489); the loss figures of this run are unreliable`,
        );
      } else if (lostPercent > 0) {
        warnings.push(`UDP: ${lostPackets ?? "?"} of ${packets ?? "?"} datagrams lost (${round(lostPercent, 2)}%) at the receiver`);
      }
    }
    const target = figure(start.target_bitrate, "start.target_bitrate", NON_NEGATIVE) ?? figure(testStart.target_bitrate, "start.test_start.target_bitrate", NON_NEGATIVE);
    if (target !== undefined) r.targetMbps = mbps(target);
    if (expect.bitrate === undefined && target === 1024 * 1024) {
      warnings.push("UDP ran at iperf3's default target of 1 Mbit/s (no bitrate set): this measures the target, not the path");
    }
  }

  const cpu = obj(end.cpu_utilization_percent);
  const host = figure(cpu?.host_total, "end.cpu_utilization_percent.host_total", NON_NEGATIVE);
  const remote = figure(cpu?.remote_total, "end.cpu_utilization_percent.remote_total", NON_NEGATIVE);
  if (host !== undefined) r.cpuHostPct = round(host, 2);
  if (remote !== undefined) r.cpuRemotePct = round(remote, 2);

  // --- socket buffers: asked for vs granted -----------------------------------------------------
  // sock_bufsize is what -w got: the asked window, or the host's limit when latlab clamped it.
  const sockBufsize = figure(start.sock_bufsize, "start.sock_bufsize", COUNT);
  const applied = sockBufsize || expect.windowApplied || (expect.window ? iperf3WindowBytes(expect.window) : undefined);
  const snd = figure(start.sndbuf_actual, "start.sndbuf_actual", COUNT);
  const rcv = figure(start.rcvbuf_actual, "start.rcvbuf_actual", COUNT);
  if (snd !== undefined) r.sndbufActual = snd;
  if (rcv !== undefined) r.rcvbufActual = rcv;
  if (expect.window !== undefined) r.windowAsked = expect.window;
  if (applied) {
    r.requestedWindow = applied;
    const asked = expect.windowApplied !== undefined && expect.window !== undefined ? expect.window : undefined;
    warnings.push(...windowWarnings(applied, snd, rcv, /linux/i.test(str(start.system_info) ?? ""), asked));
  }
  if (expect.window && !sockBufsize) {
    warnings.push(`asked for -w ${expect.window} but iperf3's JSON shows no socket buffer request (sock_bufsize = 0)`);
  }

  // --- sanity ----------------------------------------------------------------------------------
  if (samples.length === 0) {
    if (udp && clientIntervals.length > 0 && chosen.length === 0) {
      throw new ToolOutputError(TOOL, "UDP: no receiver figures in the output (no end.sum_received, no server report): nothing the receiver got to report");
    }
    if (chosen.length > 0) throw new ToolOutputError(TOOL, `all ${chosen.length} intervals were omitted (-O) or partial: nothing measured`);
    throw new ToolOutputError(TOOL, "iperf3 reported no intervals");
  }
  if (!udp && intervalsSenderSide && r.receiverMbps !== undefined && r.senderMbps !== undefined) {
    const sent = r.senderMbps as number;
    const got = r.receiverMbps as number;
    if (sent > 0 && Math.abs(sent - got) / sent > 0.05) {
      warnings.push(
        `the per-interval samples are the sender's rate (${round(sent, 1)} Mbit/s overall) but the receiver got ${round(got, 1)} Mbit/s: use receiverMbps for goodput`,
      );
    }
  }
  // Only a count that was asked for: a parameter left to its default (`latlab parse` without
  // --params) says nothing about how a capture was made.
  if (expect.parallel !== undefined && streams !== undefined && streams !== expect.parallel) {
    warnings.push(`iperf3 ran ${streams} stream(s), not the ${expect.parallel} asked for`);
  }
  if (input.exitCode !== undefined && input.exitCode !== null && input.exitCode !== 0) {
    warnings.push(`iperf3 exited with code ${input.exitCode} although its JSON has results and no error`);
  }

  return sanitizedResult({ metric: "throughput", unit: "Mbit/s", samples, reported: r, warnings });
}

/** intervals[].sum of a document (the client's, or the server's server_output_json), each with its path. */
function intervalSums(intervals: unknown, path: string): (Json & { path: string })[] {
  return arr(intervals).flatMap((i, index) => {
    const sum = obj(obj(i)?.sum);
    return sum ? [{ ...sum, path: `${path}[${index}].sum` }] : [];
  });
}

/**
 * RTT of the sending streams (µs): mean_rtt of each stream weighted by the bytes it sent, so
 * the figure is the RTT seen by the average byte; iperf3's per-stream mean_rtt is itself the
 * mean of one kernel srtt reading per interval. Streams with mean_rtt 0 (not measured: reverse
 * mode, where the server sends, or a kernel without TCP_INFO) are left out.
 */
export function rttFromStreams(streams: unknown[]): { meanRttUs?: number; minRttUs?: number; maxRttUs?: number } {
  let weighted = 0;
  let weight = 0;
  let min: number | undefined;
  let max: number | undefined;
  for (const [i, s] of streams.entries()) {
    const sender = obj(obj(s)?.sender);
    const at = `end.streams[${i}].sender`;
    // Reported figures (the TCP RTT of the run): a garbage one fails the cell; 0 = not measured.
    const mean = figure(sender?.mean_rtt, `${at}.mean_rtt`, TIME_STAT_US);
    const lo = figure(sender?.min_rtt, `${at}.min_rtt`, TIME_STAT_US);
    const hi = figure(sender?.max_rtt, `${at}.max_rtt`, TIME_STAT_US);
    if (!sender || mean === undefined || mean <= 0) continue;
    const bytes = figure(sender.bytes, `${at}.bytes`, NON_NEGATIVE) ?? 0;
    const w = bytes > 0 ? bytes : 1;
    weighted += mean * w;
    weight += w;
    if (lo !== undefined && lo > 0) min = min === undefined ? lo : Math.min(min, lo);
    if (hi !== undefined && hi > 0) max = max === undefined ? hi : Math.max(max, hi);
  }
  const out: { meanRttUs?: number; minRttUs?: number; maxRttUs?: number } = {};
  if (weight > 0) out.meanRttUs = round(weighted / weight, 1);
  if (min !== undefined) out.minRttUs = min;
  if (max !== undefined) out.maxRttUs = max;
  return out;
}

/**
 * Warnings about the socket buffers the kernel granted for a -w request. Linux stores (and
 * reports) twice the value asked for, capped at 2 × wmem_max / rmem_max: a granted size below
 * 2 × requested means the kernel clamped it even when it still exceeds the request.
 */
export function windowWarnings(requested: number, snd: number | undefined, rcv: number | undefined, linux: boolean, asked?: string): string[] {
  const out: string[] = [];
  // `asked`: the window the user asked for when -w got less (the host's limit, see index.ts).
  const lead = asked === undefined ? `asked for ${requested} bytes (${human(requested)})` : `${asked} asked, applied ${requested} bytes (${human(requested)})`;
  const granted = [
    ["sndbuf", snd],
    ["rcvbuf", rcv],
  ] as const;
  const small = granted.filter(([, v]) => v !== undefined && v < requested);
  if (small.length) {
    out.push(
      `window: ${lead} but the kernel granted ${small
        .map(([k, v]) => `${k} ${v} bytes (${human(v!)})`)
        .join(", ")}: the window is smaller than requested (net.core.wmem_max / rmem_max)`,
    );
  } else if (linux) {
    const clamped = granted.filter(([, v]) => v !== undefined && v < 2 * requested);
    if (clamped.length) {
      out.push(
        `window: ${lead}; Linux grants twice that when allowed, but gave ${clamped
          .map(([k, v]) => `${k} ${v} bytes (${human(v!)})`)
          .join(", ")}: clamped by net.core.wmem_max / rmem_max`,
      );
    }
  }
  return out;
}
