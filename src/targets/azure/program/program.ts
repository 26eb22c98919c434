import * as pulumi from "@pulumi/pulumi";
// Per-module imports with an explicit file: plain Node ESM refuses the directory form
// ("@pulumi/azure-native/compute", ERR_UNSUPPORTED_DIR_IMPORT); this form works under node,
// tsx and vitest alike. The packages are CommonJS; their named exports are detected by Node.
import * as compute from "@pulumi/azure-native/compute/index.js";
import * as network from "@pulumi/azure-native/network/index.js";
import * as resources from "@pulumi/azure-native/resources/index.js";
import type { Plan } from "../../../plan/types.ts";
import { UBUNTU_2404 } from "../catalog/capabilities.ts";
import { sizeFacts, vmBoot } from "../catalog/sizes/sizeFacts.ts";
import { customData } from "./cloudInit.ts";
import { addressPlan, inboundRules, type InboundRule } from "./network.ts";
import {
  IP_CONFIGURATION_NAME,
  availabilitySetName,
  computerName,
  deploymentTags,
  hostTags as hostTagsOf,
  nicName as nicNameOf,
  nsgName as nsgNameOf,
  peeringName,
  ppgName,
  publicIpName,
  resourceGroupName,
  runTags,
  vmName as vmNameOf,
  vnetName,
} from "./names.ts";
import { namePrefix, type AzureHostOutput, type AzureSettings } from "./types.ts";
import { assertAzureRun } from "../catalog/validateAzure.ts";

/** What the program returns: the stack outputs (AzureOutputsSchema once resolved). */
export interface AzureProgramOutputs {
  resourceGroup: pulumi.Output<string>;
  hosts: pulumi.Output<AzureHostOutput[]>;
}

// Every Azure name and tag comes from names.ts: catalog/resourceNames.ts checks those very names.
export { namePrefix, runTags };

function securityRule(rule: InboundRule, publicIpOf: (host: string) => pulumi.Output<string>) {
  const base = {
    name: rule.name,
    priority: rule.priority,
    direction: "Inbound",
    access: rule.access,
    protocol: rule.protocol,
    sourcePortRange: "*",
    destinationPortRange: rule.destinationPort,
    destinationAddressPrefix: rule.destination,
    description: rule.why.slice(0, 140),
  };
  if (rule.sourceTag) return { ...base, sourceAddressPrefix: rule.sourceTag };
  const sources = rule.sources.map((s) => (s.kind === "prefix" ? pulumi.output(s.prefix) : publicIpOf(s.host).apply((ip) => `${ip}/32`)));
  return sources.length === 1 ? { ...base, sourceAddressPrefix: sources[0]! } : { ...base, sourceAddressPrefixes: sources };
}

/**
 * The Pulumi program of one run. Validates everything first (AzureValidationError, thrown by
 * this call, before any resource can be requested), then returns the program function that
 * declares: a resource group; a VNet per region and VNet name (`${prefix}-vnet-<region>[-<vnet>]`, fitted to Azure's 64 characters: names.ts)
 * with a /24 per deployment; peering both ways between the VNets a deployment spans; per host a Standard static public IP, an NSG, a NIC
 * (Accelerated Networking as asked, static private address) and an Ubuntu 24.04 VM; per
 * deployment its PPGs (intent.vmSizes) and availability sets (with their PPG).
 */
export function createProgram(plan: Plan, settings: AzureSettings): () => Promise<AzureProgramOutputs> {
  assertAzureRun(plan, settings);
  const addresses = addressPlan(plan, settings.addressSpace);
  const rules = inboundRules(plan, addresses, settings.sshFrom);

  return async () => {
    const prefix = namePrefix(settings.runId);
    const tags = runTags(settings);
    const firstRegion = addresses.vnets[0]!.region;

    // createdAt says when a resource was created: set once, never rewritten (a new "now" on every
    // `pulumi up` would be a diff on every update). expiresAt too when nobody configured it.
    const keep: pulumi.CustomResourceOptions = { ignoreChanges: [...new Set(["createdAt", ...(settings.keepTags ?? [])])].map((t) => `tags.${t}`) };
    const rg = new resources.ResourceGroup(prefix, { resourceGroupName: resourceGroupName(settings.runId), location: firstRegion, tags }, keep);
    const rgName = rg.name;

    // Keyed by VNet key (network.ts vnetKey): the region, or `<region>-<vnet>` for a named VNet.
    const vnets = new Map<string, network.VirtualNetwork>();
    for (const v of addresses.vnets) {
      const name = vnetName(prefix, v.key);
      vnets.set(v.key, new network.VirtualNetwork(name, { resourceGroupName: rgName, virtualNetworkName: name, location: v.region, addressSpace: { addressPrefixes: [v.addressPrefix] }, tags }, keep));
    }

    // Azure serialises changes to one VNet (AnotherOperationInProgress on parallel subnets or
    // peerings, pulumi-azure-native#699): chain them per VNet.
    const lastOnVnet = new Map<string, pulumi.Resource>();
    const chain = (vnet: string): pulumi.CustomResourceOptions => {
      const previous = lastOnVnet.get(vnet);
      return previous ? { dependsOn: [previous] } : {};
    };

    const subnets = new Map<string, network.Subnet>();
    for (const s of addresses.subnets) {
      const vnet = vnets.get(s.vnet)!;
      const subnet = new network.Subnet(`${vnetName(prefix, s.vnet)}-${s.name}`, { resourceGroupName: rgName, virtualNetworkName: vnet.name, subnetName: s.name, addressPrefix: s.addressPrefix }, chain(s.vnet));
      lastOnVnet.set(s.vnet, subnet);
      subnets.set(s.key, subnet);
    }

    // Peerings: after every subnet of both VNets, and one at a time. A peering needs its remote
    // VNet Succeeded, and a subnet or peering operation leaves its VNet Updating meanwhile: ARM
    // refuses with ReferencedResourceNotProvisioned (found by latlab's emulator, which plays it).
    const subnetsDone = new Map(lastOnVnet);
    let lastPeering: pulumi.Resource | undefined;
    for (const p of addresses.peerings) {
      const local = vnets.get(p.from)!;
      const remote = vnets.get(p.to)!;
      const after = [subnetsDone.get(p.from), subnetsDone.get(p.to), lastPeering].filter((r): r is pulumi.Resource => r !== undefined);
      const peering = new network.VirtualNetworkPeering(
        `${prefix}-peer-${p.from}-${p.to}`,
        {
          resourceGroupName: rgName,
          virtualNetworkName: local.name,
          virtualNetworkPeeringName: peeringName(p.to),
          remoteVirtualNetwork: { id: remote.id },
          allowVirtualNetworkAccess: true,
          allowForwardedTraffic: false,
          allowGatewayTransit: false,
          useRemoteGateways: false,
        },
        after.length ? { dependsOn: after } : {},
      );
      lastPeering = peering;
    }

    // Public IPs first: NSG rules for the public path name the clients' addresses.
    const pips = new Map<string, network.PublicIPAddress>();
    for (const d of plan.deployments) {
      for (const h of d.hosts) {
        const host = addresses.hosts.find((a) => a.deployment === d.id && a.role === h.role)!;
        const name = publicIpName(prefix, host.name);
        pips.set(
          host.name,
          new network.PublicIPAddress(name, {
            resourceGroupName: rgName,
            publicIpAddressName: name,
            location: h.region,
            sku: { name: "Standard", tier: "Regional" },
            publicIPAllocationMethod: "Static",
            publicIPAddressVersion: "IPv4",
            ...(h.zone ? { zones: [h.zone] } : {}),
            tags: hostTagsOf(tags, d.id, h.role),
          }, keep),
        );
      }
    }
    const publicIpOf = (host: string) => pips.get(host)!.ipAddress.apply((ip) => ip ?? "");

    const hostOutputs: pulumi.Output<AzureHostOutput>[] = [];
    for (const d of plan.deployments) {
      // Placement groups of this deployment (replicas never share one: each is its own sample).
      const ppgs = new Map<string, compute.ProximityPlacementGroup>();
      for (const name of [...new Set(d.hosts.map((h) => h.ppg).filter((p): p is string => p !== null))]) {
        const members = d.hosts.filter((h) => h.ppg === name);
        const first = members[0]!;
        const azName = ppgName(prefix, d.index, name);
        ppgs.set(
          name,
          new compute.ProximityPlacementGroup(azName, {
            resourceGroupName: rgName,
            proximityPlacementGroupName: azName,
            location: first.region,
            proximityPlacementGroupType: "Standard",
            ...(first.zone ? { zones: [first.zone] } : {}),
            intent: { vmSizes: [...new Set(members.map((m) => m.size))].sort() },
            tags: deploymentTags(tags, d.id),
          }, keep),
        );
      }
      const avsets = new Map<string, compute.AvailabilitySet>();
      for (const name of [...new Set(d.hosts.map((h) => h.availabilitySet).filter((a): a is string => a !== null))]) {
        const members = d.hosts.filter((h) => h.availabilitySet === name);
        const first = members[0]!;
        const azName = availabilitySetName(prefix, d.index, name);
        const ppg = first.ppg ? ppgs.get(first.ppg) : undefined;
        avsets.set(
          name,
          new compute.AvailabilitySet(azName, {
            resourceGroupName: rgName,
            availabilitySetName: azName,
            location: first.region,
            sku: { name: "Aligned" },
            platformFaultDomainCount: 2,
            platformUpdateDomainCount: 5,
            ...(ppg ? { proximityPlacementGroup: { id: ppg.id } } : {}),
            tags: deploymentTags(tags, d.id),
          }, keep),
        );
      }

      for (const h of d.hosts) {
        const host = addresses.hosts.find((a) => a.deployment === d.id && a.role === h.role)!;
        const hostTags = hostTagsOf(tags, d.id, h.role);
        const nsgName = nsgNameOf(prefix, host.name);
        const nsg = new network.NetworkSecurityGroup(nsgName, {
          resourceGroupName: rgName,
          networkSecurityGroupName: nsgName,
          location: h.region,
          securityRules: rules.get(host.name)!.map((r) => securityRule(r, publicIpOf)),
          tags: hostTags,
        }, keep);
        const nicName = nicNameOf(prefix, host.name);
        const nic = new network.NetworkInterface(nicName, {
          resourceGroupName: rgName,
          networkInterfaceName: nicName,
          location: h.region,
          enableAcceleratedNetworking: h.accelnet,
          networkSecurityGroup: { id: nsg.id },
          ipConfigurations: [
            {
              name: IP_CONFIGURATION_NAME,
              primary: true,
              privateIPAllocationMethod: "Static",
              privateIPAddress: host.privateIp,
              privateIPAddressVersion: "IPv4",
              subnet: { id: subnets.get(host.subnet)!.id },
              publicIPAddress: { id: pips.get(host.name)!.id },
            },
          ],
          tags: hostTags,
        }, keep);
        // Live SKU facts (read before deploying) win over the offline catalog: a v6 size boots only
        // generation 2 images and NVMe disks, a Dv2 size only generation 1 (sizeFacts.ts).
        const boot = vmBoot(settings.sizeFacts?.[h.size] ?? sizeFacts(h.size));
        const avset = h.availabilitySet ? avsets.get(h.availabilitySet) : undefined;
        const ppg = !avset && h.ppg ? ppgs.get(h.ppg) : undefined;
        const keys = settings.hostKeys[host.name]!;
        const vmName = vmNameOf(prefix, host.name);
        const vm = new compute.VirtualMachine(vmName, {
          resourceGroupName: rgName,
          vmName,
          location: h.region,
          ...(h.zone ? { zones: [h.zone] } : {}),
          hardwareProfile: { vmSize: h.size },
          ...(ppg ? { proximityPlacementGroup: { id: ppg.id } } : {}),
          ...(avset ? { availabilitySet: { id: avset.id } } : {}),
          // The NIC is Pulumi's resource: "Detach" (Azure's default) leaves its deletion to Pulumi. With
          // "Delete", Azure would remove it behind Pulumi's back when the VM goes.
          networkProfile: { networkInterfaces: [{ id: nic.id, primary: true, deleteOption: "Detach" }] },
          osProfile: {
            computerName: computerName(host.name),
            adminUsername: settings.adminUsername,
            // Holds this host's private host key: a Pulumi secret (encrypted in state, never shown).
            customData: pulumi.secret(customData({ hostName: host.name, hostKey: keys })),
            linuxConfiguration: {
              disablePasswordAuthentication: true,
              ssh: { publicKeys: [{ path: `/home/${settings.adminUsername}/.ssh/authorized_keys`, keyData: settings.sshPublicKey }] },
            },
          },
          storageProfile: {
            imageReference: { publisher: UBUNTU_2404.publisher, offer: UBUNTU_2404.offer, sku: boot.generation === 2 ? UBUNTU_2404.skuGen2 : UBUNTU_2404.skuGen1, version: "latest" },
            osDisk: { createOption: "FromImage", deleteOption: "Delete", managedDisk: { storageAccountType: "StandardSSD_LRS" } },
            ...(boot.diskControllerType ? { diskControllerType: boot.diskControllerType } : {}),
          },
          tags: hostTags,
        }, keep);
        // The host's PPG, its own or its availability set's: its colocation status is read after the deploy.
        const hostPpg = h.ppg ? ppgs.get(h.ppg) : undefined;
        hostOutputs.push(
          pulumi.all([pips.get(host.name)!.ipAddress, nic.ipConfigurations, vm.name, vm.id, hostPpg?.id]).apply(([publicIp, ipConfigurations, name, vmId, ppgId]) => ({
            deployment: d.id,
            role: h.role,
            publicIp: publicIp ?? "",
            privateIp: ipConfigurations?.[0]?.privateIPAddress ?? host.privateIp,
            hostKey: keys.publicKey.trim(),
            vmName: name,
            vmId,
            ...(ppgId ? { ppgId } : {}),
          })),
        );
      }
    }

    return { resourceGroup: rgName, hosts: pulumi.all(hostOutputs) };
  };
}
