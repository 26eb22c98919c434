import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  ARM_TYPES,
  ExcerptFileSchema,
  armToSdk,
  armTypeForToken,
  armTypeInfo,
  sdkToArm,
  validateArmBody,
  validateArmBodyForArmType,
  type ArmSpecIssue,
} from "../../../../../src/targets/azure/emulator/spec/armSpec.ts";
import { EXCERPT_FILES, loadExcerpt } from "../../../../../src/targets/azure/emulator/spec/excerpts.ts";
import { flattenClashes, sdkView } from "../../../../../src/targets/azure/emulator/spec/flatten.ts";

const SPEC_DIR = new URL("../../../../../src/targets/azure/emulator/spec/", import.meta.url);

const SUB = "/subscriptions/00000000-0000-0000-0000-000000000000";
const RG_ID = `${SUB}/resourceGroups/latlab-r1`;
const NET = `${RG_ID}/providers/Microsoft.Network`;
const CMP = `${RG_ID}/providers/Microsoft.Compute`;
const TAGS = { "latlab-run": "r1", owner: "ci" };

/**
 * A small VM deployment the way src/targets/azure/program.ts declares it: token, the SDK inputs
 * @pulumi/azure-native sends, and the ARM body the real provider would PUT.
 */
const CASES: { token: string; sdk: Record<string, unknown>; path: Record<string, string>; arm: Record<string, unknown> }[] = [
  {
    token: "azure-native:resources:ResourceGroup",
    sdk: { resourceGroupName: "latlab-r1", location: "uksouth", tags: TAGS },
    path: { resourceGroupName: "latlab-r1" },
    arm: { location: "uksouth", tags: TAGS },
  },
  {
    token: "azure-native:network:VirtualNetwork",
    sdk: { resourceGroupName: "latlab-r1", virtualNetworkName: "vnet-uksouth", location: "uksouth", addressSpace: { addressPrefixes: ["10.10.0.0/16"] }, tags: TAGS },
    path: { resourceGroupName: "latlab-r1", virtualNetworkName: "vnet-uksouth" },
    arm: { location: "uksouth", tags: TAGS, properties: { addressSpace: { addressPrefixes: ["10.10.0.0/16"] } } },
  },
  {
    token: "azure-native:network:Subnet",
    sdk: { resourceGroupName: "latlab-r1", virtualNetworkName: "vnet-uksouth", subnetName: "d0", addressPrefix: "10.10.0.0/24" },
    path: { resourceGroupName: "latlab-r1", virtualNetworkName: "vnet-uksouth", subnetName: "d0" },
    arm: { properties: { addressPrefix: "10.10.0.0/24" } },
  },
  {
    token: "azure-native:network:VirtualNetworkPeering",
    sdk: {
      resourceGroupName: "latlab-r1",
      virtualNetworkName: "vnet-uksouth",
      virtualNetworkPeeringName: "to-ukwest",
      remoteVirtualNetwork: { id: `${NET}/virtualNetworks/vnet-ukwest` },
      allowVirtualNetworkAccess: true,
      allowForwardedTraffic: false,
      allowGatewayTransit: false,
      useRemoteGateways: false,
    },
    path: { resourceGroupName: "latlab-r1", virtualNetworkName: "vnet-uksouth", virtualNetworkPeeringName: "to-ukwest" },
    arm: {
      properties: {
        remoteVirtualNetwork: { id: `${NET}/virtualNetworks/vnet-ukwest` },
        allowVirtualNetworkAccess: true,
        allowForwardedTraffic: false,
        allowGatewayTransit: false,
        useRemoteGateways: false,
      },
    },
  },
  {
    token: "azure-native:network:PublicIPAddress",
    sdk: {
      resourceGroupName: "latlab-r1",
      publicIpAddressName: "client-pip",
      location: "uksouth",
      sku: { name: "Standard", tier: "Regional" },
      publicIPAllocationMethod: "Static",
      publicIPAddressVersion: "IPv4",
      zones: ["1"],
      tags: TAGS,
    },
    path: { resourceGroupName: "latlab-r1", publicIpAddressName: "client-pip" },
    arm: {
      location: "uksouth",
      sku: { name: "Standard", tier: "Regional" },
      zones: ["1"],
      tags: TAGS,
      properties: { publicIPAllocationMethod: "Static", publicIPAddressVersion: "IPv4" },
    },
  },
  {
    token: "azure-native:network:NetworkSecurityGroup",
    sdk: {
      resourceGroupName: "latlab-r1",
      networkSecurityGroupName: "client-nsg",
      location: "uksouth",
      securityRules: [
        {
          name: "ssh-from-runner",
          priority: 100,
          direction: "Inbound",
          access: "Allow",
          protocol: "Tcp",
          sourcePortRange: "*",
          destinationPortRange: "22",
          sourceAddressPrefix: "203.0.113.7/32",
          destinationAddressPrefix: "*",
          description: "the runner reaches sshd",
        },
        {
          name: "peer-udp",
          priority: 110,
          direction: "Inbound",
          access: "Allow",
          protocol: "Udp",
          sourcePortRange: "*",
          destinationPortRange: "11111",
          sourceAddressPrefixes: ["10.10.0.5/32", "10.20.0.5/32"],
          destinationAddressPrefix: "*",
        },
      ],
      tags: TAGS,
    },
    path: { resourceGroupName: "latlab-r1", networkSecurityGroupName: "client-nsg" },
    arm: {
      location: "uksouth",
      tags: TAGS,
      properties: {
        securityRules: [
          {
            name: "ssh-from-runner",
            properties: {
              priority: 100,
              direction: "Inbound",
              access: "Allow",
              protocol: "Tcp",
              sourcePortRange: "*",
              destinationPortRange: "22",
              sourceAddressPrefix: "203.0.113.7/32",
              destinationAddressPrefix: "*",
              description: "the runner reaches sshd",
            },
          },
          {
            name: "peer-udp",
            properties: {
              priority: 110,
              direction: "Inbound",
              access: "Allow",
              protocol: "Udp",
              sourcePortRange: "*",
              destinationPortRange: "11111",
              sourceAddressPrefixes: ["10.10.0.5/32", "10.20.0.5/32"],
              destinationAddressPrefix: "*",
            },
          },
        ],
      },
    },
  },
  {
    token: "azure-native:network:NetworkInterface",
    sdk: {
      resourceGroupName: "latlab-r1",
      networkInterfaceName: "client-nic",
      location: "uksouth",
      enableAcceleratedNetworking: true,
      networkSecurityGroup: { id: `${NET}/networkSecurityGroups/client-nsg` },
      ipConfigurations: [
        {
          name: "ipconfig1",
          primary: true,
          privateIPAllocationMethod: "Static",
          privateIPAddress: "10.10.0.4",
          privateIPAddressVersion: "IPv4",
          subnet: { id: `${NET}/virtualNetworks/vnet-uksouth/subnets/d0` },
          publicIPAddress: { id: `${NET}/publicIPAddresses/client-pip` },
        },
      ],
      tags: TAGS,
    },
    path: { resourceGroupName: "latlab-r1", networkInterfaceName: "client-nic" },
    arm: {
      location: "uksouth",
      tags: TAGS,
      properties: {
        enableAcceleratedNetworking: true,
        networkSecurityGroup: { id: `${NET}/networkSecurityGroups/client-nsg` },
        ipConfigurations: [
          {
            name: "ipconfig1",
            properties: {
              primary: true,
              privateIPAllocationMethod: "Static",
              privateIPAddress: "10.10.0.4",
              privateIPAddressVersion: "IPv4",
              subnet: { id: `${NET}/virtualNetworks/vnet-uksouth/subnets/d0` },
              publicIPAddress: { id: `${NET}/publicIPAddresses/client-pip` },
            },
          },
        ],
      },
    },
  },
  {
    token: "azure-native:compute:ProximityPlacementGroup",
    sdk: {
      resourceGroupName: "latlab-r1",
      proximityPlacementGroupName: "d0-ppg-a",
      location: "uksouth",
      proximityPlacementGroupType: "Standard",
      zones: ["1"],
      intent: { vmSizes: ["Standard_D2s_v5", "Standard_D4s_v5"] },
      tags: TAGS,
    },
    path: { resourceGroupName: "latlab-r1", proximityPlacementGroupName: "d0-ppg-a" },
    arm: {
      location: "uksouth",
      zones: ["1"],
      tags: TAGS,
      properties: { proximityPlacementGroupType: "Standard", intent: { vmSizes: ["Standard_D2s_v5", "Standard_D4s_v5"] } },
    },
  },
  {
    token: "azure-native:compute:AvailabilitySet",
    sdk: {
      resourceGroupName: "latlab-r1",
      availabilitySetName: "d0-avset-a",
      location: "uksouth",
      sku: { name: "Aligned" },
      platformFaultDomainCount: 2,
      platformUpdateDomainCount: 5,
      proximityPlacementGroup: { id: `${CMP}/proximityPlacementGroups/d0-ppg-a` },
      tags: TAGS,
    },
    path: { resourceGroupName: "latlab-r1", availabilitySetName: "d0-avset-a" },
    arm: {
      location: "uksouth",
      sku: { name: "Aligned" },
      tags: TAGS,
      properties: {
        platformFaultDomainCount: 2,
        platformUpdateDomainCount: 5,
        proximityPlacementGroup: { id: `${CMP}/proximityPlacementGroups/d0-ppg-a` },
      },
    },
  },
  {
    token: "azure-native:compute:VirtualMachine",
    sdk: {
      resourceGroupName: "latlab-r1",
      vmName: "latlab-r1-client",
      location: "uksouth",
      zones: ["1"],
      hardwareProfile: { vmSize: "Standard_D2s_v5" },
      proximityPlacementGroup: { id: `${CMP}/proximityPlacementGroups/d0-ppg-a` },
      availabilitySet: { id: `${CMP}/availabilitySets/d0-avset-a` },
      networkProfile: { networkInterfaces: [{ id: `${NET}/networkInterfaces/client-nic`, primary: true, deleteOption: "Delete" }] },
      osProfile: {
        computerName: "client",
        adminUsername: "latlab",
        customData: Buffer.from("#cloud-config\n").toString("base64"),
        linuxConfiguration: {
          disablePasswordAuthentication: true,
          ssh: { publicKeys: [{ path: "/home/latlab/.ssh/authorized_keys", keyData: "ssh-ed25519 AAAAC3Nza test" }] },
        },
      },
      storageProfile: {
        imageReference: { publisher: "Canonical", offer: "ubuntu-24_04-lts", sku: "server", version: "latest" },
        osDisk: { createOption: "FromImage", deleteOption: "Delete", managedDisk: { storageAccountType: "StandardSSD_LRS" } },
      },
      tags: TAGS,
    },
    path: { resourceGroupName: "latlab-r1", vmName: "latlab-r1-client" },
    arm: {
      location: "uksouth",
      zones: ["1"],
      tags: TAGS,
      properties: {
        hardwareProfile: { vmSize: "Standard_D2s_v5" },
        proximityPlacementGroup: { id: `${CMP}/proximityPlacementGroups/d0-ppg-a` },
        availabilitySet: { id: `${CMP}/availabilitySets/d0-avset-a` },
        networkProfile: {
          networkInterfaces: [{ id: `${NET}/networkInterfaces/client-nic`, properties: { primary: true, deleteOption: "Delete" } }],
        },
        osProfile: {
          computerName: "client",
          adminUsername: "latlab",
          customData: Buffer.from("#cloud-config\n").toString("base64"),
          linuxConfiguration: {
            disablePasswordAuthentication: true,
            ssh: { publicKeys: [{ path: "/home/latlab/.ssh/authorized_keys", keyData: "ssh-ed25519 AAAAC3Nza test" }] },
          },
        },
        storageProfile: {
          imageReference: { publisher: "Canonical", offer: "ubuntu-24_04-lts", sku: "server", version: "latest" },
          osDisk: { createOption: "FromImage", deleteOption: "Delete", managedDisk: { storageAccountType: "StandardSSD_LRS" } },
        },
      },
    },
  },
];

const caseOf = (token: string) => {
  const c = CASES.find((x) => x.token === token);
  if (c === undefined) throw new Error(token);
  return structuredClone(c);
};
const armOf = (token: string) => sdkToArm(token, caseOf(token).sdk).body;
const only = (issues: ArmSpecIssue[]) => {
  expect(issues).toHaveLength(1);
  return issues[0]!;
};
const withoutPath = (sdk: Record<string, unknown>, path: Record<string, string>) =>
  Object.fromEntries(Object.entries(sdk).filter(([k]) => !(k in path)));

describe("spec excerpts", () => {
  it("parse with the excerpt schema and cover the ten types", () => {
    const covered: string[] = [];
    for (const name of EXCERPT_FILES) {
      const raw = JSON.parse(readFileSync(new URL(name, SPEC_DIR), "utf8"));
      const parsed = ExcerptFileSchema.parse(raw);
      expect(name).toBe(`${parsed.provider}-${parsed.apiVersion}.json`);
      expect(parsed.source.repository).toBe("Azure/azure-rest-api-specs");
      for (const f of parsed.source.files) expect(f.commit, f.path).toMatch(/^[0-9a-f]{40}$/);
      covered.push(...Object.keys(parsed.resourceTypes));
    }
    expect(covered.sort()).toEqual(Object.values(ARM_TYPES).map((t) => t.armType).sort());
    expect(Object.keys(ARM_TYPES)).toHaveLength(10);
  });

  it("refuse a dangling $ref (the schema, not the checker, catches it)", () => {
    const raw = JSON.parse(readFileSync(new URL("network-2024-05-01.json", SPEC_DIR), "utf8"));
    delete raw.definitions.SubResource;
    expect(ExcerptFileSchema.safeParse(raw).success).toBe(false);
  });

  it("hide no flattened member behind an outer one", () => {
    for (const name of EXCERPT_FILES) {
      const defs = loadExcerpt(name).definitions;
      for (const key of Object.keys(defs)) expect(flattenClashes(defs, key), key).toEqual([]);
    }
  });
});

describe("ARM_TYPES", () => {
  it("give the api-versions and PUT paths of @pulumi/azure-native 3.28.0's defaults", () => {
    const byToken = (t: string) => armTypeForToken(t)!;
    expect(byToken("azure-native:resources:ResourceGroup")).toMatchObject({
      armType: "Microsoft.Resources/resourceGroups",
      apiVersion: "2024-03-01",
      pathTemplate: "/subscriptions/{subscriptionId}/resourcegroups/{resourceGroupName}",
      pathParams: ["resourceGroupName"],
      bodyDefinition: "ResourceGroup",
    });
    expect(byToken("azure-native:network:Subnet")).toMatchObject({
      apiVersion: "2024-05-01",
      pathParams: ["resourceGroupName", "virtualNetworkName", "subnetName"],
      queryParams: [],
      bodyDefinition: "Subnet",
      tracked: false,
    });
    expect(byToken("azure-native:network:VirtualNetworkPeering").queryParams).toEqual(["syncRemoteAddressSpace"]);
    expect(byToken("azure-native:network:PublicIPAddress").pathParams).toEqual(["resourceGroupName", "publicIpAddressName"]);
    expect(byToken("azure-native:compute:VirtualMachine")).toMatchObject({
      armType: "Microsoft.Compute/virtualMachines",
      apiVersion: "2024-11-01",
      pathTemplate: "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Compute/virtualMachines/{vmName}",
      pathParams: ["resourceGroupName", "vmName"],
    });
    for (const t of Object.values(ARM_TYPES)) {
      expect(t.apiVersion).toBe(t.armType.startsWith("Microsoft.Network") ? "2024-05-01" : t.armType.startsWith("Microsoft.Compute") ? "2024-11-01" : "2024-03-01");
      expect(armTypeInfo(t.armType.toUpperCase())?.token).toBe(t.token);
    }
    expect(armTypeForToken("azure-native:network:LoadBalancer")).toBeUndefined();
  });

  it("name path parameters and every input exactly as the installed SDK's Args do", () => {
    const require = createRequire(import.meta.url);
    const sdkRoot = dirname(require.resolve("@pulumi/azure-native/package.json"));
    const files: Record<string, string> = {
      "azure-native:resources:ResourceGroup": "resources/resourceGroup.d.ts",
      "azure-native:network:VirtualNetwork": "network/virtualNetwork.d.ts",
      "azure-native:network:Subnet": "network/subnet.d.ts",
      "azure-native:network:VirtualNetworkPeering": "network/virtualNetworkPeering.d.ts",
      "azure-native:network:PublicIPAddress": "network/publicIPAddress.d.ts",
      "azure-native:network:NetworkSecurityGroup": "network/networkSecurityGroup.d.ts",
      "azure-native:network:NetworkInterface": "network/networkInterface.d.ts",
      "azure-native:compute:VirtualMachine": "compute/virtualMachine.d.ts",
      "azure-native:compute:ProximityPlacementGroup": "compute/proximityPlacementGroup.d.ts",
      "azure-native:compute:AvailabilitySet": "compute/availabilitySet.d.ts",
    };
    for (const [token, file] of Object.entries(files)) {
      const text = readFileSync(join(sdkRoot, file), "utf8");
      const args = /export interface \w+Args \{([\s\S]*?)\n\}/.exec(text)?.[1] ?? "";
      const inputs = [...args.matchAll(/^ {4}(?:readonly )?(\w+)\??:/gm)].map((m) => m[1]!);
      expect(inputs.length, token).toBeGreaterThan(3);
      const info = armTypeForToken(token)!;
      for (const p of [...info.pathParams, ...info.queryParams]) expect(inputs, `${token} ${p}`).toContain(p);
      const view = sdkView(loadExcerpt(info.excerpt).definitions, info.bodyDefinition);
      for (const input of inputs) {
        if (info.pathParams.includes(input) || info.queryParams.includes(input)) continue;
        expect(view.has(input), `${token}: SDK input ${input} is no member of ${info.bodyDefinition}`).toBe(true);
      }
    }
  });
});

/**
 * The SDK's nested input types are shared by resources of different default api-versions, so
 * they can carry members of a newer version: SubnetArgs is also VirtualNetworkAppliance's, and
 * `serviceGateway` is not in Microsoft.Network 2024-05-01. ARM at 2024-05-01 would not take it.
 */
const NEWER_SDK_MEMBERS = new Set(["SubnetArgs.serviceGateway"]);

describe("nested SDK input types", () => {
  it("have no member the excerpt's flattened view lacks (IP configurations, rules, VM profiles…)", () => {
    const require = createRequire(import.meta.url);
    const input = readFileSync(join(dirname(require.resolve("@pulumi/azure-native/package.json")), "types/input.d.ts"), "utf8");
    const namespace = (ns: string) => {
      const start = input.indexOf(`export declare namespace ${ns} {`);
      const end = input.indexOf("\nexport declare namespace ", start + 1);
      expect(start, ns).toBeGreaterThanOrEqual(0);
      return input.slice(start, end);
    };
    const pairs: [string, string, string, string][] = [
      ["network", "NetworkInterfaceIPConfigurationArgs", "network-2024-05-01.json", "NetworkInterfaceIPConfiguration"],
      ["network", "SecurityRuleArgs", "network-2024-05-01.json", "SecurityRule"],
      ["network", "SubnetArgs", "network-2024-05-01.json", "Subnet"],
      ["network", "AddressSpaceArgs", "network-2024-05-01.json", "AddressSpace"],
      ["network", "IpamPoolPrefixAllocationArgs", "network-2024-05-01.json", "IpamPoolPrefixAllocation"],
      ["network", "PublicIPAddressSkuArgs", "network-2024-05-01.json", "PublicIPAddressSku"],
      ["compute", "HardwareProfileArgs", "compute-2024-11-01.json", "HardwareProfile"],
      ["compute", "StorageProfileArgs", "compute-2024-11-01.json", "StorageProfile"],
      ["compute", "OSDiskArgs", "compute-2024-11-01.json", "OSDisk"],
      ["compute", "ImageReferenceArgs", "compute-2024-11-01.json", "ImageReference"],
      ["compute", "OSProfileArgs", "compute-2024-11-01.json", "OSProfile"],
      ["compute", "LinuxConfigurationArgs", "compute-2024-11-01.json", "LinuxConfiguration"],
      ["compute", "NetworkProfileArgs", "compute-2024-11-01.json", "NetworkProfile"],
      ["compute", "NetworkInterfaceReferenceArgs", "compute-2024-11-01.json", "NetworkInterfaceReference"],
      ["compute", "VirtualMachineNetworkInterfaceConfigurationArgs", "compute-2024-11-01.json", "VirtualMachineNetworkInterfaceConfiguration"],
      ["compute", "ProximityPlacementGroupPropertiesIntentArgs", "compute-2024-11-01.json", "ProximityPlacementGroupProperties.intent"],
    ];
    const texts = { network: namespace("network"), compute: namespace("compute") } as Record<string, string>;
    for (const [ns, iface, excerpt, def] of pairs) {
      const body = new RegExp(`\\n    interface ${iface} \\{([\\s\\S]*?)\\n    \\}`).exec(texts[ns]!)?.[1];
      expect(body, iface).toBeDefined();
      const members = [...body!.matchAll(/^ {8}(\w+)\??:/gm)].map((m) => m[1]!);
      expect(members.length, iface).toBeGreaterThan(0);
      const view = sdkView(loadExcerpt(excerpt as (typeof EXCERPT_FILES)[number]).definitions, def);
      for (const m of members) {
        if (NEWER_SDK_MEMBERS.has(`${iface}.${m}`)) expect(view.has(m), `${iface}.${m} is in the spec now: drop it from NEWER_SDK_MEMBERS`).toBe(false);
        else expect(view.has(m), `${iface}.${m} is no member of ${def}`).toBe(true);
      }
    }
  });
});

describe("sdkToArm / armToSdk", () => {
  for (const c of CASES) {
    it(`${c.token}: nests flattened inputs under properties and takes the path out`, () => {
      const req = sdkToArm(c.token, structuredClone(c.sdk));
      expect(req.pathParams).toEqual(c.path);
      expect(req.queryParams).toEqual({});
      expect(req.body).toEqual(c.arm);
      expect(armToSdk(c.token, req.body)).toEqual(withoutPath(c.sdk, c.path));
      expect(validateArmBody(c.token, req.body)).toEqual([]);
    });
  }

  it("leave the SDK's input object untouched", () => {
    const c = caseOf("azure-native:network:NetworkInterface");
    const before = structuredClone(c.sdk);
    sdkToArm(c.token, c.sdk);
    expect(c.sdk).toEqual(before);
  });

  it("send a peering's syncRemoteAddressSpace as a query parameter, not in the body", () => {
    const c = caseOf("azure-native:network:VirtualNetworkPeering");
    const req = sdkToArm(c.token, { ...c.sdk, syncRemoteAddressSpace: "true" });
    expect(req.queryParams).toEqual({ syncRemoteAddressSpace: "true" });
    expect(req.body).toEqual(c.arm);
  });

  it("flatten a non-`properties` container too (IpamPoolPrefixAllocation.pool → id)", () => {
    const body = sdkToArm("azure-native:network:VirtualNetwork", {
      location: "uksouth",
      addressSpace: { ipamPoolPrefixAllocations: [{ id: "/ipamPools/p1", numberOfIpAddresses: "256" }] },
    }).body;
    expect(body).toEqual({
      location: "uksouth",
      properties: { addressSpace: { ipamPoolPrefixAllocations: [{ pool: { id: "/ipamPools/p1" }, numberOfIpAddresses: "256" }] } },
    });
  });

  it("nest recursively through referenced models (VNet → subnets[i] → networkSecurityGroup → securityRules[j])", () => {
    const body = sdkToArm("azure-native:network:VirtualNetwork", {
      location: "uksouth",
      subnets: [{ name: "d0", addressPrefix: "10.10.0.0/24", networkSecurityGroup: { location: "uksouth", securityRules: [{ name: "r", priority: 100, access: "Deny", direction: "Inbound", protocol: "*" }] } }],
    }).body;
    expect(body).toEqual({
      location: "uksouth",
      properties: {
        subnets: [
          {
            name: "d0",
            properties: {
              addressPrefix: "10.10.0.0/24",
              networkSecurityGroup: {
                location: "uksouth",
                properties: { securityRules: [{ name: "r", properties: { priority: 100, access: "Deny", direction: "Inbound", protocol: "*" } }] },
              },
            },
          },
        ],
      },
    });
    expect(validateArmBody("azure-native:network:VirtualNetwork", body)).toEqual([]);
  });

  it("pass unknown inputs through at the level they were given", () => {
    const c = caseOf("azure-native:network:NetworkInterface");
    const sdk: Record<string, unknown> = { ...c.sdk, enableAcceleratedNetworkin: true };
    (sdk.ipConfigurations as Record<string, unknown>[])[0]!.privateIpAddres = "10.10.0.9";
    const body = sdkToArm(c.token, sdk).body;
    expect(body.enableAcceleratedNetworkin).toBe(true);
    const ipc = ((body.properties as Record<string, unknown>).ipConfigurations as Record<string, unknown>[])[0]!;
    expect(ipc.privateIpAddres).toBe("10.10.0.9");
    expect((ipc.properties as Record<string, unknown>).privateIPAddress).toBe("10.10.0.4");
  });

  it("turn ARM responses into the outputs Pulumi reads (PublicIPAddress ipAddress, NIC private address)", () => {
    const pip = armToSdk("azure-native:network:PublicIPAddress", {
      id: `${NET}/publicIPAddresses/client-pip`,
      name: "client-pip",
      type: "Microsoft.Network/publicIPAddresses",
      location: "uksouth",
      etag: 'W/"1"',
      sku: { name: "Standard", tier: "Regional" },
      zones: ["1"],
      properties: { provisioningState: "Succeeded", resourceGuid: "g", ipAddress: "198.51.100.10", publicIPAllocationMethod: "Static", idleTimeoutInMinutes: 4 },
    });
    expect(pip).toMatchObject({ id: `${NET}/publicIPAddresses/client-pip`, name: "client-pip", ipAddress: "198.51.100.10", provisioningState: "Succeeded", idleTimeoutInMinutes: 4 });
    expect(pip).not.toHaveProperty("properties");

    const nic = armToSdk("azure-native:network:NetworkInterface", {
      location: "uksouth",
      properties: {
        macAddress: "00-0D-3A-00-00-01",
        ipConfigurations: [{ name: "ipconfig1", id: `${NET}/networkInterfaces/client-nic/ipConfigurations/ipconfig1`, properties: { privateIPAddress: "10.10.0.4", provisioningState: "Succeeded" } }],
      },
    });
    const ipConfigurations = nic.ipConfigurations as Record<string, unknown>[];
    expect(ipConfigurations[0]).toEqual({ name: "ipconfig1", id: `${NET}/networkInterfaces/client-nic/ipConfigurations/ipconfig1`, privateIPAddress: "10.10.0.4", provisioningState: "Succeeded" });
    expect(nic.macAddress).toBe("00-0D-3A-00-00-01");
  });

  it("refuse a token it does not know", () => {
    expect(() => sdkToArm("azure-native:network:LoadBalancer", {})).toThrow(/unknown resource type token/);
    expect(() => validateArmBody("azure-native:storage:StorageAccount", {})).toThrow(/unknown resource type token/);
  });
});

describe("validateArmBody", () => {
  it("reports a misspelled member as ARM does, on the object that lacks it", () => {
    const c = caseOf("azure-native:network:NetworkInterface");
    const issue = only(validateArmBody(c.token, sdkToArm(c.token, { ...c.sdk, enableAcceleratedNetworkin: true }).body));
    expect(issue).toEqual({
      path: "enableAcceleratedNetworkin",
      code: "InvalidRequestContent",
      message:
        "The request content was invalid and could not be deserialized: 'Could not find member 'enableAcceleratedNetworkin' on object of type 'NetworkInterface'. Path 'enableAcceleratedNetworkin'.'.",
    });
    const body = armOf(c.token);
    ((body.properties as Record<string, unknown>).ipConfigurations as Record<string, Record<string, unknown>>[])[0]!.properties!.enableAcceleratedNetworking = true;
    const nested = only(validateArmBody(c.token, body));
    expect(nested.path).toBe("properties.ipConfigurations[0].properties.enableAcceleratedNetworking");
    expect(nested.message).toContain("on object of type 'NetworkInterfaceIPConfigurationPropertiesFormat'");
  });

  it("reports a member unknown deep in a VM body with its full path", () => {
    const body = armOf("azure-native:compute:VirtualMachine");
    (((body.properties as Record<string, unknown>).hardwareProfile) as Record<string, unknown>).vmSise = "Standard_D2s_v5";
    const issue = only(validateArmBody("azure-native:compute:VirtualMachine", body));
    expect(issue.path).toBe("properties.hardwareProfile.vmSise");
    expect(issue.message).toContain("Could not find member 'vmSise' on object of type 'HardwareProfile'");
  });

  it("reports an enum value outside the list (modelAsString) as InvalidParameter", () => {
    const c = caseOf("azure-native:network:PublicIPAddress");
    const issue = only(validateArmBody(c.token, sdkToArm(c.token, { ...c.sdk, publicIPAllocationMethod: "Sometimes" }).body));
    expect(issue.path).toBe("properties.publicIPAllocationMethod");
    expect(issue.code).toBe("InvalidParameter");
    expect(issue.message).toContain("'Sometimes'");
    expect(issue.message).toContain("Static, Dynamic");
  });

  it("compares enum values case-insensitively, as the RPs do", () => {
    const c = caseOf("azure-native:network:PublicIPAddress");
    expect(validateArmBody(c.token, sdkToArm(c.token, { ...c.sdk, publicIPAllocationMethod: "static", sku: { name: "standard" } }).body)).toEqual([]);
  });

  it("reports a value outside a closed enum (modelAsString: false) as a deserialization failure", () => {
    const c = caseOf("azure-native:compute:VirtualMachine");
    const sdk = c.sdk as { storageProfile: { osDisk: Record<string, unknown> } };
    sdk.storageProfile.osDisk.caching = "Sometimes";
    const issue = only(validateArmBody(c.token, sdkToArm(c.token, sdk).body));
    expect(issue).toMatchObject({ path: "properties.storageProfile.osDisk.caching", code: "InvalidRequestContent" });
  });

  it("accepts any VM size: the spec's size enum is deprecated and lists old sizes only", () => {
    const c = caseOf("azure-native:compute:VirtualMachine");
    for (const vmSize of ["Standard_D2s_v5", "Standard_D4as_v6", "Standard_DS13_v2"]) {
      expect(validateArmBody(c.token, sdkToArm(c.token, { ...c.sdk, hardwareProfile: { vmSize } }).body), vmSize).toEqual([]);
    }
  });

  it("reports a security rule without protocol (required by the spec) as InvalidParameter", () => {
    const c = caseOf("azure-native:network:NetworkSecurityGroup");
    delete (c.sdk.securityRules as Record<string, unknown>[])[1]!.protocol;
    const issue = only(validateArmBody(c.token, sdkToArm(c.token, c.sdk).body));
    expect(issue).toEqual({
      path: "properties.securityRules[1].properties.protocol",
      code: "InvalidParameter",
      message: "Required parameter 'securityRules[1].properties.protocol' is missing (null).",
    });
  });

  it("reports a missing OS disk createOption the way the compute RP words it", () => {
    const c = caseOf("azure-native:compute:VirtualMachine");
    delete (c.sdk as { storageProfile: { osDisk: Record<string, unknown> } }).storageProfile.osDisk.createOption;
    expect(only(validateArmBody(c.token, sdkToArm(c.token, c.sdk).body))).toEqual({
      path: "properties.storageProfile.osDisk.createOption",
      code: "InvalidParameter",
      message: "Required parameter 'storageProfile.osDisk.createOption' is missing (null).",
    });
  });

  it("reports a missing location as LocationRequired, also where the network spec does not mark it required", () => {
    for (const token of ["azure-native:resources:ResourceGroup", "azure-native:network:VirtualNetwork", "azure-native:compute:VirtualMachine"]) {
      const body = armOf(token);
      delete body.location;
      expect(only(validateArmBody(token, body)), token).toEqual({
        path: "location",
        code: "LocationRequired",
        message: "The location property is required for this definition.",
      });
    }
    // A subnet is a child resource: no location, and sending one is an unknown member.
    expect(validateArmBody("azure-native:network:Subnet", armOf("azure-native:network:Subnet"))).toEqual([]);
    const withLocation = only(validateArmBody("azure-native:network:Subnet", { ...armOf("azure-native:network:Subnet"), location: "uksouth" }));
    expect(withLocation.message).toContain("Could not find member 'location' on object of type 'Subnet'");
  });

  it("reports a wrong JSON type (a priority as a string)", () => {
    const c = caseOf("azure-native:network:NetworkSecurityGroup");
    (c.sdk.securityRules as Record<string, unknown>[])[0]!.priority = "100";
    const issue = only(validateArmBody(c.token, sdkToArm(c.token, c.sdk).body));
    expect(issue.path).toBe("properties.securityRules[0].properties.priority");
    expect(issue.code).toBe("InvalidRequestContent");
    expect(issue.message).toContain("to type 'Int32'");
  });

  it("reports an object where a string goes and a scalar where an array goes", () => {
    const c = caseOf("azure-native:network:VirtualNetwork");
    const issues = validateArmBody(c.token, sdkToArm(c.token, { ...c.sdk, location: { name: "uksouth" }, addressSpace: { addressPrefixes: "10.10.0.0/16" } }).body);
    expect(issues.map((i) => [i.path, i.code])).toEqual([
      ["location", "InvalidRequestContent"],
      ["properties.addressSpace.addressPrefixes", "InvalidRequestContent"],
    ]);
  });

  it("ignores read-only members a client sends back (etag, provisioningState, a NIC's macAddress)", () => {
    const body = armOf("azure-native:network:NetworkInterface");
    const props = body.properties as Record<string, unknown>;
    Object.assign(body, { etag: 'W/"3"', id: `${NET}/networkInterfaces/client-nic` });
    Object.assign(props, { provisioningState: "Succeeded", macAddress: "00-0D-3A-00-00-01", virtualMachine: { id: "/x", whatever: { deep: 1 } } });
    expect(validateArmBody("azure-native:network:NetworkInterface", body)).toEqual([]);
  });

  it("accepts any tag name and checks tag values are strings", () => {
    const c = caseOf("azure-native:resources:ResourceGroup");
    expect(validateArmBody(c.token, { location: "uksouth", tags: { "any key/with:chars": "v", "": "" } })).toEqual([]);
    const issue = only(validateArmBody(c.token, { location: "uksouth", tags: { count: 3 } }));
    expect(issue).toMatchObject({ path: "tags.count", code: "InvalidRequestContent" });
  });

  it("checks by ARM type as well as by token", () => {
    const body = armOf("azure-native:network:PublicIPAddress");
    expect(validateArmBodyForArmType("microsoft.network/publicipaddresses", body)).toEqual([]);
    expect(validateArmBodyForArmType("Microsoft.Network/publicIPAddresses", { ...body, foo: 1 })).toHaveLength(1);
  });

  it("refuses a body that is not an object", () => {
    expect(only(validateArmBody("azure-native:network:Subnet", [1, 2]))).toMatchObject({ path: "", code: "InvalidRequestContent" });
  });
});
