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
import { parseSockperf, parseSockperfVersion } from "./parse.ts";

/** sockperf's own limits (3.7: `'-m' Invalid message size: 2 (min: 14)`, max 65507). */
export const SOCKPERF_MIN_MESSAGE_SIZE = 14;
export const SOCKPERF_MAX_MESSAGE_SIZE = 65507;
/** sockperf's `-t` maximum; it also rejects fractions (`'-t' Invalid duration: 0.5`). */
export const SOCKPERF_MAX_DURATION = 36_000_000;

export const SockperfParamsSchema = z
  .object({
    protocol: z.enum(["tcp", "udp"]).default("tcp").describe("Transport of the ping-pong messages (`--tcp` for TCP)."),
    /** Payload bytes per message. */
    messageSize: z
      .number()
      .int()
      .min(SOCKPERF_MIN_MESSAGE_SIZE)
      .max(SOCKPERF_MAX_MESSAGE_SIZE)
      .default(64)
      .describe("Payload per message (`-m`). Unit: bytes."),
    /** Seconds of measurement (`-t`). sockperf accepts whole seconds only. */
    duration: z
      .number()
      .positive()
      .int({ message: "sockperf -t takes whole seconds (it rejects e.g. 0.5)" })
      .max(SOCKPERF_MAX_DURATION)
      .default(5)
      .describe("Measurement time (`-t`); sockperf takes whole seconds only. Unit: s."),
    /** Messages per second, or "max" (sockperf's default in ping-pong). */
    mps: z.union([z.number().int().positive(), z.literal("max")]).optional().describe('Messages per second (`--mps`), or "max"; unset: sockperf\'s own default ("max" in ping-pong). Unit: messages/s.'),
    /**
     * Ask sockperf to print RTT instead of RTT/2 (true when not given). Parsing normalises to
     * RTT either way. No default filled in: parse() warns that sockperf printed the other mode
     * only when a mode was asked for (a hand capture parsed with the defaults asked nothing).
     */
    fullRtt: z.boolean().optional().describe("Ask sockperf to print RTT instead of RTT/2 (`--full-rtt`), true when not given; the samples are normalised to RTT either way."),
  })
  .strict();

export type SockperfParams = z.infer<typeof SockperfParamsSchema>;

/** ServerSpec plus the transport, so a runner can skip its TCP listen check for UDP. */
export interface SockperfServerSpec extends ServerSpec {
  protocol: "tcp" | "udp";
}

/** Name of the --full-log file for a client run on `port`. */
export function sockperfFullLogPath(workDir: string, port: number): string {
  return `${workDir.replace(/\/+$/, "")}/sockperf-${port}.csv`;
}

/** POSIX single-quoting, left off for plain words (addresses, paths without specials). */
function sh(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Seconds of sockperf's own overhead around `-t`: 400 ms warm-up, cool-down, statistics. */
const OVERHEAD_SECONDS = 1;

/** ToolModule<SockperfParams>, with a narrower server() and the coming withDuration(). */
export type SockperfTool = Omit<ToolModule<SockperfParams>, "server"> & {
  server(ctx: ServerContext, params: SockperfParams): SockperfServerSpec;
  /** Params whose measurement runs about `seconds` (rounded to sockperf's whole seconds, ≥ 1). */
  withDuration(params: SockperfParams, seconds: number): SockperfParams;
};

export const sockperf: SockperfTool = {
  name: "sockperf",
  description: "sockperf ping-pong: TCP or UDP request/response round-trip times, one sample per message",
  params: SockperfParamsSchema,
  binaries: ["sockperf"],
  versionCommand: "sockperf --version",
  parseVersion: parseSockperfVersion,

  server(ctx: ServerContext, params: SockperfParams): SockperfServerSpec {
    const tcp = params.protocol === "tcp" ? " --tcp" : "";
    return {
      command: `sockperf sr${tcp} -i ${sh(ctx.bindAddress)} -p ${ctx.port}`,
      port: ctx.port,
      protocol: params.protocol,
    };
  },

  client(ctx: ClientContext, params: SockperfParams): ClientSpec {
    const log = sockperfFullLogPath(ctx.workDir, ctx.port);
    const parts = ["sockperf", "ping-pong"];
    if (params.protocol === "tcp") parts.push("--tcp");
    parts.push("-i", sh(ctx.targetAddress), "-p", String(ctx.port));
    parts.push("-m", String(params.messageSize), "-t", String(params.duration));
    if (params.mps !== undefined) parts.push("--mps", String(params.mps));
    if (params.fullRtt !== false) parts.push("--full-rtt");
    parts.push("--full-log", sh(log));
    return {
      command: parts.join(" "),
      timeoutSeconds: Math.ceil((params.duration + OVERHEAD_SECONDS) * 1.5) + 20,
      files: [log],
    };
  },

  parse(output: ClientOutput, params: SockperfParams): ToolResult {
    return parseSockperf(
      {
        stdout: output.stdout,
        stderr: output.stderr,
        exitCode: output.exitCode,
        fullLog: pickFullLog(output.files),
      },
      params.fullRtt === undefined ? {} : { fullRtt: params.fullRtt },
    );
  },

  measurementSeconds(params: SockperfParams): number {
    return params.duration;
  },

  estimateSeconds(params: SockperfParams): number {
    return params.duration + OVERHEAD_SECONDS;
  },

  withDuration(params: SockperfParams, seconds: number): SockperfParams {
    if (!Number.isFinite(seconds) || seconds <= 0) {
      throw new RangeError(`sockperf.withDuration: seconds must be a positive number, got ${seconds}`);
    }
    const duration = Math.min(SOCKPERF_MAX_DURATION, Math.max(1, Math.round(seconds)));
    return { ...params, duration };
  },
};

/** The runner keys files by the absolute path from ClientSpec.files; parse() only sees params. */
function pickFullLog(files: Record<string, string>): string | undefined {
  const entries = Object.entries(files);
  const named = entries.find(([path]) => /(?:^|\/)sockperf-\d+\.csv$/.test(path));
  if (named) return named[1];
  return entries.length === 1 ? entries[0]![1] : undefined;
}
