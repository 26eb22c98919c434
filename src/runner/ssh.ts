import type { EventEmitter } from "node:events";
import { NodeSSH } from "node-ssh";
import type { HostEndpoint } from "../targets/target.ts";

export interface ConnectOptions {
  /** Give up after this long; the host may still be booting or starting sshd. */
  deadlineMs?: number;
  signal?: AbortSignal;
  log?: (message: string) => void;
}

/** The raw key blob of an OpenSSH public key line ("ssh-ed25519 AAAA… comment"). */
export function publicKeyBlob(line: string): Buffer {
  const base64 = line.trim().split(/\s+/)[1];
  if (!base64) throw new Error(`not an OpenSSH public key line: ${line.slice(0, 40)}`);
  return Buffer.from(base64, "base64");
}

const HOST_KEY_REFUSED = /verification failed|host denied/i;

/**
 * Connects to a host with strict host-key checking against the key latlab generated for it,
 * retrying with backoff while the host is not ready. A wrong host key is never retried.
 */
export async function connectHost(endpoint: HostEndpoint, options: ConnectOptions = {}): Promise<NodeSSH> {
  const expected = publicKeyBlob(endpoint.hostKey);
  const deadline = Date.now() + (options.deadlineMs ?? 60_000);
  let delay = 200;
  let attempt = 0;
  const where = `${endpoint.deployment}/${endpoint.role} (${endpoint.ssh.host}:${endpoint.ssh.port})`;
  for (;;) {
    attempt++;
    if (options.signal?.aborted) throw new Error(`${where}: connection aborted`);
    const ssh = new NodeSSH();
    const connecting = ssh.connect({
      host: endpoint.ssh.host,
      port: endpoint.ssh.port,
      username: endpoint.ssh.username,
      privateKey: endpoint.ssh.privateKey,
      readyTimeout: 10_000,
      // A deployment's connections stay open from its first step to its last, idle while other
      // deployments measure; Azure's public IPs drop a connection idle for 4 minutes.
      keepaliveInterval: 15_000,
      keepaliveCountMax: 4,
      hostVerifier: (key: Buffer) => Buffer.compare(key, expected) === 0,
    } as Parameters<NodeSSH["connect"]>[0]);
    // Ctrl-C does not wait for the handshake (up to readyTimeout); a connection that completes
    // after it is closed as soon as it does.
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(new Error("connection aborted"));
      options.signal?.addEventListener("abort", onAbort, { once: true });
    });
    try {
      await Promise.race([connecting, aborted]);
      watchConnection(ssh);
      return ssh;
    } catch (error) {
      connecting.then(
        () => ssh.dispose(),
        () => ssh.dispose(),
      );
      const message = (error as Error).message;
      if (HOST_KEY_REFUSED.test(message)) throw new Error(`${where}: host key does not match the one latlab generated — refusing to connect`);
      if (options.signal?.aborted) throw new Error(`${where}: connection aborted`);
      if (Date.now() + delay > deadline) throw new Error(`${where}: SSH not ready${attempt > 1 ? ` after ${attempt} attempts` : ""}: ${message}`);
      options.log?.(`${where}: SSH not ready (${message}), retrying in ${delay} ms`);
      await sleep(delay, options.signal);
      delay = Math.min(delay * 2, 3_000);
    } finally {
      if (onAbort) options.signal?.removeEventListener("abort", onAbort);
    }
  }
}

export interface ExecResult {
  stdout: string;
  stderr: string;
  /** Always a number: a command that ended without one is an error (see execWithTimeout). */
  exitCode: number;
  timedOut: boolean;
}

/** Quotes a string for a POSIX shell. */
export const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** Resolves after `ms`, or at once when `signal` aborts; leaves no listener behind either way. */
export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });

/** When and why a connection dropped. */
export interface Lost {
  at: Date;
  reason: string;
}

/**
 * A command could not be run or answered because its SSH connection is gone. Callers that know
 * the host and what was going on say so with lostDuring().
 */
export class ConnectionLostError extends Error {
  readonly lost: Lost;

  constructor(lost: Lost) {
    super(`connection lost at ${lost.at.toISOString()} (${lost.reason})`);
    this.name = "ConnectionLostError";
    this.lost = lost;
  }
}

interface Watch {
  lost?: Lost;
  /** Records the loss (the first call wins) and tells the listeners. */
  mark: (reason: string) => void;
  /** Told once, when the connection is lost; commands in flight subscribe and unsubscribe. */
  listeners: Set<(lost: Lost) => void>;
}

const watches = new WeakMap<NodeSSH, Watch>();

/**
 * Follows a connection's own events (ssh2's 'error', 'end', 'close') and remembers the first
 * as the moment and reason it was lost. Idempotent. Also keeps an 'error' listener on the
 * client for its whole life: node-ssh removes its own once connected, and an 'error' event
 * nobody listens to (a reset, a keepalive timeout) would crash the process.
 */
export function watchConnection(ssh: NodeSSH): void {
  if (watches.has(ssh)) return;
  const mark = (reason: string) => {
    if (watch.lost) return;
    const lost = { at: new Date(), reason };
    watch.lost = lost;
    for (const listener of [...watch.listeners]) listener(lost);
    watch.listeners.clear();
  };
  const watch: Watch = { listeners: new Set(), mark };
  watches.set(ssh, watch);
  if (!ssh.isConnected()) return mark("not connected");
  // node-ssh's ssh2 client; without one (a stand-in), isConnected() is all there is to go by.
  const client = (ssh as unknown as { connection?: EventEmitter | null }).connection;
  if (!client) return;
  client.on("error", (error: Error) => mark(error.message || String(error)));
  client.once("end", () => mark("the host closed the connection"));
  client.once("close", () => mark("the connection closed"));
}

/** Calls `listener` when the watched connection is lost; returns the unsubscribe. */
function onLost(ssh: NodeSSH, listener: (lost: Lost) => void): () => void {
  const watch = watches.get(ssh);
  if (!watch) return () => undefined;
  watch.listeners.add(listener);
  return () => watch.listeners.delete(listener);
}

/** Closes a connection on purpose: it counts as lost from now on, "closed by latlab". */
export function closeConnection(ssh: NodeSSH): void {
  watches.get(ssh)?.mark("closed by latlab");
  ssh.dispose();
}

/** When and why `ssh` was lost, or undefined while it is up. */
export function connectionLost(ssh: NodeSSH): Lost | undefined {
  const watched = watches.get(ssh)?.lost;
  if (watched) return watched;
  return ssh.isConnected() ? undefined : { at: new Date(), reason: "not connected" };
}

/** The lost connection behind `error` (itself or a cause), if any. */
export function findLoss(error: unknown): ConnectionLostError | undefined {
  for (let e = error, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof ConnectionLostError) return e;
  }
  return undefined;
}

/** "client (198.18.0.2:22)": a host as its lost-connection messages name it. */
const hostName = (endpoint: HostEndpoint) => `${endpoint.role} (${endpoint.ssh.host}:${endpoint.ssh.port})`;

/**
 * `connection to <role> (<address>) lost at <ISO time> during <what> (<reason>)` when `error`
 * comes from a lost connection; undefined otherwise.
 */
export function lostDuring(endpoint: HostEndpoint, error: unknown, during: string): string | undefined {
  const lost = findLoss(error)?.lost;
  return lost ? `connection to ${hostName(endpoint)} lost at ${lost.at.toISOString()} during ${during} (${lost.reason})` : undefined;
}

/** How long a command that came back without an exit code waits for its connection to be declared lost. */
const NO_EXIT_CODE_GRACE_MS = 500;

export interface ExecOptions {
  /** Written to the command's standard input, which is then closed. */
  stdin?: string;
  /** Told the output as it arrives: what a command printed before it was interrupted is not lost. */
  onStdout?: (chunk: Buffer) => void;
  onStderr?: (chunk: Buffer) => void;
}

/**
 * Runs a command with a hard limit on the host (coreutils timeout) and a local guard a little
 * later, so that neither a stuck tool nor a dead connection can hang the run. A failing command
 * resolves with its exit code. Rejects when the command could not be run or answered: with a
 * ConnectionLostError when the connection is gone (before, during, or — a channel closed without
 * an exit code — as it ended), and with an error for the local guard, an interruption, or a
 * command that ended without an exit code on a live connection (a signal). An exit code is
 * never null.
 */
export async function execWithTimeout(ssh: NodeSSH, command: string, timeoutSeconds: number, signal?: AbortSignal, options: ExecOptions = {}): Promise<ExecResult> {
  const wrapped = `timeout --kill-after=5 ${Math.ceil(timeoutSeconds)} sh -c ${shellQuote(command)}`;
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer ${Math.ceil(timeoutSeconds) + 15} s after start`)), (timeoutSeconds + 15) * 1000);
    onAbort = () => reject(new Error("interrupted"));
    signal?.addEventListener("abort", onAbort, { once: true });
  });
  // A watched connection that drops fails its commands at once, whatever its channels do.
  let unsubscribe: () => void = () => undefined;
  const dropped = new Promise<never>((_, reject) => {
    unsubscribe = onLost(ssh, (lost) => reject(new ConnectionLostError(lost)));
  });
  dropped.catch(() => undefined);
  try {
    if (signal?.aborted) throw new Error("interrupted");
    const before = connectionLost(ssh);
    if (before) throw new ConnectionLostError(before);
    let result;
    const execOptions = {
      ...(options.stdin !== undefined ? { stdin: options.stdin } : {}),
      ...(options.onStdout ? { onStdout: options.onStdout } : {}),
      ...(options.onStderr ? { onStderr: options.onStderr } : {}),
    };
    try {
      result = await Promise.race([ssh.execCommand(wrapped, execOptions), guard, dropped]);
    } catch (error) {
      if (signal?.aborted) throw new Error("interrupted");
      if (error instanceof ConnectionLostError) throw error;
      const lost = connectionLost(ssh);
      throw lost ? new ConnectionLostError(lost) : error;
    }
    if (typeof result.code === "number") return { stdout: result.stdout, stderr: result.stderr, exitCode: result.code, timedOut: result.code === 124 || result.code === 137 };
    // No exit code: the channel closed under the command. Almost always the connection going
    // (its 'close' can trail the channel's by a moment); otherwise a signal. Never a success.
    if (signal?.aborted) throw new Error("interrupted");
    const lost = connectionLost(ssh) ?? (result.signal ? undefined : await lostWithin(ssh, NO_EXIT_CODE_GRACE_MS, signal));
    if (signal?.aborted) throw new Error("interrupted");
    if (lost) throw new ConnectionLostError(lost);
    const head = command.trim().split(/\s+/)[0] ?? command;
    throw new Error(`\`${head}\` ended without an exit code (${result.signal ? `killed by signal ${result.signal}` : "its channel closed"})`);
  } finally {
    clearTimeout(timer);
    unsubscribe();
    if (onAbort) signal?.removeEventListener("abort", onAbort);
  }
}

/** The connection's loss if it is declared within `ms` (a watched connection only). */
function lostWithin(ssh: NodeSSH, ms: number, signal?: AbortSignal): Promise<Lost | undefined> {
  if (!watches.has(ssh)) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    let settled = false;
    const unsubscribe = onLost(ssh, (lost) => {
      settled = true;
      resolve(lost);
    });
    void sleep(ms, signal).then(() => {
      unsubscribe();
      if (!settled) resolve(connectionLost(ssh));
    });
  });
}

/**
 * Shell that prints "alive" while the process is running and "gone" once it exited — also when
 * it exited but was not reaped yet (state Z), which `kill -0` would still call alive.
 */
export const aliveCheck = (pidExpression: string) =>
  `s=$(ps -o stat= -p ${pidExpression} 2>/dev/null); case "$s" in ""|Z*) echo gone;; *) echo alive;; esac`;
