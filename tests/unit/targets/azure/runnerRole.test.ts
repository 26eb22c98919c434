import * as pulumi from "@pulumi/pulumi";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import type { Plan } from "../../../../src/plan/types.ts";
import { networkUsagesUrl, skusUrl, usagesUrl } from "../../../../src/targets/azure/catalog/computeCapacity.ts";
import { colocationStatusUrl, instanceViewUrl } from "../../../../src/targets/azure/lifecycle/placementEvidence.ts";
import { settingsFor, shippedExperimentPlans } from "./helpers.ts";

/**
 * docs/azure/latlab-runner-role.json is the custom role the scheduled GitHub workflow's identity
 * gets. This test derives, from the code, every Azure RBAC action latlab needs — the resource
 * types the Pulumi program declares for every shipped experiment (run under Pulumi's mocks),
 * the resources they reference (join actions), the async operations their providers return, and
 * latlab's own ARM calls — and checks the role grants exactly that: a new resource type, a new
 * reference or a new ARM call fails here until the role (and docs/azure/README.md) say why.
 */

const ROOT = join(import.meta.dirname, "../../../..");
const ROLE_FILE = join(ROOT, "docs/azure/latlab-runner-role.json");
const ROLE_DOC = join(ROOT, "docs/azure/README.md");

interface RoleDefinition {
  Name: string;
  IsCustom: boolean;
  Description: string;
  Actions: string[];
  NotActions: string[];
  DataActions?: string[];
  NotDataActions?: string[];
  AssignableScopes: string[];
}
const role = JSON.parse(readFileSync(ROLE_FILE, "utf8")) as RoleDefinition;
/** RBAC action strings are case-insensitive. */
const granted = new Set(role.Actions.map((a) => a.toLowerCase()));
const grants = (action: string) => granted.has(action.toLowerCase());

/**
 * ARM resource type of each azure-native token the program may declare, and the input holding
 * its Azure name. A token missing here fails the test: add it, then its read/write/delete (and
 * any join) to the role.
 */
const TYPES: Record<string, { arm: string; nameInput: string }> = {
  "azure-native:resources:ResourceGroup": { arm: "Microsoft.Resources/subscriptions/resourceGroups", nameInput: "resourceGroupName" },
  "azure-native:network:VirtualNetwork": { arm: "Microsoft.Network/virtualNetworks", nameInput: "virtualNetworkName" },
  "azure-native:network:Subnet": { arm: "Microsoft.Network/virtualNetworks/subnets", nameInput: "subnetName" },
  "azure-native:network:VirtualNetworkPeering": { arm: "Microsoft.Network/virtualNetworks/virtualNetworkPeerings", nameInput: "virtualNetworkPeeringName" },
  "azure-native:network:NetworkSecurityGroup": { arm: "Microsoft.Network/networkSecurityGroups", nameInput: "networkSecurityGroupName" },
  "azure-native:network:PublicIPAddress": { arm: "Microsoft.Network/publicIPAddresses", nameInput: "publicIpAddressName" },
  "azure-native:network:NetworkInterface": { arm: "Microsoft.Network/networkInterfaces", nameInput: "networkInterfaceName" },
  "azure-native:compute:ProximityPlacementGroup": { arm: "Microsoft.Compute/proximityPlacementGroups", nameInput: "proximityPlacementGroupName" },
  "azure-native:compute:AvailabilitySet": { arm: "Microsoft.Compute/availabilitySets", nameInput: "availabilitySetName" },
  "azure-native:compute:VirtualMachine": { arm: "Microsoft.Compute/virtualMachines", nameInput: "vmName" },
};

/**
 * What ARM checks on the *referenced* resource when one resource names another by id (a linked
 * access check). Keyed `<referencing ARM type> -> <referenced ARM type>`.
 */
const REFERENCE_ACTION: Record<string, string> = {
  // A NIC's IP configuration in a subnet, its NSG and its public IP: "Joins …" actions.
  "Microsoft.Network/networkInterfaces -> Microsoft.Network/virtualNetworks/subnets": "Microsoft.Network/virtualNetworks/subnets/join/action",
  "Microsoft.Network/networkInterfaces -> Microsoft.Network/networkSecurityGroups": "Microsoft.Network/networkSecurityGroups/join/action",
  "Microsoft.Network/networkInterfaces -> Microsoft.Network/publicIPAddresses": "Microsoft.Network/publicIPAddresses/join/action",
  // "Joins a Virtual Machine to a network interface."
  "Microsoft.Compute/virtualMachines -> Microsoft.Network/networkInterfaces": "Microsoft.Network/networkInterfaces/join/action",
  // Compute has no join action for PPGs and availability sets; write on them is what is checked
  // (Microsoft's AKS permission list: proximityPlacementGroups/write to place nodes in one).
  "Microsoft.Compute/virtualMachines -> Microsoft.Compute/proximityPlacementGroups": "Microsoft.Compute/proximityPlacementGroups/write",
  "Microsoft.Compute/virtualMachines -> Microsoft.Compute/availabilitySets": "Microsoft.Compute/availabilitySets/write",
  "Microsoft.Compute/availabilitySets -> Microsoft.Compute/proximityPlacementGroups": "Microsoft.Compute/proximityPlacementGroups/write",
  // The remote side of a peering: "Peers a virtual network with another virtual network".
  "Microsoft.Network/virtualNetworks/virtualNetworkPeerings -> Microsoft.Network/virtualNetworks": "Microsoft.Network/virtualNetworks/peer/action",
};

/** The long-running operations each provider namespace returns, polled by the Pulumi provider and @azure/arm-resources. */
const POLLING: Record<string, string[]> = {
  // Azure-AsyncOperation: …/providers/Microsoft.Network/locations/{l}/operations/{id}; Location: …/operationResults/{id}.
  "Microsoft.Network": ["Microsoft.Network/locations/operations/read", "Microsoft.Network/locations/operationResults/read"],
  // …/providers/Microsoft.Compute/locations/{l}/operations/{id} (VM create and delete).
  "Microsoft.Compute": ["Microsoft.Compute/locations/operations/read"],
  // Resource group delete: Location …/subscriptions/{s}/operationresults/{id}.
  "Microsoft.Resources": ["Microsoft.Resources/subscriptions/operationresults/read"],
};

/** In the role without being derived from the code below: each with why. */
const JUSTIFIED_EXTRAS: Record<string, string> = {
  "Microsoft.Resources/subscriptions/read": "azure/login's `az login` + `az account set` must see the subscription (the CLI lists the subscriptions it can read)",
};

/** @azure/arm-resources calls in src (`arm.<group>.<method>(`) and what each needs. */
const ARM_SDK_CALL: Record<string, string[]> = {
  "resourceGroups.get": ["Microsoft.Resources/subscriptions/resourceGroups/read"],
  "resourceGroups.list": ["Microsoft.Resources/subscriptions/resourceGroups/read"],
  "resourceGroups.delete": ["Microsoft.Resources/subscriptions/resourceGroups/delete", "Microsoft.Resources/subscriptions/operationresults/read"],
  "resources.listByResourceGroup": ["Microsoft.Resources/subscriptions/resourceGroups/resources/read"],
};

const SUBSCRIPTION = "00000000-0000-0000-0000-000000000000";
const SECRET_SIG = "4dabf18193072939515e22adb298388d";

function unwrap(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(unwrap);
  if (value && typeof value === "object") {
    const o = value as Record<string, unknown>;
    if (SECRET_SIG in o && "value" in o) return unwrap(o.value);
    return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, unwrap(v)]));
  }
  return value;
}

/** `Microsoft.Network/virtualNetworks/subnets` of `/subscriptions/…/providers/Microsoft.Network/virtualNetworks/v/subnets/s`. */
function armTypeOfId(id: string): string {
  const parts = id.split("/").filter(Boolean);
  const p = parts.findIndex((s) => s.toLowerCase() === "providers");
  if (p < 0) {
    expect(parts.map((s, i) => (i % 2 === 0 ? s.toLowerCase() : "_")), id).toEqual(["subscriptions", "_", "resourcegroups", "_"]);
    return "Microsoft.Resources/subscriptions/resourceGroups";
  }
  const rest = parts.slice(p + 1);
  return [rest[0], ...rest.slice(1).filter((_, i) => i % 2 === 0)].join("/");
}

/** The read action of a GET on an ARM URL (`…/providers/NS/t1/n1/t2` → `NS/t1/t2/read`). */
function readActionOfUrl(url: string): string {
  const path = new URL(url).pathname;
  const parts = path.split("/").filter(Boolean);
  const p = parts.findIndex((s) => s.toLowerCase() === "providers");
  const rest = parts.slice(p + 1);
  return `${[rest[0], ...rest.slice(1).filter((_, i) => i % 2 === 0)].join("/")}/read`;
}

interface Declared {
  type: string;
  name: string;
  inputs: Record<string, unknown>;
}

function mockId(type: string, name: string, inputs: Record<string, unknown>): string {
  const rg = typeof inputs.resourceGroupName === "string" ? inputs.resourceGroupName : name;
  const base = `/subscriptions/${SUBSCRIPTION}/resourceGroups/${rg}`;
  if (type === "azure-native:resources:ResourceGroup") return base;
  const [ns, parent, child] = TYPES[type]!.arm.split("/");
  if (child) return `${base}/providers/${ns}/${parent}/${String(inputs.virtualNetworkName)}/${child}/${name}`;
  return `${base}/providers/${ns}/${parent}/${name}`;
}

/** Every resource the program declares for a plan, with its raw inputs (outputs resolved by the mocks). */
async function declared(plan: Plan): Promise<Declared[]> {
  const seen: Declared[] = [];
  await pulumi.runtime.setMocks(
    {
      newResource(args) {
        const inputs = unwrap(args.inputs) as Record<string, unknown>;
        const known = TYPES[args.type];
        const name = known && typeof inputs[known.nameInput] === "string" ? (inputs[known.nameInput] as string) : args.name;
        seen.push({ type: args.type, name, inputs });
        // Throwing here would not fail the test where it should: unknown types are asserted on below.
        if (!known) return { id: `/unknown/${args.type}/${name}`, state: { ...inputs, name } };
        const state: Record<string, unknown> = { ...inputs, name };
        if (args.type === "azure-native:network:PublicIPAddress") state.ipAddress = "198.19.255.1";
        return { id: mockId(args.type, name, inputs), state };
      },
      call: (args) => args.inputs,
    },
    "latlab",
    `role-${plan.experiment.name}`,
    false,
  );
  const { createProgram } = await import("../../../../src/targets/azure/program/program.ts");
  const out = await createProgram(plan, settingsFor(plan))();
  await new Promise<void>((resolve) => pulumi.all([out.resourceGroup, out.hosts]).apply(() => resolve()));
  const waitForRPCs = (pulumi.runtime as unknown as { waitForRPCs?: () => Promise<void> }).waitForRPCs;
  if (typeof waitForRPCs === "function") await waitForRPCs();
  const unknown = [...new Set(seen.filter((r) => !TYPES[r.type]).map((r) => r.type))];
  expect(unknown, "resource types without an ARM type: add them to TYPES, and their actions to docs/azure/latlab-runner-role.json").toEqual([]);
  return seen;
}

/** Every ARM id a resource's inputs hold, with where. */
function references(inputs: unknown, path = ""): { path: string; id: string }[] {
  if (typeof inputs === "string") return inputs.startsWith("/subscriptions/") ? [{ path, id: inputs }] : [];
  if (Array.isArray(inputs)) return inputs.flatMap((v, i) => references(v, `${path}[${i}]`));
  if (inputs && typeof inputs === "object") return Object.entries(inputs).flatMap(([k, v]) => references(v, path ? `${path}.${k}` : k));
  return [];
}

/** An action the role must grant, and why (for failure messages). */
type Need = { action: string; why: string };

/** What the program's resources need: CRUD per type, the linked checks of their references, implicit resources, polling. */
function programNeeds(resources: Declared[]): { needs: Need[]; referenceKinds: Set<string> } {
  const needs: Need[] = [];
  const referenceKinds = new Set<string>();
  const namespaces = new Set<string>();
  for (const r of resources) {
    const arm = TYPES[r.type]!.arm;
    namespaces.add(arm.split("/")[0]!);
    // Create/update (pulumi up), read (before create, after it, refresh), delete (destroy; and a resource group
    // delete needs delete on everything inside it).
    for (const verb of ["read", "write", "delete"]) needs.push({ action: `${arm}/${verb}`, why: `${r.type} ${r.name}` });
    for (const ref of references(r.inputs)) {
      const kind = `${arm} -> ${armTypeOfId(ref.id)}`;
      referenceKinds.add(kind);
      const action = REFERENCE_ACTION[kind];
      expect(action, `${r.type} ${r.name}.${ref.path} references ${ref.id} (${kind}): which action does ARM check on it? Add it to REFERENCE_ACTION and to the role`).toBeDefined();
      needs.push({ action: action!, why: `${r.type} ${r.name}.${ref.path} → ${ref.id}` });
    }
    if (r.type === "azure-native:compute:VirtualMachine") {
      // The OS disk is created from the image by Compute as a managed disk in the run's group (deleteOption Delete):
      // created with the VM, deleted with it, and deleted by a resource-group delete.
      const osDisk = (r.inputs.storageProfile as { osDisk?: { createOption?: string; managedDisk?: unknown } } | undefined)?.osDisk;
      expect(osDisk?.createOption, `${r.name}: OS disk`).toBe("FromImage");
      expect(osDisk?.managedDisk, `${r.name}: managed OS disk`).toBeDefined();
      for (const verb of ["read", "write", "delete"]) needs.push({ action: `Microsoft.Compute/disks/${verb}`, why: `managed OS disk of ${r.name}` });
    }
  }
  for (const ns of namespaces) {
    expect(POLLING[ns], `no async-operation actions known for ${ns}`).toBeDefined();
    for (const action of POLLING[ns]!) needs.push({ action, why: `async operations of ${ns}` });
  }
  return { needs, referenceKinds };
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) return f === "emulator" ? [] : sourceFiles(p);
    return p.endsWith(".ts") ? [p] : [];
  });
}

/** What latlab's own ARM calls need (outside the Pulumi program). */
function ownCallNeeds(): Need[] {
  const needs: Need[] = [];
  // computeCapacity.ts: raw GETs on the usages and SKUs lists.
  for (const url of [usagesUrl(SUBSCRIPTION, "eastus"), skusUrl(SUBSCRIPTION, "eastus"), networkUsagesUrl(SUBSCRIPTION, "eastus")]) needs.push({ action: readActionOfUrl(url), why: `GET ${new URL(url).pathname} (computeCapacity.ts)` });
  // placementEvidence.ts: after the deploy, each PPG's colocation status and each VM's instance view.
  const compute = `/subscriptions/${SUBSCRIPTION}/resourceGroups/rg/providers/Microsoft.Compute`;
  for (const url of [colocationStatusUrl(`${compute}/proximityPlacementGroups/p`), instanceViewUrl(`${compute}/virtualMachines/v`)]) needs.push({ action: readActionOfUrl(url), why: `GET ${new URL(url).pathname} (placementEvidence.ts)` });
  // @azure/arm-resources calls (runGroups.ts, sweeper.ts…): every `arm.<group>.<method>(` in src.
  const calls = new Map<string, string[]>();
  for (const file of sourceFiles(join(ROOT, "src"))) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/import\(\s*"(@azure\/arm-[^"]+)"\s*\)|from\s+"(@azure\/arm-[^"]+)"/g)) {
      expect(m[1] ?? m[2], `${relative(ROOT, file)} uses another ARM SDK: list its calls in ARM_SDK_CALL`).toBe("@azure/arm-resources");
    }
    for (const m of text.matchAll(/\barm\.(\w+)\.(\w+)\(/g)) calls.set(`${m[1]}.${m[2]}`, [...(calls.get(`${m[1]}.${m[2]}`) ?? []), relative(ROOT, file)]);
  }
  expect([...calls.keys()].length, "no @azure/arm-resources calls found in src: the scan is broken").toBeGreaterThan(0);
  for (const [call, files] of calls) {
    expect(ARM_SDK_CALL[call], `arm.${call}( in ${files.join(", ")}: which actions does it need? Add it to ARM_SDK_CALL and to the role`).toBeDefined();
    for (const action of ARM_SDK_CALL[call]!) needs.push({ action, why: `arm.${call} (${[...new Set(files)].join(", ")})` });
  }
  return needs;
}

describe("docs/azure/latlab-runner-role.json (the scheduled workflow's custom role)", () => {
  it("is an `az role definition create` document, subscription-scoped, with no wildcard and nothing beyond control-plane actions", () => {
    expect(role.Name).toBe("latlab runner");
    expect(role.IsCustom).toBe(true);
    expect(role.Description.length).toBeGreaterThan(20);
    expect(role.NotActions).toEqual([]);
    expect(role.DataActions ?? []).toEqual([]);
    expect(role.NotDataActions ?? []).toEqual([]);
    // The README's `sed` replaces this placeholder; a resource group cannot be the scope (latlab creates one per run).
    expect(role.AssignableScopes).toEqual(["/subscriptions/<SUBSCRIPTION_ID>"]);
    expect(role.Actions.filter((a) => a.includes("*")), "wildcards").toEqual([]);
    expect(new Set(role.Actions.map((a) => a.toLowerCase())).size, "duplicates").toBe(role.Actions.length);
    for (const a of role.Actions) expect(a).toMatch(/^Microsoft\.(Resources|Network|Compute)\/[A-Za-z/]+\/(read|write|delete|action)$/);
    // Nothing that could grant access, register providers, or touch storage or secrets.
    expect(role.Actions.filter((a) => /Authorization|register|Storage|KeyVault|listKeys/i.test(a))).toEqual([]);
  });

  it("grants exactly what the code needs: every resource type of every shipped experiment, every reference, polling, and latlab's own ARM calls", async () => {
    const plans = await shippedExperimentPlans();
    expect(plans.filter((p) => p.error).map((p) => `${p.name}: ${p.error}`)).toEqual([]);
    expect(plans.length).toBeGreaterThanOrEqual(5);

    const needs: Need[] = [];
    const types = new Set<string>();
    const referenceKinds = new Set<string>();
    for (const { name, plan } of plans) {
      const resources = await declared(plan!);
      expect(resources.length, name).toBeGreaterThan(0);
      for (const r of resources) types.add(r.type);
      const program = programNeeds(resources);
      needs.push(...program.needs.map((n) => ({ ...n, why: `${name}: ${n.why}` })));
      for (const k of program.referenceKinds) referenceKinds.add(k);
    }
    needs.push(...ownCallNeeds());

    // The shipped experiments between them exercise every type and every reference the program knows;
    // a type or reference no experiment uses any more should leave the role too.
    expect([...types].sort()).toEqual(Object.keys(TYPES).sort());
    expect([...referenceKinds].sort()).toEqual(Object.keys(REFERENCE_ACTION).sort());

    const missing = [...new Map(needs.filter((n) => !grants(n.action)).map((n) => [n.action, n.why])).entries()].map(([a, why]) => `${a} (needed by ${why})`);
    expect(missing.join("\n"), "actions the role lacks").toBe("");

    // Least privilege: nothing in the role that nothing needs.
    const needed = new Set([...needs.map((n) => n.action.toLowerCase()), ...Object.keys(JUSTIFIED_EXTRAS).map((a) => a.toLowerCase())]);
    expect(role.Actions.filter((a) => !needed.has(a.toLowerCase())).join("\n"), "actions nothing needs").toBe("");
  }, 120_000);

  it("names the join actions of a NIC (subnet, NSG, public IP) and of a VM (NIC), and the remote side of a peering", () => {
    for (const a of [
      "Microsoft.Network/virtualNetworks/subnets/join/action",
      "Microsoft.Network/networkSecurityGroups/join/action",
      "Microsoft.Network/publicIPAddresses/join/action",
      "Microsoft.Network/networkInterfaces/join/action",
      "Microsoft.Network/virtualNetworks/peer/action",
    ]) expect(grants(a), a).toBe(true);
  });

  it("reads the Compute quotas and SKUs the capacity check asks for", () => {
    expect(readActionOfUrl(usagesUrl(SUBSCRIPTION, "uksouth"))).toBe("Microsoft.Compute/locations/usages/read");
    expect(readActionOfUrl(skusUrl(SUBSCRIPTION, "uksouth"))).toBe("Microsoft.Compute/skus/read");
    expect(grants("Microsoft.Compute/locations/usages/read") && grants("Microsoft.Compute/skus/read")).toBe(true);
  });

  it("every action is justified in docs/azure/README.md", () => {
    const doc = readFileSync(ROLE_DOC, "utf8");
    const rows = new Set([...doc.matchAll(/^\|\s*`([^`]+)`\s*\|/gm)].map((m) => m[1]!.toLowerCase()));
    expect(role.Actions.filter((a) => !rows.has(a.toLowerCase())).join("\n"), "actions without a row in the table").toBe("");
    expect([...rows].filter((a) => a.startsWith("microsoft.") && !granted.has(a)).join("\n"), "rows for actions the role does not grant").toBe("");
  });
});
