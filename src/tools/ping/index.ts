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
/** Probes sent when the experiment gives no count. */
export const PING_DEFAULT_COUNT = 20;

export const PingParamsSchema = z
  .object({
    /**
     * Probes to send (`-c`), PING_DEFAULT_COUNT when not given. No default filled in, so that
     * withDuration can tell a count the experiment asked for from none.
     */
    count: z
      .number()
      .int()
      .positive()
      .optional()
      .describe("Probes to send (`-c`), 20 when not given. A run duration (--duration, durationByTarget) replaces it with duration ÷ interval, and the results say so. Unit: probes."),
    /** Seconds between probes (`-i`). */
    interval: z.number().min(PING_MIN_INTERVAL).default(0.2).describe("Time between probes (`-i`); iputils refuses less than 2 ms to users other than root. Unit: s."),
    /** ICMP payload bytes (`-s`). */
    size: z.number().int().min(PING_MIN_SIZE).max(PING_MAX_SIZE).default(56).describe("ICMP payload (`-s`); below 16 bytes replies carry no timestamp, above 65507 the packet is too large. Unit: bytes."),
    /**
     * Set by withDuration, not by experiments: the count the experiment asked for when the run's
     * duration replaced it, so that parse() can say so in the results.
     */
    countAsked: z
      .number()
      .int()
      .positive()
      .optional()
      .describe("Set by latlab, not in experiment files: the count the experiment asked for when a run duration (--duration, durationByTarget) replaced it. Unit: probes."),
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

/** The count a run uses. */
const countOf = (params: PingParams) => params.count ?? PING_DEFAULT_COUNT;

export const ping: ToolModule<PingParams> & {
  /**
   * Params whose run takes about `seconds`: count = seconds / interval (≥ 1). Like every tool's
   * own duration, a count the experiment gave is replaced (the run's duration wins); the count
   * asked for is kept in `countAsked` and parse() turns it into a warning.
   */
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
        `LC_ALL=C ping -D -n -c ${countOf(params)} -i ${decimal(params.interval)} ` +
        `-W ${WAIT_SECONDS} -s ${params.size} ${sh(ctx.targetAddress)}`,
      timeoutSeconds: Math.ceil((countOf(params) - 1) * params.interval + WAIT_SECONDS + 10),
      files: [],
    };
  },

  parse(output: ClientOutput, params: PingParams): ToolResult {
    const result = parsePing({ stdout: output.stdout, stderr: output.stderr, exitCode: output.exitCode });
    const count = countOf(params);
    if (params.countAsked === undefined || params.countAsked === count) return result;
    const seconds = Number((count * params.interval).toPrecision(6));
    return {
      ...result,
      reported: { ...result.reported, countAsked: params.countAsked },
      warnings: [
        `count: the experiment asked for ${params.countAsked} probes; the run's duration (--duration or durationByTarget) replaced it with ${count} (${count} × ${params.interval} s = ${seconds} s)`,
        ...result.warnings,
      ],
    };
  },

  measurementSeconds(params: PingParams): number {
    return countOf(params) * params.interval;
  },

  estimateSeconds(params: PingParams): number {
    return (countOf(params) - 1) * params.interval + 0.5;
  },

  withDuration(params: PingParams, seconds: number): PingParams {
    if (!Number.isFinite(seconds) || seconds <= 0) {
      throw new RangeError(`ping.withDuration: seconds must be a positive number, got ${seconds}`);
    }
    const count = Math.max(1, Math.round(seconds / params.interval));
    // The experiment's own count, once replaced, stays recorded through further calls.
    const asked = params.countAsked ?? params.count;
    return asked !== undefined && asked !== count ? { ...params, count, countAsked: asked } : { ...params, count };
  },
};
