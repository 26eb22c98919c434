import type { ResolvedHost } from "../../../dsl/placement.ts";
import { pathKindBetween } from "../network/topology.ts";
import { modelRtt, type LatencyModelEntry } from "./latencyModel.ts";

/**
 * Which of the latency model's entries a run applied (pure): one per pair of hosts that get a
 * delay, as results.json's shaping.model records them. Not the fixed table (LATENCY_MODEL): a
 * cross-region pair takes Microsoft's published figure for its two regions (regionLatency.ts),
 * which only the pair knows — its figure, source and spread are what "sources in results.json"
 * points to. The local target's hosts and the emulator's VMs alike.
 */

/** The model's round trip between two hosts by their placement (path kind, both ends' Accelerated Networking, regions). */
export function hostPairModelRtt(a: ResolvedHost, b: ResolvedHost): LatencyModelEntry {
  return modelRtt(pathKindBetween(a, b), a.accelnet, b.accelnet, [a.region, b.region]);
}

/**
 * The entries used between every two hosts of a group — hosts that delay each other: one
 * deployment's, all the running VMs of a rehearsal — each once, spread included.
 */
export function modelEntriesUsed<T>(groups: readonly (readonly T[])[], rttOf: (a: T, b: T) => LatencyModelEntry): LatencyModelEntry[] {
  const seen = new Map<string, LatencyModelEntry>();
  for (const hosts of groups) {
    hosts.forEach((a, i) => {
      for (const b of hosts.slice(i + 1)) {
        const m = rttOf(a, b);
        seen.set(JSON.stringify([m.pathKind, m.accelnet, m.rttUs, m.source, m.spread]), m);
      }
    });
  }
  return [...seen.values()];
}

/** The local target's: per deployment, every two of its hosts (peerDelays delays exactly these). */
export function deploymentModelEntries(deployments: readonly { hosts: readonly { spec: ResolvedHost }[] }[]): LatencyModelEntry[] {
  return modelEntriesUsed(
    deployments.map((d) => d.hosts.map((h) => h.spec)),
    hostPairModelRtt,
  );
}
