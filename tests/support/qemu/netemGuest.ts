import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ResolvedHost } from "../../../src/dsl/placement.ts";
import type { Deployment } from "../../../src/plan/types.ts";
import { parsePingRttsUs, pingArgv, precisionFromSamples, type DelayLinePrecision } from "../../../src/targets/local/delayLine/precision.ts";
import { modelledRttQuantilesUs } from "../../../src/targets/local/model/latencySpread.ts";
import { runNames } from "../../../src/targets/local/network/names.ts";
import { writeNetemTables } from "../../../src/targets/local/network/netemDistribution.ts";
import { netemCommands, peerDelays, type PeerDelay } from "../../../src/targets/local/network/shaping.ts";
import { buildDeploymentTopology, type TopoHost } from "../../../src/targets/local/network/topology.ts";
import { bootGuest, type BootResult } from "./bootGuest.ts";
import { section } from "./guestOutput.ts";

/**
 * latlab's netem path on a kernel that has netem: a Debian kernel booted under qemu, three of
 * latlab's emulated hosts (a client, a host in its zone, one in the other zone) as namespaces on
 * one bridge, each with the tc commands latlab's own netemCommands(peerDelays(…)) generates for
 * it, run verbatim. The client pings each peer without the commands (TCG's own round trip) and
 * with them; the figures are latlab's delay line precision figures (precision.ts), so netem and
 * the delay line are judged the same way.
 *
 * The fabric is flatter than latlab's (no zone or region routers: /32 addresses with on-link
 * routes on one bridge) because shaping goes by placement only and sits on the host's own eth0;
 * the routers add hops, not delay.
 */

const host = (role: string, over: Partial<ResolvedHost> = {}): ResolvedHost => ({
  role, region: "uksouth", zone: "1", ppg: null, availabilitySet: null, size: "Standard_B1s", accelnet: false, vnet: null, ...over,
});

/** A client, a host in its zone (same-zone) and one in zone 2 (cross-zone), no Accelerated Networking. */
export const NETEM_GUEST_DEPLOYMENT: Deployment = {
  id: "d0", index: 0, variant: "base", variants: ["base"], replica: 0,
  hosts: [host("client"), host("zone1"), host("zone2", { zone: "2" })],
};

/** Modules the guest loads: the qdiscs and classifier netemCommands uses, veth, and the bridge joining the hosts. */
export const NETEM_GUEST_MODULES = ["sch_htb", "sch_netem", "cls_u32", "veth", "bridge"] as const;
/** tc reads netem's distribution tables (a jitter with `distribution …`) from its lib folder. */
const TC_LIB_DIRS = ["/usr/lib/x86_64-linux-gnu/tc", "/usr/lib/tc"];


/**
 * Ahead of other work on the host's cores (bootGuest.ts BootOptions.niceness says why): the vCPU
 * halts when the guest idles, so a netem timer wakes it, and a woken thread at -10 preempts. Not
 * idle=poll (a vCPU that never halts): measured no better here with other work on the cores
 * (p50 error +36…+879 µs against +212…+346 µs), and it holds a host core for the whole boot.
 */
export const NETEM_GUEST_NICENESS = -10;

/** Each pair's pings come in this many rounds, alternating between the peers. */
export const NETEM_GUEST_ROUNDS = 4;

const q = (s: string): string => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
const sh = (argv: readonly string[]): string => argv.map(q).join(" ");

export interface NetemGuestPlan {
  client: TopoHost;
  hosts: TopoHost[];
  /** Every host's tc commands, in the order the guest runs them. */
  tcCommands: { host: string; argv: string[] }[];
  /** The client's peers with the peer's own delay back to the client. */
  pairs: { there: PeerDelay; back: PeerDelay }[];
  script: string;
}

/**
 * The guest's script: the fabric, the baseline pings, latlab's tc commands (one section each), the
 * pings through netem. `tableDir`: where latlab's netem distribution tables are written on the
 * host (writeNetemTables) and found in the guest (the initramfs copies the folder at its own path).
 */
export function netemGuestPlan(count: number, intervalS: number, tableDir: string): NetemGuestPlan {
  const topo = buildDeploymentTopology(NETEM_GUEST_DEPLOYMENT, runNames("netem-qemu"));
  const [client, ...peers] = topo.hosts;
  if (!client) throw new Error("deployment has no hosts");
  const lines = ["ip link add br0 type bridge", "ip link set br0 up"];
  topo.hosts.forEach((h, i) => {
    lines.push(
      sh(["ip", "netns", "add", h.namespace]),
      sh(["ip", "link", "add", `v${i}`, "type", "veth", "peer", "name", h.dataIfname, "netns", h.namespace]),
      `ip link set v${i} master br0 up`,
      sh(["ip", "-n", h.namespace, "addr", "add", `${h.dataAddress}/32`, "dev", h.dataIfname]),
      sh(["ip", "-n", h.namespace, "link", "set", h.dataIfname, "up"]),
      sh(["ip", "-n", h.namespace, "link", "set", "lo", "up"]),
      ...topo.hosts.filter((o) => o !== h).map((o) => sh(["ip", "-n", h.namespace, "route", "add", `${o.dataAddress}/32`, "dev", h.dataIfname])),
    );
  });
  if (!Number.isInteger(count / NETEM_GUEST_ROUNDS)) throw new RangeError(`ping count must be a multiple of ${NETEM_GUEST_ROUNDS}, got ${count}`);
  const ping = (p: TopoHost) => pingArgv(client.namespace, p.dataAddress, count / NETEM_GUEST_ROUNDS, intervalS);
  // Rounds alternating between the peers: a stretch of load on the host falls on both series.
  const rounds = (phase: string) => {
    for (let r = 0; r < NETEM_GUEST_ROUNDS; r++) for (const p of peers) lines.push(sh(["section", `${phase}-${p.role}`, ...ping(p)]));
  };
  // One ping first, unrecorded: ARP and the first packet's cold caches stay out of both series.
  for (const p of peers) lines.push(`${sh(pingArgv(client.namespace, p.dataAddress, 1, intervalS))} >/dev/null 2>&1`);
  rounds("baseline");
  const tcCommands = topo.hosts.flatMap((h) => {
    const delays = peerDelays(h, topo.hosts);
    writeNetemTables(tableDir, delays);
    return netemCommands(h.namespace, h.dataIfname, delays, null, tableDir).map((argv) => ({ host: h.role, argv }));
  });
  tcCommands.forEach((c, i) => lines.push(sh(["section", `tc-${i}`, ...c.argv])));
  rounds("netem");
  for (const h of topo.hosts) lines.push(sh(["section", `qdiscs-${h.role}`, "tc", "-n", h.namespace, "-s", "qdisc", "show", "dev", h.dataIfname]));
  const pairs = peers.map((p) => {
    const there = peerDelays(client, topo.hosts).find((d) => d.peerRole === p.role)!;
    const back = peerDelays(p, topo.hosts).find((d) => d.peerRole === client.role)!;
    return { there, back };
  });
  return { client, hosts: topo.hosts, tcCommands, pairs, script: lines.join("\n") + "\n" };
}

/** Packets each netem qdisc sent, by its parent class, from `tc -s qdisc show` output. */
export function netemPacketsByParent(output: string): Map<string, number> {
  const sent = new Map<string, number>();
  for (const m of output.matchAll(/^qdisc netem \S+ parent (\S+)[^\n]*\n\s*Sent \d+ bytes (\d+) pkt/gm)) sent.set(m[1]!, Number(m[2]));
  return sent;
}

/** The class latlab's commands send a destination to: the flowid of the u32 filter matching `address`/32. */
export function flowidFor(argvs: readonly (readonly string[])[], address: string): string | undefined {
  const filter = argvs.find((a) => a.includes("filter") && a.includes(`${address}/32`));
  return filter?.[filter.indexOf("flowid") + 1];
}

export interface NetemPairResult {
  peerRole: string;
  pathKind: string;
  modelled: { p50Us: number; p99Us: number };
  baselineUs: number[];
  netemUs: number[];
  precision: DelayLinePrecision;
}

export interface NetemGuestResult {
  plan: NetemGuestPlan;
  boot: BootResult;
  tc: { host: string; argv: string[]; code: number; output: string }[];
  /** Per host role: packets sent by its netem qdisc towards each other host role (undefined: no such qdisc). */
  netemPackets: Record<string, Record<string, number | undefined>>;
  pairs: NetemPairResult[];
}

/** Boots the guest once and reads back every tc command's exit code and every pair's RTTs. */
export async function runNetemGuest(count = 200, intervalS = 0.01): Promise<NetemGuestResult> {
  const tableDir = mkdtempSync(join(tmpdir(), "latlab-netem-tables-"));
  let boot: BootResult;
  let plan: NetemGuestPlan;
  try {
    plan = netemGuestPlan(count, intervalS, tableDir);
    boot = await bootGuest({
      script: plan.script,
      modules: NETEM_GUEST_MODULES,
      // Whatever the commands start with (tc, env …), the host's own, beside ip and ping.
      hostBinaries: [...new Set(["ip", "ping", ...plan.tcCommands.map((c) => c.argv[0]!)])],
      hostFiles: [tableDir, ...TC_LIB_DIRS.filter((d) => existsSync(d))],
      niceness: NETEM_GUEST_NICENESS,
    });
  } finally {
    rmSync(tableDir, { recursive: true, force: true });
  }
  const tc = plan.tcCommands.map((c, i) => {
    const s = section(boot, `tc-${i}`);
    return { ...c, code: s.code, output: s.output };
  });
  const pairs = plan.pairs.map(({ there, back }) => {
    const modelled = modelledRttQuantilesUs(there, back);
    const rtts = (phase: string) => boot.sections.filter((x) => x.name === `${phase}-${there.peerRole}`).flatMap((x) => parsePingRttsUs(x.output));
    const baselineUs = rtts("baseline");
    const netemUs = rtts("netem");
    return { peerRole: there.peerRole, pathKind: there.pathKind, modelled, baselineUs, netemUs, precision: precisionFromSamples(baselineUs, netemUs, modelled) };
  });
  const netemPackets: NetemGuestResult["netemPackets"] = {};
  for (const h of plan.hosts) {
    const sent = netemPacketsByParent(section(boot, `qdiscs-${h.role}`).output);
    const own = plan.tcCommands.filter((c) => c.host === h.role).map((c) => c.argv);
    netemPackets[h.role] = Object.fromEntries(plan.hosts.filter((o) => o !== h).map((o) => {
      const flowid = flowidFor(own, o.dataAddress);
      return [o.role, flowid === undefined ? undefined : sent.get(flowid)];
    }));
  }
  return { plan, boot, tc, pairs, netemPackets };
}
