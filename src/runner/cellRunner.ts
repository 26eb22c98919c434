import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { NodeSSH } from "node-ssh";
import type { Cell } from "../plan/types.ts";
import type { Measurement } from "../results/schema.ts";
import { summarize } from "../results/summarize.ts";
import type { HostEndpoint } from "../targets/target.ts";
import { findTool } from "../tools/registry.ts";
import type { ClientOutput, ToolModule } from "../tools/types.ts";
import { followDetached } from "./detachedClient.ts";
import { execWithTimeout, shellQuote } from "./ssh.ts";

/** First port a measure's server listens on; measure i uses BASE_PORT + i. */
export const BASE_PORT = 11_000;

export interface CellContext {
  cell: Cell;
  client: { endpoint: HostEndpoint; ssh: NodeSSH; assetsDir: string };
  server: { endpoint: HostEndpoint; ssh: NodeSSH };
  runDir: string;
  signal?: AbortSignal;
  /**
   * A new client connection after `failed` dropped (detached clients keep collecting). Gives
   * the connection that replaced `failed` when another cell replaced it already.
   */
  reconnectClient?: (failed: NodeSSH) => Promise<NodeSSH>;
  log?: (message: string) => void;
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

/**
 * Runs one cell's client and turns what it printed into a Measurement. Never throws: a
 * failure becomes a failed measurement with its error, and everything the tool printed is
 * kept under raw/ either way.
 */
export async function runCell(ctx: CellContext, tool: ToolModule = findTool(ctx.cell.tool)!): Promise<{ measurement: Measurement; samples: number[] }> {
  const { cell } = ctx;
  const startedAt = new Date().toISOString();
  const slug = cellSlug(cell.id);
  const rawDir = join(ctx.runDir, "raw", slug);
  mkdirSync(rawDir, { recursive: true });
  const raw: string[] = [];
  const warnings: string[] = [];
  const keep = (name: string, text: string) => {
    writeFileSync(join(rawDir, name), text);
    raw.push(join("raw", slug, name));
  };
  const base = { ...cellFields(cell), startedAt };
  const fail = (error: string) => failedCell(cell, error, { startedAt, warnings, raw });

  const targetAddress = cell.path === "public" ? ctx.server.endpoint.publicAddress : ctx.server.endpoint.privateAddress;
  if (!targetAddress) return fail(`${cell.to} has no ${cell.path} address on this target`);
  const workDir = join(ctx.client.endpoint.workDir, slug);
  const spec = tool.client({ targetAddress, port: BASE_PORT + cell.measure, workDir, assetsDir: ctx.client.assetsDir }, cell.params);
  keep("command.txt", `${spec.command}\n`);
  try {
    const mk = await execWithTimeout(ctx.client.ssh, `mkdir -p ${shellQuote(workDir)}`, 10, ctx.signal);
    if (mk.exitCode !== 0) return fail(`${cell.from}: cannot create ${workDir}: ${mk.stderr.trim()}`);
    const files: Record<string, string> = {};
    // The client's connection; a detached client's may be replaced while it is followed.
    let clientSsh = ctx.client.ssh;
    let skipFiles = false;
    let run;
    if (spec.detached) {
      const start = await execWithTimeout(ctx.client.ssh, spec.command, 30, ctx.signal);
      keep("stdout.txt", start.stdout);
      keep("stderr.txt", start.stderr);
      if (start.exitCode !== 0) return fail(`${cell.tool} on ${cell.from} did not start: ${(start.stderr || start.stdout).trim()}`);
      const localName = spec.detached.outputFile.split("/").pop()!;
      // Listed before following: what was collected is kept under raw/ even if following fails.
      raw.push(join("raw", slug, localName));
      const followed = await followDetached({
        spec: spec.detached,
        localFile: join(rawDir, localName),
        deadline: Date.now() + spec.timeoutSeconds * 1000,
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
      const done = await execWithTimeout(ctx.client.ssh, spec.command, spec.timeoutSeconds, ctx.signal);
      keep("stdout.txt", done.stdout);
      keep("stderr.txt", done.stderr);
      if (done.timedOut) return fail(`${cell.tool} on ${cell.from} timed out after ${spec.timeoutSeconds} s`);
      run = done;
    }
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
    const output: ClientOutput = { stdout: run.stdout, stderr: run.stderr, exitCode: run.exitCode, files };
    const result = tool.parse(output, cell.params);
    const summary = summarize(result);
    let samplesFile: string | undefined;
    if (result.samples.length) {
      samplesFile = join("samples", `${slug}.txt`);
      mkdirSync(join(ctx.runDir, "samples"), { recursive: true });
      writeFileSync(join(ctx.runDir, samplesFile), `${result.samples.join("\n")}\n`);
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
      },
      samples: result.samples,
    };
  } catch (error) {
    return fail((error as Error).message);
  }
}
