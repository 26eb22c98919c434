/**
 * Pure parsers for TCP traceroutes: nmap's XML (`nmap … --traceroute -oX -`, what latlab runs),
 * nmap's plain-text TRACEROUTE table (what users paste) and tcptraceroute's text. See
 * tests/fixtures/traceroute/README.md for real captures of each.
 *
 * nmap XML (7.93):
 *   <ports><port protocol="tcp" portid="22"><state state="open" reason="syn-ack" …/>…</port></ports>
 *   <trace port="22" proto="tcp">            (no attributes for a directly connected target;
 *   <hop ttl="1" ipaddr="198.18.1.1" rtt="0.11"/>   proto="icmp" when the port was filtered:
 *   <hop ttl="3" ipaddr="198.18.3.2" rtt="0.01"/>   nmap then traces with ICMP echo instead)
 *   </trace>
 * Hops that timed out are left out of the XML (a gap in ttl); `rtt` is `-&#45;` ("--") when nmap
 * has no time. An unreachable target leaves the trace without a hop at the target's address.
 *
 * nmap text:
 *   TRACEROUTE (using port 22/tcp)
 *   HOP RTT     ADDRESS
 *   -   Hops 1-2 are the same as for 198.18.2.2     (several targets in one run)
 *   1   ...                                         (one silent hop)
 *   2   0.02 ms 198.18.2.2
 *   3   ... 30                                      (silent hops 3 to 30)
 *   1   --      198.18.4.2                          (no time)
 *   11  17.65 ms name.example (74.207.244.221)      (without -n)
 *
 * tcptraceroute (1.5beta7):
 *    1  198.18.1.1  0.055 ms * 0.047 ms
 *    2  * * *
 *    3  198.18.3.2 [open]  0.053 ms  0.091 ms  0.059 ms
 * with "Tracing the path to 198.18.3.2 on TCP port 22 (ssh), 30 hops max" and, when it gives
 * up, "Destination not reached" on stderr.
 */
import { ToolOutputError, type ToolResult } from "../types.ts";
import { checked, lineAt, lineTextAt, PORT, rangeProblem, sanitizedResult, shorten, strictNumber, TIME_STAT_US, TTL, valueError, type Where } from "../validate.ts";

const TOOL = "traceroute";
/** Note on a host that nmap scanned but did not trace (a loopback target). */
const NO_TRACE = "no trace";

export type TraceFormat = "nmap-xml" | "nmap-text" | "tcptraceroute";

export interface TraceHop {
  ttl: number;
  /** IP address (or, in pasted text, whatever stood in the ADDRESS column: `13.xx.xx.xx`). */
  address: string;
  /** Reverse-DNS name, when the output had one. */
  name?: string;
  /** RTT in µs; undefined when the tool printed none (`--`) or every probe was lost. */
  rttUs?: number;
}

export interface Trace {
  format: TraceFormat;
  /** Target address (IP when known), if the output names it. */
  target?: string;
  /** Answering hops, ascending ttl. */
  hops: TraceHop[];
  /** TTLs that did not answer (nmap `...`, tcptraceroute `* * *`, gaps in nmap's XML). */
  silent: number[];
  /** Silent TTLs past the last answering hop of a trace that never reached the target. */
  silentAfter: number[];
  /** TTLs nmap gave as "the same as for <host>" (multi-target text): known, not listed. */
  shared: number[];
  /** Whether the target itself answered; its hop's ttl is then the hop count. */
  reached: boolean;
  hopCount?: number;
  /** State of the scanned port: open, closed, filtered… (nmap; tcptraceroute: open/closed). */
  portState?: string;
  port?: number;
  /** What the trace was sent as: `tcp/22`, `icmp`, or "direct" (nmap sends nothing then). */
  probe?: string;
  /** Problems noticed while reading. */
  notes: string[];
}

export interface ParseTracerouteInput {
  stdout: string;
  stderr?: string;
  exitCode?: number | null;
}

const msToUs = (ms: number) => Math.round(ms * 1_000_000) / 1000;

/*
 * Validation (issue 12): the result is one figure, the hop count, read off the whole table,
 * which is a handful of lines. A hop line that cannot be read (a TTL that is not 1…255, an RTT
 * that is not a number or is impossible, a row that starts like a hop and is not one) leaves
 * the path — and so the count — unknown: it fails the cell, naming the line and its text. A
 * hop's RTT may be 0 (nmap prints 2 decimals of ms: 0.00 on a fast hop).
 */

/** The TTL `text` as a hop number, checked; `where` names the line. */
function ttlOf(text: string | undefined, where: Where, field = "hop ttl"): number {
  return checked(TOOL, field, strictNumber(text ?? ""), TTL, where);
}

/** A hop's RTT printed in ms, in µs, checked. */
function rttOf(ms: string, ttl: number, where: Where): number {
  const v = strictNumber(ms);
  const problem = rangeProblem(Number.isNaN(v) ? v : msToUs(v), TIME_STAT_US);
  if (problem !== undefined) throw valueError(TOOL, `hop ${ttl} rtt`, problem, where);
  return msToUs(v);
}

function clean(text: string): string {
  return text.replace(/\x1b\[[0-9;]*m/g, "").replace(/\r/g, "");
}

/** `nmap --version` → "7.93"; also accepts tcptraceroute's `-v` banner ("1.5beta7"). */
export function parseNmapVersion(output: string): string | undefined {
  const text = clean(output);
  return (
    text.match(/\bNmap version (\d+(?:\.\d+)*[A-Za-z0-9]*)/i)?.[1] ??
    text.match(/\bStarting Nmap (\d+(?:\.\d+)*[A-Za-z0-9]*)/i)?.[1] ??
    text.match(/\btcptraceroute (\d+(?:\.\d+)*[A-Za-z0-9]*)/i)?.[1]
  );
}

/** Which of the three formats `stdout` (with `stderr` as a hint for tcptraceroute) is in. */
export function detectTraceFormat(stdout: string, stderr = ""): TraceFormat | undefined {
  const out = clean(stdout);
  if (/<nmaprun\b|<\?xml\b[^>]*\?>\s*(?:<!DOCTYPE nmaprun|<\?xml-stylesheet[^>]*nmap)/i.test(out)) return "nmap-xml";
  if (/^\s*HOP\s+RTT\s+ADDRESS\s*$/m.test(out) || /^(?:Starting Nmap|Nmap scan report for|Nmap done:)/m.test(out)) {
    return "nmap-text";
  }
  const tcptrLine = /^\s*\d+\s+(?:\*(?:\s+\*)*\s*$|\S+(?:\s+\([^)]*\))?(?:\s+\[(?:open|closed)\])?\s+(?:\*\s+)*\d+(?:\.\d+)?\s+ms\b)/m;
  if (tcptrLine.test(out) || /Tracing the path to .* on TCP port/.test(clean(stderr))) return "tcptraceroute";
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// nmap XML

/** Decodes XML entities: nmap writes `--` as `-&#45;`. */
function xmlText(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (whole, ent: string) => {
    const e = ent.toLowerCase();
    if (e === "amp") return "&";
    if (e === "lt") return "<";
    if (e === "gt") return ">";
    if (e === "quot") return '"';
    if (e === "apos") return "'";
    const code = e.startsWith("#x") ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
    return Number.isFinite(code) ? String.fromCodePoint(code) : whole;
  });
}

function attrs(tag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of tag.matchAll(/([A-Za-z_][\w.-]*)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) {
    out[m[1]!] = xmlText(m[2] ?? m[3] ?? "");
  }
  return out;
}

/** The `<host>` elements of an nmap XML report (a cut-off last one included), each traced. */
export function parseNmapXml(xml: string): Trace[] {
  const text = clean(xml);
  const traces: Trace[] = [];
  const hostRe = /<host\b[^>]*>([\s\S]*?)(?:<\/host>|$)/dg;
  for (const hm of text.matchAll(hostRe)) {
    const body = hm[1]!;
    const bodyAt = hm.indices![1]![0];
    /** Line and text of the tag at `index` in `body`. */
    const whereIn = (index: number): Where => ({ line: lineAt(text, bodyAt + index), text: lineTextAt(text, bodyAt + index) });
    const notes: string[] = [];
    const addresses = [...body.matchAll(/<address\b[^>]*>/g)].map((m) => attrs(m[0]));
    const ip = addresses.find((a) => a.addrtype === "ipv4" || a.addrtype === "ipv6") ?? addresses[0];
    const target = ip?.addr;

    const portTag = body.match(/<port\b[^>]*>[\s\S]*?<state\b[^>]*>/);
    let portState: string | undefined;
    let port: number | undefined;
    if (portTag) {
      const p = attrs(portTag[0].match(/<port\b[^>]*>/)![0]);
      const s = attrs(portTag[0].match(/<state\b[^>]*>/)![0]);
      portState = s.state;
      if (p.portid !== undefined) port = checked(TOOL, "port", strictNumber(p.portid), PORT, whereIn(portTag.index!));
    }

    const traceOpen = body.match(/<trace\b[^>]*>/);
    if (!traceOpen) {
      traces.push({
        format: "nmap-xml",
        ...(target ? { target } : {}),
        hops: [],
        silent: [],
        silentAfter: [],
        shared: [],
        reached: false,
        ...(portState ? { portState } : {}),
        ...(port !== undefined ? { port } : {}),
        notes: [NO_TRACE],
      });
      continue;
    }
    const ta = attrs(traceOpen[0]);
    const probe = ta.proto ? (ta.port ? `${ta.proto}/${ta.port}` : ta.proto) : "direct";
    const traceBodyAt = traceOpen.index! + traceOpen[0].length;
    const traceBody = body.slice(traceBodyAt).split(/<\/trace>/)[0]!;
    if (!/<\/trace>/.test(body)) notes.push("the XML ends inside <trace> (output cut off?)");

    const hops: TraceHop[] = [];
    for (const m of traceBody.matchAll(/<hop\b[^>]*>/g)) {
      const a = attrs(m[0]);
      const where = whereIn(traceBodyAt + m.index);
      const ttl = ttlOf(a.ttl, where);
      const hop: TraceHop = { ttl, address: a.ipaddr ?? "" };
      if (a.host) hop.name = a.host;
      // rtt="--" (`-&#45;`): nmap has no time for this hop.
      if (a.rtt !== undefined && a.rtt !== "--") hop.rttUs = rttOf(a.rtt, ttl, where);
      hops.push(hop);
    }
    hops.sort((x, y) => x.ttl - y.ttl);
    const targetHop = target ? hops.find((h) => h.address === target) : undefined;
    const reached = targetHop !== undefined;
    const last = reached ? targetHop.ttl : (hops.at(-1)?.ttl ?? 0);
    const known = new Set(hops.map((h) => h.ttl));
    const silent: number[] = [];
    for (let ttl = 1; ttl < last; ttl++) if (!known.has(ttl)) silent.push(ttl);
    traces.push({
      format: "nmap-xml",
      ...(target ? { target } : {}),
      hops: reached ? hops.filter((h) => h.ttl <= targetHop.ttl) : hops,
      silent,
      silentAfter: [],
      shared: [],
      reached,
      ...(reached ? { hopCount: targetHop.ttl } : {}),
      ...(portState ? { portState } : {}),
      ...(port !== undefined ? { port } : {}),
      probe,
      notes,
    });
  }
  return traces;
}

// ---------------------------------------------------------------------------------------------
// nmap plain text

/** `name (1.2.3.4)` → { address: 1.2.3.4, name }; a bare word is the address. */
function splitNameAddress(text: string): { address: string; name?: string } {
  const m = text.trim().match(/^(\S+)\s+\(([^)]+)\)$/);
  return m ? { address: m[2]!, name: m[1]! } : { address: text.trim() };
}

/** Every TRACEROUTE table in nmap's normal output, one Trace per host report (or per table). */
export function parseNmapText(stdout: string): Trace[] {
  const text = clean(stdout);
  const lines = text.split("\n");
  // Sections: one per "Nmap scan report for"; pasted tables without it are one section each.
  const sections: { target?: string; lines: string[]; first?: number }[] = [];
  let current: { target?: string; lines: string[]; first?: number } | undefined;
  for (const [i, line] of lines.entries()) {
    const report = line.match(/^Nmap scan report for (.+?)\s*$/);
    if (report) {
      current = { target: splitNameAddress(report[1]!).address, lines: [] };
      sections.push(current);
      continue;
    }
    if (/^\s*HOP\s+RTT\s+ADDRESS\s*$/.test(line) && current?.target === undefined && current?.lines.some((l) => /^\s*HOP\s+RTT\s+ADDRESS\s*$/.test(l))) {
      current = undefined; // a second pasted table without a report line: its own section
    }
    if (!current) {
      current = { lines: [] };
      sections.push(current);
    }
    current.first ??= i;
    current.lines.push(line);
  }

  const traces: Trace[] = [];
  for (const section of sections) {
    const headerAt = section.lines.findIndex((l) => /^\s*HOP\s+RTT\s+ADDRESS\s*$/.test(l));
    let portState: string | undefined;
    let port: number | undefined;
    let probe: string | undefined;
    for (const l of section.lines) {
      const pm = l.match(/^(\d+)\/(tcp|udp|sctp)\s+(\S+)/);
      if (pm && portState === undefined) {
        port = Number(pm[1]);
        portState = pm[3];
      }
      const tm = l.match(/^TRACEROUTE(?:\s+\(using (?:port (\d+)\/(\w+)|proto \d+\/(\w+))\))?\s*$/);
      if (tm) probe = tm[1] ? `${tm[2]}/${tm[1]}` : tm[3] ? tm[3] : "direct";
    }
    const base = {
      format: "nmap-text" as const,
      ...(section.target ? { target: section.target } : {}),
      ...(portState ? { portState } : {}),
      ...(port !== undefined ? { port } : {}),
      ...(probe ? { probe } : {}),
    };
    if (headerAt < 0) {
      if (section.target) traces.push({ ...base, hops: [], silent: [], silentAfter: [], shared: [], reached: false, notes: [NO_TRACE] });
      continue;
    }
    const hops: TraceHop[] = [];
    const silent: number[] = [];
    const shared: number[] = [];
    const notes: string[] = [];
    let lastRowSilent = false;
    for (const [k, row] of section.lines.slice(headerAt + 1).entries()) {
      if (!row.trim()) break;
      const where: Where = { line: (section.first ?? 0) + headerAt + 2 + k, text: row };
      let m = row.match(/^-\s+Hops? (\d+)(?:-(\d+))? (?:is|are) the same as for (\S+)/);
      if (m) {
        const to = ttlOf(m[2] ?? m[1], where);
        for (let t = ttlOf(m[1], where); t <= to; t++) shared.push(t);
        notes.push(`hop${m[2] ? `s ${m[1]}-${m[2]} are` : ` ${m[1]} is`} the same as for ${shorten(m[3]!, 60)} (not listed)`);
        continue;
      }
      m = row.match(/^(\d+)\s+\.\.\.(?:\s+(\d+))?\s*$/);
      if (m) {
        const to = ttlOf(m[2] ?? m[1], where);
        for (let t = ttlOf(m[1], where); t <= to; t++) silent.push(t);
        lastRowSilent = true;
        continue;
      }
      m = row.match(/^(\d+)\s+(?:(\d+(?:\.\d+)?) ms|(--))\s+(\S.*?)\s*$/);
      if (m) {
        const ttl = ttlOf(m[1], where);
        const hop: TraceHop = { ttl, ...splitNameAddress(m[4]!) };
        if (m[2] !== undefined) hop.rttUs = rttOf(m[2], ttl, where);
        hops.push(hop);
        lastRowSilent = false;
        continue;
      }
      // A row that starts like a hop ("3   …") but is none: not the end of the table.
      if (/^\d+\s/.test(row)) throw valueError(TOOL, "hop row", "cannot be read", where);
      break; // end of the table
    }
    const lastHop = hops.at(-1);
    const reached =
      lastHop !== undefined &&
      !lastRowSilent &&
      (section.target === undefined || lastHop.address === section.target || lastHop.name === section.target);
    const lastTtl = lastHop?.ttl ?? 0;
    traces.push({
      ...base,
      hops,
      silent: silent.filter((t) => t < lastTtl),
      // Past the last answer (`3   ... 30`): not part of the known path.
      silentAfter: silent.filter((t) => t > lastTtl),
      shared,
      reached,
      ...(reached ? { hopCount: lastHop.ttl } : {}),
      notes,
    });
  }
  return traces;
}

// ---------------------------------------------------------------------------------------------
// tcptraceroute

/** tcptraceroute's text; one Trace. */
export function parseTcptraceroute(stdout: string, stderr = ""): Trace {
  const err = clean(stderr);
  const header = err.match(/Tracing the path to (\S+)(?: \(([^)]+)\))? on TCP port (\d+)/) ?? clean(stdout).match(/Tracing the path to (\S+)(?: \(([^)]+)\))? on TCP port (\d+)/);
  const target = header ? (header[2] ?? header[1]) : undefined;
  const hops: TraceHop[] = [];
  const silentAll: number[] = [];
  const notes: string[] = [];
  let portState: string | undefined;
  let reachedTtl: number | undefined;
  for (const [i, line] of clean(stdout).split("\n").entries()) {
    const m = line.match(/^\s*(\d+)\s+(.*?)\s*$/);
    if (!m) continue;
    const where: Where = { line: i + 1, text: line };
    const ttl = ttlOf(m[1], where);
    const tokens = m[2]!.split(/\s+/).filter(Boolean);
    if (!tokens.length) continue;
    let address: string | undefined;
    let name: string | undefined;
    const rtts: number[] = [];
    let state: string | undefined;
    let other = false;
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i]!;
      if (t === "*") continue;
      if (tokens[i + 1] === "ms") {
        rtts.push(rttOf(t, ttl, where));
        i++;
        continue;
      }
      const st = t.match(/^\[(open|closed|[a-z]+)\]$/);
      if (st) {
        state = st[1];
        continue;
      }
      if (/^!\S*$/.test(t)) continue; // !H, !N, !P… annotations
      const paren = t.match(/^\((.+)\)$/);
      if (paren) {
        if (address !== undefined && name === undefined && address !== paren[1]) {
          name = address;
          address = paren[1];
        }
        continue;
      }
      if (address === undefined) address = t;
      else if (t !== address && t !== name) other = true;
    }
    if (address === undefined) {
      silentAll.push(ttl);
      continue;
    }
    const hop: TraceHop = { ttl, address };
    if (name) hop.name = name;
    if (rtts.length) hop.rttUs = Math.min(...rtts);
    hops.push(hop);
    if (other) notes.push(`hop ${ttl}: probes answered from more than one address; kept ${shorten(address, 60)}`);
    if (state) {
      portState = state;
      reachedTtl ??= ttl;
    } else if (target !== undefined && address === target) {
      reachedTtl ??= ttl;
    }
  }
  const reached = reachedTtl !== undefined;
  const lastTtl = reached ? reachedTtl! : (hops.at(-1)?.ttl ?? 0);
  return {
    format: "tcptraceroute",
    ...(target ? { target } : {}),
    hops: hops.filter((h) => h.ttl <= lastTtl),
    silent: silentAll.filter((t) => t < lastTtl),
    silentAfter: silentAll.filter((t) => t > lastTtl),
    shared: [],
    reached,
    ...(reached ? { hopCount: reachedTtl } : {}),
    ...(portState ? { portState } : {}),
    ...(header ? { port: Number(header[3]), probe: `tcp/${header[3]}` } : {}),
    notes,
  };
}

function rangeText(ttls: readonly number[]): string {
  if (!ttls.length) return "";
  const first = ttls[0]!;
  const last = ttls.at(-1)!;
  return first === last ? String(first) : `${first}-${last}`;
}

// ---------------------------------------------------------------------------------------------
// errors

/** Fatal messages nmap, sudo, the shell or tcptraceroute print, as they print them. */
const FATAL: RegExp[] = [
  /You requested a scan type which requires root privileges\.?(?:\s*QUITTING!)?/,
  /sudo: (?:a (?:terminal|password) is required[^\n]*|[^\n]*command not found|[^\n]*not in the sudoers[^\n]*)/,
  /(?:^|\n)[^\n]*\b(?:nmap|sudo): (?:command )?not found[^\n]*/,
  /setup_target: failed to determine route to [^\n]+/,
  /Failed to resolve "[^"\n]*"\.?/,
  /(?:^|\n)connect: [^\n]+/,
  /Bad destination address: [^\n]+/,
  /(?:^|\n)(?:nmap|tcptraceroute): [^\n]+/,
];

function fatalText(text: string): string | undefined {
  for (const re of FATAL) {
    const m = text.match(re);
    if (m) return shorten(m[0].trim().replace(/\s*\n\s*/g, " "));
  }
  return undefined;
}

/** The "0 hosts up" summary nmap printed, if any. */
function hostDownText(stdout: string): string | undefined {
  const text = clean(stdout);
  const note = text.match(/Note: Host seems down[^\n]*/)?.[0];
  const done =
    text.match(/Nmap done: \d+ IP address(?:es)? \(0 hosts up\)[^\n]*/)?.[0] ??
    (() => {
      const m = text.match(/<finished\b[^>]*>/);
      const summary = m ? attrs(m[0]).summary : undefined;
      return summary && /\(0 hosts up\)/.test(summary) ? summary : undefined;
    })();
  if (!note && !done) return undefined;
  return [note, done].filter(Boolean).join("; ");
}

/**
 * Why nmap's output was cut short, when it shows it: XML with <nmaprun> and no </nmaprun>, text
 * with nmap's "Starting Nmap" line and no "Nmap done" line. A TRACEROUTE table pasted alone has
 * neither, and is read as it is.
 */
function nmapCutShort(format: TraceFormat | undefined, stdout: string): string | undefined {
  if (format === "nmap-xml" && /<nmaprun\b/.test(stdout) && !/<\/nmaprun>/.test(stdout)) {
    return "nmap's XML is incomplete (output cut short?): it has <nmaprun> but no </nmaprun>";
  }
  if (format === "nmap-text" && /^Starting Nmap\b/m.test(stdout) && !/^Nmap done:/m.test(stdout)) {
    return 'nmap\'s output is incomplete (output cut short?): it started ("Starting Nmap") but has no "Nmap done" line';
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// ToolResult

/** Any of the three formats → hop count. Throws ToolOutputError when there is no trace. */
export function parseTraceroute(input: ParseTracerouteInput): ToolResult {
  const stdout = clean(input.stdout);
  const stderr = clean(input.stderr ?? "");
  const format = detectTraceFormat(stdout, stderr);
  const fail = (message: string): never => {
    throw new ToolOutputError(TOOL, message);
  };

  let traces: Trace[] = [];
  if (format === "nmap-xml") traces = parseNmapXml(stdout);
  else if (format === "nmap-text") traces = parseNmapText(stdout);
  else if (format === "tcptraceroute") traces = [parseTcptraceroute(stdout, stderr)];

  const usable = traces.filter((t) => t.hops.length || t.silent.length || t.silentAfter.length || t.shared.length);
  const trace = usable[0];
  if (!trace) {
    const fatal = fatalText(`${stderr}\n${stdout}`);
    if (fatal) fail(fatal);
    const down = hostDownText(stdout);
    if (down) fail(`target down: ${shorten(down)}${stderr.trim() ? ` (${shorten(stderr.trim().replace(/\s*\n\s*/g, "; "))})` : ""}`);
    if (traces.some((t) => t.notes.includes(NO_TRACE))) {
      fail("nmap printed no trace for the target (nmap never traces a loopback address)");
    }
    if (!format) {
      const shown = stderr.trim() || stdout.trim();
      fail(shown ? `no traceroute output recognised: ${shorten(shown)}` : `no output${input.exitCode ? ` (exit ${input.exitCode})` : ""}`);
    }
    fail(`${format} output holds no hops${stderr.trim() ? `: ${shorten(stderr.trim())}` : ""}`);
  }

  // nmap ends what it started: a report that began and never ended was cut (nmap killed, a copy
  // taken too early), and its hop table may be too. Refused as sockperf's cut summary is.
  const cut = nmapCutShort(format, stdout);
  if (cut) fail(cut);

  const warnings: string[] = [];
  if (usable.length > 1) {
    warnings.push(`output traces ${usable.length} targets; kept the first (${shorten(trace!.target ?? "unnamed", 60)})`);
  }
  const t = trace!;
  const reported: NonNullable<ToolResult["reported"]> = {
    format: t.format,
    targetReached: t.reached ? "yes" : "no",
    hopsSilent: t.silent.length,
  };
  if (t.target) reported.target = t.target;
  if (t.hopCount !== undefined) reported.hops = t.hopCount;
  if (t.portState) reported.portState = t.portState;
  if (t.port !== undefined) reported.port = t.port;
  if (t.probe) reported.probe = t.probe;
  if (t.shared.length) reported.hopsShared = t.shared.length;
  for (const hop of t.hops) {
    reported[`hop${hop.ttl}Address`] = hop.address;
    if (hop.name) reported[`hop${hop.ttl}Name`] = hop.name;
    if (hop.rttUs !== undefined) reported[`hop${hop.ttl}RttUs`] = hop.rttUs;
  }

  const missingRtt = t.hops.filter((h) => h.rttUs === undefined).map((h) => h.ttl);
  if (missingRtt.length) {
    warnings.push(`no RTT for hop${missingRtt.length > 1 ? "s" : ""} ${missingRtt.join(", ")} (printed as --); left out`);
  }
  // A directly connected target ("direct") is never probed: its one hop holds whatever the port.
  if (t.probe && t.probe !== "direct" && !t.probe.startsWith("tcp")) {
    warnings.push(
      `port ${t.port ?? "?"} is ${t.portState ?? "not open or closed"}, so nmap traced with ${t.probe.toUpperCase()} instead of TCP: the hop count is of the ${t.probe.toUpperCase()} path`,
    );
  }
  warnings.push(...t.notes);

  const samples: number[] = [];
  if (t.reached && t.hopCount !== undefined) {
    samples.push(t.hopCount);
  } else {
    const last = t.hops.at(-1);
    if (last) reported.lastAnsweringHop = last.ttl;
    if (t.silentAfter.length) reported.hopsSilentAfter = t.silentAfter.length;
    warnings.push(
      `target${t.target ? ` ${shorten(t.target, 60)}` : ""} not reached: ` +
        (last ? `last answer from hop ${last.ttl} (${shorten(last.address, 60)})` : "no hop answered") +
        (t.silentAfter.length ? `, then hop${t.silentAfter.length > 1 ? "s" : ""} ${rangeText(t.silentAfter)} silent` : "") +
        "; hop count unknown",
    );
  }
  return sanitizedResult({ metric: "hops", unit: "hops", samples, reported, warnings });
}
