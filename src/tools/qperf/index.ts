import { z } from "zod";
import type {
  ClientContext,
  ClientOutput,
  ClientSpec,
  ServerContext,
  ServerSpec,
  ToolModule,
  ToolResult,
} from "../types.ts";
import { parseQperf, parseQperfVersion, qperfTestKind } from "./parse.ts";

/**
 * qperf's data socket port is `ctx.port + QPERF_DATA_PORT_OFFSET` unless `dataPort` is set.
 * qperf talks on two ports: the listen (control) port `-lp`, and the port the test itself
 * runs on `-ip` (ephemeral by default). Pinning it lets a firewall / Azure NSG open a known
 * port. It cannot be `-lp` itself ("server: unable to make TCP socket"), and `+1` would land
 * on the next measure's server port (the runner gives measure i port BASE_PORT + i).
 * The data port carries TCP for tcp_* tests and UDP for udp_lat.
 */
export const QPERF_DATA_PORT_OFFSET = 1000;
/** The biggest UDP payload (65535 − 8 − 20); above it qperf prints `latency = 0 ns` and exits 0. */
export const QPERF_MAX_UDP_MESSAGE_SIZE = 65507;
/** qperf allocates one buffer of this size per message; anything bigger is surely a typo. */
export const QPERF_MAX_MESSAGE_SIZE = 64 * 1024 * 1024;
export const QPERF_MAX_DURATION = 86_400;

export const QPERF_TESTS = ["tcp_lat", "udp_lat", "tcp_bw"] as const;

export const QperfParamsSchema = z
  .object({
    /** One qperf test per measure: tcp_lat / udp_lat (RTT, µs) or tcp_bw (Mbit/s). */
    test: z.enum(QPERF_TESTS).default("tcp_lat").describe("The one qperf test of this measure: tcp_lat or udp_lat (RTT, µs; qperf prints one-way latency, doubled) or tcp_bw (Mbit/s)."),
    /** Bytes per message (`-m`). For tcp_bw qperf's own default is 64 KiB. */
    messageSize: z.number().int().min(1).max(QPERF_MAX_MESSAGE_SIZE).default(64).describe("Message size (`-m`); for tcp_bw qperf's own default is 64 KiB. Unit: bytes."),
    /** Seconds of measurement (`-t`); qperf takes whole seconds. */
    duration: z
      .number()
      .int({ message: "qperf -t takes whole seconds" })
      .min(1)
      .max(QPERF_MAX_DURATION)
      .default(5)
      .describe("Measurement time (`-t`); qperf takes whole seconds. Unit: s."),
    /** Port of the test's data socket (`-ip`); default the listen port + 1000. */
    dataPort: z.number().int().min(1).max(65535).optional().describe("Port of the test's data socket (`-ip`); unset: the listen port + 1000."),
  })
  .strict()
  .superRefine((p, ctx) => {
    if (p.test === "udp_lat" && p.messageSize > QPERF_MAX_UDP_MESSAGE_SIZE) {
      ctx.addIssue({
        code: "custom",
        path: ["messageSize"],
        message: `udp_lat messages must fit one datagram (≤ ${QPERF_MAX_UDP_MESSAGE_SIZE} bytes); qperf would report 0 ns`,
      });
    }
  });

export type QperfParams = z.infer<typeof QperfParamsSchema>;

/** Port of the data socket for a server/client pair on `port`. */
export function qperfDataPort(port: number, params: Pick<QperfParams, "dataPort">): number {
  const p = params.dataPort ?? port + QPERF_DATA_PORT_OFFSET;
  if (p === port) throw new RangeError(`qperf data port ${p} must differ from the listen port`);
  if (p > 65535) throw new RangeError(`qperf data port ${p} (listen port ${port} + ${QPERF_DATA_PORT_OFFSET}) is above 65535; set dataPort`);
  return p;
}

/** POSIX single-quoting, left off for plain words. */
function sh(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Connecting, the request/parameter exchange and the results exchange: well under 1 s on a LAN. */
const OVERHEAD_SECONDS = 1;
/** qperf keeps retrying a refused connection this long (`--wait_server`, default 5 s). */
const WAIT_SERVER_SECONDS = 5;

export type QperfTool = ToolModule<QperfParams> & {
  server(ctx: ServerContext, params: QperfParams): ServerSpec;
  withDuration(params: QperfParams, seconds: number): QperfParams;
};

export const qperf: QperfTool = {
  name: "qperf",
  description: "qperf tcp_lat / udp_lat (mean RTT, one value per run) or tcp_bw (Mbit/s)",
  params: QperfParamsSchema,
  serverListensOnAll: "qperf's server has no option to bind one address",
  binaries: ["qperf"],
  versionCommand: "qperf --version",
  parseVersion: parseQperfVersion,

  server(ctx: ServerContext): ServerSpec {
    // qperf's server binds every address (no bind option); it forks one child per test and
    // opens the data socket on the port the client asks for (-ip) in that child.
    return { command: `qperf -lp ${ctx.port}`, port: ctx.port };
  },

  client(ctx: ClientContext, params: QperfParams): ClientSpec {
    const dataPort = qperfDataPort(ctx.port, params);
    // -vv: every statistic (message rate, send/recv bytes and messages, CPU use, the
    // parameters used); -uu: unscaled integers (ns, bytes, bytes/sec), no 3-digit rounding.
    const command = [
      "qperf",
      "-lp",
      String(ctx.port),
      "-ip",
      String(dataPort),
      sh(ctx.targetAddress),
      "-t",
      String(params.duration),
      "-m",
      String(params.messageSize),
      "-vv",
      "-uu",
      params.test,
    ].join(" ");
    return {
      command,
      timeoutSeconds: Math.ceil((params.duration + OVERHEAD_SECONDS + WAIT_SERVER_SECONDS) * 1.5) + 20,
      files: [],
    };
  },

  parse(output: ClientOutput, params: QperfParams): ToolResult {
    return parseQperf(
      { stdout: output.stdout, stderr: output.stderr, exitCode: output.exitCode },
      { test: params.test, messageSize: params.messageSize, duration: params.duration },
    );
  },

  measurementSeconds(params: QperfParams): number {
    return params.duration;
  },

  estimateSeconds(params: QperfParams): number {
    return params.duration + OVERHEAD_SECONDS;
  },

  describe(reported): string[] {
    const lines: string[] = [];
    const test = typeof reported.test === "string" ? reported.test : undefined;
    if (test && qperfTestKind(test) === "latency" && typeof reported.printedOneWayUs === "number") {
      lines.push(`qperf printed the one-way mean ${reported.printedOneWayUs} µs; reported as RTT (×2), one value per run`);
    }
    const loc = reported.locCpusUsedPct ?? reported.sendCpusUsedPct;
    const rem = reported.remCpusUsedPct ?? reported.recvCpusUsedPct;
    if (typeof loc === "number" || typeof rem === "number") {
      lines.push(`CPU (whole host, % of one core): client ${loc ?? "?"}, server ${rem ?? "?"}`);
    }
    return lines;
  },

  withDuration(params: QperfParams, seconds: number): QperfParams {
    if (!Number.isFinite(seconds) || seconds <= 0) {
      throw new RangeError(`qperf.withDuration: seconds must be a positive number, got ${seconds}`);
    }
    return { ...params, duration: Math.min(QPERF_MAX_DURATION, Math.max(1, Math.round(seconds))) };
  },
};
