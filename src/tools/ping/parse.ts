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

const TOOL = "ping";
const NUM = String.raw`\d+(?:\.\d+)?`;

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

/** Per-reply lines, in order. Exported for tests and for other ICMP tools that mimic ping. */
export function parsePingReplies(stdout: string): PingReply[] {
  const replies: PingReply[] = [];
  const re = new RegExp(String.raw`\bbytes from\b.*?\bicmp_[rs]eq=(\d+)(.*)$`);
  const time = new RegExp(String.raw`\btime\s*([=<])\s*(${NUM})\s*ms\b`);
  for (const line of stripNoise(stdout).split("\n")) {
    const m = line.match(re);
    if (!m) continue;
    const rest = m[2]!;
    const t = rest.match(time);
    const reply: PingReply = { seq: Number(m[1]), duplicate: /\(DUP!\)/.test(rest) };
    if (t) {
      reply.rttUs = msToUs(Number(t[2]));
      if (t[1] === "<") reply.bound = true;
    }
    replies.push(reply);
  }
  return replies;
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

/**
 * Parses one ping run. Samples are the RTTs of replies (duplicates excluded), in µs.
 * Throws ToolOutputError when ping failed or nothing came back.
 */
export function parsePing(input: ParsePingInput): ToolResult {
  const stdout = stripNoise(input.stdout);
  const stderr = stripNoise(input.stderr ?? "");
  const warnings: string[] = [];

  const messages = [...pingMessages(stderr), ...pingMessages(stdout)];
  const fatal = messages.filter((m) => !BENIGN.some((re) => re.test(m)));
  const benign = messages.filter((m) => BENIGN.some((re) => re.test(m)));

  const stats = stdout.match(/(\d+)\s+packets transmitted,\s*(\d+)\s+(?:packets\s+)?received([^\n]*)/);
  if (!stats) {
    if (fatal.length > 0) throw new ToolOutputError(TOOL, [...new Set(fatal)].join("; "));
    if (benign.length > 0) throw new ToolOutputError(TOOL, [...new Set(benign)].join("; "));
    const tail = stdout.trim().split("\n").slice(-2).join(" | ");
    throw new ToolOutputError(TOOL, `no ping statistics in output${tail ? ` (last lines: ${tail})` : " (output is empty)"}`);
  }

  const transmitted = Number(stats[1]);
  const received = Number(stats[2]);
  const rest = stats[3]!;
  const duplicates = Number(rest.match(/\+(\d+)\s+duplicates?/)?.[1] ?? 0);
  const corrupted = Number(rest.match(/\+(\d+)\s+corrupted/)?.[1] ?? 0);
  const errors = Number(rest.match(/\+(\d+)\s+errors?/)?.[1] ?? 0);
  const lossText = rest.match(new RegExp(String.raw`(${NUM})%\s+packet loss`))?.[1];
  const lossPercent = lossText !== undefined ? Number(lossText) : transmitted > 0 ? ((transmitted - received) * 100) / transmitted : undefined;
  const totalTime = rest.match(/time\s+(\d+)\s*ms/)?.[1];

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
  if (totalTime !== undefined) reported.totalTimeMs = Number(totalTime);

  const rtt = stdout.match(
    new RegExp(
      String.raw`(?:rtt|round-trip)\s+min/avg/max/(?:mdev|stddev)\s*=\s*(${NUM})/(${NUM})/(${NUM})/(${NUM})\s*ms` +
        String.raw`(?:,\s*pipe\s+(\d+))?(?:,\s*ipg/ewma\s+(${NUM})/(${NUM})\s*ms)?`,
    ),
  );
  if (rtt) {
    reported.min = msToUs(Number(rtt[1]));
    reported.mean = msToUs(Number(rtt[2]));
    reported.max = msToUs(Number(rtt[3]));
    // iputils' "mdev" is the population standard deviation (sqrt(E[x²] − E[x]²)).
    reported.stddev = msToUs(Number(rtt[4]));
    reported.mdev = reported.stddev;
    if (rtt[5] !== undefined) reported.pipe = Number(rtt[5]);
    if (rtt[6] !== undefined) reported.ipgUs = msToUs(Number(rtt[6]));
    if (rtt[7] !== undefined) reported.ewmaUs = msToUs(Number(rtt[7]));
  }

  if (received === 0) {
    const why: string[] = [];
    if (errors > 0) why.push(`+${errors} errors${errorLines.length ? `: ${countBy(errorLines)}` : ""}`);
    if (fatal.length > 0) why.push(countBy(fatal));
    throw new ToolOutputError(
      TOOL,
      `no reply: ${lossText ?? 100}% packet loss (${transmitted} sent)${why.length ? `; ${why.join("; ")}` : ""}`,
    );
  }

  const replies = parsePingReplies(stdout);
  const firsts = replies.filter((r) => !r.duplicate);
  const timed = firsts.filter((r) => r.rttUs !== undefined);
  if (timed.length === 0) {
    if (firsts.length > 0) {
      throw new ToolOutputError(
        TOOL,
        "replies carry no time= (payload under 16 bytes leaves no room for ping's timestamp)",
      );
    }
    if (rtt) {
      warnings.push("ping printed no per-reply lines (quiet mode?); samples are empty, only its summary is kept");
    } else {
      throw new ToolOutputError(TOOL, `ping reports ${received} replies but printed neither replies nor an rtt line`);
    }
  }
  const samples = timed.map((r) => r.rttUs!);

  if (received < transmitted) {
    warnings.push(`packet loss: ${transmitted - received} of ${transmitted} probes unanswered (${lossText ?? lossPercent}%)`);
  }
  if (duplicates > 0) warnings.push(`${duplicates} duplicate replies (DUP!), left out of the samples`);
  if (corrupted > 0) warnings.push(`${corrupted} corrupted replies`);
  if (errors > 0) {
    warnings.push(`+${errors} errors${errorLines.length ? `: ${countBy(errorLines)}` : ""}`);
  }
  for (const m of [...new Set([...fatal, ...benign])]) warnings.push(`ping: ${m}`);
  const bounds = timed.filter((r) => r.bound).length;
  if (bounds > 0) warnings.push(`${bounds} replies reported as time<N ms; recorded at the bound`);
  if (firsts.length > 0 && firsts.length !== received) {
    warnings.push(`ping printed ${firsts.length} reply lines but counted ${received} received`);
  }
  if (!rtt) warnings.push("ping printed no rtt min/avg/max/mdev line");
  if (input.exitCode !== undefined && input.exitCode !== null && input.exitCode !== 0) {
    warnings.push(`ping exited with code ${input.exitCode}`);
  }

  return { metric: "rtt", unit: "us", samples, reported, warnings };
}
