import type { StoredResource } from "./cloud.ts";
import type { FaultBook } from "./faults.ts";

/**
 * What the emulator's ARM says of placement when asked: a PPG's colocation status (GET with
 * `includeColocationStatus=true`) and a VM's instance view (GET …/instanceView). Shapes from
 * Azure/azure-rest-api-specs, specification/compute/resource-manager/Microsoft.Compute/ComputeRP/stable/2024-11-01/:
 * ProximityPlacementGroupProperties.colocationStatus and .virtualMachines[] (SubResourceWithColocationStatus)
 * in proximityPlacementGroup.json (commit a9a410cf447a7bb5e462bfc4c8a9d768cbc2eb92), InstanceViewStatus in
 * computeRPCommon.json, VirtualMachineInstanceView in virtualMachine.json and its example
 * VirtualMachine_Get_InstanceView.json (commit 31c65e1b80195ae589bc7f4b3d9a0c850c668b3c). Pure.
 */

/**
 * The statuses, as Azure words them where a recording shows it: Aligned and Unknown from
 * Azure/azure-powershell src/Compute/Compute.Test/ScenarioTests/PPGTests.ps1 (commit
 * ceb40aa8d7b9d7c9c2b62a77a4ec3e9c2d2bd97e). No recording of the not-aligned status was found:
 * its code follows the "ColocationStatus/<state>" pattern, its message the documentation's words
 * for the state (MicrosoftDocs/azure-compute-docs articles/virtual-machines/co-location.md: "Not
 * aligned: At least one VM resource is not aligned with the proximity placement group").
 */
export const COLOCATION_STATUS = {
  Aligned: { code: "ColocationStatus/Aligned", level: "Info", displayStatus: "Aligned", message: "All resources in the proximity placement group are aligned." },
  Unknown: { code: "ColocationStatus/Unknown", level: "Warning", displayStatus: "Unknown", message: "Colocation status is currently unknown." },
  NotAligned: {
    code: "ColocationStatus/NotAligned",
    level: "Warning",
    displayStatus: "Not Aligned",
    message: "At least one VM resource is not aligned with the proximity placement group (latlab's emulator: injected fault ppg-not-aligned).",
  },
} as const;

const PPG_TYPE = "Microsoft.Compute/proximityPlacementGroups";
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const propsOf = (body: Record<string, unknown>): Record<string, unknown> => (isRecord(body.properties) ? body.properties : (body.properties = {}) as Record<string, unknown>);
const zonesOf = (body: Record<string, unknown>): string[] => (Array.isArray(body.zones) ? body.zones.filter((z): z is string => typeof z === "string") : []);
const sameLocation = (a: unknown, b: unknown) => typeof a === "string" && typeof b === "string" && a.replace(/\s/g, "").toLowerCase() === b.replace(/\s/g, "").toLowerCase();

/**
 * Adds to a PPG's GET body, when the query has includeColocationStatus=true, its members
 * (`virtualMachines`, `availabilitySets`, each with its colocationStatus) and its own
 * `colocationStatus`: Aligned when every member VM is in the PPG's region and zone (the PPG's
 * pinned zone, else its first member's), Unknown when a member is not provisioned (Azure: a
 * deallocated member), NotAligned when a member is elsewhere — or when a `ppg-not-aligned` fault
 * matches, which calls out the last member VM.
 */
export function addColocationStatus(body: Record<string, unknown>, ppg: StoredResource, members: { vms: readonly StoredResource[]; availabilitySets: readonly StoredResource[] }, query: URLSearchParams, faults: FaultBook): void {
  if (query.get("includeColocationStatus")?.toLowerCase() !== "true") return;
  const zone = zonesOf(ppg.body)[0] ?? (members.vms[0] ? zonesOf(members.vms[0].body)[0] : undefined);
  const memberStatus = new Map<string, keyof typeof COLOCATION_STATUS>();
  for (const vm of members.vms) {
    const aligned = sameLocation(vm.body.location, ppg.body.location) && zonesOf(vm.body)[0] === zone;
    memberStatus.set(vm.key, !aligned ? "NotAligned" : vm.state === "Succeeded" || vm.state === "Updating" ? "Aligned" : "Unknown");
  }
  const last = members.vms.at(-1);
  if (last && faults.take("ppg-not-aligned", PPG_TYPE, ppg.name)) memberStatus.set(last.key, "NotAligned");
  const states = [...memberStatus.values()];
  const overall = states.includes("NotAligned") ? "NotAligned" : states.includes("Unknown") ? "Unknown" : "Aligned";
  const props = propsOf(body);
  props.virtualMachines = members.vms.map((vm) => ({ id: vm.id, colocationStatus: { ...COLOCATION_STATUS[memberStatus.get(vm.key)!] } }));
  props.availabilitySets = members.availabilitySets.map((a) => ({ id: a.id, colocationStatus: { ...COLOCATION_STATUS[overall] } }));
  props.colocationStatus = { ...COLOCATION_STATUS[overall] };
}

/**
 * A VM's instance view: its fault and update domains (kept by the emulator since the VM was
 * accepted), its computer name, and the ProvisioningState/… and PowerState/… statuses.
 */
export function vmInstanceView(vm: StoredResource): Record<string, unknown> {
  const props = isRecord(vm.body.properties) ? vm.body.properties : {};
  const os = isRecord(props.osProfile) ? props.osProfile : {};
  const time = typeof props.timeCreated === "string" ? props.timeCreated : undefined;
  const statuses: Record<string, unknown>[] = [];
  if (vm.state === "Failed") {
    statuses.push({ code: `ProvisioningState/failed/${vm.error?.code ?? "InternalError"}`, level: "Error", displayStatus: "Provisioning failed", ...(vm.error?.message ? { message: vm.error.message } : {}) });
  } else if (vm.state === "Succeeded") {
    statuses.push({ code: "ProvisioningState/succeeded", level: "Info", displayStatus: "Provisioning succeeded", ...(time ? { time } : {}) });
    statuses.push({ code: "PowerState/running", level: "Info", displayStatus: "VM running" });
  } else {
    statuses.push({ code: `ProvisioningState/${vm.state.toLowerCase()}`, level: "Info", displayStatus: vm.state });
    if (vm.state === "Creating") statuses.push({ code: "PowerState/starting", level: "Info", displayStatus: "VM starting" });
    if (vm.state === "Deleting") statuses.push({ code: "PowerState/stopping", level: "Info", displayStatus: "VM stopping" });
  }
  return {
    ...(typeof vm.runtime.updateDomain === "number" ? { platformUpdateDomain: vm.runtime.updateDomain } : {}),
    ...(typeof vm.runtime.faultDomain === "number" ? { platformFaultDomain: vm.runtime.faultDomain } : {}),
    ...(typeof os.computerName === "string" ? { computerName: os.computerName } : {}),
    statuses,
  };
}
