import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { iperf3, Iperf3ParamsSchema, type Iperf3Params } from "../../../src/tools/iperf3/index.ts";
import {
  extractIperf3Json,
  iperf3WindowBytes,
  parseIperf3,
  parseIperf3Version,
  rttFromStreams,
  windowWarnings,
} from "../../../src/tools/iperf3/parse.ts";
import { ToolOutputError } from "../../../src/tools/types.ts";
import { capture, clientContext, clientOutput, expectToolError, fixture, fixtureOutput, mean, serverContext } from "./helpers.ts";

const fx = (name: string) => fixture("iperf3", name);
/** iperf3 --json prints one document on stdout: the fixture is named in full. */
const output = (name: string, exitCode = 0) => fixtureOutput("iperf3", { stdout: name, exitCode });
const defaults = (over: Partial<Iperf3Params> = {}): Iperf3Params => Iperf3ParamsSchema.parse(over);

describe("iperf3 params", () => {
  it("fills defaults", () => {
    // parallel has no default filled in (the client passes -P 1): see "no stream-count warning" below
    expect(Iperf3ParamsSchema.parse({})).toEqual({ duration: 10, protocol: "tcp", omit: 0, reverse: false });
  });

  it("accepts windows and bitrates in iperf3's notation", () => {
    expect(defaults({ window: "32M" }).window).toBe("32M");
    expect(defaults({ window: "256K" }).window).toBe("256K");
    expect(defaults({ window: "65536" }).window).toBe("65536");
    expect(defaults({ protocol: "udp", bitrate: "100M" }).bitrate).toBe("100M");
    expect(defaults({ protocol: "udp", bitrate: "2.5G" }).bitrate).toBe("2.5G");
    expect(defaults({ bitrate: "0" }).bitrate).toBe("0");
    for (const bad of ["32MB", "-1M", "", "big", "0"]) {
      expect(Iperf3ParamsSchema.safeParse({ window: bad }).success, bad).toBe(false);
    }
    expect(Iperf3ParamsSchema.safeParse({ window: "513M" }).success).toBe(false); // iperf3: max 512 MiB
    expect(Iperf3ParamsSchema.safeParse({ window: "512M" }).success).toBe(true);
    expect(Iperf3ParamsSchema.safeParse({ bitrate: "100 Mbit" }).success).toBe(false);
  });

  it("rejects what iperf3 3.12 rejects", () => {
    expect(Iperf3ParamsSchema.safeParse({ parallel: 0 }).success).toBe(false);
    expect(Iperf3ParamsSchema.safeParse({ parallel: 128 }).success).toBe(true);
    expect(Iperf3ParamsSchema.safeParse({ parallel: 129 }).success).toBe(false); // bad-parallel fixture
    const half = Iperf3ParamsSchema.safeParse({ duration: 1.5 });
    expect(half.success).toBe(false);
    expect(JSON.stringify(half.error?.issues)).toContain("whole seconds");
    expect(Iperf3ParamsSchema.safeParse({ duration: 86401 }).success).toBe(false);
    expect(Iperf3ParamsSchema.safeParse({ omit: 60 }).success).toBe(true);
    expect(Iperf3ParamsSchema.safeParse({ omit: 61 }).success).toBe(false);
    expect(Iperf3ParamsSchema.safeParse({ omit: -1 }).success).toBe(false);
    expect(Iperf3ParamsSchema.safeParse({ protocol: "sctp" }).success).toBe(false);
  });
});

describe("iperf3 commands", () => {
  const sctx = serverContext();
  const cctx = clientContext();

  it("server and default client, both the iperf3 binary", () => {
    expect(iperf3.binaries).toEqual(["iperf3"]);
    expect(iperf3.server(sctx, defaults())).toEqual({ command: "iperf3 -s -p 11001", port: 11001 });
    const c = iperf3.client(cctx, defaults());
    expect(c.command).toBe("iperf3 -c 198.18.0.2 -p 11001 -t 10 -i 1 -P 1 --json");
    expect(c.files).toEqual([]);
    expect(c.timeoutSeconds).toBeGreaterThan(iperf3.estimateSeconds(defaults()));
  });

  it("every option", () => {
    const p = defaults({ duration: 30, parallel: 4, window: "32M", omit: 2, reverse: true });
    const command = iperf3.client(cctx, p).command;
    expect(command.endsWith('; iperf3 -c 198.18.0.2 -p 11001 -t 30 -i 1 -P 4 -w "$w" -O 2 -R --json')).toBe(true);
    expect(command.startsWith("w=33554432; ")).toBe(true);
    const u = defaults({ protocol: "udp", bitrate: "1G", duration: 5 });
    expect(iperf3.client(cctx, u).command).toBe("iperf3 -c 198.18.0.2 -p 11001 -t 5 -i 1 -P 1 -u -b 1G --get-server-output --json");
  });

  it("durations: omit counts in the estimate, not in the measurement", () => {
    const p = defaults({ duration: 30, omit: 2 });
    expect(iperf3.measurementSeconds(p)).toBe(30);
    expect(iperf3.estimateSeconds(p)).toBe(33);
    expect(iperf3.withDuration(p, 60)).toEqual({ ...p, duration: 60 });
    expect(iperf3.withDuration(p, 2.4).duration).toBe(2);
    expect(iperf3.withDuration(p, 0.1).duration).toBe(1);
    expect(() => iperf3.withDuration(p, -1)).toThrow(RangeError);
  });
});

describe("iperf3 version", () => {
  it("reads `iperf3 --version` and the JSON's version string", () => {
    expect(iperf3.versionCommand).toBe("iperf3 --version");
    expect(iperf3.parseVersion(fx("version.txt"))).toBe("3.12");
    expect(parseIperf3Version("iperf 3.17.1 (cJSON 1.7.15)")).toBe("3.17.1");
    expect(parseIperf3Version("iperf 3.9")).toBe("3.9");
    expect(parseIperf3Version("iperf version 2.1.5 (15 Dec 2021) pthreads")).toBeUndefined();
  });
});

describe("iperf3 3.12 captures (this machine)", () => {
  it("TCP -P 1: one sample per interval, goodput and the rest in reported", () => {
    const r = iperf3.parse(output("tcp-p1.json"), defaults({ duration: 3 }));
    expect(r.metric).toBe("throughput");
    expect(r.unit).toBe("Mbit/s");
    // intervals[].sum.bits_per_second: 18482019429.107533, 19642830461.266483, 18620826740.053066
    expect(r.samples).toEqual([18482.0194291, 19642.8304613, 18620.8267401]);
    expect(r.warnings).toEqual([]);
    expect(r.reported).toMatchObject({
      protocol: "TCP",
      reverse: "no",
      version: "3.12",
      streams: 1,
      receiverMbps: 18911.6118439, // end.sum_received
      senderMbps: 18915.3373085,
      retransmits: 15,
      meanRttUs: 83,
      minRttUs: 73,
      maxRttUs: 93,
      cpuHostPct: 95.2,
      cpuRemotePct: 46.98,
      sndbufActual: 16384,
      rcvbufActual: 131072,
      senderCongestion: "bbr",
    });
    expect(r.reported?.requestedWindow).toBeUndefined();
    expect(r.reported?.jitterMs).toBeUndefined();
  });

  it("TCP -P 4: samples are the sum of the four streams; RTT over the four senders", () => {
    const r = iperf3.parse(output("tcp-p4.json"), defaults({ parallel: 4, duration: 3 }));
    expect(r.samples).toEqual([27592.5042217, 24290.1635138, 19128.3622847]);
    // mean_rtt 31, 32, 30, 32 µs with near-equal bytes → 31.25
    expect(r.reported).toMatchObject({ streams: 4, retransmits: 1, meanRttUs: 31.3, minRttUs: 25, maxRttUs: 44, receiverMbps: 23669.6662812 });
    expect(r.warnings).toEqual([]);
  });

  it("warns when the stream count is not what was asked", () => {
    const r = iperf3.parse(output("tcp-p4.json"), defaults({ parallel: 2 }));
    expect(r.warnings).toContain("iperf3 ran 4 stream(s), not the 2 asked for");
  });

  it("-w 256K: Linux grants twice the request, no warning", () => {
    const r = iperf3.parse(output("tcp-w256K.json"), defaults({ window: "256K", duration: 3 }));
    expect(r.reported).toMatchObject({ requestedWindow: 262144, sndbufActual: 524288, rcvbufActual: 524288 });
    expect(r.warnings).toEqual([]);
  });

  it("-w 5M: granted 8 MiB = 2 × wmem_max, i.e. clamped although above the request", () => {
    const r = iperf3.parse(output("tcp-w5M.json"), defaults({ window: "5M", duration: 3 }));
    expect(r.reported).toMatchObject({ requestedWindow: 5242880, sndbufActual: 8388608, rcvbufActual: 8388608 });
    expect(r.warnings).toEqual([
      "window: asked for 5242880 bytes (5 MiB); Linux grants twice that when allowed, but gave sndbuf 8388608 bytes (8 MiB), rcvbuf 8388608 bytes (8 MiB): clamped by net.core.wmem_max / rmem_max",
    ]);
    const lines = iperf3.describe!(r.reported as Record<string, number | string>, r.samples, r.warnings);
    expect(lines).toContain("window: asked 5242880 bytes, granted sndbuf 8388608 / rcvbuf 8388608 bytes");
  });

  it("granted buffer smaller than the window asked for: a warning naming both", () => {
    // tcp-w5M.json with the granted sizes lowered to 4 MiB: the case iperf3 3.12 itself turns
    // into an error (tcp-w32M.json) but other versions / OSes may run with.
    const json = fx("tcp-w5M.json").replace(/"sndbuf_actual":\t8388608/, '"sndbuf_actual":\t4194304');
    expect(json).not.toBe(fx("tcp-w5M.json"));
    const r = parseIperf3({ stdout: json }, { window: "5M" });
    expect(r.warnings).toEqual([
      "window: asked for 5242880 bytes (5 MiB) but the kernel granted sndbuf 4194304 bytes (4 MiB): the window is smaller than requested (net.core.wmem_max / rmem_max)",
    ]);
  });

  it("-O 1: the omitted interval is left out", () => {
    const r = iperf3.parse(output("tcp-omit.json"), defaults({ omit: 1, duration: 3 }));
    // 4 intervals; the first ("omitted": true, 19042.15 Mbit/s) is not a sample
    expect(r.samples).toEqual([19224.1737421, 19753.6506271, 19540.5079672]);
    expect(r.reported).toMatchObject({ omitSeconds: 1, omittedIntervals: 1, meanRttUs: 66 });
  });

  it("-R: the client receives; no sender RTT", () => {
    const r = iperf3.parse(output("tcp-reverse.json"), defaults({ reverse: true, duration: 3 }));
    expect(r.samples).toEqual([15128.9707979, 20082.5083006, 19297.0240178]);
    expect(r.reported).toMatchObject({ reverse: "yes", receiverMbps: 18169.4763292, retransmits: 6 });
    expect(r.reported?.meanRttUs).toBeUndefined(); // mean_rtt 0: measured on the server
    expect(r.warnings).toEqual([]);
  });

  it("UDP 100M: jitter, loss, target", () => {
    const r = iperf3.parse(output("udp.json"), defaults({ protocol: "udp", bitrate: "100M", duration: 3 }));
    // Captured without --get-server-output: the intervals (100.127, 99.876, 100.140) are the
    // sender's; the one receiver figure is end.sum_received.
    expect(r.samples).toEqual([100.045690622]);
    expect(r.reported).toMatchObject({
      protocol: "UDP",
      receiverMbps: 100.045690622,
      senderMbps: 100.047758153,
      jitterMs: 0.009659,
      lostPackets: 0,
      lostPercent: 0,
      packets: 1145,
      targetMbps: 100,
    });
    expect(r.reported?.retransmits).toBeUndefined();
    expect(r.warnings).toEqual([expect.stringContaining("UDP: no per-interval receiver report in this output")]);
  });

  it("UDP unlimited: loss reported and warned", () => {
    const r = iperf3.parse(output("udp-loss.json"), defaults({ protocol: "udp", bitrate: "0", duration: 3 }));
    expect(r.samples).toEqual([37297.7317667]); // end.sum_received; the sender's is 38257.8
    expect(r.reported).toMatchObject({ lostPackets: 10978, packets: 437840, lostPercent: 2.5073, jitterMs: 0.007105 });
    expect(r.warnings).toContain("UDP: 10978 of 437840 datagrams lost (2.51%) at the receiver");
  });

  it("UDP without a bitrate: iperf3's 1 Mbit/s default is flagged", () => {
    const json = fx("udp.json").replace(/"target_bitrate":\t100000000/g, '"target_bitrate":\t1048576');
    const r = parseIperf3({ stdout: json }, { protocol: "udp" });
    expect(r.warnings.join("\n")).toContain("default target of 1 Mbit/s");
  });
});

describe("iperf3 errors", () => {
  it("connection refused (JSON error, exit 0)", () => {
    const e = expectToolError(() => iperf3.parse(output("refused.json"), defaults()), "iperf3");
    expect(e.message).toBe("iperf3: unable to connect to server: Connection refused (no iperf3 server reachable on that address and port)");
  });

  it("server busy (a second client at the same time)", () => {
    const e = expectToolError(() => iperf3.parse(output("server-busy.json"), defaults()));
    expect(e.message).toContain("the server is busy running a test. try again later");
    expect(e.message).toContain("one at a time");
  });

  it("an error wins even when intervals exist (server killed mid-test)", () => {
    const doc = JSON.parse(fx("server-killed.json")) as { intervals: unknown[] };
    expect(doc.intervals.length).toBe(2);
    const e = expectToolError(() => iperf3.parse(output("server-killed.json"), defaults()));
    expect(e.message).toBe("iperf3: unable to write to stream socket: Connection reset by peer");
  });

  it("-w 32M on a 4 MiB wmem_max: 3.12 refuses to run", () => {
    const e = expectToolError(() => iperf3.parse(output("tcp-w32M.json"), defaults({ window: "32M" })));
    expect(e.message).toMatch(/^iperf3: socket buffer size not set correctly \(iperf3 \(3\.12, 3\.18\) refuses .* net\.core\.wmem_max/);
  });

  it("a parameter error: text on stderr, usage on stdout, no JSON", () => {
    const e = expectToolError(() => iperf3.parse(capture("iperf3", "bad-parallel", { exitCode: 1 }), defaults()));
    expect(e.message).toBe("iperf3: parameter error - number of parallel streams too large (maximum = 128)");
  });

  it("not JSON at all: quotes the start of the text", () => {
    const e = expectToolError(() => iperf3.parse(output("tcp-p1.text.stdout"), defaults()));
    expect(e.message).toMatch(/^iperf3: output is not iperf3 JSON \(iperf3's text output: run it with --json\): "Connecting to host 127\.0\.0\.1, port 15201/);
    expect(expectToolError(() => parseIperf3({ stdout: "garbage" })).message).toBe('iperf3: output is not iperf3 JSON: "garbage"');
    expect(expectToolError(() => parseIperf3({ stdout: "" })).message).toBe("iperf3: output is empty");
    expect(expectToolError(() => parseIperf3({ stdout: "", stderr: "ssh: connect refused" })).message).toContain("stderr: ssh: connect refused");
    expect(expectToolError(() => parseIperf3({ stdout: '{"event":"start","data":{}}\n' })).message).toContain("--json-stream");
    // truncated JSON (the run was killed while printing)
    // (issue 23: said as cut, with what is missing — see truncated.test.ts)
    expect(expectToolError(() => parseIperf3({ stdout: fx("tcp-p1.json").slice(0, 900) })).message).toContain('iperf3\'s JSON ends before it is complete (output cut short?): it has "start", "intervals" but no "end"');
  });

  it("JSON with nothing measured", () => {
    expect(expectToolError(() => parseIperf3({ stdout: '{"start":{},"intervals":[],"end":{}}' })).message).toBe("iperf3: iperf3 reported no intervals");
    const allOmitted = fx("tcp-omit.json").replace(/"omitted":\tfalse/g, '"omitted":\ttrue');
    expect(expectToolError(() => parseIperf3({ stdout: allOmitted })).message).toContain("all 4 intervals were omitted");
  });

  it("a capture with a prompt around the JSON still parses", () => {
    const r = parseIperf3({ stdout: `$ iperf3 -c 127.0.0.1 -p 15201 -t 3 --json\n${fx("tcp-p1.json")}$ \n` });
    expect(r.samples).toHaveLength(3);
  });

  it("keeps results but warns on a non-zero exit without an error", () => {
    const r = iperf3.parse(output("tcp-p1.json", 2), defaults({ duration: 3 }));
    expect(r.warnings).toContain("iperf3 exited with code 2 although its JSON has results and no error");
  });
});

describe("iperf3 other versions (public output)", () => {
  it("3.16 UDP on Azure with 92% loss: the value is the receiver's 131.6 Mbit/s, not the sender's 1667", () => {
    const r = iperf3.parse(output("v3.16-udp-azure-loss.public.json"), defaults({ protocol: "udp", bitrate: "0", duration: 20 }));
    // 20 client intervals (1653.4 … 1711.2 Mbit/s) are the sender's; no server report in this
    // capture, so the one receiver figure, end.sum_received, is the value.
    expect(r.samples).toEqual([131.580149068]);
    expect(r.reported).toMatchObject({
      version: "3.16",
      goodputFrom: "receiver average (end.sum_received)",
      receiverMbps: 131.580149068,
      senderMbps: 1667.40240029,
      lostPackets: 2744190,
      packets: 2981957, // the receiver's Lost/Total; end.sum has the 2981960 sent
      sentPackets: 2981960,
      lostPercent: 92.0265,
      jitterMs: 0.05129,
      cpuHostPct: 97.53,
    });
    expect(r.warnings).toEqual([
      "UDP: no per-interval receiver report in this output (run the client with --get-server-output against a server started with -J): the value is one sample, the receiver's average goodput",
      "UDP: 2744190 of 2981957 datagrams lost (92.03%) at the receiver",
    ]);
  });

  it("3.9 TCP over a WAN with -O 3: omitted intervals out, RTT in the ms range", () => {
    const r = iperf3.parse(output("v3.9-tcp-omit3-wan.public.json"), defaults({ omit: 3 }));
    expect(r.samples).toHaveLength(10);
    expect(r.samples[0]).toBe(1876.79330951); // first after the omit, "start": 5.1e-05
    expect(mean(r.samples)).toBeCloseTo(1823.5, 0); // ≈ end.sum_sent 1823.49 Mbit/s
    expect(r.reported).toMatchObject({
      version: "3.9",
      omittedIntervals: 3,
      retransmits: 752,
      meanRttUs: 2722,
      minRttUs: 2223,
      maxRttUs: 4180,
      receiverMbps: 1822.78975143,
      senderCongestion: "cubic",
      rcvbufActual: 87380,
    });
    expect(r.warnings).toEqual([]);
  });

  it("3.16 error JSON (macOS)", () => {
    const e = expectToolError(() => iperf3.parse(output("v3.16-error-mac.public.json"), defaults()));
    expect(e.message).toBe(
      "iperf3: control socket has closed unexpectedly (the iperf3 server closed its control connection during the test: it was killed, crashed or restarted)",
    );
  });
});

describe("iperf3 helpers", () => {
  it("window sizes are 1024-based", () => {
    expect(iperf3WindowBytes("32M")).toBe(33554432);
    expect(iperf3WindowBytes("256K")).toBe(262144);
    expect(iperf3WindowBytes("1g")).toBe(1073741824);
    expect(iperf3WindowBytes("1.5M")).toBe(1572864);
    expect(iperf3WindowBytes("65536")).toBe(65536);
    expect(iperf3WindowBytes("32MB")).toBeUndefined();
  });

  it("mean RTT is weighted by the bytes each sender sent; 0 (unknown) is left out", () => {
    const s = (mean_rtt: number, bytes: number, min_rtt = mean_rtt, max_rtt = mean_rtt) => ({ sender: { mean_rtt, bytes, min_rtt, max_rtt } });
    expect(rttFromStreams([s(100, 3e9), s(400, 1e9)])).toEqual({ meanRttUs: 175, minRttUs: 100, maxRttUs: 400 });
    expect(rttFromStreams([s(100, 1e9), s(0, 5e9, 0, 0)])).toEqual({ meanRttUs: 100, minRttUs: 100, maxRttUs: 100 });
    expect(rttFromStreams([s(0, 1e9, 0, 0)])).toEqual({});
    expect(rttFromStreams([])).toEqual({});
  });

  it("window warnings: doubled is fine on Linux, less than asked always warns", () => {
    expect(windowWarnings(1000, 2000, 2000, true)).toEqual([]);
    expect(windowWarnings(1000, 1000, 1000, false)).toEqual([]); // not Linux: no doubling expected
    expect(windowWarnings(1000, 1500, 2000, true)[0]).toContain("clamped");
    expect(windowWarnings(1000, 900, 2000, false)[0]).toContain("sndbuf 900 bytes");
  });

  it("extracts the JSON document or explains why not", () => {
    expect(extractIperf3Json('{"error":"x"}').error).toBe("x");
    expect(() => extractIperf3Json('{"foo":1}')).toThrow(ToolOutputError);
  });

  it("leaves out a short trailing interval", () => {
    const doc = JSON.parse(fx("tcp-p1.json")) as { intervals: { sum: { seconds: number; bits_per_second: number } }[] };
    doc.intervals.push({ sum: { seconds: 0.04, bits_per_second: 1e9 } });
    const r = parseIperf3({ stdout: JSON.stringify(doc) });
    expect(r.samples).toHaveLength(3);
    expect(r.warnings[0]).toContain("left out 1 interval(s) shorter");
  });
});

describe("iperf3 window above the host's socket-buffer limit", () => {
  const p = Iperf3ParamsSchema.parse({ window: "32M" });
  // The clamp prefix of the real client command, run by a real shell with iperf3 replaced by echo.
  const clampOnly = (limitFile: string) =>
    iperf3.client(clientContext({ workDir: "/tmp", assetsDir: "/tmp" }), p).command
      .replace(/; iperf3 .*$/, '; echo "$w"')
      .replaceAll("/proc/sys/net/core/rmem_max /proc/sys/net/core/wmem_max", limitFile);

  it("asks for the host's limit instead, and says so on stderr", () => {
    const dir = mkdtempSync(join(tmpdir(), "latlab-iperf3-"));
    try {
      writeFileSync(join(dir, "max"), "4194304\n");
      const r = spawnSync("sh", ["-c", clampOnly(join(dir, "max"))], { encoding: "utf8" });
      expect(r.stdout.trim()).toBe("4194304");
      expect(r.stderr).toContain("latlab-iperf3: window 33554432 above host limit 4194304");
      writeFileSync(join(dir, "max"), "67108864\n");
      const big = spawnSync("sh", ["-c", clampOnly(join(dir, "max"))], { encoding: "utf8" });
      expect(big.stdout.trim()).toBe("33554432");
      expect(big.stderr).toBe("");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("turns the clamp into a warning and records both sizes", () => {
    const stdout = fx("tcp-p1.json");
    const r = iperf3.parse(clientOutput({ stdout, stderr: "latlab-iperf3: window 33554432 above host limit 4194304\n" }), p);
    expect(r.reported).toMatchObject({ windowAskedBytes: 33554432, windowHostMaxBytes: 4194304 });
    expect(r.warnings[0]).toMatch(/above this host's limit .* 4194304 bytes: ran with -w 4194304/);
  });
});

describe("issue 10: UDP is measured at the receiver (goodput, loss, jitter)", () => {
  // In iperf3 3.x UDP JSON, end.sum_received is the receiver: its bytes and bits_per_second are
  // the goodput, with the receiver's jitter and Lost/Total datagrams. end.sum has the SENDER's
  // bytes and rate (sender: true) with the receiver's jitter and loss grafted on, and end.sum_sent
  // is the sender alone (jitter 0, lost 0). The client's intervals[] are the sender's side too;
  // only --get-server-output (server_output_json, a server started with -J) or -R gives the
  // receiver's own per-interval report.
  it("the latlab UDP client asks for the server's report, and its server speaks JSON", () => {
    const u = defaults({ protocol: "udp", bitrate: "50M", duration: 2 });
    expect(iperf3.client(clientContext(), u).command).toBe("iperf3 -c 198.18.0.2 -p 11001 -t 2 -i 1 -P 1 -u -b 50M --get-server-output --json");
    expect(iperf3.server(serverContext(), u)).toEqual({ command: "iperf3 -s -J -p 11001", port: 11001 });
    // -R: the client is the receiver, its own intervals are the receiver's report
    expect(iperf3.client(clientContext(), { ...u, reverse: true }).command).not.toContain("--get-server-output");
    expect(iperf3.client(clientContext(), defaults()).command).not.toContain("--get-server-output");
  });

  it("-b 0 on loopback (72% lost): samples are the receiver's per-interval goodput, not the sender's rate", () => {
    const r = iperf3.parse(output("udp-b0-server-output.json"), defaults({ protocol: "udp", bitrate: "0", duration: 3 }));
    // server_output_json.intervals[].sum.bits_per_second (sender: false); the 0.28 ms tail is left out
    expect(r.samples).toEqual([6856.90199935, 7349.3278786, 5231.7034019]);
    // not the client's (sender) intervals: 24949.7, 25025.2, 18742.8
    expect(Math.max(...r.samples)).toBeLessThan(8000);
    expect(r.reported).toMatchObject({
      protocol: "UDP",
      goodputFrom: "receiver intervals (server report)",
      receiverMbps: 6480.59371603, // end.sum_received
      senderMbps: 22908.5045303, // end.sum_sent
      lostPackets: 187998,
      packets: 262170,
      lostPercent: 71.7084,
      jitterMs: 0.001481,
      partialIntervalsLeftOut: 1, // the server report's routine 0.28 ms tail: no warning
    });
    expect(r.warnings.join("\n")).not.toContain("sender's rate");
    expect(r.warnings.join("\n")).not.toContain("left out");
    expect(r.warnings).toContain("UDP: 187998 of 262170 datagrams lost (71.71%) at the receiver");
    const lines = iperf3.describe!(r.reported as Record<string, number | string>, r.samples, r.warnings);
    expect(lines[0]).toBe("goodput 6480.6 Mbit/s (receiver; sent 22908.5 Mbit/s), 187998/262170 datagrams lost (71.7084%), jitter 0.001481 ms");
  });

  it("-b 50M: one datagram lost at the receiver shows in goodput and loss", () => {
    const r = iperf3.parse(output("udp-b50M-server-output.json"), defaults({ protocol: "udp", bitrate: "50M", duration: 2 }));
    expect(r.samples).toEqual([49.8026282621, 50.06945625]);
    expect(r.reported).toMatchObject({ receiverMbps: 49.9337132641, senderMbps: 50.0668504569, lostPackets: 1, packets: 382, lostPercent: 0.2618 });
    expect(r.warnings).toEqual(["UDP: 1 of 382 datagrams lost (0.26%) at the receiver"]);
  });

  it("-R: the client received, its own intervals are the goodput", () => {
    const r = iperf3.parse(output("udp-b50M-reverse.json"), defaults({ protocol: "udp", bitrate: "50M", duration: 2, reverse: true }));
    expect(r.samples).toEqual([50.0654515468, 50.0210846190]);
    expect(r.reported).toMatchObject({ goodputFrom: "receiver intervals (client, -R)", receiverMbps: 50.0432563121, lostPackets: 0, packets: 382 });
    expect(r.warnings).toEqual([]);
  });

  it("a hand run without the server's report: one sample, the receiver's average goodput, and a note", () => {
    // `iperf3 -c 127.0.0.1 -p 15201 -u -b 50M -t 2 -J`
    const r = iperf3.parse(output("udp-b50M-hand.json"), defaults({ protocol: "udp", bitrate: "50M", duration: 2 }));
    expect(r.samples).toEqual([50.0641221069]); // end.sum_received, not the sender's 50.0658, 50.0691
    expect(r.reported).toMatchObject({ goodputFrom: "receiver average (end.sum_received)", receiverMbps: 50.0641221069 });
    expect(r.warnings).toEqual([
      "UDP: no per-interval receiver report in this output (run the client with --get-server-output against a server started with -J): the value is one sample, the receiver's average goodput",
    ]);
  });
});

describe("issue 10: a window clamped to the host's limit is reported as asked and as applied", () => {
  it("256M asked on a host whose limit is 4 MiB: the lines name 256M and the 4194304 applied", () => {
    // latlab's own client command for window 256M, run by sh (see the README)
    const p = defaults({ window: "256M", duration: 2 });
    const r = iperf3.parse(fixtureOutput("iperf3", { stdout: "tcp-w256M-clamped.json", stderr: "tcp-w256M-clamped.stderr" }), p);
    expect(r.reported).toMatchObject({ windowAsked: "256M", windowAskedBytes: 268435456, windowHostMaxBytes: 4194304, requestedWindow: 4194304, sndbufActual: 8388608 });
    expect(r.warnings).toEqual([
      "window 256M (268435456 bytes) is above this host's limit net.core.rmem_max/wmem_max = 4194304 bytes: ran with -w 4194304 (raise the limit to measure the asked window)",
    ]);
    const lines = iperf3.describe!(r.reported as Record<string, number | string>, r.samples, r.warnings);
    expect(lines).toContain("window: asked 256M (268435456 bytes), applied 4194304 bytes (this host's limit), granted sndbuf 8388608 / rcvbuf 8388608 bytes");
    expect(lines.join("\n")).not.toContain("asked 4194304");
  });

  it("the kernel's own clamp of the applied window names both too", () => {
    const json = fx("tcp-w256M-clamped.json").replace(/"sndbuf_actual":\t8388608/, '"sndbuf_actual":\t6291456');
    const r = parseIperf3({ stdout: json }, { window: "256M", windowApplied: 4194304 });
    expect(r.warnings).toEqual([
      "window: 256M asked, applied 4194304 bytes (4 MiB); Linux grants twice that when allowed, but gave sndbuf 6291456 bytes (6 MiB): clamped by net.core.wmem_max / rmem_max",
    ]);
  });
});

describe("issue 10: no stream-count warning unless a count was asked", () => {
  it("a -P 2 run parsed with the defaults (latlab parse without --params): no warning, 2 streams reported", () => {
    const r = iperf3.parse(output("tcp-p2.json"), Iperf3ParamsSchema.parse({}));
    expect(r.reported).toMatchObject({ streams: 2 });
    expect(r.warnings).toEqual([]);
  });

  it("an asked count that differs still warns", () => {
    const r = iperf3.parse(output("tcp-p2.json"), defaults({ parallel: 1 }));
    expect(r.warnings).toEqual(["iperf3 ran 2 stream(s), not the 1 asked for"]);
  });

  it("the client still passes -P 1 when none is given", () => {
    expect(iperf3.client(clientContext(), Iperf3ParamsSchema.parse({})).command).toContain(" -P 1 ");
  });
});

describe("issue 21: iperf3 3.18 captures (Debian trixie; Ubuntu 24.04 ships 3.16)", () => {
  const v = (name: string) => `3.18/${name}`;
  /** Every 3.18 client printed its JSON on stdout; stderr was empty except bad-parallel's. */
  const out318 = (name: string, exitCode = 0) => fixtureOutput("iperf3", { stdout: v(name), exitCode });

  it("--version and the JSON's version string", () => {
    expect(iperf3.parseVersion(fx(v("version.txt")))).toBe("3.18");
    expect(fx(v("version.txt"))).toMatch(/POSIX threads/); // 3.16+: a thread per stream
  });

  it("TCP -P 1 (latlab's command): three intervals, goodput, retransmits, RTT", () => {
    const r = iperf3.parse(out318("tcp-p1.json"), defaults({ duration: 3 }));
    // intervals[].sum.bits_per_second: 21781655904.883179, 18093025209.6…, 11610104021.6…
    expect(r.samples).toEqual([21781.6559049, 18093.0252096, 11610.1040216]);
    expect(r.warnings).toEqual([]);
    expect(r.reported).toMatchObject({
      protocol: "TCP",
      reverse: "no",
      version: "3.18",
      streams: 1,
      durationSeconds: 3,
      senderMbps: 17166.72894,
      receiverMbps: 17159.7913848,
      retransmits: 76,
      meanRttUs: 150,
      minRttUs: 121,
      maxRttUs: 192,
      senderCongestion: "bbr",
      sndbufActual: 16384,
      rcvbufActual: 131072,
    });
  });

  it("TCP -P 4: one summed sample per interval, four streams, RTT weighted by bytes", () => {
    const r = iperf3.parse(out318("tcp-p4.json"), defaults({ duration: 3, parallel: 4 }));
    expect(r.samples).toEqual([12976.2505011, 55162.0327477, 56103.5452032]);
    expect(r.warnings).toEqual([]);
    expect(r.reported).toMatchObject({ streams: 4, receiverMbps: 41394.1545723, retransmits: 62, meanRttUs: 816.9, minRttUs: 122, maxRttUs: 4231 });
  });

  it("-R: the client's intervals are the receiver's, no sender RTT", () => {
    const r = iperf3.parse(out318("tcp-reverse.json"), defaults({ duration: 3, reverse: true }));
    expect(r.samples).toEqual([22426.7551965, 26150.9139544, 25931.8415367]);
    expect(r.reported).toMatchObject({ reverse: "yes", receiverMbps: 24835.2033029 });
    expect(r.reported?.meanRttUs).toBeUndefined();
    expect(r.warnings).toEqual([]);
  });

  it("-O 1: the omitted interval is left out", () => {
    const r = iperf3.parse(out318("tcp-omit.json"), defaults({ duration: 3, omit: 1 }));
    expect(r.samples).toEqual([21771.7037275, 12218.1514542, 17500.9050028]);
    expect(r.reported).toMatchObject({ omitSeconds: 1, omittedIntervals: 1, retransmits: 95 });
  });

  it("-w 256K: granted twice that, no warning", () => {
    const r = iperf3.parse(out318("tcp-w256K.json"), defaults({ duration: 2, window: "256K" }));
    expect(r.samples).toEqual([18849.9909084, 26788.6870853]);
    expect(r.reported).toMatchObject({ requestedWindow: 262144, sndbufActual: 524288, rcvbufActual: 524288 });
    expect(r.warnings).toEqual([]);
  });

  it("UDP -b 50M with the server's JSON report (latlab's UDP client): receiver intervals, no loss", () => {
    const r = iperf3.parse(out318("udp-b50M-server-output.json"), defaults({ protocol: "udp", bitrate: "50M", duration: 2 }));
    // 3.18's server report has no trailing partial interval (3.12's had one)
    expect(r.samples).toEqual([50.0160870179, 49.8737512292]);
    expect(r.reported).toMatchObject({
      goodputFrom: "receiver intervals (server report)",
      receiverMbps: 49.9418526247,
      lostPackets: 0,
      packets: 382,
      lostPercent: 0,
      jitterMs: 0.011191,
      targetMbps: 50,
    });
    expect(r.reported?.partialIntervalsLeftOut).toBeUndefined();
    expect(r.warnings).toEqual([]);
  });

  it("UDP -b 0: 181793 of 404404 datagrams lost at the receiver", () => {
    const r = iperf3.parse(out318("udp-b0-server-output.json"), defaults({ protocol: "udp", bitrate: "0", duration: 3 }));
    expect(r.samples).toEqual([20222.0423312, 17018.1892889, 21090.7110938]);
    expect(r.reported).toMatchObject({ senderMbps: 35325.7453758, receiverMbps: 19443.432554, lostPackets: 181793, packets: 404404, sentPackets: 404404, lostPercent: 44.9533 });
    expect(r.warnings).toEqual(["UDP: 181793 of 404404 datagrams lost (44.95%) at the receiver"]);
  });

  it("UDP -R: the client receives and reports the goodput itself", () => {
    const r = iperf3.parse(out318("udp-b50M-reverse.json"), defaults({ protocol: "udp", bitrate: "50M", duration: 2, reverse: true }));
    expect(r.samples).toEqual([50.0276324514, 50.0681550988]);
    expect(r.reported).toMatchObject({ goodputFrom: "receiver intervals (client, -R)", lostPackets: 0, packets: 382, jitterMs: 0.29563 });
  });

  it("3.18 exits 1 on a failed test (3.12 exited 0); the JSON error is still the message", () => {
    const refused = expectToolError(() => iperf3.parse(out318("refused.json", 1), defaults()), "iperf3");
    expect(refused.message).toBe(
      "iperf3: unable to connect to server - server may have stopped running or use a different port, firewall issue, etc.: Connection refused (no iperf3 server reachable on that address and port)",
    );
    const busy = expectToolError(() => iperf3.parse(out318("server-busy.json", 1), defaults()));
    expect(busy.message).toBe("iperf3: the server is busy running a test. try again later (another client's test was running on this iperf3 server; it serves one at a time)");
    const w = expectToolError(() => iperf3.parse(out318("tcp-w32M.json", 1), defaults({ window: "32M" })));
    expect(w.message).toMatch(/^iperf3: socket buffer size not set correctly \(iperf3 \(3\.12, 3\.18\) refuses/);
  });

  it("server killed 1.6 s in: intervals, then the control-socket error", () => {
    const doc = JSON.parse(fx(v("server-killed.json"))) as { intervals: unknown[] };
    expect(doc.intervals.length).toBe(2); // the same first interval twice, as 3.12 did
    const e = expectToolError(() => iperf3.parse(out318("server-killed.json", 1), defaults({ duration: 3 })));
    expect(e.message).toBe(
      "iperf3: control socket has closed unexpectedly (the iperf3 server closed its control connection during the test: it was killed, crashed or restarted)",
    );
  });

  it("-P 129: no JSON, the parameter error on stderr (stdout empty in 3.18)", () => {
    expect(fx(v("bad-parallel.stdout"))).toBe("");
    const e = expectToolError(() => iperf3.parse(fixtureOutput("iperf3", { stdout: v("bad-parallel.stdout"), stderr: v("bad-parallel.stderr"), exitCode: 1 }), defaults()));
    expect(e.message).toBe("iperf3: parameter error - number of parallel streams too large (maximum = 128)");
  });
});
