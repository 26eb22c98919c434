import type { DefinitionIssue } from "../../../dsl/errors.ts";
import type { Plan } from "../../../plan/types.ts";
import { planRegions } from "./network.ts";
import { throwawayRsaPublicKey } from "../access/hostKeys.ts";
import { generateHostKey } from "../access/keys.ts";
import { deployCostGate, estimateCost, fetchLivePrices, loadPriceSnapshot, mergeSnapshots, type CostEstimate, type FetchLike, type PriceSnapshot } from "../catalog/prices.ts";
import { deploymentDemands, profileLimits, vcpuNeeds, type RegionNeed } from "../catalog/quota.ts";
import { NEW_SUBSCRIPTION_PROFILE, type SubscriptionProfile } from "../catalog/subscriptionProfile.ts";
import { planWaves, WaveRefusal, wavePlan, type WavePlan } from "../../../plan/waves.ts";
import { AzureOutputsSchema, hostName, type AzureOutputs, type AzureSettings } from "./types.ts";
import { azureWarnings, expectedRun, recommendedExpiresAt, worstCaseRun, type WorstCase } from "../catalog/validateAzure.ts";

/**
 * What the Azure program would create, found by running it under Pulumi's mocks: no
 * credentials, no network, no Pulumi CLI. Every resource with the inputs that matter.
 * Secrets (the cloud-init customData with the host's private key) are never copied out.
 */

export interface ListedResource {
  /** Pulumi type token, e.g. "azure-native:compute:VirtualMachine". */
  type: string;
  /** Azure name (for a subnet or a peering: the name inside its VNet). */
  name: string;
  location?: string;
  /** VM size (VMs only): what the cost estimate reads. */
  size?: string;
  /** The inputs that matter, per type (see summarize()). */
  inputs: Record<string, unknown>;
}

export interface AzureListing {
  resources: ListedResource[];
  outputs: AzureOutputs;
}

const SECRET_SIG = "4dabf18193072939515e22adb298388d";
const MOCK_SUBSCRIPTION = "00000000-0000-0000-0000-000000000000";

/** Pulumi wraps secret inputs as {<sig>: <secret sig>, value}; the listing sees through it. */
function unwrap(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(unwrap);
  if (value && typeof value === "object") {
    const o = value as Record<string, unknown>;
    if (SECRET_SIG in o && "value" in o) return unwrap(o.value);
    return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, unwrap(v)]));
  }
  return value;
}

/** The input holding each type's Azure name. */
const NAME_INPUT: Record<string, string> = {
  "azure-native:resources:ResourceGroup": "resourceGroupName",
  "azure-native:network:VirtualNetwork": "virtualNetworkName",
  "azure-native:network:Subnet": "subnetName",
  "azure-native:network:VirtualNetworkPeering": "virtualNetworkPeeringName",
  "azure-native:network:NetworkSecurityGroup": "networkSecurityGroupName",
  "azure-native:network:PublicIPAddress": "publicIpAddressName",
  "azure-native:network:NetworkInterface": "networkInterfaceName",
  "azure-native:compute:ProximityPlacementGroup": "proximityPlacementGroupName",
  "azure-native:compute:AvailabilitySet": "availabilitySetName",
  "azure-native:compute:VirtualMachine": "vmName",
};

const ARM_TYPE: Record<string, string> = {
  "azure-native:network:VirtualNetwork": "Microsoft.Network/virtualNetworks",
  "azure-native:network:NetworkSecurityGroup": "Microsoft.Network/networkSecurityGroups",
  "azure-native:network:PublicIPAddress": "Microsoft.Network/publicIPAddresses",
  "azure-native:network:NetworkInterface": "Microsoft.Network/networkInterfaces",
  "azure-native:compute:ProximityPlacementGroup": "Microsoft.Compute/proximityPlacementGroups",
  "azure-native:compute:AvailabilitySet": "Microsoft.Compute/availabilitySets",
  "azure-native:compute:VirtualMachine": "Microsoft.Compute/virtualMachines",
};

function azureName(type: string, logical: string, inputs: Record<string, unknown>): string {
  const key = NAME_INPUT[type];
  const value = key ? inputs[key] : undefined;
  return typeof value === "string" ? value : logical;
}

function mockId(type: string, name: string, inputs: Record<string, unknown>): string {
  const rg = typeof inputs.resourceGroupName === "string" ? inputs.resourceGroupName : name;
  const base = `/subscriptions/${MOCK_SUBSCRIPTION}/resourceGroups/${rg}`;
  if (type === "azure-native:resources:ResourceGroup") return base;
  if (type === "azure-native:network:Subnet") return `${base}/providers/Microsoft.Network/virtualNetworks/${String(inputs.virtualNetworkName)}/subnets/${name}`;
  if (type === "azure-native:network:VirtualNetworkPeering") return `${base}/providers/Microsoft.Network/virtualNetworks/${String(inputs.virtualNetworkName)}/virtualNetworkPeerings/${name}`;
  return `${base}/providers/${ARM_TYPE[type] ?? type}/${name}`;
}

const lastSegment = (id: unknown) => (typeof id === "string" ? id.split("/").pop() : undefined);
const refName = (ref: unknown) => lastSegment((ref as { id?: unknown } | undefined)?.id);

interface RawRule {
  name?: string;
  priority?: number;
  access?: string;
  protocol?: string;
  sourceAddressPrefix?: string;
  sourceAddressPrefixes?: string[];
  destinationPortRange?: string;
  destinationAddressPrefix?: string;
  description?: string;
}

/** The inputs that matter for each type. */
function summarize(type: string, i: Record<string, unknown>): Record<string, unknown> {
  const tags = i.tags as Record<string, string> | undefined;
  switch (type) {
    case "azure-native:resources:ResourceGroup":
      return { tags };
    case "azure-native:network:VirtualNetwork":
      return { addressPrefixes: (i.addressSpace as { addressPrefixes?: string[] } | undefined)?.addressPrefixes, tags };
    case "azure-native:network:Subnet":
      return { virtualNetwork: i.virtualNetworkName, addressPrefix: i.addressPrefix };
    case "azure-native:network:VirtualNetworkPeering":
      return { virtualNetwork: i.virtualNetworkName, remoteVirtualNetwork: refName(i.remoteVirtualNetwork), allowVirtualNetworkAccess: i.allowVirtualNetworkAccess };
    case "azure-native:network:NetworkSecurityGroup":
      return {
        securityRules: ((i.securityRules as RawRule[] | undefined) ?? []).map((r) => ({
          name: r.name,
          priority: r.priority,
          access: r.access,
          protocol: r.protocol,
          sources: r.sourceAddressPrefixes ?? (r.sourceAddressPrefix !== undefined ? [r.sourceAddressPrefix] : []),
          destinationPort: r.destinationPortRange,
          destination: r.destinationAddressPrefix,
          why: r.description,
        })),
        tags,
      };
    case "azure-native:network:PublicIPAddress":
      return { sku: (i.sku as { name?: string } | undefined)?.name, allocation: i.publicIPAllocationMethod, zones: i.zones ?? null, tags };
    case "azure-native:network:NetworkInterface": {
      const ip = (i.ipConfigurations as Record<string, unknown>[] | undefined)?.[0] ?? {};
      return {
        acceleratedNetworking: i.enableAcceleratedNetworking,
        networkSecurityGroup: refName(i.networkSecurityGroup),
        subnet: /virtualNetworks\/([^/]+)\/subnets\/([^/]+)$/.exec(String((ip.subnet as { id?: string } | undefined)?.id ?? ""))?.slice(1).join("/"),
        privateIp: ip.privateIPAddress,
        publicIp: refName(ip.publicIPAddress),
        tags,
      };
    }
    case "azure-native:compute:ProximityPlacementGroup":
      return { type: i.proximityPlacementGroupType, zones: i.zones ?? null, intentVmSizes: (i.intent as { vmSizes?: string[] } | undefined)?.vmSizes, tags };
    case "azure-native:compute:AvailabilitySet":
      return { sku: (i.sku as { name?: string } | undefined)?.name, faultDomains: i.platformFaultDomainCount, updateDomains: i.platformUpdateDomainCount, proximityPlacementGroup: refName(i.proximityPlacementGroup) ?? null, tags };
    case "azure-native:compute:VirtualMachine": {
      const os = (i.osProfile as Record<string, unknown> | undefined) ?? {};
      const image = ((i.storageProfile as Record<string, unknown> | undefined)?.imageReference as Record<string, string> | undefined) ?? {};
      const customData = typeof os.customData === "string" ? os.customData : "";
      return {
        size: (i.hardwareProfile as { vmSize?: string } | undefined)?.vmSize,
        zones: i.zones ?? null,
        proximityPlacementGroup: refName(i.proximityPlacementGroup) ?? null,
        availabilitySet: refName(i.availabilitySet) ?? null,
        networkInterfaces: ((i.networkProfile as { networkInterfaces?: { id?: string }[] } | undefined)?.networkInterfaces ?? []).map((n) => lastSegment(n.id)),
        networkInterfaceDeleteOptions: ((i.networkProfile as { networkInterfaces?: { deleteOption?: string }[] } | undefined)?.networkInterfaces ?? []).map((n) => n.deleteOption ?? null),
        image: `${image.publisher}:${image.offer}:${image.sku}:${image.version}`,
        diskControllerType: ((i.storageProfile as Record<string, unknown> | undefined)?.diskControllerType as string | undefined) ?? null,
        computerName: os.computerName,
        adminUsername: os.adminUsername,
        passwordAuthentication: !((os.linuxConfiguration as { disablePasswordAuthentication?: boolean } | undefined)?.disablePasswordAuthentication ?? false),
        customData: customData ? `[secret: cloud-init, ${customData.length} base64 characters, not shown]` : null,
        tags,
      };
    }
    default:
      return {};
  }
}

let queue: Promise<unknown> = Promise.resolve();

/**
 * Runs the Azure program under Pulumi's mocks and lists every resource it declares. The mocks
 * are installed before the program module is imported. Calls are serialised (mocks are
 * process-wide). Validation errors (AzureValidationError) come out before any resource.
 */
export function listAzureResources(plan: Plan, settings: AzureSettings): Promise<AzureListing> {
  const run = queue.then(() => listUnderMocks(plan, settings));
  queue = run.catch(() => undefined);
  return run;
}

async function listUnderMocks(plan: Plan, settings: AzureSettings): Promise<AzureListing> {
  const pulumi = await import("@pulumi/pulumi");
  const seen: ListedResource[] = [];
  let nextIp = 10;
  await pulumi.runtime.setMocks(
    {
      newResource(args) {
        const inputs = unwrap(args.inputs) as Record<string, unknown>;
        const name = azureName(args.type, args.name, inputs);
        const summary = summarize(args.type, inputs);
        seen.push({
          type: args.type,
          name,
          ...(typeof inputs.location === "string" ? { location: inputs.location } : {}),
          ...(typeof summary.size === "string" ? { size: summary.size } : {}),
          inputs: summary,
        });
        const state: Record<string, unknown> = { ...inputs, name };
        // An address of the benchmarking range (RFC 2544, 198.18.0.0/15) no machine has here: never contacted.
        if (args.type === "azure-native:network:PublicIPAddress") state.ipAddress = `198.19.255.${nextIp++}`;
        return { id: mockId(args.type, name, inputs), state };
      },
      call(args) {
        return args.inputs;
      },
    },
    "latlab",
    `offline-${settings.runId}`,
    false,
  );
  const { createProgram } = await import("./program.ts");
  const program = createProgram(plan, settings);
  const out = await program();
  const [resourceGroup, hosts] = await new Promise<[string, unknown]>((resolve) => pulumi.all([out.resourceGroup, out.hosts]).apply((v) => resolve(v as [string, unknown])));
  // Resources whose outputs nobody awaited (peerings…) may still be registering.
  const waitForRPCs = (pulumi.runtime as unknown as { waitForRPCs?: () => Promise<void> }).waitForRPCs;
  if (typeof waitForRPCs === "function") await waitForRPCs();
  const listing = { resources: seen, outputs: AzureOutputsSchema.parse({ resourceGroup, hosts }) };
  if (/PRIVATE KEY/.test(JSON.stringify(listing))) throw new Error("internal: a private key reached the resource listing");
  return listing;
}

// ---------------------------------------------------------------------------------------------
// `latlab plan <name> --target azure --json`

/** Placeholder settings for an offline listing: throwaway keys made in memory, documentation addresses. */
export function offlineSettings(plan: Plan, overrides: Partial<AzureSettings> = {}): { settings: AzureSettings; placeholders: string[] } {
  const createdAt = overrides.createdAt ?? new Date();
  const names = plan.deployments.flatMap((d) => d.hosts.map((h) => hostName(d.index, h.role)));
  const placeholders = (["runId", "sshFrom", "adminUsername", "sshPublicKey", "hostKeys", "expiresAt"] as const).filter((k) => overrides[k] === undefined);
  return {
    settings: {
      runId: overrides.runId ?? "offline",
      experiment: overrides.experiment ?? plan.experiment.name,
      sshFrom: overrides.sshFrom ?? "198.19.254.1/32",
      adminUsername: overrides.adminUsername ?? "latlab",
      sshPublicKey: overrides.sshPublicKey ?? throwawayRsaPublicKey(),
      hostKeys: overrides.hostKeys ?? Object.fromEntries(names.map((n) => [n, generateHostKey(`latlab-host-${n}`)])),
      createdAt,
      expiresAt: overrides.expiresAt ?? recommendedExpiresAt(plan, createdAt),
      // The GitHub run tags only when given (a listing made inside a workflow run): never placeholders.
      ...(overrides.githubRun ? { githubRun: overrides.githubRun } : {}),
    },
    placeholders: [...placeholders],
  };
}

export interface AzurePlanOptions {
  /** Real settings when known; otherwise placeholders (listed in the report). */
  settings?: Partial<AzureSettings>;
  /** Refresh prices from the Retail Prices API (--live-prices). */
  livePrices?: boolean;
  fetchFn?: FetchLike;
  /** Overrides the bundled snapshot (tests). */
  snapshot?: PriceSnapshot;
  /** --max-cost USD */
  maxCostUsd?: number;
  /** --max-vcpus N: the waves hold at most this many vCPUs each (all regions together). */
  maxVcpus?: number;
  /** The subscription the waves are sized against (default: a new pay-as-you-go one's documented quotas). */
  profile?: SubscriptionProfile;
}

/** One wave as `latlab plan` shows it: its deployments' cost and wall time (bring-up, cells, teardown). */
export interface AzureWaveCost {
  /** 1-based. */
  wave: number;
  cost: CostEstimate;
  expectedSeconds: number;
  worstCaseSeconds: number;
}

/**
 * The waves a run of the plan needs on a subscription with the profile's quotas (offline: a real
 * run sizes them against the subscription's own free quota, read before deploying).
 */
export interface AzureWavesReport {
  profile: SubscriptionProfile;
  /** Null when a deployment cannot fit even alone: `refusal` says which and why. */
  plan: WavePlan | null;
  refusal: string | null;
  costs: AzureWaveCost[];
  /** The waves one after another: their expected and worst-case seconds summed, and their costs (null: UNKNOWN). */
  total: { expectedSeconds: number; worstCaseSeconds: number; expectedUsd: number | null; worstCaseUsd: number | null };
}

/** Each wave's cost (list prices of `snapshot`, for its worst case) and its expected and worst-case wall time. */
export function waveCosts(plan: Plan, waves: Pick<WavePlan, "waves">, snapshot: PriceSnapshot): AzureWaveCost[] {
  return waves.waves.map((w) => {
    const sub = wavePlan(plan, w.deployments);
    const worst = worstCaseRun(sub).seconds;
    return { wave: w.index + 1, cost: estimateCost(sub, snapshot, worst / 3600), expectedSeconds: expectedRun(sub).seconds, worstCaseSeconds: worst };
  });
}

/** The waves of `plan` under `profile` (and --max-vcpus), with each wave's cost from `snapshot`. */
export function azureWaves(plan: Plan, snapshot: PriceSnapshot, options: { profile?: SubscriptionProfile; maxVcpus?: number } = {}): AzureWavesReport {
  const profile = options.profile ?? NEW_SUBSCRIPTION_PROFILE;
  let waves: WavePlan;
  try {
    waves = planWaves(plan, deploymentDemands(plan), profileLimits(profile, options.maxVcpus));
  } catch (e) {
    if (!(e instanceof WaveRefusal)) throw e;
    return { profile, plan: null, refusal: e.message, costs: [], total: { expectedSeconds: 0, worstCaseSeconds: 0, expectedUsd: null, worstCaseUsd: null } };
  }
  const costs = waveCosts(plan, waves, snapshot);
  const known = costs.every((c) => c.cost.known);
  const sum = (f: (c: AzureWaveCost) => number) => costs.reduce((n, c) => n + f(c), 0);
  return {
    profile,
    plan: waves,
    refusal: null,
    costs,
    total: {
      expectedSeconds: sum((c) => c.expectedSeconds),
      worstCaseSeconds: sum((c) => c.worstCaseSeconds),
      expectedUsd: known ? Math.round(sum((c) => (c.cost.hourlyUsd ?? 0) * c.expectedSeconds / 3600) * 100) / 100 : null,
      worstCaseUsd: known ? Math.round(sum((c) => c.cost.totalUsd ?? 0) * 100) / 100 : null,
    },
  };
}

export interface AzurePlanReport {
  experiment: string;
  resources: ListedResource[];
  outputs: AzureOutputs;
  /** Settings that were placeholders in this listing. */
  placeholders: string[];
  warnings: string[];
  worstCase: WorstCase;
  /** A typical run's wall time (the cost's "expected" figure). */
  expected: { seconds: number };
  /** vCPUs per region and quota family: what the subscription's quotas must allow. */
  vcpus: RegionNeed[];
  tags: { createdAt: string; expiresAt: string };
  /** Hourly and total (for the worst-case hours) cost. */
  cost: CostEstimate;
  livePrices: { used: boolean; notFound: string[] };
  /** Why a deploy would be refused for its cost (over --max-cost, or UNKNOWN without --max-cost); empty when it would go. */
  refusals: DefinitionIssue[];
  /** The waves a new subscription (the profile) needs for this plan, with their cost and wall time. */
  waves: AzureWavesReport;
  /** What the cost check would say without refusing (an UNKNOWN cost under the user's own --max-cost). */
  costNotes: string[];
}

/** Everything `latlab plan <name> --target azure --json` prints. Throws AzureValidationError for a plan Azure would refuse. */
export async function azurePlanReport(plan: Plan, options: AzurePlanOptions = {}): Promise<AzurePlanReport> {
  const { settings, placeholders } = offlineSettings(plan, options.settings);
  const listing = await listAzureResources(plan, settings);
  let snapshot = options.snapshot ?? loadPriceSnapshot();
  const livePrices = { used: false, notFound: [] as string[] };
  if (options.livePrices) {
    const sizes = [...new Set(plan.deployments.flatMap((d) => d.hosts.map((h) => h.size)))];
    const live = await fetchLivePrices(planRegions(plan), sizes, options.fetchFn);
    snapshot = mergeSnapshots(snapshot, live.snapshot);
    livePrices.used = true;
    livePrices.notFound = live.notFound;
  }
  const worstCase = worstCaseRun(plan);
  const cost = estimateCost(listing.resources, snapshot, worstCase.seconds / 3600);
  return {
    experiment: plan.experiment.name,
    resources: listing.resources,
    outputs: listing.outputs,
    placeholders,
    warnings: azureWarnings(plan),
    worstCase,
    tags: { createdAt: settings.createdAt.toISOString(), expiresAt: settings.expiresAt.toISOString() },
    cost,
    livePrices,
    expected: expectedRun(plan),
    vcpus: vcpuNeeds(plan),
    waves: azureWaves(plan, snapshot, { ...(options.profile ? { profile: options.profile } : {}), ...(options.maxVcpus !== undefined ? { maxVcpus: options.maxVcpus } : {}) }),
    ...costGate(cost, livePrices.used, options.maxCostUsd),
  };
}

function costGate(cost: CostEstimate, livePrices: boolean, maxCostUsd: number | undefined): { refusals: DefinitionIssue[]; costNotes: string[] } {
  const gate = deployCostGate(cost, { livePrices, ...(maxCostUsd !== undefined ? { maxCostUsd } : {}) });
  return { refusals: gate.refusals, costNotes: gate.notes };
}
