import type { ExcerptFile } from "./excerptSchema.ts";
import { loadExcerpt, type ExcerptName } from "./excerpts.ts";
import { isPlainObject, toArm, toSdk } from "./flatten.ts";
import { validateBody, type ArmSpecIssue } from "./validateBody.ts";

/**
 * What the Azure emulator knows of ARM for latlab's ten resource types, from Azure's REST API
 * specifications (the excerpts beside this file, see README.md): the catalog Pulumi token → ARM
 * type / api-version / PUT path, the translation between the inputs @pulumi/azure-native's SDK
 * sends (x-ms-client-flatten applied) and ARM request bodies, and a check of those bodies the
 * way ARM would refuse them (validateBody.ts says which codes and why).
 *
 * Pure apart from reading the three excerpts once, on first use.
 */

export type { ArmSpecIssue, ArmSpecIssueCode } from "./validateBody.ts";
export type { ExcerptFile } from "./excerptSchema.ts";
export { ExcerptFileSchema } from "./excerptSchema.ts";

export interface ArmTypeInfo {
  /** Pulumi type token, e.g. azure-native:network:Subnet. */
  token: string;
  /** ARM resource type, e.g. Microsoft.Network/virtualNetworks/subnets. */
  armType: string;
  apiVersion: string;
  /** The swagger path of the PUT; {subscriptionId} is the caller's, the rest are pathParams. */
  pathTemplate: string;
  /** Path parameter names in template order, as the SDK names its inputs (resourceGroupName, vmName…). */
  pathParams: readonly string[];
  /** Query parameters other than api-version that the SDK takes as inputs (syncRemoteAddressSpace). */
  queryParams: readonly string[];
  /** Spec definition of the PUT body. */
  bodyDefinition: string;
  /** Top-level resource with a location: ARM refuses it without one (LocationRequired). */
  tracked: boolean;
  /** Which excerpt file describes it. */
  excerpt: ExcerptName;
}

/**
 * The types and api-versions @pulumi/azure-native 3.28.0 uses by default. Path parameter names
 * are the swagger's; the SDK (node_modules/@pulumi/azure-native/…/*.d.ts) uses the same names
 * for its inputs (resourceGroupName, virtualNetworkName, subnetName, publicIpAddressName, vmName…),
 * which armSpec.test.ts checks against the installed SDK.
 */
const CATALOG: readonly { token: string; armType: string; excerpt: ExcerptName; tracked: boolean }[] = [
  { token: "azure-native:resources:ResourceGroup", armType: "Microsoft.Resources/resourceGroups", excerpt: "resources-2024-03-01.json", tracked: true },
  { token: "azure-native:network:VirtualNetwork", armType: "Microsoft.Network/virtualNetworks", excerpt: "network-2024-05-01.json", tracked: true },
  { token: "azure-native:network:Subnet", armType: "Microsoft.Network/virtualNetworks/subnets", excerpt: "network-2024-05-01.json", tracked: false },
  {
    token: "azure-native:network:VirtualNetworkPeering",
    armType: "Microsoft.Network/virtualNetworks/virtualNetworkPeerings",
    excerpt: "network-2024-05-01.json",
    tracked: false,
  },
  { token: "azure-native:network:PublicIPAddress", armType: "Microsoft.Network/publicIPAddresses", excerpt: "network-2024-05-01.json", tracked: true },
  { token: "azure-native:network:NetworkSecurityGroup", armType: "Microsoft.Network/networkSecurityGroups", excerpt: "network-2024-05-01.json", tracked: true },
  { token: "azure-native:network:NetworkInterface", armType: "Microsoft.Network/networkInterfaces", excerpt: "network-2024-05-01.json", tracked: true },
  { token: "azure-native:compute:VirtualMachine", armType: "Microsoft.Compute/virtualMachines", excerpt: "compute-2024-11-01.json", tracked: true },
  {
    token: "azure-native:compute:ProximityPlacementGroup",
    armType: "Microsoft.Compute/proximityPlacementGroups",
    excerpt: "compute-2024-11-01.json",
    tracked: true,
  },
  { token: "azure-native:compute:AvailabilitySet", armType: "Microsoft.Compute/availabilitySets", excerpt: "compute-2024-11-01.json", tracked: true },
];

function buildCatalog(): Readonly<Record<string, ArmTypeInfo>> {
  const out: Record<string, ArmTypeInfo> = {};
  for (const c of CATALOG) {
    const spec = loadExcerpt(c.excerpt).resourceTypes[c.armType];
    if (spec === undefined) throw new Error(`spec excerpt ${c.excerpt} lacks ${c.armType}`);
    out[c.token] = Object.freeze({
      token: c.token,
      armType: c.armType,
      apiVersion: spec.apiVersion,
      pathTemplate: spec.pathTemplate,
      pathParams: Object.freeze([...spec.pathParams]),
      queryParams: Object.freeze([...spec.queryParams]),
      bodyDefinition: spec.body,
      tracked: c.tracked,
      excerpt: c.excerpt,
    });
  }
  return Object.freeze(out);
}

/** Pulumi token → ARM type information, for the ten types latlab deploys. */
export const ARM_TYPES: Readonly<Record<string, ArmTypeInfo>> = buildCatalog();

export function armTypeForToken(token: string): ArmTypeInfo | undefined {
  return ARM_TYPES[token];
}

/** By ARM type, case-insensitively (ARM types are case-insensitive). */
export function armTypeInfo(armType: string): ArmTypeInfo | undefined {
  const lower = armType.toLowerCase();
  return Object.values(ARM_TYPES).find((t) => t.armType.toLowerCase() === lower);
}

function infoFor(token: string): ArmTypeInfo {
  const info = ARM_TYPES[token];
  if (info === undefined) throw new Error(`unknown resource type token ${token}; latlab's ARM emulator knows ${Object.keys(ARM_TYPES).join(", ")}`);
  return info;
}

function definitionsOf(info: ArmTypeInfo): ExcerptFile["definitions"] {
  return loadExcerpt(info.excerpt).definitions;
}

export interface ArmRequest {
  /** Path parameters the inputs gave (resourceGroupName, virtualNetworkName, …); a missing name is the caller's to choose. */
  pathParams: Record<string, string>;
  /** Query parameters the inputs gave (syncRemoteAddressSpace). */
  queryParams: Record<string, string>;
  /** The ARM request body. */
  body: Record<string, unknown>;
}

/**
 * SDK-shaped inputs (what @pulumi/azure-native sends its provider) → ARM request: path and query
 * parameters taken out, flattened members nested back under `properties` (recursively, arrays
 * too). Unknown inputs stay where they were given, for validateArmBody to report.
 */
export function sdkToArm(token: string, sdkInputs: Record<string, unknown>): ArmRequest {
  const info = infoFor(token);
  const pathParams: Record<string, string> = {};
  const queryParams: Record<string, string> = {};
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(sdkInputs)) {
    if (info.pathParams.includes(k)) {
      if (v !== undefined && v !== null) pathParams[k] = String(v);
    } else if (info.queryParams.includes(k)) {
      if (v !== undefined && v !== null) queryParams[k] = String(v);
    } else rest[k] = v;
  }
  return { pathParams, queryParams, body: toArm(definitionsOf(info), info.bodyDefinition, rest) };
}

/** ARM body (a PUT or GET response) → the SDK-shaped outputs Pulumi sees. */
export function armToSdk(token: string, armBody: Record<string, unknown>): Record<string, unknown> {
  const info = infoFor(token);
  if (!isPlainObject(armBody)) throw new Error(`${token}: an ARM body must be an object`);
  return toSdk(definitionsOf(info), info.bodyDefinition, armBody);
}

/** Problems ARM would refuse the PUT body of `token` for; empty when it would accept it. */
export function validateArmBody(token: string, body: unknown): ArmSpecIssue[] {
  const info = infoFor(token);
  return validateBody(definitionsOf(info), info.bodyDefinition, body, { tracked: info.tracked });
}

/** validateArmBody by ARM type, for code that routes ARM requests rather than Pulumi tokens. */
export function validateArmBodyForArmType(armType: string, body: unknown): ArmSpecIssue[] {
  const info = armTypeInfo(armType);
  if (info === undefined) throw new Error(`unknown ARM type ${armType}`);
  return validateArmBody(info.token, body);
}
