import { randomBytes, randomUUID } from "node:crypto";
import { cidrContains, cidrOverlaps, intToIp, ipToInt, parseCidr, type Cidr } from "../../../local/network/names.ts";
import { regionCapability, RESERVED_ADMIN_NAMES, UBUNTU_2404 } from "../../catalog/capabilities.ts";
import { sizeFacts, type SizeFacts } from "../../catalog/sizes/sizeFacts.ts";
import { checkVmCapacity, CapacitySchema, isPlayable, type Capacity } from "./subscriptionCapacity.ts";
import { ArmError } from "./armError.ts";
import type { CloudView, StoredResource, TypeRules } from "./cloud.ts";
import type { FaultBook } from "./faults.ts";
import { idKey, RESOURCE_GROUP_TYPE, type ResourceId } from "./resourceId.ts";
import { addColocationStatus, vmInstanceView } from "./placementView.ts";

/**
 * ARM's rules per resource type, as far as latlab relies on them: the request body checked
 * against the REST API specification (schemaCheck), then the platform rules Azure applies on
 * top (a NIC's static address inside its subnet, Accelerated Networking only on sizes that have
 * it, PPG / availability set / zone constraints, a NIC in its VM's region…), the properties ARM
 * computes, and what makes a delete refused while something uses the resource.
 *
 * Error codes: the network ones (InvalidResourceReference, ReferencedResourceNotProvisioned,
 * InUseSubnetCannotBeDeleted, NicInUse, InUsePublicIpAddressCannotBeDeleted,
 * InUseNetworkSecurityGroupCannotBeDeleted, PrivateIPAddressNotInSubnet, PrivateIPAddressInUse,
 * NetcfgSubnetRangeOutsideVnet, NetcfgSubnetRangesOverlap, VnetAddressSpacesOverlap,
 * SecurityRuleInvalidPriority, VMSizeIsNotPermittedToEnableAcceleratedNetworking) are the codes
 * Azure's network and compute RPs return for these cases. Where latlab has no record of the
 * exact code Azure uses (the PPG/zone and availability-set/zone conflicts, a zone in a region
 * without zones) the code is "InvalidParameter" or "BadRequest", which is what the compute RP
 * uses for request-level refusals, and the message says what is wrong.
 */

export const API_VERSIONS = {
  resources: "2024-03-01",
  network: "2024-05-01",
  compute: "2024-11-01",
} as const;

export const TYPES = {
  resourceGroup: RESOURCE_GROUP_TYPE,
  vnet: "Microsoft.Network/virtualNetworks",
  subnet: "Microsoft.Network/virtualNetworks/subnets",
  peering: "Microsoft.Network/virtualNetworks/virtualNetworkPeerings",
  publicIp: "Microsoft.Network/publicIPAddresses",
  nsg: "Microsoft.Network/networkSecurityGroups",
  nic: "Microsoft.Network/networkInterfaces",
  vm: "Microsoft.Compute/virtualMachines",
  ppg: "Microsoft.Compute/proximityPlacementGroups",
  availabilitySet: "Microsoft.Compute/availabilitySets",
} as const;

/** A problem the specification check found: JSON path, ARM code, message. */
export interface SchemaIssue {
  path: string;
  code: string;
  message: string;
}
/** Checks an ARM request body against the REST API specification of its type. */
export type SchemaCheck = (armType: string, body: Record<string, unknown>) => SchemaIssue[];

/** What the rules need from the network side: public addresses and where VNets may live. */
export interface NetworkAllocator {
  /** A free public address for a Static public IP (an address of the emulator's own fabric). */
  allocatePublicIp(): string;
  releasePublicIp(ip: string): void;
  /** Why a VNet address space cannot be hosted here, or undefined. */
  addressSpaceProblem(prefix: string): string | undefined;
}

/** What a VM does when it is created and deleted (it becomes a host; the host goes). */
export interface VmHooks {
  startVm(vm: StoredResource, view: CloudView, faults: FaultBook): Promise<void>;
  stopVm(vm: StoredResource): Promise<void>;
}

export interface TypeRulesDeps {
  schemaCheck: SchemaCheck;
  network: NetworkAllocator;
  vm: VmHooks;
  /** The subscription's vCPU quotas and size restrictions (default: a new pay-as-you-go subscription, subscriptionCapacity.ts). */
  capacity?: Capacity;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const props = (body: Record<string, unknown>): Record<string, unknown> => (isRecord(body.properties) ? body.properties : {});
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const refId = (v: unknown): string | undefined => (isRecord(v) && typeof v.id === "string" ? v.id : undefined);
const zonesOf = (body: Record<string, unknown>): string[] => (Array.isArray(body.zones) ? body.zones.filter((z): z is string => typeof z === "string") : []);
const sameLocation = (a: unknown, b: unknown) => typeof a === "string" && typeof b === "string" && a.replace(/\s/g, "").toLowerCase() === b.replace(/\s/g, "").toLowerCase();
const bad = (code: string, message: string) => new ArmError(400, code, message);
/** The default subscription when a caller gives none: a new pay-as-you-go one (subscriptionCapacity.ts). */
const DEFAULT_CAPACITY: Capacity = CapacitySchema.parse({});

function schema(deps: TypeRulesDeps, type: string, body: Record<string, unknown>): void {
  const issues = deps.schemaCheck(type, body);
  if (issues.length === 0) return;
  const first = issues[0]!;
  throw new ArmError(
    400,
    first.code,
    issues.map((i) => `${i.message} (at '${i.path}')`).join("; "),
    issues.map((i) => ({ code: i.code, message: i.message, target: i.path })),
  );
}

function requireLocation(body: Record<string, unknown>, id: ResourceId): string {
  const location = str(body.location);
  if (!location) throw bad("LocationRequired", `The location property is required for resource '${id.name}' of type '${id.type}'.`);
  if (!regionCapability(location.toLowerCase())) throw bad("LocationNotAvailableForResourceType", `The provided location '${location}' is not available for resource type '${id.type}' (the emulator knows the regions in latlab's capability table).`);
  return location;
}

function requireZones(body: Record<string, unknown>, location: string, id: ResourceId): string[] {
  const zones = zonesOf(body);
  if (zones.length === 0) return zones;
  const region = regionCapability(location.toLowerCase());
  const offered = region?.zones ?? [];
  const unknown = zones.filter((z) => !offered.includes(z as never));
  if (unknown.length) {
    throw bad(
      "InvalidParameter",
      offered.length === 0
        ? `The region '${location}' does not support availability zones; '${id.name}' asks for zone ${unknown.join(", ")}.`
        : `Zone ${unknown.join(", ")} is not offered in '${location}' (zones ${offered.join(", ")}).`,
    );
  }
  return zones;
}

/** Subnet prefixes of a VNet that exist (or are being created) in the cloud. */
function subnetsOf(view: CloudView, vnet: StoredResource): StoredResource[] {
  return view.all(TYPES.subnet).filter((s) => s.parentKey === vnet.key);
}

function cidrs(list: unknown): Cidr[] {
  return (Array.isArray(list) ? list : []).filter((p): p is string => typeof p === "string").map(parseCidr);
}

export const vnetPrefixes = (vnet: StoredResource): string[] => {
  const space = props(vnet.body).addressSpace;
  return isRecord(space) && Array.isArray(space.addressPrefixes) ? space.addressPrefixes.filter((p): p is string => typeof p === "string") : [];
};

export const subnetPrefix = (subnet: StoredResource): string | undefined =>
  str(props(subnet.body).addressPrefix) ?? (Array.isArray(props(subnet.body).addressPrefixes) ? str((props(subnet.body).addressPrefixes as unknown[])[0]) : undefined);

/** The NIC's first ip configuration's properties (latlab uses one per NIC). */
export function nicIpConfig(nic: StoredResource): Record<string, unknown> {
  const configs = props(nic.body).ipConfigurations;
  const first = Array.isArray(configs) ? configs[0] : undefined;
  return isRecord(first) && isRecord(first.properties) ? first.properties : {};
}

function validIp(ip: string): boolean {
  return /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/.test(ip);
}

export function createTypeRules(deps: TypeRulesDeps): Record<string, TypeRules> {
  const rg: TypeRules = {
    apiVersion: API_VERSIONS.resources,
    validate(body, id) {
      schema(deps, TYPES.resourceGroup, body);
      requireLocation(body, id);
      if (!/^[-\w._()]{1,90}$/.test(id.name) || id.name.endsWith(".")) throw bad("InvalidResourceGroupName", `Resource group name '${id.name}' is invalid.`);
    },
  };

  const vnet: TypeRules = {
    apiVersion: API_VERSIONS.network,
    validate(body, id) {
      schema(deps, TYPES.vnet, body);
      requireLocation(body, id);
      const prefixes = cidrs(isRecord(props(body).addressSpace) ? (props(body).addressSpace as Record<string, unknown>).addressPrefixes : undefined);
      if (prefixes.length === 0) throw bad("InvalidAddressSpace", `Virtual network '${id.name}' has no address prefix in addressSpace.addressPrefixes.`);
      for (const p of (props(body).addressSpace as { addressPrefixes: string[] }).addressPrefixes) {
        const problem = deps.network.addressSpaceProblem(p);
        if (problem) throw bad("InvalidAddressPrefix", `Virtual network '${id.name}': address prefix ${p}: ${problem}`);
      }
    },
    accept(r, view) {
      const old = view.get(r.id);
      props(r.body).resourceGuid ??= (old && str(props(old.body).resourceGuid)) ?? randomUUID();
      // Subnets and peerings are separate resources here; a VNet body does not carry them.
      if (!Array.isArray(props(r.body).subnets)) props(r.body).subnets = [];
    },
    inUse(r, view) {
      for (const s of subnetsOf(view, r)) {
        const user = view.referrers(s.id).find((x) => x.type === TYPES.nic);
        if (user) return bad("InUseSubnetCannotBeDeleted", `Subnet ${s.name} is in use by ${user.id} and cannot be deleted. In order to delete the subnet, delete all the resources within the subnet.`);
      }
      return undefined;
    },
  };

  const subnet: TypeRules = {
    apiVersion: API_VERSIONS.network,
    serializeOnParent: true,
    validate(body, id, view) {
      schema(deps, TYPES.subnet, body);
      const parent = view.get(id.parent!)!;
      const prefix = str(props(body).addressPrefix);
      if (!prefix) throw bad("InvalidRequestFormat", `Subnet '${id.name}': addressPrefix is required.`);
      const c = parseCidr(prefix);
      const inside = cidrs(vnetPrefixes(parent)).some((v) => cidrContains(v, c.network) && c.prefix >= v.prefix);
      if (!inside) throw bad("NetcfgSubnetRangeOutsideVnet", `Subnet '${id.name}' is not valid because its IP address range ${prefix} is outside the IP address range of virtual network '${parent.name}'.`);
      for (const s of subnetsOf(view, parent)) {
        if (s.key === id.key) continue;
        const other = subnetPrefix(s);
        if (other && cidrOverlaps(parseCidr(other), c)) throw bad("NetcfgSubnetRangesOverlap", `Subnet '${id.name}' is not valid because its IP address range ${prefix} overlaps with that of an existing subnet '${s.name}' (${other}) in the virtual network.`);
      }
    },
    inUse(r, view) {
      const user = view.referrers(r.id).find((x) => x.type === TYPES.nic);
      return user ? bad("InUseSubnetCannotBeDeleted", `Subnet ${r.name} is in use by ${user.id} and cannot be deleted. In order to delete the subnet, delete all the resources within the subnet.`) : undefined;
    },
  };

  /**
   * A peering is Connected when its remote VNet has the peering back; Initiated until then. One
   * whose other side was deleted is Disconnected and stays so (Azure wants it deleted and made again).
   */
  const peeringState = (r: StoredResource, view: CloudView): "Connected" | "Initiated" | "Disconnected" => {
    if (props(r.body).peeringState === "Disconnected") return "Disconnected";
    const remote = refId(props(r.body).remoteVirtualNetwork);
    const local = r.parentKey;
    const back = remote
      ? view.all(TYPES.peering).find((p) => p.parentKey === idKey(remote) && p.state !== "Deleting" && props(p.body).peeringState !== "Disconnected" && idKey(refId(props(p.body).remoteVirtualNetwork) ?? "") === local)
      : undefined;
    return back ? "Connected" : "Initiated";
  };
  const refreshPeerings = (view: CloudView) => {
    for (const p of view.all(TYPES.peering)) {
      if (p.state === "Deleting") continue;
      const state = peeringState(p, view);
      props(p.body).peeringState = state;
      props(p.body).peeringSyncLevel = state === "Connected" ? "FullyInSync" : "LocalNotInSync";
    }
  };
  const peering: TypeRules = {
    apiVersion: API_VERSIONS.network,
    serializeOnParent: true,
    validate(body, id, view) {
      schema(deps, TYPES.peering, body);
      const remoteId = refId(props(body).remoteVirtualNetwork);
      if (!remoteId) throw bad("InvalidRequestFormat", `Virtual network peering '${id.name}': remoteVirtualNetwork.id is required.`);
      const local = view.get(id.parent!)!;
      const remote = view.get(remoteId);
      if (remote && remote.key === local.key) throw bad("CannotPeerVirtualNetworkToItself", `Virtual network '${local.name}' cannot be peered with itself.`);
      if (remote) {
        for (const a of cidrs(vnetPrefixes(local))) {
          for (const b of cidrs(vnetPrefixes(remote))) {
            if (cidrOverlaps(a, b)) throw bad("VnetAddressSpacesOverlap", `Cannot create or update peering '${id.name}'. Virtual networks ${local.id} and ${remote.id} cannot be peered because their address spaces overlap.`);
          }
        }
      }
    },
    accept(r, view) {
      props(r.body).peeringState = peeringState(r, view);
    },
    async provision(_r, view) {
      refreshPeerings(view);
    },
    async deprovision(r, view) {
      r.state = "Deleting";
      refreshPeerings(view);
      // The remote side (its peering back to this VNet, and no other) is told its peer is gone.
      const remote = idKey(refId(props(r.body).remoteVirtualNetwork) ?? "");
      for (const p of view.all(TYPES.peering)) {
        if (p.key !== r.key && p.parentKey === remote && idKey(refId(props(p.body).remoteVirtualNetwork) ?? "") === r.parentKey) props(p.body).peeringState = "Disconnected";
      }
    },
  };

  const publicIp: TypeRules = {
    apiVersion: API_VERSIONS.network,
    validate(body, id) {
      schema(deps, TYPES.publicIp, body);
      const location = requireLocation(body, id);
      requireZones(body, location, id);
      const sku = isRecord(body.sku) ? str(body.sku.name) : undefined;
      const method = str(props(body).publicIPAllocationMethod) ?? "Dynamic";
      if ((sku ?? "Basic").toLowerCase() === "standard" && method.toLowerCase() !== "static") {
        throw bad("StandardSkuPublicIPAddressesMustBeStatic", `Standard sku publicIp /subscriptions/…/${id.name} must have AllocationMethod set to Static.`);
      }
    },
    accept(r, view) {
      const old = view.get(r.id);
      const kept = old ? str(props(old.body).ipAddress) : undefined;
      const method = str(props(r.body).publicIPAllocationMethod) ?? "Dynamic";
      // Static: the address exists from creation on. Dynamic would get one only when attached; latlab asks Static.
      if (method.toLowerCase() === "static") props(r.body).ipAddress = kept ?? deps.network.allocatePublicIp();
      props(r.body).resourceGuid ??= randomUUID();
    },
    inUse(r, view) {
      const user = view.referrers(r.id).find((x) => x.type === TYPES.nic);
      return user ? bad("InUsePublicIpAddressCannotBeDeleted", `Public IP address ${r.id} can not be deleted since it is still allocated to resource ${user.id}/ipConfigurations/… In order to delete the public IP, disassociate/detach the Public IP address from the resource.`) : undefined;
    },
    async deprovision(r) {
      const ip = str(props(r.body).ipAddress);
      if (ip) deps.network.releasePublicIp(ip);
    },
  };

  const nsg: TypeRules = {
    apiVersion: API_VERSIONS.network,
    validate(body, id) {
      schema(deps, TYPES.nsg, body);
      requireLocation(body, id);
      const rules = Array.isArray(props(body).securityRules) ? (props(body).securityRules as unknown[]) : [];
      const seen = new Map<string, string>();
      for (const [i, rule] of rules.entries()) {
        const p = isRecord(rule) && isRecord(rule.properties) ? rule.properties : {};
        const name = isRecord(rule) ? str(rule.name) ?? `#${i}` : `#${i}`;
        const priority = typeof p.priority === "number" ? p.priority : NaN;
        if (!(priority >= 100 && priority <= 4096)) throw bad("SecurityRuleInvalidPriority", `Security rule ${name} has invalid Priority ${p.priority}. Value provided: ${p.priority} Allowed range 100-4096.`);
        const key = `${str(p.direction)}/${priority}`;
        if (seen.has(key)) throw bad("SecurityRuleConflict", `Security rule ${name} conflicts with rule ${seen.get(key)}. Rules cannot have the same Priority and Direction.`);
        seen.set(key, name);
      }
    },
    accept(r) {
      props(r.body).resourceGuid ??= randomUUID();
      props(r.body).defaultSecurityRules = DEFAULT_SECURITY_RULES;
    },
    inUse(r, view) {
      const user = view.referrers(r.id)[0];
      return user ? bad("InUseNetworkSecurityGroupCannotBeDeleted", `Network security group ${r.id} cannot be deleted because it is in use by the following resources: ${user.id}. In order to delete the Network security group, remove the association with the resource(s).`) : undefined;
    },
  };

  const nic: TypeRules = {
    apiVersion: API_VERSIONS.network,
    validate(body, id, view, existing) {
      schema(deps, TYPES.nic, body);
      const location = requireLocation(body, id);
      const configs = Array.isArray(props(body).ipConfigurations) ? (props(body).ipConfigurations as unknown[]) : [];
      if (configs.length === 0) throw bad("InvalidRequestFormat", `Network interface '${id.name}' must have at least one ipConfiguration.`);
      for (const cfg of configs) {
        const p = isRecord(cfg) && isRecord(cfg.properties) ? cfg.properties : {};
        const subnetId = refId(p.subnet);
        const subnetRes = subnetId ? view.get(subnetId) : undefined;
        const vnetRes = subnetRes?.parentKey ? view.all(TYPES.vnet).find((v) => v.key === subnetRes.parentKey) : undefined;
        if (subnetRes && vnetRes && !sameLocation(vnetRes.body.location, location)) {
          throw bad("InvalidResourceReference", `Resource ${subnetRes.id} referenced by resource ${id.id} was not found. Please make sure that the referenced resource exists, and that both resources are in the same region.`);
        }
        const pipId = refId(p.publicIPAddress);
        const pip = pipId ? view.get(pipId) : undefined;
        if (pip && !sameLocation(pip.body.location, location)) {
          throw bad("InvalidResourceReference", `Resource ${pip.id} referenced by resource ${id.id} was not found. Please make sure that the referenced resource exists, and that both resources are in the same region.`);
        }
        if (pip) {
          const other = view.referrers(pip.id).find((x) => x.type === TYPES.nic && x.key !== id.key);
          if (other) throw bad("PublicIPAddressInUse", `Resource ${pip.id} is already in use by ${other.id}.`);
        }
        const method = str(p.privateIPAllocationMethod) ?? "Dynamic";
        const ip = str(p.privateIPAddress);
        if (method.toLowerCase() === "static") {
          if (!ip || !validIp(ip)) throw bad("PrivateIPAddressInvalid", `IP configuration of '${id.name}': a Static allocation needs a valid privateIPAddress (got ${JSON.stringify(ip)}).`);
          const prefix = subnetRes ? subnetPrefix(subnetRes) : undefined;
          if (prefix) {
            const c = parseCidr(prefix);
            const n = ipToInt(ip);
            if (!cidrContains(c, n)) throw bad("PrivateIPAddressNotInSubnet", `IP configuration of '${id.name}' is referencing private IP address ${ip} which is not in the subnet ${prefix}.`);
            const offset = n - c.network;
            if (offset < 4 || offset === 2 ** (32 - c.prefix) - 1) throw bad("PrivateIPAddressIsReserved", `Private IP address ${ip} is reserved by Azure in subnet ${prefix} (the first four and the last address are).`);
            const taken = view.all(TYPES.nic).find((x) => x.key !== id.key && x.state !== "Deleting" && refId(nicIpConfig(x).subnet) && idKey(refId(nicIpConfig(x).subnet)!) === idKey(subnetId!) && str(nicIpConfig(x).privateIPAddress) === ip);
            if (taken) throw bad("PrivateIPAddressInUse", `IP configuration of '${id.name}' is using the private IP address ${ip} which is already allocated to resource ${taken.id}.`);
          }
        }
      }
      void existing;
    },
    accept(r, view) {
      const old = view.get(r.id);
      const cfg = nicIpConfig(r);
      cfg.privateIPAddressVersion ??= "IPv4";
      if (!str(cfg.privateIPAddress)) cfg.privateIPAddress = (old && str(nicIpConfig(old).privateIPAddress)) ?? dynamicAddress(r, view);
      props(r.body).macAddress ??= (old && str(props(old.body).macAddress)) ?? macAddress();
      props(r.body).resourceGuid ??= randomUUID();
      props(r.body).nicType ??= "Standard";
    },
    inUse(r, view) {
      const vm = view.referrers(r.id).find((x) => x.type === TYPES.vm);
      return vm ? bad("NicInUse", `Network Interface ${r.id} is used by existing resource ${vm.id}. In order to delete the network interface, it must be dissociated from the resource.`) : undefined;
    },
  };

  const ppg: TypeRules = {
    apiVersion: API_VERSIONS.compute,
    validate(body, id) {
      schema(deps, TYPES.ppg, body);
      const location = requireLocation(body, id);
      requireZones(body, location, id);
      if (zonesOf(body).length > 1) throw bad("InvalidParameter", `Proximity placement group '${id.name}' can be pinned to one zone only.`);
    },
    inUse(r, view) {
      const user = view.referrers(r.id)[0];
      return user ? new ArmError(409, "OperationNotAllowed", `Proximity placement group '${r.name}' cannot be deleted while it has resources: ${user.id}.`) : undefined;
    },
    // GET …?includeColocationStatus=true: members and colocation status (placementView.ts).
    onRead(body, r, view, query, faults) {
      const vms = view.all(TYPES.vm).filter((m) => m.state !== "Deleting" && placementGroupOf(m, view) === r.key);
      const availabilitySets = view.all(TYPES.availabilitySet).filter((a) => a.state !== "Deleting" && idKey(refId(props(a.body).proximityPlacementGroup) ?? "") === r.key);
      addColocationStatus(body, r, { vms, availabilitySets }, query, faults);
    },
  };

  const availabilitySet: TypeRules = {
    apiVersion: API_VERSIONS.compute,
    validate(body, id, view) {
      schema(deps, TYPES.availabilitySet, body);
      const location = requireLocation(body, id);
      const fd = typeof props(body).platformFaultDomainCount === "number" ? (props(body).platformFaultDomainCount as number) : 2;
      const ud = typeof props(body).platformUpdateDomainCount === "number" ? (props(body).platformUpdateDomainCount as number) : 5;
      if (fd < 1 || fd > 3) throw bad("InvalidParameter", `The value ${fd} of platformFaultDomainCount is not valid: ${location} has at most 3 fault domains.`);
      if (ud < 1 || ud > 20) throw bad("InvalidParameter", `The value ${ud} of platformUpdateDomainCount is not valid (1-20).`);
      const ppgId = refId(props(body).proximityPlacementGroup);
      const ppgRes = ppgId ? view.get(ppgId) : undefined;
      if (ppgRes && !sameLocation(ppgRes.body.location, location)) throw bad("InvalidParameter", `Availability set '${id.name}' and proximity placement group '${ppgRes.name}' must be in the same location.`);
    },
    accept(r) {
      props(r.body).platformFaultDomainCount ??= 2;
      props(r.body).platformUpdateDomainCount ??= 5;
    },
    inUse(r, view) {
      const user = view.referrers(r.id).find((x) => x.type === TYPES.vm);
      return user ? new ArmError(409, "OperationNotAllowed", `Availability set '${r.name}' cannot be deleted while it has virtual machines: ${user.id}.`) : undefined;
    },
  };

  const vm: TypeRules = {
    apiVersion: API_VERSIONS.compute,
    validate(body, id, view, existing) {
      schema(deps, TYPES.vm, body);
      const location = requireLocation(body, id);
      const zones = requireZones(body, location, id);
      const p = props(body);
      const size = isRecord(p.hardwareProfile) ? str(p.hardwareProfile.vmSize) : undefined;
      const cap = size ? playableSize(size) : undefined;
      if (!size || !cap) throw bad("InvalidParameter", `The value '${size}' provided for the VM size is not valid (the emulator plays only sizes whose vCPUs, Accelerated Networking, generations and disk controllers latlab's catalog knows: src/targets/azure/catalog/sizes/).`);
      if (zones.length > 1) throw bad("InvalidParameter", `Virtual machine '${id.name}' can be placed in one zone only.`);
      const zone = zones[0];
      if (!existing) checkVmCapacity(view, deps.capacity ?? DEFAULT_CAPACITY, { key: id.key, name: id.name, region: location, size, ...(zone ? { zone } : {}) });

      checkBoot(size, cap, p);

      const os = isRecord(p.osProfile) ? p.osProfile : {};
      const admin = str(os.adminUsername);
      if (!existing) {
        if (!admin) throw bad("InvalidParameter", "Required parameter 'adminUsername' is missing (null).");
        if (RESERVED_ADMIN_NAMES.includes(admin.toLowerCase()) || !/^[a-z_][a-z0-9_-]{0,63}$/i.test(admin)) throw bad("InvalidParameter", `The Admin Username specified is not allowed: '${admin}'.`);
        const linux = isRecord(os.linuxConfiguration) ? os.linuxConfiguration : {};
        const keys = isRecord(linux.ssh) && Array.isArray(linux.ssh.publicKeys) ? linux.ssh.publicKeys.filter(isRecord) : [];
        if (linux.disablePasswordAuthentication === true && keys.length === 0) throw bad("InvalidParameter", "Authentication using either SSH or by user name and password must be enabled in Linux profile.");
        for (const k of keys) {
          const expected = `/home/${admin}/.ssh/authorized_keys`;
          if (str(k.path) !== expected) throw bad("InvalidParameter", `Destination path for SSH public keys is currently limited to its default value ${expected} due to a known issue in Linux provisioning agent.`);
          if (!/^(ssh-rsa|ssh-ed25519|ecdsa-sha2-\S+) [A-Za-z0-9+/=]+/.test(str(k.keyData) ?? "")) throw bad("InvalidParameter", `The value of parameter linuxConfiguration.ssh.publicKeys.keyData is invalid.`);
        }
        const customData = str(os.customData);
        if (customData !== undefined && (customData.length > 87_380 || !/^[A-Za-z0-9+/]*={0,2}$/.test(customData))) {
          throw bad("InvalidParameter", "Custom data in OSProfile must be in Base64 encoding and with a maximum length of 87380 characters.");
        }
      }

      const nics = isRecord(p.networkProfile) && Array.isArray(p.networkProfile.networkInterfaces) ? p.networkProfile.networkInterfaces.filter(isRecord) : [];
      if (nics.length === 0) throw bad("InvalidParameter", `Virtual machine '${id.name}' must have at least one network interface.`);
      for (const ref of nics) {
        const nicRes = refId(ref) ? view.get(refId(ref)!) : undefined;
        if (!nicRes) continue; // reported by the reference check
        if (!sameLocation(nicRes.body.location, location)) throw bad("InvalidParameter", `Network interface ${nicRes.id} and virtual machine '${id.name}' must be in the same location (${nicRes.body.location} vs ${location}).`);
        const owner = view.referrers(nicRes.id).find((x) => x.type === TYPES.vm && x.key !== id.key);
        if (owner) throw bad("NicInUse", `Network Interface ${nicRes.id} is used by existing resource ${owner.id}.`);
        if (props(nicRes.body).enableAcceleratedNetworking === true && cap.acceleratedNetworking === false) {
          throw bad("VMSizeIsNotPermittedToEnableAcceleratedNetworking", `Virtual machine '${id.name}' size ${size} is not compatible with enabling accelerated networking on network interface(s) on the VM. Compatible VM sizes: see the size's documentation.`);
        }
        const pipId = refId(nicIpConfig(nicRes).publicIPAddress);
        const pip = pipId ? view.get(pipId) : undefined;
        const pipZones = pip ? zonesOf(pip.body) : [];
        if (pip && zone && pipZones.length === 1 && pipZones[0] !== zone) {
          throw bad("BadRequest", `Public IP ${pip.id} is in zone ${pipZones[0]} and cannot be used by virtual machine '${id.name}' in zone ${zone}.`);
        }
      }

      const avsetId = refId(p.availabilitySet);
      const avset = avsetId ? view.get(avsetId) : undefined;
      if (avsetId && zone) throw bad("BadRequest", `Virtual machine '${id.name}' cannot be in an availability set and an availability zone at the same time.`);
      if (avset && !sameLocation(avset.body.location, location)) throw bad("InvalidParameter", `Availability set ${avset.id} and virtual machine '${id.name}' must be in the same location.`);
      const ppgId = refId(p.proximityPlacementGroup);
      const avsetPpg = avset ? refId(props(avset.body).proximityPlacementGroup) : undefined;
      if (ppgId && avsetPpg && idKey(ppgId) !== idKey(avsetPpg)) {
        throw bad("BadRequest", `Virtual machine '${id.name}' asks for proximity placement group ${ppgId}, but its availability set is in ${avsetPpg}.`);
      }
      const effectivePpg = ppgId ?? avsetPpg;
      const ppgRes = effectivePpg ? view.get(effectivePpg) : undefined;
      if (ppgRes) {
        if (!sameLocation(ppgRes.body.location, location)) throw bad("InvalidParameter", `Proximity placement group ${ppgRes.id} and virtual machine '${id.name}' must be in the same location.`);
        const ppgZones = zonesOf(ppgRes.body);
        if (ppgZones.length && zone && !ppgZones.includes(zone)) {
          throw bad("BadRequest", `Virtual machine '${id.name}' in zone ${zone} cannot join proximity placement group '${ppgRes.name}', which is pinned to zone ${ppgZones.join(", ")}.`);
        }
        // A PPG is one datacenter: every member VM sits in the zone of the first.
        const members = view.all(TYPES.vm).filter((m) => m.key !== id.key && m.state !== "Deleting" && placementGroupOf(m, view) === ppgRes.key);
        const otherZone = members.map((m) => zonesOf(m.body)[0]).find((z) => z !== zone);
        if (members.length && otherZone !== undefined) {
          throw bad("BadRequest", `Virtual machine '${id.name}' in zone ${zone ?? "(none)"} cannot join proximity placement group '${ppgRes.name}': its members are in zone ${otherZone ?? "(none)"}. A proximity placement group spans one datacenter.`);
        }
      }
    },
    accept(r, view) {
      const old = view.get(r.id);
      const p = props(r.body);
      // customData (latlab's holds a host's private key) is write-only: kept in memory for the boot, never stored.
      const os = isRecord(p.osProfile) ? p.osProfile : undefined;
      if (os && typeof os.customData === "string") {
        r.secrets = { ...r.secrets, customData: os.customData };
        delete os.customData;
      }
      p.vmId ??= (old && str(props(old.body).vmId)) ?? randomUUID();
      p.timeCreated ??= (old && str(props(old.body).timeCreated)) ?? new Date().toISOString();
      if (r.runtime.faultDomain === undefined) {
        // Fault and update domains: round-robin within the availability set; 0 otherwise.
        const avsetId = refId(p.availabilitySet);
        const avset = avsetId ? view.get(avsetId) : undefined;
        const peers = avset ? view.all(TYPES.vm).filter((m) => m.key !== r.key && refId(props(m.body).availabilitySet) && idKey(refId(props(m.body).availabilitySet)!) === avset.key).length : 0;
        const fd = avset ? Number(props(avset.body).platformFaultDomainCount ?? 2) : 1;
        const ud = avset ? Number(props(avset.body).platformUpdateDomainCount ?? 5) : 1;
        r.runtime.faultDomain = peers % fd;
        r.runtime.updateDomain = peers % ud;
      }
    },
    async provision(r, view, faults) {
      await deps.vm.startVm(r, view, faults);
    },
    async deprovision(r, view) {
      await deps.vm.stopVm(r);
      // deleteOption: Delete on a NIC reference takes the NIC along (the OS disk is not a resource here).
      const refs = isRecord(props(r.body).networkProfile) && Array.isArray((props(r.body).networkProfile as Record<string, unknown>).networkInterfaces)
        ? ((props(r.body).networkProfile as Record<string, unknown>).networkInterfaces as unknown[]).filter(isRecord)
        : [];
      return refs
        .filter((ref) => isRecord(ref.properties) && str(ref.properties.deleteOption)?.toLowerCase() === "delete")
        .map((ref) => refId(ref))
        .filter((x): x is string => x !== undefined && view.get(x) !== undefined)
        .map(idKey);
    },
    instanceView: vmInstanceView,
    redact(body) {
      // ARM never returns customData (nor a password) on GET.
      const os = isRecord(body.properties) && isRecord(body.properties.osProfile) ? body.properties.osProfile : undefined;
      if (os) {
        delete os.customData;
        delete os.adminPassword;
      }
      return body;
    },
  };

  return {
    [TYPES.resourceGroup]: rg,
    [TYPES.vnet]: vnet,
    [TYPES.subnet]: subnet,
    [TYPES.peering]: peering,
    [TYPES.publicIp]: publicIp,
    [TYPES.nsg]: nsg,
    [TYPES.nic]: nic,
    [TYPES.vm]: vm,
    [TYPES.ppg]: ppg,
    [TYPES.availabilitySet]: availabilitySet,
  };
}

/** The PPG a VM is in: its own, or its availability set's. */
export function placementGroupOf(vm: StoredResource, view: CloudView): string | undefined {
  const p = props(vm.body);
  const own = refId(p.proximityPlacementGroup);
  if (own) return idKey(own);
  const avsetId = refId(p.availabilitySet);
  const avset = avsetId ? view.get(avsetId) : undefined;
  const viaSet = avset ? refId(props(avset.body).proximityPlacementGroup) : undefined;
  return viaSet ? idKey(viaSet) : undefined;
}

function dynamicAddress(nic: StoredResource, view: CloudView): string {
  const subnetId = refId(nicIpConfig(nic).subnet);
  const subnetRes = subnetId ? view.get(subnetId) : undefined;
  const prefix = subnetRes ? subnetPrefix(subnetRes) : undefined;
  if (!prefix || !subnetId) throw bad("InvalidResourceReference", `Network interface '${nic.name}' has no subnet to take an address from.`);
  const c = parseCidr(prefix);
  const used = new Set(view.all(TYPES.nic).filter((x) => x.key !== nic.key && refId(nicIpConfig(x).subnet) && idKey(refId(nicIpConfig(x).subnet)!) === idKey(subnetId)).map((x) => str(nicIpConfig(x).privateIPAddress)));
  for (let i = 4; i < 2 ** (32 - c.prefix) - 1; i++) {
    const ip = intToIp(c.network + i);
    if (!used.has(ip)) return ip;
  }
  throw bad("SubnetIsFull", `Subnet ${subnetRes!.name} has no free address.`);
}

/** A locally administered unicast MAC, as ARM's hex string without separators. */
function macAddress(): string {
  const b = randomBytes(6);
  b[0] = (b[0]! & 0xfe) | 0x02;
  return [...b].map((x) => x.toString(16).padStart(2, "0").toUpperCase()).join("-");
}

/** Azure's default security rules of every NSG (the ones its GET returns as defaultSecurityRules). */
export const DEFAULT_SECURITY_RULES = [
  rule("AllowVnetInBound", 65000, "Inbound", "Allow", "VirtualNetwork", "VirtualNetwork"),
  rule("AllowAzureLoadBalancerInBound", 65001, "Inbound", "Allow", "AzureLoadBalancer", "*"),
  rule("DenyAllInBound", 65500, "Inbound", "Deny", "*", "*"),
  rule("AllowVnetOutBound", 65000, "Outbound", "Allow", "VirtualNetwork", "VirtualNetwork"),
  rule("AllowInternetOutBound", 65001, "Outbound", "Allow", "*", "Internet"),
  rule("DenyAllOutBound", 65500, "Outbound", "Deny", "*", "*"),
];

function rule(name: string, priority: number, direction: string, access: string, source: string, destination: string) {
  return {
    name,
    properties: {
      priority,
      direction,
      access,
      protocol: "*",
      sourcePortRange: "*",
      destinationPortRange: "*",
      sourceAddressPrefix: source,
      destinationAddressPrefix: destination,
      provisioningState: "Succeeded",
    },
  };
}

/** A size the emulator can play: every capability it checks is known (subscriptionCapacity.ts isPlayable). */
function playableSize(size: string): SizeFacts | undefined {
  const f = sizeFacts(size);
  return isPlayable(f) ? f : undefined;
}

/**
 * The image's generation and the OS disk's controller must be ones the size boots, as Azure
 * checks on create. Texts as Azure returns them:
 *  - generation: BadRequest "The selected VM size 'Standard_D16ads_v6' cannot boot Hypervisor
 *    Generation '1'. If this was a Create operation please check …" (seen through
 *    azure-native: github.com/redhat-developer/mapt issue 489; also loft-sh/devpod issue 731);
 *  - controller: InvalidParameter, target storageProfile.diskControllerType, "The VM size
 *    'Standard_D4ads_v5' cannot boot with DiskControllerType 'NVMe'. Please check that the disk
 *    controller type provided is one of the supported disk controller types for the VM size …"
 *    (github.com/Azure/FederalAVD issue 20). An NVMe-only size without diskControllerType gets
 *    SCSI, Azure's default, and fails the same way (github.com/kubermatic/machine-controller
 *    issue 1980: "when DiskControllerType is not explicitly specified, Azure defaults to SCSI").
 * The Ubuntu 24.04 image's generation is its SKU's: "server-gen1" is generation 1, "server" 2.
 */
function checkBoot(size: string, cap: SizeFacts, p: Record<string, unknown>): void {
  const storage = isRecord(p.storageProfile) ? p.storageProfile : {};
  const image = isRecord(storage.imageReference) ? storage.imageReference : {};
  const sku = str(image.sku);
  if (sku !== undefined && str(image.offer) === UBUNTU_2404.offer) {
    const generation = sku === UBUNTU_2404.skuGen1 ? 1 : 2;
    if (!cap.hyperVGenerations!.includes(generation)) {
      throw bad(
        "BadRequest",
        `The selected VM size '${size}' cannot boot Hypervisor Generation '${generation}'. If this was a Create operation please check that the Hypervisor Generation of the Image matches the Hypervisor Generation of the selected VM Size. If this was an Update operation please select a Hypervisor Generation '${generation}' VM Size. For more information, see https://aka.ms/azuregen2vm`,
      );
    }
  }
  const controller = str(storage.diskControllerType) ?? "SCSI";
  if (!cap.diskControllerTypes!.some((c) => c.toLowerCase() === controller.toLowerCase())) {
    throw bad(
      "InvalidParameter",
      `The VM size '${size}' cannot boot with DiskControllerType '${controller}'. Please check that the disk controller type provided is one of the supported disk controller types for the VM size '${size}'. Please query sku api at https://aka.ms/azure-compute-skus  to determine supported disk controller types for the VM size.`,
    );
  }
}
