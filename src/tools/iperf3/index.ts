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
import { iperf3WindowBytes, parseIperf3, parseIperf3Version } from "./parse.ts";

/** iperf3 3.12's own limits: "test duration too long (maximum = 86400 seconds)". */
export const IPERF3_MAX_DURATION = 86_400;
/** "number of parallel streams too large (maximum = 128)". */
export const IPERF3_MAX_PARALLEL = 128;
/** -O above 60 is "bogus value for --omit" (3.12). */
export const IPERF3_MAX_OMIT = 60;
/** "socket buffer size too large (maximum = 536870912 bytes)". */
export const IPERF3_MAX_WINDOW = 512 * 1024 * 1024;

const WINDOW = /^\d+(?:\.\d+)?[KkMmGg]?$/;
/** iperf3 -b: a rate with an optional K/M/G/T suffix (1000-based) and an optional /burst. */
const BITRATE = /^\d+(?:\.\d+)?[KkMmGgTt]?(?:\/\d+)?$/;

export const Iperf3ParamsSchema = z
  .object({
    /** Seconds of measurement (`-t`); iperf3 truncates fractions, so whole seconds only. */
    duration: z
      .number()
      .int({ message: "iperf3 -t takes whole seconds (it truncates 1.5 to 1)" })
      .min(1)
      .max(IPERF3_MAX_DURATION)
      .default(10)
      .describe("Measurement time (`-t`); iperf3 truncates fractions, so whole seconds only. Unit: s."),
    /**
     * Parallel streams (`-P`, 1 when not given). 3.12 serves them all from one thread (one
     * core). No default filled in: parse() warns about a stream count only when one was asked.
     */
    parallel: z.number().int().min(1).max(IPERF3_MAX_PARALLEL).optional().describe("Parallel streams (`-P`), 1 when not given; iperf3 3.12 serves them all from one thread (one core). Unit: streams."),
    /** Socket buffer / TCP window (`-w`), e.g. "32M", "256K" (1024-based). */
    window: z
      .string()
      .regex(WINDOW, { message: 'window is a size like "32M", "256K" or "65536"' })
      .refine((w) => (iperf3WindowBytes(w) ?? 0) >= 1, { message: "window must be at least 1 byte" })
      .refine((w) => (iperf3WindowBytes(w) ?? 0) <= IPERF3_MAX_WINDOW, { message: "iperf3 rejects a window above 512M" })
      .optional()
      .describe('Socket buffer / TCP window (`-w`), like "32M", "256K" or "65536" (K, M, G are 1024-based), at most 512M; clamped to the host\'s socket-buffer limit, with a warning. Unit: bytes.'),
    protocol: z.enum(["tcp", "udp"]).default("tcp").describe("Transport (`-u` for UDP)."),
    /** Target rate (`-b`), e.g. "100M", "1G", "0" (unlimited). UDP defaults to 1 Mbit/s without it. */
    bitrate: z.string().regex(BITRATE, { message: 'bitrate is a rate like "100M", "2.5G" or "0"' }).optional().describe('Target rate (`-b`), like "100M", "2.5G" or "0" (unlimited); UDP runs at 1 Mbit/s without it. Unit: bit/s.'),
    /** Seconds left out at the start (`-O`): TCP slow start. */
    omit: z.number().int().min(0).max(IPERF3_MAX_OMIT).default(0).describe("Time left out at the start (`-O`): TCP slow start. Unit: s."),
    /** Server sends, client receives (`-R`). */
    reverse: z.boolean().default(false).describe("The server sends and the client receives (`-R`)."),
  })
  .strict();

export type Iperf3Params = z.infer<typeof Iperf3ParamsSchema>;

/** POSIX single-quoting, left off for plain words. */
function sh(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Control connection, parameter exchange, the final results exchange. */
const OVERHEAD_SECONDS = 1;

export type Iperf3Tool = ToolModule<Iperf3Params> & {
  server(ctx: ServerContext, params: Iperf3Params): ServerSpec;
  withDuration(params: Iperf3Params, seconds: number): Iperf3Params;
};

/**
 * iperf3 refuses a -w above the kernel's socket-buffer limit ("socket buffer size not set
 * correctly"), and that limit is global, not per namespace, and ~208 KiB on stock Ubuntu. So the
 * client asks for min(window, limit) and says so on stderr; parse() turns that into a warning.
 */
function windowClamp(bytes: number): string {
  return `w=${bytes}; m=$(cat /proc/sys/net/core/rmem_max /proc/sys/net/core/wmem_max 2>/dev/null | sort -n | head -n 1); if [ -n "$m" ] && [ "$m" -lt "$w" ]; then echo "latlab-iperf3: window $w above host limit $m" >&2; w=$m; fi`;
}
const WINDOW_CLAMPED = /latlab-iperf3: window (\d+) above host limit (\d+)/;

export const iperf3: Iperf3Tool = {
  name: "iperf3",
  description: "iperf3 TCP/UDP throughput: one sample per 1 s interval (all streams summed), goodput in reported",
  params: Iperf3ParamsSchema,
  binaries: ["iperf3"],
  versionCommand: "iperf3 --version",
  parseVersion: parseIperf3Version,

  server(ctx: ServerContext, params: Iperf3Params): ServerSpec {
    // One test at a time: a second client gets "the server is busy running a test".
    // TCP and UDP tests both use the TCP control connection on this port (UDP data too).
    // UDP: -J, so that --get-server-output hands the client the receiver's own report as JSON
    // (server_output_json) rather than as text.
    const json = params.protocol === "udp" ? " -J" : "";
    // -B: the one address the path reaches this host at (the runner's choice; 0.0.0.0 means all).
    const bind = ctx.bindAddress === "0.0.0.0" ? "" : ` -B ${ctx.bindAddress}`;
    return { command: `iperf3 -s${json}${bind} -p ${ctx.port}`, port: ctx.port };
  },

  client(ctx: ClientContext, params: Iperf3Params): ClientSpec {
    const parts = ["iperf3", "-c", sh(ctx.targetAddress), "-p", String(ctx.port), "-t", String(params.duration), "-i", "1"];
    parts.push("-P", String(params.parallel ?? 1));
    if (params.protocol === "udp") parts.push("-u");
    if (params.bitrate !== undefined) parts.push("-b", params.bitrate);
    if (params.window !== undefined) parts.push("-w", '"$w"');
    if (params.omit > 0) parts.push("-O", String(params.omit));
    if (params.reverse) parts.push("-R");
    // UDP: the goodput, loss and jitter per interval are the receiver's; the client sends, so
    // only the server's report has them (with -R the client receives and reports them itself).
    if (params.protocol === "udp" && !params.reverse) parts.push("--get-server-output");
    parts.push("--json");
    return {
      command: params.window === undefined ? parts.join(" ") : `${windowClamp(iperf3WindowBytes(params.window)!)}; ${parts.join(" ")}`,
      timeoutSeconds: Math.ceil((params.omit + params.duration + OVERHEAD_SECONDS) * 1.5) + 20,
      files: [],
    };
  },

  parse(output: ClientOutput, params: Iperf3Params): ToolResult {
    const clamped = WINDOW_CLAMPED.exec(output.stderr);
    const result = parseIperf3(
      { stdout: output.stdout, stderr: output.stderr, exitCode: output.exitCode },
      {
        ...(params.window !== undefined ? { window: params.window } : {}),
        ...(params.window !== undefined && clamped ? { windowApplied: Number(clamped[2]) } : {}),
        ...(params.bitrate !== undefined ? { bitrate: params.bitrate } : {}),
        protocol: params.protocol,
        reverse: params.reverse,
        ...(params.parallel !== undefined ? { parallel: params.parallel } : {}),
      },
    );
    if (!clamped) return result;
    return {
      ...result,
      reported: { ...result.reported, windowAskedBytes: Number(clamped[1]), windowHostMaxBytes: Number(clamped[2]) },
      warnings: [
        `window ${params.window} (${clamped[1]} bytes) is above this host's limit net.core.rmem_max/wmem_max = ${clamped[2]} bytes: ran with -w ${clamped[2]} (raise the limit to measure the asked window)`,
        ...result.warnings,
      ],
    };
  },

  measurementSeconds(params: Iperf3Params): number {
    return params.duration;
  },

  estimateSeconds(params: Iperf3Params): number {
    return params.omit + params.duration + OVERHEAD_SECONDS;
  },

  describe(reported): string[] {
    const lines: string[] = [];
    const n = (k: string) => (typeof reported[k] === "number" ? (reported[k] as number) : undefined);
    const goodput = n("receiverMbps");
    if (goodput !== undefined) {
      const udp = reported.protocol === "UDP";
      const sent = n("senderMbps");
      const parts = [`goodput ${goodput.toFixed(1)} Mbit/s (receiver${udp && sent !== undefined ? `; sent ${sent.toFixed(1)} Mbit/s` : ""})`];
      const retr = n("retransmits");
      if (retr !== undefined) parts.push(`${retr} retransmits`);
      const rtt = n("meanRttUs");
      if (rtt !== undefined) parts.push(`mean RTT ${rtt} µs`);
      const lost = n("lostPercent");
      if (lost !== undefined) {
        const lostPackets = n("lostPackets");
        const packets = n("packets");
        const counts = lostPackets !== undefined && packets !== undefined ? `${lostPackets}/${packets} datagrams lost (${lost}%)` : `${lost}% lost`;
        parts.push(`${counts}, jitter ${n("jitterMs") ?? "?"} ms`);
      }
      lines.push(parts.join(", "));
    }
    const snd = n("sndbufActual");
    const rcv = n("rcvbufActual");
    // requestedWindow is what -w got; when latlab lowered it to the host's limit, what the user
    // asked (windowAsked, windowAskedBytes) comes first.
    const applied = n("requestedWindow");
    const askedBytes = n("windowAskedBytes");
    const asked = typeof reported.windowAsked === "string" ? reported.windowAsked : undefined;
    if (applied !== undefined && (snd !== undefined || rcv !== undefined)) {
      const what =
        askedBytes !== undefined && askedBytes !== applied
          ? `asked ${asked ?? `${askedBytes} bytes`} (${askedBytes} bytes), applied ${applied} bytes (this host's limit)`
          : `asked ${applied} bytes`;
      lines.push(`window: ${what}, granted sndbuf ${snd ?? "?"} / rcvbuf ${rcv ?? "?"} bytes`);
    }
    return lines;
  },

  withDuration(params: Iperf3Params, seconds: number): Iperf3Params {
    if (!Number.isFinite(seconds) || seconds <= 0) {
      throw new RangeError(`iperf3.withDuration: seconds must be a positive number, got ${seconds}`);
    }
    return { ...params, duration: Math.min(IPERF3_MAX_DURATION, Math.max(1, Math.round(seconds))) };
  },
};
