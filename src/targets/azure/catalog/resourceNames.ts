import type { DefinitionIssue } from "../../../dsl/errors.ts";
import type { Plan } from "../../../plan/types.ts";
import {
  availabilitySetName,
  computerName,
  deploymentTags,
  hostTags,
  IP_CONFIGURATION_NAME,
  nicName,
  nsgName,
  peeringName,
  ppgName,
  publicIpName,
  resourceGroupName,
  runTags,
  vmName,
  vnetName,
} from "../program/names.ts";
import { addressPlan, inboundRules, planVnets, type AddressPlan } from "../program/network.ts";
import { hostName, namePrefix, type AzureSettings } from "../program/types.ts";

/**
 * Azure's naming rules for every name latlab's Azure program gives a resource (program/names.ts),
 * and the check that the names of a run keep them — before anything is deployed, so a name Azure
 * would refuse mid-deploy (a VNet name is limited to 64 characters) is refused with the name, its
 * length and the rule instead.
 *
 * Source of every rule unless said otherwise: "Naming rules and restrictions for Azure resources",
 * MicrosoftDocs/azure-docs articles/azure-resource-manager/management/resource-name-rules.md
 * @ 849e815a68648a37b5a5aa400ffa61a3143686e8 (https://learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules).
 * Each rule quotes its table row. "Alphanumerics" there are a-z, A-Z and 0-9.
 */

export const RESOURCE_NAME_RULES_SOURCE = {
  repo: "MicrosoftDocs/azure-docs",
  path: "articles/azure-resource-manager/management/resource-name-rules.md",
  commit: "849e815a68648a37b5a5aa400ffa61a3143686e8",
  url: "https://learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules",
} as const;

/** The Linux host name rules a VM's computerName must also keep: man-pages hostname(7). */
export const HOSTNAME_SOURCE = {
  title: "hostname(7), Linux man-pages",
  url: "https://man7.org/linux/man-pages/man7/hostname.7.html",
  says: "Each element of the hostname must be from 1 to 63 characters long and the entire hostname, including the dots, can be at most 253 characters long. Valid characters for hostnames are ASCII(7) letters from a to z, the digits from 0 to 9, and the hyphen (-). A hostname may not start with a hyphen.",
} as const;

export interface NameRule {
  /** ARM type (or what is named), e.g. "Microsoft.Network/virtualNetworks". */
  resource: string;
  /** What people call it, for messages. */
  label: string;
  min: number;
  max: number;
  /** Every character of the name must match this (one character). */
  char: RegExp;
  /** The first / last character must match this, when the rule says so. */
  start?: RegExp;
  end?: RegExp;
  /** The rule in words (for messages). */
  summary: string;
  /** The source's table row, verbatim; or what latlab assumes where the source has none. */
  says: string;
  /** Where it was read, when not RESOURCE_NAME_RULES_SOURCE. */
  source?: string;
}

const ALNUM = /[A-Za-z0-9]/;
/** Microsoft.Network's one rule (every network row latlab uses has the same words). */
const NETWORK_CHARS = { char: /[A-Za-z0-9_.-]/, start: ALNUM, end: /[A-Za-z0-9_]/, summary: "alphanumerics, underscores, periods and hyphens; starts with an alphanumeric; ends with an alphanumeric or underscore" } as const;
const network = (resource: string, label: string, min: number, max: number, row: string): NameRule => ({ resource, label, min, max, ...NETWORK_CHARS, says: row });
const NETWORK_ROW_TAIL = "Alphanumerics, underscores, periods, and hyphens.<br><br>Start with alphanumeric. End alphanumeric or underscore. |";
/** Microsoft.Compute virtualMachines: "Can't use: \/""[]:|<>+=;,?*@&", can't start with "_", can't end with "." or "-". */
const VM_CHAR = /[^\\/"[\]:|<>+=;,?*@&\s]/;

/** Every kind of name latlab gives (program/names.ts), keyed as checkName() takes it. */
export const NAME_RULES = {
  resourceGroup: {
    resource: "Microsoft.Resources/resourcegroups",
    label: "resource group",
    min: 1,
    max: 90,
    char: /[-\w.()\p{L}\p{N}]/u,
    end: /[^.]/,
    summary: "alphanumerics, underscores, parentheses, hyphens, periods (and Unicode letters); does not end with a period",
    says: "| resourcegroups | subscription | 1-90 | Alphanumerics, underscores, parentheses, hyphens, periods, and unicode characters that match the [regex documentation](/rest/api/resources/resourcegroups/createorupdate).<br><br>Can't end with period. |",
  },
  virtualNetwork: network("Microsoft.Network/virtualNetworks", "virtual network", 2, 64, `| virtualNetworks | resource group | 2-64 | ${NETWORK_ROW_TAIL}`),
  subnet: network("Microsoft.Network/virtualNetworks/subnets", "subnet", 1, 80, `| virtualnetworks / subnets | virtual network | 1-80 | ${NETWORK_ROW_TAIL}`),
  virtualNetworkPeering: network("Microsoft.Network/virtualNetworks/virtualNetworkPeerings", "VNet peering", 1, 80, `| virtualNetworks / virtualNetworkPeerings | virtual network | 1-80 | ${NETWORK_ROW_TAIL}`),
  networkSecurityGroup: network("Microsoft.Network/networkSecurityGroups", "network security group", 1, 80, `| networkSecurityGroups | resource group | 1-80 | ${NETWORK_ROW_TAIL}`),
  securityRule: network("Microsoft.Network/networkSecurityGroups/securityRules", "NSG security rule", 1, 80, `| networkSecurityGroups / securityRules | network security group | 1-80 |  ${NETWORK_ROW_TAIL}`),
  networkInterface: network("Microsoft.Network/networkInterfaces", "network interface", 1, 80, `| networkInterfaces | resource group | 1-80 | ${NETWORK_ROW_TAIL}`),
  // The source has no row for a NIC's IP configurations; latlab holds its one name ("ipconfig1") to the NIC's rule.
  ipConfiguration: { ...network("Microsoft.Network/networkInterfaces/ipConfigurations", "NIC IP configuration", 1, 80, "(no row in the source: latlab applies the networkInterfaces row)"), source: "assumed: the networkInterfaces row" },
  publicIpAddress: network("Microsoft.Network/publicIPAddresses", "public IP address", 1, 80, `| publicIPAddresses | resource group | 1-80 | ${NETWORK_ROW_TAIL}`),
  availabilitySet: {
    resource: "Microsoft.Compute/availabilitySets",
    label: "availability set",
    min: 1,
    max: 80,
    ...NETWORK_CHARS,
    says: "| availabilitySets | resource group | 1-80 | Alphanumerics, underscores, periods, and hyphens.<br><br>Start with alphanumeric. End with alphanumeric or underscore. |",
  },
  // The source (at this commit) has no proximityPlacementGroups row: latlab holds PPG names to the
  // availabilitySets row of the same Microsoft.Compute table, the strictest reading it can back.
  proximityPlacementGroup: {
    resource: "Microsoft.Compute/proximityPlacementGroups",
    label: "proximity placement group",
    min: 1,
    max: 80,
    ...NETWORK_CHARS,
    says: "(no proximityPlacementGroups row in the source: latlab applies its availabilitySets row, \"1-80 | Alphanumerics, underscores, periods, and hyphens. Start with alphanumeric. End with alphanumeric or underscore.\")",
    source: "assumed: the availabilitySets row",
  },
  virtualMachine: {
    resource: "Microsoft.Compute/virtualMachines",
    label: "virtual machine",
    min: 1,
    max: 64,
    char: VM_CHAR,
    start: /[^_]/,
    end: /[^.-]/,
    summary: "at most 64 characters (Linux); none of \\/\"[]:|<>+=;,?*@& ; does not start with an underscore; does not end with a period or hyphen",
    says:
      "| virtualMachines | resource group | 1-15 (Windows)<br>1-64 (Linux)<br><br>See note below. | Can't use:<br> `\\/\"\"[]:|<>+=;,?*@&`<br><br>Can't start with underscore. Can't end with period or hyphen. | " +
      "NOTE: \"The restrictions in the preceding table are for the host name. The actual resource name can have up to 64 characters.\"",
  },
  /** osProfile.computerName of a Linux VM: Azure's virtualMachines row (it is the host name's) and hostname(7). */
  computerName: {
    resource: "Microsoft.Compute/virtualMachines osProfile.computerName",
    label: "VM host name (computerName)",
    min: 1,
    // Azure allows 64 (Linux); hostname(7) allows 63 per label, and latlab's host names have no dots.
    max: 63,
    char: /[a-z0-9-]/,
    start: /[a-z0-9]/,
    end: /[a-z0-9]/,
    summary: "1-63 lower-case letters, digits and hyphens (one Linux host name label); does not start or end with a hyphen",
    says: "virtualMachines row above (1-64 (Linux); can't end with period or hyphen) and hostname(7): \"" + HOSTNAME_SOURCE.says + "\"",
    source: `${RESOURCE_NAME_RULES_SOURCE.path} @ ${RESOURCE_NAME_RULES_SOURCE.commit.slice(0, 7)} and ${HOSTNAME_SOURCE.url}`,
  },
  tagName: {
    resource: "Microsoft.Resources/tags (name)",
    label: "tag name",
    min: 1,
    max: 512,
    char: /[^<>%&\\?/]/,
    summary: "1-512 characters, none of <>%&\\?/",
    says: "| tagNames | resource | 1-512 | Can't use:<br>`<>%&\\?/` |",
  },
  tagValue: {
    resource: "Microsoft.Resources/tags (value)",
    label: "tag value",
    min: 1,
    max: 256,
    char: /[\s\S]/,
    summary: "any characters",
    says: "| tagNames / tagValues | tag name | 1-256 | All characters. |",
  },
} as const satisfies Record<string, NameRule>;

export type NameKind = keyof typeof NAME_RULES;

/** What is wrong with `name` under `rule`: one phrase per broken part, empty when it keeps the rule. */
export function nameProblems(rule: NameRule, name: string): string[] {
  const problems: string[] = [];
  const length = [...name].length;
  if (length > rule.max) problems.push(`${length} characters, more than the ${rule.max} allowed`);
  if (length < rule.min) problems.push(`${length} characters, fewer than the ${rule.min} required`);
  const bad = [...new Set([...name].filter((c) => !rule.char.test(c)))];
  if (bad.length) problems.push(`characters not allowed: ${bad.map((c) => JSON.stringify(c)).join(" ")}`);
  if (name && rule.start && !rule.start.test([...name][0]!)) problems.push(`starts with ${JSON.stringify([...name][0])}`);
  if (name && rule.end && !rule.end.test([...name].at(-1)!)) problems.push(`ends with ${JSON.stringify([...name].at(-1))}`);
  return problems;
}

/** One name the program will give, and what it is built from (for the message). */
export interface PlannedName {
  kind: NameKind;
  name: string;
  /** What to change to change the name, e.g. "run id, region northeurope, VNet a". */
  from: string;
  /** For a tag value: its tag's name. */
  tag?: string;
}

/**
 * Every name (and tag) the program (program.ts, through program/names.ts) gives the run's
 * resources. Subnets, peerings and security rules need the address plan: when the plan has no
 * room for one (addressPlanIssues refuses it), those few short names are left out.
 */
export function plannedNames(plan: Plan, settings: AzureSettings): PlannedName[] {
  const out: PlannedName[] = [];
  const prefix = namePrefix(settings.runId);
  const run = `run id "${settings.runId}"`;
  out.push({ kind: "resourceGroup", name: resourceGroupName(settings.runId), from: run });
  for (const v of planVnets(plan)) out.push({ kind: "virtualNetwork", name: vnetName(prefix, v.key), from: `${run}, region ${v.region}${v.vnet === null ? "" : `, VNet ${v.vnet}`}` });

  let addresses: AddressPlan | undefined;
  try {
    addresses = addressPlan(plan, settings.addressSpace);
  } catch {
    addresses = undefined;
  }
  if (addresses) {
    // addressPlan names each subnet with names.ts subnetName(), as the program uses it.
    for (const s of addresses.subnets) out.push({ kind: "subnet", name: s.name, from: `deployment ${s.deploymentIndex}` });
    for (const p of addresses.peerings) out.push({ kind: "virtualNetworkPeering", name: peeringName(p.to), from: `VNet key ${p.to}` });
    const seenRules = new Set<string>();
    for (const rules of inboundRules(plan, addresses, settings.sshFrom).values()) {
      for (const r of rules) {
        if (seenRules.has(r.name)) continue;
        seenRules.add(r.name);
        out.push({ kind: "securityRule", name: r.name, from: `tool traffic (${r.why})` });
      }
    }
  }
  out.push({ kind: "ipConfiguration", name: IP_CONFIGURATION_NAME, from: "latlab" });
  const tags = runTags(settings);
  const tagSets: { tags: Record<string, string>; from: string }[] = [{ tags, from: "the run" }];
  for (const d of plan.deployments) {
    for (const h of d.hosts) {
      const host = hostName(d.index, h.role);
      const from = `${run}, host ${host} (deployment ${d.index}, role ${h.role})`;
      out.push({ kind: "publicIpAddress", name: publicIpName(prefix, host), from });
      out.push({ kind: "networkSecurityGroup", name: nsgName(prefix, host), from });
      out.push({ kind: "networkInterface", name: nicName(prefix, host), from });
      out.push({ kind: "virtualMachine", name: vmName(prefix, host), from });
      out.push({ kind: "computerName", name: computerName(host), from: `host ${host} (deployment ${d.index}, role ${h.role})` });
      tagSets.push({ tags: hostTags(tags, d.id, h.role), from: `host ${host} (deployment ${d.id})` });
    }
    for (const group of new Set(d.hosts.map((h) => h.ppg).filter((g): g is string => g !== null))) {
      out.push({ kind: "proximityPlacementGroup", name: ppgName(prefix, d.index, group), from: `${run}, deployment ${d.index}, PPG "${group}"` });
    }
    for (const group of new Set(d.hosts.map((h) => h.availabilitySet).filter((g): g is string => g !== null))) {
      out.push({ kind: "availabilitySet", name: availabilitySetName(prefix, d.index, group), from: `${run}, deployment ${d.index}, availability set "${group}"` });
    }
    tagSets.push({ tags: deploymentTags(tags, d.id), from: `deployment ${d.id}` });
  }
  const seenTags = new Set<string>();
  const seenValues = new Set<string>();
  for (const { tags: set, from } of tagSets) {
    for (const [name, value] of Object.entries(set)) {
      if (!seenTags.has(name)) {
        seenTags.add(name);
        out.push({ kind: "tagName", name, from: "latlab", tag: name });
      }
      const key = `${name}\u0000${value}`;
      if (seenValues.has(key)) continue;
      seenValues.add(key);
      out.push({ kind: "tagValue", name: value, from, tag: name });
    }
  }
  return out;
}

const sourceOf = (rule: NameRule) => rule.source ?? `${RESOURCE_NAME_RULES_SOURCE.path} @ ${RESOURCE_NAME_RULES_SOURCE.commit.slice(0, 7)}`;

/**
 * Every name of the run that Azure's naming rules refuse: the resource, the name, its length, what
 * is wrong, the rule and its source, and what the name is built from. Nothing here talks to Azure.
 */
export function resourceNameIssues(plan: Plan, settings: AzureSettings): DefinitionIssue[] {
  const issues: DefinitionIssue[] = [];
  const seen = new Set<string>();
  for (const p of plannedNames(plan, settings)) {
    const key = `${p.kind}\u0000${p.name}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const rule: NameRule = NAME_RULES[p.kind];
    const problems = nameProblems(rule, p.name);
    if (!problems.length) continue;
    const shown = p.name.length > 120 ? `${p.name.slice(0, 117)}…` : p.name;
    issues.push({
      path: p.tag !== undefined ? `azure.tags.${p.tag}` : `azure.names.${p.kind}`,
      message:
        `${p.kind === "tagValue" ? `value of tag ${p.tag} on ${p.from}` : `${rule.label} (${rule.resource})`} "${shown}" (${[...p.name].length} characters): ${problems.join("; ")}. ` +
        `Azure's rule: ${rule.min}-${rule.max} characters, ${rule.summary} (${sourceOf(rule)}). ${p.kind === "tagValue" ? "" : `Built from ${p.from}: shorten or rename that`}`.trimEnd(),
    });
  }
  return issues;
}
