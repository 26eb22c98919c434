import type { NodeSSH } from "node-ssh";
import type { HostEndpoint } from "../targets/target.ts";
import { closeConnection, connectionLost, sleep, watchConnection, type ConnectOptions } from "./ssh.ts";

/** Opens a connection to a host (connectHost; tests pass a fake). */
export type Connect = (endpoint: HostEndpoint, options: ConnectOptions) => Promise<NodeSSH>;

export interface HostConnectionsOptions {
  connect: Connect;
  /** The run's signal: aborting it stops connecting and fails what is in flight. */
  signal: AbortSignal;
  log: (message: string) => void;
  /**
   * The pause before each attempt to re-establish a dropped connection; as many attempts as
   * pauses. Default RECONNECT_DELAYS_MS.
   */
  reconnectDelaysMs?: readonly number[];
}

/** 3 attempts to reconnect, 0.5 s, 1 s and 2 s after the drop was noticed and each failure. */
export const RECONNECT_DELAYS_MS: readonly number[] = [500, 1_000, 2_000];

/**
 * The pauses for a detached client's collection (tcp-echo: hours long): the client goes on
 * writing on its host while the runner is cut off, so a longer outage (about 6 minutes in all)
 * is waited out before the rest of its records are given up.
 */
export const DETACHED_RECONNECT_DELAYS_MS: readonly number[] = [2_000, 5_000, 10_000, 20_000, 30_000, 60_000, 60_000, 60_000, 60_000, 60_000];

/** A host whose dropped connection could not be re-established: its remaining cells fail with this. */
export class ReconnectFailedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ReconnectFailedError";
  }
}

const where = (h: HostEndpoint) => `${h.deployment}/${h.role}`;

/** The error, named after the host unless it already is. */
const naming = (host: HostEndpoint, error: unknown): Error => {
  const message = error instanceof Error ? error.message : String(error);
  return message.startsWith(where(host)) ? (error as Error) : new Error(`${where(host)}: ${message}`);
};

/**
 * The SSH connections to one deployment's hosts, by role. Every connection it ever opened is
 * closed by close(), also those that opened while another host failed. A connection that
 * drops is noticed (watchConnection) and re-established before the next cell that needs its
 * host (use), with bounded retries (reconnectDelaysMs); callers noticing the same drop share
 * one reconnect. When every attempt fails the host is given up: its later cells fail at once
 * with the same ReconnectFailedError, while the other hosts go on.
 */
export class HostConnections {
  private readonly open = new Map<string, NodeSSH>();
  private readonly reconnecting = new Map<string, Promise<NodeSSH>>();
  private readonly givenUp = new Map<string, ReconnectFailedError>();
  private readonly connects = new Map<string, number>();
  private closed = false;

  readonly deployment: string;
  private readonly hosts: readonly HostEndpoint[];
  private readonly options: HostConnectionsOptions;

  private constructor(deployment: string, hosts: readonly HostEndpoint[], options: HostConnectionsOptions) {
    this.deployment = deployment;
    this.hosts = hosts;
    this.options = options;
  }

  /**
   * Connects to every host at once and runs `prepare` (readiness, probe) on each. Waits for
   * all of them to settle — when one fails, the others are cancelled — and then either
   * returns the connections or closes every one that opened and throws the first failure,
   * which names its host. Nothing of this deployment is left running afterwards.
   */
  static async connectAll(
    deployment: string,
    hosts: readonly HostEndpoint[],
    options: HostConnectionsOptions,
    prepare: (host: HostEndpoint, ssh: NodeSSH, signal: AbortSignal) => Promise<void> = async () => undefined,
  ): Promise<HostConnections> {
    const pool = new HostConnections(deployment, hosts, options);
    // Cancels the siblings of the first host that fails, and follows the run's own signal.
    const cancel = new AbortController();
    const onAbort = () => cancel.abort();
    options.signal.addEventListener("abort", onAbort, { once: true });
    if (options.signal.aborted) cancel.abort();
    const failures: Error[] = [];
    try {
      await Promise.allSettled(
        hosts.map(async (host) => {
          try {
            const ssh = await options.connect(host, { signal: cancel.signal, log: options.log });
            pool.adopt(host.role, ssh);
            if (cancel.signal.aborted) throw new Error("connection aborted");
            await prepare(host, ssh, cancel.signal);
          } catch (error) {
            // The first failure is the cause; siblings then fail because they were cancelled.
            failures.push(naming(host, error));
            if (!cancel.signal.aborted) cancel.abort();
            // Closing makes a wedged exec on this connection give up at once.
            const opened = pool.open.get(host.role);
            if (opened) closeConnection(opened);
          }
        }),
      );
    } finally {
      options.signal.removeEventListener("abort", onAbort);
    }
    if (failures.length) {
      pool.close();
      throw failures[0]!;
    }
    return pool;
  }

  /** Makes `ssh` the role's connection, watched for drops. */
  private adopt(role: string, ssh: NodeSSH): void {
    watchConnection(ssh);
    this.open.set(role, ssh);
    this.connects.set(role, (this.connects.get(role) ?? 0) + 1);
  }

  /** The endpoint of a role; an error naming deployment and role when the target has none. */
  endpoint(role: string): HostEndpoint {
    const host = this.hosts.find((h) => h.role === role);
    if (!host) throw new Error(`${this.deployment}: the target brought up no host "${role}" (it has ${this.hosts.map((h) => h.role).join(", ") || "none"})`);
    return host;
  }

  /** The current connection to a role, whether or not it is still up (see use). */
  get(role: string): NodeSSH {
    const ssh = this.open.get(role);
    if (!ssh) throw new Error(`${this.deployment}/${role}: ${this.closed ? "connections are closed" : "not connected"}`);
    return ssh;
  }

  /**
   * How many connections to the role were made so far: 1 until its first reconnect. Whatever a
   * host did over an earlier connection (a server started) may have gone with it.
   */
  generation(role: string): number {
    return this.connects.get(role) ?? 0;
  }

  /**
   * A live connection to a role for the next step: the current one while it is up, otherwise
   * a new one (reconnect). Rejects with the host's ReconnectFailedError once it was given up.
   */
  async use(role: string): Promise<NodeSSH> {
    const givenUp = this.givenUp.get(role);
    if (givenUp) throw givenUp;
    const current = this.get(role);
    return connectionLost(current) ? this.reconnect(role, current) : current;
  }

  /**
   * Replaces `failed`, the connection a caller saw drop, and returns its successor. When the
   * role's connection is no longer `failed` (another cell replaced it already) and is up, that
   * one is returned as is, and callers that notice the same drop at the same time share one
   * reconnect: a fresh connection is never closed under a cell that just got it.
   */
  reconnect(role: string, failed: NodeSSH, delaysMs?: readonly number[]): Promise<NodeSSH> {
    const inFlight = this.reconnecting.get(role);
    if (inFlight) return inFlight;
    if (this.closed) return Promise.reject(new Error(`${this.deployment}/${role}: connections are closed`));
    const givenUp = this.givenUp.get(role);
    if (givenUp) return Promise.reject(givenUp);
    const current = this.open.get(role);
    if (current && current !== failed && !connectionLost(current)) return Promise.resolve(current);
    const host = this.endpoint(role);
    const attempt = this.reestablish(host, current ?? failed, failed, delaysMs);
    this.reconnecting.set(role, attempt);
    const forget = () => {
      if (this.reconnecting.get(role) === attempt) this.reconnecting.delete(role);
    };
    attempt.then(forget, forget);
    return attempt;
  }

  /**
   * Bounded retries with backoff: a pause (reconnectDelaysMs), then one connection attempt,
   * each logged. Ctrl-C ends the pause and the attempt at once. When all fail, the host is
   * given up and its error says after how many attempts and why.
   */
  private async reestablish(host: HostEndpoint, current: NodeSSH, failed: NodeSSH, delaysMs?: readonly number[]): Promise<NodeSSH> {
    const { signal, log } = this.options;
    const delays = delaysMs ?? this.options.reconnectDelaysMs ?? RECONNECT_DELAYS_MS;
    const lost = connectionLost(failed) ?? connectionLost(current);
    closeConnection(failed);
    if (current !== failed) closeConnection(current);
    const interrupted = () => new Error(`${where(host)}: reconnect interrupted`);
    log(`${where(host)}: connection to ${host.ssh.host}:${host.ssh.port} lost${lost ? ` at ${lost.at.toISOString()} (${lost.reason})` : ""}; reconnecting (${delays.length} attempts)`);
    let last = "no attempt made";
    for (const [index, ms] of delays.entries()) {
      const attempt = `attempt ${index + 1}/${delays.length}`;
      log(`${where(host)}: reconnect ${attempt} in ${ms / 1000} s`);
      await sleep(ms, signal);
      if (signal.aborted) throw interrupted();
      if (this.closed) throw new Error(`${where(host)}: connections are closed`);
      try {
        // One try per attempt: the pauses here are the backoff.
        const fresh = await this.options.connect(host, { signal, log, deadlineMs: 0 });
        if (this.closed || signal.aborted) {
          // Teardown began while we were connecting: this one must not outlive the others.
          closeConnection(fresh);
          throw signal.aborted ? interrupted() : new Error(`${where(host)}: connections are closed`);
        }
        this.adopt(host.role, fresh);
        log(`${where(host)}: reconnected (${attempt})`);
        return fresh;
      } catch (error) {
        if (signal.aborted) throw interrupted();
        if (this.closed) throw error;
        last = error instanceof Error ? error.message : String(error);
        log(`${where(host)}: reconnect ${attempt} failed: ${last}`);
      }
    }
    const failure = new ReconnectFailedError(`connection to ${host.role} lost; reconnect failed after ${delays.length} attempts: ${last}`);
    this.givenUp.set(host.role, failure);
    throw failure;
  }

  /** Closes every connection; safe to call more than once and while reconnects are in flight. */
  close(): void {
    this.closed = true;
    for (const ssh of this.open.values()) closeConnection(ssh);
  }
}
