// The latency shaping's added error: for latlab's same-zone and cross-zone pairs, the round trip
// measured through each shaping path against the model's (latencySpread.ts modelledRttQuantilesUs),
// p50 and p99, side by side:
//   - the delay line (NFQUEUE + latlab-delayline) between two namespaces on this machine;
//   - netem on this machine's kernel, where it has sch_netem;
//   - netem in Debian's kernel booted under qemu (TCG), latlab's own netemCommands run verbatim
//     (tests/support/qemu/netemGuest.ts; TCG's timers add their own lateness, so this column says
//     what the commands do in an emulator, not what netem does on hardware).
// A path that is not available here says so, and why. Errors are quantile against quantile
// (precision.ts precisionFromSamples): measured − the path's own p50 without shaping − modelled.
// Each figure is one series of single pings (200, 10 ms apart): the spread of packets in one
// bring-up, no confidence interval. Builds namespaces: run under `flock /tmp/latlab-ns.lock`.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureHelperBuilt } from "../src/targets/local/delayLine/build.ts";
import { DEFAULT_TUNING, delayQueues, delayRuleCommands } from "../src/targets/local/delayLine/delayLine.ts";
import { startHelper, stopHelper, type RunningHelper } from "../src/targets/local/delayLine/helperProcess.ts";
import { measureAroundBringUp, type DelayLinePrecision } from "../src/targets/local/delayLine/precision.ts";
import { execCommand, mustExec } from "../src/targets/local/exec.ts";
import { modelledRttQuantilesUs } from "../src/targets/local/model/latencySpread.ts";
import { runNames, runShort } from "../src/targets/local/network/names.ts";
import { killNamespaceProcesses } from "../src/targets/local/network/namespaceProcesses.ts";
import { writeNetemTables } from "../src/targets/local/network/netemDistribution.ts";
import { detectQdiscSupport, netemCommands, peerDelays, type PeerDelay } from "../src/targets/local/network/shaping.ts";
import { buildDeploymentTopology, type TopoHost } from "../src/targets/local/network/topology.ts";
import { NETEM_GUEST_DEPLOYMENT, runNetemGuest } from "../tests/support/qemu/netemGuest.ts";

const PINGS = 200;
const exec = execCommand;
const short = runShort(`shaping-bench-${process.pid}-${Date.now()}`);

type Column = { label: string } & ({ precisions: Map<string, DelayLinePrecision> } | { unavailable: string });

const topo = buildDeploymentTopology(NETEM_GUEST_DEPLOYMENT, runNames("netem-qemu"));
const [client, ...peers] = topo.hosts as [TopoHost, ...TopoHost[]];
const delayOf = (from: TopoHost, to: TopoHost): PeerDelay => peerDelays(from, [from, to])[0]!;
const why = (e: unknown) => (e instanceof Error ? e.message : String(e)).split("\n")[0]!.slice(0, 160);

/** Two namespaces joined by a veth, with the pair's addresses (/32, on-link routes); `shape` brings the shaping up; always torn down. */
async function throughPair(peer: TopoHost, shape: (ends: { ns: string; host: TopoHost; towards: PeerDelay }[], dir: string) => Promise<() => Promise<void>>): Promise<DelayLinePrecision> {
  const ends = [
    { ns: `ll-${short}-0-a`, host: client, towards: delayOf(client, peer) },
    { ns: `ll-${short}-0-b`, host: peer, towards: delayOf(peer, client) },
  ];
  const dir = mkdtempSync(join(tmpdir(), `latlab-${short}-`));
  let stop = async () => {};
  try {
    for (const e of ends) await mustExec(exec, ["ip", "netns", "add", e.ns], "namespace");
    await mustExec(exec, ["ip", "-n", ends[0]!.ns, "link", "add", "eth0", "type", "veth", "peer", "name", "eth0", "netns", ends[1]!.ns], "veth");
    for (const [i, e] of ends.entries()) {
      await mustExec(exec, ["ip", "-n", e.ns, "addr", "add", `${e.host.dataAddress}/32`, "dev", "eth0"], "address");
      await mustExec(exec, ["ip", "-n", e.ns, "link", "set", "eth0", "up"], "link up");
      await mustExec(exec, ["ip", "-n", e.ns, "link", "set", "lo", "up"], "lo up");
      await mustExec(exec, ["ip", "-n", e.ns, "route", "add", `${ends[1 - i]!.host.dataAddress}/32`, "dev", "eth0"], "route");
    }
    const modelled = modelledRttQuantilesUs(ends[0]!.towards, ends[1]!.towards);
    return await measureAroundBringUp(exec, { namespace: ends[0]!.ns, address: peer.dataAddress }, modelled, async () => {
      stop = await shape(ends, dir);
    }, PINGS);
  } finally {
    await stop();
    for (const e of ends) {
      await killNamespaceProcesses(exec, e.ns, 1_000, [], []);
      await exec(["ip", "netns", "del", e.ns]);
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

async function column(label: string, run: (peer: TopoHost) => Promise<DelayLinePrecision>): Promise<Column> {
  try {
    const precisions = new Map<string, DelayLinePrecision>();
    for (const p of peers) precisions.set(p.role, await run(p));
    return { label, precisions };
  } catch (e) {
    return { label, unavailable: why(e) };
  }
}

async function delayLineColumn(): Promise<Column> {
  if (process.getuid?.() !== 0) return { label: "delay line (this machine)", unavailable: "needs root (namespaces, iptables)" };
  let binary: string;
  try {
    binary = await ensureHelperBuilt({ exec });
  } catch (e) {
    return { label: "delay line (this machine)", unavailable: `helper does not build: ${why(e)}` };
  }
  return column("delay line (this machine)", (peer) =>
    throughPair(peer, async (ends, dir) => {
      const helpers: RunningHelper[] = [];
      const stop = async () => {
        for (const h of helpers) await stopHelper(h, 1_000);
      };
      try {
        for (const e of ends) {
          const queues = delayQueues([e.towards]);
          helpers.push(await startHelper({ binary, namespace: e.ns, queues, tuning: DEFAULT_TUNING, logPath: join(dir, `${e.ns}.log`) }));
          for (const argv of delayRuleCommands(e.ns, "eth0", queues)) await mustExec(exec, argv, "delay rule");
        }
      } catch (e) {
        await stop();
        throw e;
      }
      return stop;
    }),
  );
}

async function hostNetemColumn(): Promise<Column> {
  const label = "netem (this machine's kernel)";
  if (process.getuid?.() !== 0) return { label, unavailable: "needs root (namespaces)" };
  const scratch = `ll-${short}-0-probe`;
  await mustExec(exec, ["ip", "netns", "add", scratch], "scratch namespace");
  const support = await detectQdiscSupport(exec, scratch).finally(() => exec(["ip", "netns", "del", scratch]));
  if (!support.netem) return { label, unavailable: `kernel has no netem (${support.netemError ?? "refused"})` };
  return column(label, (peer) =>
    throughPair(peer, async (ends, dir) => {
      for (const e of ends) {
        writeNetemTables(dir, [e.towards]);
        for (const argv of netemCommands(e.ns, "eth0", [e.towards], null, dir)) await mustExec(exec, argv, "netem");
      }
      return async () => {};
    }),
  );
}

async function qemuNetemColumn(): Promise<Column> {
  const label = "netem (Debian kernel, qemu TCG)";
  try {
    const guest = await runNetemGuest(PINGS, 0.01);
    const refused = guest.tc.filter((c) => c.code !== 0);
    if (refused.length > 0) return { label, unavailable: `the guest refused ${refused.length} tc command(s): ${refused[0]!.argv.join(" ")}: ${refused[0]!.output.trim()}` };
    return { label: `netem (Debian ${guest.boot.kernel.version}, qemu TCG)`, precisions: new Map(guest.pairs.map((p) => [p.peerRole, p.precision])) };
  } catch (e) {
    return { label, unavailable: why(e) };
  }
}

const f = (us: number) => `${us >= 0 ? "+" : ""}${Math.round(us)}`;

export async function shapingErrorBench(): Promise<void> {
  console.log(`\nLatency shaping's added error, measured − modelled RTT (µs; one series of ${PINGS} pings per cell, single packets, no CI)`);
  const columns = [await delayLineColumn(), await hostNetemColumn(), await qemuNetemColumn()];
  for (const p of peers) {
    const m = modelledRttQuantilesUs(delayOf(client, p), delayOf(p, client));
    console.log(`  ${client.role} → ${p.role} (${delayOf(client, p).pathKind}), modelled p50 ${Math.round(m.p50Us)} / p99 ${Math.round(m.p99Us)}:`);
    for (const c of columns) {
      if ("unavailable" in c) {
        console.log(`    ${c.label.padEnd(40)} not available here: ${c.unavailable}`);
        continue;
      }
      const x = c.precisions.get(p.role)!;
      console.log(`    ${c.label.padEnd(40)} own p50 ${Math.round(x.baselineP50Us)}, shaped p50 ${Math.round(x.delayedP50Us)} / p99 ${Math.round(x.delayedP99Us)} → error p50 ${f(x.p50ErrorUs)} / p99 ${f(x.p99ErrorUs)}`);
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await shapingErrorBench();
