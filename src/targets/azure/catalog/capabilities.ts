import type { Zone } from "../../../dsl/placement.ts";

/**
 * What Microsoft's documentation says, as data, each entry with where it comes from: the regions
 * latlab knows (zones), and the VM sizes the seeds used, from their size pages (vCPUs, memory,
 * bandwidth, Accelerated Networking "Required"/"Supported"). The sizes here gate nothing: the size
 * catalog is Azure's own SKU data (sizes/sizeFacts.ts: the live Resource SKUs API, else the shipped
 * snapshot); these entries fill in what that data lacks offline (the bandwidth the local target
 * shapes to, "Required", the vCPUs of sizes whose names predate the naming convention).
 *
 * These tables are a reading of Microsoft's documentation (the MicrosoftDocs/azure-docs
 * repository, rendered on learn.microsoft.com) at the commit noted in each source; Azure
 * changes, `az vm list-skus --location <region>` is the live truth.
 */

export interface Source {
  title: string;
  url: string;
  /** What the source says, in short, for the reader who does not open it. */
  says?: string;
}

/** Accelerated Networking as Microsoft's size pages state it. */
export type AccelNetSupport = "required" | "supported" | "unsupported";

export interface SizeCapability {
  vcpus: number;
  memoryGiB: number;
  acceleratedNetworking: AccelNetSupport;
  /** Expected network bandwidth (Mbps) as documented; null where Microsoft publishes none (B-series). */
  bandwidthMbps: number | null;
  /** Hyper-V generations the size boots: decides the Ubuntu image (gen2 "server" or "server-gen1"). */
  generations: readonly (1 | 2)[];
  premiumStorage: boolean;
  /**
   * The vCPU quota the size counts against: `name.value` in the Compute usages API
   * (`az vm list-usage`), the same string as `family` in the Resource SKUs API. Sources:
   * microsoft/aspire src/Aspire.Hosting.Azure.Kubernetes/AksNodeVmSizes.cs @ 5bd693a, as rendered
   * on aspire.dev ("VM sizes in the standardDSv5Family": D2s_v5…; likewise standardDSv4Family,
   * standardDv5Family, standardBSFamily, standardDv2Family with D2_v2…D5_v2 and D11_v2…D14_v2,
   * standardDSv2Family with DS11_v2…DS14_v2), and the series table in openshift/installer
   * docs/user/azure/tested_instance_types_x86_64.md @ c38521c ("BS-series | standardBSFamily",
   * "DSv2-series | standardDSv2Family", …). The 1-vCPU sizes (B1ls, B1s, B1ms, D1_v2) follow
   * their series. Azure is the live truth: quota.ts checks against the `family` the SKUs API returns.
   */
  quotaFamily: string;
  source: Source;
}

export interface RegionCapability {
  displayName: string;
  /** Availability zones; empty for a region without zones (UK West). */
  zones: readonly Zone[];
  source: Source;
}

const SIZES_FOOTER = "Feature support list and the Basics/Network tabs of the size page";

const BV1: Source = {
  title: "Bv1 sizes series (Microsoft Learn)",
  url: "https://learn.microsoft.com/azure/virtual-machines/sizes/general-purpose/bv1-series",
  says:
    "Accelerated Networking is only supported for Standard_B12ms, Standard_B16ms and Standard_B20ms; no network bandwidth is published for B-series (MicrosoftDocs/azure-docs articles/virtual-machines/sizes/general-purpose/bv1-series.md @ 9130310)",
};
const DSV4: Source = {
  title: "Dsv4 sizes series (Microsoft Learn)",
  url: "https://learn.microsoft.com/azure/virtual-machines/sizes/general-purpose/dsv4-series",
  says: `Accelerated Networking: Supported; generation 1 and 2; ${SIZES_FOOTER} (articles/virtual-machines/sizes/general-purpose/dsv4-series.md @ 624c47a). Seed 001 ran D2s_v4 with Accelerated Networking enabled.`,
};
const DSV5: Source = {
  title: "Dsv5 sizes series (Microsoft Learn)",
  url: "https://learn.microsoft.com/azure/virtual-machines/sizes/general-purpose/dsv5-series",
  says: `Accelerated Networking: Required ("required and turned on by default on all Dsv5 virtual machines" in the older dv5-dsv5-series page); generation 1 and 2; ${SIZES_FOOTER} (articles/virtual-machines/sizes/general-purpose/dsv5-series.md @ aadaee5)`,
};
const BSV2: Source = {
  title: "Bsv2-series sizes (Microsoft Learn)",
  url: "https://learn.microsoft.com/azure/virtual-machines/sizes/general-purpose/bsv2-series",
  says: `Accelerated Networking: Supported; Generation 1 and 2 VMs: Supported; Max Network Bandwidth 6,250 Mbps for every size; burstable (base CPU 20-40 %, initial credits 60-960) (MicrosoftDocs/azure-compute-docs articles/virtual-machines/sizes/general-purpose/bsv2-series.md @ 2072bfd, ms.date 03/10/2026)`,
};
const DV5: Source = {
  title: "Dv5 and Dsv5-series (Microsoft Learn)",
  url: "https://learn.microsoft.com/azure/virtual-machines/dv5-dsv5-series",
  says: "Dv5: Accelerated Networking Required; no Premium Storage (articles/virtual-machines/dv5-dsv5-series.md @ 1a0fe16)",
};
const DV2: Source = {
  title: "Dv2 sizes series (Microsoft Learn)",
  url: "https://learn.microsoft.com/azure/virtual-machines/sizes/general-purpose/dv2-series",
  says: `Accelerated Networking: Supported; VM Generation Support: Generation 1 only; Premium Storage not supported; ${SIZES_FOOTER} (articles/virtual-machines/sizes/general-purpose/dv2-series.md @ 684e369)`,
};
const DSV2_MEMORY: Source = {
  title: "Memory optimized Dv2 and Dsv2-series (Microsoft Learn)",
  url: "https://learn.microsoft.com/azure/virtual-machines/sizes/memory-optimized/dv2-dsv2-series-memory",
  says: "DSv2 11-15: Accelerated Networking Supported, generation 1 and 2, Premium Storage; Dv2 11-15: generation 1 only (articles/virtual-machines/sizes/memory-optimized/dv2-dsv2-series-memory.md @ 61d5956)",
};
const ACCELNET_OVERVIEW: Source = {
  title: "Accelerated Networking overview (Microsoft Learn)",
  url: "https://learn.microsoft.com/azure/virtual-network/accelerated-networking-overview",
  says: "Most general-purpose and compute-optimized sizes with two or more vCPUs support Accelerated Networking; on hyper-threaded instances, four or more (articles/virtual-network/accelerated-networking-overview.md @ 0375bb8)",
};

type SizeRow = [name: string, vcpus: number, memoryGiB: number, bandwidthMbps: number | null];

function series(rows: SizeRow[], common: Omit<SizeCapability, "vcpus" | "memoryGiB" | "bandwidthMbps" | "acceleratedNetworking">, accel: (name: string, vcpus: number) => AccelNetSupport) {
  return Object.fromEntries(
    rows.map(([name, vcpus, memoryGiB, bandwidthMbps]) => [name, { ...common, vcpus, memoryGiB, bandwidthMbps, acceleratedNetworking: accel(name, vcpus) }]),
  ) as Record<string, SizeCapability>;
}

/** VM sizes latlab knows, by ARM name. */
export const VM_SIZES: Readonly<Record<string, SizeCapability>> = {
  ...series(
    [
      ["Standard_B1ls", 1, 0.5, null],
      ["Standard_B1s", 1, 1, null],
      ["Standard_B1ms", 1, 2, null],
      ["Standard_B2s", 2, 4, null],
      ["Standard_B2ms", 2, 8, null],
      ["Standard_B4ms", 4, 16, null],
      ["Standard_B8ms", 8, 32, null],
      ["Standard_B12ms", 12, 48, null],
      ["Standard_B16ms", 16, 64, null],
      ["Standard_B20ms", 20, 80, null],
    ],
    { generations: [1, 2], premiumStorage: true, quotaFamily: "standardBSFamily", source: BV1 },
    (name) => (["Standard_B12ms", "Standard_B16ms", "Standard_B20ms"].includes(name) ? "supported" : "unsupported"),
  ),
  ...series(
    [
      ["Standard_B2ts_v2", 2, 1, 6250],
      ["Standard_B2ls_v2", 2, 4, 6250],
      ["Standard_B2s_v2", 2, 8, 6250],
      ["Standard_B4ls_v2", 4, 8, 6250],
      ["Standard_B4s_v2", 4, 16, 6250],
      ["Standard_B8ls_v2", 8, 16, 6250],
      ["Standard_B8s_v2", 8, 32, 6250],
      ["Standard_B16ls_v2", 16, 32, 6250],
      ["Standard_B16s_v2", 16, 64, 6250],
      ["Standard_B32ls_v2", 32, 64, 6250],
      ["Standard_B32s_v2", 32, 128, 6250],
    ],
    // Family: the name.value Azure's SKU data gives these sizes (sizes/skus.snapshot.json names).
    { generations: [1, 2], premiumStorage: true, quotaFamily: "standardBsv2Family", source: BSV2 },
    () => "supported",
  ),
  ...series(
    [
      ["Standard_D2s_v4", 2, 8, 5000],
      ["Standard_D4s_v4", 4, 16, 10000],
      ["Standard_D8s_v4", 8, 32, 12500],
      ["Standard_D16s_v4", 16, 64, 12500],
      ["Standard_D32s_v4", 32, 128, 16000],
      ["Standard_D48s_v4", 48, 192, 24000],
      ["Standard_D64s_v4", 64, 256, 30000],
    ],
    { generations: [1, 2], premiumStorage: true, quotaFamily: "standardDSv4Family", source: DSV4 },
    () => "supported",
  ),
  ...series(
    [
      ["Standard_D2s_v5", 2, 8, 12500],
      ["Standard_D4s_v5", 4, 16, 12500],
      ["Standard_D8s_v5", 8, 32, 12500],
      ["Standard_D16s_v5", 16, 64, 12500],
      ["Standard_D32s_v5", 32, 128, 16000],
      ["Standard_D48s_v5", 48, 192, 24000],
      ["Standard_D64s_v5", 64, 256, 30000],
      ["Standard_D96s_v5", 96, 384, 35000],
    ],
    { generations: [1, 2], premiumStorage: true, quotaFamily: "standardDSv5Family", source: DSV5 },
    () => "required",
  ),
  ...series(
    [
      ["Standard_D2_v5", 2, 8, 12500],
      ["Standard_D4_v5", 4, 16, 12500],
      ["Standard_D8_v5", 8, 32, 12500],
      ["Standard_D16_v5", 16, 64, 12500],
    ],
    { generations: [1, 2], premiumStorage: false, quotaFamily: "standardDv5Family", source: DV5 },
    () => "required",
  ),
  ...series(
    [
      ["Standard_D1_v2", 1, 3.5, 750],
      ["Standard_D2_v2", 2, 7, 1500],
      ["Standard_D3_v2", 4, 14, 3000],
      ["Standard_D4_v2", 8, 28, 6000],
      ["Standard_D5_v2", 16, 56, 12000],
    ],
    { generations: [1], premiumStorage: false, quotaFamily: "standardDv2Family", source: DV2 },
    // Dv2 is not hyper-threaded: two or more vCPUs (accelerated-networking overview).
    (_name, vcpus) => (vcpus >= 2 ? "supported" : "unsupported"),
  ),
  ...series(
    [
      ["Standard_D11_v2", 2, 14, 1500],
      ["Standard_D12_v2", 4, 28, 3000],
      ["Standard_D13_v2", 8, 56, 6000],
      ["Standard_D14_v2", 16, 112, 12000],
    ],
    { generations: [1], premiumStorage: false, quotaFamily: "standardDv2Family", source: DSV2_MEMORY },
    () => "supported",
  ),
  ...series(
    [
      ["Standard_DS11_v2", 2, 14, 1500],
      ["Standard_DS12_v2", 4, 28, 3000],
      ["Standard_DS13_v2", 8, 56, 6000],
      ["Standard_DS14_v2", 16, 112, 12000],
    ],
    { generations: [1, 2], premiumStorage: true, quotaFamily: "standardDSv2Family", source: DSV2_MEMORY },
    () => "supported",
  ),
};

/** The general rule the per-size entries follow, for messages. */
export const ACCELNET_RULE: Source = ACCELNET_OVERVIEW;

const REGIONS_LIST: Source = {
  title: "Azure regions list (Microsoft Learn)",
  url: "https://learn.microsoft.com/azure/reliability/regions-list",
  says: "Availability zone support per region (articles/reliability/regions-list.md @ 04495fc, ms.date 03/21/2025); a region with zones has three",
};

const ZONAL: readonly Zone[] = ["1", "2", "3"];
const region = (displayName: string, zonal: boolean): RegionCapability => ({ displayName, zones: zonal ? ZONAL : [], source: REGIONS_LIST });

/** Regions latlab knows, by ARM name. */
export const REGIONS: Readonly<Record<string, RegionCapability>> = {
  uksouth: region("UK South", true),
  ukwest: region("UK West", false),
  eastus: region("East US", true),
  eastus2: region("East US 2", true),
  centralus: region("Central US", true),
  southcentralus: region("South Central US", true),
  northcentralus: region("North Central US", false),
  westcentralus: region("West Central US", false),
  westus: region("West US", false),
  westus2: region("West US 2", true),
  westus3: region("West US 3", true),
  northeurope: region("North Europe", true),
  westeurope: region("West Europe", true),
  francecentral: region("France Central", true),
  germanywestcentral: region("Germany West Central", true),
  swedencentral: region("Sweden Central", true),
  switzerlandnorth: region("Switzerland North", true),
  norwayeast: region("Norway East", true),
  polandcentral: region("Poland Central", true),
  italynorth: region("Italy North", true),
  canadacentral: region("Canada Central", true),
  canadaeast: region("Canada East", false),
  brazilsouth: region("Brazil South", true),
  australiaeast: region("Australia East", true),
  australiasoutheast: region("Australia Southeast", false),
  southeastasia: region("Southeast Asia", true),
  eastasia: region("East Asia", true),
  japaneast: region("Japan East", true),
  japanwest: region("Japan West", true),
  koreacentral: region("Korea Central", true),
  centralindia: region("Central India", true),
  southindia: region("South India", false),
  southafricanorth: region("South Africa North", true),
  uaenorth: region("UAE North", true),
};

export const sizeCapability = (size: string): SizeCapability | undefined => (Object.hasOwn(VM_SIZES, size) ? VM_SIZES[size] : undefined);
export const regionCapability = (name: string): RegionCapability | undefined => (Object.hasOwn(REGIONS, name) ? REGIONS[name] : undefined);

/** Where the Ubuntu 24.04 image's SKU names come from (Canonical's Azure Marketplace offer). */
export const UBUNTU_2404 = {
  publisher: "Canonical",
  offer: "ubuntu-24_04-lts",
  /** Generation 2 image; "server-gen1" for sizes that boot generation 1 only (Dv2): see sizes/sizeFacts.ts vmBoot. */
  skuGen2: "server",
  skuGen1: "server-gen1",
} as const;

/**
 * Admin user names Azure refuses. Source: the OSProfile.adminUsername reference ("Disallowed
 * values: …; Minimum-length (Linux): 1 character; Max-length (Linux): 64 characters"),
 * https://learn.microsoft.com/javascript/api/@azure/arm-compute/osprofile
 */
export const RESERVED_ADMIN_NAMES: readonly string[] = [
  "administrator", "admin", "user", "user1", "test", "user2", "test1", "user3", "admin1", "1", "123", "a",
  "actuser", "adm", "admin2", "aspnet", "backup", "console", "david", "guest", "john", "owner", "root",
  "server", "sql", "support", "support_388945a0", "sys", "test2", "test3", "user4", "user5",
];
export const ADMIN_NAME_MAX_LINUX = 64;
