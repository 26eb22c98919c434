import type { PathKind } from "../../../plan/types.ts";
import { sizeCapability } from "../../azure/catalog/capabilities.ts";
import { publishedRegionRtt } from "./regionLatency.ts";

/**
 * What the local target would emulate, as data with its sources. Nothing here is measured on
 * this machine: these are figures published by people who measured Azure, and the rules used to
 * fill the combinations nobody published.
 */

export interface LatencyModelEntry {
  pathKind: PathKind;
  /** Accelerated Networking on both ends of the pair. */
  accelnet: boolean;
  /** Round-trip time to emulate, in microseconds. */
  rttUs: number;
  /** Where the figure comes from, or the rule it was derived by. */
  source: string;
}

const SEED000 = "seed 000 (Painter, 'Azure Latency Part 1', 2025: TCP echo, 64 B once a second for ~11 h, B1 VMs, no Accelerated Networking, UK South/UK West)";
const SEED001 = "seed 001 ('Reduce Latency with Azure Proximity Placement Groups': sockperf, D2s_v4 with Accelerated Networking, East US; one-way averages doubled to RTT)";
const SEED004 = "seed 004 ('Reducing latency through Proximity Placement groups in Azure': qperf tcp_lat, 2× D3_v2 in one region, availability set, no zones; one-way averages doubled to RTT)";

/**
 * Derivation rule for the cells no seed measured: Accelerated Networking removes host-side
 * (virtual switch) work, a fixed amount per round trip, and does not shorten the path itself.
 * The amount is taken where both sides were measured on the same path kind:
 * same-zone, 850 µs without (seed 000) − 188 µs with (seed 001) = 662 µs.
 * So: with = without − 662 µs, and without = with + 662 µs.
 */
export const ACCELNET_SAVING_US = 850 - 188;
const RULE = `derived: Accelerated Networking modelled as a fixed per-RTT saving of ${ACCELNET_SAVING_US} µs (same-zone 850 µs without, seed 000, minus 188 µs with, seed 001)`;

export const LATENCY_MODEL: readonly LatencyModelEntry[] = [
  { pathKind: "same-ppg", accelnet: true, rttUs: 126, source: `${SEED001}: 63 µs one-way inside a PPG → 126 µs RTT` },
  { pathKind: "same-ppg", accelnet: false, rttUs: 126 + ACCELNET_SAVING_US, source: `${RULE}: 126 + ${ACCELNET_SAVING_US}` },
  { pathKind: "same-zone", accelnet: true, rttUs: 188, source: `${SEED001}: 94 µs one-way outside a PPG → 188 µs RTT` },
  { pathKind: "same-zone", accelnet: false, rttUs: 850, source: `${SEED000}: same-zone mean RTT 850 µs` },
  { pathKind: "same-region", accelnet: true, rttUs: 145.8, source: `${SEED004}: 72.9 µs one-way with Accelerated Networking → 145.8 µs RTT` },
  { pathKind: "same-region", accelnet: false, rttUs: 313, source: `${SEED004}: 156.5 µs one-way without Accelerated Networking → 313 µs RTT` },
  { pathKind: "cross-zone", accelnet: true, rttUs: 1425 - ACCELNET_SAVING_US, source: `${RULE}: 1425 − ${ACCELNET_SAVING_US}` },
  { pathKind: "cross-zone", accelnet: false, rttUs: 1425, source: `${SEED000}: cross-zone (AZ1↔AZ2, UK South) mean RTT 1,425 µs` },
  // Cross-region: these rows are only the fallback for a pair Microsoft's table lacks; a pair it
  // has gets the published figure (regionPairRtt).
  { pathKind: "cross-region", accelnet: true, rttUs: 5300 - ACCELNET_SAVING_US, source: `${RULE}: 5300 − ${ACCELNET_SAVING_US}` },
  { pathKind: "cross-region", accelnet: false, rttUs: 5300, source: `${SEED000}: UK South↔UK West (peered VNets) mean RTT 5,300 µs — used only for a region pair Microsoft's round-trip table lacks` },
];

export interface RegionPairRtt {
  /** Round trip without Accelerated Networking, µs. */
  rttUs: number;
  source: string;
  basis: "published" | "fallback";
}

/**
 * The round trip between two regions (ARM names, capabilities.ts REGIONS), the same both ways:
 * Microsoft's published figure for the pair (regionLatency.ts: P50 of a 30-day window, mean of
 * the two directions). Fallback, for a pair the table lacks (a region latlab knows that
 * Microsoft does not list): seed 000's UK South↔UK West 5,300 µs, the one cross-region figure
 * measured VM to VM that latlab has. Not a distance rule: that would need region coordinates and
 * a fitted ms-per-km, two more unsourced inputs, and would look more precise than it is; the
 * fallback is named as such wherever the figure is shown.
 */
export function regionPairRtt(regionA: string, regionB: string): RegionPairRtt {
  const published = publishedRegionRtt(regionA, regionB);
  if (published) return { rttUs: published.rttUs, source: published.source, basis: "published" };
  const seed = LATENCY_MODEL.find((m) => m.pathKind === "cross-region" && !m.accelnet)!;
  return { rttUs: seed.rttUs, source: `fallback, ${regionA}↔${regionB} not in Microsoft's round-trip table: ${seed.source}`, basis: "fallback" };
}

/**
 * The pair uses the Accelerated Networking row only when both ends have it (seed 004: the
 * feature helps between two VMs that both have it). Cross-region takes the pair's regions
 * (regionPairRtt), with the same Accelerated Networking rule as the other kinds.
 */
export function modelRtt(pathKind: PathKind, accelnetA: boolean, accelnetB: boolean, regions?: readonly [string, string]): LatencyModelEntry {
  const accelnet = accelnetA && accelnetB;
  if (pathKind === "cross-region") {
    if (!regions) throw new Error("the cross-region model needs the pair's regions");
    const pair = regionPairRtt(regions[0], regions[1]);
    return accelnet
      ? { pathKind, accelnet, rttUs: pair.rttUs - ACCELNET_SAVING_US, source: `${RULE}: ${pair.rttUs} − ${ACCELNET_SAVING_US}, from ${pair.source}` }
      : { pathKind, accelnet, rttUs: pair.rttUs, source: pair.source };
  }
  const e = LATENCY_MODEL.find((m) => m.pathKind === pathKind && m.accelnet === accelnet);
  if (!e) throw new Error(`latency model has no entry for ${pathKind}, accelnet=${accelnet}`);
  return e;
}

// ---------------------------------------------------------------------------------------------
// Bandwidth

export interface BandwidthEntry {
  /** Egress cap in Mbit/s, or null where Azure publishes no figure. */
  mbit: number | null;
  source: string;
}

const DOCS = "Azure docs, VM sizes, 'Max Bandwidth (Mbps)' / 'Expected network bandwidth (Mbps)' column";
const src = (series: string) => `${DOCS}, ${series}`;

/** Azure's documented expected network bandwidth per VM size (aggregate egress, all NICs). */
export const VM_BANDWIDTH: Readonly<Record<string, BandwidthEntry>> = {
  Standard_B1s: { mbit: null, source: `${src("B-series (Bv1)")}: left empty — Microsoft publishes no figure for B-series (MicrosoftDocs/azure-docs#8765: 'the B-series is variable')` },
  Standard_B1ms: { mbit: null, source: `${src("B-series (Bv1)")}: left empty — Microsoft publishes no figure for B-series (MicrosoftDocs/azure-docs#8765: 'the B-series is variable')` },
  Standard_D2s_v3: { mbit: 1000, source: src("Dsv3-series") },
  Standard_D4s_v3: { mbit: 2000, source: src("Dsv3-series") },
  Standard_D8s_v3: { mbit: 4000, source: src("Dsv3-series") },
  Standard_D2s_v4: { mbit: 5000, source: src("Dsv4-series") },
  Standard_D4s_v4: { mbit: 10000, source: src("Dsv4-series") },
  Standard_D8s_v4: { mbit: 12500, source: src("Dsv4-series") },
  Standard_D2s_v5: { mbit: 12500, source: src("Dsv5-series") },
  Standard_D4s_v5: { mbit: 12500, source: src("Dsv5-series") },
  Standard_D8s_v5: { mbit: 12500, source: src("Dsv5-series") },
  Standard_D16s_v5: { mbit: 12500, source: src("Dsv5-series") },
  Standard_D1_v2: { mbit: 750, source: src("Dv2-series") },
  Standard_D2_v2: { mbit: 1500, source: src("Dv2-series") },
  Standard_D3_v2: { mbit: 3000, source: src("Dv2-series") },
  Standard_D4_v2: { mbit: 6000, source: src("Dv2-series") },
  Standard_D5_v2: { mbit: 12000, source: src("Dv2-series") },
  Standard_DS11_v2: { mbit: 1500, source: src("DSv2-series 11-15 (memory optimized)") },
  Standard_DS12_v2: { mbit: 3000, source: src("DSv2-series 11-15 (memory optimized)") },
  Standard_DS13_v2: { mbit: 6000, source: src("DSv2-series 11-15 (memory optimized)") },
  Standard_DS14_v2: { mbit: 12000, source: src("DSv2-series 11-15 (memory optimized)") },
};

export interface BandwidthLookup {
  size: string;
  /** Cap to apply, or null for none. */
  mbit: number | null;
  /** Why: the source of the figure, or why there is none. */
  note: string;
}

export function bandwidthForSize(size: string): BandwidthLookup {
  // This table first, then Azure's catalogue (capabilities.ts), which knows more sizes.
  const cap = sizeCapability(size);
  const e = Object.hasOwn(VM_BANDWIDTH, size)
    ? VM_BANDWIDTH[size]
    : cap
      ? { mbit: cap.bandwidthMbps, source: `${cap.source.title} (${cap.source.url})${cap.bandwidthMbps === null ? ": Microsoft publishes no bandwidth figure for this size" : ""}` }
      : undefined;
  if (!e) return { size, mbit: null, note: `${size}: not in latlab's bandwidth table, no cap applied` };
  if (e.mbit === null) return { size, mbit: null, note: `${size}: uncapped, no cap applied — ${e.source}` };
  return { size, mbit: e.mbit, note: `${size}: ${e.mbit} Mbit/s — ${e.source}` };
}
