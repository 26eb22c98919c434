import { constants } from "node:os";
import type { NodeSSH } from "node-ssh";
import type { HostEndpoint } from "../targets/target.ts";
import type { ToolModule } from "../tools/types.ts";
import { aliveCheck, execWithTimeout, shellQuote } from "./ssh.ts";

export interface RunningServer {
  tool: string;
  host: string;
  port: number;
  pid: number;
  log: string;
  /** Where the server's exit status is written when it ends (servers started before this field: absent). */
  status?: string;
}

/** How long a started server may take to listen on its port. */
export const LISTEN_TIMEOUT_MS = 15_000;

/** The check that a server's own pid holds a listening TCP or bound UDP socket on its port. */
const listeningCheck = (port: number, pid: string) => `ss -Hlnptu 'sport = :${port}' | grep -q "pid=${pid}," && echo listening`;

/**
 * Starts a tool's server detached (it outlives this SSH session) and waits until its port
 * listens. Returns undefined for tools without a server.
 *
 * The server writes its pid next to its log. A server of ours that still holds the port — one
 * whose start was answered on a connection that then dropped, so latlab never learnt its pid —
 * is stopped first, so the new one does not die of "address already in use".
 */
export async function startServer(
  ssh: NodeSSH,
  endpoint: HostEndpoint,
  tool: ToolModule,
  params: unknown,
  port: number,
  assetsDir: string,
  signal?: AbortSignal,
  /** The one address the server listens on (the runner passes the path's own: never the management network). */
  bindAddress = "0.0.0.0",
  /**
   * A server of ours already listening there is kept, not restarted: `latlab resume` re-attaching
   * to a detached client whose connection to that server must not break.
   */
  options: { reuse?: boolean } = {},
): Promise<RunningServer | undefined> {
  const workDir = `${endpoint.workDir}/servers`;
  const spec = tool.server({ bindAddress, port, workDir, assetsDir }, params);
  if (!spec) return undefined;
  // One server per port and address: the private and the public path may each have one on the port.
  const name = `${tool.name}-${spec.port}${bindAddress === "0.0.0.0" ? "" : `-${bindAddress}`}`;
  const log = `${workDir}/${name}.log`;
  const pidFile = `${workDir}/${name}.pid`;
  const statusFile = `${workDir}/${name}.status`;
  // Only a pid that holds our port is stopped: a pid in an old file may belong to anyone by now.
  const stale = `if [ -f ${shellQuote(pidFile)} ]; then p=$(cat ${shellQuote(pidFile)}); if ${listeningCheck(spec.port, "$p")} >/dev/null; then kill "$p"; sleep 0.2; kill -9 "$p" 2>/dev/null; fi; rm -f ${shellQuote(pidFile)}; fi`;
  const where = `${endpoint.deployment}/${endpoint.role}`;
  if (options.reuse) {
    const found = await execWithTimeout(ssh, `p=$(cat ${shellQuote(pidFile)} 2>/dev/null) && ${listeningCheck(spec.port, "$p")} && echo "pid=$p"`, 10, signal);
    const pid = Number(/pid=(\d+)/.exec(found.stdout)?.[1]);
    if (pid > 0) return { tool: tool.name, host: where, port: spec.port, pid, log, status: statusFile };
  }
  // The server runs under a small sh that waits for it and writes its exit status: a server that
  // dies mid-run (killed, crashed) is then reported with how it ended, not only by the client's
  // symptom ("connection closed by peer"). The pid file holds the server's own pid (the one that
  // holds the port); the start answers it once written. spec.command is one simple command.
  const wrapper = `${spec.command} & echo $! > ${shellQuote(pidFile)}; wait $!; echo $? > ${shellQuote(statusFile)}`;
  const start = `mkdir -p ${shellQuote(workDir)} && cd ${shellQuote(workDir)} && { ${stale}; } && rm -f ${shellQuote(statusFile)} && (setsid sh -c ${shellQuote(wrapper)} > ${shellQuote(log)} 2>&1 < /dev/null &) && i=0 && while [ ! -s ${shellQuote(pidFile)} ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i+1)); done; cat ${shellQuote(pidFile)}`;
  const started = await execWithTimeout(ssh, start, 15, signal);
  const pid = Number(started.stdout.trim());
  if (started.exitCode !== 0 || !Number.isInteger(pid) || pid <= 0) {
    throw new Error(`${where}: could not start ${tool.name} server: ${started.stderr.trim() || started.stdout.trim()}`);
  }
  let gone = false;
  try {
    const deadline = Date.now() + LISTEN_TIMEOUT_MS;
    for (;;) {
      // Ready = this server's own pid holds a listening TCP or bound UDP socket on the port; a
      // socket someone else holds there does not count.
      const check = await execWithTimeout(ssh, `${listeningCheck(spec.port, String(pid))}; ${aliveCheck(String(pid))}`, 10, signal);
      if (check.stdout.includes("gone")) {
        gone = true;
        const out = await execWithTimeout(ssh, `tail -n 20 ${shellQuote(log)}`, 10, signal);
        throw new Error(`${where}: ${tool.name} server exited at start: ${out.stdout.trim() || "(no output)"}`);
      }
      if (check.stdout.includes("listening")) return { tool: tool.name, host: where, port: spec.port, pid, log, status: statusFile };
      if (Date.now() > deadline) throw new Error(`${where}: ${tool.name} server not listening on port ${spec.port} after ${LISTEN_TIMEOUT_MS / 1000} s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (error) {
    // The pid is known: a server that did not become ready must not linger and hold the port
    // when the next cell starts one there. Best effort; the original error is what matters.
    if (!gone) await stopServer(ssh, { tool: tool.name, host: where, port: spec.port, pid, log, status: statusFile }).catch(() => undefined);
    throw error;
  }
}

/**
 * Whether a started server still runs and listens on its port: after its host's connection was
 * replaced, it may have gone with the old one.
 */
export async function serverRunning(ssh: NodeSSH, server: RunningServer, signal?: AbortSignal): Promise<boolean> {
  const check = await execWithTimeout(ssh, `${listeningCheck(server.port, String(server.pid))}; ${aliveCheck(String(server.pid))}`, 10, signal);
  return check.stdout.includes("listening") && check.stdout.includes("alive");
}

/** "killed by SIGKILL", "exit code 1": an exit status as sh's `$?` gives it. */
export function describeExitStatus(status: number): string {
  if (status > 128) {
    const name = Object.entries(constants.signals).find(([, n]) => n === status - 128)?.[0];
    return `killed by ${name ?? `signal ${status - 128}`}`;
  }
  return `exit code ${status}`;
}

/**
 * Undefined while the server runs and listens on its port; otherwise what happened to it, named
 * as a cell's first cause: "the sockperf server on d0/server exited (killed by SIGKILL); its log
 * ends: …". Checked before every cell (a dead server is restarted) and after a failed cell.
 */
export async function serverExit(ssh: NodeSSH, server: RunningServer, signal?: AbortSignal): Promise<string | undefined> {
  const pid = String(server.pid);
  const status = server.status ? `echo "status=$(cat ${shellQuote(server.status)} 2>/dev/null)"` : "true";
  const check = await execWithTimeout(ssh, `${listeningCheck(server.port, pid)}; ${aliveCheck(pid)}; ${status}`, 10, signal);
  const gone = check.stdout.includes("gone");
  if (check.stdout.includes("listening") && !gone) return undefined;
  const code = /status=(\d+)/.exec(check.stdout)?.[1];
  const how = code !== undefined ? describeExitStatus(Number(code)) : gone ? `pid ${pid} is gone` : `pid ${pid} runs but no longer listens on port ${server.port}`;
  const tail = await execWithTimeout(ssh, `tail -n 3 ${shellQuote(server.log)} 2>/dev/null`, 10, signal).catch(() => undefined);
  const log = tail?.stdout.trim().split("\n").filter(Boolean).join(" | ").slice(0, 300);
  return `the ${server.tool} server on ${server.host} ${gone || code !== undefined ? "exited" : "stopped listening"} (${how})${log ? `; its log ends: ${log}` : ""}`;
}

export async function stopServer(ssh: NodeSSH, server: RunningServer): Promise<void> {
  await stopServers(ssh, [server]);
}

/**
 * Stops a host's servers in one command: SIGTERM to all, then SIGKILL to any still there after up
 * to 2 s. Waits only as long as one is still running (usually a few ms), not a fixed pause per
 * server: a run stops a server per measure and deployment.
 */
export async function stopServers(ssh: NodeSSH, servers: readonly RunningServer[]): Promise<void> {
  if (servers.length === 0) return;
  const pids = servers.map((s) => String(s.pid)).join(" ");
  const anyAlive = `for p in ${pids}; do s=$(ps -o stat= -p "$p" 2>/dev/null); case "$s" in ""|Z*) ;; *) exit 0;; esac; done; exit 1`;
  await execWithTimeout(ssh, `kill ${pids} 2>/dev/null; i=0; while [ $i -lt 40 ] && (${anyAlive}); do sleep 0.05; i=$((i+1)); done; kill -9 ${pids} 2>/dev/null; true`, 10);
}
