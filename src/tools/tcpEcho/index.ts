import { readFileSync } from "node:fs";
import { z } from "zod";
import { describeChange, windowedMeans } from "../../results/windows.ts";
import type { ClientContext, ClientOutput, ClientSpec, ServerContext, ServerSpec, ToolModule, ToolResult } from "../types.ts";
import { parseTcpEcho, parseTcpEchoVersion, TCP_ECHO_HEADER } from "./parse.ts";

/** The script latlab ships to both hosts (server and client mode); the module's only I/O. */
export const TCP_ECHO_SCRIPT_NAME = "latlab_echo.py";
export const TCP_ECHO_SCRIPT = readFileSync(new URL("./latlab_echo.py", import.meta.url), "utf8");
/** The script's own VERSION (bumped when its CSV or behaviour changes). */
export const TCP_ECHO_SCRIPT_VERSION = /^VERSION = "([^"]+)"/m.exec(TCP_ECHO_SCRIPT)?.[1] ?? "unknown";

export const TCP_ECHO_MAX_PAYLOAD = 65000;
/** A week; seed 000 ran ~11 h (39 600 s). */
export const TCP_ECHO_MAX_DURATION = 7 * 24 * 3600;
/** How often the runner copies new lines of a detached client's CSV. */
export const TCP_ECHO_POLL_SECONDS = 5;
/** Seconds the start command waits for the client to write its CSV header. */
const START_WAIT_SECONDS = 10;

export const TcpEchoParamsSchema = z
  .object({
    /** Seconds between probe slots (fixed schedule on the monotonic clock). */
    interval: z.number().min(0.001).max(3600).default(1).describe("Time between probe slots, on a fixed schedule of the monotonic clock. Unit: s."),
    /** Bytes per probe (seed 000: 64). */
    payload: z.number().int().min(1).max(TCP_ECHO_MAX_PAYLOAD).default(64).describe("Size of one probe (seed 000: 64). Unit: bytes."),
    /** Seconds the client runs (seed 000: ~11 h = 39 600). */
    duration: z.number().positive().max(TCP_ECHO_MAX_DURATION).default(60).describe("How long the client runs (seed 000: about 11 h = 39600). Unit: s."),
    /** Seconds one TCP connection attempt may take. */
    connectTimeout: z.number().min(0.1).max(120).default(5).describe("Time one TCP connection attempt may take. Unit: s."),
    /** No complete echo within this many seconds counts as a break (then: reconnect). */
    replyTimeout: z.number().min(0.01).max(600).default(10).describe("No complete echo within this time counts as a break; the client then reconnects. Unit: s."),
  })
  .strict();

export type TcpEchoParams = z.infer<typeof TcpEchoParamsSchema>;

/** POSIX single-quoting, left off for plain words. */
function sh(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Plain decimal (never exponent notation, which argparse would read but a human may not). */
function decimal(n: number): string {
  const s = String(n);
  return /e/i.test(s) ? n.toFixed(9).replace(/0+$/, "").replace(/\.$/, "") : s;
}

const join = (dir: string, name: string) => `${dir.replace(/\/+$/, "")}/${name}`;

/** The client's files for a run on `port` under `workDir`. */
export function tcpEchoFiles(workDir: string, port: number) {
  const base = join(workDir, `tcp-echo-${port}`);
  return { csv: `${base}.csv`, pid: `${base}.pid`, log: `${base}.log` };
}

export const tcpEchoScriptPath = (assetsDir: string) => join(assetsDir, TCP_ECHO_SCRIPT_NAME);

/**
 * The script in client mode, started in its own session (setsid), immune to hang-ups (nohup),
 * with no tie to the calling shell (stdin from /dev/null, stdout/stderr to a log), so it
 * outlives the SSH session that started it. The command returns once the script has written
 * its pid file and CSV header (or fails with its log when it did not start).
 */
export function tcpEchoClientCommand(ctx: ClientContext, params: TcpEchoParams): string {
  const f = tcpEchoFiles(ctx.workDir, ctx.port);
  const args = [
    "python3",
    sh(tcpEchoScriptPath(ctx.assetsDir)),
    "client",
    "--host", sh(ctx.targetAddress),
    "--port", String(ctx.port),
    "--interval", decimal(params.interval),
    "--payload", String(params.payload),
    "--duration", decimal(params.duration),
    "--connect-timeout", decimal(params.connectTimeout),
    "--reply-timeout", decimal(params.replyTimeout),
    "--out", sh(f.csv),
    "--pid-file", sh(f.pid),
  ].join(" ");
  const [csv, pid, log] = [sh(f.csv), sh(f.pid), sh(f.log)];
  const polls = START_WAIT_SECONDS * 10;
  return (
    `mkdir -p ${sh(ctx.workDir)} && rm -f ${csv} ${pid} ${log} || exit 1; ` +
    `setsid nohup ${args} > ${log} 2>&1 < /dev/null & ` +
    `i=0; while [ ! -s ${csv} ] && [ ! -s ${log} ] && [ $i -lt ${polls} ]; do sleep 0.1; i=$((i+1)); done; ` +
    `if [ -s ${csv} ]; then echo "latlab_echo client started, pid $(cat ${pid} 2>/dev/null)"; ` +
    `else echo "latlab_echo client did not start:" >&2; cat ${log} >&2; exit 1; fi`
  );
}

export function tcpEchoServerCommand(ctx: ServerContext): string {
  return `python3 ${sh(tcpEchoScriptPath(ctx.assetsDir))} server --bind ${sh(ctx.bindAddress)} --port ${ctx.port}`;
}

/** Seconds past `duration` the client may need: one last echo, a connect, start-up. */
function marginSeconds(params: TcpEchoParams): number {
  return Math.ceil(params.replyTimeout + params.connectTimeout + START_WAIT_SECONDS + 2 * TCP_ECHO_POLL_SECONDS + 30);
}

/** The runner keys files by the absolute path from ClientSpec.files; parse() only sees params. */
function pick(files: Record<string, string>, ext: "csv" | "log"): string | undefined {
  const re = ext === "csv" ? /(?:^|\/)tcp-echo-\d+\.csv$/ : /(?:^|\/)tcp-echo-\d+\.log$/;
  const entries = Object.entries(files);
  const named = entries.find(([path]) => re.test(path));
  if (named) return named[1];
  return ext === "csv" && entries.length === 1 ? entries[0]![1] : undefined;
}

const num = (v: number | string | undefined) => (typeof v === "number" ? v : typeof v === "string" && v !== "" ? Number(v) : undefined);

export const tcpEcho: ToolModule<TcpEchoParams> & {
  withDuration(params: TcpEchoParams, seconds: number): TcpEchoParams;
} = {
  name: "tcp-echo",
  description:
    "TCP echo over ONE long-lived connection: a payload per fixed slot, RTT per probe; records connection breaks, outages and reconnects (runs detached for hours)",
  params: TcpEchoParamsSchema,
  // Seed 000 watched the same 11 hours from three clients: breaks line up in time only then.
  pairsInParallel: true,
  binaries: ["python3"],
  assets: { [TCP_ECHO_SCRIPT_NAME]: TCP_ECHO_SCRIPT },
  versionCommand: "python3 --version",
  parseVersion: (output: string) => parseTcpEchoVersion(output, TCP_ECHO_SCRIPT_VERSION),

  server(ctx: ServerContext): ServerSpec {
    return { command: tcpEchoServerCommand(ctx), port: ctx.port };
  },

  client(ctx: ClientContext, params: TcpEchoParams): ClientSpec {
    const f = tcpEchoFiles(ctx.workDir, ctx.port);
    return {
      command: tcpEchoClientCommand(ctx, params),
      timeoutSeconds: Math.ceil(params.duration) + marginSeconds(params),
      files: [f.csv, f.log],
      detached: { pidFile: f.pid, outputFile: f.csv, pollSeconds: TCP_ECHO_POLL_SECONDS },
    };
  },

  parse(output: ClientOutput): ToolResult {
    // A CSV captured by hand arrives as the output itself (`latlab parse tcp-echo run.csv`).
    const csv = pick(output.files, "csv") ?? (output.stdout.startsWith(TCP_ECHO_HEADER) ? output.stdout : undefined);
    return parseTcpEcho({ csv, log: pick(output.files, "log") ?? output.stderr });
  },

  measurementSeconds(params: TcpEchoParams): number {
    return params.duration;
  },

  estimateSeconds(params: TcpEchoParams): number {
    // Start-up (python, the first connect) and the last poll of the runner.
    return params.duration + 1 + TCP_ECHO_POLL_SECONDS;
  },

  describe(reported, samples): string[] {
    const lines: string[] = [];
    const breaks = num(reported.breaks) ?? 0;
    const probes = num(reported.probes) ?? samples.length;
    if (breaks > 0) {
      lines.push(
        `connection broke ${breaks} time(s): first at ${reported.firstBreakAt}` +
          (breaks > 1 ? `, last at ${reported.lastBreakAt}` : "") +
          `; ${num(reported.reconnects) ?? 0} reconnect(s), ${num(reported.totalOutageMs) ?? 0} ms without a connection, ${num(reported.lost) ?? 0} probe(s) lost`,
      );
    } else {
      lines.push(`one connection throughout, no break (${probes} probes)`);
    }
    const skipped = num(reported.skippedSlots) ?? 0;
    if (skipped) lines.push(`${skipped} slot(s) skipped (an echo took longer than the interval)`);

    // Seed 000's table: mean RTT per 100 probes over the last 500 before the (first) break.
    const before = num(reported.probesBeforeFirstBreak);
    const end = before !== undefined && before <= samples.length ? before : samples.length;
    const { rows, finalChange } = windowedMeans(samples, { last: 500, window: 100, end });
    if (rows.length >= 2 && finalChange !== undefined) {
      lines.push(`mean RTT per 100 probes, last ${rows.length * 100} ${breaks > 0 ? "before the first break" : "of the run"}:`);
      for (const r of rows) lines.push(`  ${r.label}: ${r.mean.toFixed(2)} µs`);
      lines.push(`  change in the final window: ${describeChange(finalChange)}`);
    }
    return lines;
  },

  withDuration(params: TcpEchoParams, seconds: number): TcpEchoParams {
    if (!Number.isFinite(seconds) || seconds <= 0) {
      throw new RangeError(`tcp-echo.withDuration: seconds must be a positive number, got ${seconds}`);
    }
    return { ...params, duration: Math.min(TCP_ECHO_MAX_DURATION, seconds) };
  },
};
