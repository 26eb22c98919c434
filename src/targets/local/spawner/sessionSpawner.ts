import { fork } from "node:child_process";
import type { ChildProcess } from "node:child_process";

/**
 * Starts commands from a helper process that lives in a session of its own, so that no Ctrl-C
 * can reach a command at any moment of its life.
 *
 * A terminal's Ctrl-C signals latlab's whole foreground process group. A command latlab forks
 * itself belongs to that group from fork until its setsid(), and a SIGINT landing in that window
 * stays pending and kills it before it runs (under a burst of Ctrl-Cs, about one start in four
 * on this machine, and several in a row under load). The helper has no terminal and no one
 * signals its group, so commands forked from it are never exposed. Only the helper's own start
 * is, and that one is provably safe to repeat: a helper killed before it said "ready" has
 * started nothing.
 */

/** What a command started through the spawner reports, in order: output, then one end. */
export interface SpawnedCommandEvents {
  stdout(chunk: Buffer): void;
  stderr(chunk: Buffer): void;
  /** Could not start: `code` is the errno name (ENOENT …) when there is one. */
  failedToStart(code: string | undefined, message: string): void;
  exited(code: number | null, signal: NodeJS.Signals | null): void;
  /** The spawner itself went away while the command ran: its end is unknown. */
  lost(reason: string): void;
}

export interface SpawnedCommand {
  /** Signals the command's whole process group. */
  signalGroup(signal: NodeJS.Signals): void;
}

/** Signals a terminal sends to its whole foreground process group (Ctrl-C, Ctrl-backslash). */
const TERMINAL_SIGNALS: readonly string[] = ["SIGINT", "SIGQUIT"];
/** Starts of the helper that a terminal signal may cut short before we give up (each is safe). */
const START_ATTEMPTS = 100;
/** A guard against a helper that never gets going, not a budget: it says "ready" in ~50 ms. */
const START_TIMEOUT_MS = 60_000;
const SPAWNER_SCRIPT = new URL("./spawnerProcess.mjs", import.meta.url);

type SpawnerMessage =
  | { type: "ready" }
  | { id: number; type: "stdout" | "stderr"; data: Uint8Array }
  | { id: number; type: "error"; code?: string; message: string }
  | { id: number; type: "close"; code: number | null; signal: NodeJS.Signals | null };

export interface SessionSpawnerOptions {
  /** The helper's script (tests start others). */
  script?: URL;
  /** The Node binary that runs it. */
  execPath?: string;
  startTimeoutMs?: number;
}

interface Command {
  events: SpawnedCommandEvents;
  /** The helper it was handed to; undefined while a helper is starting. */
  helper?: ChildProcess;
}

export class SessionSpawner {
  /** The helper, starting or started; undefined before the first command and after it ended. */
  private helper: Promise<ChildProcess> | undefined;
  /** The helper once it said "ready". */
  private running: ChildProcess | undefined;
  private readonly commands = new Map<number, Command>();
  private nextId = 1;
  private readonly script: URL;
  private readonly execPath: string;
  private readonly startTimeoutMs: number;

  constructor(options: SessionSpawnerOptions = {}) {
    this.script = options.script ?? SPAWNER_SCRIPT;
    this.execPath = options.execPath ?? process.execPath;
    this.startTimeoutMs = options.startTimeoutMs ?? START_TIMEOUT_MS;
  }

  /** The helper's pid once it is running (for tests and diagnostics). */
  get pid(): number | undefined {
    return this.running?.pid;
  }

  async spawn(file: string, args: readonly string[], env: NodeJS.ProcessEnv, events: SpawnedCommandEvents): Promise<SpawnedCommand> {
    const id = this.nextId++;
    const command: Command = { events };
    // Registered before the helper is awaited, so that a helper still starting stays referenced.
    this.commands.set(id, command);
    this.updateRef();
    for (;;) {
      const starting = (this.helper ??= this.startHelper());
      let helper: ChildProcess;
      try {
        helper = await starting;
      } catch (error) {
        if (this.helper === starting) this.helper = undefined; // the next command tries again
        this.commands.delete(id);
        this.updateRef();
        events.failedToStart(undefined, (error as Error).message);
        return { signalGroup: () => {} };
      }
      if (!helper.connected) {
        // Going away, its 'exit' not yet seen: this command was never handed to it.
        this.forget(helper);
        if (this.helper === starting) this.helper = undefined;
        continue;
      }
      command.helper = helper;
      helper.send({ type: "spawn", id, file, args, env });
      return {
        signalGroup: (signal) => {
          if (this.commands.has(id) && helper.connected) helper.send({ type: "signal", id, signal });
        },
      };
    }
  }

  private startHelper(): Promise<ChildProcess> {
    return new Promise((resolve, reject) => {
      let attempts = 0;
      let settled = false;
      const fail = (why: string) => {
        if (settled) return;
        settled = true;
        reject(new Error(`latlab's command spawner (${this.script.pathname}) could not start: ${why}`));
      };
      const attempt = () => {
        attempts++;
        let ready = false;
        let helper: ChildProcess;
        try {
          helper = fork(this.script, [], {
            detached: true,
            execPath: this.execPath,
            execArgv: [],
            // The helper is plain JavaScript: no loader, no inspector, nothing of latlab's own options.
            env: { ...process.env, NODE_OPTIONS: "" },
            serialization: "advanced",
            // Not latlab's stderr: an inherited one would stay open after latlab exits, until the
            // helper noticed. How the helper ended is reported through its exit instead.
            stdio: ["ignore", "ignore", "ignore", "ipc"],
          });
        } catch (error) {
          fail((error as Error).message);
          return;
        }
        // Never what keeps latlab alive: only a command in flight refs the channel.
        helper.unref();
        const deadline = setTimeout(() => {
          fail(`it did not say it was ready within ${this.startTimeoutMs} ms`);
          helper.kill("SIGKILL");
        }, this.startTimeoutMs);
        helper.on("message", (message: SpawnerMessage) => {
          if (message.type !== "ready") this.deliver(message);
          else if (settled) helper.kill("SIGKILL");
          else {
            settled = true;
            ready = true;
            clearTimeout(deadline);
            this.running = helper;
            this.updateRef();
            resolve(helper);
          }
        });
        helper.on("error", (error) => {
          // Could not be forked at all (no pid, and no 'exit' to follow); other errors (a failed
          // send or kill) are followed by 'exit' or change nothing.
          if (helper.pid !== undefined) return;
          clearTimeout(deadline);
          fail(error.message);
        });
        helper.once("exit", (code, signal) => {
          clearTimeout(deadline);
          if (ready) {
            // Messages still in the channel come before its 'disconnect': the commands that
            // ended in them are not lost.
            if (helper.connected) helper.once("disconnect", () => this.helperGone(helper, code, signal));
            else this.helperGone(helper, code, signal);
          } else if (!settled && signal !== null && TERMINAL_SIGNALS.includes(signal) && attempts < START_ATTEMPTS) attempt();
          else fail(signal ?? `exit code ${code}`);
        });
      };
      attempt();
    });
  }

  private deliver(message: Exclude<SpawnerMessage, { type: "ready" }>): void {
    const events = this.commands.get(message.id)?.events;
    if (events === undefined) return;
    switch (message.type) {
      case "stdout":
        events.stdout(Buffer.from(message.data.buffer, message.data.byteOffset, message.data.byteLength));
        return;
      case "stderr":
        events.stderr(Buffer.from(message.data.buffer, message.data.byteOffset, message.data.byteLength));
        return;
      case "error":
        this.commands.delete(message.id);
        events.failedToStart(message.code, message.message);
        break;
      case "close":
        this.commands.delete(message.id);
        events.exited(message.code, message.signal);
        break;
    }
    this.updateRef();
  }

  /** The next command starts a new helper. */
  private forget(helper: ChildProcess): void {
    if (this.running !== helper) return;
    this.running = undefined;
    this.helper = undefined;
  }

  private helperGone(helper: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    this.forget(helper);
    const reason = `latlab's command spawner (pid ${helper.pid}) ended (${signal ?? `exit code ${code}`}) while the command ran; the command may still be running`;
    for (const [id, command] of this.commands) {
      if (command.helper !== helper) continue;
      this.commands.delete(id);
      command.events.lost(reason);
    }
    this.updateRef();
  }

  /** The channel keeps latlab alive exactly while a command is in flight. */
  private updateRef(): void {
    const channel = this.running?.channel;
    if (channel === undefined || channel === null) return;
    if (this.commands.size > 0) channel.ref();
    else channel.unref();
  }
}

/** The one spawner of this process, started with its first command. */
export const sessionSpawner = new SessionSpawner();
