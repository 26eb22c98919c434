import type { ResolvedHost } from "../dsl/placement.ts";
import type { NetworkPath, PathKind } from "./types.ts";

/**
 * How traffic between two hosts travels, from where they are placed. VNets are left out on
 * purpose: placement (PPG, zone, region) is where the hosts physically are, the VNet is which
 * overlay network they are in; crossesPeering() says the second.
 */
export function pathKind(a: ResolvedHost, b: ResolvedHost): PathKind {
  if (a.region !== b.region) return "cross-region";
  if (a.ppg !== null && a.ppg === b.ppg) return "same-ppg";
  if (a.zone !== null && b.zone !== null) return a.zone === b.zone ? "same-zone" : "cross-zone";
  return "same-region";
}

/** Whether two hosts sit in one VNet: VNets are per region, a null vnet is the region's default one. */
export function sameVnet(a: ResolvedHost, b: ResolvedHost): boolean {
  return a.region === b.region && a.vnet === b.vnet;
}

/**
 * Whether the private path between two hosts goes through a VNet peering (another VNet of the
 * same region, or any other region: latlab peers the VNets a deployment spans). The public path
 * never does: it goes to the host's public IP, outside every VNet.
 */
export function crossesPeering(a: ResolvedHost, b: ResolvedHost, path: NetworkPath): boolean {
  return path === "private" && !sameVnet(a, b);
}
