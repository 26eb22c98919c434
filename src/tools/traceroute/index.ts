import { z } from "zod";
import type { ClientContext, ClientOutput, ClientSpec, ToolModule, ToolResult } from "../types.ts";
import { parseNmapVersion, parseTraceroute } from "./parse.ts";

/**
 * nmap has no option to cap the trace: its traceroute stops at a compiled-in TTL of 30
 * (MAX_TTL in traceroute.cc), so there is no `maxHops` parameter.
 */
export const NMAP_MAX_TTL = 30;

export const TracerouteParamsSchema = z
  .object({
    /** TCP port the SYN probes go to (`-p`). 22: the server's sshd is always listening. */
    port: z.number().int().min(1).max(65535).default(22).describe("TCP port the SYN probes go to (`-p`); 22, the server's sshd, is always listening."),
    /**
     * A SYN scan needs raw sockets. "auto": run nmap directly as root, else through `sudo -n`
     * (decided on the host with `id -u`); "always": always `sudo -n`; "never": never sudo.
     */
    sudo: z.enum(["auto", "always", "never"]).default("auto").describe('A SYN scan needs raw sockets. "auto": nmap directly as root, else through `sudo -n` (decided on the host); "always": always `sudo -n`; "never": never sudo.'),
  })
  .strict();

export type TracerouteParams = z.infer<typeof TracerouteParamsSchema>;

/** POSIX single-quoting, left off for plain words (addresses, host names). */
function sh(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The nmap invocation itself: SYN scan of one port, no ping, no DNS, XML on stdout. */
export function nmapTracerouteArgs(target: string, port: number): string {
  return `nmap -Pn -n -sS -p ${port} --traceroute -oX - ${sh(target)}`;
}

/** The shell command for `sudo` mode: root runs nmap as is, anyone else via `sudo -n`. */
export function nmapTracerouteCommand(target: string, port: number, sudo: TracerouteParams["sudo"] = "auto"): string {
  const nmap = nmapTracerouteArgs(target, port);
  if (sudo === "never") return nmap;
  if (sudo === "always") return `sudo -n ${nmap}`;
  return `if [ "$(id -u)" -eq 0 ]; then ${nmap}; else sudo -n ${nmap}; fi`;
}

/**
 * Time spent probing in a typical trace: the SYN scan of one port plus a TTL sweep, about a
 * second on a reachable path. Nothing sets it (there is no duration to choose).
 */
const PROBE_SECONDS = 2;
/** nmap start-up and the port scan around the trace. */
const OVERHEAD_SECONDS = 1;
/**
 * An unreachable target costs the most: a filtered port (~2 s of retries) then probes up to
 * TTL 30 with 1 s timeouts and resends (11 s on the emulated network; more over a WAN).
 */
const TIMEOUT_SECONDS = 120;

export const traceroute: ToolModule<TracerouteParams> & {
  /** Duration does not apply to a traceroute: returns `params` unchanged. */
  withDuration(params: TracerouteParams, seconds: number): TracerouteParams;
} = {
  name: "traceroute",
  description: "nmap TCP traceroute (SYN probes to one port): the number of routed hops to the target",
  params: TracerouteParamsSchema,
  binaries: ["nmap"],
  versionCommand: "nmap --version",
  parseVersion: parseNmapVersion,

  server() {
    return undefined;
  },

  client(ctx: ClientContext, params: TracerouteParams): ClientSpec {
    return {
      command: nmapTracerouteCommand(ctx.targetAddress, params.port, params.sudo),
      timeoutSeconds: TIMEOUT_SECONDS,
      files: [],
    };
  },

  parse(output: ClientOutput): ToolResult {
    return parseTraceroute({ stdout: output.stdout, stderr: output.stderr, exitCode: output.exitCode });
  },

  /** Not settable: a trace lasts as long as the path makes it. This is a typical value. */
  measurementSeconds(): number {
    return PROBE_SECONDS;
  },

  estimateSeconds(): number {
    return PROBE_SECONDS + OVERHEAD_SECONDS;
  },

  describe(reported, _samples, _warnings): string[] {
    const lines: string[] = [];
    const path: string[] = [];
    const last = typeof reported.hops === "number" ? reported.hops : typeof reported.lastAnsweringHop === "number" ? reported.lastAnsweringHop : 0;
    for (let ttl = 1; ttl <= last; ttl++) {
      const address = reported[`hop${ttl}Address`];
      path.push(typeof address === "string" ? address : "*");
    }
    if (path.length) {
      const end = reported.targetReached === "yes" ? "" : " → (target not reached)";
      lines.push(`path: ${path.join(" → ")}${end}`);
    }
    const facts: string[] = [];
    if (reported.portState !== undefined) facts.push(`port ${reported.port ?? "?"} ${reported.portState}`);
    if (reported.probe !== undefined && reported.probe !== `tcp/${reported.port}`) facts.push(`traced with ${reported.probe}`);
    if (typeof reported.hopsSilent === "number" && reported.hopsSilent > 0) facts.push(`${reported.hopsSilent} silent hop${reported.hopsSilent > 1 ? "s" : ""}`);
    if (facts.length) lines.push(facts.join(", "));
    return lines;
  },

  withDuration(params: TracerouteParams, _seconds: number): TracerouteParams {
    return params;
  },
};
