import { scheduledSeconds } from "../../../plan/schedule.ts";
import { isIP } from "node:net";
import { ExperimentDefinitionError, type DefinitionIssue } from "../../../dsl/errors.ts";
import type { Plan } from "../../../plan/types.ts";
import { findTool } from "../../../tools/registry.ts";
import { ADMIN_NAME_MAX_LINUX, RESERVED_ADMIN_NAMES, REGIONS, regionCapability, sizeCapability } from "./capabilities.ts";
import type { ResourceSku } from "./quota.ts";
import { describePreviousGeneration } from "./sizes/previousGeneration.ts";
import { sizeFacts } from "./sizes/sizeFacts.ts";
import { unknownSizeNote } from "./sizes/unknownSize.ts";
import { skuSnapshot } from "./sizes/skuSnapshot.ts";
import { hostKeyProblem } from "../program/cloudInit.ts";
import { rsaModulusBits, sshKeyType } from "../access/hostKeys.ts";
import { TOOL_TRAFFIC, addressPlanIssues, cellTraffic } from "../program/network.ts";
import { hostName, type AzureSettings } from "../program/types.ts";
import { resourceNameIssues } from "./resourceNames.ts";
import { accelnetProblem, zoneProblem } from "./hostRules.ts";

/**
 * Everything Azure would refuse, found before the first resource is requested. Each issue
 * names the variant, the host and the field. Nothing here talks to Azure.
 */

/** A plan or settings the Azure program refuses. Also an ExperimentDefinitionError, so the CLI prints it the same way. */
export class AzureValidationError extends ExperimentDefinitionError {
  constructor(issues: DefinitionIssue[], experiment?: string) {
    super(issues, experiment);
    this.name = "AzureValidationError";
    this.message = [
      `${experiment ? `experiment "${experiment}"` : "this plan"} cannot be deployed on Azure:`,
      ...issues.map((i) => `  ${i.path || "(top level)"}: ${i.message}`),
    ].join("\n");
  }
}

const hostPath = (variant: string, role: string, field?: string) => `variants[${variant}].hosts.${role}${field ? `.${field}` : ""}`;

const known = (names: readonly string[], max = 8) => `${names.slice(0, max).join(", ")}${names.length > max ? ", …" : ""}`;

/** Azure-specific refusals for a plan: capabilities, placement rules, address room, tool traffic. */
export function validateForAzure(plan: Plan): DefinitionIssue[] {
  const issues: DefinitionIssue[] = [];
  for (const variant of plan.variants) {
    for (const h of variant.hosts) {
      const region = regionCapability(h.region);
      if (!region) {
        issues.push({
          path: hostPath(variant.id, h.role, "region"),
          message: `region "${h.region}" is not in latlab's Azure region table (src/targets/azure/catalog/capabilities.ts; known: ${known(Object.keys(REGIONS))}); add it with its source`,
        });
      }
      const zone = zoneProblem(h.region, h.zone);
      if (zone) issues.push({ path: hostPath(variant.id, h.role, "zone"), message: zone });
      if (h.availabilitySet && h.zone !== null) {
        issues.push({
          path: hostPath(variant.id, h.role, "availabilitySet"),
          message: `availability set "${h.availabilitySet}" with zone ${h.zone}: Azure cannot combine an availability set with zones`,
        });
      }
    }

    // A PPG is one datacenter: one region, one zone (or none).
    const ppgs = new Map<string, typeof variant.hosts>();
    for (const h of variant.hosts) if (h.ppg) ppgs.set(h.ppg, [...(ppgs.get(h.ppg) ?? []), h]);
    for (const [name, members] of ppgs) {
      const places = [...new Set(members.map((m) => `${m.region}/${m.zone === null ? "no zone" : `zone ${m.zone}`}`))];
      if (places.length > 1) {
        issues.push({
          path: hostPath(variant.id, members.map((m) => m.role).join("+"), "ppg"),
          message: `proximity placement group "${name}" would span ${places.join(" and ")}: a PPG is pinned to one datacenter and cannot span zones or regions`,
        });
      }
    }
    // An availability set is one region, and carries at most one PPG (its members' PPG).
    const avsets = new Map<string, typeof variant.hosts>();
    for (const h of variant.hosts) if (h.availabilitySet) avsets.set(h.availabilitySet, [...(avsets.get(h.availabilitySet) ?? []), h]);
    for (const [name, members] of avsets) {
      const regions = [...new Set(members.map((m) => m.region))];
      if (regions.length > 1) {
        issues.push({ path: hostPath(variant.id, members.map((m) => m.role).join("+"), "availabilitySet"), message: `availability set "${name}" would span regions ${regions.join(" and ")}` });
      }
      const ppgNames = [...new Set(members.map((m) => m.ppg ?? "none"))];
      if (ppgNames.length > 1) {
        issues.push({
          path: hostPath(variant.id, members.map((m) => m.role).join("+"), "ppg"),
          message: `availability set "${name}" mixes PPGs (${ppgNames.join(", ")}): the PPG is set on the availability set, so all its VMs share one`,
        });
      }
    }
  }

  issues.push(...sizeIssues(plan));
  issues.push(...addressPlanIssues(plan));

  const unknownTraffic = new Set<string>();
  for (const cell of plan.cells) {
    if (!cellTraffic(cell)) unknownTraffic.add(cell.tool);
  }
  for (const tool of unknownTraffic) {
    issues.push({
      path: `measure(${tool})`,
      message: findTool(tool)
        ? `latlab does not know which traffic ${tool} sends (it runs no server and is not in TOOL_TRAFFIC in src/targets/azure/program/network.ts: ${Object.keys(TOOL_TRAFFIC).join(", ")}), so it cannot open the NSG for it`
        : `unknown tool "${tool}"`,
    });
  }
  return issues;
}

/**
 * What Azure would refuse of the plan's sizes, by what latlab knows of them: offline the catalog
 * (sizes/sizeFacts.ts), before deploying the subscription's own SKU list (`live`). A fact that is
 * not known refuses nothing: it is said (azureWarnings) and read live.
 */
export function sizeIssues(plan: Plan, live?: readonly ResourceSku[]): DefinitionIssue[] {
  const issues: DefinitionIssue[] = [];
  for (const variant of plan.variants) {
    for (const h of variant.hosts) {
      const accelnet = h.accelnet ? accelnetProblem(h.size, sizeFacts(h.size, live)) : undefined;
      if (accelnet) issues.push({ path: hostPath(variant.id, h.role, "accelnet"), message: accelnet });
    }
  }
  return issues;
}

/** Things Azure may do differently from what was asked, or that latlab cannot know offline. Shown, not enforced. */
export function azureWarnings(plan: Plan): string[] {
  const out = new Set<string>();
  const snapshot = skuSnapshot();
  for (const variant of plan.variants) {
    for (const h of variant.hosts) {
      const facts = sizeFacts(h.size);
      if (facts.previousGeneration) out.add(`${h.size}: ${describePreviousGeneration(h.size, facts.previousGeneration)}. An existing subscription with approved quota may still deploy it; a new one is refused.`);
      const unknown = unknownSizeNote(h.size, snapshot);
      if (unknown) {
        out.add(`${hostPath(variant.id, h.role, "size")}: ${unknown}; its vCPUs and capabilities are UNKNOWN offline and are read from Azure's Resource SKUs API before anything is deployed`);
      } else if (facts.acceleratedNetworking === null || facts.hyperVGenerations === null) {
        out.add(`${h.size}: vCPUs ${facts.vcpus ?? "UNKNOWN"} and family ${facts.family ?? "UNKNOWN"} known offline; Accelerated Networking, image generation and disk controller are read from Azure's Resource SKUs API before deploying`);
      }
      // "Required" is the size page's word (capabilities.ts documented sizes); the SKU API has no such flag.
      if (sizeCapability(facts.name)?.acceleratedNetworking === "required" && !h.accelnet) {
        out.add(
          `${hostPath(variant.id, h.role, "accelnet")}: Microsoft's size page lists Accelerated Networking as Required for ${h.size}; asking for it off may be overridden by Azure. The run records what was granted.`,
        );
      }
    }
  }
  return [...out];
}

// ---------------------------------------------------------------------------------------------
// TTL: latlab's one worst-case estimate. AzureTarget tags runs with recommendedExpiresAt and
// refuses with checkTtl, the same check validateSettings (and so createProgram) applies.

/** Creating the stack and waiting for cloud-init (packages) on every host. */
export const BRING_UP_ALLOWANCE_SECONDS = 45 * 60;
/** `pulumi destroy` of a resource group with VMs, NICs, IPs and peerings. */
export const TEARDOWN_ALLOWANCE_SECONDS = 30 * 60;
/** Per cell on top of the client's own timeout: server start, SSH, copying files back. */
export const PER_CELL_OVERHEAD_SECONDS = 60;
/** Per deployment: connecting to every host, tool versions, shipping assets. */
export const PER_DEPLOYMENT_OVERHEAD_SECONDS = 120;

export interface WorstCase {
  seconds: number;
  bringUpSeconds: number;
  cellsSeconds: number;
  teardownSeconds: number;
}

/** A cell's hard limit: what the runner gives the tool's client before it kills it. */
export function cellTimeoutSeconds(cell: Plan["cells"][number]): number {
  const tool = findTool(cell.tool);
  if (!tool) return Math.ceil(cell.estimatedSeconds * 2 + 60);
  return tool.client({ targetAddress: "10.0.0.1", port: 0, workDir: "/tmp/latlab", assetsDir: "/tmp/latlab" }, cell.params).timeoutSeconds;
}

/** Worst-case wall time of a run: bring-up + every cell at its timeout (cells run one after another) + teardown. */
export function worstCaseRun(plan: Plan): WorstCase {
  // Cells that run at the same time (a long-lived probe from several clients) count once.
  const cellsSeconds =
    scheduledSeconds(plan.cells, (c) => cellTimeoutSeconds(c) + PER_CELL_OVERHEAD_SECONDS) + plan.deployments.length * PER_DEPLOYMENT_OVERHEAD_SECONDS;
  const seconds = BRING_UP_ALLOWANCE_SECONDS + cellsSeconds + TEARDOWN_ALLOWANCE_SECONDS;
  return { seconds, bringUpSeconds: BRING_UP_ALLOWANCE_SECONDS, cellsSeconds, teardownSeconds: TEARDOWN_ALLOWANCE_SECONDS };
}

/** A typical Azure bring-up (VMs + cloud-init installing the tools) and destroy: what a run usually takes, not its limit. */
export const EXPECTED_BRING_UP_SECONDS = 10 * 60;
export const EXPECTED_TEARDOWN_SECONDS = 10 * 60;
/** SSH, server start and collection around each cell, as usually seen. */
export const EXPECTED_PER_CELL_OVERHEAD_SECONDS = 10;

/** Expected wall time of a run: a typical bring-up + every cell for its own measurement time + a typical teardown (the cost's "expected" figure; worstCaseRun is the limit). */
export function expectedRun(plan: Plan): { seconds: number } {
  return { seconds: EXPECTED_BRING_UP_SECONDS + scheduledSeconds(plan.cells, (c) => c.estimatedSeconds + EXPECTED_PER_CELL_OVERHEAD_SECONDS) + EXPECTED_TEARDOWN_SECONDS };
}

const human = (seconds: number) => {
  const h = Math.floor(seconds / 3600);
  const m = Math.ceil((seconds % 3600) / 60);
  return h ? `${h} h ${m} min` : `${m} min`;
};

/**
 * Refuses a TTL (expiresAt − createdAt) that is not longer than the run's worst case: the
 * sweeper deletes expired groups, and must never delete hosts mid-run.
 */
export function checkTtl(plan: Plan, expiresAt: Date, createdAt: Date): DefinitionIssue[] {
  if (Number.isNaN(createdAt.getTime())) return [{ path: "settings.createdAt", message: "not a valid date" }];
  if (Number.isNaN(expiresAt.getTime())) return [{ path: "settings.expiresAt", message: "not a valid date" }];
  const ttl = (expiresAt.getTime() - createdAt.getTime()) / 1000;
  const worst = worstCaseRun(plan);
  if (ttl > worst.seconds) return [];
  return [
    {
      path: "settings.expiresAt",
      message:
        `TTL ${ttl > 0 ? human(ttl) : `${ttl} s`} is not longer than the run's worst case ${human(worst.seconds)} ` +
        `(bring-up ${human(worst.bringUpSeconds)} + ${plan.cells.length} cells at their timeouts ${human(worst.cellsSeconds)} + teardown ${human(worst.teardownSeconds)}): ` +
        `the sweeper could delete the hosts mid-run. Set expiresAt after ${recommendedExpiresAt(plan, createdAt).toISOString()}`,
    },
  ];
}

/** An expiry comfortably past the worst case: 1.5 × worst case, rounded up to the hour, at least 2 h. */
export function recommendedExpiresAt(plan: Plan, createdAt: Date): Date {
  const hours = Math.max(2, Math.ceil((worstCaseRun(plan).seconds * 1.5) / 3600));
  return new Date(createdAt.getTime() + hours * 3600_000);
}

// ---------------------------------------------------------------------------------------------
// Settings

const OPEN_SOURCES = new Set(["*", "any", "internet", "0.0.0.0/0", "::/0", "0.0.0.0", "::"]);
/** Narrowest CIDR allowed for sshFrom: the runner's address, or its small network. */
export const SSH_FROM_MIN_PREFIX = { 4: 24, 6: 56 } as const;

/** Why `sshFrom` is not a narrow source for SSH, or undefined when it is. */
export function sshFromProblem(sshFrom: string): string | undefined {
  const value = sshFrom.trim();
  if (OPEN_SOURCES.has(value.toLowerCase())) return `"${sshFrom}" opens SSH to everyone; give the runner's address (e.g. 203.0.113.7/32)`;
  const [address, prefixText, ...rest] = value.split("/");
  const family = isIP(address ?? "");
  if (!family || rest.length) return `"${sshFrom}" is not an IP address or CIDR`;
  // The VMs have IPv4 public addresses only: an IPv6 source would be an NSG rule that lets no SSH in.
  if (family === 6) return `"${sshFrom}" is IPv6, and the VMs have IPv4 public addresses only (the NSG rule would let no SSH in): give the IPv4 address your SSH leaves from (\`curl -4 https://ifconfig.me\`) or --ssh-from auto`;
  if (prefixText === undefined) return undefined;
  if (!/^\d+$/.test(prefixText)) return `"${sshFrom}" has no valid prefix length`;
  const prefix = Number(prefixText);
  const max = family === 4 ? 32 : 128;
  const min = SSH_FROM_MIN_PREFIX[family as 4 | 6];
  if (prefix > max) return `"${sshFrom}": /${prefix} is longer than an IPv${family} address`;
  if (prefix < min) return `"${sshFrom}" is /${prefix}, wider than /${min}: SSH is opened to the runner's address only (e.g. its /32)`;
  return undefined;
}

/** The run's settings: names Azure accepts, a narrow SSH source, an RSA key, a host key per host, a TTL that outlasts the run. */
export function validateSettings(plan: Plan, settings: AzureSettings): DefinitionIssue[] {
  const issues: DefinitionIssue[] = [];
  if (!/^[a-z0-9][a-z0-9-]{0,29}$/.test(settings.runId)) {
    issues.push({ path: "settings.runId", message: `"${settings.runId}" must be 1-30 lower-case letters, digits or '-' (it names every Azure resource)` });
  }
  if (settings.experiment !== plan.experiment.name) {
    issues.push({ path: "settings.experiment", message: `"${settings.experiment}" but the plan is for "${plan.experiment.name}"` });
  }
  const ssh = sshFromProblem(settings.sshFrom);
  if (ssh) issues.push({ path: "settings.sshFrom", message: ssh });
  if (settings.addressSpace !== undefined) {
    try {
      for (const i of addressPlanIssues(plan, settings.addressSpace)) issues.push({ path: `settings.addressSpace (${i.path})`, message: i.message });
    } catch (e) {
      issues.push({ path: "settings.addressSpace", message: (e as Error).message });
    }
  }
  const admin = settings.adminUsername;
  if (!/^[a-z_][a-z0-9_-]*$/.test(admin) || admin.length > ADMIN_NAME_MAX_LINUX) {
    issues.push({ path: "settings.adminUsername", message: `"${admin}" must be a Linux user name (lower case, at most ${ADMIN_NAME_MAX_LINUX} characters)` });
  } else if (RESERVED_ADMIN_NAMES.includes(admin)) {
    issues.push({ path: "settings.adminUsername", message: `"${admin}" is one of the names Azure refuses for the admin user` });
  }
  const bits = rsaModulusBits(settings.sshPublicKey);
  if (bits === undefined) {
    issues.push({ path: "settings.sshPublicKey", message: `expected an OpenSSH "ssh-rsa" public key line (RSA is the key type Azure Linux VMs accept everywhere), got ${sshKeyType(settings.sshPublicKey) ?? "something else"}` });
  } else if (bits < 2048) {
    issues.push({ path: "settings.sshPublicKey", message: `RSA key of ${bits} bits; Azure requires at least 2048` });
  }
  if (/PRIVATE KEY/.test(settings.sshPublicKey)) {
    issues.push({ path: "settings.sshPublicKey", message: "holds a private key; only the public key line belongs here" });
  }
  for (const d of plan.deployments) {
    for (const h of d.hosts) {
      const name = hostName(d.index, h.role);
      const key = Object.hasOwn(settings.hostKeys, name) ? settings.hostKeys[name] : undefined;
      if (!key) {
        issues.push({ path: `settings.hostKeys.${name}`, message: `no host key for ${name} (deployment ${d.id}, host ${h.role}): the runner could not pin it` });
        continue;
      }
      const problem = hostKeyProblem(key);
      if (problem) issues.push({ path: `settings.hostKeys.${name}`, message: problem });
    }
  }
  issues.push(...resourceNameIssues(plan, settings));
  issues.push(...checkTtl(plan, settings.expiresAt, settings.createdAt));
  return issues;
}

/** Everything: the plan against Azure's rules, then the settings. */
export function validateAzureRun(plan: Plan, settings: AzureSettings): DefinitionIssue[] {
  return [...validateForAzure(plan), ...validateSettings(plan, settings)];
}

/** Throws AzureValidationError listing every issue, or returns. */
export function assertAzureRun(plan: Plan, settings: AzureSettings): void {
  const issues = validateAzureRun(plan, settings);
  if (issues.length) throw new AzureValidationError(issues, plan.experiment.name);
}

