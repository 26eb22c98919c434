import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import type { NodeSSH } from "node-ssh";
import { aliveCheck, connectionLost, execWithTimeout, findLoss, shellQuote, sleep } from "./ssh.ts";

export interface DetachedSpec {
  pidFile: string;
  outputFile: string;
  pollSeconds: number;
}

export interface DetachedOptions {
  spec: DetachedSpec;
  /** Local copy, appended to as the remote file grows. */
  localFile: string;
  deadline: number;
  getSsh: () => NodeSSH;
  /** A fresh connection after the old one dropped. */
  reconnect: () => Promise<NodeSSH>;
  signal?: AbortSignal;
  log: (message: string) => void;
  /**
   * Collection picks up where an earlier runner left it (`latlab resume` re-attaching to a client
   * it started): localFile already holds the first `bytes` bytes of the output file, whole lines.
   */
  continueFrom?: { bytes: number };
}

export interface DetachedOutcome {
  content: string;
  /**
   * Why collection ended: the client exited, the time ran out, the run was interrupted, or the
   * connection was lost for good (it dropped after the deadline, or reconnecting failed).
   */
  ended: "exited" | "deadline" | "interrupted" | "connection-lost" | "remote-failed";
  reconnects: number;
  /** What the measurement should say about how it was collected (empty when nothing to say). */
  warnings: string[];
}

/** A remote command could not be run or answered: the connection, not the host's disk or ours. */
class ConnectionLost extends Error {}

/** A remote command failed on a connection that is still up (a signal, a wedged command): retried on it, never reconnected. */
class RemoteFailed extends Error {}

/** Remote failures in a row, on a live connection, before collection gives up. */
export const REMOTE_FAILURES_TOLERATED = 3;

export { sleep };

/**
 * Follows a client running detached on its host: copies the bytes its output file gained since
 * the last look, every pollSeconds, into a local file, until the client exits. At the deadline
 * the client is stopped and the tail collected.
 *
 * A dropped SSH session is reconnected — after a pause of pollSeconds, and only for connection
 * errors — and collection resumes at the same offset; what the client already wrote stays on
 * the host either way. If the connection drops after the deadline or cannot be re-established,
 * collection ends with "connection-lost" and what was collected is returned, not thrown away.
 * A command that fails on a connection still up (killed by a signal…) is not a dropped
 * connection either: it is tried again at the next poll on the same connection, and after
 * REMOTE_FAILURES_TOLERATED in a row collection ends with "remote-failed", keeping what it has.
 * A local failure (e.g. our disk is full) is not a dropped connection: it is thrown.
 *
 * On interruption collection stops at once and returns what was collected: the runner closes
 * its SSH connections for teardown when the run is aborted, so neither the lines written since
 * the last poll nor stopping the client can be done here; teardown stops the client.
 */
export async function followDetached(options: DetachedOptions): Promise<DetachedOutcome> {
  const { spec, localFile, signal } = options;
  if (!options.continueFrom) writeFileSync(localFile, "");
  let offset = options.continueFrom?.bytes ?? 0;
  let remoteFailures = 0;
  let reconnects = 0;
  let ssh = options.getSsh();
  const pollMs = spec.pollSeconds * 1000;

  const remote = async (command: string, timeoutSeconds: number) => {
    try {
      return await execWithTimeout(ssh, command, timeoutSeconds, signal);
    } catch (error) {
      // Only a connection that is gone (or a command it never answered) is worth a new one.
      const message = (error as Error).message;
      if (findLoss(error) || connectionLost(ssh) || /^no answer /.test(message)) throw new ConnectionLost(message);
      throw new RemoteFailed(message);
    }
  };
  // Bytes travel base64-encoded (node-ssh trims text output) and only whole lines are taken
  // until the end, so the offset stays exact even while the client is mid-write.
  const fetchNew = async (final = false) => {
    const r = await remote(`tail -c +${offset + 1} ${shellQuote(spec.outputFile)} 2>/dev/null | base64 -w0`, 60);
    const bytes = Buffer.from(r.stdout.trim(), "base64");
    const end = final ? bytes.length : bytes.lastIndexOf(0x0a) + 1;
    if (end > 0) {
      try {
        appendFileSync(localFile, bytes.subarray(0, end));
      } catch (error) {
        throw new Error(`cannot keep ${spec.outputFile} in ${localFile}: ${(error as Error).message}; collection stopped`);
      }
      offset += end;
    }
  };
  const alive = async () => {
    const r = await remote(aliveCheck(`"$(cat ${shellQuote(spec.pidFile)} 2>/dev/null)"`), 20);
    return r.stdout.includes("alive");
  };
  const stop = () => remote(`kill "$(cat ${shellQuote(spec.pidFile)} 2>/dev/null)" 2>/dev/null; sleep 1; true`, 20);

  const outcome = (ended: DetachedOutcome["ended"], warnings: string[] = []): DetachedOutcome => {
    if (ended === "interrupted") warnings.push(`collection interrupted after ${offset} bytes; lines written since the last poll (up to ${spec.pollSeconds} s) were not collected`);
    if (ended === "deadline") warnings.push("collection ended by the deadline; the client was stopped and every record written until then is kept");
    if (reconnects) warnings.push(`SSH reconnected ${reconnects} time(s) while collecting; collection resumed where it stopped`);
    return { content: readFileSync(localFile, "utf8"), ended, reconnects, warnings };
  };
  const lost = (why: string) => {
    options.log(`gave up collecting: ${why}`);
    return outcome("connection-lost", [
      `connection lost while collecting (${why}); the ${offset} bytes collected until then are kept, records written later on the host were not collected`,
    ]);
  };

  for (;;) {
    if (signal?.aborted) return outcome("interrupted");
    try {
      await fetchNew();
      const running = await alive();
      // A whole poll answered: the failures counted are no longer in a row.
      remoteFailures = 0;
      if (!running) {
        await fetchNew(true);
        return outcome("exited");
      }
      if (Date.now() >= options.deadline) {
        await stop();
        await fetchNew(true);
        return outcome("deadline");
      }
    } catch (error) {
      // Interrupted: the connections are being closed for teardown; keep what was collected.
      if (signal?.aborted) return outcome("interrupted");
      if (error instanceof RemoteFailed) {
        if (++remoteFailures >= REMOTE_FAILURES_TOLERATED || Date.now() >= options.deadline) {
          options.log(`gave up collecting: ${error.message}`);
          return outcome("remote-failed", [
            `collection stopped: a command on the host failed ${remoteFailures} time(s) in a row on a live connection (${error.message}); the ${offset} bytes collected until then are kept`,
          ]);
        }
        options.log(`a command on the host failed while collecting (${error.message}); trying again in ${spec.pollSeconds} s on the same connection`);
        await sleep(pollMs, signal);
        continue;
      }
      if (!(error instanceof ConnectionLost)) throw error;
      if (Date.now() >= options.deadline) return lost(`${error.message}, after the deadline`);
      options.log(`lost the connection while collecting (${error.message}); reconnecting in ${spec.pollSeconds} s`);
      await sleep(pollMs, signal);
      if (signal?.aborted) return outcome("interrupted");
      try {
        ssh = await options.reconnect();
      } catch (reconnectError) {
        if (signal?.aborted) return outcome("interrupted");
        return lost(`${error.message}; reconnecting failed: ${(reconnectError as Error).message}`);
      }
      reconnects++;
      continue;
    }
    await sleep(Math.min(pollMs, Math.max(0, options.deadline - Date.now())), signal);
  }
}
