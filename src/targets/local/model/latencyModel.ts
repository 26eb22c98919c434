import type { PathKind } from "../../../plan/types.ts";
import { sizeCapability } from "../../azure/catalog/capabilities.ts";
import type { RttSpread } from "./latencySpread.ts";
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
  /**
   * How round trips spread around `rttUs`, which stays their median (latencySpread.ts: a shifted
   * lognormal fitted to floor, median and p99), with its source — or none, and why.
   */
  spread: RttSpread;
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

/**
 * Spreads. Seed 000 is the one source with a distribution: minimum, p95 and p99 of ~40,000 round
 * trips per path (its "Latency Measurements" table); the floor is its minimum, the p99 its p99, and
 * its p95 checks the fit (latencySpread.ts). Its per-window table (means of 100 records, e.g.
 * same-zone 789.58–955.87 µs) shows the level drifting by ±10 % over hours: a slow wander that
 * per-packet jitter does not model and that latlab leaves out (it would need correlated draws).
 * Seeds 001 and 004 give averages only (sockperf, qperf); seed 001's ICMP ranges (0.76–1.97 ms)
 * are minima and maxima of another protocol's unknown count, not quantiles of the figures used:
 * their rows have no spread.
 */
const spread000 = (path: string, floorUs: number, p95Us: number, p99Us: number): RttSpread => ({
  kind: "shifted-lognormal",
  floorUs,
  p99Us,
  source: `${SEED000}: ${path} minimum ${floorUs} µs (floor), p99 ${p99Us} µs (p95 ${p95Us} µs, not fitted: the check)`,
});
const SPREAD_SAME_ZONE = spread000("same-zone", 726, 975, 1050);
const SPREAD_CROSS_ZONE = spread000("cross-zone", 1154, 1950, 2250);
const SPREAD_CROSS_REGION = spread000("cross-region (UK South↔UK West)", 4587, 6800, 8100);
/** Seed 000's cross-region floor and p99 relative to its median (5,300 µs): the rule for published pairs. */
export const CROSS_REGION_FLOOR_BELOW_P50_US = 5300 - 4587;
export const CROSS_REGION_P99_ABOVE_P50_US = 8100 - 5300;

const NO_SPREAD_AVERAGE_ONLY = (seed: string): RttSpread => ({ kind: "none", source: `none: ${seed} gives an average only, no minimum or percentile` });

/**
 * Rule for the Accelerated Networking rows derived from a seed-000 row: a fixed saving moves the
 * whole distribution down by the same amount (floor and p99 minus ${ACCELNET_SAVING_US} µs), the
 * jitter above the floor unchanged; rows derived from a row with no spread have none.
 */
function savedSpread(s: RttSpread): RttSpread {
  if (s.kind === "none") return { kind: "none", source: `none: derived from a row with no spread (${s.source})` };
  return { ...s, floorUs: Math.max(0, s.floorUs - ACCELNET_SAVING_US), p99Us: s.p99Us - ACCELNET_SAVING_US, source: `${RULE}, the distribution moved down with it: from ${s.source}` };
}

export const LATENCY_MODEL: readonly LatencyModelEntry[] = [
  { pathKind: "same-ppg", accelnet: true, rttUs: 126, source: `${SEED001}: 63 µs one-way inside a PPG → 126 µs RTT`, spread: NO_SPREAD_AVERAGE_ONLY("seed 001 (sockperf)") },
  { pathKind: "same-ppg", accelnet: false, rttUs: 126 + ACCELNET_SAVING_US, source: `${RULE}: 126 + ${ACCELNET_SAVING_US}`, spread: savedSpread(NO_SPREAD_AVERAGE_ONLY("seed 001 (sockperf)")) },
  { pathKind: "same-zone", accelnet: true, rttUs: 188, source: `${SEED001}: 94 µs one-way outside a PPG → 188 µs RTT`, spread: NO_SPREAD_AVERAGE_ONLY("seed 001 (sockperf)") },
  { pathKind: "same-zone", accelnet: false, rttUs: 850, source: `${SEED000}: same-zone mean RTT 850 µs`, spread: SPREAD_SAME_ZONE },
  { pathKind: "same-region", accelnet: true, rttUs: 145.8, source: `${SEED004}: 72.9 µs one-way with Accelerated Networking → 145.8 µs RTT`, spread: NO_SPREAD_AVERAGE_ONLY("seed 004 (qperf tcp_lat)") },
  { pathKind: "same-region", accelnet: false, rttUs: 313, source: `${SEED004}: 156.5 µs one-way without Accelerated Networking → 313 µs RTT`, spread: NO_SPREAD_AVERAGE_ONLY("seed 004 (qperf tcp_lat)") },
  { pathKind: "cross-zone", accelnet: true, rttUs: 1425 - ACCELNET_SAVING_US, source: `${RULE}: 1425 − ${ACCELNET_SAVING_US}`, spread: savedSpread(SPREAD_CROSS_ZONE) },
  { pathKind: "cross-zone", accelnet: false, rttUs: 1425, source: `${SEED000}: cross-zone (AZ1↔AZ2, UK South) mean RTT 1,425 µs`, spread: SPREAD_CROSS_ZONE },
  // Cross-region: these rows are only the fallback for a pair Microsoft's table lacks; a pair it
  // has gets the published figure (regionPairRtt).
  { pathKind: "cross-region", accelnet: true, rttUs: 5300 - ACCELNET_SAVING_US, source: `${RULE}: 5300 − ${ACCELNET_SAVING_US}`, spread: savedSpread(SPREAD_CROSS_REGION) },
  { pathKind: "cross-region", accelnet: false, rttUs: 5300, source: `${SEED000}: UK South↔UK West (peered VNets) mean RTT 5,300 µs — used only for a region pair Microsoft's round-trip table lacks`, spread: SPREAD_CROSS_REGION },
];

export interface RegionPairRtt {
  /** Round trip without Accelerated Networking, µs. */
  rttUs: number;
  source: string;
  basis: "published" | "fallback";
  /** Round trips around `rttUs` (their median). */
  spread: RttSpread;
}

/**
 * Rule for a published pair's spread: Microsoft publishes a P50 only. The pair takes seed 000's
 * cross-region floor and p99 as offsets from its median (−${CROSS_REGION_FLOOR_BELOW_P50_US} µs and
 * +${CROSS_REGION_P99_ABOVE_P50_US} µs), not as ratios: the added distance is fibre, whose delay does not
 * vary, so the jitter is taken to be the two regions' edges' and not to grow with the distance.
 */
export function publishedPairSpread(p50Us: number): RttSpread {
  return {
    kind: "shifted-lognormal",
    floorUs: Math.max(0, p50Us - CROSS_REGION_FLOOR_BELOW_P50_US),
    p99Us: p50Us + CROSS_REGION_P99_ABOVE_P50_US,
    source: `rule: Microsoft's table gives a P50 only; floor and p99 at seed 000's cross-region offsets from its median (−${CROSS_REGION_FLOOR_BELOW_P50_US} µs, +${CROSS_REGION_P99_ABOVE_P50_US} µs): ${SPREAD_CROSS_REGION.source}`,
  };
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
  if (published) return { rttUs: published.rttUs, source: published.source, basis: "published", spread: publishedPairSpread(published.rttUs) };
  const seed = LATENCY_MODEL.find((m) => m.pathKind === "cross-region" && !m.accelnet)!;
  return { rttUs: seed.rttUs, source: `fallback, ${regionA}↔${regionB} not in Microsoft's round-trip table: ${seed.source}`, basis: "fallback", spread: seed.spread };
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
      ? { pathKind, accelnet, rttUs: pair.rttUs - ACCELNET_SAVING_US, source: `${RULE}: ${pair.rttUs} − ${ACCELNET_SAVING_US}, from ${pair.source}`, spread: savedSpread(pair.spread) }
      : { pathKind, accelnet, rttUs: pair.rttUs, source: pair.source, spread: pair.spread };
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
