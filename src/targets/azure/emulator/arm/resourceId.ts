/**
 * ARM resource ids, parsed and compared as ARM does: case-insensitively, with the provider
 * namespace and the chain of type/name segments after it. Pure.
 *
 *   /subscriptions/{s}/resourceGroups/{rg}
 *   /subscriptions/{s}/resourceGroups/{rg}/providers/Microsoft.Network/virtualNetworks/{v}/subnets/{n}
 */

export interface ResourceId {
  /** The id as given (case kept: ARM echoes what the creator wrote). */
  id: string;
  /** Lower-cased id: ARM ids compare case-insensitively. */
  key: string;
  subscription: string;
  resourceGroup: string;
  /** "Microsoft.Resources/resourceGroups", "Microsoft.Network/virtualNetworks/subnets", … */
  type: string;
  name: string;
  /** The id of the enclosing resource (a subnet's VNet); the resource group for a top-level resource; undefined for a group. */
  parent?: string;
}

export const RESOURCE_GROUP_TYPE = "Microsoft.Resources/resourceGroups";

export class ResourceIdError extends Error {}

export const idKey = (id: string) => id.toLowerCase().replace(/\/+$/, "");

export function parseResourceId(id: string): ResourceId {
  const clean = id.replace(/\/+$/, "");
  const parts = clean.split("/");
  // "", "subscriptions", s, "resourceGroups", rg, ["providers", ns, type, name, (type, name)*]
  if (parts[0] !== "" || parts[1]?.toLowerCase() !== "subscriptions" || !parts[2] || parts[3]?.toLowerCase() !== "resourcegroups" || !parts[4]) {
    throw new ResourceIdError(`"${id}" is not a resource id of the form /subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}[/providers/…]`);
  }
  const subscription = parts[2];
  const resourceGroup = parts[4];
  const groupId = parts.slice(0, 5).join("/");
  if (parts.length === 5) return { id: clean, key: idKey(clean), subscription, resourceGroup, type: RESOURCE_GROUP_TYPE, name: resourceGroup };
  if (parts[5]?.toLowerCase() !== "providers" || !parts[6]) throw new ResourceIdError(`"${id}": expected /providers/{namespace}/… after the resource group`);
  const rest = parts.slice(7);
  if (rest.length === 0 || rest.length % 2 !== 0 || rest.some((p) => p === "")) throw new ResourceIdError(`"${id}": expected {type}/{name} pairs after /providers/${parts[6]}`);
  const types: string[] = [];
  for (let i = 0; i < rest.length; i += 2) types.push(rest[i]!);
  const name = rest[rest.length - 1]!;
  const parent = rest.length > 2 ? [...parts.slice(0, 7), ...rest.slice(0, -2)].join("/") : groupId;
  return { id: clean, key: idKey(clean), subscription, resourceGroup, type: `${parts[6]}/${types.join("/")}`, name, parent };
}

/** The id of a resource of `type` named `names` (one name per type segment) in a group. */
export function formatResourceId(subscription: string, resourceGroup: string, type: string, names: readonly string[]): string {
  const group = `/subscriptions/${subscription}/resourceGroups/${resourceGroup}`;
  if (type.toLowerCase() === RESOURCE_GROUP_TYPE.toLowerCase()) return group;
  const [namespace, ...segments] = type.split("/");
  if (segments.length !== names.length) throw new ResourceIdError(`type ${type} needs ${segments.length} names, got ${names.length}`);
  return `${group}/providers/${namespace}/${segments.map((s, i) => `${s}/${names[i]}`).join("/")}`;
}

export const sameType = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * Every `{ "id": "/subscriptions/…" }` reference in a request body, with the JSON path it sits
 * at (what ARM resolves before it accepts a PUT: a NIC's subnet, a VM's NICs, a peering's
 * remote VNet…). The resource's own top-level `id` is not a reference.
 */
export function references(body: unknown, path = ""): { path: string; id: string }[] {
  const out: { path: string; id: string }[] = [];
  const walk = (v: unknown, p: string) => {
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${p}[${i}]`));
    else if (v && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) {
        const at = p ? `${p}.${k}` : k;
        if (k === "id" && typeof x === "string" && p !== "" && /^\/subscriptions\//i.test(x)) out.push({ path: p, id: x });
        else walk(x, at);
      }
    }
  };
  walk(body, path);
  return out;
}
