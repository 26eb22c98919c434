import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import type { NodeSSH } from "node-ssh";
import { aliveCheck, execWithTimeout, shellQuote } from "./ssh.ts";

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
}

export interface DetachedOutcome {
  content: string;
  /** Why collection ended: the client exited, the time ran out, or the run was interrupted. */
  ended: "exited" | "deadline" | "interrupted";
  reconnects: number;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => (clearTimeout(t), resolve()), { once: true });
  });

/**
 * Follows a client running detached on its host: copies the bytes its output file gained since
 * the last look, every pollSeconds, into a local file, until the client exits. A dropped SSH
 * session is reconnected and collection resumes at the same offset; what the client already
 * wrote stays on the host either way. At the deadline or on interruption the client is stopped
 * and the tail collected.
 */
export async function followDetached(options: DetachedOptions): Promise<DetachedOutcome> {
  const { spec, localFile } = options;
  writeFileSync(localFile, "");
  let offset = 0;
  let reconnects = 0;
  let ssh = options.getSsh();

  // Bytes travel base64-encoded (node-ssh trims text output) and only whole lines are taken
  // until the end, so the offset stays exact even while the client is mid-write.
  const fetchNew = async (final = false) => {
    const r = await execWithTimeout(ssh, `tail -c +${offset + 1} ${shellQuote(spec.outputFile)} 2>/dev/null | base64 -w0`, 60);
    const bytes = Buffer.from(r.stdout.trim(), "base64");
    const end = final ? bytes.length : bytes.lastIndexOf(0x0a) + 1;
    if (end > 0) {
      appendFileSync(localFile, bytes.subarray(0, end));
      offset += end;
    }
  };
  const alive = async () => {
    const r = await execWithTimeout(ssh, aliveCheck(`"$(cat ${shellQuote(spec.pidFile)} 2>/dev/null)"`), 20);
    return r.stdout.includes("alive");
  };
  const stop = () => execWithTimeout(ssh, `kill "$(cat ${shellQuote(spec.pidFile)} 2>/dev/null)" 2>/dev/null; sleep 1; true`, 20);

  let ended: DetachedOutcome["ended"] = "exited";
  for (;;) {
    try {
      await fetchNew();
      if (!(await alive())) {
        await fetchNew(true);
        break;
      }
      if (options.signal?.aborted || Date.now() >= options.deadline) {
        ended = options.signal?.aborted ? "interrupted" : "deadline";
        await stop();
        await fetchNew(true);
        break;
      }
    } catch (error) {
      // Interrupted: the connections are being closed for teardown; keep what was collected.
      if (options.signal?.aborted) return { content: readFileSync(localFile, "utf8"), ended: "interrupted", reconnects };
      if (Date.now() >= options.deadline) throw error;
      options.log(`lost the connection while collecting (${(error as Error).message}); reconnecting`);
      ssh = await options.reconnect();
      reconnects++;
      continue;
    }
    await sleep(Math.min(options.spec.pollSeconds * 1000, Math.max(0, options.deadline - Date.now())), options.signal);
  }
  return { content: readFileSync(localFile, "utf8"), ended, reconnects };
}
