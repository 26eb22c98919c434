import { existsSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import type { NodeSSH } from "node-ssh";
import type { Cell } from "../plan/types.ts";
import { RunFiles } from "../results/runFiles.ts";
import type { Measurement } from "../results/schema.ts";
import { summarize } from "../results/summarize.ts";
import type { HostCheck, HostEndpoint } from "../targets/target.ts";
import { findTool } from "../tools/registry.ts";
import type { ClientOutput, ToolModule } from "../tools/types.ts";
import { followDetached } from "./detachedClient.ts";
import { DETACHED_STATE_FILE, type DetachedState } from "./detachedState.ts";
import { serverExit, type RunningServer } from "./servers.ts";
import { ConnectionLostError, connectionLost, execWithTimeout, lostDuring, shellQuote } from "./ssh.ts";

/** First port a measure's server listens on; measure i uses BASE_PORT + i. */
export const BASE_PORT = 11_000;

export interface CellContext {
  cell: Cell;
  client: { endpoint: HostEndpoint; ssh: NodeSSH; assetsDir: string };
  /** `process`: the tool's server this cell's client talks to (none for ping): checked when the cell fails, to name its death as the cause. */
  server: { endpoint: HostEndpoint; ssh: NodeSSH; process?: RunningServer | undefined };
  /**
   * The target's check of the deployment's hosts' network (Target.checkHosts), run before the
   * client (restores what a link flap took; a link still down fails the cell at once, naming
   * it) and after a failure (a route lost or a link down during the cell is its first cause).
   */
  checkNetwork?: () => Promise<HostCheck>;
  /** What the runner did for this cell before it (a dead server restarted), kept as warnings. */
  notes?: readonly string[];
  runDir: string;
  /** Where the cell's raw and samples files go (runDir, or a rescue folder when it fails); made from runDir when absent. */
  files?: RunFiles;
  signal?: AbortSignal;
  /**
   * A new client connection after `failed` dropped (detached clients keep collecting). Gives
   * the connection that replaced `failed` when another cell replaced it already.
   */
  reconnectClient?: (failed: NodeSSH) => Promise<NodeSSH>;
  log?: (message: string) => void;
  /**
   * The cell's detached client was started by a runner that died (`latlab resume` on the same
   * hosts): it is not started again but collected from where that runner's copy stops.
   */
  reattach?: { state: DetachedState; earlierRawDir: string };
  /** The cell's work directory exists on the client host already (the runner made every cell's at once, before measuring). */
  workDirReady?: boolean;
}

/** The fields of a measurement that come straight from its cell. */
export function cellFields(cell: Cell) {
  const { id, measure, variant, deployment, tool, params, from, to, path, pathKind, replica, repetition } = cell;
  return { cell: id, measure, variant, deployment, tool, params, from, to, path, pathKind, replica, repetition };
}

/**
 * A cell that failed: never reached, server failed, host unreachable — or ran and failed, in
 * which case `ran` keeps when it started and what it left under raw/.
 */
export function failedCell(
  cell: Cell,
  error: string,
  ran: { startedAt?: string; warnings?: readonly string[]; raw?: readonly string[] } = {},
): { measurement: Measurement; samples: number[] } {
  const now = new Date().toISOString();
  return {
    measurement: { ...cellFields(cell), status: "failed", error, startedAt: ran.startedAt ?? now, finishedAt: now, warnings: [...(ran.warnings ?? [])], raw: [...(ran.raw ?? [])] },
    samples: [],
  };
}

/** A file-system-safe name for a cell's raw-output folder. */
export const cellSlug = (cellId: string) => cellId.replace(/[^A-Za-z0-9._=-]+/g, "_");

/** Where a cell's client works on its host (its output files, a detached client's pid file). */
export const cellWorkDir = (clientWorkDir: string, cellId: string) => join(clientWorkDir, cellSlug(cellId));

/**
 * Runs one cell's client and turns what it printed into a Measurement. Never throws: a
 * failure becomes a failed measurement with its error, and everything the tool printed is
 * kept under raw/ either way.
 *
 * The client's connection dropping fails the cell as `connection to <host> (<address>) lost at
 * <time> during <tool> client`; what came back on it is never parsed. The server's connection
 * dropping during the cell does not touch the client's output: that is parsed as usual, and the
 * loss is a warning, or the cause named first when the output cannot be read.
 */
export async function runCell(ctx: CellContext, tool: ToolModule = findTool(ctx.cell.tool)!): Promise<{ measurement: Measurement; samples: number[] }> {
  const { cell } = ctx;
  const started = new Date();
  const setupStarted = performance.now();
  const targetAddress = cell.path === "public" ? ctx.server.endpoint.publicAddress : ctx.server.endpoint.privateAddress;
  const workDir = cellWorkDir(ctx.client.endpoint.workDir, cell.id);
  const spec = targetAddress ? tool.client({ targetAddress, port: BASE_PORT + cell.measure, workDir, assetsDir: ctx.client.assetsDir }, cell.params) : undefined;
  // Re-attached only to the very client this cell would start: same files, on the same host.
  const offered = ctx.reattach;
  const again =
    offered && spec?.detached && offered.state.cell === cell.id && offered.state.pidFile === spec.detached.pidFile && offered.state.outputFile === spec.detached.outputFile && offered.state.hostKey === ctx.client.endpoint.hostKey
      ? offered
      : undefined;
  // A re-attached cell began when its client was started, by the runner that died.
  const startedAt = again?.state.startedAt ?? started.toISOString();
  const slug = cellSlug(cell.id);
  const store = ctx.files ?? new RunFiles(ctx.runDir, { runId: basename(ctx.runDir) });
  const raw: string[] = [];
  const warnings: string[] = [...(ctx.notes ?? [])];
  // Written inside the cell's own error handling: a file that can be written nowhere fails this
  // cell, naming it, and no other; one the results folder refused is kept in the rescue folder.
  const put = (rel: string, text: string) => {
    const where = store.write(rel, text);
    if (where !== store.inRunFolder(rel)) warnings.push(`${rel} is in ${where}: the results folder could not take it`);
    return where;
  };
  const keep = (name: string, text: string) => {
    const rel = join("raw", slug, name);
    put(rel, text);
    raw.push(rel);
  };
  /** What the client printed so far, kept when the command ends without an answer (Ctrl-C, a lost connection). */
  const partial = { stdout: "", stderr: "" };
  const streaming = { onStdout: (c: Buffer) => void (partial.stdout += c.toString()), onStderr: (c: Buffer) => void (partial.stderr += c.toString()) };
  const keepPartial = () => {
    if (!partial.stdout && !partial.stderr) return;
    try {
      keep("stdout.txt", partial.stdout);
      keep("stderr.txt", partial.stderr);
      warnings.push("stdout.txt and stderr.txt hold what the client printed before it was cut off");
    } catch {
      // Said by the storage already; the cell's own error is the one to report.
    }
  };
  const base = { ...cellFields(cell), startedAt };
  const fail = (error: string) => failedCell(cell, error, { startedAt, warnings, raw });
  /**
   * A cell that failed after its client started: what the client said is often only a symptom
   * ("connection closed by peer", "Network is unreachable"). Named first when found: the
   * server's death, a link down or routes the kernel dropped (restored now for the next cell).
   */
  const failWithCause = async (error: string) => {
    const causes: string[] = [];
    const net = await ctx.checkNetwork?.().catch((e: unknown) => ({ restored: [], problems: [`could not check the hosts' network: ${(e as Error).message}`] }));
    if (net) causes.push(...net.problems, ...net.restored.map((r) => `during the cell, ${r}`));
    const server = ctx.server.process;
    if (server) {
      const exited = await serverExit(ctx.server.ssh, server, ctx.signal).catch(() => undefined);
      if (exited) causes.push(exited);
    }
    return fail(causes.length ? `${causes.join("; ")}; then: ${error}` : error);
  };

  if (!targetAddress || !spec) return fail(`${cell.to} has no ${cell.path} address on this target`);
  if (ctx.checkNetwork && !again) {
    // Before the client: a link that came back has its routes again; one still down fails this cell now, naming it.
    const net = await ctx.checkNetwork().catch((e: unknown) => ({ restored: [], problems: [`could not check the hosts' network: ${(e as Error).message}`] }));
    for (const r of net.restored) {
      warnings.push(`before this cell, ${r}`);
      ctx.log?.(`${cell.id}: ${r}`);
    }
    if (net.problems.length) return fail(`not measured: ${net.problems.join("; ")}`);
  }
  if (offered && !again) warnings.push(`not re-attached: the client the earlier runner started (${offered.state.outputFile} on ${offered.state.host}) is not this cell's on this host; measured again`);
  try {
    keep("command.txt", `${spec.command}\n`);
    if (!again && !ctx.workDirReady) {
      const mk = await execWithTimeout(ctx.client.ssh, `mkdir -p ${shellQuote(workDir)}`, 10, ctx.signal);
      if (mk.exitCode !== 0) return fail(`${cell.from}: cannot create ${workDir}: ${mk.stderr.trim()}`);
    }
    const files: Record<string, string> = {};
    // The client's connection; a detached client's may be replaced while it is followed.
    let clientSsh = ctx.client.ssh;
    let skipFiles = false;
    let run;
    const clientStarted = performance.now();
    if (spec.detached) {
      const localName = spec.detached.outputFile.split("/").pop()!;
      let start: { stdout: string; stderr: string };
      let localFile: string;
      let deadline: number;
      let continueFrom: { bytes: number } | undefined;
      if (again) {
        // The client an earlier runner started is still running (or finished) on its host: what
        // that runner collected is carried over, and collection goes on from where it stopped.
        const earlier = (name: string) => {
          const file = join(again.earlierRawDir, name);
          return existsSync(file) ? readFileSync(file) : undefined;
        };
        start = { stdout: earlier("stdout.txt")?.toString() ?? "", stderr: earlier("stderr.txt")?.toString() ?? "" };
        keep("stdout.txt", start.stdout);
        keep("stderr.txt", start.stderr);
        const collected = earlier(again.state.localName) ?? Buffer.alloc(0);
        // Whole lines only: a line the earlier runner was cut off in the middle of is fetched again.
        const whole = collected.subarray(0, collected.lastIndexOf(0x0a) + 1);
        localFile = put(join("raw", slug, localName), whole.toString());
        raw.push(join("raw", slug, localName));
        put(join("raw", slug, DETACHED_STATE_FILE), `${JSON.stringify(again.state, null, 2)}\n`);
        raw.push(join("raw", slug, DETACHED_STATE_FILE));
        deadline = Date.parse(again.state.deadline);
        continueFrom = { bytes: whole.length };
        warnings.push(
          `re-attached by latlab resume at ${started.toISOString()} to the client started at ${again.state.startedAt} (its runner died): the ${whole.length} bytes collected before are kept, the rest was collected from the host, where the client kept writing`,
        );
      } else {
        const launched = await execWithTimeout(ctx.client.ssh, spec.command, 30, ctx.signal);
        start = launched;
        keep("stdout.txt", launched.stdout);
        keep("stderr.txt", launched.stderr);
        if (launched.exitCode !== 0) return await failWithCause(`${cell.tool} on ${cell.from} did not start: ${(launched.stderr || launched.stdout).trim()}`);
        deadline = Date.now() + spec.timeoutSeconds * 1000;
        // Created (in the results folder, or the rescue folder) and listed before following: what
        // was collected is kept under raw/ even if following fails.
        localFile = put(join("raw", slug, localName), "");
        raw.push(join("raw", slug, localName));
        // From here the client runs without us: if this runner dies, `latlab resume` finds it by this.
        const state: DetachedState = {
          cell: cell.id,
          host: `${cell.deployment}/${cell.from}`,
          hostKey: ctx.client.endpoint.hostKey,
          pidFile: spec.detached.pidFile,
          outputFile: spec.detached.outputFile,
          localName,
          pollSeconds: spec.detached.pollSeconds,
          startedAt,
          deadline: new Date(deadline).toISOString(),
        };
        put(join("raw", slug, DETACHED_STATE_FILE), `${JSON.stringify(state, null, 2)}\n`);
        raw.push(join("raw", slug, DETACHED_STATE_FILE));
      }
      const followed = await followDetached({
        spec: spec.detached,
        localFile,
        deadline,
        ...(continueFrom ? { continueFrom } : {}),
        getSsh: () => clientSsh,
        reconnect: async () => {
          if (!ctx.reconnectClient) throw new Error("no way to reconnect");
          clientSsh = await ctx.reconnectClient(clientSsh);
          return clientSsh;
        },
        ...(ctx.signal ? { signal: ctx.signal } : {}),
        log: (m) => ctx.log?.(`${cell.id}: ${m}`),
      });
      files[spec.detached.outputFile] = followed.content;
      run = { stdout: start.stdout, stderr: start.stderr, exitCode: 0 };
      warnings.push(...followed.warnings);
      // Without a connection the other files cannot be fetched; parse what was collected.
      if (followed.ended === "connection-lost") skipFiles = true;
    } else {
      const done = await execWithTimeout(ctx.client.ssh, spec.command, spec.timeoutSeconds, ctx.signal, streaming).catch((error: unknown) => {
        keepPartial();
        throw error;
      });
      keep("stdout.txt", done.stdout);
      keep("stderr.txt", done.stderr);
      if (done.timedOut) return await failWithCause(`${cell.tool} on ${cell.from} timed out after ${spec.timeoutSeconds} s`);
      run = done;
    }
    const clientEnded = performance.now();
    for (const file of spec.files) {
      if (file in files) continue;
      if (skipFiles) {
        warnings.push(`not fetched: ${file} (no connection)`);
        continue;
      }
      const got = await execWithTimeout(clientSsh, `cat ${shellQuote(file)}`, 60, ctx.signal).catch((error: Error) => {
        // A detached client's records are collected already: a side file is not worth losing them.
        if (!spec.detached) throw error;
        warnings.push(`could not fetch ${file}: ${error.message}`);
        return undefined;
      });
      if (got?.exitCode === 0) {
        files[file] = got.stdout;
        keep(file.split("/").pop()!, got.stdout);
      }
    }
    const collected = performance.now();
    const output: ClientOutput = { stdout: run.stdout, stderr: run.stderr, exitCode: run.exitCode, files };
    // The server's host dropped its connection while this cell ran (its server runs detached).
    const serverLost = connectionLost(ctx.server.ssh);
    const serverLoss = serverLost && serverLost.at >= started ? lostDuring(ctx.server.endpoint, new ConnectionLostError(serverLost), `${cell.tool} server`) : undefined;
    let result;
    try {
      result = tool.parse(output, cell.params);
    } catch (error) {
      if (serverLoss) return fail(`${serverLoss}; then: ${(error as Error).message}`);
      return await failWithCause((error as Error).message);
    }
    if (serverLoss) warnings.push(`${serverLoss}; the client's output does not travel on that connection and is kept`);
    const summary = summarize(result);
    let samplesFile: string | undefined;
    if (result.samples.length) {
      samplesFile = join("samples", `${slug}.txt`);
      put(samplesFile, `${result.samples.join("\n")}\n`);
    }
    const reported = result.reported
      ? Object.fromEntries(Object.entries(result.reported).filter((e): e is [string, number | string] => e[1] !== undefined))
      : undefined;
    return {
      measurement: {
        ...base,
        status: "ok",
        finishedAt: new Date().toISOString(),
        ...(summary ? { summary } : {}),
        ...(reported ? { reported } : {}),
        warnings: [...warnings, ...result.warnings],
        raw,
        ...(samplesFile ? { samplesFile } : {}),
        timing: {
          // The cell's own setup (its work folder); the runner adds what it spent preparing the cell.
          setupSeconds: (clientStarted - setupStarted) / 1000,
          clientSeconds: (clientEnded - clientStarted) / 1000,
          collectSeconds: (collected - clientEnded) / 1000,
          parseSeconds: (performance.now() - collected) / 1000,
          measurementSeconds: tool.measurementSeconds(cell.params),
        },
      },
      samples: result.samples,
    };
  } catch (error) {
    const lost = lostDuring(ctx.client.endpoint, error, `${cell.tool} client`);
    // The client's host cut off: its network and the server are not what failed this cell.
    return lost ? fail(lost) : await failWithCause((error as Error).message);
  }
}
