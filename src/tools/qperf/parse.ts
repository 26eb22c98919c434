/**
 * Pure parsers for qperf output (0.4.x): the `test:` blocks a client prints, and `--version`.
 *
 * What qperf prints (see tests/fixtures/qperf/README.md for captured texts):
 *
 *     tcp_lat:
 *         latency         =    43.9 us
 *         msg_rate        =    22.8 K/sec
 *         loc_send_bytes  =    1.46 MB
 *         loc_send_msgs   =  22,771
 *
 * - Latency tests print the MEAN ONE-WAY latency: qperf divides the run time by the messages
 *   received on both sides (qperf.c calc_results: `latency = time_real / (loc_recv + rem_recv)`),
 *   i.e. RTT/2. Everything returned here is RTT in µs (×2). No per-message values exist.
 * - Units auto-scale by 1000 (qperf.c view_time/view_band/view_rate/view_size divide by 1000
 *   while ≥ 1000): ns/us/ms/sec, bytes/KB/MB/GB/TB per sec (10³-based: 740.48 KB = 740,480
 *   bytes, checked against the message counts of a capture), bits/sec…Tb/sec with -ub,
 *   /sec/K/sec/M/sec, counts ≥ 10⁶ as "1.45 million". Sizes that are whole multiples of 1024
 *   print as `64 KiB (65,536)`. Values carry 3 significant digits (-e changes that) and
 *   thousands commas; `-uu` prints unscaled integers without commas (ns, bytes, /sec).
 * - Failures print a line of text instead of results (`127.0.0.1: failed to connect`,
 *   `server: unable to make TCP socket`, `foo_lat: bad test; try: …`, and after the
 *   `tcp_lat:` header `failed to receive results: server not responding` when the server
 *   died mid-test), exit code 1. A UDP
 *   message larger than a datagram gives exit 0 with `latency = 0 ns` and send errors.
 */
import { ToolOutputError, type ToolResult } from "../types.ts";
import { quote, rangeProblem, RTT_US, sanitizedResult, shorten, THROUGHPUT_MBPS, valueError, type Range, type Where } from "../validate.ts";

const TOOL = "qperf";

export type QperfReported = NonNullable<ToolResult["reported"]>;

/** One `name = value unit` line of a test block. */
export interface QperfEntry {
  name: string;
  /** The number as printed, commas removed (NaN when the value is not a number). */
  value: number;
  /** Unit text as printed ("us", "MB/sec", "% cpus", "" for plain counts). */
  unit: string;
  /** The exact value qperf gave in parentheses (`64 KiB (65,536)` → 65536). */
  exact?: number;
  /** Everything right of `=`, trimmed. */
  text: string;
  /** 1-based line of the text given to parseQperfOutput, and that line trimmed. */
  line?: number;
  raw?: string;
}

export interface QperfBlock {
  test: string;
  entries: QperfEntry[];
}

export interface QperfOutput {
  blocks: QperfBlock[];
  /** Lines that are neither a test header nor an entry: qperf's error messages. */
  messages: string[];
}

type Kind = "time" | "bandwidth" | "rate" | "size" | "count" | "cpus" | "cost";

/** Unit → [kind, factor to the kind's base unit]. Bases: seconds, bit/s, 1/s, bytes, 1, %, s/GB. */
const UNITS: Record<string, [Kind, number]> = {
  ns: ["time", 1e-9],
  us: ["time", 1e-6],
  ms: ["time", 1e-3],
  sec: ["time", 1],
  "bytes/sec": ["bandwidth", 8],
  "KB/sec": ["bandwidth", 8e3],
  "MB/sec": ["bandwidth", 8e6],
  "GB/sec": ["bandwidth", 8e9],
  "TB/sec": ["bandwidth", 8e12],
  "bits/sec": ["bandwidth", 1],
  "Kb/sec": ["bandwidth", 1e3],
  "Mb/sec": ["bandwidth", 1e6],
  "Gb/sec": ["bandwidth", 1e9],
  "Tb/sec": ["bandwidth", 1e12],
  "/sec": ["rate", 1],
  "K/sec": ["rate", 1e3],
  "M/sec": ["rate", 1e6],
  "G/sec": ["rate", 1e9],
  "T/sec": ["rate", 1e12],
  bytes: ["size", 1],
  KB: ["size", 1e3],
  MB: ["size", 1e6],
  GB: ["size", 1e9],
  TB: ["size", 1e12],
  KiB: ["size", 1024],
  MiB: ["size", 1024 ** 2],
  GiB: ["size", 1024 ** 3],
  TiB: ["size", 1024 ** 4],
  "": ["count", 1],
  thousand: ["count", 1e3],
  million: ["count", 1e6],
  billion: ["count", 1e9],
  trillion: ["count", 1e12],
  "% cpus": ["cpus", 1],
  "ns/GB": ["cost", 1e-9],
  "us/GB": ["cost", 1e-6],
  "ms/GB": ["cost", 1e-3],
  "sec/GB": ["cost", 1],
};

/** Key suffix saying which unit a normalised value is in. */
const SUFFIX: Record<Kind, string> = {
  time: "Seconds",
  bandwidth: "Mbps",
  rate: "PerSec",
  size: "Bytes",
  count: "",
  cpus: "Pct",
  cost: "SecPerGB",
};

/** Rounds float noise away (keeps 9 significant digits, far below what qperf prints). */
function clean(v: number): number {
  return Number(v.toPrecision(12));
}

/** "1,234.5" → 1234.5; NaN when not a number. */
export function qperfNumber(text: string): number {
  const t = text.replace(/,/g, "").trim();
  return /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/.test(t) ? Number(t) : Number.NaN;
}

/** loc_send_bytes → locSendBytes */
function camel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** Splits qperf output into its test blocks and its other (message) lines. */
export function parseQperfOutput(text: string): QperfOutput {
  const blocks: QperfBlock[] = [];
  const messages: string[] = [];
  let current: QperfBlock | undefined;
  const lines = text.replace(/\r/g, "").split("\n");
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    if (raw.trim() === "") continue;
    // Test names have an underscore (tcp_lat, rc_bw…) or are conf/quit; "server:" alone is
    // the start of an error message whose rest was lost.
    const header = raw.match(/^\s*([a-z][a-z0-9]*_[a-z0-9_]+|conf|quit):\s*$/);
    if (header) {
      current = { test: header[1]!, entries: [] };
      blocks.push(current);
      continue;
    }
    const entry = raw.match(/^\s*([a-z][a-z0-9_]*)\s*=\s*(.*?)\s*$/);
    if (entry && current) {
      current.entries.push({ ...parseEntry(entry[1]!, entry[2]!), line: i + 1, raw: raw.trim() });
      continue;
    }
    messages.push(raw.trim());
  }
  return { blocks, messages };
}

function parseEntry(name: string, rhs: string): QperfEntry {
  // "64 KiB (65,536)" | "43.9 us" | "22,771" | "1.45 million" | "57 % cpus" | "rc" (a string)
  const m = rhs.match(/^([-+]?[\d,]*\.?\d+(?:[eE][-+]?\d+)?)\s*(.*?)\s*(?:\(([\d,]+)\))?$/);
  if (!m) return { name, value: Number.NaN, unit: "", text: rhs };
  const e: QperfEntry = { name, value: qperfNumber(m[1]!), unit: m[2]!, text: rhs };
  if (m[3] !== undefined) e.exact = qperfNumber(m[3]);
  return e;
}

/**
 * An entry in its base unit: seconds, Mbit/s, per second, bytes, plain count, percent of one
 * CPU, seconds per GB. Undefined for units qperf is not known to print.
 */
export function normaliseEntry(e: QperfEntry): { kind: Kind; value: number } | undefined {
  const u = UNITS[e.unit];
  if (!u || Number.isNaN(e.value)) return undefined;
  const [kind, factor] = u;
  if (kind === "size" && e.exact !== undefined) return { kind, value: e.exact };
  const v = e.value * factor;
  return { kind, value: clean(kind === "bandwidth" ? v / 1e6 : v) };
}

/** Name under `reported` for a normalised entry: camelCase plus a unit suffix. */
export function reportedKey(name: string, kind: Kind): string {
  const base = camel(name);
  const suffix = SUFFIX[kind];
  return base.endsWith(suffix) ? base : base + suffix;
}

/** `qperf --version` → "0.4.11". */
export function parseQperfVersion(output: string): string | undefined {
  const v = output.match(/^\s*qperf\s+v?(\d+(?:\.\d+)+\S*)/m)?.[1];
  return v === undefined ? undefined : shorten(v, 80);
}

export type QperfTestKind = "latency" | "bandwidth";

export function qperfTestKind(test: string): QperfTestKind | undefined {
  if (/_lat$/.test(test)) return "latency";
  if (/_bw$/.test(test)) return "bandwidth";
  return undefined;
}

export interface ParseQperfInput {
  stdout: string;
  stderr?: string;
  exitCode?: number | null;
}

export interface QperfExpect {
  test?: string;
  messageSize?: number;
  duration?: number;
}

/**
 * Parses one qperf client run into a normalised result: latency tests → metric "rtt", µs,
 * samples = [mean RTT] (2 × the one-way latency qperf printed); bandwidth tests → metric
 * "throughput", Mbit/s, samples = [bw]. `reported` holds every printed value in base units.
 * Throws ToolOutputError with qperf's own text when it failed.
 */
export function parseQperf(input: ParseQperfInput, expect: QperfExpect = {}): ToolResult {
  const text = `${input.stdout}\n${input.stderr ?? ""}`;
  const { blocks, messages } = parseQperfOutput(text);
  // Lines past stdout's are stderr's (the text is stdout, "\n", stderr).
  const stdoutLines = input.stdout.replace(/\r/g, "").split("\n").length;
  const where = (e: QperfEntry): Where => {
    const text = e.raw ?? `${e.name} = ${e.text}`;
    if (e.line === undefined) return { text };
    return e.line > stdoutLines ? { line: e.line - stdoutLines, source: "stderr", text } : { line: e.line, text };
  };
  const warnings: string[] = [];
  const usable = blocks.filter((b) => qperfTestKind(b.test) !== undefined && b.entries.length > 0);

  if (usable.length === 0) {
    if (messages.length > 0) throw new ToolOutputError(TOOL, explain(messages, blocks, input.exitCode));
    if (blocks.length > 0) {
      throw new ToolOutputError(TOOL, `qperf printed "${blocks.map((b) => `${b.test}:`).join(" ")}" but no results${exitNote(input.exitCode)}`);
    }
    throw new ToolOutputError(TOOL, `no qperf results in the output (output is empty)${exitNote(input.exitCode)}`);
  }

  let block = expect.test ? usable.find((b) => b.test === expect.test) : undefined;
  if (!block) {
    block = usable[0]!;
    if (expect.test) warnings.push(`expected qperf test ${expect.test} but the output has ${usable.map((b) => b.test).join(", ")}; read ${block.test}`);
  }
  if (usable.length > 1) {
    warnings.push(`qperf ran ${usable.length} tests (${usable.map((b) => b.test).join(", ")}); read ${block.test} only`);
  }
  for (const m of messages.slice(0, MAX_MESSAGES)) warnings.push(`qperf: ${shorten(m)}`);
  if (messages.length > MAX_MESSAGES) warnings.push(`qperf: … and ${messages.length - MAX_MESSAGES} more lines that are not results`);

  const kind = qperfTestKind(block.test)!;
  const reported: QperfReported = { test: block.test };
  const unknown: string[] = [];
  let main: QperfEntry | undefined;
  for (const e of block.entries) {
    if ((kind === "latency" && e.name === "latency") || (kind === "bandwidth" && e.name === "bw")) {
      main = e;
      continue;
    }
    const n = normaliseEntry(e);
    if (n) {
      // A figure qperf printed is kept in `reported`: an impossible one (negative, infinite)
      // means the block is damaged, and the result next to it cannot be trusted either: fail.
      const problem = rangeProblem(n.value, SECONDARY[n.kind]);
      if (problem !== undefined) throw valueError(TOOL, e.name, problem, where(e));
      reported[reportedKey(e.name, n.kind)] = n.value;
    } else {
      reported[camel(e.name)] = shorten(e.text);
      unknown.push(`${e.name} = ${e.text}`);
    }
  }
  if (unknown.length) warnings.push(shorten(`qperf printed values in units latlab does not know (or not numbers), kept as text: ${unknown.join("; ")}`, 400));

  const mainName = kind === "latency" ? "latency" : "bw";
  if (!main) throw new ToolOutputError(TOOL, `qperf's ${block.test} block has no "${mainName} =" line`);
  // The one value that is the result: anything wrong with it fails the cell.
  const mainWhere = where(main);
  if (Number.isNaN(main.value)) throw valueError(TOOL, mainName, "is not a number", mainWhere);
  const n = normaliseEntry(main);
  const wantKind = kind === "latency" ? "time" : "bandwidth";
  if (!n || n.kind !== wantKind) {
    throw valueError(TOOL, mainName, `is unreadable: "${shorten(main.unit, 40)}" is not a unit of ${wantKind === "time" ? "time" : "bandwidth"} qperf prints`, mainWhere);
  }
  reported.printed = shorten(`${mainName} = ${main.text}`);

  const errors = Object.entries(reported).filter(([k, v]) => /Errors$/.test(k) && typeof v === "number" && v > 0);
  if (n.value === 0) {
    const why = errors.length ? ` (${errors.map(([k, v]) => `${k}=${v}`).join(", ")}: nothing came back${kind === "latency" && /^udp/.test(block.test) ? "; a UDP message must fit a datagram, ≤ 65507 bytes" : ""})` : "";
    throw new ToolOutputError(TOOL, `${block.test} measured nothing: ${mainName} = ${main.text}${why}`);
  }
  if (errors.length) warnings.push(`qperf counted errors: ${errors.map(([k, v]) => `${k}=${v}`).join(", ")}`);

  let sample: number;
  if (kind === "latency") {
    const oneWayUs = clean(n.value * 1e6);
    sample = clean(oneWayUs * 2);
    const problem = rangeProblem(sample, RTT_AS_PRINTED);
    if (problem !== undefined) throw valueError(TOOL, mainName, problem, mainWhere);
    reported.printedOneWayUs = oneWayUs;
    reported.mean = sample;
  } else {
    sample = n.value;
    const problem = rangeProblem(sample, THROUGHPUT_MBPS);
    if (problem !== undefined) throw valueError(TOOL, mainName, problem, mainWhere);
    reported.mean = sample;
  }

  if (expect.messageSize !== undefined && typeof reported.msgSizeBytes === "number" && reported.msgSizeBytes !== expect.messageSize) {
    warnings.push(`qperf used ${reported.msgSizeBytes}-byte messages, not the ${expect.messageSize} asked for`);
  }
  if (expect.duration !== undefined && typeof reported.timeSeconds === "number" && reported.timeSeconds !== expect.duration) {
    warnings.push(`qperf ran for ${reported.timeSeconds} s, not the ${expect.duration} s asked for`);
  }
  if (input.exitCode !== undefined && input.exitCode !== null && input.exitCode !== 0) {
    warnings.push(`qperf exited with code ${input.exitCode} although it printed results`);
  }

  return sanitizedResult({
    metric: kind === "latency" ? "rtt" : "throughput",
    unit: kind === "latency" ? "us" : "Mbit/s",
    samples: [sample],
    reported,
    warnings,
  });
}

/** qperf's lines that are not results, quoted as warnings at most. */
const MAX_MESSAGES = 5;

/** Range of each kind of secondary figure, in its base unit (see UNITS): none is negative. */
const SECONDARY: Record<Kind, Range> = {
  time: { min: 0, max: Number.MAX_VALUE, unit: "s" },
  bandwidth: THROUGHPUT_MBPS,
  rate: { min: 0, max: Number.MAX_VALUE, unit: "/sec" },
  size: { min: 0, max: Number.MAX_VALUE, unit: "bytes" },
  count: { min: 0, max: Number.MAX_VALUE },
  cpus: { min: 0, max: Number.MAX_VALUE, unit: "% cpus" },
  cost: { min: 0, max: Number.MAX_VALUE, unit: "s/GB" },
};

/** The RTT latlab makes of qperf's latency (2 × one-way), as messages name it. */
const RTT_AS_PRINTED: Range = { ...RTT_US, unit: "µs (RTT)" };

function exitNote(code: number | null | undefined): string {
  return code !== undefined && code !== null && code !== 0 ? `; exit code ${code}` : "";
}

/**
 * qperf's own error lines look like `127.0.0.1: failed to connect`, `server: unable to …`,
 * `foo_lat: bad test; try: …`: a word, a colon. Anything else is not qperf talking.
 */
const QPERF_MESSAGE = /^[\w.\-[\]]+:(?:\s|$)/;
/**
 * qperf's messages that start with words, not a name and a colon (strings in the 0.4.11
 * binary): `failed to %s %s: %s not responding` (captured: `failed to receive results: server
 * not responding` when the server died mid-test), `could not make %s connection to server`,
 * `synchronize %s failure: data does not match`.
 */
const QPERF_SENTENCE = /^(?:failed to \w+ [\w ]+: \w+ not responding|could not make \S+ connection to server|synchronize [\w ]+ failure: .*)$/;
const isQperfMessage = (m: string): boolean => QPERF_MESSAGE.test(m) || QPERF_SENTENCE.test(m);

function explain(messages: string[], blocks: QperfBlock[], exitCode: number | null | undefined): string {
  if (!messages.every(isQperfMessage)) {
    return `no qperf results, and the output is not qperf's: ${quote(messages.join("\n"))}${exitNote(exitCode)}`;
  }
  const text = shorten(messages.map((m) => (/:\s*$/.test(m) ? `${m.trim()} (the rest of qperf's message was lost)` : m)).join("; "));
  const hints: string[] = [];
  if (messages.some((m) => /failed to connect/.test(m))) {
    // qperf prints this same line for a refused connection and for "Network is unreachable" (no
    // route, a link down): it says nothing of which, so neither is blamed alone. The runner names
    // the cause when it finds one (the server's exit, a link down, routes lost).
    hints.push("no connection to the qperf server's listen port (qperf -lp) within qperf's 5 s wait: either no server listened there, or the network to its host was unreachable (qperf says the same for both)");
  }
  if (messages.some((m) => /not responding$/.test(m))) {
    hints.push("the other end stopped answering during the test: the qperf server (or its per-test child) died, or the path failed");
  }
  if (messages.some((m) => /^server:/.test(m))) {
    hints.push(`the server side failed${blocks.length ? ` during ${blocks.map((b) => b.test).join(", ")}` : ""}; is the data port (-ip) free on the server?`);
  }
  return hints.length ? `${text} (${hints.join("; ")})` : text;
}
