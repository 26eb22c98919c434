/**
 * A small stand-in for node-ssh's NodeSSH: execCommand answers from a handler, dispose() closes
 * it like the real one (later commands reject, pending ones fail). drop() is the connection
 * dying under it as a real one does: its ssh2 client (`connection`) emits 'end' and 'close',
 * then every command in flight comes back with exit code null. Commands arrive as the handler
 * would see them on the host: without execWithTimeout's `timeout … sh -c '…'` wrapper.
 */
import { EventEmitter } from "node:events";
import type { NodeSSH } from "node-ssh";
import type { HostEndpoint } from "../../../src/targets/target.ts";

export interface Answer {
  stdout?: string;
  stderr?: string;
  code?: number | null;
  /** The signal that ended the command (node-ssh reports it with code null). */
  signal?: string | null;
}

/** Answers a command; may return a promise that never settles (a wedged host). */
export type Handler = (command: string, stdin: string | undefined) => Answer | Promise<Answer>;

export interface FakeSsh {
  ssh: NodeSSH;
  name: string;
  /** Inner commands, in order. */
  commands: string[];
  stdins: (string | undefined)[];
  /** Raw commands as execCommand received them (with the timeout wrapper). */
  wrapped: string[];
  disposed: boolean;
  /** Commands issued after dispose() or drop() (they reject, as node-ssh's do). */
  afterDispose: string[];
  /** The connection dies: 'error' (when a reason is given), 'end', 'close'; commands in flight end with code null. */
  drop(reason?: string): void;
  dropped: boolean;
}

const WRAPPER = /^timeout --kill-after=\d+ \d+ sh -c '([\s\S]*)'$/;

/** The command inside execWithTimeout's wrapper (the reverse of shellQuote). */
export function unwrap(command: string): string {
  const m = WRAPPER.exec(command);
  return m ? m[1]!.replace(/'\\''/g, "'") : command;
}

/** A promise that never settles: a command on a wedged host. */
export const never = () => new Promise<Answer>(() => undefined);

export function fakeSsh(name: string, handler: Handler = () => ({})): FakeSsh {
  const pending = new Set<{ resolve: (answer: Answer) => void; reject: (error: Error) => void }>();
  const connection = new EventEmitter();
  const fake: FakeSsh = {
    name,
    commands: [],
    stdins: [],
    wrapped: [],
    disposed: false,
    afterDispose: [],
    dropped: false,
    ssh: undefined as unknown as NodeSSH,
    drop(reason?: string) {
      if (fake.dropped || fake.disposed) return;
      fake.dropped = true;
      if (reason) connection.emit("error", new Error(reason));
      connection.emit("end");
      connection.emit("close");
      // ssh2 closes the channels after the client's 'close': node-ssh resolves them with code null.
      for (const p of pending) p.resolve({ code: null, signal: null });
      pending.clear();
    },
  };
  const ssh = {
    connection,
    async execCommand(command: string, options: { stdin?: string } = {}) {
      const inner = unwrap(command);
      if (fake.disposed || fake.dropped) {
        fake.afterDispose.push(inner);
        throw new Error("Not connected to server");
      }
      fake.wrapped.push(command);
      fake.commands.push(inner);
      fake.stdins.push(options.stdin);
      const answer = await new Promise<Answer>((resolve, reject) => {
        const entry = { resolve, reject };
        pending.add(entry);
        Promise.resolve(handler(inner, options.stdin)).then(
          (a) => (pending.delete(entry), resolve(a)),
          (e: unknown) => (pending.delete(entry), reject(e)),
        );
      });
      return { stdout: answer.stdout ?? "", stderr: answer.stderr ?? "", code: answer.code === undefined ? 0 : answer.code, signal: answer.signal ?? null };
    },
    dispose() {
      if (fake.disposed) return;
      fake.disposed = true;
      for (const p of pending) p.reject(new Error("connection closed"));
      pending.clear();
      if (!fake.dropped) connection.emit("close");
    },
    isConnected() {
      return !fake.disposed && !fake.dropped;
    },
  };
  fake.ssh = ssh as unknown as NodeSSH;
  return fake;
}

/** An endpoint for a role of a deployment; nothing in it is dialled by the fakes. */
export function endpoint(deployment: string, role: string, over: Partial<HostEndpoint> = {}): HostEndpoint {
  return {
    deployment,
    role,
    ssh: { host: "127.0.0.1", port: 1, username: "root", privateKey: "unused" },
    hostKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeFakeFakeFakeFakeFakeFakeFakeFakeFake",
    privateAddress: `198.18.0.${role.length}`,
    workDir: `/tmp/latlab/${role}`,
    actual: {},
    ...over,
  };
}

export const delay = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
