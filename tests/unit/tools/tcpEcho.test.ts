import { describe, expect, it } from "vitest";
import {
  tcpEcho,
  TCP_ECHO_SCRIPT,
  TCP_ECHO_SCRIPT_VERSION,
  TcpEchoParamsSchema,
  tcpEchoFiles,
  type TcpEchoParams,
} from "../../../src/tools/tcpEcho/index.ts";
import { parseTcpEcho, parseTcpEchoVersion, readTcpEchoCsv, TCP_ECHO_HEADER } from "../../../src/tools/tcpEcho/parse.ts";
import type { ClientOutput, ToolResult } from "../../../src/tools/types.ts";
import { clientContext, clientOutput, expectToolError, fixture, serverContext } from "./helpers.ts";

const fx = (name: string) => fixture("tcp-echo", name);
const params = (over: Partial<TcpEchoParams> = {}): TcpEchoParams => TcpEchoParamsSchema.parse(over);

const ctx = clientContext({ targetAddress: "10.0.0.4", port: 7007, workDir: "/var/lib/latlab/run/cell-1", assetsDir: "/var/lib/latlab/run/tools/tcp-echo" });
const files = tcpEchoFiles(ctx.workDir, ctx.port);

/** What the runner hands parse(): the followed CSV under its absolute path, plus the log. */
const output = (csv: string, log = ""): ClientOutput =>
  clientOutput({ stdout: "latlab_echo client started, pid 1234\n", files: { [files.csv]: csv, [files.log]: log } });
const parse = (name: string): ToolResult => tcpEcho.parse(output(fx(name)), params());

/** The RTTs in a fixture, read independently of the parser: column 5 of `probe,` lines, in µs. */
const probeRtts = (csv: string) =>
  csv
    .split("\n")
    .filter((l) => l.startsWith("probe,"))
    .map((l) => Number(l.split(",")[4]) / 1000);

describe("tcp-echo params", () => {
  it("fills defaults", () => {
    expect(params()).toEqual({ interval: 1, payload: 64, duration: 60, connectTimeout: 5, replyTimeout: 10 });
  });

  it("allows seed 000's run: 64 bytes once a second for 11 h", () => {
    expect(TcpEchoParamsSchema.safeParse({ interval: 1, payload: 64, duration: 39_600 }).success).toBe(true);
  });

  it("rejects what the script cannot do", () => {
    const bad = (p: object) => TcpEchoParamsSchema.safeParse(p).success;
    expect(bad({ interval: 0.0005 })).toBe(false);
    expect(bad({ interval: 0.001 })).toBe(true);
    expect(bad({ payload: 0 })).toBe(false);
    expect(bad({ payload: 65_000 })).toBe(true);
    expect(bad({ payload: 65_001 })).toBe(false);
    expect(bad({ payload: 1.5 })).toBe(false);
    expect(bad({ duration: 0 })).toBe(false);
    expect(bad({ duration: 8 * 24 * 3600 })).toBe(false);
    expect(bad({ connectTimeout: 0 })).toBe(false);
    expect(bad({ count: 5 })).toBe(false); // strict: a ping parameter is a mistake here
  });

  it("withDuration sets the duration", () => {
    expect(tcpEcho.withDuration(params(), 39_600).duration).toBe(39_600);
    expect(() => tcpEcho.withDuration(params(), 0)).toThrow(RangeError);
    expect(tcpEcho.measurementSeconds(params({ duration: 120 }))).toBe(120);
    expect(tcpEcho.estimateSeconds(params({ duration: 120 }))).toBeGreaterThan(120);
  });
});

describe("tcp-echo commands", () => {
  it("ships the script as an asset and needs only python3", () => {
    expect(tcpEcho.binaries).toEqual(["python3"]);
    expect(tcpEcho.assets).toEqual({ "latlab_echo.py": TCP_ECHO_SCRIPT });
    expect(TCP_ECHO_SCRIPT.startsWith("#!/usr/bin/env python3\n")).toBe(true);
    expect(TCP_ECHO_SCRIPT).toContain(`HEADER = "${TCP_ECHO_HEADER}"`);
    expect(TCP_ECHO_SCRIPT_VERSION).toBe("1");
  });

  it("server: the script in server mode on the cell's port", () => {
    const spec = tcpEcho.server(serverContext({ port: 7007, workDir: "/w/servers", assetsDir: "/w/tools/tcp-echo" }), params());
    expect(spec).toEqual({ command: "python3 /w/tools/tcp-echo/latlab_echo.py server --bind 0.0.0.0 --port 7007", port: 7007 });
  });

  it("client: starts the script detached and tells the runner what to follow", () => {
    const spec = tcpEcho.client(ctx, params({ duration: 39_600 }));
    expect(spec.detached).toEqual({
      pidFile: "/var/lib/latlab/run/cell-1/tcp-echo-7007.pid",
      outputFile: "/var/lib/latlab/run/cell-1/tcp-echo-7007.csv",
      pollSeconds: 5,
    });
    expect(spec.files).toEqual(["/var/lib/latlab/run/cell-1/tcp-echo-7007.csv", "/var/lib/latlab/run/cell-1/tcp-echo-7007.log"]);
    // duration + margin: the last echo may take replyTimeout, a reconnect connectTimeout.
    expect(spec.timeoutSeconds).toBeGreaterThanOrEqual(39_600 + 10 + 5);
    expect(spec.timeoutSeconds).toBeLessThan(39_600 + 120);
    expect(spec.command).toContain(
      "setsid nohup python3 /var/lib/latlab/run/tools/tcp-echo/latlab_echo.py client --host 10.0.0.4 --port 7007 --interval 1 --payload 64 --duration 39600 --connect-timeout 5 --reply-timeout 10 " +
        "--out /var/lib/latlab/run/cell-1/tcp-echo-7007.csv --pid-file /var/lib/latlab/run/cell-1/tcp-echo-7007.pid " +
        "> /var/lib/latlab/run/cell-1/tcp-echo-7007.log 2>&1 < /dev/null & ",
    );
    expect(spec.command.startsWith("mkdir -p /var/lib/latlab/run/cell-1 && rm -f ")).toBe(true);
    // Returns once the CSV has its header; fails with the log otherwise.
    expect(spec.command).toMatch(/while \[ ! -s \S+\.csv \] && \[ ! -s \S+\.log \]/);
    expect(spec.command).toContain("exit 1; fi");
  });

  it("quotes paths and writes small intervals as plain decimals", () => {
    const spec = tcpEcho.client({ ...ctx, workDir: "/tmp/my run", assetsDir: "/opt/it's" }, params({ interval: 0.001, duration: 0.5 }));
    expect(spec.command).toContain("python3 '/opt/it'\\''s/latlab_echo.py' client");
    expect(spec.command).toContain("--out '/tmp/my run/tcp-echo-7007.csv'");
    expect(spec.command).toContain("--interval 0.001 ");
    expect(spec.command).toContain("--duration 0.5 ");
    expect(spec.detached?.pidFile).toBe("/tmp/my run/tcp-echo-7007.pid");
  });

  it("version: the script's and python's", () => {
    expect(tcpEcho.versionCommand).toBe("python3 --version");
    expect(tcpEcho.parseVersion(`${fx("version.txt")}\n`)).toBe("latlab_echo 1 / Python 3.11.7");
    expect(parseTcpEchoVersion("\nPython 3.8.10\n", "2")).toBe("latlab_echo 2 / Python 3.8.10");
    expect(tcpEcho.parseVersion("sh: 1: python3: not found\n")).toBeUndefined();
  });
});

describe("tcp-echo parse (CSV captured from the script)", () => {
  it("normal: one RTT per probe, in order, in µs", () => {
    const csv = fx("normal.csv");
    const r = parse("normal.csv");
    expect(r.metric).toBe("rtt");
    expect(r.unit).toBe("us");
    expect(r.samples).toEqual(probeRtts(csv));
    expect(r.samples).toHaveLength(60);
    expect(r.samples[0]).toBe(126.757); // probe,0,…,97431,126757 (ns)
    expect(r.reported).toMatchObject({ probes: 60, lost: 0, breaks: 0, reconnects: 0, totalOutageMs: 0, skippedSlots: 0, endedBy: "duration" });
    expect(r.reported?.firstBreakAt).toBeUndefined();
    expect(r.warnings).toEqual([]);
  });

  it("break: the server was stopped and restarted twice; each break is a warning with its time", () => {
    const r = parse("break.csv");
    expect(r.samples).toEqual(probeRtts(fx("break.csv")));
    expect(r.reported).toMatchObject({
      probes: 59,
      lost: 21,
      breaks: 2,
      reconnects: 2,
      totalOutageMs: 1016.205, // 531.887 + 484.318
      firstBreakAt: "2026-11-21T05:12:23.857815Z",
      lastBreakAt: "2026-11-21T05:12:25.266081Z",
      probesBeforeFirstBreak: 18,
      skippedSlots: 0,
      endedBy: "duration",
    });
    expect(r.warnings[0]).toBe(
      "connection break 1 of 2 at 2026-11-21T05:12:23.857815Z after 18 probes: recv: connection closed by the server (EOF); " +
        "reconnected at 2026-11-21T05:12:24.390074Z after 531.887 ms (4 attempts)",
    );
    expect(r.warnings[1]).toMatch(/^connection break 2 of 2 at 2026-11-21T05:12:25.266081Z after 35 probes: .*after 484.318 ms \(4 attempts\)$/);
    expect(r.warnings).toContain("21 probe(s) lost: due while there was no working connection");
  });

  it("loss: a frozen server makes echoes time out; those probes are lost, never huge RTTs", () => {
    const r = parse("loss.csv");
    expect(r.reported).toMatchObject({ probes: 41, lost: 14, breaks: 2, reconnects: 2, skippedSlots: 5 });
    expect(r.warnings[0]).toContain("timeout: no echo within 0.3 s");
    // The 0.3 s timeouts are not samples; the one echo that did come back late (285 ms) is.
    expect(Math.max(...r.samples)).toBeLessThan(300_000);
    expect(r.samples).toEqual(probeRtts(fx("loss.csv")));
  });

  it("skip: an echo that overran the next slots is a sample, the slots are counted as skipped", () => {
    const r = parse("skip.csv");
    expect(r.reported).toMatchObject({ probes: 37, lost: 0, breaks: 0, skippedSlots: 3 });
    expect(Math.max(...r.samples)).toBeGreaterThan(150_000); // "echo took 187.468 ms"
    expect(r.warnings).toEqual(["3 slot(s) skipped: an echo took longer than the interval"]);
  });

  it("sigterm: a stopped run ends cleanly and loses nothing", () => {
    const r = parse("sigterm.csv");
    expect(r.reported).toMatchObject({ probes: 28, lost: 0, breaks: 0, endedBy: "SIGTERM" });
    expect(r.warnings).toEqual([]);
  });

  it("no probes at all: a ToolOutputError naming the first error", () => {
    const e = expectToolError(() => parse("no-server.csv"), "tcp-echo");
    expect(e.message).toBe("tcp-echo: no probes: connect: Connection refused (ECONNREFUSED)");
  });

  it("tolerates a last line cut mid-write", () => {
    const r = parse("truncated.csv");
    expect(r.samples).toEqual(parse("normal.csv").samples);
    expect(r.warnings).toEqual([
      'ignored a truncated last line (the copy ended mid-write): "end,,2026-"',
      "no end record: the client was killed or collection stopped before it finished",
    ]);
    // Cut anywhere in the last two lines: never an error, never a half-read number.
    const csv = fx("normal.csv");
    const lastTwo = csv.lastIndexOf("\n", csv.lastIndexOf("\n", csv.length - 2) - 1);
    for (let cut = lastTwo + 1; cut <= csv.length; cut++) {
      const got = tcpEcho.parse(output(csv.slice(0, cut)), params()).samples;
      expect(got.length === 59 || got.length === 60).toBe(true);
      expect(got).toEqual(probeRtts(csv).slice(0, got.length));
    }
  });

  it("notices records missing from the copy (the end record's counts)", () => {
    const csv = fx("normal.csv").replace(/^probe,7,.*\n/m, "");
    const r = tcpEcho.parse(output(csv), params());
    expect(r.samples).toHaveLength(59);
    expect(r.warnings).toEqual(["the client counted probes=60, the file has probes=59: records are missing"]);
  });

  it("rejects what is not the script's CSV, naming the line", () => {
    expect(expectToolError(() => tcpEcho.parse(output("", "Traceback …\nOSError: boom\n"), params())).message).toBe(
      "tcp-echo: the client wrote no CSV; its log ends: Traceback … | OSError: boom",
    );
    expect(expectToolError(() => parseTcpEcho({ csv: "packet_num,timestamp,rtt_us\n1,2,3\n" })).message).toMatch(/not a latlab_echo CSV/);
    expect(expectToolError(() => parseTcpEcho({ csv: `${TCP_ECHO_HEADER}\n` })).message).toBe("tcp-echo: no probes: no probe recorded");
  });

  it("a line that cannot be read is left out and warned about, naming the line (was an error before issue 12)", () => {
    const corrupt = fx("normal.csv").replace(/^probe,3,(.*),(\d+),,,$/m, "probe,3,$1,12x4,,,");
    const r = tcpEcho.parse(output(corrupt), params());
    expect(r.samples).toHaveLength(59);
    expect(r.warnings[0]).toMatch(/^tcp-echo: 1 of 63 lines could not be read and was left out \(line 7: rtt_ns is not a number: "probe,3,2026-11-21T05:12:19\.742242Z,150146680,12x4,,,"\)$/);
    expect(r.warnings[1]).toBe("the client counted probes=60, the file has probes=59: records are missing or unreadable (1 line left out)");
  });

  it("reads every fixture record by record", () => {
    const { records } = readTcpEchoCsv(fx("break.csv"));
    expect(records[0]).toMatchObject({ event: "start", monoNs: 0, line: 2 });
    expect(records.filter((r) => r.event === "reconnect").map((r) => [r.count, r.outageMs])).toEqual([
      [4, 531.887],
      [4, 484.318],
    ]);
    expect(records.at(-1)).toMatchObject({ event: "end", count: 59 });
  });
});

describe("tcp-echo describe", () => {
  it("summarises the breaks", () => {
    const r = parse("break.csv");
    const lines = tcpEcho.describe!(r.reported as Record<string, number | string>, r.samples, r.warnings);
    expect(lines).toEqual([
      "connection broke 2 time(s): first at 2026-11-21T05:12:23.857815Z, last at 2026-11-21T05:12:25.266081Z; 2 reconnect(s), 1016.205 ms without a connection, 21 probe(s) lost",
    ]);
  });

  it("prints seed 000's table for the 500 probes before the first break", () => {
    const means = [813.14, 888.09, 925.49, 955.87, 789.58];
    const samples = [...Array(50).fill(1), ...means.flatMap((m) => Array(100).fill(m)), ...Array(30).fill(5000)];
    const lines = tcpEcho.describe!({ breaks: 1, reconnects: 1, lost: 3, totalOutageMs: 1200, firstBreakAt: "2025-03-20T10:04:12Z", probesBeforeFirstBreak: 550, probes: 580 }, samples, []);
    expect(lines).toEqual([
      "connection broke 1 time(s): first at 2025-03-20T10:04:12Z; 1 reconnect(s), 1200 ms without a connection, 3 probe(s) lost",
      "mean RTT per 100 probes, last 500 before the first break:",
      "  Records 500-401: 813.14 µs",
      "  Records 400-301: 888.09 µs",
      "  Records 300-201: 925.49 µs",
      "  Records 200-101: 955.87 µs",
      "  Last 100 records: 789.58 µs",
      "  change in the final window: down by 166.29 µs",
    ]);
  });
});
