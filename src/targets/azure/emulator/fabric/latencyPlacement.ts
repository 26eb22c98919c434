import { ZoneSchema } from "../../../../dsl/placement.ts";
import type { ResolvedHost } from "../../../../dsl/placement.ts";
import type { PathKind } from "../../../../plan/types.ts";
import type { LatencyModelEntry } from "../../../local/model/latencyModel.ts";
import { hostPairModelRtt, modelEntriesUsed as modelEntriesOf } from "../../../local/model/modelEntries.ts";
import type { HostShaping } from "../../../local/network/latencyShaping.ts";
import { peerDelayOf, type PeerDelay } from "../../../local/network/shaping.ts";
import { pathKindBetween } from "../../../local/network/topology.ts";
import type { CloudView, StoredResource } from "../arm/cloud.ts";
import { idKey } from "../arm/resourceId.ts";
import { nicIpConfig, placementGroupOf } from "../arm/typeRules.ts";

/**
 * Where a rehearsal's VMs are, as the emulator's ARM holds them, and the latency latlab's model
 * puts between them (pure). The path kind comes from the local target's own rule
 * (topology.ts pathKindBetween), fed with what ARM says of each VM — its location, zone,
 * proximity placement group (its own, or its availability set's), availability set and VNet —
 * so a rehearsal and a local run model a placement alike. Accelerated Networking is the primary
 * NIC's enableAcceleratedNetworking. The figures are the model's (model/latencyModel.ts), not
 * anything measured on Azure.
 */

export interface VmPlacement {
  /** ARM's key of the VM (its id, lower case). */
  vmKey: string;
  vmName: string;
  /** The VM's namespace, and its data interface there. */
  namespace: string;
  dev: string;
  /** ARM location, as latlab names regions ("East US" → "eastus"). */
  region: string;
  zone: ResolvedHost["zone"];
  /** Key of the PPG the VM is in (its own, or its availability set's); null: none. */
  ppg: string | null;
  availabilitySet: string | null;
  /** Key of the VNet its primary NIC's subnet is in. */
  vnet: string | null;
  accelnet: boolean;
  /** hardwareProfile.vmSize (the model's latency does not depend on it). */
  size: string;
  privateAddress: string;
  publicAddress?: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const props = (r: StoredResource): Record<string, unknown> => (isRecord(r.body.properties) ? r.body.properties : {});
const refId = (v: unknown): string | undefined => (isRecord(v) && typeof v.id === "string" ? v.id : undefined);

/** The VM's primary NIC (the one marked primary, else the first), as ARM holds it. */
export function primaryNicOf(vm: StoredResource, view: CloudView): StoredResource | undefined {
  const profile = props(vm).networkProfile;
  const refs = isRecord(profile) && Array.isArray(profile.networkInterfaces) ? profile.networkInterfaces.filter(isRecord) : [];
  const primary = refs.find((r) => isRecord(r.properties) && r.properties.primary === true) ?? refs[0];
  return refId(primary) ? view.get(refId(primary)!) : undefined;
}

/** ARM's location as latlab's region name: lower case, no spaces. */
export const regionOfLocation = (location: unknown): string => String(location ?? "").replace(/\s/g, "").toLowerCase();

/**
 * A VM's placement from ARM, or why it has none to shape by (no NIC, no private address). The
 * properties read are the REST API's own (azure-rest-api-specs: Microsoft.Compute VirtualMachine
 * `zones`, `properties.availabilitySet`, `properties.proximityPlacementGroup` — or its availability
 * set's —, `properties.hardwareProfile.vmSize`; Microsoft.Network NetworkInterface
 * `properties.enableAcceleratedNetworking` and its ipConfigurations' `privateIPAddress`), which the
 * emulator has already checked every body against (arm/typeRules.ts schema()).
 */
export function vmPlacementOf(vm: StoredResource, view: CloudView, namespace: string, dev: string): VmPlacement | { problem: string } {
  const nic = primaryNicOf(vm, view);
  if (!nic) return { problem: `virtual machine ${vm.name} has no network interface` };
  const cfg = nicIpConfig(nic);
  if (typeof cfg.privateIPAddress !== "string") return { problem: `virtual machine ${vm.name}: its NIC has no private address` };
  const zones = Array.isArray(vm.body.zones) ? vm.body.zones : [];
  const zone = zones.length ? ZoneSchema.safeParse(zones[0]) : undefined;
  if (zone && !zone.success) return { problem: `virtual machine ${vm.name}: zone ${JSON.stringify(zones[0])} is not one latlab models` };
  const subnetId = refId(cfg.subnet);
  const subnet = subnetId ? view.get(subnetId) : undefined;
  const pipId = refId(cfg.publicIPAddress);
  const pip = pipId ? view.get(pipId) : undefined;
  const publicAddress = pip && typeof props(pip).ipAddress === "string" ? (props(pip).ipAddress as string) : undefined;
  const avset = refId(props(vm).availabilitySet);
  return {
    vmKey: vm.key,
    vmName: vm.name,
    namespace,
    dev,
    region: regionOfLocation(vm.body.location),
    zone: zone ? zone.data : null,
    ppg: placementGroupOf(vm, view) ?? null,
    availabilitySet: avset ? idKey(avset) : null,
    vnet: subnet?.parentKey ?? null,
    accelnet: props(nic).enableAcceleratedNetworking === true,
    size: isRecord(props(vm).hardwareProfile) ? String((props(vm).hardwareProfile as Record<string, unknown>).vmSize ?? "") : "",
    privateAddress: cfg.privateIPAddress,
    ...(publicAddress ? { publicAddress } : {}),
  };
}

/** The placement as the local target's hosts carry it, for its pathKindBetween. */
function asResolvedHost(p: VmPlacement): ResolvedHost {
  return { role: p.vmName, region: p.region, zone: p.zone, ppg: p.ppg, availabilitySet: p.availabilitySet, size: p.size, accelnet: p.accelnet, vnet: p.vnet };
}

/**
 * How traffic between two VMs travels, by the local target's rule: another region, else another
 * zone, else one PPG (in one zone, or both regional), else one zone, else one region. An
 * availability set and a peering add nothing of their own (the model has no figure for them:
 * a set without a PPG is "same-region", a PPG across two peered VNets is still "same-ppg").
 */
export function vmPathKind(a: VmPlacement, b: VmPlacement): PathKind {
  return pathKindBetween(asResolvedHost(a), asResolvedHost(b));
}

/** The model's round trip between two VMs, with its source. */
export function vmModelRtt(a: VmPlacement, b: VmPlacement): LatencyModelEntry {
  return hostPairModelRtt(asResolvedHost(a), asResolvedHost(b));
}

/**
 * Per-peer egress delays of one VM towards every other VM, by the local target's rule
 * (shaping.ts peerDelays): half the modelled RTT each way, drawn from the pair's spread where the
 * model has one, on the peer's private address and its public one (the public path gets the
 * pair's RTT too: the model has no figure of its own for it).
 */
export function vmPeerDelays(host: VmPlacement, all: readonly VmPlacement[]): PeerDelay[] {
  return all.filter((p) => p.vmKey !== host.vmKey).map((p) => peerDelayOf(vmModelRtt(host, p), { role: p.vmName, address: p.privateAddress, publicAddress: p.publicAddress }));
}

/** What applyShaping takes for a set of VMs: each VM's namespace and data interface, its peers, no cap (a rehearsal models latency only). */
export function shapingHostsOf(vms: readonly VmPlacement[], logDir: string): HostShaping[] {
  return vms.map((vm) => ({ label: `${vm.vmName} (${vm.namespace})`, namespace: vm.namespace, dev: vm.dev, peers: vmPeerDelays(vm, vms), capMbit: null, logDir }));
}

/** The model's entries used between these VMs, once each, spread included (results.json's shaping.model; model/modelEntries.ts). */
export function modelEntriesUsed(vms: readonly VmPlacement[]): LatencyModelEntry[] {
  return modelEntriesOf([vms], vmModelRtt);
}
