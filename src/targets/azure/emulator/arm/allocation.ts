import { ArmError } from "./armError.ts";
import type { CloudView, StoredResource } from "./cloud.ts";
import type { FaultBook } from "./faults.ts";

/**
 * Allocation: the step after ARM accepted a VM, where Azure looks for a host that satisfies every
 * constraint of the request. When none does, the VM's operation fails with
 * OverconstrainedAllocationRequest and the VM stays in ARM as Failed (as for AllocationFailed).
 *
 * What Microsoft documents (MicrosoftDocs/azure-compute-docs articles/virtual-machines/
 * co-location.md @ 3cb250d, "Proximity placement groups"), and what the emulator enforces of it:
 *  - "A proximity placement group is a colocation constraint rather than a pinning mechanism. It's
 *    pinned to a specific data center with the deployment of the first resource to use it." and
 *    "When you ask for the first virtual machine in the proximity placement group, the data center
 *    is automatically selected. In some cases, a second request for a different VM size, may fail
 *    if it doesn't exist in that data center. In this case, an OverconstrainedAllocationRequest
 *    error is returned." — a PPG without an intent: the emulator plays the datacenter its first
 *    VM chose as offering that VM's size only, so a member of another size fails (the worst case
 *    the page allows; "have both resources deployed using a single ARM template" is no way out
 *    for Pulumi, which creates VMs one PUT each).
 *  - "the intent is used to select a datacenter that supports all VM sizes indicated in the
 *    intent" and "Creating or adding VMs with sizes that are not included in the intent is
 *    allowed, but not recommended. The size may not exist in the selected datacenter and can
 *    result in failures at the time of VM deployment." — a PPG with an intent: the emulator plays
 *    its datacenter as offering the intent's sizes only, so a VM of another size fails, zonal PPG
 *    or not, in any order ("the VMs are not required to be deployed in any particular order").
 * Not enforced, because nothing says which combinations fail: "Proximity Placement Group creation
 * or update will succeed only when at least one data center supports all the VM Sizes specified
 * in the intent. Otherwise, the creation or update will fail with OverconstrainedAllocationRequest"
 * — the `overconstrained-allocation` fault (faults.ts) plays that, and any other allocation failure.
 *
 * Azure's text (an operation that failed; GoogleCloudPlatform/PerfKitBenchmarker issue 1863,
 * Azure-Samples/aks-store-demo issue 115): code OverconstrainedAllocationRequest, "Allocation
 * failed. VM(s) with the following constraints cannot be allocated, because the condition is too
 * restrictive. Please remove some constraints and try again. Constraints applied are:\n  - Networking
 * Constraints (such as Accelerated Networking or IPv6)\n  - VM Size\n". A zonal VM may get
 * OverconstrainedZonalAllocationRequest instead (jenkins-infra/azure pull 1416, with "- Availability
 * Zone" among the constraints); the page names OverconstrainedAllocationRequest for PPGs, and so
 * does the emulator.
 */

export const OVERCONSTRAINED_CODE = "OverconstrainedAllocationRequest";

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const props = (r: Pick<StoredResource, "body">): Record<string, unknown> => (isRecord(r.body.properties) ? r.body.properties : {});
const refId = (v: unknown): string | undefined => (isRecord(v) && typeof v.id === "string" ? v.id : undefined);
const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
const sizeOf = (vm: StoredResource): string | undefined => {
  const hw = props(vm).hardwareProfile;
  return isRecord(hw) && typeof hw.vmSize === "string" ? hw.vmSize : undefined;
};

/** The PPG a VM is in (its own, or its availability set's), as the stored resource. */
function ppgOf(vm: StoredResource, view: CloudView): StoredResource | undefined {
  const own = refId(props(vm).proximityPlacementGroup);
  if (own) return view.get(own);
  const avsetId = refId(props(vm).availabilitySet);
  const avset = avsetId ? view.get(avsetId) : undefined;
  const viaSet = avset ? refId(props(avset).proximityPlacementGroup) : undefined;
  return viaSet ? view.get(viaSet) : undefined;
}

/** The constraints Azure lists for this VM, in its words. */
function constraintsOf(vm: StoredResource, view: CloudView): string[] {
  const zoned = Array.isArray(vm.body.zones) && vm.body.zones.length > 0;
  const np = props(vm).networkProfile;
  const nics = isRecord(np) && Array.isArray(np.networkInterfaces) ? np.networkInterfaces : [];
  const accel = nics.some((ref) => {
    const nic = refId(ref) ? view.get(refId(ref)!) : undefined;
    return nic !== undefined && props(nic).enableAcceleratedNetworking === true;
  });
  return [...(zoned ? ["Availability Zone"] : []), ...(accel ? ["Networking Constraints (such as Accelerated Networking or IPv6)"] : []), "VM Size"];
}

/** Azure's error, with the emulator's reason after it. */
export function overconstrained(vm: StoredResource, view: CloudView, why: string): ArmError {
  const list = constraintsOf(vm, view)
    .map((c) => `  - ${c}\n`)
    .join("");
  return new ArmError(
    409,
    OVERCONSTRAINED_CODE,
    `Allocation failed. VM(s) with the following constraints cannot be allocated, because the condition is too restrictive. Please remove some constraints and try again. Constraints applied are:\n${list}(${why})`,
  );
}

/** Why the datacenter of the VM's PPG cannot take its size (the rules above), or undefined. */
export function ppgAllocationProblem(vm: StoredResource, view: CloudView): string | undefined {
  const size = sizeOf(vm);
  const ppg = ppgOf(vm, view);
  if (!size || !ppg) return undefined;
  const intent = props(ppg).intent;
  const intentSizes = isRecord(intent) && Array.isArray(intent.vmSizes) ? intent.vmSizes.filter((s): s is string => typeof s === "string") : [];
  if (intentSizes.length > 0) {
    if (intentSizes.some((s) => same(s, size))) return undefined;
    return (
      `latlab emulator: ${size} is not in the intent of proximity placement group '${ppg.name}' (vmSizes ${intentSizes.join(", ")}): ` +
      `its datacenter was chosen for those sizes, and "the size may not exist in the selected datacenter" (co-location.md, "Use intent to specify VM sizes"); list every member's size in the intent`
    );
  }
  // No intent: the first member still holding the PPG chose the datacenter.
  const first = view
    .all(vm.type)
    .filter((m) => m.key !== vm.key && m.seq < vm.seq && m.state !== "Failed" && m.state !== "Deleting" && ppgOf(m, view)?.key === ppg.key)
    .sort((a, b) => a.seq - b.seq)[0];
  const firstSize = first ? sizeOf(first) : undefined;
  if (!first || !firstSize || same(firstSize, size)) return undefined;
  return (
    `latlab emulator: proximity placement group '${ppg.name}' has no intent and is pinned to the datacenter its first VM '${first.name}' (${firstSize}) was placed in, ` +
    `where "a second request for a different VM size, may fail if it doesn't exist in that data center" (co-location.md); give the PPG an intent with every member's size`
  );
}

/**
 * Run at allocation (the VM's create operation, before it boots): the `overconstrained-allocation`
 * fault, then the PPG rules. Throws Azure's ArmError; the operation fails with it.
 */
export function checkAllocation(vm: StoredResource, view: CloudView, faults: FaultBook): void {
  if (vm.state !== "Creating") return; // an update of an allocated VM is not placed again
  if (faults.take("overconstrained-allocation", vm.type, vm.name)) throw overconstrained(vm, view, `injected fault: ${vm.type} '${vm.name}'`);
  const problem = ppgAllocationProblem(vm, view);
  if (problem) throw overconstrained(vm, view, problem);
}
