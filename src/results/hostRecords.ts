import type { Plan } from "../plan/types.ts";
import type { HostEndpoint } from "../targets/target.ts";
import type { HostRecord } from "./schema.ts";

/** Fields of a host that a target can report back under the same name. */
const COMPARABLE = ["region", "zone", "ppg", "availabilitySet", "vnet", "size", "accelnet"] as const;

/**
 * What each host of a variant was asked to be, next to what the target says it got, with
 * every difference spelled out. A target that does not report a field is not a mismatch.
 */
export function hostRecords(plan: Plan, variantId: string, endpoints: readonly HostEndpoint[]): HostRecord[] {
  // A deployment may serve several variants (ones differing only in the measured path).
  const deployments = plan.deployments.filter((d) => d.variants.includes(variantId));
  return deployments.flatMap((d) =>
    d.hosts.map((host) => {
      const endpoint = endpoints.find((e) => e.deployment === d.id && e.role === host.role);
      const actual = endpoint?.actual ?? {};
      const mismatches = COMPARABLE.filter((k) => k in actual && actual[k] !== host[k]).map(
        (k) => `${k}: asked ${JSON.stringify(host[k])}, got ${JSON.stringify(actual[k])}`,
      );
      return { ...host, deployment: d.id, actual, mismatches, ...(endpoint?.placement ? { placement: endpoint.placement } : {}) };
    }),
  );
}
