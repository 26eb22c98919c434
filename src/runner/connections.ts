import type { NodeSSH } from "node-ssh";
import type { HostEndpoint } from "../targets/target.ts";
import type { ConnectOptions } from "./ssh.ts";

/** Opens a connection to a host (connectHost; tests pass a fake). */
export type Connect = (endpoint: HostEndpoint, options: ConnectOptions) => Promise<NodeSSH>;

export interface HostConnectionsOptions {
  connect: Connect;
  /** The run's signal: aborting it stops connecting and fails what is in flight. */
  signal: AbortSignal;
  log: (message: string) => void;
}

const where = (h: HostEndpoint) => `${h.deployment}/${h.role}`;

/** The error, named after the host unless it already is. */
const naming = (host: HostEndpoint, error: unknown): Error => {
  const message = error instanceof Error ? error.message : String(error);
  return message.startsWith(where(host)) ? (error as Error) : new Error(`${where(host)}: ${message}`);
};

/**
 * The SSH connections to one deployment's hosts, by role. Every connection it ever opened is
 * closed by close(), also those that opened while another host failed, and a dropped
 * connection is replaced only once however many cells notice it.
 */
export class HostConnections {
  private readonly open = new Map<string, NodeSSH>();
  private readonly reconnecting = new Map<string, Promise<NodeSSH>>();
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
            pool.open.set(host.role, ssh);
            if (cancel.signal.aborted) throw new Error("connection aborted");
            await prepare(host, ssh, cancel.signal);
          } catch (error) {
            // The first failure is the cause; siblings then fail because they were cancelled.
            failures.push(naming(host, error));
            if (!cancel.signal.aborted) cancel.abort();
            // Closing makes a wedged exec on this connection give up at once.
            pool.open.get(host.role)?.dispose();
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

  /** The endpoint of a role; an error naming deployment and role when the target has none. */
  endpoint(role: string): HostEndpoint {
    const host = this.hosts.find((h) => h.role === role);
    if (!host) throw new Error(`${this.deployment}: the target brought up no host "${role}" (it has ${this.hosts.map((h) => h.role).join(", ") || "none"})`);
    return host;
  }

  /** The current connection to a role. */
  get(role: string): NodeSSH {
    const ssh = this.open.get(role);
    if (!ssh) throw new Error(`${this.deployment}/${role}: ${this.closed ? "connections are closed" : "not connected"}`);
    return ssh;
  }

  /**
   * Replaces `failed`, the connection a caller saw drop, and returns its successor. When the
   * role's connection is no longer `failed` (another cell replaced it already) that one is
   * returned as is, and callers that notice the same drop at the same time share one
   * reconnect: a fresh connection is never closed under a cell that just got it.
   */
  reconnect(role: string, failed: NodeSSH): Promise<NodeSSH> {
    const inFlight = this.reconnecting.get(role);
    if (inFlight) return inFlight;
    const current = this.open.get(role);
    if (this.closed) return Promise.reject(new Error(`${this.deployment}/${role}: connections are closed`));
    if (current && current !== failed) return Promise.resolve(current);
    const host = this.endpoint(role);
    const attempt = (async () => {
      failed.dispose();
      const fresh = await this.options.connect(host, { signal: this.options.signal, log: this.options.log });
      if (this.closed) {
        // Teardown began while we were connecting: this one must not outlive the others.
        fresh.dispose();
        throw new Error(`${where(host)}: connections are closed`);
      }
      this.open.set(role, fresh);
      return fresh;
    })();
    this.reconnecting.set(role, attempt);
    const forget = () => {
      if (this.reconnecting.get(role) === attempt) this.reconnecting.delete(role);
    };
    attempt.then(forget, forget);
    return attempt;
  }

  /** Closes every connection; safe to call more than once and while reconnects are in flight. */
  close(): void {
    this.closed = true;
    for (const ssh of this.open.values()) ssh.dispose();
  }
}
