import { join } from "node:path";
import { CommandError, mustExec, type ExecFn } from "../exec.ts";
import { ensureHelperBuilt, DELAY_LINE_DEBIAN_PACKAGES } from "../delayLine/build.ts";
import { DEFAULT_TUNING, delayLineLabel, delayQueues, delayRuleCommands, removeDelayRuleCommands, type HelperTuning } from "../delayLine/delayLine.ts";
import { startHelper, stopHelper, type RunningHelper, type StartOptions } from "../delayLine/helperProcess.ts";
import { measureAroundBringUp, type DelayLinePrecision } from "../delayLine/precision.ts";
import { modelledRttQuantilesUs } from "../model/latencySpread.ts";
import { DEFAULT_NETEM_TABLE_DIR, writeNetemTables } from "./netemDistribution.ts";
import { detectQdiscSupport, netemCommands, tbfCommands, type PeerDelay, type QdiscSupport } from "./shaping.ts";

/**
 * Applying the latency model and the bandwidth cap to a set of hosts, each a network namespace
 * with one data interface, choosing netem where the kernel has it and the delay line
 * (delayLine/) otherwise. Used by the local target and the Azure emulator's fabric (rehearsals).
 * The choice is made here once, so both say the same thing about how latency was applied.
 */

/** What the kernel and this machine offer for shaping, probed once per bring-up. */
export interface ShapingSupport extends QdiscSupport {
  /**
   * The delay line: probed only where netem is missing (netem is preferred). `binary` is the
   * built helper; `reason` says what is missing when it is not available.
   */
  delayLine: { available: boolean; binary?: string; reason?: string };
}

/** One host to shape: its namespace, its data interface, its peers' delays, its egress cap. */
export interface HostShaping {
  /** How messages name the host (e.g. "host client (namespace lt1234-…)"). */
  label: string;
  namespace: string;
  dev: string;
  /**
   * The host's own data address: how a peer's delays towards it are paired with its own, to pick
   * the pair the delay line's precision is measured on. Without it on any host, no precision.
   */
  address?: string;
  peers: readonly PeerDelay[];
  capMbit: number | null;
  /** Folder for the delay-line helper's log (delayLineLogPath: one file per namespace, so hosts may share a folder). */
  logDir: string;
}

export type LatencyMechanism = "netem" | "delay-line";

/** A delay-line helper started by applyShaping: where it runs and where its log is. */
export interface StartedHelper {
  label: string;
  namespace: string;
  pid: number;
  logPath: string;
}

export interface AppliedShaping {
  /** How latency was applied, or null when neither netem nor the delay line is available. */
  latency: LatencyMechanism | null;
  /** Egress cap applied per namespace (null: none). */
  capApplied: ReadonlyMap<string, number | null>;
  /** The delay line's precision, measured at bring-up (absent for netem, no latency, or no pair delayed both ways). */
  precision?: DelayLinePrecision;
  /** The pair the precision was measured on, "<label> → <label>". */
  precisionPair?: string;
  /** The `shaping:` line's words for the mechanism, e.g. "netem" or "delay line, ±120 µs at p99". */
  label: string;
  /** The delay-line helpers running (empty for netem). */
  helpers: readonly StartedHelper[];
  /**
   * Takes out what applying put in for the delay line: each host's rules first (a packet queued
   * to a helper that is gone is dropped: the host would be cut off), then the helpers. netem's
   * qdiscs stay (they go with the interface). Returns what could not be undone.
   */
  stop(): Promise<string[]>;
}

/** Where the delay line's helper of `namespace` logs, in `logDir`. */
export function delayLineLogPath(logDir: string, namespace: string): string {
  return join(logDir, `delayline-${namespace}.log`);
}

/** The pieces that touch the machine beyond exec (compiling, spawning): replaced by unit tests. */
export interface DelayLineDeps {
  build: (exec: ExecFn) => Promise<string>;
  start: (options: StartOptions) => Promise<RunningHelper>;
  /** Stops a helper; resolves once it has exited (or throws when it could not be stopped). */
  stop: (helper: RunningHelper) => Promise<void>;
}

const realDeps: DelayLineDeps = {
  build: (exec) => ensureHelperBuilt({ exec }),
  start: startHelper,
  stop: async (helper) => {
    await stopHelper(helper);
    if (!helper.process.exit) throw new Error(`pid ${helper.process.pid} still running after SIGKILL`);
  },
};

/** Why the helper did not build, in the words a user acts on (which Debian package to install). */
export function buildFailureReason(error: unknown): string {
  if (error instanceof CommandError) {
    if (error.result.code === 127) return "no gcc (Debian: gcc)";
    const out = `${error.result.stderr}\n${error.result.stdout}`;
    if (/libnetfilter_queue|lnetfilter_queue|lnfnetlink|libnfnetlink/.test(out)) return "no libnetfilter_queue headers (Debian: libnetfilter-queue-dev)";
    return `the helper did not build: ${out.trim().split("\n").slice(0, 3).join(" ") || `exit code ${error.result.code}`}`;
  }
  return `the helper did not build: ${(error as Error).message}`;
}

/** iptables argv that tries an NFQUEUE rule in `namespace` (and the one that takes it out again). */
export function nfqueueProbeCommands(namespace: string): { add: string[]; del: string[] } {
  const rule = ["OUTPUT", "-o", "lo", "-d", "127.0.0.2/32", "-j", "NFQUEUE", "--queue-num", "0"];
  const ipt = (...args: string[]) => ["ip", "netns", "exec", namespace, "iptables", "-w", "-t", "mangle", ...args];
  return { add: ipt("-A", ...rule), del: ipt("-D", ...rule) };
}

/**
 * netem and tbf (detectQdiscSupport) in `probeNamespace`, a scratch namespace the caller made and
 * deletes; where netem is missing, whether the delay line can run: its helper builds (cached per
 * source hash) and iptables accepts an NFQUEUE rule.
 */
export async function detectShapingSupport(exec: ExecFn, probeNamespace: string, deps: Pick<DelayLineDeps, "build"> = realDeps): Promise<ShapingSupport> {
  const qdisc = await detectQdiscSupport(exec, probeNamespace);
  if (qdisc.netem) return { ...qdisc, delayLine: { available: false, reason: "not probed: the kernel has netem" } };
  const missing: string[] = [];
  const probe = nfqueueProbeCommands(probeNamespace);
  const r = await exec(probe.add);
  if (r.code === 0) await exec(probe.del);
  // `ip netns exec` answers 255 with "exec of … failed: No such file" when iptables is not installed.
  else if (r.code === 127 || /exec of "?iptables"? failed|iptables: (command )?not found/i.test(r.stderr)) missing.push("no iptables (Debian: iptables)");
  else missing.push(`iptables refused NFQUEUE: ${(r.stderr || r.stdout).trim() || `exit code ${r.code}`}`);
  let binary: string | undefined;
  try {
    binary = await deps.build(exec);
  } catch (error) {
    missing.push(buildFailureReason(error));
  }
  if (missing.length > 0 || binary === undefined) {
    return { ...qdisc, delayLine: { available: false, reason: `${missing.join("; ")} (the delay line needs Debian's ${DELAY_LINE_DEBIAN_PACKAGES.join(", ")})` } };
  }
  return { ...qdisc, delayLine: { available: true, binary } };
}

/** One sentence on what the delay line lacks, for the `shaping:` line and the log. */
export function shapingSupportLine(support: ShapingSupport): string {
  const qdisc = `netem ${support.netem ? "present" : "absent"}, tbf ${support.tbf ? "present" : "absent"}`;
  if (support.netem) return qdisc;
  return `${qdisc}; delay line ${support.delayLine.available ? `available (${support.delayLine.binary})` : `unavailable: ${support.delayLine.reason ?? "not probed"}`}`;
}

export interface ApplyOptions {
  log?: (message: string) => void;
  signal?: AbortSignal;
  /** The helper's options (default DEFAULT_TUNING). */
  tuning?: HelperTuning;
  /** Pings before and after bring-up on the measured pair (default 200 each). */
  precisionPings?: number;
  /** Where netem's distribution tables are written (default DEFAULT_NETEM_TABLE_DIR). */
  netemTableDir?: string;
  /** For tests. */
  deps?: DelayLineDeps;
}

/** A pair of hosts that delay towards each other, and the model's round trip between them. */
export interface MeasurablePair {
  from: HostShaping;
  to: HostShaping;
  there: PeerDelay;
  back: PeerDelay;
  modelled: { p50Us: number; p99Us: number };
}

/**
 * The pair the delay line's precision is measured on: one with no modelled spread where there is
 * one, else the narrowest (modelled p99 − p50), first in host order among equals. With a spread,
 * the p99 of a few hundred pings is mostly the sampling noise of the model's own distribution
 * (a perfect delay line would show ±122 µs at the median for cross-zone, ±449 µs cross-region),
 * not the delay line's error; a constant pair measures the delay line alone.
 */
export function measuredPair(hosts: readonly HostShaping[]): MeasurablePair | null {
  let best: MeasurablePair | null = null;
  const width = (p: MeasurablePair) => p.modelled.p99Us - p.modelled.p50Us;
  for (const from of hosts) {
    if (from.address === undefined) continue;
    for (const there of from.peers) {
      if (there.egressDelayUs <= 0) continue;
      const to = hosts.find((h) => h.address !== undefined && h.address === there.address && h.namespace !== from.namespace);
      const back = to?.peers.find((p) => p.address === from.address && p.egressDelayUs > 0);
      if (!to || !back) continue;
      const pair = { from, to, there, back, modelled: modelledRttQuantilesUs(there, back) };
      if (best === null || width(pair) < width(best)) best = pair;
    }
  }
  return best;
}

/** Tolerance below which a modelled p99 − p50 counts as no spread (the quantile sums' rounding). */
const NO_SPREAD_US = 0.5;

/** Whether the model gives this pair's round trip a spread: its precision's p99 error then includes sampling noise. */
export function pairHasSpread(pair: Pick<MeasurablePair, "modelled">): boolean {
  return pair.modelled.p99Us - pair.modelled.p50Us > NO_SPREAD_US;
}

/**
 * Applies latency (netem, else the delay line) and caps (with netem's htb, else tbf) to `hosts`.
 * Any failure stops the helpers already started and throws naming the host.
 */
export async function applyShaping(exec: ExecFn, support: ShapingSupport, hosts: readonly HostShaping[], options: ApplyOptions = {}): Promise<AppliedShaping> {
  const deps = options.deps ?? realDeps;
  const log = options.log ?? (() => undefined);
  const capApplied = new Map<string, number | null>(hosts.map((h) => [h.namespace, null]));
  const running: { host: HostShaping; helper: RunningHelper }[] = [];
  // Hosts whose delay rules began to go in; "partial" until the last one (the jump) did.
  const ruled: { host: HostShaping; complete: boolean }[] = [];
  const stop = async (): Promise<string[]> => {
    const errors: string[] = [];
    // The rules first: once a helper is gone, a packet its queue gets is dropped.
    for (const { host, complete } of ruled.splice(0).reverse()) {
      const failures: string[] = [];
      for (const cmd of removeDelayRuleCommands(host.namespace, host.dev)) {
        const r = await exec(cmd);
        if (r.code !== 0) failures.push(`\`${cmd.slice(4).join(" ")}\`: ${(r.stderr || r.stdout).trim() || `exit code ${r.code}`}`);
      }
      // A half-installed set has no jump (or no chain) to take out: those failures are expected.
      if (complete && failures.length > 0) errors.push(`delay rules of ${host.label} could not be removed: ${failures.join("; ")}`);
    }
    // Latest first; all of them even when one fails.
    for (const { host, helper } of running.splice(0).reverse()) {
      try {
        await deps.stop(helper);
      } catch (error) {
        errors.push(`delay line of ${host.label} (pid ${helper.process.pid}) could not be stopped: ${(error as Error).message}`);
      }
    }
    return errors;
  };
  const checkAborted = (host: HostShaping) => {
    if (options.signal?.aborted) throw new Error(`interrupted while shaping ${host.label}`);
  };
  const runAll = async (host: HostShaping, cmds: readonly string[][]) => {
    for (const cmd of cmds) {
      checkAborted(host);
      await mustExec(exec, cmd, `shaping ${host.label}`);
    }
  };
  const capWithTbf = async () => {
    if (!support.tbf) return;
    for (const h of hosts) {
      if (h.capMbit === null) continue;
      await runAll(h, tbfCommands(h.namespace, h.dev, h.capMbit));
      capApplied.set(h.namespace, h.capMbit);
    }
  };
  const noHelpers = { helpers: [] as StartedHelper[], stop: async () => [] as string[] };

  if (support.netem) {
    for (const h of hosts) {
      // netem reads a spread's distribution table from TC_LIB_DIR: written before tc asks for it.
      const tableDir = options.netemTableDir ?? DEFAULT_NETEM_TABLE_DIR;
      writeNetemTables(tableDir, h.peers);
      await runAll(h, netemCommands(h.namespace, h.dev, h.peers, h.capMbit, tableDir));
      capApplied.set(h.namespace, h.capMbit);
    }
    return { latency: "netem", capApplied, label: "netem", ...noHelpers };
  }

  const binary = support.delayLine.binary;
  const delayed = hosts.filter((h) => delayQueues(h.peers).length > 0);
  if (!support.delayLine.available || binary === undefined || delayed.length === 0) {
    await capWithTbf();
    return { latency: null, capApplied, label: support.delayLine.available ? "no delays to apply" : `no netem, no delay line (${support.delayLine.reason ?? "not probed"})`, ...noHelpers };
  }

  try {
    await capWithTbf();
    const bringUp = async () => {
      for (const h of delayed) {
        checkAborted(h);
        const queues = delayQueues(h.peers);
        const logPath = delayLineLogPath(h.logDir, h.namespace);
        try {
          running.push({ host: h, helper: await deps.start({ binary, namespace: h.namespace, queues, logPath, tuning: options.tuning ?? DEFAULT_TUNING }) });
        } catch (error) {
          throw new Error(`delay line for ${h.label}: ${(error as Error).message}`);
        }
        // Only after "ready": a queue nobody listens on drops. A chain left by an earlier bring-up
        // that died before its teardown goes first (else `-N` fails with "Chain already exists"
        // on every retry); where there is none, these fail, which is nothing to report — a
        // chain that stays is reported by the `-N` below.
        for (const cmd of removeDelayRuleCommands(h.namespace, h.dev)) {
          checkAborted(h);
          await exec(cmd);
        }
        const entry = { host: h, complete: false };
        ruled.push(entry);
        await runAll(h, delayRuleCommands(h.namespace, h.dev, queues));
        entry.complete = true;
        log(`delay line for ${h.label}: ${queues.map((q) => `${q.peerRole} ${q.delayUs} µs`).join(", ")} (helper pid ${running.at(-1)!.helper.process.pid}, log ${logPath})`);
      }
    };
    const pair = measuredPair(delayed);
    if (pair === null) log("delay line: no pair of hosts delays towards each other (or their addresses are not given): its precision is not measured");
    if (pair === null) {
      await bringUp();
      return { latency: "delay-line", capApplied, label: "delay line, precision not measured (no pair delayed both ways)", helpers: started(running), stop };
    }
    const precisionPair = `${pair.from.label} → ${pair.to.label}`;
    const modelled = pair.modelled;
    const spread = pairHasSpread(pair);
    let precision: DelayLinePrecision;
    try {
      precision = await measureAroundBringUp(exec, { namespace: pair.from.namespace, address: pair.to.address! }, modelled, bringUp, options.precisionPings ?? 200);
    } catch (error) {
      const message = (error as Error).message;
      throw new Error(message.startsWith("delay line for ") || message.startsWith("shaping ") ? message : `delay line: measuring its precision on ${precisionPair}: ${message}`);
    }
    log(
      `delay line precision on ${precisionPair}: p50 error ${Math.round(precision.p50ErrorUs)} µs, p99 error ${Math.round(precision.p99ErrorUs)} µs ` +
        `(modelled ${Math.round(precision.modelledP50Us)}/${Math.round(precision.modelledP99Us)} µs at p50/p99 over a path of ${Math.round(precision.baselineP50Us)} µs; ${precision.delayedSamples} pings` +
        `${spread ? "; no pair without a modelled spread: the errors include the sampling noise of the model's own distribution" : ""})`,
    );
    return { latency: "delay-line", capApplied, precision, precisionPair, label: delayLineLabel(precision.precisionP99Us, spread), helpers: started(running), stop };
  } catch (error) {
    const stopErrors = await stop();
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(stopErrors.length > 0 ? `${message}; and: ${stopErrors.join("; ")}` : message);
  }
}

function started(running: readonly { host: HostShaping; helper: RunningHelper }[]): StartedHelper[] {
  return running.map(({ host, helper }) => ({ label: host.label, namespace: host.namespace, pid: helper.process.pid, logPath: helper.logPath }));
}
