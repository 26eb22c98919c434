import type { z } from "zod";
import { sanitizeForTerminal } from "./terminalText.ts";
import type { Metric, Summary, Unit } from "../results/summary.ts";

/**
 * One measurement tool. Every function here is pure: it builds shell commands and parses
 * text. The runner does the I/O (SSH, files, timeouts), so a new tool is one new module
 * registered in tools/registry.ts and nothing else changes.
 */
export interface ToolModule<P = any> {
  /** Name used in experiment files and on the command line (`sockperf`). */
  readonly name: string;
  readonly description: string;
  /** zod schema of the tool's parameters, with defaults; validated at definition time. */
  readonly params: z.ZodType<P>;
  /**
   * Run every pair of one measure at the same time instead of one after another: for
   * long-lived probes whose point is to watch the same hours from several places.
   */
  readonly pairsInParallel?: boolean;
  /**
   * Why the tool's server cannot be told one address to listen on, when it cannot (it then
   * listens on every address of its host, and one server serves every path of a measure).
   */
  readonly serverListensOnAll?: string;
  /** Executables that must exist on every host that runs this tool. */
  readonly binaries: readonly string[];
  /**
   * Files latlab ships to the hosts for this tool (name → content), e.g. a small script. The
   * runner writes them into `assetsDir` (see the contexts) before the tool's first use.
   */
  readonly assets?: Readonly<Record<string, string>>;
  /** Shell command printing the tool's version; its output goes to parseVersion. */
  readonly versionCommand: string;
  parseVersion(output: string): string | undefined;
  /** Server to start on the measured-to host, or undefined for tools that need none (ping). */
  server(ctx: ServerContext, params: P): ServerSpec | undefined;
  client(ctx: ClientContext, params: P): ClientSpec;
  /** Turns what the client produced into normalised samples. Throws ToolOutputError. */
  parse(output: ClientOutput, params: P): ToolResult;
  /** Seconds spent measuring (what --duration sets or scales), without start-up overhead. */
  measurementSeconds(params: P): number;
  /** Seconds one client run is expected to take, overhead included: plan estimates and timeouts. */
  estimateSeconds(params: P): number;
  /**
   * Lines worth printing under the results table for one measurement (connection breaks,
   * the window the kernel granted…), from what parse() reported. Optional.
   */
  describe?(reported: Readonly<Record<string, number | string>>, samples: readonly number[], warnings: readonly string[]): string[];
  /** The same parameters, changed so that one run takes about `seconds`. */
  withDuration(params: P, seconds: number): P;
}

export interface ServerContext {
  /** Address the server binds to (0.0.0.0: the private and the public path both reach it). */
  bindAddress: string;
  port: number;
  /** Scratch directory on the host for this server's files. */
  workDir: string;
  /** Where this tool's assets were written on the host. */
  assetsDir: string;
}

export interface ServerSpec {
  /** Long-running command; the runner starts it detached and kills it afterwards. */
  command: string;
  /** Port the runner waits for before starting clients (TCP listen check). */
  port: number;
}

export interface ClientContext {
  /** Address of the host being measured to. */
  targetAddress: string;
  port: number;
  /** Scratch directory on the client host; files named in ClientSpec.files live here. */
  workDir: string;
  /** Where this tool's assets were written on the host. */
  assetsDir: string;
}

export interface ClientSpec {
  command: string;
  /** Hard limit for the command (for a detached client: for the whole collection). */
  timeoutSeconds: number;
  /** Files (absolute paths on the client host) the runner downloads after the run. */
  files: string[];
  /**
   * For long runs (hours): `command` starts the client in the background and returns at once;
   * the client appends its records to `outputFile` as it goes and writes its pid to `pidFile`.
   * The runner copies new bytes of `outputFile` every `pollSeconds` until the process exits or
   * `timeoutSeconds` pass (then it stops the client), reconnecting if SSH drops, so nothing
   * already written is lost. parse() sees the whole file in `files[outputFile]`.
   */
  detached?: { pidFile: string; outputFile: string; pollSeconds: number };
}

export interface ClientOutput {
  stdout: string;
  stderr: string;
  exitCode: number | null;
  /** Contents of ClientSpec.files, keyed by the same absolute path. */
  files: Record<string, string>;
}

export interface ToolResult {
  metric: Metric;
  unit: Unit;
  /** Every sample, normalised (RTT in µs, or Mbit/s). May be empty when only a summary exists. */
  samples: number[];
  /** The tool's own summary, normalised to the same unit, kept for cross-checking. */
  reported?: Partial<Summary> & Record<string, number | string | undefined>;
  /** Things worth telling the reader (loss, clamped values, a format seen for the first time). */
  warnings: string[];
}

/**
 * The tool ran but its output says it failed, or the output cannot be read. The message is made
 * terminal-safe here (it often quotes the tool's own text; see terminalText.ts), so every
 * parse error can be printed as it is.
 */
export class ToolOutputError extends Error {
  readonly tool: string;

  constructor(tool: string, message: string) {
    super(sanitizeForTerminal(`${tool}: ${message}`));
    this.tool = tool;
    this.name = "ToolOutputError";
  }
}
