/**
 * Placement evidence, read from ARM once the stack is up: for each host, its proximity placement
 * group's colocation status (ProximityPlacementGroups_Get with includeColocationStatus=true) and
 * its VM's instance view (VirtualMachines_InstanceView). A PPG is a request Azure may not honour
 * (co-location.md: planned maintenance can move a VM out of alignment), and neither IMDS nor the
 * VM itself tells it (access/probe.ts): ARM is where it is said. Read-only; the HTTP function and
 * the token are injectable (as catalog/computeCapacity.ts, whose request helper is used). Never
 * throws: what cannot be read is recorded Unknown / failed with the reason, and the run goes on.
 */
import type { TokenCredential } from "@azure/identity";
import { z } from "zod";
import type { Plan } from "../../../plan/types.ts";
import { HostPlacementSchema, InstanceViewStatusSchema, ppgDetail, readColocation, vmDetail, type HostPlacement, type InstanceViewStatus, type PpgEvidence, type VmEvidence } from "../../../results/placement.ts";
import type { HostEndpoint } from "../../target.ts";
import { ARM_ENDPOINT, armGetJson, armTokenGetter, REQUEST_TIMEOUT_MS, type HttpGet } from "../catalog/computeCapacity.ts";
import type { AzureOutputs } from "../program/types.ts";

/**
 * Compute RP version of ProximityPlacementGroups_Get and VirtualMachines_InstanceView: the one the
 * program deploys with, specification/compute/resource-manager/Microsoft.Compute/ComputeRP/stable/2024-11-01/
 * (proximityPlacementGroup.json, virtualMachine.json) in Azure/azure-rest-api-specs.
 */
export const PLACEMENT_API_VERSION = "2024-11-01";

/**
 * The slice of a PPG's GET latlab reads. `properties.colocationStatus` (InstanceViewStatus) and
 * `properties.virtualMachines[]` (SubResourceWithColocationStatus: id, colocationStatus) as
 * ProximityPlacementGroupProperties defines them in proximityPlacementGroup.json (2024-11-01,
 * commit a9a410cf447a7bb5e462bfc4c8a9d768cbc2eb92). Unknown properties pass.
 */
export const PpgResponseSchema = z.object({
  id: z.string().optional(),
  name: z.string().optional(),
  properties: z
    .object({
      colocationStatus: InstanceViewStatusSchema.optional(),
      virtualMachines: z.array(z.object({ id: z.string().optional(), colocationStatus: InstanceViewStatusSchema.optional() })).optional(),
    })
    .optional(),
});

/**
 * The slice of VirtualMachineInstanceView latlab reads (virtualMachine.json 2024-11-01, commit
 * 04be2f1c1c9805e0014d90d904623350e66093c1; example VirtualMachine_Get_InstanceView.json):
 * platformUpdateDomain, platformFaultDomain, assignedHost, statuses ("ProvisioningState/succeeded",
 * "PowerState/running"). Unknown properties pass.
 */
export const InstanceViewResponseSchema = z.object({
  platformUpdateDomain: z.number().int().optional(),
  platformFaultDomain: z.number().int().optional(),
  computerName: z.string().optional(),
  assignedHost: z.string().optional(),
  statuses: z.array(InstanceViewStatusSchema).optional(),
});

const HINTS: Record<number, string> = {
  401: "ARM refused the token: sign in again (`az login`), or check the credential latlab uses (ARM_USE_OIDC=true: ARM_CLIENT_ID / ARM_TENANT_ID and GitHub OIDC; else DefaultAzureCredential: AZURE_* or the Azure CLI)",
  403: "the identity may not read the run's proximity placement groups and VMs: it needs Microsoft.Compute/proximityPlacementGroups/read and Microsoft.Compute/virtualMachines/instanceView/read (the Reader role and docs/azure/latlab-runner-role.json have both)",
};

/** Per host (`${deployment id}/${role}`), what was read. */
export type PlacementByHost = Record<string, HostPlacement>;
/** Reads the placement evidence of a deployed run (AzureTarget's seam; a rehearsal reads its emulator's). */
export type PlacementReader = (plan: Plan, outputs: AzureOutputs) => Promise<PlacementByHost>;

export interface PlacementReadOptions {
  /** Default: the global fetch, 30 s a request. */
  http?: HttpGet;
  /** A bearer token for ARM, asked before each request. Default: armTokenGetter(credential). */
  token?: () => Promise<string>;
  /** Default: latlabAzureCredential() (access/armCredential.ts: GitHub OIDC in CI, else DefaultAzureCredential). */
  credential?: TokenCredential;
  /** Who answers: Azure, or the emulator of a rehearsal (recorded with the evidence). */
  source?: HostPlacement["source"];
  now?: () => Date;
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** `PowerState/running` → "running" (the first status of that kind). */
const statusWord = (statuses: readonly InstanceViewStatus[] | undefined, kind: string) =>
  statuses?.find((s) => s.code?.toLowerCase().startsWith(`${kind.toLowerCase()}/`))?.code?.slice(kind.length + 1);

function resourceUrl(id: string, query: string): string {
  // The token goes to ARM only, for an ARM id of a resource of this run.
  if (!/^\/subscriptions\/[^/]+\/resourceGroups\/[^/]+\/providers\//i.test(id)) throw new Error(`${JSON.stringify(id)} is not an ARM resource id`);
  return `${ARM_ENDPOINT}${encodeURI(id)}${query}`;
}

/** ProximityPlacementGroups_Get with its colocation status (RBAC: Microsoft.Compute/proximityPlacementGroups/read). */
export const colocationStatusUrl = (ppgId: string) => resourceUrl(ppgId, `?api-version=${PLACEMENT_API_VERSION}&includeColocationStatus=true`);
/** VirtualMachines_InstanceView (RBAC: Microsoft.Compute/virtualMachines/instanceView/read). */
export const instanceViewUrl = (vmId: string) => resourceUrl(vmId, `/instanceView?api-version=${PLACEMENT_API_VERSION}`);

/** One PPG's colocation status as evidence; member: the VM whose own entry to keep. */
export function ppgEvidence(name: string, id: string, body: z.infer<typeof PpgResponseSchema>, vmId: string | undefined): PpgEvidence {
  const status = body.properties?.colocationStatus;
  const read = readColocation(status);
  const member = vmId ? body.properties?.virtualMachines?.find((m) => m.id?.toLowerCase() === vmId.toLowerCase())?.colocationStatus : undefined;
  return { name, id, status: read.status, ...(status ? { colocationStatus: status } : {}), ...(member ? { member } : {}), ...(read.reason ? { reason: read.reason } : {}) };
}

/** One VM's instance view as evidence. */
export function vmEvidence(name: string, id: string, body: z.infer<typeof InstanceViewResponseSchema>): VmEvidence {
  const power = statusWord(body.statuses, "PowerState");
  const provisioning = statusWord(body.statuses, "ProvisioningState");
  return {
    name,
    id,
    read: "ok",
    ...(body.platformFaultDomain !== undefined ? { platformFaultDomain: body.platformFaultDomain } : {}),
    ...(body.platformUpdateDomain !== undefined ? { platformUpdateDomain: body.platformUpdateDomain } : {}),
    ...(power ? { powerState: power } : {}),
    ...(provisioning ? { provisioningState: provisioning } : {}),
    ...(body.assignedHost ? { assignedHost: body.assignedHost } : {}),
    ...(body.statuses ? { statuses: body.statuses } : {}),
  };
}

/**
 * Every host's placement evidence, keyed `${deployment id}/${role}`. Each PPG is read once (with
 * includeColocationStatus=true), each VM's instance view once; all at the same time. A read that
 * fails (no token, HTTP error, unexpected shape, an id missing from the stack outputs) is recorded
 * as PPG status Unknown / VM read failed, with the reason.
 */
export async function readPlacementEvidence(plan: Plan, outputs: AzureOutputs, options: PlacementReadOptions = {}): Promise<PlacementByHost> {
  const http: HttpGet = options.http ?? ((url, init) => fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }));
  const source = options.source ?? "azure";
  const readAt = (options.now ?? (() => new Date()))().toISOString();
  // Asked before each request (the credential caches and renews the token; concurrent asks share one).
  const getToken = options.token ?? armTokenGetter(options.credential);
  const token = () =>
    getToken().catch((e: unknown) => {
      throw new Error(`could not get an Azure token for ${ARM_ENDPOINT}: ${message(e)}`);
    });
  const ppgReads = new Map<string, Promise<z.infer<typeof PpgResponseSchema>>>();
  const readPpg = (id: string, what: string) => {
    let p = ppgReads.get(id.toLowerCase());
    if (!p) {
      p = (async () => armGetJson(colocationStatusUrl(id), PpgResponseSchema, what, http, await token(), HINTS))();
      ppgReads.set(id.toLowerCase(), p);
    }
    return p;
  };

  const result: PlacementByHost = {};
  const work: Promise<void>[] = [];
  for (const d of plan.deployments) {
    for (const h of d.hosts) {
      const out = outputs.hosts.find((o) => (o.deployment === d.id || o.deployment === String(d.index)) && o.role === h.role);
      if (!out) continue; // endpointsFromOutputs reports it
      work.push(
        (async () => {
          const vm: Promise<VmEvidence> = (async () => {
            if (!out.vmId) return { name: out.vmName, read: "failed" as const, reason: "the stack outputs carry no VM id (a stack deployed by an older latlab)" };
            try {
              const body = await armGetJson(instanceViewUrl(out.vmId), InstanceViewResponseSchema, `instance view of VM ${out.vmName}`, http, await token(), HINTS);
              return vmEvidence(out.vmName, out.vmId, body);
            } catch (e) {
              return { name: out.vmName, id: out.vmId, read: "failed" as const, reason: message(e) };
            }
          })();
          const ppg: Promise<PpgEvidence | undefined> = (async () => {
            if (h.ppg === null) return undefined;
            if (!out.ppgId) return { name: h.ppg, status: "Unknown" as const, reason: "the stack outputs carry no PPG id for this host (a stack deployed by an older latlab)" };
            try {
              return ppgEvidence(h.ppg, out.ppgId, await readPpg(out.ppgId, `colocation status of PPG ${out.ppgId.split("/").pop()}`), out.vmId);
            } catch (e) {
              return { name: h.ppg, id: out.ppgId, status: "Unknown" as const, reason: `not read: ${message(e)}` };
            }
          })();
          const [vmRead, ppgRead] = await Promise.all([vm, ppg]);
          result[`${d.id}/${h.role}`] = HostPlacementSchema.parse({ readAt, source, ...(ppgRead ? { ppg: ppgRead } : {}), vm: vmRead });
        })(),
      );
    }
  }
  await Promise.all(work);
  return result;
}

/**
 * Reads the evidence and puts it on each host (`placement`), logging one line per PPG and per
 * host whose VM could not be read. Never throws: a reader that fails leaves the hosts without evidence.
 */
export async function attachPlacement(plan: Plan, outputs: AzureOutputs, hosts: HostEndpoint[], read: PlacementReader, log: (message: string) => void): Promise<void> {
  let byHost: PlacementByHost;
  try {
    byHost = await read(plan, outputs);
  } catch (e) {
    log(`azure: placement evidence not read: ${message(e)}`);
    return;
  }
  const said = new Set<string>();
  for (const h of hosts) {
    const p = byHost[`${h.deployment}/${h.role}`];
    if (!p) continue;
    h.placement = p;
    if (p.ppg && !said.has(`${h.deployment}/${p.ppg.name}`)) {
      said.add(`${h.deployment}/${p.ppg.name}`);
      const warn = p.ppg.status === "Aligned" ? "" : " — comparisons on these hosts will say so";
      log(`azure: placement: deployment ${h.deployment}, PPG '${p.ppg.name}': ${ppgDetail(p.ppg)}${p.source === "emulator" ? " (the emulator's say-so)" : ""}${warn}`);
    }
    if (p.vm.read === "failed") log(`azure: placement: ${h.deployment}/${h.role}: instance view ${vmDetail(p.vm)}`);
  }
}
