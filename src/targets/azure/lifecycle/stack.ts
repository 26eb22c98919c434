import { mkdir } from "node:fs/promises";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import type { PulumiFn } from "@pulumi/pulumi/automation/index.js";
import { sessionCommand } from "./pulumiSession.ts";
import { displayUrl } from "./redact.ts";
import { checkPulumiVersion, compatiblePulumiVersion, PULUMI_CLI_VERSION, PulumiVersionError, versionCheckOff } from "./pulumiVersion.ts";

/**
 * The ONE seam between latlab and the Pulumi Automation API. Everything above it (the Azure
 * target's deploy/teardown flow, `latlab destroy`) talks to a StackDriver and is tested against
 * a fake; the real driver below is kept thin because it cannot run without the Pulumi CLI and
 * an Azure account.
 */

/** An inline Pulumi program: registers resources, resolves to the stack outputs. */
export type PulumiProgram = () => Promise<unknown>;

export interface StackOperationOptions {
  /** Raw output of the operation as it arrives (chunks, not necessarily whole lines). */
  onOutput: (chunk: string) => void;
  /** Aborts the operation (the Pulumi CLI gets SIGINT and cancels gracefully). */
  signal?: AbortSignal;
}

export interface StackDriver {
  readonly stackName: string;
  /** Version of the Pulumi CLI that drives the stack (recorded in results). */
  readonly cliVersion?: string;
  /** Creates/updates the stack's resources; rejects on failure or abort. */
  up(options: StackOperationOptions): Promise<void>;
  /** The stack's outputs, plain values (secrets unwrapped). */
  outputs(): Promise<Record<string, unknown>>;
  /**
   * Reads every resource of the stack back from the cloud and updates the state (`pulumi refresh`):
   * what was deleted behind Pulumi's back leaves the state, so destroy does not trip over it.
   */
  refresh(options: StackOperationOptions): Promise<void>;
  /** Cancels the stack's update in progress (`pulumi cancel`); rejects when none is. Not for file backends (their lock is a file). */
  cancel(): Promise<void>;
  /** Deletes every resource of the stack; rejects when anything is left. */
  destroy(options: StackOperationOptions): Promise<void>;
  /** Removes the (empty) stack from the backend. */
  remove(): Promise<void>;
  /** The stack's tags (`pulumi stack tag ls`): what a run recorded in its stack for a later `latlab destroy` (RunStackTags). */
  tags?(): Promise<Record<string, string>>;
}

export interface StackOpenOptions {
  runId: string;
  projectName: string;
  stackName: string;
  /** Needed for up(); destroy() and remove() work from the stack's state alone. */
  program?: PulumiProgram;
  /** `file://<dir>` (state in `<dir>/.pulumi/`), or any Pulumi backend URL. */
  backendUrl: string;
  /** Encrypts the stack's secrets (PULUMI_CONFIG_PASSPHRASE). */
  passphrase: string;
  /** Stack config, e.g. `{ "azure-native:location": "uksouth" }`. */
  config: Record<string, string>;
  /**
   * The Pulumi workspace (Pulumi.yaml, Pulumi.<stack>.yaml): a fixed folder in the run's state
   * folder, so destroy and resume see the settings the deploy had (default: a temp folder per open).
   */
  workDir?: string;
  /** The Pulumi CLI version the stack was made with: the CLI used must have its major.minor (default PULUMI_CLI_VERSION). */
  pulumiVersion?: string;
  /**
   * Extra environment of the Pulumi CLI and so of the engine and its plugins (a rehearsal puts
   * the emulator's provider plugin first on PATH and names its socket).
   */
  env?: Record<string, string>;
  /**
   * Tags set on the stack once it is open (`pulumi stack tag set`, one each). A DIY backend writes
   * them at once, beside the stack (`<stack>.pulumi-tags`: pkg/backend/diy/stack_tags.go @
   * v3.259.0), not with the next checkpoint: they survive a runner killed in the middle of `up`.
   * Names: letters, digits, `-_.:`, at most 40; values at most 256 characters (pkg/util/validation/stack.go).
   */
  tags?: Record<string, string>;
  /** Open the stack only if it exists (`latlab destroy` from the backend): a missing one is a StackNotFoundError, never created. */
  existing?: boolean;
}

export interface StackFactory {
  /** Creates the stack, or selects it when it exists, and applies the config. */
  open(options: StackOpenOptions): Promise<StackDriver>;
}

export const PROJECT_NAME = "latlab";

/** A Pulumi stack name for a run id (letters, digits, `-`, `_`, `.`). */
export const stackNameFor = (runId: string) => `latlab-${runId.replace(/[^A-Za-z0-9_.-]/g, "-")}`;

// ---------------------------------------------------------------------------------------------
// Errors

export class PulumiCliMissingError extends Error {
  constructor(detail: string) {
    super(pulumiCliMissingMessage(detail));
    this.name = "PulumiCliMissingError";
  }
}

/** What to tell someone whose Pulumi CLI cannot be found or used. */
export function pulumiCliMissingMessage(detail: string): string {
  const why = /ENOENT/.test(detail) ? "the Pulumi CLI (`pulumi`) was not found on PATH" : `the Pulumi CLI could not be used: ${firstLine(detail)}`;
  return (
    `azure target: ${why}. The Azure target drives Pulumi through its Automation API, which needs the CLI: ` +
    "install the Pulumi CLI (see pulumi.com/docs/install, e.g. `curl -fsSL https://get.pulumi.com | sh`) " +
    "or pass --install-pulumi to let latlab install it with PulumiCommand.install() (into ~/.pulumi/versions/)."
  );
}

const firstLine = (s: string) =>
  s
    .split("\n")
    .map((l) => l.trim())
    .find((l) => l.length > 0 && !/^code:/.test(l)) ?? s.trim();

/**
 * A Pulumi CommandError's message is "code: N\n stdout: …\n stderr: …\n err?: …": keep the end
 * of stderr (where the reason is), or of stdout when stderr is empty.
 */
export function summarizeCommandError(error: unknown, maxLines = 15): string {
  const message = error instanceof Error ? error.message : String(error);
  const m = /\n stdout: ([\s\S]*?)\n stderr: ([\s\S]*?)\n err\?: ([\s\S]*)$/.exec(message);
  if (!m) return message.trim();
  const [, stdout = "", stderr = "", err = ""] = m;
  // With output streamed, the Automation API puts the whole output after "Command failed…" in stderr.
  const diagnosed = diagnosticErrors(`${stdout}\n${stderr}`);
  if (diagnosed.length) return diagnosed.join("\n");
  const pick = stderr.trim() || err.trim() || stdout.trim();
  const lines = pick.split("\n").map((l) => l.trimEnd()).filter((l) => l.trim().length > 0);
  const code = /^code: (-?\d+)/.exec(message)?.[1];
  return `${lines.slice(-maxLines).join("\n")}${code !== undefined ? ` (exit code ${code})` : ""}`;
}

/**
 * The errors of Pulumi's "Diagnostics:" section, one line per resource that failed
 * ("<type> <name>: <error>"), without the stack's own "update failed" and the warnings: what a
 * person needs from a failed `pulumi up`, said once.
 */
export function diagnosticErrors(output: string): string[] {
  const start = output.lastIndexOf("\nDiagnostics:\n");
  if (start < 0) return [];
  const lines = output.slice(start + 14).split("\n");
  const out: string[] = [];
  let resource = "";
  for (const line of lines) {
    if (/^\S/.test(line)) break; // the next section (Resources:, Outputs:…)
    const header = /^ {2}(\S+) \((.*)\):$/.exec(line);
    if (header) {
      resource = header[1] === "pulumi:pulumi:Stack" ? "" : `${header[1]} ${header[2]}`;
      continue;
    }
    const error = /^ {4}error: (.*)$/.exec(line);
    if (error && resource) out.push(`${resource}: ${error[1]}`);
    else if (/^ {4}/.test(line) && !/^ {4}(warning|error):/.test(line) && out.length && resource) out[out.length - 1] += ` ${line.trim()}`;
  }
  // A provider's init failure reads "1 error occurred: * <reason>": keep the reason.
  return out.map((e) => e.replace(/: \d+ errors? occurred: \* /, ": ").replace(/ \* /g, "; "));
}

/** `existing` was asked for and the backend holds no such stack. */
export class StackNotFoundError extends Error {
  constructor(stackName: string, backendUrl: string, cause: unknown) {
    super(`the Pulumi backend ${displayUrl(backendUrl)} holds no stack ${stackName}: ${summarizeCommandError(cause)}`, { cause });
    this.name = "StackNotFoundError";
  }
}

export class StackOperationError extends Error {
  constructor(operation: string, stackName: string, cause: unknown) {
    super(`pulumi ${operation} of stack ${stackName} failed: ${summarizeCommandError(cause)}`, { cause });
    this.name = "StackOperationError";
  }
}

// ---------------------------------------------------------------------------------------------
// The real implementation, over @pulumi/pulumi/automation (needs the Pulumi CLI)

type Automation = typeof import("@pulumi/pulumi/automation/index.js");
type PulumiCommandT = Awaited<ReturnType<Automation["PulumiCommand"]["get"]>>;

export interface PulumiStackFactoryOptions {
  /** May latlab install the Pulumi CLI when it is missing or another version (`--install-pulumi`)? Default false. */
  installPulumi?: boolean;
  /**
   * Where to look for a CLI installed by PulumiCommand.install(). Default
   * `~/.pulumi/versions/<the version wanted>`, where install() puts it.
   */
  installRoot?: string;
  /** Look on PATH first (default true; tests turn it off to be independent of the machine). */
  searchPath?: boolean;
  log?: (message: string) => void;
  /** Environment read for the version check's override (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** The Automation API's PulumiCommand (tests pass a fake). */
  pulumiCommand?: Pick<Automation["PulumiCommand"], "get" | "install">;
}

// Plain Node ESM refuses directory imports of this CommonJS package: name the file.
const loadAutomation = (): Promise<Automation> => import("@pulumi/pulumi/automation/index.js");

/**
 * Finds a Pulumi CLI of the version wanted (PATH, then latlab's install root), or installs
 * exactly that version when allowed. A CLI of another major.minor is refused with how to get the
 * right one, unless LATLAB_PULUMI_VERSION_CHECK=off.
 */
export async function locatePulumiCli(options: PulumiStackFactoryOptions = {}, wanted: string = PULUMI_CLI_VERSION): Promise<PulumiCommandT> {
  const PulumiCommand = options.pulumiCommand ?? (await loadAutomation()).PulumiCommand;
  const env = options.env ?? process.env;
  const root = options.installRoot ?? join(homedir(), ".pulumi", "versions", wanted);
  const failures: string[] = [];
  let mismatch: PulumiVersionError | undefined;
  const candidates: [string, () => Promise<PulumiCommandT>][] = [];
  if (options.searchPath ?? true) candidates.push(["PATH", () => PulumiCommand.get()]);
  candidates.push([root, () => PulumiCommand.get({ root })]);
  for (const [where, get] of candidates) {
    let cli: PulumiCommandT;
    try {
      cli = await get();
    } catch (e) {
      failures.push((e as Error).message);
      continue;
    }
    try {
      checkPulumiVersion(cli.version?.toString(), wanted, where === "PATH" ? `${cli.command} (on PATH)` : cli.command, env);
      return cli;
    } catch (e) {
      mismatch ??= e as PulumiVersionError;
    }
  }
  if (!options.installPulumi) throw mismatch ?? new PulumiCliMissingError(failures[0] ?? "not found");
  options.log?.(`azure: installing the Pulumi CLI v${wanted} into ${root} (PulumiCommand.install())…`);
  let installed: PulumiCommandT;
  try {
    const { SemVer } = await import("semver");
    installed = await PulumiCommand.install({ root, version: new SemVer(wanted) });
  } catch (e) {
    throw new Error(`azure target: installing the Pulumi CLI v${wanted} into ${root} failed: ${summarizeCommandError(e)}`, { cause: e });
  }
  // install() returns what it finds in root, which may be an older install of another version.
  const got = installed.version?.toString();
  if (!versionCheckOff(env) && (got === undefined || !compatiblePulumiVersion(got, wanted))) {
    throw new PulumiVersionError(`azure target: ${root} holds Pulumi CLI v${got ?? "?"} after installing v${wanted}: remove that folder and try again`);
  }
  return installed;
}

/**
 * The CLI `cli` started in a session of its own (pulumiSession.ts): the terminal's Ctrl-C reaches
 * latlab only, and the one SIGINT Pulumi gets is the cancel latlab forwards. Without setsid (not
 * Linux) the CLI is used as it is, and that is said.
 */
export async function inOwnSession(cli: PulumiCommandT, options: PulumiStackFactoryOptions = {}): Promise<PulumiCommandT> {
  const wrapper = sessionCommand(cli.command, options.env ?? process.env);
  if (!wrapper) {
    options.log?.(
      "azure: setsid (util-linux) not found: the Pulumi CLI shares the terminal's process group, so a Ctrl-C reaches it directly as well as through latlab, and two make it abandon resources; stop latlab with `kill -INT <its pid>` instead",
    );
    return cli;
  }
  const PulumiCommand = options.pulumiCommand ?? (await loadAutomation()).PulumiCommand;
  // `pulumi version` once more, through the wrapper: the version was checked on the real CLI already.
  return PulumiCommand.get({ root: wrapper.root, skipVersionCheck: true });
}

/** The real StackFactory: a LocalWorkspace with an inline program per run. */
export function createPulumiStackFactory(options: PulumiStackFactoryOptions = {}): StackFactory {
  // One CLI per version wanted, located once: a teardown's open() then starts no `pulumi version`
  // of its own, which a Ctrl-C in the terminal (same process group as latlab) could kill.
  const located = new Map<string, Promise<PulumiCommandT>>();
  const cliFor = (version: string) => {
    let cli = located.get(version);
    if (!cli) {
      cli = locatePulumiCli(options, version).then((c) => inOwnSession(c, options));
      located.set(version, cli);
      cli.catch(() => located.delete(version)); // a failure is not kept: the next open() tries again
    }
    return cli;
  };
  return {
    async open(o) {
      const pulumiCommand = await cliFor(o.pulumiVersion ?? PULUMI_CLI_VERSION);
      const { LocalWorkspace } = await loadAutomation();
      const program = (o.program ?? (async () => ({}))) as PulumiFn;
      // LocalWorkspace needs the folder to exist; without one it makes /tmp/automation-XXXX and never removes it.
      if (o.workDir) await mkdir(o.workDir, { recursive: true, mode: 0o700 });
      let stack;
      const args = { stackName: o.stackName, projectName: o.projectName, program };
      const workspace = {
        pulumiCommand,
        ...(o.workDir ? { workDir: o.workDir } : {}),
        projectSettings: { name: o.projectName, runtime: "nodejs" as const, backend: { url: o.backendUrl } },
        envVars: { PULUMI_CONFIG_PASSPHRASE: o.passphrase, PULUMI_SKIP_UPDATE_CHECK: "true", ...(o.env ?? {}) },
      };
      try {
        stack = o.existing ? await LocalWorkspace.selectStack(args, workspace) : await LocalWorkspace.createOrSelectStack(args, workspace);
      } catch (e) {
        // backenderr.StackNotFoundError's text (pkg/backend/backenderr/backenderr.go @ v3.259.0).
        if (o.existing && /no stack named '[^']*' found/.test(String((e as Error)?.message ?? e))) throw new StackNotFoundError(o.stackName, o.backendUrl, e);
        throw new StackOperationError(o.existing ? "stack select" : "stack select/create", o.stackName, e);
      }
      try {
        for (const [key, value] of Object.entries(o.config)) await stack.setConfig(key, { value });
        for (const [key, value] of Object.entries(o.tags ?? {})) await stack.setTag(key, value);
      } catch (e) {
        throw new StackOperationError("config/tag set", o.stackName, e);
      }
      const s = stack;
      return {
        stackName: o.stackName,
        ...(pulumiCommand.version ? { cliVersion: pulumiCommand.version.toString() } : {}),
        async up({ onOutput, signal }) {
          try {
            await s.up({ onOutput, onError: onOutput, ...(signal ? { signal } : {}) });
          } catch (e) {
            throw new StackOperationError("up", o.stackName, e);
          }
        },
        async outputs() {
          const out = await s.outputs();
          return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, v.value as unknown]));
        },
        async refresh({ onOutput, signal }) {
          try {
            // A run killed mid-`up` leaves "pending creates" that make a non-interactive refresh
            // fail. Dropping them is safe here: refresh is always followed by the ARM check of
            // the run's resource group, which deletes what Pulumi no longer knows.
            await s.refresh({ onOutput, onError: onOutput, clearPendingCreates: true, ...(signal ? { signal } : {}) });
          } catch (e) {
            throw new StackOperationError("refresh", o.stackName, e);
          }
        },
        async cancel() {
          try {
            await s.cancel();
          } catch (e) {
            throw new StackOperationError("cancel", o.stackName, e);
          }
        },
        async destroy({ onOutput, signal }) {
          try {
            await s.destroy({ onOutput, onError: onOutput, ...(signal ? { signal } : {}) });
          } catch (e) {
            throw new StackOperationError("destroy", o.stackName, e);
          }
        },
        async remove() {
          try {
            await s.workspace.removeStack(o.stackName);
          } catch (e) {
            throw new StackOperationError("stack rm", o.stackName, e);
          }
        },
        async tags() {
          try {
            return { ...(await s.listTags()) };
          } catch (e) {
            throw new StackOperationError("stack tag ls", o.stackName, e);
          }
        },
      };
    },
  };
}

/**
 * A Pulumi backend URL with a file backend's folder made absolute: `file://~/x` (Pulumi's own
 * spelling of the home folder) and `file://./x` are not file URLs Node can read, and latlab reads
 * the folder itself (stale locks, checkpoints) — and a later `latlab destroy` may run elsewhere.
 */
export function absoluteBackendUrl(url: string, cwd: string = process.cwd(), home: string = homedir()): string {
  if (!url.startsWith("file://")) return url;
  const path = url.slice("file://".length);
  if (path === "~" || path.startsWith("~/")) return `file://${join(home, path.slice(1))}`;
  if (!path.startsWith("/")) return `file://${resolve(cwd, path)}`;
  return url;
}
