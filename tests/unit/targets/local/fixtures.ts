import type { ResolvedHost } from "../../../../src/dsl/placement.ts";
import type { Deployment } from "../../../../src/plan/types.ts";

export function host(role: string, over: Partial<ResolvedHost> = {}): ResolvedHost {
  return { role, region: "uksouth", zone: "1", ppg: null, availabilitySet: null, size: "Standard_B1s", accelnet: false, vnet: null, ...over };
}

/** Two hosts in one PPG (uksouth zone 1), one more in zone 1, one in zone 2, one in ukwest (no zone). */
export function fiveHostDeployment(index = 0): Deployment {
  return {
    id: `d${index}`,
    index,
    variant: "base",
    variants: ["base"],
    replica: 0,
    hosts: [
      host("client", { ppg: "rack-a" }),
      host("server", { ppg: "rack-a", size: "Standard_D3_v2" }),
      host("zone1"),
      host("zone2", { zone: "2" }),
      host("west", { region: "ukwest", zone: null }),
    ],
  };
}
