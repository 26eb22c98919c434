import type { Zone } from "../../../dsl/placement.ts";
import { regionCapability, sizeCapability } from "./capabilities.ts";
import type { SizeFacts } from "./sizes/sizeFacts.ts";

/**
 * What Azure refuses of one host by the facts latlab's catalog holds: a zone in a region without
 * zones, Accelerated Networking on a size without it. Pure and free of the Azure program, so that
 * every target that plays Azure's hosts (the Azure target's validateAzure.ts, the local target's
 * planCheck.ts) refuses the same hosts for the same reason, with the same source.
 */

/**
 * Why `zone` cannot be used in `region`, with the region table's source; undefined when it can,
 * or when the region is not in the table (an unknown region is its own refusal).
 */
export function zoneProblem(region: string, zone: Zone | null): string | undefined {
  const r = regionCapability(region);
  if (!r || zone === null || r.zones.includes(zone)) return undefined;
  return r.zones.length
    ? `${r.displayName} has zones ${r.zones.join(", ")}, not ${zone}`
    : `${r.displayName} (${region}) has no availability zones (${r.source.url}); a zonal host (zone ${zone}) cannot go there. Use zone: null`;
}

/**
 * Why Accelerated Networking cannot be on for a size with these facts, naming where the fact comes
 * from (the subscription's live SKU list, latlab's SKU snapshot, or Microsoft's size page);
 * undefined when the size has it or when that is not known (UNKNOWN refuses nothing offline).
 */
export function accelnetProblem(size: string, facts: SizeFacts): string | undefined {
  if (facts.acceleratedNetworking !== false) return undefined;
  const source =
    facts.origin === "live"
      ? "Azure's SKU capability AcceleratedNetworkingEnabled is False, read from this subscription's Resource SKUs API"
      : facts.origin === "snapshot"
        ? "Azure's SKU capability AcceleratedNetworkingEnabled is False, in latlab's SKU snapshot"
        : `Microsoft's size page: ${sizeCapability(facts.name)?.source.url ?? "src/targets/azure/catalog/capabilities.ts"}`;
  return `${size}${facts.vcpus === null ? "" : ` (${facts.vcpus} vCPU)`} does not support Accelerated Networking (${source}); Azure would refuse the NIC (VMSizeIsNotPermittedToEnableAcceleratedNetworking). Set accelnet: false or pick a size that has it`;
}
