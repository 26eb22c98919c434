/**
 * Placement evidence: what Azure's control plane says of where each host's VM runs, read after the
 * deploy (targets/azure/lifecycle/placementEvidence.ts) and kept per host in results.json — its
 * proximity placement group's colocation status, and the VM's instance view. A PPG asks Azure to
 * colocate; it does not promise it (planned maintenance can move a VM away, a deallocated member
 * makes the status unknown), so a comparison resting on a PPG that is not Aligned must say so.
 * Schemas first; the helpers are pure.
 */
import { z } from "zod";

/**
 * ARM's InstanceViewStatus: `definitions.InstanceViewStatus` of
 * specification/compute/resource-manager/Microsoft.Compute/ComputeRP/stable/2024-11-01/computeRPCommon.json
 * in Azure/azure-rest-api-specs (commit 3db4b34f314182decb1f2d166de052832c5bd262). Every field is
 * optional there; `level` is one of Info, Warning, Error (kept as ARM gives it).
 */
export const InstanceViewStatusSchema = z.object({
  code: z.string().optional(),
  level: z.string().optional(),
  displayStatus: z.string().optional(),
  message: z.string().optional(),
  time: z.string().optional(),
});
export type InstanceViewStatus = z.infer<typeof InstanceViewStatusSchema>;

/**
 * The three colocation states Microsoft documents for a PPG (MicrosoftDocs/azure-compute-docs,
 * articles/virtual-machines/co-location.md, "Check the alignment status", commit
 * 3cb250d9d56cee92b22ae3701764852d1674bbe8): Aligned (within the PPG's latency envelope), Unknown
 * (a member VM is deallocated), Not aligned (a member VM is not where the PPG is). latlab also says
 * Unknown when it could not read the status (`reason` says why).
 */
export const COLOCATION_STATES = ["Aligned", "NotAligned", "Unknown"] as const;
export const ColocationSchema = z.enum(COLOCATION_STATES);
export type Colocation = z.infer<typeof ColocationSchema>;

/** The PPG a host's VM is in (directly or through its availability set), as ARM reported it. */
export const PpgEvidenceSchema = z.object({
  /** The PPG's name in the experiment (`ppg` of the host). */
  name: z.string(),
  /** Its ARM resource id, when known. */
  id: z.string().optional(),
  /** latlab's reading of `colocationStatus.code`; Unknown when it could not be read (see `reason`). */
  status: ColocationSchema,
  /** `properties.colocationStatus` of ProximityPlacementGroups_Get with includeColocationStatus=true, as ARM returned it. */
  colocationStatus: InstanceViewStatusSchema.optional(),
  /** This VM's own entry in the PPG's `virtualMachines` (SubResourceWithColocationStatus), when ARM gave one. */
  member: InstanceViewStatusSchema.optional(),
  /** Why the status is Unknown without ARM saying so (a read that failed, no colocationStatus, a code latlab does not know). */
  reason: z.string().optional(),
});
export type PpgEvidence = z.infer<typeof PpgEvidenceSchema>;

/** What VirtualMachines_InstanceView (GET …/virtualMachines/{vm}/instanceView) says of where and how the VM runs. */
export const VmEvidenceSchema = z.object({
  /** The VM's ARM name. */
  name: z.string(),
  id: z.string().optional(),
  read: z.enum(["ok", "failed"]),
  /** Why the read failed. */
  reason: z.string().optional(),
  platformFaultDomain: z.number().int().optional(),
  platformUpdateDomain: z.number().int().optional(),
  /** From the `PowerState/…` status: "running", "deallocated"… */
  powerState: z.string().optional(),
  /** From the `ProvisioningState/…` status: "succeeded"… */
  provisioningState: z.string().optional(),
  /** The dedicated host the VM was placed on (automatic placement in a host group only). */
  assignedHost: z.string().optional(),
  statuses: z.array(InstanceViewStatusSchema).optional(),
});
export type VmEvidence = z.infer<typeof VmEvidenceSchema>;

export const HostPlacementSchema = z.object({
  /** When it was read (after the deploy, before the first cell). */
  readAt: z.string(),
  /** Who answered: Azure's ARM, or latlab's emulator in a rehearsal (whose colocation status is its own). */
  source: z.enum(["azure", "emulator"]),
  /** Absent when the host asked for no PPG. */
  ppg: PpgEvidenceSchema.optional(),
  vm: VmEvidenceSchema,
});
export type HostPlacement = z.infer<typeof HostPlacementSchema>;

/**
 * latlab's reading of a colocationStatus. Codes seen in Azure's recordings are
 * "ColocationStatus/Aligned" (level Info, message "All resources in the proximity placement group
 * are aligned.") and "ColocationStatus/Unknown" (level Warning, "Colocation status is currently
 * unknown."): Azure/azure-powershell src/Compute/Compute.Test/ScenarioTests/PPGTests.ps1 (commit
 * ceb40aa8d7b9d7c9c2b62a77a4ec3e9c2d2bd97e). The not-aligned code was found in no recording; the
 * documentation calls the state "Not aligned", so "ColocationStatus/NotAligned", "Not Aligned" and
 * the like are all read as NotAligned (case, spaces, '-' and '_' ignored).
 */
export function readColocation(status: InstanceViewStatus | undefined): { status: Colocation; reason?: string } {
  if (!status || (!status.code && !status.displayStatus)) return { status: "Unknown", reason: "ARM returned no colocationStatus" };
  const raw = status.code ?? status.displayStatus!;
  const word = raw.replace(/^ColocationStatus\//i, "").replace(/[\s_-]/g, "").toLowerCase();
  if (word === "aligned") return { status: "Aligned" };
  if (word === "notaligned") return { status: "NotAligned" };
  if (word === "unknown") return { status: "Unknown" };
  return { status: "Unknown", reason: `colocation status code ${JSON.stringify(raw)} is not one latlab knows` };
}

/** What ARM (its message) or latlab (the reason) said of a PPG's status, and a member VM called out; "" when nothing. */
export function ppgSaid(p: PpgEvidence): string {
  const said = p.colocationStatus?.message ?? p.colocationStatus?.displayStatus;
  const member = p.member && readColocation(p.member).status !== "Aligned" ? `this VM: ${p.member.displayStatus ?? p.member.code ?? "?"}${p.member.message ? ` — ${p.member.message}` : ""}` : "";
  return [said, p.reason, member].filter(Boolean).join("; ");
}

/** "NotAligned — At least one …" — the status with what ARM or latlab said of it. */
export function ppgDetail(p: PpgEvidence): string {
  const said = ppgSaid(p);
  return `${p.status}${said ? ` — ${said}` : ""}`;
}

/** One VM's instance view in a few words: "fd 0 / ud 1, running". */
export function vmDetail(v: VmEvidence): string {
  if (v.read === "failed") return `not read: ${v.reason ?? "unknown reason"}`;
  const domains = v.platformFaultDomain !== undefined || v.platformUpdateDomain !== undefined ? `fd ${v.platformFaultDomain ?? "?"} / ud ${v.platformUpdateDomain ?? "?"}` : "no fault/update domain";
  return [domains, v.powerState ?? v.provisioningState, v.assignedHost ? `host ${v.assignedHost}` : undefined].filter(Boolean).join(", ");
}

/** Hosts as results.json keeps them (a variant's host records), the slice these helpers read. */
interface VariantHosts {
  id: string;
  hosts: readonly { deployment: string; role: string; ppg: string | null; placement?: HostPlacement | undefined }[];
}

/** One PPG of one deployment, and what ARM said of it. */
export interface DeploymentPpg {
  deployment: string;
  /** Variants measured on the deployment. */
  variants: string[];
  /** The PPG asked for (its name in the experiment), or null for the hosts that asked for none. */
  ppg: string | null;
  /** The PPG's evidence (the first member's: every member reads the same PPG). */
  evidence?: PpgEvidence;
  hosts: { role: string; vm: VmEvidence | undefined }[];
  source?: HostPlacement["source"];
}

/**
 * Per deployment and PPG asked (null: the deployment's hosts in none), the colocation status got
 * and its VMs' instance views — only deployments whose hosts carry placement evidence.
 */
export function placementByDeployment(variants: readonly VariantHosts[]): DeploymentPpg[] {
  const out = new Map<string, DeploymentPpg>();
  const seenHost = new Set<string>();
  for (const v of variants) {
    for (const h of v.hosts) {
      if (!h.placement) continue;
      const key = `${h.deployment}\u0000${h.ppg ?? ""}`;
      let row = out.get(key);
      if (!row) {
        row = { deployment: h.deployment, variants: [], ppg: h.ppg, hosts: [], source: h.placement.source, ...(h.placement.ppg ? { evidence: h.placement.ppg } : {}) };
        out.set(key, row);
      }
      if (!row.variants.includes(v.id)) row.variants.push(v.id);
      row.evidence ??= h.placement.ppg;
      // A deployment serving several variants lists its hosts once.
      if (seenHost.has(`${h.deployment}\u0000${h.role}`)) continue;
      seenHost.add(`${h.deployment}\u0000${h.role}`);
      row.hosts.push({ role: h.role, vm: h.placement.vm });
    }
  }
  return [...out.values()];
}

/** A PPG a comparison relies on that ARM did not report Aligned. */
export interface PlacementCaveat {
  side: "baseline" | "candidate";
  variant: string;
  deployment: string;
  ppg: string;
  status: Exclude<Colocation, "Aligned">;
  /** What ARM or latlab said of it (ppgSaid); "" when nothing. */
  detail: string;
}

/**
 * The PPGs of the hosts a side of a comparison measured (`roles`, in the deployments of
 * `deployments`) that are not Aligned. Hosts without evidence (a local run, an older run) give none.
 */
export function unalignedPpgs(variant: VariantHosts | undefined, deployments: ReadonlySet<string>, roles: readonly string[], side: PlacementCaveat["side"]): PlacementCaveat[] {
  const out: PlacementCaveat[] = [];
  for (const h of variant?.hosts ?? []) {
    const p = h.placement?.ppg;
    if (!p || p.status === "Aligned" || !deployments.has(h.deployment) || !roles.includes(h.role)) continue;
    if (out.some((c) => c.deployment === h.deployment && c.ppg === p.name)) continue;
    out.push({ side, variant: variant!.id, deployment: h.deployment, ppg: p.name, status: p.status, detail: ppgSaid(p) });
  }
  return out;
}

/** "candidate deployment d1 PPG 'p' NotAligned; baseline …" — short, for a table cell. */
export const caveatCell = (caveats: readonly PlacementCaveat[]) => caveats.map((c) => `${c.side} ${c.deployment}: PPG '${c.ppg}' ${c.status}`).join("; ");

/** The sentence a verdict gets when it rests on a PPG that is not Aligned. */
export function caveatSentence(caveats: readonly PlacementCaveat[]): string {
  if (!caveats.length) return "";
  const which = caveats.map((c) => `the ${c.side}'s PPG '${c.ppg}' (deployment ${c.deployment}) is ${c.status}${c.detail ? ` (${c.detail.replace(/\.$/, "")})` : ""}`).join("; ");
  const why = caveats.some((c) => c.status === "NotAligned") ? "its hosts were not all colocated as asked" : "their colocation could not be confirmed";
  return `Placement: ${which} — ${why}, so this comparison may not show what the PPG does.`;
}
