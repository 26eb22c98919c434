import type { ShiftedLognormal } from "../model/latencySpread.ts";
import type { PeerDelay } from "../network/shaping.ts";

/**
 * The delay line: per-peer one-way delay on kernels without sch_netem. Pure command building;
 * helperProcess.ts starts and stops the helper, build.ts compiles it, precision.ts measures it.
 *
 * Mechanism — NFQUEUE, one helper process per host namespace:
 *   In each host's namespace, a chain of iptables' mangle table, jumped to from POSTROUTING,
 *   sends each packet for a peer (its private and public /32, on the data interface) to NFQUEUE
 *   queue <i>, one queue per peer. The helper (delayline.c), started inside that namespace, binds
 *   those queues and accepts each packet <egress delay of peer i> after it read it. That is
 *   exactly where netemCommands puts netem: the host's egress towards one peer, RTT/2 each way.
 *   Why this and not the alternatives this kernel allows:
 *   - A TUN hop (route the peer via tun0, a userspace forwarder writes the packets back out)
 *     needs a way out that does not route into the tun again (AF_PACKET + neighbour lookup, or
 *     fwmark policy routing), loses GSO (MTU-sized packets through read/write: a fraction of
 *     the throughput), and copies every payload twice. NFQUEUE copies only metadata (the delay
 *     is the queue's, no packet is parsed), keeps GSO packets whole (NFQA_CFG_F_GSO), and the
 *     packet never leaves the kernel's own path.
 *   - nftables' `queue` statement would need CONFIG_NFT_QUEUE, which this kernel lacks; the
 *     xtables NFQUEUE target (CONFIG_NETFILTER_XT_TARGET_NFQUEUE) is there, so the rules are
 *     iptables' (iptables-nft reaches it through nft_compat; iptables-legacy directly).
 *   - clsact/cls_bpf cannot hold a packet for a time without fq or etf (both absent here).
 *   Why C: the precision is bounded by how late the helper wakes for a release, so it wants no
 *   garbage collector or runtime scheduler between the timer and the verdict (Go, Python), and
 *   control of timer slack, SCHED_FIFO and a short spin; libnetfilter_queue is Debian's
 *   well-kept binding (libnetfilter-queue-dev), and one 300-line file builds with the system's
 *   cc in a second — no registry download at run time, nor a toolchain beyond gcc.
 *   Teardown: the helper lives in the host's namespace, so the host's teardown and `latlab
 *   cleanup` (which stop every process of a run's namespaces: recovery/cleanup.ts) stop it with
 *   no record of its own; its rules vanish with the namespace. If it dies first, its queues
 *   have no listener and the kernel drops their packets: a dead delay line shows as loss,
 *   never as an undelayed run.
 */

/** The chain of the mangle table that holds a host's delay-line rules (jumped to from POSTROUTING). */
export const DELAY_CHAIN = "LATLAB_DELAY";

/** What the helper is told for one peer: a queue, its delay, and the addresses sent to it. */
export interface DelayQueue {
  queue: number;
  peerRole: string;
  delayUs: number;
  /**
   * Each packet's delay drawn from this (PeerDelay.egressSpread) instead of the constant
   * `delayUs`; packets of one queue still leave in the order they came (delayline.c).
   */
  spread?: ShiftedLognormal;
  /** The peer's private address, and its public one when it has one. */
  addresses: string[];
}

/** Queues 0…n−1 on the kernel's side is per namespace, so each host numbers its own from 0. */
export const MAX_DELAY_QUEUES = 256;

/** One queue per peer with a delay; peers with no delay get no queue (their packets are not touched). */
export function delayQueues(peers: readonly PeerDelay[]): DelayQueue[] {
  const delayed = peers.filter((p) => p.egressDelayUs > 0);
  if (delayed.length > MAX_DELAY_QUEUES) throw new Error(`the delay line takes at most ${MAX_DELAY_QUEUES} peers a host, got ${delayed.length}`);
  return delayed.map((p, queue) => {
    if (!Number.isInteger(p.egressDelayUs)) throw new Error(`delay for ${p.peerRole} must be whole microseconds, got ${p.egressDelayUs}`);
    const q: DelayQueue = { queue, peerRole: p.peerRole, delayUs: p.egressDelayUs, addresses: p.publicAddress !== undefined ? [p.address, p.publicAddress] : [p.address] };
    if (p.egressSpread) q.spread = p.egressSpread;
    return q;
  });
}

export interface HelperTuning {
  /** Busy-wait the last µs before a release (precision for CPU). */
  spinUs?: number;
  /** SCHED_FIFO priority for the helper. */
  fifoPriority?: number;
  /** Release this many ns early: the measured constant bias taken back. */
  advanceNs?: number;
  /** Keep the CPUs out of deep idle while the helper runs (a PM QoS request, as cyclictest makes). */
  noDeepIdle?: boolean;
  /**
   * Seed of the spread's draws (tests; the sampling self-test). Unset: the helper seeds from
   * getrandom(2) — two helpers with one seed would draw the same sequence each way, and a round
   * trip would see twice one draw instead of the sum of two.
   */
  seed?: number;
}

/**
 * What bring-up starts the helper with, chosen by measurement (README.md beside this file): on a
 * 2-core Firecracker VM, waking a halted CPU for each queued packet cost ~60 µs a direction and
 * the release timer's own wake-up up to ~50 µs at p99; no deep idle, SCHED_FIFO and a 20 µs spin
 * took the median error from +210 µs to +30 µs a round trip, at no loss of throughput.
 */
export const DEFAULT_TUNING: Readonly<HelperTuning> = { spinUs: 20, fifoPriority: 10, noDeepIdle: true };

/** argv that starts the helper inside `namespace` for `queues`. */
export function helperArgv(binary: string, namespace: string, queues: readonly DelayQueue[], tuning: HelperTuning = {}): string[] {
  if (queues.length === 0) throw new Error("the delay line needs at least one queue");
  const opts: string[] = [];
  if (tuning.spinUs !== undefined) opts.push("--spin-us", String(tuning.spinUs));
  if (tuning.fifoPriority !== undefined) opts.push("--fifo", String(tuning.fifoPriority));
  if (tuning.advanceNs !== undefined) opts.push("--advance-ns", String(Math.max(0, Math.round(tuning.advanceNs))));
  if (tuning.noDeepIdle) opts.push("--no-deep-idle");
  if (tuning.seed !== undefined) opts.push("--seed", String(tuning.seed));
  return ["ip", "netns", "exec", namespace, binary, ...opts, ...queues.map(queueSpec)];
}

/** A queue as the helper reads it: QUEUE=DELAY_US, or QUEUE=ln:FLOOR_US:SCALE_US:SIGMA for a spread. */
export function queueSpec(q: DelayQueue): string {
  if (!q.spread) return `${q.queue}=${q.delayUs}`;
  const { floorUs, scaleUs, sigma } = q.spread;
  return `${q.queue}=ln:${floorUs}:${scaleUs}:${sigma}`;
}

/**
 * argv of the helper's sampling self-test: `n` delays of `queue`'s distribution, µs, one a line
 * (packets `gapUs` apart, under the in-order rule, when given). Needs no namespace nor root.
 */
export function helperSampleArgv(binary: string, queue: DelayQueue, n: number, seed: number, gapUs?: number): string[] {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`sample count must be a positive integer, got ${n}`);
  return [binary, "--seed", String(seed), "--sample", String(n), ...(gapUs !== undefined ? ["--sample-gap-us", String(gapUs)] : []), queueSpec(queue)];
}

/**
 * iptables commands (argv) that send each peer's packets on `dev` to its queue, in a chain of
 * their own so that removal never touches another rule. Run after the helper said "ready": a
 * queue with no listener drops.
 */
export function delayRuleCommands(namespace: string, dev: string, queues: readonly DelayQueue[], iptables = "iptables"): string[][] {
  const ipt = (...args: string[]): string[] => ["ip", "netns", "exec", namespace, iptables, "-w", "-t", "mangle", ...args];
  return [
    ipt("-N", DELAY_CHAIN),
    ...queues.flatMap((q) => q.addresses.map((a) => ipt("-A", DELAY_CHAIN, "-d", `${a}/32`, "-j", "NFQUEUE", "--queue-num", String(q.queue)))),
    ipt("-A", "POSTROUTING", "-o", dev, "-j", DELAY_CHAIN),
  ];
}

/** Commands that take the rules out again (the jump first, so no packet meets a half-emptied chain). */
export function removeDelayRuleCommands(namespace: string, dev: string, iptables = "iptables"): string[][] {
  const ipt = (...args: string[]): string[] => ["ip", "netns", "exec", namespace, iptables, "-w", "-t", "mangle", ...args];
  return [ipt("-D", "POSTROUTING", "-o", dev, "-j", DELAY_CHAIN), ipt("-F", DELAY_CHAIN), ipt("-X", DELAY_CHAIN)];
}

/**
 * The `shaping:` line's words for a delay line whose precision was measured; `onSpreadPair`: it
 * was measured on a pair whose model has a spread (no constant pair to measure on), so the figure
 * includes the sampling noise of the model's own distribution, not the delay line's error alone.
 */
export function delayLineLabel(precisionP99Us: number, onSpreadPair = false): string {
  return `delay line, ±${Math.round(precisionP99Us)} µs at p99${onSpreadPair ? " (incl. sampling noise of the modelled spread)" : ""}`;
}
