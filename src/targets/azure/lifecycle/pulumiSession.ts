import { createHash } from "node:crypto";
import { accessSync, constants, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, isAbsolute, join } from "node:path";

/**
 * The Pulumi CLI in a session of its own, so that the terminal's Ctrl-C reaches latlab alone.
 *
 * A terminal sends Ctrl-C's SIGINT to its whole foreground process group. The Automation API
 * starts every `pulumi` with execa and no `detached` (@pulumi/pulumi 3.270.0
 * automation/cmd.js, `exec()`: `execa(command, args, { env, cwd, maxBuffer: Infinity })`, the
 * same for `PulumiCommand.get()`'s `pulumi version`), so Pulumi — and the engine's plugins —
 * got the terminal's SIGINT *and* the one latlab forwards through the operation's AbortSignal
 * (`proc.kill("SIGINT")`, same file): two SIGINTs are Pulumi's "cancelling" then "terminating",
 * which abandons resources being created or deleted (issue 23, faults 5 and 6). Neither
 * `LocalWorkspace` nor `PulumiCommand` takes spawn options, and `PulumiCommand.run` is internal;
 * the one public seam is the command itself: `PulumiCommand.get({ root })` runs
 * `<root>/bin/pulumi` (cmd.js, `get()`). So latlab puts there a script that execs the real CLI
 * under `setsid` (util-linux): a new session, away from the terminal, same pid — the SIGINT
 * latlab forwards still reaches Pulumi, and only it does.
 *
 * setsid(1) forks only when its caller leads a process group; execa's children never do (no
 * `detached`), so the pid execa signals is Pulumi's own.
 */

export interface SessionCommand {
  /** The folder to pass as PulumiCommand.get({ root }): its bin/pulumi is the wrapper. */
  root: string;
  /** The wrapper script itself. */
  script: string;
}

/** `command` as a path: itself when absolute, else the first executable of that name on PATH. */
export function resolveCommand(command: string, path: string | undefined): string | undefined {
  if (isAbsolute(command)) return command;
  return (path ?? "")
    .split(delimiter)
    .filter((dir) => dir !== "")
    .map((dir) => join(dir, command))
    .find(isExecutable);
}

/** A POSIX shell word: single-quoted, its own quotes escaped. */
const shellWord = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The wrapper's text. The Automation API puts the folder of an absolute command first on PATH
 * "to pick up the matching bundled plugins" (cmd.js, `run()`): here that is the wrapper's folder,
 * so the script takes it off again and, when the real CLI came from an install root (not from
 * PATH), puts the real CLI's folder there instead — PATH as Pulumi would have had it without the
 * wrapper (a rehearsal's emulator plugin first on PATH stays first).
 */
export function wrapperScript(o: { real: string; setsid: string; wrapperBin: string; fromRoot: boolean }): string {
  return [
    "#!/bin/sh",
    "# Written by latlab (src/targets/azure/lifecycle/pulumiSession.ts): the Pulumi CLI in a session of",
    "# its own, so that the terminal's Ctrl-C reaches latlab only, which forwards one cancel.",
    // An assignment is not word-split: no double quotes, so the pattern's quotes are plain quoting in every sh.
    `PATH=\${PATH#${shellWord(`${o.wrapperBin}${delimiter}`)}}`,
    ...(o.fromRoot ? [`PATH=${shellWord(`${dirname(o.real)}${delimiter}`)}"$PATH"`] : []),
    "export PATH",
    `exec ${shellWord(o.setsid)} ${shellWord(o.real)} "$@"`,
    "",
  ].join("\n");
}

/**
 * Where the wrapper of a real CLI lives: the user's cache (XDG_CACHE_HOME, else ~/.cache — private
 * to the user, unlike the shared temp folder), one folder per real CLI and setsid, named by their
 * hash. Written once and reused by every later run: nothing to remove at exit, nothing left behind
 * by a process killed outright, and never more than one small script per Pulumi install.
 */
export function sessionRootFor(real: string, setsid: string, fromRoot: boolean, env: NodeJS.ProcessEnv): string {
  const cache = env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : join(env.HOME || homedir(), ".cache");
  const id = createHash("sha256").update(`${real}\0${setsid}\0${fromRoot}`).digest("hex").slice(0, 16);
  return join(cache, "latlab", "pulumi-session", id);
}

/**
 * The wrapper root for the real CLI `command` (absolute, or a name found on PATH): its script is
 * written when missing or different (atomically: a temp file renamed over it, so a run starting
 * at the same time never sees half a script). Undefined when `setsid` is missing (not Linux): the
 * caller says so and uses the CLI as it is.
 */
export function sessionCommand(command: string, env: NodeJS.ProcessEnv = process.env): SessionCommand | undefined {
  const real = resolveCommand(command, env.PATH);
  const setsid = resolveCommand("setsid", env.PATH) ?? ["/usr/bin/setsid", "/bin/setsid"].find(isExecutable);
  if (!real || !setsid) return undefined;
  const fromRoot = isAbsolute(command);
  const root = sessionRootFor(real, setsid, fromRoot, env);
  const wrapperBin = join(root, "bin");
  const script = join(wrapperBin, "pulumi");
  const text = wrapperScript({ real, setsid, wrapperBin, fromRoot });
  if (!existsSync(script) || readFileSync(script, "utf8") !== text) {
    mkdirSync(wrapperBin, { recursive: true, mode: 0o700 });
    const tmp = `${script}.${process.pid}.tmp`;
    writeFileSync(tmp, text, { mode: 0o700 });
    renameSync(tmp, script);
  }
  return { root, script };
}

function isExecutable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
