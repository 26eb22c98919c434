import { describe, expect, it } from "vitest";
import {
  qperf,
  QPERF_DATA_PORT_OFFSET,
  qperfDataPort,
  QperfParamsSchema,
  type QperfParams,
} from "../../../src/tools/qperf/index.ts";
import {
  normaliseEntry,
  parseQperf,
  parseQperfOutput,
  parseQperfVersion,
  qperfNumber,
} from "../../../src/tools/qperf/parse.ts";
import { capture, clientContext, expectToolError, fixture, serverContext } from "./helpers.ts";

/** `*.public` captures were pasted from elsewhere: stdout only. */
const output = (name: string, exitCode = 0) => capture("qperf", name, { exitCode, stderr: !name.includes(".public") });
const defaults = (over: Partial<QperfParams> = {}): QperfParams => QperfParamsSchema.parse(over);

describe("qperf params", () => {
  it("fills defaults", () => {
    expect(QperfParamsSchema.parse({})).toEqual({ test: "tcp_lat", messageSize: 64, duration: 5 });
  });

  it("accepts the three tests and nothing else", () => {
    for (const test of ["tcp_lat", "udp_lat", "tcp_bw"] as const) expect(defaults({ test }).test).toBe(test);
    expect(QperfParamsSchema.safeParse({ test: "udp_bw" }).success).toBe(false);
    expect(QperfParamsSchema.safeParse({ test: "rc_lat" }).success).toBe(false);
  });

  it("rejects what qperf would mis-measure or reject", () => {
    const half = QperfParamsSchema.safeParse({ duration: 1.5 });
    expect(half.success).toBe(false);
    expect(JSON.stringify(half.error?.issues)).toContain("whole seconds");
    expect(QperfParamsSchema.safeParse({ duration: 0 }).success).toBe(false);
    expect(QperfParamsSchema.safeParse({ messageSize: 0 }).success).toBe(false); // qperf prints "1.93 ns"
    expect(QperfParamsSchema.safeParse({ messageSize: 2.5 }).success).toBe(false);
    // udp_lat above one datagram: qperf says "latency = 0 ns" and exits 0 (udp-msg-too-big)
    expect(QperfParamsSchema.safeParse({ test: "udp_lat", messageSize: 65507 }).success).toBe(true);
    const big = QperfParamsSchema.safeParse({ test: "udp_lat", messageSize: 65508 });
    expect(big.success).toBe(false);
    expect(big.error?.issues[0]?.path).toEqual(["messageSize"]);
    expect(QperfParamsSchema.safeParse({ test: "tcp_lat", messageSize: 65508 }).success).toBe(true);
    expect(QperfParamsSchema.safeParse({ dataPort: 0 }).success).toBe(false);
    expect(QperfParamsSchema.safeParse({ dataPort: 65536 }).success).toBe(false);
  });
});

describe("qperf commands", () => {
  const sctx = serverContext({ port: 11002 });
  const cctx = clientContext({ port: 11002 });

  it("server listens on the cell's port; client and server are the qperf binary", () => {
    expect(qperf.binaries).toEqual(["qperf"]);
    expect(qperf.server(sctx, defaults())).toEqual({ command: "qperf -lp 11002", port: 11002 });
  });

  it("client pins the data port to port + 1000 and asks for unscaled, verbose output", () => {
    expect(QPERF_DATA_PORT_OFFSET).toBe(1000);
    const c = qperf.client(cctx, defaults());
    expect(c.command).toBe("qperf -lp 11002 -ip 12002 198.18.0.2 -t 5 -m 64 -vv -uu tcp_lat");
    expect(c.files).toEqual([]);
    expect(c.timeoutSeconds).toBeGreaterThan(qperf.estimateSeconds(defaults()) + 5); // + qperf's 5 s wait_server
    expect(qperf.client(cctx, defaults({ test: "tcp_bw", messageSize: 65536, duration: 30 })).command).toBe(
      "qperf -lp 11002 -ip 12002 198.18.0.2 -t 30 -m 65536 -vv -uu tcp_bw",
    );
    expect(qperf.client(cctx, defaults({ test: "udp_lat", dataPort: 5001 })).command).toContain(" -ip 5001 ");
  });

  it("data port: never the listen port, never above 65535", () => {
    expect(qperfDataPort(11000, {})).toBe(12000);
    expect(() => qperfDataPort(11000, { dataPort: 11000 })).toThrow(RangeError);
    expect(() => qperfDataPort(65000, {})).toThrow(/above 65535/);
  });

  it("quotes an odd target address", () => {
    expect(qperf.client({ ...cctx, targetAddress: "host name" }, defaults()).command).toContain(" 'host name' -t ");
  });

  it("durations: measurement, estimate, withDuration", () => {
    const p = defaults({ test: "udp_lat", duration: 10 });
    expect(qperf.measurementSeconds(p)).toBe(10);
    expect(qperf.estimateSeconds(p)).toBe(11);
    expect(qperf.withDuration(p, 30)).toEqual({ ...p, duration: 30 });
    expect(qperf.withDuration(p, 2.6).duration).toBe(3);
    expect(qperf.withDuration(p, 0.2).duration).toBe(1);
    expect(() => qperf.withDuration(p, 0)).toThrow(RangeError);
    expect(() => qperf.withDuration(p, Number.NaN)).toThrow(RangeError);
  });
});

describe("qperf version", () => {
  it("reads `qperf --version`", () => {
    expect(qperf.versionCommand).toBe("qperf --version");
    expect(qperf.parseVersion(fixture("qperf", "version.txt"))).toBe("0.4.11");
    expect(parseQperfVersion("bash: qperf: command not found")).toBeUndefined();
  });
});

describe("qperf latency (this machine, 0.4.11)", () => {
  it("latlab's own command (-vv -uu): RTT = 2 × the printed one-way ns, everything else kept", () => {
    const r = qperf.parse(output("tcp_lat.vv-uu"), defaults({ duration: 2 }));
    expect(r.metric).toBe("rtt");
    expect(r.unit).toBe("us");
    // printed: latency = 34345 ns → 34.345 µs one-way → 68.69 µs RTT
    expect(r.samples).toEqual([68.69]);
    expect(r.warnings).toEqual([]);
    expect(r.reported).toMatchObject({
      test: "tcp_lat",
      printed: "latency = 34345 ns",
      printedOneWayUs: 34.345,
      mean: 68.69,
      msgRatePerSec: 29116,
      msgSizeBytes: 64,
      port: 15766,
      timeSeconds: 2,
      timeoutSeconds: 5,
      locCpusUsedPct: 66,
      locCpusUserPct: 5,
      locCpuTimeSeconds: 1.320000052,
      locSendBytes: 1863488,
      locRecvMsgs: 29116,
      remCpusUsedPct: 66,
      remRecvMsgs: 29116,
    });
    // qperf's latency is time / (loc_recv_msgs + rem_recv_msgs): 2 s / 58232 = 34.345 µs
    expect(2 / (29116 + 29116) * 1e6).toBeCloseTo(34.345, 2);
  });

  it("auto-scaled -vvs (us, K/sec, MB, thousands commas)", () => {
    const r = qperf.parse(output("tcp_lat.vvs"), defaults());
    expect(r.samples).toEqual([87.8]); // latency = 43.9 us
    expect(r.reported).toMatchObject({
      printedOneWayUs: 43.9,
      msgRatePerSec: 22800, // 22.8 K/sec
      locSendBytes: 1460000, // 1.46 MB: 10³-based
      locSendMsgs: 22771, // "22,771"
      remRecvMsgs: 22771,
    });
    expect(r.reported?.msgSizeBytes).toBeUndefined(); // -vvs does not print the parameters
  });

  it("the plain one-liner people paste", () => {
    const r = qperf.parse(output("tcp_lat.plain"), defaults());
    expect(r.samples).toEqual([38.8]); // 19.4 us × 2
    expect(r.reported).toEqual({ test: "tcp_lat", printed: "latency = 19.4 us", printedOneWayUs: 19.4, mean: 38.8 });
  });

  it("milliseconds, MiB with the exact byte count, GB and sec", () => {
    const r = qperf.parse(output("tcp_lat.16M.vv"), defaults({ messageSize: 16 * 1024 * 1024, duration: 2 }));
    expect(r.samples).toEqual([17700]); // 8.85 ms one-way → 17 700 µs RTT
    expect(r.reported).toMatchObject({
      msgSizeBytes: 16777216, // "16 MiB (16,777,216)"
      port: 15766, // "15,766 "
      locCpuTimeSeconds: 2.66, // "2.66 sec"
      locSendBytes: 1.9e9, // "1.9 GB"
      msgRatePerSec: 113,
    });
    expect(r.warnings).toEqual([]);
  });

  it("UDP, both styles", () => {
    expect(qperf.parse(output("udp_lat.vv-uu"), defaults({ test: "udp_lat", duration: 2 })).samples).toEqual([20.016]); // 10008 ns
    const vvs = qperf.parse(output("udp_lat.vvs"), defaults({ test: "udp_lat" }));
    expect(vvs.samples).toEqual([21.4]); // 10.7 us
    expect(vvs.reported?.locSendBytes).toBe(6e6); // "6 MB"
  });

  it("warns when qperf used other parameters than asked", () => {
    const r = qperf.parse(output("tcp_lat.vv-uu"), defaults({ messageSize: 128, duration: 5 }));
    expect(r.warnings).toContain("qperf used 64-byte messages, not the 128 asked for");
    expect(r.warnings).toContain("qperf ran for 2 s, not the 5 s asked for");
  });
});

describe("qperf bandwidth (this machine, 0.4.11)", () => {
  it("-uu: bytes/sec → Mbit/s", () => {
    const r = qperf.parse(output("tcp_bw.vv-uu"), defaults({ test: "tcp_bw", duration: 2 }));
    expect(r.metric).toBe("throughput");
    expect(r.unit).toBe("Mbit/s");
    expect(r.samples).toEqual([364.726784]); // 45590848 bytes/sec × 8 / 10⁶
    expect(r.reported).toMatchObject({
      mean: 364.726784,
      printed: "bw = 45590848 bytes/sec",
      sendCostSecPerGB: 41.215025877, // 41215025877 ns/GB
      sendBytes: 91228864,
      recvMsgs: 1424714,
      sendCpusUsedPct: 188,
      recvCpusIntrPct: 4.5,
    });
    expect(r.warnings).toEqual([]);
  });

  it("MB/sec and 'million' counts (-vvs)", () => {
    const r = qperf.parse(output("tcp_bw.vvs"), defaults({ test: "tcp_bw" }));
    expect(r.samples).toEqual([371.2]); // 46.4 MB/sec = 46.4e6 × 8 bit/s
    expect(r.reported).toMatchObject({ sendMsgs: 1.45e6, sendBytes: 92.8e6, msgRatePerSec: 725000 });
  });

  it("GB/sec, KiB, ms/GB", () => {
    const r = qperf.parse(output("tcp_bw.64K.vv"), defaults({ test: "tcp_bw", messageSize: 65536, duration: 2 }));
    expect(r.samples).toEqual([18480]); // 2.31 GB/sec
    expect(r.reported).toMatchObject({ msgSizeBytes: 65536, sendCostSecPerGB: 0.753, sendCpusUserPct: 24.5, sendBytes: 4.62e9 });
    expect(r.warnings).toEqual([]);
  });

  it("bits per second (-ub)", () => {
    expect(qperf.parse(output("tcp_bw.ub"), defaults({ test: "tcp_bw" })).samples).toEqual([16500]); // 16.5 Gb/sec
  });
});

describe("qperf: several tests in one output", () => {
  it("reads the asked-for test and says it skipped the others", () => {
    const r = qperf.parse(output("multi"), defaults({ test: "udp_lat" }));
    expect(r.metric).toBe("rtt");
    expect(r.samples).toEqual([31.6]); // udp_lat: latency = 15.8 us
    expect(r.warnings).toEqual(["qperf ran 3 tests (tcp_bw, tcp_lat, udp_lat); read udp_lat only"]);
    expect(qperf.parse(output("multi"), defaults({ test: "tcp_bw" })).samples).toEqual([18160]); // 2.27 GB/sec
  });

  it("a capture without the asked-for test: reads what is there, with a warning", () => {
    const r = qperf.parse(output("tcp_bw.ub"), defaults()); // `latlab parse` passes the default tcp_lat
    expect(r.metric).toBe("throughput");
    expect(r.warnings[0]).toBe("expected qperf test tcp_lat but the output has tcp_bw; read tcp_bw");
  });
});

describe("qperf other sources (public output)", () => {
  it("-v with ms latencies, sec/GB costs and a udp_bw block that has send_bw/recv_bw instead of bw", () => {
    const text = output("four-tests-v-ms.public");
    const lat = qperf.parse(text, defaults({ test: "udp_lat" }));
    expect(lat.samples).toEqual([14600]); // 7.3 ms one-way
    expect(lat.reported).toMatchObject({ msgRatePerSec: 137, locCpusUsedPct: 10, remCpusUsedPct: 28.9 });
    expect(qperf.parse(text, defaults({ test: "tcp_lat" })).samples).toEqual([14780]); // 7.39 ms
    const bw = qperf.parse(text, defaults({ test: "tcp_bw" }));
    expect(bw.samples).toEqual([33.52]); // 4.19 MB/sec
    expect(bw.reported).toMatchObject({ sendCostSecPerGB: 244, msgRatePerSec: 63.7 });
  });

  it("-vvs between two Azure VMs (no trailing spaces after counts)", () => {
    const text = output("azure-vms-vvs.public");
    const r = qperf.parse(text, defaults());
    expect(r.samples).toEqual([56.6]); // 28.3 us
    expect(r.reported).toMatchObject({ locSendMsgs: 176566, locSendBytes: 177000, msgRatePerSec: 35300 });
    expect(qperf.parse(text, defaults({ test: "tcp_bw" })).samples).toEqual([11920]); // 1.49 GB/sec
  });

  it("survives lost indentation and carriage returns (a copy from a terminal)", () => {
    const r = parseQperf({ stdout: "tcp_lat:\r\nlatency = 1,234 us\r\nmsg_rate = 405 /sec\r\n" });
    expect(r.samples).toEqual([2468]);
    expect(r.reported?.msgRatePerSec).toBe(405);
  });
});

describe("qperf errors", () => {
  it("no server: qperf's text, after its 5 s wait", () => {
    const e = expectToolError(() => qperf.parse(output("no-server", 1), defaults()), "qperf");
    expect(e.message).toMatch(/^qperf: 127\.0\.0\.1: failed to connect \(no connection to the qperf server's listen port/);
  });

  it("data port taken on the server", () => {
    const e = expectToolError(() => qperf.parse(output("data-port-taken", 1), defaults()));
    expect(e.message).toContain("server: unable to make TCP socket");
    expect(e.message).toContain("data port (-ip)");
  });

  it("data port taken, message cut off after 'server:'", () => {
    const e = expectToolError(() => qperf.parse(output("data-port-taken.truncated", 1), defaults()));
    expect(e.message).toContain("server: (the rest of qperf's message was lost)");
  });

  it("a failed UDP test that exits 0: latency 0 ns with send errors", () => {
    const e = expectToolError(() => qperf.parse(output("udp-msg-too-big"), defaults({ test: "udp_lat" })));
    expect(e.message).toBe(
      "qperf: udp_lat measured nothing: latency = 0 ns (locSendErrors=2930830: nothing came back; a UDP message must fit a datagram, ≤ 65507 bytes)",
    );
  });

  it("bad test name", () => {
    const e = expectToolError(() => qperf.parse(output("bad-test", 1), defaults()));
    expect(e.message).toBe("qperf: foo_lat: bad test; try: qperf --help tests");
  });

  it("empty output, a header without results, a block without its latency line", () => {
    expect(expectToolError(() => parseQperf({ stdout: "" })).message).toContain("output is empty");
    expect(expectToolError(() => parseQperf({ stdout: "tcp_lat:\n", exitCode: 1 })).message).toContain("but no results; exit code 1");
    expect(expectToolError(() => parseQperf({ stdout: "tcp_lat:\n    msg_rate = 5 /sec\n" })).message).toContain('no "latency =" line');
    expect(expectToolError(() => parseQperf({ stdout: "tcp_lat:\n    latency = 5 MB/sec\n" })).message).toMatch(/^qperf: line 2: latency is unreadable: "MB\/sec" is not a unit of time qperf prints: "latency = 5 MB\/sec"$/);
  });

  it("keeps results but warns on a non-zero exit, or a message next to results", () => {
    const r = qperf.parse(output("tcp_lat.plain", 3), defaults());
    expect(r.warnings).toContain("qperf exited with code 3 although it printed results");
    const mixed = parseQperf({ stdout: "tcp_lat:\n    latency = 10 us\n", stderr: "server: something odd\n" });
    expect(mixed.samples).toEqual([20]);
    expect(mixed.warnings).toContain("qperf: server: something odd");
  });

  it("keeps a value in an unknown unit as text, with a warning", () => {
    const r = parseQperf({ stdout: "tcp_lat:\n    latency = 10 us\n    loc_widgets = 3 furlongs\n" });
    expect(r.reported?.locWidgets).toBe("3 furlongs");
    expect(r.warnings[0]).toContain("loc_widgets = 3 furlongs");
  });
});

describe("qperf helpers", () => {
  it("numbers with thousands separators", () => {
    expect(qperfNumber("1,234")).toBe(1234);
    expect(qperfNumber("1,234,567.5")).toBe(1234567.5);
    expect(qperfNumber("15,766")).toBe(15766);
    expect(qperfNumber("abc")).toBeNaN();
  });

  it("unit scaling is 10³-based, with KiB/MiB exact", () => {
    const one = (rhs: string) => normaliseEntry(parseQperfOutput(`x_lat:\n    v = ${rhs}\n`).blocks[0]!.entries[0]!);
    expect(one("1.5 KB")).toEqual({ kind: "size", value: 1500 });
    expect(one("2 MB/sec")).toEqual({ kind: "bandwidth", value: 16 }); // Mbit/s
    expect(one("1,000 Mb/sec")).toEqual({ kind: "bandwidth", value: 1000 });
    expect(one("3 KiB (3,072)")).toEqual({ kind: "size", value: 3072 });
    expect(one("1 GiB")).toEqual({ kind: "size", value: 1073741824 });
    expect(one("250 us")).toEqual({ kind: "time", value: 0.00025 });
    expect(one("1,234 sec")).toEqual({ kind: "time", value: 1234 });
    expect(one("2.5 billion")).toEqual({ kind: "count", value: 2.5e9 });
    expect(one("7 widgets")).toBeUndefined();
  });

  it("describe: the one-way figure and the CPU use", () => {
    const r = qperf.parse(output("tcp_lat.vv-uu"), defaults({ duration: 2 }));
    const lines = qperf.describe!(r.reported as Record<string, number | string>, r.samples, r.warnings);
    expect(lines[0]).toContain("one-way mean 34.345 µs");
    expect(lines[1]).toBe("CPU (whole host, % of one core): client 66, server 66");
  });
});

describe("issue 21: qperf 0.4.11 of Debian trixie (the source Ubuntu 24.04 builds)", () => {
  const d = "0.4.11-trixie";
  /** Every capture here wrote only stdout (stderr empty). */
  const out = (name: string, exitCode = 0) => capture("qperf", `${d}/${name}`, { exitCode, stderr: false });

  it("qperf --version", () => {
    expect(parseQperfVersion(fixture("qperf", `${d}/version.txt`))).toBe("0.4.11");
  });

  it("tcp_lat, latlab's command: 18379 ns one-way → 36.758 µs RTT", () => {
    const r = qperf.parse(out("tcp_lat.vv-uu"), defaults({ duration: 2 }));
    expect(r.metric).toBe("rtt");
    expect(r.samples).toEqual([36.758]);
    expect(r.warnings).toEqual([]);
    expect(r.reported).toMatchObject({ printedOneWayUs: 18.379, msgRatePerSec: 54410, locSendMsgs: 54683, locRecvMsgs: 54682, remRecvMsgs: 54682, locCpusUsedPct: 199 });
  });

  it("udp_lat: 13645 ns one-way → 27.29 µs RTT", () => {
    const r = qperf.parse(out("udp_lat.vv-uu"), defaults({ test: "udp_lat", duration: 2 }));
    expect(r.samples).toEqual([27.29]);
    expect(r.reported).toMatchObject({ printedOneWayUs: 13.645, msgRatePerSec: 73286 });
  });

  it("tcp_bw: 14511744 bytes/s → 116.093952 Mbit/s", () => {
    const r = qperf.parse(out("tcp_bw.vv-uu"), defaults({ test: "tcp_bw", duration: 2 }));
    expect(r.metric).toBe("throughput");
    expect(r.samples).toEqual([116.093952]);
    expect(r.reported).toMatchObject({ sendMsgs: 453491, recvMsgs: 453492, sendBytes: 29023424 });
  });

  it("nothing listening: failed to connect, exit 1", () => {
    const e = expectToolError(() => qperf.parse(out("no-server", 1), defaults()), "qperf");
    expect(e.message).toBe(
      "qperf: 127.0.0.1: failed to connect (no connection to the qperf server's listen port (qperf -lp) within qperf's 5 s wait: either no server listened there, or the network to its host was unreachable (qperf says the same for both))",
    );
  });

  it("network unreachable (a link down, routes lost): qperf prints the same line as for no server, so the message does not blame the server alone", () => {
    // What qperf 0.4.11 prints in a namespace with no route to the target (checked by hand: the same line as a refused connection).
    const e = expectToolError(() => qperf.parse({ stdout: "tcp_lat:\n", stderr: "10.1.1.1: failed to connect\n", exitCode: 1, files: {} }, defaults()), "qperf");
    expect(e.message).toContain("the network to its host was unreachable");
    expect(e.message).not.toMatch(/no qperf server answered/);
  });

  it("server killed 1.5 s into a 3 s tcp_lat: qperf's own message, not 'not qperf's output'", () => {
    const e = expectToolError(() => qperf.parse(out("server-killed", 1), defaults({ duration: 3 })), "qperf");
    expect(e.message).toBe(
      "qperf: failed to receive results: server not responding (the other end stopped answering during the test: the qperf server (or its per-test child) died, or the path failed)",
    );
  });
});
