/**
 * `latlab cleanup`: removes what local runs whose runner is gone left on this machine —
 * processes in their namespaces (sshd, tool servers), root-side veths, namespaces, temp folders
 * holding their keys — from the runs' crash-safe records (runRecord.ts). A run whose owner is
 * alive and has not ended is never touched. Leftovers no record accounts for (an older latlab, a
 * record deleted by hand) are listed and removed only with `unrecorded: true`: nothing here can
 * tell whether their runner is alive.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { execCommand, type ExecFn } from "../exec.ts";
import { killNamespaceProcesses, namespacePids } from "../network/namespaceProcesses.ts";
import { parseLinkNames, parseNetnsList } from "../network/names.ts";
import { DEFAULT_KEYS_ROOT } from "../localTarget.ts";
import { currentBootId, localRunsDir, ownerAlive, readRunRecords, removeRunRecord, type RunRecord } from "./runRecord.ts";

const NAMESPACE = /^ll-([0-9a-f]{6})-/;
const ROOT_LINK = /^ll([0-9a-f]{6})-m/;
const TEMP_DIR = /^latlab-([0-9a-f]{6})-/;

export interface CleanupOptions {
  exec?: ExecFn;
  /** List only. */
  dryRun?: boolean;
  /** Also remove leftovers no record accounts for. */
  unrecorded?: boolean;
  recordsDir?: string;
  /** Folders runs make their temp and key folders in (default: os.tmpdir() and the local target's keys root). */
  tempRoots?: string[];
  log?: (message: string) => void;
  /** SIGTERM → SIGKILL grace for processes. */
  graceMs?: number;
  /**
   * Only the runs whose records this accepts (`latlab resume` finishing one run): the others are
   * neither reported nor touched, and leftovers no record accounts for are not even listed.
   */
  onlyRuns?: (record: RunRecord) => boolean;
}

export interface CleanupReport {
  /** Runs left alone: their runner is alive. */
  live: { runId: string; pid: number; runDir: string | null }[];
  /** Records of another boot, machine or container (their boot id is not this one's): not judged, not touched. */
  foreign: { runId: string; bootId: string }[];
  /** Dead runs handled: what each left (removed unless dry run). */
  runs: { runId: string; short: string; pid: number; runDir: string | null; items: string[] }[];
  /** Leftovers of no record, by short name. */
  unrecorded: { short: string; items: string[] }[];
  removed: string[];
  errors: string[];
  unreadableRecords: { file: string; error: string }[];
}

interface Found {
  namespaces: string[];
  links: string[];
  tempDirs: string[];
  /** Processes inside the run's namespaces (sshd's, tool servers). */
  inNamespaces: { pid: number; comm: string; namespace: string }[];
  /** Processes outside them still running a run's files (an sshd that never entered its namespace). */
  processes: { pid: number; cmdline: string }[];
}

function processesUsing(paths: readonly string[]): { pid: number; cmdline: string }[] {
  if (!paths.length) return [];
  const out: { pid: number; cmdline: string }[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ").trim();
    } catch {
      continue;
    }
    if (paths.some((p) => cmdline.includes(`${p}/`))) out.push({ pid: Number(entry), cmdline });
  }
  return out;
}

const describe = (f: Found) => [
  ...f.inNamespaces.map((p) => `process ${p.pid} (${p.comm}) in ${p.namespace}`),
  ...f.processes.map((p) => `process ${p.pid} (${p.cmdline.slice(0, 80)})`),
  ...f.links.map((l) => `link ${l}`),
  ...f.namespaces.map((n) => `namespace ${n}`),
  ...f.tempDirs.map((d) => `directory ${d}`),
];

export async function cleanupLocal(options: CleanupOptions = {}): Promise<CleanupReport> {
  const exec = options.exec ?? execCommand;
  const log = options.log ?? (() => {});
  const recordsDir = options.recordsDir ?? localRunsDir();
  const tempRoots = options.tempRoots ?? [tmpdir(), DEFAULT_KEYS_ROOT];
  const report: CleanupReport = { live: [], foreign: [], runs: [], unrecorded: [], removed: [], errors: [], unreadableRecords: [] };

  const { records, unreadable } = readRunRecords(recordsDir);
  report.unreadableRecords = unreadable;
  const netns = await exec(["ip", "netns", "list"]);
  const links = await exec(["ip", "-o", "link", "show"]);
  if (netns.code !== 0 || links.code !== 0) throw new Error(`cleanup: cannot list namespaces or links: ${(netns.stderr || links.stderr).trim()}`);
  const allNamespaces = parseNetnsList(netns.stdout);
  const allLinks = parseLinkNames(links.stdout);
  const allTemp = tempRoots.flatMap((root) => (existsSync(root) ? readdirSync(root).filter((d) => TEMP_DIR.test(d)).map((d) => join(root, d)) : []));
  const shortOf = (dir: string) => TEMP_DIR.exec(basename(dir))?.[1];

  const found = async (short: string, extraDirs: readonly string[] = []): Promise<Found> => {
    const tempDirs = [...new Set([...allTemp.filter((d) => shortOf(d) === short), ...extraDirs.filter((d) => existsSync(d))])];
    const namespaces = allNamespaces.filter((n) => NAMESPACE.exec(n)?.[1] === short);
    const inNamespaces: Found["inNamespaces"] = [];
    for (const namespace of namespaces) {
      for (const pid of await namespacePids(exec, namespace)) {
        let comm = "?";
        try {
          comm = readFileSync(`/proc/${pid}/comm`, "utf8").trim();
        } catch {
          // Gone meanwhile.
        }
        inNamespaces.push({ pid, comm, namespace });
      }
    }
    const inside = new Set(inNamespaces.map((p) => p.pid));
    return {
      namespaces,
      links: allLinks.filter((l) => ROOT_LINK.exec(l)?.[1] === short),
      tempDirs,
      inNamespaces,
      processes: processesUsing(tempDirs).filter((p) => !inside.has(p.pid)),
    };
  };

  /** Removes what was found; returns what was removed (and adds it and the errors to the report). */
  const remove = async (f: Found): Promise<string[]> => {
    const removed: string[] = [];
    const errors: string[] = [];
    await Promise.all(f.namespaces.map((ns) => killNamespaceProcesses(exec, ns, options.graceMs ?? 2000, errors, removed)));
    for (const p of f.processes) {
      try {
        process.kill(p.pid, "SIGKILL");
        removed.push(`process ${p.pid} (${p.cmdline.slice(0, 80)})`);
      } catch {
        // Gone meanwhile.
      }
    }
    for (const l of f.links) {
      const r = await exec(["ip", "link", "del", l]);
      if (r.code === 0) removed.push(`link ${l}`);
      // Deleting one end of a veth removes its peer: a namespace's deletion may have taken it.
      else if (!/Cannot find device/.test(r.stderr)) errors.push(`\`ip link del ${l}\`: ${r.stderr.trim()}`);
    }
    for (const ns of f.namespaces) {
      const r = await exec(["ip", "netns", "del", ns]);
      if (r.code === 0) removed.push(`namespace ${ns}`);
      else errors.push(`\`ip netns del ${ns}\`: ${r.stderr.trim()}`);
    }
    for (const d of f.tempDirs) {
      try {
        rmSync(d, { recursive: true, force: true });
        removed.push(`directory ${d}`);
      } catch (error) {
        errors.push(`removing ${d}: ${(error as Error).message}`);
      }
    }
    for (const r of removed) log(`removed ${r}`);
    report.removed.push(...removed);
    report.errors.push(...errors);
    return removed;
  };

  const recorded = new Set<string>();
  const boot = currentBootId();
  const roots = new Set(tempRoots.map((r) => resolve(r)));
  for (const r of records) {
    recorded.add(r.short);
    if (options.onlyRuns && !options.onlyRuns(r)) continue;
    if (r.bootId && boot && r.bootId !== boot) {
      report.foreign.push({ runId: r.runId, bootId: r.bootId });
      continue;
    }
    if (r.ended === null && ownerAlive(r)) {
      report.live.push({ runId: r.runId, pid: r.pid, runDir: r.runDir });
      continue;
    }
    const before = report.errors.length;
    // A record only names folders a run of its own makes: latlab-<short>-… in a temp or keys root.
    // Any other path (a record written by hand, or by someone else) is never removed.
    const dirs = [r.tempDir, r.keysDir].filter((d): d is string => d !== null);
    const ownDirs = dirs.filter((d) => roots.has(resolve(dirname(d))) && TEMP_DIR.exec(basename(d))?.[1] === r.short);
    for (const d of dirs.filter((x) => !ownDirs.includes(x))) report.errors.push(`run record of ${r.runId} names ${d}, which is not one of latlab's run folders: not touched`);
    const f = await found(r.short, ownDirs);
    const entry = { runId: r.runId, short: r.short, pid: r.pid, runDir: r.runDir, items: describe(f) };
    report.runs.push(entry);
    if (options.dryRun) continue;
    // Read again just before removing: a `latlab resume` may have taken the hosts over since the listing.
    const now = readRunRecords(recordsDir).records.find((x) => x.short === r.short);
    if (now && now.pid !== r.pid && ownerAlive(now)) {
      report.runs.pop();
      report.live.push({ runId: now.runId, pid: now.pid, runDir: now.runDir });
      continue;
    }
    entry.items = await remove(f);
    // The record goes only when everything it stands for is gone (a failed removal is tried again
    // next time), and only when it is still the one judged (not one a resume wrote meanwhile).
    const last = readRunRecords(recordsDir).records.find((x) => x.short === r.short);
    if (report.errors.length === before && (!last || last.pid === r.pid)) removeRunRecord(r.short, recordsDir);
  }

  // One run's cleanup never judges leftovers of no record: nothing says whose they are.
  if (options.onlyRuns) return report;
  const shorts = new Set<string>();
  for (const n of allNamespaces) if (NAMESPACE.test(n)) shorts.add(NAMESPACE.exec(n)![1]!);
  for (const l of allLinks) if (ROOT_LINK.test(l)) shorts.add(ROOT_LINK.exec(l)![1]!);
  for (const d of allTemp) shorts.add(shortOf(d)!);
  // A run that wrote its record while the machine was being listed is not a stranger.
  for (const r of readRunRecords(recordsDir).records) recorded.add(r.short);
  for (const short of [...shorts].filter((s) => !recorded.has(s)).sort()) {
    const f = await found(short);
    const entry = { short, items: describe(f) };
    report.unrecorded.push(entry);
    if (options.unrecorded && !options.dryRun) entry.items = await remove(f);
  }
  return report;
}

/** The report in words, one item a line. */
export function formatCleanup(report: CleanupReport, options: Pick<CleanupOptions, "dryRun" | "unrecorded">): string {
  const lines: string[] = [];
  for (const l of report.live) lines.push(`live: run ${l.runId} (pid ${l.pid}${l.runDir ? `, ${l.runDir}` : ""}) is still running: left alone`);
  for (const f of report.foreign) lines.push(`not this boot's: run ${f.runId} was recorded by another boot, machine or container (boot id ${f.bootId}): left alone`);
  for (const r of report.runs) {
    const head = `run ${r.runId} (its runner, pid ${r.pid}, is gone${r.runDir ? `; results in ${r.runDir}` : ""})`;
    if (!r.items.length) lines.push(`${head}: nothing left${options.dryRun ? "" : "; record removed"}`);
    else lines.push(`${head}: ${options.dryRun ? "would remove" : "removed"}:`, ...r.items.map((i) => `  ${i}`));
  }
  for (const u of report.unrecorded) {
    lines.push(`${options.unrecorded && !options.dryRun ? "removed" : "not removed"}: leftovers of ll-${u.short} that no run record accounts for (an older latlab, or a record deleted by hand)${options.unrecorded ? "" : " — `latlab cleanup --unrecorded` removes them if no latlab is running"}:`, ...u.items.map((i) => `  ${i}`));
  }
  for (const u of report.unreadableRecords) lines.push(`unreadable run record ${u.file} (${u.error}): not touched`);
  for (const e of report.errors) lines.push(`error: ${e}`);
  if (!lines.length) lines.push("nothing to clean up: no local run left anything behind");
  else if (!options.dryRun) lines.push(`removed ${report.removed.length} item(s)${report.errors.length ? `; ${report.errors.length} could not be removed` : ""}`);
  return lines.join("\n");
}
