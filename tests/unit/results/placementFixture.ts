import { defineExperiment } from "../../../src/index.ts";
import { hostRecords } from "../../../src/results/hostRecords.ts";
import type { Colocation, HostPlacement } from "../../../src/results/placement.ts";
import type { HostEndpoint } from "../../../src/targets/target.ts";
import { around, fakeRun } from "../history/fakeRun.ts";

/** Azure's recorded Aligned / Unknown statuses, and the documented not-aligned one (tests/fixtures/azure/placement/README.md). */
export const STATUS: Record<Colocation, { code: string; level: string; displayStatus: string; message: string }> = {
  Aligned: { code: "ColocationStatus/Aligned", level: "Info", displayStatus: "Aligned", message: "All resources in the proximity placement group are aligned." },
  Unknown: { code: "ColocationStatus/Unknown", level: "Warning", displayStatus: "Unknown", message: "Colocation status is currently unknown." },
  NotAligned: { code: "ColocationStatus/NotAligned", level: "Warning", displayStatus: "Not Aligned", message: "At least one VM resource is not aligned with the proximity placement group." },
};

/**
 * A run of ppg false → true (ping client → server, three replicas) whose hosts carry placement
 * evidence as the Azure target records it: the PPG variant's PPG `status`, instance views on all.
 */
export function ResultsPlacementFixture(status: Colocation, options: { withEvidence?: boolean; source?: HostPlacement["source"] } = {}) {
  const experiment = defineExperiment({
    name: "ppg-check",
    description: "ppg",
    axes: { ppg: [false, true] },
    baseline: { ppg: false },
    defaults: { region: "eastus", zone: "1", size: "Standard_D2s_v5", accelnet: true },
    hosts: { server: {}, client: {} },
    measure: [{ tool: "ping" }],
    replicas: 1,
  });
  const run = fakeRun("r-ppg", (c) => around(c.variant === "ppg=true" ? 80 : 100, 60), { experiment: experiment as never });
  const endpoints = run.plan.deployments.flatMap((d) =>
    d.hosts.map((h, i): HostEndpoint => {
      const placement: HostPlacement = {
        readAt: "2026-11-21T10:00:00.000Z",
        source: options.source ?? "azure",
        vm: { name: `latlab-r-d${d.index}-${h.role}`, read: "ok", platformFaultDomain: i, platformUpdateDomain: i, powerState: "running", provisioningState: "succeeded" },
        ...(h.ppg ? { ppg: { name: h.ppg, id: `/subscriptions/s/resourceGroups/latlab-r/providers/Microsoft.Compute/proximityPlacementGroups/latlab-r-d${d.index}-ppg-${h.ppg}`, status, colocationStatus: STATUS[status] } } : {}),
      };
      return { deployment: d.id, role: h.role, ssh: { host: "h", port: 22, username: "u", privateKey: "" }, hostKey: "", privateAddress: "", workDir: "", actual: {}, ...(options.withEvidence === false ? {} : { placement }) };
    }),
  );
  const results = { ...run.results, target: "azure", variants: run.results.variants.map((v) => ({ ...v, hosts: hostRecords(run.plan, v.id, endpoints) })) };
  return { ...run, results };
}
