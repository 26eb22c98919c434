import type { Definition, SchemaNode } from "./excerptSchema.ts";

/**
 * x-ms-client-flatten both ways, the way the SDK generators (and so @pulumi/azure-native) apply
 * it: the members of a property marked flatten (usually `properties`) appear as members of the
 * object that holds it, recursively (a NIC's ipConfigurations[i] has its own flattened
 * `properties`; IpamPoolPrefixAllocation.pool is flattened to `id`).
 *
 * When a hoisted name would clash with a member of the outer object the outer one wins (it is
 * processed first); the inner one stays reachable by sending the container explicitly. No type
 * latlab uses has such a clash (armSpec.test.ts checks).
 */

export type Definitions = Readonly<Record<string, Definition>>;
type Obj = Record<string, unknown>;

export const isPlainObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

export interface SdkMember {
  /** ARM keys from the object to the member, e.g. ["properties", "enableAcceleratedNetworking"]. */
  path: readonly string[];
  schema: SchemaNode;
}

const viewCache = new WeakMap<Definitions, Map<string, ReadonlyMap<string, SdkMember>>>();

/** The members an SDK shows for a definition: name → where it lives in the ARM object. */
export function sdkView(defs: Definitions, key: string, stack: readonly string[] = []): ReadonlyMap<string, SdkMember> {
  let perDefs = viewCache.get(defs);
  if (perDefs === undefined) viewCache.set(defs, (perDefs = new Map()));
  const cached = perDefs.get(key);
  if (cached !== undefined) return cached;
  if (stack.includes(key)) throw new Error(`x-ms-client-flatten cycle: ${[...stack, key].join(" → ")}`);
  const def = defs[key];
  if (def === undefined) throw new Error(`no definition ${key}`);
  const view = new Map<string, SdkMember>();
  const props = Object.entries(def.properties ?? {});
  for (const [name, schema] of props) if (!(schema.flatten && schema.$ref)) view.set(name, { path: [name], schema });
  for (const [name, schema] of props) {
    if (!(schema.flatten && schema.$ref)) continue;
    for (const [inner, m] of sdkView(defs, schema.$ref, [...stack, key])) {
      if (!view.has(inner)) view.set(inner, { path: [name, ...m.path], schema: m.schema });
    }
  }
  perDefs.set(key, view);
  return view;
}

/** Hoisted names that an outer member hides (see the header), per definition. */
export function flattenClashes(defs: Definitions, key: string): string[] {
  const def = defs[key];
  const clashes: string[] = [];
  for (const [name, schema] of Object.entries(def?.properties ?? {})) {
    if (!(schema.flatten && schema.$ref)) continue;
    for (const [inner, m] of sdkView(defs, schema.$ref)) {
      const seen = sdkView(defs, key).get(inner);
      if (seen !== undefined && seen.path.join(".") !== [name, ...m.path].join(".")) clashes.push(`${key}: ${inner}`);
    }
  }
  return clashes;
}

function convertValue(defs: Definitions, schema: SchemaNode, value: unknown, dir: "toArm" | "toSdk"): unknown {
  if (schema.$ref !== undefined && isPlainObject(value)) return dir === "toArm" ? toArm(defs, schema.$ref, value) : toSdk(defs, schema.$ref, value);
  if (schema.items !== undefined && Array.isArray(value)) return value.map((v) => convertValue(defs, schema.items!, v, dir));
  if (isPlainObject(schema.additionalProperties) && isPlainObject(value)) {
    const ap = schema.additionalProperties;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, convertValue(defs, ap, v, dir)]));
  }
  return value;
}

function mergeMissing(target: Obj, source: Obj): void {
  for (const [k, v] of Object.entries(source)) {
    if (!(k in target)) target[k] = v;
    else if (isPlainObject(target[k]) && isPlainObject(v)) mergeMissing(target[k] as Obj, v);
  }
}

/** SDK-shaped object of definition `key` → ARM-shaped. Unknown members stay where they were given. */
export function toArm(defs: Definitions, key: string, sdk: Obj): Obj {
  const view = sdkView(defs, key);
  const out: Obj = {};
  const unknown: Obj = {};
  for (const [k, v] of Object.entries(sdk)) {
    if (v === undefined) continue;
    const member = view.get(k);
    if (member === undefined) {
      unknown[k] = v;
      continue;
    }
    let at = out;
    for (const seg of member.path.slice(0, -1)) {
      if (!isPlainObject(at[seg])) at[seg] = {};
      at = at[seg] as Obj;
    }
    at[member.path[member.path.length - 1]!] = convertValue(defs, member.schema, v, "toArm");
  }
  // An unknown member (or an explicit container such as `properties`) is passed through; what
  // the flattened members produced takes precedence inside a shared container.
  mergeMissing(out, structuredClone(unknown));
  return out;
}

/** ARM-shaped object of definition `key` → SDK-shaped (the outputs Pulumi sees). */
export function toSdk(defs: Definitions, key: string, arm: Obj): Obj {
  const def = defs[key];
  if (def === undefined) throw new Error(`no definition ${key}`);
  const props = def.properties ?? {};
  const out: Obj = {};
  const hoisted: [string, unknown][] = [];
  for (const [k, v] of Object.entries(arm)) {
    const schema = props[k];
    if (schema === undefined) {
      out[k] = isPlainObject(def.additionalProperties) ? convertValue(defs, def.additionalProperties, v, "toSdk") : v;
    } else if (schema.flatten && schema.$ref !== undefined && isPlainObject(v)) {
      hoisted.push(...Object.entries(toSdk(defs, schema.$ref, v)));
    } else {
      out[k] = convertValue(defs, schema, v, "toSdk");
    }
  }
  for (const [k, v] of hoisted) if (!(k in out)) out[k] = v;
  return out;
}
