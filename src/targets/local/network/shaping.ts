import type { PathKind } from "../../../plan/types.ts";
import type { ExecFn } from "../exec.ts";
import type { LatencyModelEntry } from "../model/latencyModel.ts";
import { hostPairModelRtt } from "../model/modelEntries.ts";
import { oneWaySpread, rttDistribution, type ShiftedLognormal } from "../model/latencySpread.ts";
import { DEFAULT_NETEM_TABLE_DIR, netemDelayArgs } from "./netemDistribution.ts";
import type { TopoHost } from "./topology.ts";

/**
 * Traffic shaping of the emulated hosts: pure tc command generation, plus the probe that finds
 * out what the kernel can do. Commands are argv arrays (tc -n <namespace> …).
 */

export const NO_NETEM_NOTE = "shaping: unavailable — kernel has no netem";

export interface PeerDelay {
  peerRole: string;
  address: string;
  /**
   * The peer's public address, delayed like the private one: latlab's model has no figure of its
   * own for the public path, so it gets the pair's modelled RTT and differs only by its hops.
   */
  publicAddress?: string;
  pathKind: PathKind;
  rttUs: number;
  /** Delay added on this host's egress towards the peer: half the modelled RTT (the constant applied where there is no spread). */
  egressDelayUs: number;
  /**
   * The egress delay's distribution when the model has a spread for the pair (latencySpread.ts):
   * each packet's delay is drawn from it, this end's and the peer's draws adding up to the
   * modelled RTT's median and p99. Absent: every packet gets `egressDelayUs`.
   */
  egressSpread?: ShiftedLognormal;
}

/**
 * Per-peer egress delays of one host: each end of a pair delays its own packets by RTT/2, so a
 * round trip sees the modelled RTT (plus the few µs the veths and bridges cost on their own).
 */
export function peerDelays(host: TopoHost, peers: readonly TopoHost[]): PeerDelay[] {
  return peers
    .filter((p) => p.namespace !== host.namespace)
    .map((p) => {
      // The same entry results.json records for the pair (model/modelEntries.ts).
      return peerDelayOf(hostPairModelRtt(host.spec, p.spec), { role: p.role, address: p.dataAddress, publicAddress: p.publicAddress });
    });
}

/**
 * One end's delay towards a peer from the model's entry for the pair: half the round trip each
 * way, and each end's share of its spread. The local target's hosts and the emulator's VMs alike.
 */
export function peerDelayOf(m: LatencyModelEntry, peer: { role: string; address: string; publicAddress?: string | undefined }): PeerDelay {
  const rtt = rttDistribution(m.rttUs, m.spread);
  const delay: PeerDelay = {
    peerRole: peer.role,
    address: peer.address,
    ...(peer.publicAddress !== undefined ? { publicAddress: peer.publicAddress } : {}),
    pathKind: m.pathKind,
    rttUs: m.rttUs,
    egressDelayUs: Math.round(m.rttUs / 2),
  };
  if (rtt) delay.egressSpread = oneWaySpread(rtt);
  return delay;
}

/** Bytes of burst for a tbf at `mbit`: 4 ms of traffic, at least 64 KiB (GSO-sized packets). */
export function tbfBurstBytes(mbit: number): number {
  return Math.max(64 * 1024, Math.ceil(((mbit * 1e6) / 8) * 0.004));
}

/** Egress cap with tbf on one interface (what this kernel supports). */
export function tbfCommands(namespace: string, dev: string, mbit: number): string[][] {
  if (!(mbit > 0)) throw new Error(`bandwidth cap must be positive, got ${mbit}`);
  return [["tc", "-n", namespace, "qdisc", "replace", "dev", dev, "root", "tbf", "rate", `${mbit}mbit`, "burst", String(tbfBurstBytes(mbit)), "latency", "50ms"]];
}

/** htb rate used for "no cap" classes. */
export const UNCAPPED_RATE = "100gbit";

const hex = (n: number): string => n.toString(16);

/**
 * Per-destination delay (and optional cap) on one host's data interface, for kernels with netem:
 *   root htb 1: (default 1:2) → 1:1 aggregate (cap or uncapped)
 *     ├ 1:2 everything else, no delay
 *     └ 1:<10+i> one class per peer, netem delay <RTT/2>, selected by a u32 match on ip dst
 *                (the peer's private address, and its public address when it has one)
 * A peer with a spread gets `delay <median> <J> distribution latlab-sln-<σ>` (netemDistribution.ts:
 * the table, read by tc from `tcLibDir`, which writeNetemTables fills first) and `rate 100gbit`.
 * Why the rate: with jitter, netem's tfifo sorts packets by their drawn send time, so a packet
 * drawn shorter overtakes the one ahead (reordering, which TCP reads as loss: duplicate ACKs, fast
 * retransmits, a collapsed window). With a rate set, netem_enqueue takes the last queued packet's
 * send time as "now" and subtracts the wait from the draw (sch_netem.c, "Last packet in queue is
 * reference point"): each packet leaves at max(own draw, previous packet's time) + its
 * serialisation — in order, exactly the delay line's rule (delayline.c). At 100 Gbit/s the
 * serialisation is 0.1 µs for 1,500 B, 5 µs for a 64 KiB GSO packet; the cap stays htb's.
 */
export function netemCommands(namespace: string, dev: string, peers: readonly PeerDelay[], capMbit: number | null, tcLibDir: string = DEFAULT_NETEM_TABLE_DIR): string[][] {
  const rate = capMbit !== null ? `${capMbit}mbit` : UNCAPPED_RATE;
  const tc = (...args: string[]): string[] => ["tc", "-n", namespace, ...args];
  const cmds: string[][] = [
    tc("qdisc", "replace", "dev", dev, "root", "handle", "1:", "htb", "default", "2"),
    tc("class", "add", "dev", dev, "parent", "1:", "classid", "1:1", "htb", "rate", rate, "ceil", rate),
    tc("class", "add", "dev", dev, "parent", "1:1", "classid", "1:2", "htb", "rate", rate, "ceil", rate),
  ];
  peers.forEach((p, i) => {
    const minor = hex(0x10 + i);
    if (0x10 + i > 0xffff) throw new Error("too many peers for one htb");
    cmds.push(
      tc("class", "add", "dev", dev, "parent", "1:1", "classid", `1:${minor}`, "htb", "rate", rate, "ceil", rate),
      p.egressSpread
        ? ["env", `TC_LIB_DIR=${tcLibDir}`, ...tc("qdisc", "add", "dev", dev, "parent", `1:${minor}`, "handle", `${minor}:`, "netem", ...netemDelayArgs(p.egressSpread), "rate", UNCAPPED_RATE, "limit", "100000")]
        : tc("qdisc", "add", "dev", dev, "parent", `1:${minor}`, "handle", `${minor}:`, "netem", "delay", `${p.egressDelayUs}us`, "limit", "100000"),
      tc("filter", "add", "dev", dev, "parent", "1:", "protocol", "ip", "prio", "1", "u32", "match", "ip", "dst", `${p.address}/32`, "flowid", `1:${minor}`),
    );
    if (p.publicAddress !== undefined) {
      cmds.push(tc("filter", "add", "dev", dev, "parent", "1:", "protocol", "ip", "prio", "1", "u32", "match", "ip", "dst", `${p.publicAddress}/32`, "flowid", `1:${minor}`));
    }
  });
  return cmds;
}

export interface QdiscSupport {
  netem: boolean;
  tbf: boolean;
  /** What the kernel answered when a qdisc was refused. */
  netemError?: string;
  tbfError?: string;
}

/**
 * Finds out whether the kernel accepts netem and tbf by adding each to `lo` of `namespace`
 * (a scratch namespace the caller created and deletes).
 */
export async function detectQdiscSupport(exec: ExecFn, namespace: string): Promise<QdiscSupport> {
  await exec(["ip", "-n", namespace, "link", "set", "lo", "up"]);
  const netem = await exec(["tc", "-n", namespace, "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms"]);
  if (netem.code === 0) await exec(["tc", "-n", namespace, "qdisc", "del", "dev", "lo", "root"]);
  const tbf = await exec(["tc", "-n", namespace, "qdisc", "add", "dev", "lo", "root", "tbf", "rate", "1mbit", "burst", "32kbit", "latency", "400ms"]);
  if (tbf.code === 0) await exec(["tc", "-n", namespace, "qdisc", "del", "dev", "lo", "root"]);
  const out: QdiscSupport = { netem: netem.code === 0, tbf: tbf.code === 0 };
  if (netem.code !== 0) out.netemError = (netem.stderr || netem.stdout).trim();
  if (tbf.code !== 0) out.tbfError = (tbf.stderr || tbf.stdout).trim();
  return out;
}
