import { intToIp, ipToInt, parseCidr, TRANSIT_NET } from "../../../local/network/names.ts";

/**
 * Names and addresses of the emulator's fabric, and the NAT a VNet router applies (pure).
 *
 *   root ns ── az<s>-i ══ root0 ── inet ns ── vn<k> ══ inet0 ── VNet router ns az<s>-vn<k> ── sn<j> bridge ── vm<m> ══ eth0 ── VM ns az<s>-vm<m>
 *                                                              VNet router ── pr<k'> ══ pr<k> ── peered VNet router (only while both peerings are Connected)
 *
 * - A VNet is a router namespace; each subnet a bridge in it carrying the subnet's gateway
 *   (its first address, as Azure's); a VM's eth0 is a port of its subnet's bridge.
 * - The "internet" is one namespace linking every VNet router and the root namespace, where the
 *   runner is. It has no default route: nothing leaves the machine.
 * - A public IP is DNATed to its NIC's private address by the VNet router on the way in (from
 *   inet0), and a VM's traffic to the internet is SNATed to it on the way out: as on Azure, a
 *   NSG sees the private destination, and public-path traffic arrives with the sender's public
 *   address as source.
 * - Peered VNets are linked router to router, routes added only while both directions exist.
 * - Addresses: transit /30s of TRANSIT_NET (namespaces only); public addresses from one /24 of
 *   198.19.128.0/17 that the root namespace routes to the inet namespace; VNet address spaces
 *   must lie in 198.18.0.0/16 (see ALLOWED_VNET_SPACE). All inside 198.18.0.0/15.
 */

/** Where emulated VNets may live: the benchmarking block, and only the part no root route uses. */
export const ALLOWED_VNET_SPACE = "198.18.0.0/16";
/** The /24 of public addresses is picked here, among what the root namespace does not use. */
export const PUBLIC_POOL_SPACE = "198.19.128.0/17";
export const NAT_TABLE = "latlab_nat";

export interface FabricNames {
  inet: string;
  rootLink: string;
  vnet(seq: number): string;
  vm(seq: number): string;
}

export function fabricNames(short: string): FabricNames {
  return {
    inet: `az${short}-inet`,
    rootLink: `az${short}-i`,
    vnet: (seq) => `az${short}-vn${seq}`,
    vm: (seq) => `az${short}-vm${seq}`,
  };
}

/** The /30 linking VNet router number `seq` to the inet namespace: inet side .1, router side .2 (its "router id"). */
export function vnetTransit(seq: number): { inet: string; router: string } {
  const t = parseCidr(TRANSIT_NET);
  const base = t.network + 4 * seq;
  if (4 * seq + 3 >= 2 ** (32 - t.prefix)) throw new Error(`VNet number ${seq} is beyond the transit range ${TRANSIT_NET}`);
  return { inet: intToIp(base + 1), router: intToIp(base + 2) };
}

/** Azure's gateway of a subnet: its first host address. */
export function subnetGateway(prefix: string): { address: string; cidr: string } {
  const c = parseCidr(prefix);
  return { address: intToIp(c.network + 1), cidr: `${intToIp(c.network + 1)}/${c.prefix}` };
}

export interface NatEntry {
  privateIp: string;
  publicIp: string;
}

/** The VNet router's NAT table script: public ↔ private, only across inet0. Atomic replace. */
export function natRuleset(entries: readonly NatEntry[]): string {
  const sorted = [...entries].sort((a, b) => ipToInt(a.publicIp) - ipToInt(b.publicIp));
  return [
    `table ip ${NAT_TABLE} {}`,
    `delete table ip ${NAT_TABLE}`,
    `table ip ${NAT_TABLE} {`,
    "  chain prerouting {",
    "    type nat hook prerouting priority dstnat; policy accept;",
    ...sorted.map((e) => `    iifname "inet0" ip daddr ${e.publicIp} dnat to ${e.privateIp}`),
    "  }",
    "  chain postrouting {",
    "    type nat hook postrouting priority srcnat; policy accept;",
    ...sorted.map((e) => `    oifname "inet0" ip saddr ${e.privateIp} snat to ${e.publicIp}`),
    "  }",
    "}",
    "",
  ].join("\n");
}

/** "00-0D-3A-F8-06-EC" (ARM) → "00:0d:3a:f8:06:ec" (ip link). */
export const macForLink = (arm: string) => arm.replace(/-/g, ":").toLowerCase();
