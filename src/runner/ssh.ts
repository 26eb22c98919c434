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
  for (;;) {
    attempt++;
    const ssh = new NodeSSH();
    try {
      await ssh.connect({
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
      return ssh;
    } catch (error) {
      ssh.dispose();
      const message = (error as Error).message;
      const where = `${endpoint.deployment}/${endpoint.role} (${endpoint.ssh.host}:${endpoint.ssh.port})`;
      if (HOST_KEY_REFUSED.test(message)) throw new Error(`${where}: host key does not match the one latlab generated — refusing to connect`);
      if (options.signal?.aborted) throw new Error(`${where}: connection aborted`);
      if (Date.now() + delay > deadline) throw new Error(`${where}: SSH not ready after ${attempt} attempts: ${message}`);
      options.log?.(`${where}: SSH not ready (${message}), retrying in ${delay} ms`);
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 3_000);
    }
  }
}

export interface ExecResult {
  stdout: string;
  stderr: string;
  exitCode: number | null;
  timedOut: boolean;
}

/** Quotes a string for a POSIX shell. */
export const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export interface ExecOptions {
  /** Written to the command's standard input, which is then closed. */
  stdin?: string;
}

/**
 * Runs a command with a hard limit on the host (coreutils timeout) and a local guard a little
 * later, so that neither a stuck tool nor a dead connection can hang the run. Rejects only when
 * the command could not be run or answered (dead connection, local guard, interruption): a
 * failing command resolves with its exit code.
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
  try {
    if (signal?.aborted) throw new Error("interrupted");
    const result = await Promise.race([ssh.execCommand(wrapped, options.stdin !== undefined ? { stdin: options.stdin } : {}), guard]);
    return { stdout: result.stdout, stderr: result.stderr, exitCode: result.code, timedOut: result.code === 124 || result.code === 137 };
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener("abort", onAbort);
  }
}

/**
 * Shell that prints "alive" while the process is running and "gone" once it exited — also when
 * it exited but was not reaped yet (state Z), which `kill -0` would still call alive.
 */
export const aliveCheck = (pidExpression: string) =>
  `s=$(ps -o stat= -p ${pidExpression} 2>/dev/null); case "$s" in ""|Z*) echo gone;; *) echo alive;; esac`;
