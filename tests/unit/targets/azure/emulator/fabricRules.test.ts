import { describe, expect, it } from "vitest";
import { parseFaults } from "../../../../../src/targets/azure/emulator/arm/faults.ts";
import { formatResourceId, parseResourceId, references } from "../../../../../src/targets/azure/emulator/arm/resourceId.ts";
import { nsgRuleset, nsgRulesOf } from "../../../../../src/targets/azure/emulator/fabric/nsgRuleset.ts";
import { macForLink, natRuleset, subnetGateway, vnetTransit } from "../../../../../src/targets/azure/emulator/fabric/vnetRuleset.ts";
import { addressLayout, addressPlan } from "../../../../../src/targets/azure/program/network.ts";
import { buildPlan } from "../../../../../src/plan/buildPlan.ts";
import { defineExperiment } from "../../../../../src/dsl/experiment.ts";

const rule = (name: string, priority: number, p: Record<string, unknown>) => ({ name, properties: { priority, direction: "Inbound", access: "Allow", protocol: "Tcp", sourcePortRange: "*", destinationPortRange: "*", sourceAddressPrefix: "*", destinationAddressPrefix: "*", ...p } });

describe("an NSG as nftables rules", () => {
  const body = {
    properties: {
      securityRules: [
        rule("deny-other-vnet-inbound", 4000, { access: "Deny", protocol: "*", sourceAddressPrefix: "VirtualNetwork" }),
        rule("allow-ssh", 100, { sourceAddressPrefix: "198.19.255.1/32", destinationPortRange: "22", destinationAddressPrefix: "198.18.0.5" }),
        rule("allow-iperf", 200, { protocol: "*", sourceAddressPrefixes: ["198.18.0.4/32", "198.18.0.6/32"], destinationPortRange: "11000-11002" }),
        rule("allow-ping", 300, { protocol: "Icmp", sourceAddressPrefix: "198.18.0.4/32" }),
        rule("allow-outbound-dns", 100, { direction: "Outbound", protocol: "Udp", destinationPortRange: "53", destinationAddressPrefix: "Internet" }),
      ],
    },
  };

  it("keeps Azure's order (priority), direction and fields", () => {
    const rules = nsgRulesOf(body);
    expect(rules.map((r) => `${r.direction}:${r.priority}`)).toEqual(["Inbound:100", "Outbound:100", "Inbound:200", "Inbound:300", "Inbound:4000"]);
    expect(rules.find((r) => r.name === "allow-iperf")!.sourceAddressPrefixes).toEqual(["198.18.0.4/32", "198.18.0.6/32"]);
  });

  it("renders the rules in priority order before the default rules, a stateful drop-by-default input chain", () => {
    const text = nsgRuleset(nsgRulesOf(body), ["198.18.0.0/20"]);
    const lines = text.split("\n").map((l) => l.trim());
    const ssh = lines.findIndex((l) => l.startsWith("meta l4proto tcp ip saddr { 198.19.255.1/32 } ip daddr { 198.18.0.5 } tcp dport { 22 } accept"));
    const iperfTcp = lines.findIndex((l) => l.includes("meta l4proto tcp ip saddr { 198.18.0.4/32, 198.18.0.6/32 } tcp dport { 11000-11002 } accept"));
    const iperfUdp = lines.findIndex((l) => l.includes("meta l4proto udp ip saddr { 198.18.0.4/32, 198.18.0.6/32 } udp dport { 11000-11002 } accept"));
    const ping = lines.findIndex((l) => l.startsWith("meta l4proto icmp ip saddr { 198.18.0.4/32 } accept"));
    const denyVnet = lines.findIndex((l) => l.startsWith("ip saddr { 198.18.0.0/20 } drop"));
    const allowVnet = lines.findIndex((l) => l.includes('comment "AllowVnetInBound 65000"'));
    const denyAll = lines.findIndex((l) => l.includes('drop comment "DenyAllInBound 65500"'));
    for (const i of [ssh, iperfTcp, iperfUdp, ping, denyVnet, allowVnet, denyAll]) expect(i).toBeGreaterThan(0);
    expect(ssh).toBeLessThan(iperfTcp);
    expect(iperfUdp).toBeLessThan(ping);
    expect(ping).toBeLessThan(denyVnet);
    // latlab's closing deny overrides Azure's AllowVnetInBound because it comes first.
    expect(denyVnet).toBeLessThan(allowVnet);
    expect(allowVnet).toBeLessThan(denyAll);
    expect(text).toContain("type filter hook input priority 0; policy drop;");
    expect(text).toContain("ct state established,related accept");
    // Outbound: the rule, then Azure's allow-everything defaults.
    expect(text).toMatch(/udp dport \{ 53 \} accept[\s\S]*accept comment "AllowVnetOutBound/);
    expect(text).toContain("ip daddr != { 198.18.0.0/20 } udp dport { 53 } accept");
  });

  it("without an NSG: only removes the table (everything passes, as on Azure)", () => {
    expect(nsgRuleset(undefined, ["198.18.0.0/20"])).toBe("table inet latlab_nsg {}\ndelete table inet latlab_nsg\n");
  });

  it("a service tag that names Azure's own ranges matches nothing here, and says so", () => {
    const text = nsgRuleset(nsgRulesOf({ properties: { securityRules: [rule("storage", 100, { sourceAddressPrefix: "Storage" })] } }), ["198.18.0.0/20"]);
    expect(text).toContain("# storage (100): matches nothing on this fabric");
  });
});

describe("the VNet router's NAT and addresses", () => {
  it("translates a public address to its NIC's private one only across inet0, both ways", () => {
    const text = natRuleset([
      { privateIp: "198.18.0.5", publicIp: "198.19.255.9" },
      { privateIp: "198.18.0.4", publicIp: "198.19.255.8" },
    ]);
    expect(text).toContain('iifname "inet0" ip daddr 198.19.255.8 dnat to 198.18.0.4');
    expect(text).toContain('oifname "inet0" ip saddr 198.18.0.5 snat to 198.19.255.9');
    expect(text.indexOf("198.19.255.8 dnat")).toBeLessThan(text.indexOf("198.19.255.9 dnat"));
  });

  it("gives every VNet router its own transit /30, and each subnet Azure's .1 gateway", () => {
    expect(vnetTransit(0)).toEqual({ inet: "198.19.0.1", router: "198.19.0.2" });
    expect(vnetTransit(65)).toEqual({ inet: "198.19.1.5", router: "198.19.1.6" });
    expect(() => vnetTransit(5000)).toThrow(/beyond the transit range/);
    expect(subnetGateway("198.18.16.0/24")).toEqual({ address: "198.18.16.1", cidr: "198.18.16.1/24" });
    expect(macForLink("00-0D-3A-F8-06-EC")).toBe("00:0d:3a:f8:06:ec");
  });
});

describe("ARM resource ids", () => {
  const vnet = "/subscriptions/s/resourceGroups/RG/providers/Microsoft.Network/virtualNetworks/v";
  it("parses nested types, keeps the case, compares case-insensitively", () => {
    const id = parseResourceId(`${vnet}/subnets/d0`);
    expect(id).toMatchObject({ type: "Microsoft.Network/virtualNetworks/subnets", name: "d0", resourceGroup: "RG", parent: vnet });
    expect(id.key).toBe(id.id.toLowerCase());
    expect(parseResourceId("/subscriptions/s/resourceGroups/RG")).toMatchObject({ type: "Microsoft.Resources/resourceGroups", name: "RG" });
    expect(formatResourceId("s", "RG", "Microsoft.Network/virtualNetworks/subnets", ["v", "d0"])).toBe(`${vnet}/subnets/d0`);
    expect(() => parseResourceId("/subscriptions/s/resourceGroups/RG/providers/Microsoft.Network/virtualNetworks")).toThrow(/pairs/);
    expect(() => parseResourceId("/nope")).toThrow(/not a resource id/);
  });

  it("finds every reference in a body, not the resource's own id", () => {
    const body = { id: vnet, properties: { ipConfigurations: [{ properties: { subnet: { id: `${vnet}/subnets/d0` } } }], networkSecurityGroup: { id: "/subscriptions/s/resourceGroups/RG/providers/Microsoft.Network/networkSecurityGroups/g" } } };
    expect(references(body).map((r) => r.path)).toEqual(["properties.ipConfigurations[0].properties.subnet", "properties.networkSecurityGroup"]);
  });
});

describe("faults from LATLAB_EMULATOR_FAULTS", () => {
  it("parses the kinds, and names the bad entry", () => {
    expect(parseFaults('[{"kind":"create-error","type":"Microsoft.Compute/virtualMachines","code":"QuotaExceeded","times":1}]')).toHaveLength(1);
    expect(() => parseFaults('[{"kind":"create-error","type":"x","code":"Boom"}]')).toThrow(/LATLAB_EMULATOR_FAULTS: \[0\.code\]/);
    expect(() => parseFaults('[{"kind":"explode"}]')).toThrow(/\[0\.kind\]/);
    expect(() => parseFaults("{")).toThrow(/not JSON/);
  });
});

describe("the Azure address plan in another address space", () => {
  const experiment = defineExperiment({
    name: "two-regions",
    description: "a host in each of two regions",
    defaults: { size: "Standard_D2s_v5" },
    hosts: { client: { region: "uksouth", zone: "1" }, server: { region: "ukwest", zone: null } },
    measure: [{ tool: "ping" }],
  });
  const plan = buildPlan(experiment);

  it("keeps Azure's default layout: a /16 per region from 10.10.0.0", () => {
    expect(addressPlan(plan).vnets.map((v) => v.addressPrefix)).toEqual(["10.10.0.0/16", "10.11.0.0/16"]);
  });

  it("fits the emulator's 198.18.0.0/16: a /20 per region, a /24 per deployment, hosts from .4", () => {
    const a = addressPlan(plan, "198.18.0.0/16");
    expect(a.vnets.map((v) => v.addressPrefix)).toEqual(["198.18.0.0/20", "198.18.16.0/20"]);
    expect(a.hosts.map((h) => h.privateIp)).toEqual(["198.18.0.4", "198.18.16.4"]);
    expect(addressLayout("198.18.0.0/16")).toMatchObject({ maxVnets: 16, maxDeployments: 16 });
    expect(() => addressLayout("198.18.0.0/24")).toThrow(/at least a \/20/);
  });
});
