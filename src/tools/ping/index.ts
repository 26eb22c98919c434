import { z } from "zod";
import type { ClientContext, ClientOutput, ClientSpec, ToolModule, ToolResult } from "../types.ts";
import { parsePing, parsePingVersion } from "./parse.ts";

/** iputils refuses intervals under 2 ms for non-root users ("cannot flood"). */
export const PING_MIN_INTERVAL = 0.002;
/** Below 16 bytes the payload cannot hold ping's timestamp and replies carry no `time=`. */
export const PING_MIN_SIZE = 16;
/** 65535 − 20 (IPv4) − 8 (ICMP); larger gives `ping: local error: message too long`. */
export const PING_MAX_SIZE = 65507;
/** Seconds ping waits for a reply (`-W`). */
const WAIT_SECONDS = 2;

export const PingParamsSchema = z
  .object({
    /** Probes to send (`-c`). */
    count: z.number().int().positive().default(20),
    /** Seconds between probes (`-i`). */
    interval: z.number().min(PING_MIN_INTERVAL).default(0.2),
    /** ICMP payload bytes (`-s`). */
    size: z.number().int().min(PING_MIN_SIZE).max(PING_MAX_SIZE).default(56),
  })
  .strict();

export type PingParams = z.infer<typeof PingParamsSchema>;

/** POSIX single-quoting, left off for plain words. */
function sh(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Plain decimal for `-i` (never exponent notation, which ping cannot read). */
function decimal(n: number): string {
  const s = String(n);
  return /e/i.test(s) ? n.toFixed(6).replace(/0+$/, "").replace(/\.$/, "") : s;
}

export const ping: ToolModule<PingParams> & {
  /** Params whose run takes about `seconds`: count = seconds / interval (≥ 1). */
  withDuration(params: PingParams, seconds: number): PingParams;
} = {
  name: "ping",
  description: "iputils ping: ICMP echo round-trip times, one sample per reply",
  params: PingParamsSchema,
  binaries: ["ping"],
  versionCommand: "ping -V",
  parseVersion: parsePingVersion,

  server() {
    return undefined;
  },

  client(ctx: ClientContext, params: PingParams): ClientSpec {
    return {
      command:
        `LC_ALL=C ping -D -n -c ${params.count} -i ${decimal(params.interval)} ` +
        `-W ${WAIT_SECONDS} -s ${params.size} ${sh(ctx.targetAddress)}`,
      timeoutSeconds: Math.ceil((params.count - 1) * params.interval + WAIT_SECONDS + 10),
      files: [],
    };
  },

  parse(output: ClientOutput): ToolResult {
    return parsePing({ stdout: output.stdout, stderr: output.stderr, exitCode: output.exitCode });
  },

  measurementSeconds(params: PingParams): number {
    return params.count * params.interval;
  },

  estimateSeconds(params: PingParams): number {
    return (params.count - 1) * params.interval + 0.5;
  },

  withDuration(params: PingParams, seconds: number): PingParams {
    if (!Number.isFinite(seconds) || seconds <= 0) {
      throw new RangeError(`ping.withDuration: seconds must be a positive number, got ${seconds}`);
    }
    return { ...params, count: Math.max(1, Math.round(seconds / params.interval)) };
  },
};
