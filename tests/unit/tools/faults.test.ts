/**
 * Fault cases: real captures from tests/fixtures/<tool>/ with one thing broken on purpose — a
 * value replaced by `1e400`, `-5`, `nan`, `abc`, a line cut short, a line with a field missing,
 * escape sequences and control characters in the tool's text, kilobytes of garbage. Each is
 * derived here, in the open, from the capture named (`derive` fails the test when the text it
 * replaces is not in the capture, so a re-captured fixture cannot make a case pass by accident).
 *
 * What the parsers must do (issue 12, point 5): an impossible value never becomes a sample or a
 * reported figure; the error names the tool, the field, the line (text output) and quotes the
 * offending text shortened and terminal-safe; an unreadable sample line among many is left out
 * with a warning that counts them; nothing raw from the tool reaches a message.
 *
 * Checked against the parsers as they were before (commit 837c2a0): 76 of these 78 cases fail
 * there; the two that pass are marked as regression guards.
 */
import { describe, expect, it } from "vitest";
import { iperf3, Iperf3ParamsSchema } from "../../../src/tools/iperf3/index.ts";
import { ping, PingParamsSchema } from "../../../src/tools/ping/index.ts";
import { qperf, QperfParamsSchema } from "../../../src/tools/qperf/index.ts";
import { parseSockperfFullLog } from "../../../src/tools/sockperf/parse.ts";
import { sockperf, SockperfParamsSchema } from "../../../src/tools/sockperf/index.ts";
import { tcpEcho, TcpEchoParamsSchema } from "../../../src/tools/tcpEcho/index.ts";
import { traceroute, TracerouteParamsSchema } from "../../../src/tools/traceroute/index.ts";
import type { ToolName } from "../../../src/tools/registry.ts";
import type { ToolResult } from "../../../src/tools/types.ts";
import { clientOutput, expectToolError, fixture } from "./helpers.ts";

/** `text` with `from` (which must occur exactly `times` times) replaced by `to`. */
function derive(text: string, from: string | RegExp, to: string, times = 1): string {
  const found = typeof from === "string" ? text.split(from).length - 1 : [...text.matchAll(new RegExp(from.source, from.flags.includes("g") ? from.flags : `${from.flags}g`))].length;
  expect(found, `derive: ${String(from)} in the capture`).toBe(times);
  return typeof from === "string" ? text.split(from).join(to) : text.replace(new RegExp(from.source, from.flags.includes("g") ? from.flags : `${from.flags}g`), to);
}

/** Nothing a terminal would act on: no ESC or other C0 control but \n and \t, no DEL/C1, no bidi overrides. */
const TERMINAL_UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;
function expectTerminalSafe(...texts: string[]): void {
  for (const t of texts) expect(t, JSON.stringify(t)).not.toMatch(TERMINAL_UNSAFE);
}
function expectResultSafe(r: ToolResult): void {
  expectTerminalSafe(...r.warnings, ...Object.values(r.reported ?? {}).filter((v): v is string => typeof v === "string"));
}
/** Every sample finite and within the statistics' limits. */
function expectSamplesValid(r: ToolResult, min = 0): void {
  for (const s of r.samples) {
    expect(Number.isFinite(s)).toBe(true);
    expect(s).toBeGreaterThan(min);
    expect(s).toBeLessThanOrEqual(1e9);
  }
}

/** An escape-sequence attack: clear screen, set the title, write the clipboard, a bell, a CR overwrite, a bidi override. */
const NASTY = "\x1b[2J\x1b]0;owned\x07\x1b]52;c;ZWNobyBoaQ==\x1b\\\x07\rfake ok\u202e";
const GARBAGE = `${"\x00\xff\x1b[31m garbage \x9b6n".repeat(2000)}\n`.repeat(5);

const fx = (tool: ToolName, name: string) => fixture(tool, name);

// ---------------------------------------------------------------------------------------------
describe("ping faults (derived from ping/normal, iputils 20221126: 20 replies)", () => {
  const params = PingParamsSchema.parse({});
  const normal = fx("ping", "normal.stdout");
  const run = (stdout: string, stderr = "") => ping.parse(clientOutput({ stdout, stderr }), params);
  const seq17 = "icmp_seq=16 ttl=64 time=0.033 ms"; // line 17

  it.each([
    ["abc", "time=abc ms", /line 17: time is not a number/],
    ["nan", "time=nan ms", /line 17: time is not a number/],
    ["1e400", "time=1e400 ms", /line 17: time is infinite/],
    ["-5", "time=-5 ms", /line 17: time is -5000 µs, below 0 µs/],
    ["0", "time=0.000 ms", /line 17: time is 0 µs; it must be above 0 µs/],
  ])("one reply with time=%s is left out with a warning naming line and text", (_, time, problem) => {
    const r = run(derive(normal, seq17, `icmp_seq=16 ttl=64 ${time}`));
    expect(r.samples).toHaveLength(19);
    expectSamplesValid(r);
    const w = r.warnings.find((x) => x.startsWith("ping: 1 of 20 reply lines could not be read"));
    expect(w, r.warnings.join("\n")).toBeDefined();
    expect(w).toMatch(problem);
    expect(w).toContain(`"[1795235552.806963] 64 bytes from 127.0.0.1: icmp_seq=16 ttl=64 ${time}"`);
  });

  it("a reply line cut short (no time=) among timed replies is counted, not taken for a small payload", () => {
    const r = run(derive(normal, seq17, "icmp_seq=16 ttl=6"));
    expect(r.samples).toHaveLength(19);
    expect(r.warnings.join("\n")).toMatch(/ping: 1 of 20 reply lines could not be read.*line 17: .*no time=/);
  });

  it("a reply line cut inside the number (no unit) is unreadable: its digits may be missing", () => {
    const r = run(derive(normal, seq17, "icmp_seq=16 ttl=64 time=0.0"));
    expect(r.samples).toHaveLength(19);
    expect(r.warnings.join("\n")).toMatch(/ping: 1 of 20 reply lines could not be read.*line 17/);
  });

  // A regression guard: the parser already said this before issue 12 (it passes against the old parser).
  it("a reply line lost entirely: the count ping printed differs from the lines (both numbers named)", () => {
    const r = run(derive(normal, /^.*icmp_seq=16 .*\n/m, ""));
    expect(r.samples).toHaveLength(19);
    expect(r.warnings).toContain("ping printed 19 reply lines but counted 20 received");
  });

  it("most replies unreadable: the cell fails (the output is not ping's as latlab knows it)", () => {
    const broken = normal.replace(/time=[\d.]+ ms/g, (m, offset: number) => (offset % 3 === 0 ? m : "time=abc ms"));
    const e = expectToolError(() => run(broken), "ping");
    expect(e.message).toMatch(/^ping: \d+ of 20 reply lines could not be read/);
  });

  it("a statistics line that cannot be read fails, naming the line", () => {
    const e = expectToolError(() => run(derive(normal, "20 packets transmitted, 20 received", "20 packets transmitted, abc received")));
    expect(e.message).toMatch(/^ping: line 24: .*"20 packets transmitted, abc received, 0% packet loss, time 3875ms"/);
  });

  it("an impossible count in the statistics fails", () => {
    const e = expectToolError(() => run(derive(normal, "20 packets transmitted", "99999999999999999999 packets transmitted")));
    expect(e.message).toMatch(/^ping: line 24: transmitted is .*too large to count exactly/);
  });

  it.each([
    ["1e400", "0.031/1e400/0.115/0.017", /avg is infinite/],
    ["abc", "0.031/abc/0.115/0.017", /avg is not a number/],
  ])("an rtt summary with %s fails (a summary figure that is garbage), naming field and line", (_, values, problem) => {
    const e = expectToolError(() => run(derive(normal, "0.031/0.039/0.115/0.017", values)));
    expect(e.message).toMatch(/^ping: line 25: rtt /);
    expect(e.message).toMatch(problem);
  });

  it("escape sequences in ping's messages never reach the message", () => {
    const stderr = derive(fx("ping", "unknown-host.stderr"), "no-such-host.invalid", `no-such-host${NASTY}.invalid`);
    const e = expectToolError(() => run(fx("ping", "unknown-host.stdout"), stderr));
    // ping's text is kept; only what a terminal would act on goes (the title/clipboard strings whole).
    expect(e.message).toMatch(/^ping: no-such-host.*\.invalid: Temporary failure in name resolution$/);
    expectTerminalSafe(e.message);
    // In a warning (a benign message on a successful run) too.
    const r = run(normal, `ping: option argument contains garbage: ${NASTY}\n`);
    expect(r.samples).toHaveLength(20);
    expectResultSafe(r);
  });

  it("garbage instead of ping's output: the message quotes at most ~200 characters", () => {
    const e = expectToolError(() => run(GARBAGE));
    expect(e.message.length).toBeLessThan(400);
    expectTerminalSafe(e.message);
  });
});

// ---------------------------------------------------------------------------------------------
describe("sockperf faults (derived from sockperf/tcp-full-rtt, 3.7: 550 rows)", () => {
  const params = SockperfParamsSchema.parse({ fullRtt: true });
  const stdout = fx("sockperf", "tcp-full-rtt.stdout");
  const csv = fx("sockperf", "tcp-full-rtt.csv");
  const file = sockperf.client({ targetAddress: "198.18.0.2", port: 11001, workDir: "/tmp/ll", assetsDir: "/tmp/a" }, params).files[0]!;
  const run = (out: string, log?: string) => sockperf.parse(clientOutput({ stdout: out, files: log === undefined ? {} : { [file]: log } }), params);
  const row2 = "1, 2.403419375, 2.403551240, 131.865"; // line 23 of the full log

  it.each([
    ["1e400", "1, 2.403419375, 2.403551240, 1e400", /rtt is infinite/],
    ["-5", "1, 2.403419375, 2.403551240, -5", /rtt is -5 µs, below 0 µs/],
    ["nan", "1, 2.403419375, 2.403551240, nan", /rtt is not a number/],
    ["a missing field", "1, 2.403419375, 131.865", /has 3 fields, not 4/],
    ["an empty field", "1, , 2.403551240, 131.865", /rxTime|txTime/],
  ])("a full-log row with %s is left out with a warning (1 of 550 rows)", (_, row, problem) => {
    const r = run(stdout, derive(csv, row2, row));
    expect(r.samples).toHaveLength(549);
    expectSamplesValid(r);
    const w = r.warnings.find((x) => x.startsWith("sockperf: 1 of 550 full-log rows"));
    expect(w, r.warnings.join("\n")).toBeDefined();
    expect(w).toMatch(/line 23: /);
    expect(w).toMatch(problem);
  });

  it("most rows unreadable: the cell fails", () => {
    const broken = csv.replace(/^(\d+), ([\d.]+), ([\d.]+), [\d.]+$/gm, (m, n: string) => (Number(n) % 4 === 0 ? m : `${n}, 1, 2, abc`));
    const e = expectToolError(() => parseSockperfFullLog(broken), "sockperf");
    expect(e.message).toMatch(/^sockperf: \d+ of 550 full-log rows could not be read/);
  });

  it.each([
    ["avg-rtt=1e400", "avg-rtt=123.810", "avg-rtt=1e400", /line 12: avg-rtt is infinite/],
    ["avg-rtt=-5", "avg-rtt=123.810", "avg-rtt=-5", /line 12: avg-rtt is -5 µs, below 0 µs/],
    ["avg-rtt=abc", "avg-rtt=123.810", "avg-rtt=abc", /line 12: avg-rtt is not a number/],
    ["std-dev=nan", "std-dev=77.973", "std-dev=nan", /line 12: std-dev is not a number/],
    ["percentile 99.000 = -5", "percentile 99.000 =  271.655", "percentile 99.000 =  -5", /line 20: percentile 99.000 is -5 µs/],
    ["<MAX> observation = nan", "<MAX> observation = 1567.245", "<MAX> observation = nan", /line 16: <MAX> observation is not a number/],
  ])("a summary with %s fails (a summary figure that is garbage), naming field and line", (_, from, to, problem) => {
    const e = expectToolError(() => run(derive(stdout, from, to)), "sockperf");
    expect(e.message).toMatch(problem);
    expect(e.message).toContain(`"sockperf: `);
  });

  // A regression guard: the parser already said this before issue 12 (it passes against the old parser).
  it("the row count differs from sockperf's own count: both numbers named", () => {
    const r = run(stdout, derive(csv, `${row2}\n`, ""));
    expect(r.warnings).toContain("full log has 549 rows but sockperf reported 550 observations");
  });

  it("escape sequences in sockperf's error never reach the message", () => {
    const out = derive(fx("sockperf", "tcp-no-server.stdout"), "Connection refused", `Connection refused${NASTY}`);
    const e = expectToolError(() => run(out, ""), "sockperf");
    expect(e.message).toContain("Connection refused");
    expectTerminalSafe(e.message);
  });

  it("garbage instead of sockperf's output: the message quotes at most ~200 characters", () => {
    const e = expectToolError(() => run(GARBAGE));
    expect(e.message.length).toBeLessThan(400);
    expectTerminalSafe(e.message);
  });
});

// ---------------------------------------------------------------------------------------------
describe("qperf faults (derived from qperf/tcp_lat.vvs, tcp_bw.vvs, tcp_lat.vv-uu; 0.4.11)", () => {
  const lat = QperfParamsSchema.parse({});
  const bw = QperfParamsSchema.parse({ test: "tcp_bw" });
  const run = (stdout: string, p = lat) => qperf.parse(clientOutput({ stdout }), p);

  it.each([
    ["1e400 us", /^qperf: line 2: latency is infinite .*: "latency {9}= {4}1e400 us"$/],
    ["-5 us", /^qperf: line 2: latency is -10 µs \(RTT\), below 0 µs/],
    ["abc us", /^qperf: line 2: latency is not a number: "latency {9}= {4}abc us"$/],
    ["nan us", /^qperf: line 2: latency is not a number/],
    ["1e9 sec", /^qperf: line 2: latency is 2000000000000000 µs \(RTT\), above the limit of 1000000000 µs/],
  ])("latency = %s fails, naming field, line and text", (value, message) => {
    const e = expectToolError(() => run(derive(fx("qperf", "tcp_lat.vvs.stdout"), "43.9 us", value)), "qperf");
    expect(e.message).toMatch(message);
  });

  it.each([
    ["1e400 MB/sec", /^qperf: line 2: bw is infinite/],
    ["-5 MB/sec", /^qperf: line 2: bw is -40 Mbit\/s, below 0 Mbit\/s/],
  ])("bw = %s fails", (value, message) => {
    const e = expectToolError(() => run(derive(fx("qperf", "tcp_bw.vvs.stdout"), "46.4 MB/sec", value), bw), "qperf");
    expect(e.message).toMatch(message);
  });

  it("an impossible secondary figure (a negative message rate) fails: it would be a reported figure", () => {
    const e = expectToolError(() => run(derive(fx("qperf", "tcp_lat.vvs.stdout"), "22.8 K/sec", "-22.8 K/sec")), "qperf");
    expect(e.message).toMatch(/^qperf: line 3: msg_rate is -22800 \/sec, below 0/);
    const e2 = expectToolError(() => run(derive(fx("qperf", "tcp_lat.vv-uu.stdout"), "1863488 bytes", "1e400 bytes")), "qperf");
    expect(e2.message).toMatch(/^qperf: line 14: loc_send_bytes is infinite/);
  });

  it("garbage instead of qperf's output: the error quotes at most ~200 characters, terminal-safe", () => {
    const e = expectToolError(() => run(GARBAGE), "qperf");
    expect(e.message.length).toBeLessThan(400);
    expectTerminalSafe(e.message);
  });

  it("escape sequences in qperf's messages never reach the error or the warnings", () => {
    const e = expectToolError(() => run(derive(fx("qperf", "no-server.stdout"), "failed to connect", `failed to connect${NASTY}`)), "qperf");
    expect(e.message).toContain("failed to connect");
    expectTerminalSafe(e.message);
    const r = run(`${fx("qperf", "tcp_lat.vvs.stdout")}server: odd ${NASTY}\n`);
    expect(r.warnings.join("\n")).toContain("server: odd");
    expectResultSafe(r);
  });
});

// ---------------------------------------------------------------------------------------------
describe("iperf3 faults (derived from iperf3/tcp-p1.json, udp-loss.json; 3.12)", () => {
  const tcp = Iperf3ParamsSchema.parse({});
  const udp = Iperf3ParamsSchema.parse({ protocol: "udp", bitrate: "0" });
  const run = (stdout: string, p = tcp) => iperf3.parse(clientOutput({ stdout }), p);
  const p1 = fx("iperf3", "tcp-p1.json");
  /** The value of `key` inside the object that follows `"block":` (text surgery: JSON.stringify cannot write 1e400). */
  const inBlock = (text: string, block: string, key: string, value: string) =>
    derive(text, new RegExp(`("${block}":\\s*\\{[^{}]*?"${key}":\\s*)[-\\d.e+]+`), `$1${value}`);

  it.each([
    ["-5", /^iperf3: end\.sum_received\.bits_per_second is -0\.000005 Mbit\/s, below 0 Mbit\/s: "-5"$/],
    ["1e400", /^iperf3: end\.sum_received\.bits_per_second is infinite/],
    ["1e20", /^iperf3: end\.sum_received\.bits_per_second is 100000000000000 Mbit\/s, above the limit of 1000000000 Mbit\/s/],
  ])("end.sum_received.bits_per_second = %s fails (a summary figure that is garbage)", (value, message) => {
    const e = expectToolError(() => run(inBlock(p1, "sum_received", "bits_per_second", value)), "iperf3");
    expect(e.message).toMatch(message);
  });

  it("a null end.sum_sent.bits_per_second (iperf3's NaN) fails", () => {
    const doc = JSON.parse(p1);
    doc.end.sum_sent.bits_per_second = null;
    const e = expectToolError(() => run(JSON.stringify(doc)), "iperf3");
    expect(e.message).toMatch(/^iperf3: end\.sum_sent\.bits_per_second is not a number \(null: iperf3 writes NaN and infinity as null\): "null"$/);
  });

  it.each([["-5"], ["1e400"], ["null"], ['"abc"']])("one interval's sum.bits_per_second = %s is left out with a warning naming it", (value) => {
    const doc = JSON.parse(p1);
    const text = JSON.stringify(doc, null, 1).replace(
      new RegExp(`("sum": \\{\\n(?:[^{}]*?\\n)??\\s*"bits_per_second": )${doc.intervals[1].sum.bits_per_second}`),
      `$1${value}`,
    );
    expect(text).not.toBe(JSON.stringify(doc, null, 1));
    const r = run(text);
    expect(r.samples).toHaveLength(doc.intervals.length - 1);
    expectSamplesValid(r, -1);
    expect(r.warnings.join("\n")).toMatch(/iperf3: 1 of 3 intervals could not be read and was left out \(intervals\[1\]\.sum\.bits_per_second (is|is not)/);
  });

  it("every interval unreadable: the cell fails", () => {
    const doc = JSON.parse(p1);
    for (const i of doc.intervals) i.sum.bits_per_second = -1;
    const e = expectToolError(() => run(JSON.stringify(doc)), "iperf3");
    expect(e.message).toMatch(/^iperf3: 3 of 3 intervals could not be read/);
  });

  it("impossible secondary figures fail, naming the field", () => {
    const doc = JSON.parse(p1);
    doc.end.sum_sent.retransmits = -1;
    expect(expectToolError(() => run(JSON.stringify(doc))).message).toMatch(/^iperf3: end\.sum_sent\.retransmits is -1, below 0/);
    const doc2 = JSON.parse(p1);
    doc2.end.streams[0].sender.mean_rtt = -83;
    expect(expectToolError(() => run(JSON.stringify(doc2))).message).toMatch(/^iperf3: end\.streams\[0\]\.sender\.mean_rtt is -83 µs, below 0 µs/);
    const doc3 = JSON.parse(p1);
    doc3.start.sndbuf_actual = 1.5;
    expect(expectToolError(() => run(JSON.stringify(doc3))).message).toMatch(/^iperf3: start\.sndbuf_actual is 1\.5, not a whole number/);
  });

  it("UDP: a negative lost count (an iperf3 bug, esnet/iperf#412) is kept and warned about, not failed", () => {
    const text = inBlock(fx("iperf3", "udp-loss.json"), "sum_received", "lost_packets", "-104080");
    const r = run(text, udp);
    expect(r.reported?.lostPackets).toBe(-104080);
    expect(r.warnings.join("\n")).toMatch(/UDP: iperf3 counted -104080 lost datagrams/);
  });

  it("UDP: an impossible receiver figure fails", () => {
    const text = inBlock(fx("iperf3", "udp-loss.json"), "sum_received", "jitter_ms", "-1");
    expect(expectToolError(() => run(text, udp)).message).toMatch(/^iperf3: end\.sum_received\.jitter_ms is -1/);
  });

  it("escape sequences in iperf3's error string never reach the message; a long one is cut", () => {
    const doc = JSON.parse(fx("iperf3", "refused.json"));
    doc.error = `unable to connect to server: Connection refused${NASTY}${"x".repeat(5000)}`;
    const e = expectToolError(() => run(JSON.stringify(doc)), "iperf3");
    expect(e.message).toContain("Connection refused");
    expect(e.message.length).toBeLessThan(500);
    expectTerminalSafe(e.message);
  });

  it("garbage instead of JSON: the message quotes at most ~200 characters, terminal-safe", () => {
    const e = expectToolError(() => run(GARBAGE), "iperf3");
    expect(e.message.length).toBeLessThan(400);
    expectTerminalSafe(e.message);
  });
});

// ---------------------------------------------------------------------------------------------
describe("tcp-echo faults (derived from tcp-echo/normal.csv and break.csv; latlab_echo 1)", () => {
  const params = TcpEchoParamsSchema.parse({});
  const run = (csv: string) => tcpEcho.parse(clientOutput({ stdout: csv }), params);
  const normal = fx("tcp-echo", "normal.csv");
  const probe3 = /^probe,3,([^,]*),(\d+),(\d+),,,$/m; // line 7

  it.each([
    ["12x4", /rtt_ns is not a number/],
    ["-5", /rtt_ns is -5, below 1/],
    ["0", /rtt_ns is 0, below 1/],
    ["99999999999999999999999", /rtt_ns is .*too large to count exactly|above the limit/],
    ["1e400", /rtt_ns is not a number/],
  ])("a probe with rtt_ns %s is left out with a warning naming line and text", (value, problem) => {
    const r = run(derive(normal, probe3, `probe,3,$1,$2,${value},,,`));
    expect(r.samples).toHaveLength(59);
    expectSamplesValid(r);
    const w = r.warnings.find((x) => x.startsWith("tcp-echo: 1 of"));
    expect(w, r.warnings.join("\n")).toMatch(/could not be read and was left out \(line 7: /);
    expect(w).toMatch(problem);
    // The end record's own count shows the probe is missing from the samples.
    expect(r.warnings.join("\n")).toContain("the client counted probes=60, the file has probes=59");
  });

  it("a line cut short in the middle of the file (a field missing) is left out with a warning", () => {
    const r = run(derive(normal, probe3, "probe,3,$1,$2"));
    expect(r.samples).toHaveLength(59);
    expect(r.warnings.join("\n")).toMatch(/tcp-echo: 1 of \d+ lines could not be read and was left out \(line 7: expected 8 columns, got 4/);
  });

  it("an impossible outage (negative) is a line left out with a warning, not a negative total", () => {
    const brk = fx("tcp-echo", "break.csv");
    const r = run(derive(brk, /^(reconnect,,[^,]*,\d+,,4,)531\.887,/m, "$1-531.887,"));
    expect(r.warnings.join("\n")).toMatch(/outage_ms is -531\.887, below 0/);
    expect(r.reported?.totalOutageMs).toBeGreaterThanOrEqual(0);
  });

  it("most lines unreadable: the cell fails", () => {
    const broken = normal.replace(/^probe,(\d+),([^,]*),(\d+),(\d+),,,$/gm, (m, seq: string, t: string, mono: string) => (Number(seq) % 4 === 0 ? m : `probe,${seq},${t},${mono},abc,,,`));
    const e = expectToolError(() => run(broken), "tcp-echo");
    expect(e.message).toMatch(/^tcp-echo: \d+ of \d+ lines could not be read/);
  });

  it("escape sequences in a break's error text never reach the warnings", () => {
    const brk = derive(fx("tcp-echo", "break.csv"), "recv: connection closed by the server (EOF)", `recv: connection closed by the server (EOF)${NASTY.replace(/,/g, ";")}`, 2);
    const r = run(brk);
    expect(r.warnings.join("\n")).toContain("connection closed by the server");
    expectResultSafe(r);
  });
});

// ---------------------------------------------------------------------------------------------
describe("traceroute faults (derived from traceroute/*-three-hops; nmap 7.93, tcptraceroute 1.5beta7)", () => {
  const params = TracerouteParamsSchema.parse({});
  const run = (stdout: string, stderr = "") => traceroute.parse(clientOutput({ stdout, stderr }), params);
  const xml = fx("traceroute", "nmap-xml-three-hops.stdout");
  const text = fx("traceroute", "nmap-text-three-hops.stdout");
  const tcptr = fx("traceroute", "tcptraceroute-three-hops.stdout");
  const tcptrErr = fx("traceroute", "tcptraceroute-three-hops.stderr");

  it.each([
    ['rtt="1e400"', '<hop ttl="3" ipaddr="198.18.3.2" rtt="1e400"/>', /line 18: hop 3 rtt is infinite/],
    ['rtt="-5"', '<hop ttl="3" ipaddr="198.18.3.2" rtt="-5"/>', /line 18: hop 3 rtt is -5000 µs, below 0 µs/],
    ['rtt="abc"', '<hop ttl="3" ipaddr="198.18.3.2" rtt="abc"/>', /line 18: hop 3 rtt is not a number/],
    ['ttl="abc"', '<hop ttl="abc" ipaddr="198.18.3.2" rtt="0.01"/>', /line 18: hop ttl is not a number/],
    ['ttl="300"', '<hop ttl="300" ipaddr="198.18.3.2" rtt="0.01"/>', /line 18: hop ttl is 300, above the limit of 255/],
    ['ttl="0"', '<hop ttl="0" ipaddr="198.18.3.2" rtt="0.01"/>', /line 18: hop ttl is 0, below 1/],
  ])("nmap XML: a hop with %s fails (the hop count comes from every hop), naming line and text", (_, hop, message) => {
    const e = expectToolError(() => run(derive(xml, '<hop ttl="3" ipaddr="198.18.3.2" rtt="0.01"/>', hop)), "traceroute");
    expect(e.message).toMatch(message);
    expect(e.message).toContain(hop);
  });

  it.each([
    ["abc ms", /line 12: hop row cannot be read/],
    ["1e400 ms", /line 12: hop row cannot be read/],
    ["-5 ms", /line 12: hop row cannot be read/],
  ])("nmap text: a hop row with %s fails instead of ending the table early", (rtt, message) => {
    const e = expectToolError(() => run(derive(text, "3   0.02 ms 198.18.3.2", `3   ${rtt} 198.18.3.2`)), "traceroute");
    expect(e.message).toMatch(message);
    expect(e.message).toContain(`"3   ${rtt} 198.18.3.2"`);
  });

  it("nmap text: a hop number past 255 fails", () => {
    const e = expectToolError(() => run(derive(text, "3   0.02 ms 198.18.3.2", "300 0.02 ms 198.18.3.2")), "traceroute");
    expect(e.message).toMatch(/line 12: hop ttl is 300, above the limit of 255/);
  });

  it.each([
    ["1e400 ms", /line 3: hop 3 rtt is infinite/],
    ["-5 ms", /line 3: hop 3 rtt is -5000 µs, below 0 µs/],
    ["abc ms", /line 3: hop 3 rtt is not a number/],
  ])("tcptraceroute: a probe time %s fails (it was taken for a second address before)", (rtt, message) => {
    const e = expectToolError(() => run(derive(tcptr, "0.091 ms", rtt), tcptrErr), "traceroute");
    expect(e.message).toMatch(message);
  });

  it("escape sequences in nmap's messages never reach the error; garbage is quoted short", () => {
    const e = expectToolError(() => run("", `You requested a scan type which requires root privileges.${NASTY}\nQUITTING!\n`), "traceroute");
    expectTerminalSafe(e.message);
    const g = expectToolError(() => run(GARBAGE), "traceroute");
    expect(g.message.length).toBeLessThan(400);
    expectTerminalSafe(g.message);
  });

  it("escape sequences in a hop's name never reach the result", () => {
    const r = run(derive(text, "3   0.02 ms 198.18.3.2", `3   0.02 ms evil${NASTY.replace(/\s/g, "")}.example (198.18.3.2)`));
    expect(r.samples).toEqual([3]);
    expectResultSafe(r);
  });
});
