/**
 * Pure parser for iputils ping output (`LC_ALL=C ping -D -n …`). Also reads older iputils
 * (`icmp_req=`, integer percentages, "time=1283 ms") and runs without -D / -n.
 *
 * What iputils prints (see tests/fixtures/ping/README.md for captures):
 *   [1795235549.747626] 64 bytes from 127.0.0.1: icmp_seq=1 ttl=64 time=0.115 ms
 *   [1795235566.678611] 64 bytes from 127.0.0.1: icmp_seq=1 ttl=64 time=0.070 ms (DUP!)
 *   [1795235565.218954] From 127.0.0.1 icmp_seq=2 Destination Host Unreachable
 *   9 packets transmitted, 6 received, +3 errors, 33.3333% packet loss, time 1629ms
 *   rtt min/avg/max/mdev = 0.029/0.035/0.041/0.003 ms[, pipe 2][, ipg/ewma 0.049/0.021 ms]
 * The rtt line is absent when nothing came back, and `time=` is absent when the payload is
 * under 16 bytes (no room for ping's timestamp). Fatal problems go to stderr as `ping: …`.
 */
import { ToolOutputError, type ToolResult } from "../types.ts";
import { checked, COUNT, LineProblems, NON_NEGATIVE, PERCENT, quote, rangeProblem, RTT_US, sanitizedResult, shorten, strictNumber, TIME_STAT_US } from "../validate.ts";

const TOOL = "ping";
/** How a summary cut short is refused (the words sockperf's parser uses). */
const INCOMPLETE = "ping's summary is incomplete (output cut short?)";

export type PingReported = NonNullable<ToolResult["reported"]>;

export interface PingReply {
  seq: number;
  /** RTT in µs; undefined when ping printed no time (payload < 16 bytes). */
  rttUs?: number;
  /** `time<1 ms` style: the value is an upper bound, not a measurement. */
  bound?: boolean;
  duplicate: boolean;
}

export interface ParsePingInput {
  stdout: string;
  stderr?: string;
  exitCode?: number | null;
}

const msToUs = (ms: number) => Math.round(ms * 1_000_000) / 1000;

/** Lines ping writes to stderr that are warnings, not failures. */
const BENIGN = [/option argument contains garbage/i, /this will become fatal error in the future/i];

function stripNoise(text: string): string {
  return text.replace(/\x1b\[[0-9;]*m/g, "").replace(/\r/g, "");
}

/** `ping -V` → "20221126" (iputils), or "s20161105" for older tags. */
export function parsePingVersion(output: string): string | undefined {
  const m = output.match(/iputils[-_ ]?(s?\d{8})/i) ?? output.match(/ping (?:utility|from iputils)[^\d]*(s?\d+)/i);
  return m?.[1];
}

export interface PingRepliesReading {
  /** Reply lines that could be read, in order. */
  replies: PingReply[];
  /** Reply lines (`… bytes from …`) that could not be read: left out, to be warned about. */
  unreadable: LineProblems;
  /** Duplicates among the unreadable lines (they carry `(DUP!)`): not counted as replies. */
  unreadableDuplicates: number;
}

/**
 * Reads every line that is a reply (`N bytes from …`). A reply line that cannot be read —
 * no `icmp_seq=`, a `time=` that is not a number (`abc`, `nan`, `1e400`), no ` ms` after it
 * (the line was cut), an impossible time (≤ 0, above the statistics' limit), or no `time=` at
 * all while other replies have one (cut short) — is not a sample; it is listed in
 * `unreadable` with its line number. Replies without time= are kept (undefined rttUs) only
 * when no reply has one: ping prints none for payloads under 16 bytes.
 */
export function readPingReplies(stdout: string): PingRepliesReading {
  const lines = stripNoise(stdout).split("\n");
  const replies: (PingReply & { line: number; text: string })[] = [];
  const unreadable = new LineProblems(TOOL, "reply lines");
  let unreadableDuplicates = 0;
  const bad = (line: number, text: string, problem: string) => {
    unreadable.add(line, text, problem);
    if (/\(DUP!\)/.test(text)) unreadableDuplicates++;
  };
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i]!;
    if (!/\d+ bytes from\b/.test(text)) continue;
    const line = i + 1;
    const m = text.match(/\bicmp_[rs]eq=(\d+)(.*)$/);
    if (!m) {
      bad(line, text, "has no icmp_seq=");
      continue;
    }
    const rest = m[2]!;
    const reply: PingReply & { line: number; text: string } = { seq: Number(m[1]), duplicate: /\(DUP!\)/.test(rest), line, text };
    const t = rest.match(/\btime\s*([=<])\s*(\S*?)(?:\s*(ms)\b|\s|$)/);
    if (t) {
      const value = strictNumber(t[2]!);
      if (t[3] === undefined) {
        bad(line, text, Number.isNaN(value) ? "time is not a number" : "time has no unit (ms): the line was cut");
        continue;
      }
      const us = msToUs(value);
      const problem = Number.isNaN(value) ? "is not a number" : rangeProblem(us, RTT_US);
      if (problem !== undefined) {
        bad(line, text, `time ${problem}`);
        continue;
      }
      reply.rttUs = us;
      if (t[1] === "<") reply.bound = true;
    } else if (/\btime\b/.test(rest)) {
      bad(line, text, "time cannot be read");
      continue;
    }
    replies.push(reply);
  }
  // Untimed replies among timed ones were cut short (ping times every reply or none).
  const timed = replies.some((r) => r.rttUs !== undefined);
  const kept: PingReply[] = [];
  for (const r of replies) {
    if (timed && r.rttUs === undefined) {
      bad(r.line, r.text, "has no time= (other replies have one: the line was cut)");
      continue;
    }
    const { line: _line, text: _text, ...reply } = r;
    kept.push(reply);
  }
  unreadable.list.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
  return { replies: kept, unreadable, unreadableDuplicates };
}

/** Per-reply lines that could be read, in order. Exported for tests and for other ICMP tools that mimic ping. */
export function parsePingReplies(stdout: string): PingReply[] {
  return readPingReplies(stdout).replies;
}

/** ICMP errors ping printed per probe ("From 10.0.0.1 icmp_seq=2 Destination Host Unreachable"). */
function parseErrorLines(stdout: string): string[] {
  const out: string[] = [];
  for (const line of stripNoise(stdout).split("\n")) {
    const m = line.match(/\bFrom\s+(\S+)(?:\s+\([^)]*\))?:?\s+icmp_[rs]eq=\d+\s+(.+?)\s*$/);
    if (m) out.push(`${m[2]} (from ${m[1]})`);
  }
  return out;
}

function pingMessages(text: string): string[] {
  return stripNoise(text)
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => /^ping6?:\s/.test(l))
    .map((l) => l.replace(/^ping6?:\s*/, ""));
}

function countBy(items: string[]): string {
  const counts = new Map<string, number>();
  for (const i of items) counts.set(i, (counts.get(i) ?? 0) + 1);
  return [...counts].map(([k, n]) => (n > 1 ? `${k} ×${n}` : k)).join("; ");
}

/** The statistics line: counts, loss, time. A line that says it is one but cannot be read fails. */
function readStatistics(stdout: string) {
  const lines = stdout.split("\n");
  const at = lines.findIndex((l) => /\bpackets transmitted\b/.test(l));
  if (at < 0) return undefined;
  const text = lines[at]!;
  const where = { line: at + 1, text };
  const m = text.match(/(\S+)\s+packets transmitted,\s*(\S+)\s+(?:packets\s+)?received([^\n]*)/);
  if (!m) throw new ToolOutputError(TOOL, `line ${at + 1}: the statistics line cannot be read: ${quote(text)}`);
  const count = (field: string, token: string | undefined) => (token === undefined ? 0 : checked(TOOL, field, strictNumber(token), COUNT, where));
  // A Ctrl-C echoed by the terminal may be glued to the count in a pasted capture.
  const transmitted = count("transmitted", m[1]!.replace(/^\^C/, ""));
  const received = count("received", m[2]);
  const rest = m[3]!;
  const duplicates = count("duplicates", rest.match(/\+(\S+)\s+duplicates?/)?.[1]);
  const corrupted = count("corrupted", rest.match(/\+(\S+)\s+corrupted/)?.[1]);
  const errors = count("errors", rest.match(/\+(\S+)\s+errors?/)?.[1]);
  const lossText = rest.match(/(\S+)%\s+packet loss/)?.[1];
  if (lossText !== undefined) checked(TOOL, "packet loss", strictNumber(lossText), PERCENT, where);
  const timeText = rest.match(/time\s+(\S+?)\s*ms/)?.[1];
  const totalTimeMs = timeText === undefined ? undefined : checked(TOOL, "time", strictNumber(timeText), NON_NEGATIVE, where);
  return { transmitted, received, duplicates, corrupted, errors, lossText, totalTimeMs, text };
}

/** The `rtt min/avg/max/mdev` line, in µs. A line that says it is one but cannot be read fails. */
function readRttLine(stdout: string): Record<string, number> | undefined {
  const lines = stdout.split("\n");
  const at = lines.findIndex((l) => /\b(?:rtt|round-trip)\s+min\/avg\/max\/(?:mdev|stddev)\b/.test(l));
  if (at < 0) return undefined;
  const text = lines[at]!;
  const where = { line: at + 1, text };
  const m = text.match(/=\s*([^\s/]*)\/([^\s/]*)\/([^\s/]*)\/([^\s/,]*)\s*ms\b(.*)$/);
  if (!m) throw new ToolOutputError(TOOL, `line ${at + 1}: the rtt min/avg/max/mdev line cannot be read: ${quote(text)}`);
  const us = (field: string, token: string) => checked(TOOL, field, msToUs(strictNumber(token)), TIME_STAT_US, where);
  const out: Record<string, number> = {
    min: us("rtt min", m[1]!),
    mean: us("rtt avg", m[2]!),
    max: us("rtt max", m[3]!),
    // iputils' "mdev" is the population standard deviation (sqrt(E[x²] − E[x]²)).
    stddev: us("rtt mdev", m[4]!),
  };
  out.mdev = out.stddev!;
  const rest = m[5]!;
  const pipe = rest.match(/,\s*pipe\s+(\S+?)(?:,|\s|$)/)?.[1];
  if (pipe !== undefined) out.pipe = checked(TOOL, "pipe", strictNumber(pipe), COUNT, where);
  const ipg = rest.match(/,\s*ipg\/ewma\s+([^\s/]*)\/(\S*?)\s*ms/);
  if (ipg) {
    out.ipgUs = us("ipg", ipg[1]!);
    out.ewmaUs = us("ewma", ipg[2]!);
  }
  return out;
}

/**
 * Parses one ping run. Samples are the RTTs of replies (duplicates excluded), in µs.
 * Throws ToolOutputError when ping failed or nothing came back.
 *
 * Validation (issue 12): a reply line that cannot be read (see {@link readPingReplies}) is one
 * probe among many, so it is left out with a warning that counts such lines and quotes the
 * first; when they are more than half of the reply lines the cell fails (the output is not
 * ping's as latlab knows it). The statistics and rtt lines are ping's summary of the whole
 * run: a figure there that cannot be read or is impossible fails the cell, naming the figure
 * and the line.
 */
export function parsePing(input: ParsePingInput): ToolResult {
  const stdout = stripNoise(input.stdout);
  const stderr = stripNoise(input.stderr ?? "");
  const warnings: string[] = [];

  const messages = [...pingMessages(stderr), ...pingMessages(stdout)];
  const fatal = messages.filter((m) => !BENIGN.some((re) => re.test(m)));
  const benign = messages.filter((m) => BENIGN.some((re) => re.test(m)));

  const stats = readStatistics(stdout);
  if (!stats) {
    if (fatal.length > 0) throw new ToolOutputError(TOOL, shorten([...new Set(fatal)].join("; ")));
    if (benign.length > 0) throw new ToolOutputError(TOOL, shorten([...new Set(benign)].join("; ")));
    const tail = stdout.trim().split("\n").slice(-2).join("\n");
    throw new ToolOutputError(TOOL, `no ping statistics in output${tail ? ` (last lines: ${quote(tail)})` : " (output is empty)"}`);
  }

  const { transmitted, received, duplicates, corrupted, errors, lossText } = stats;
  // Every ping latlab reads (iputils, BSD, busybox) ends its statistics line with "N% packet
  // loss" (iputils then its time): a line without it was cut, and its counts may be too.
  if (lossText === undefined) throw new ToolOutputError(TOOL, `${INCOMPLETE}: the statistics line has no packet loss figure: ${quote(stats.text.trimEnd())}`);
  const lossPercent = lossText !== undefined ? Number(lossText) : transmitted > 0 ? ((transmitted - received) * 100) / transmitted : undefined;

  const errorLines = parseErrorLines(stdout);

  const reported: PingReported = {
    metric: "rtt",
    unit: "us",
    count: received,
    transmitted,
    received,
    duplicates,
    errors,
    corrupted,
    lossPercent,
  };
  if (stats.totalTimeMs !== undefined) reported.totalTimeMs = stats.totalTimeMs;

  const rtt = readRttLine(stdout);
  if (rtt) Object.assign(reported, rtt);

  if (received === 0) {
    const why: string[] = [];
    if (errors > 0) why.push(`+${errors} errors${errorLines.length ? `: ${countBy(errorLines)}` : ""}`);
    if (fatal.length > 0) why.push(countBy(fatal));
    throw new ToolOutputError(
      TOOL,
      shorten(`no reply: ${lossText ?? 100}% packet loss (${transmitted} sent)${why.length ? `; ${why.join("; ")}` : ""}`, 400),
    );
  }

  const reading = readPingReplies(stdout);
  const replies = reading.replies;
  const replyLines = replies.length + reading.unreadable.count;
  reading.unreadable.failIfMost(replyLines);
  const unreadableWarning = reading.unreadable.warning(replyLines);
  if (unreadableWarning) warnings.push(unreadableWarning);
  const firsts = replies.filter((r) => !r.duplicate);
  const firstLines = firsts.length + reading.unreadable.count - reading.unreadableDuplicates;
  const timed = firsts.filter((r) => r.rttUs !== undefined);
  if (timed.length === 0) {
    if (firsts.length > 0) {
      throw new ToolOutputError(
        TOOL,
        "replies carry no time= (payload under 16 bytes leaves no room for ping's timestamp)",
      );
    }
    if (reading.unreadable.count > 0) {
      throw new ToolOutputError(TOOL, `no reply line could be read (${unreadableWarning})`);
    }
    if (rtt) {
      warnings.push("ping printed no per-reply lines (quiet mode?); samples are empty, only its summary is kept");
    } else {
      throw new ToolOutputError(TOOL, `ping reports ${received} replies but printed neither replies nor an rtt line`);
    }
  }
  // ping prints the rtt line whenever timed replies came back: without it the output was cut
  // after the statistics, as sockperf's summary can be (the summary is what the figures check).
  if (!rtt && timed.length > 0) throw new ToolOutputError(TOOL, `${INCOMPLETE}: no rtt min/avg/max/mdev line after the statistics, which ping prints whenever timed replies came back`);
  const samples = timed.map((r) => r.rttUs!);

  if (received < transmitted) {
    warnings.push(`packet loss: ${transmitted - received} of ${transmitted} probes unanswered (${lossText ?? lossPercent}%)`);
  }
  if (received > transmitted) warnings.push(`ping counted ${received} received of ${transmitted} transmitted`);
  if (duplicates > 0) warnings.push(`${duplicates} duplicate replies (DUP!), left out of the samples`);
  if (corrupted > 0) warnings.push(`${corrupted} corrupted replies`);
  if (errors > 0) {
    warnings.push(`+${errors} errors${errorLines.length ? `: ${countBy(errorLines)}` : ""}`);
  }
  for (const m of [...new Set([...fatal, ...benign])].slice(0, 5)) warnings.push(`ping: ${shorten(m)}`);
  const bounds = timed.filter((r) => r.bound).length;
  if (bounds > 0) warnings.push(`${bounds} replies reported as time<N ms; recorded at the bound`);
  // Reply lines (read or not) against ping's own count: a difference means lines went missing.
  if (firstLines > 0 && firstLines !== received) {
    warnings.push(`ping printed ${firstLines} reply lines but counted ${received} received`);
  }
  if (input.exitCode !== undefined && input.exitCode !== null && input.exitCode !== 0) {
    warnings.push(`ping exited with code ${input.exitCode}`);
  }

  return sanitizedResult({ metric: "rtt", unit: "us", samples, reported, warnings });
}
