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
const SPAWNER_SCRIPT = new URL("./spawnerProcess.mjs", import.meta.url);

type SpawnerMessage =
  | { type: "ready" }
  | { id: number; type: "stdout" | "stderr"; data: Uint8Array }
  | { id: number; type: "error"; code?: string; message: string }
  | { id: number; type: "close"; code: number | null; signal: NodeJS.Signals | null };

export class SessionSpawner {
  /** The helper, starting or started; undefined before the first command and after it ended. */
  private helper: Promise<ChildProcess> | undefined;
  /** The helper once it said "ready". */
  private running: ChildProcess | undefined;
  private readonly commands = new Map<number, SpawnedCommandEvents>();
  private nextId = 1;

  /** The helper's pid once it is running (for tests and diagnostics). */
  get pid(): number | undefined {
    return this.running?.pid;
  }

  async spawn(file: string, args: readonly string[], env: NodeJS.ProcessEnv, events: SpawnedCommandEvents): Promise<SpawnedCommand> {
    const id = this.nextId++;
    // Registered before the helper is awaited: a helper that is still starting is then kept
    // referenced, and one that dies reports this command lost.
    this.commands.set(id, events);
    this.updateRef();
    let helper: ChildProcess;
    try {
      helper = await (this.helper ??= this.startHelper());
    } catch (error) {
      this.helper = undefined; // the next command tries again
      if (this.commands.delete(id)) events.failedToStart(undefined, (error as Error).message);
      this.updateRef();
      return { signalGroup: () => {} };
    }
    if (!this.commands.has(id)) return { signalGroup: () => {} }; // lost while the helper started
    helper.send({ type: "spawn", id, file, args, env });
    return {
      signalGroup: (signal) => {
        if (this.commands.has(id) && helper.connected) helper.send({ type: "signal", id, signal });
      },
    };
  }

  private startHelper(): Promise<ChildProcess> {
    return new Promise((resolve, reject) => {
      let attempts = 0;
      const attempt = () => {
        attempts++;
        let ready = false;
        const helper = fork(SPAWNER_SCRIPT, [], {
          detached: true,
          execArgv: [],
          serialization: "advanced",
          stdio: ["ignore", "ignore", "inherit", "ipc"],
        });
        // Never what keeps latlab alive: only a command in flight refs the channel.
        helper.unref();
        helper.on("message", (message: SpawnerMessage) => {
          if (message.type === "ready") {
            ready = true;
            this.running = helper;
            helper.on("exit", (code, signal) => this.helperGone(helper, code, signal));
            this.updateRef();
            resolve(helper);
          } else this.deliver(message);
        });
        helper.on("error", () => {
          // 'exit' follows when it ran; a helper that could not even be forked is reported there too.
        });
        helper.once("exit", (code, signal) => {
          if (ready) return;
          if (signal !== null && TERMINAL_SIGNALS.includes(signal) && attempts < START_ATTEMPTS) attempt();
          else reject(new Error(`latlab's command spawner (${SPAWNER_SCRIPT.pathname}) ended before it was ready (${signal ?? `exit code ${code}`})`));
        });
      };
      attempt();
    });
  }

  private deliver(message: Exclude<SpawnerMessage, { type: "ready" }>): void {
    const events = this.commands.get(message.id);
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

  private helperGone(helper: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    this.helper = undefined;
    this.running = undefined;
    const reason = `latlab's command spawner (pid ${helper.pid}) ended (${signal ?? `exit code ${code}`}) while the command ran; the command may still be running`;
    const lost = [...this.commands.values()];
    this.commands.clear();
    for (const events of lost) events.lost(reason);
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
