import { posix } from "node:path";
import {
  ExcerptFileSchema,
  JsonTypeSchema,
  type Definition,
  type ExcerptFile,
  type JsonType,
  type ResourceTypeSpec,
  type SchemaNode,
} from "./excerptSchema.ts";

/**
 * The pure part of extractSpec.ts: from swagger files (given by a reader, so tests can feed
 * small hand-made specs) to one excerpt per resource provider and api-version. What it keeps and
 * why is in excerptSchema.ts and README.md.
 *
 * Two choices worth knowing:
 * - A readOnly property is kept as `{ readOnly: true }` and its `$ref` is not followed. ARM
 *   ignores what a client sends there, so nothing under it is ever checked or unflattened; and
 *   following them would pull in most of the network spec (Subnet.ipConfigurations →
 *   IPConfiguration → …, PrivateEndpoint, FlowLog) for nothing.
 * - Enums the spec itself calls deprecated lists of examples are marked open (OPEN_ENUMS).
 */

export interface ExtractTypeEntry {
  /** ARM resource type, e.g. Microsoft.Network/virtualNetworks/subnets. */
  armType: string;
  /** Repository path of the swagger file holding its PUT operation. */
  file: string;
}

export interface ExtractPlanEntry {
  provider: string;
  apiVersion: string;
  types: ExtractTypeEntry[];
}

/** Reads a repository-relative swagger file and returns its parsed JSON; throws when absent. */
export type ReadSpecFile = (repoPath: string) => unknown;

export interface ExtractOutput {
  /** Without `source.revision`/notes: the caller knows where the files came from. */
  excerpt: ExcerptFile;
  /** Every swagger file read, in first-read order. */
  filesRead: string[];
  /** Things the extractor dropped or guessed, for the README (e.g. a `type` that is not a JSON type). */
  warnings: string[];
}

/**
 * `<definition>.<property>` (swagger names) whose enum is not the allowed set.
 * HardwareProfile.vmSize: the spec's description says "The enum data type is currently deprecated
 * and will be removed by December 23rd 2023" and lists sizes up to the v3 generation only; Azure
 * accepts every size a region offers (Standard_D2s_v5, Standard_F8s_v2 is listed but D4s_v5 is not).
 */
export const OPEN_ENUMS: Readonly<Record<string, string>> = {
  "HardwareProfile.vmSize": "the spec's description: the enum data type is deprecated; Azure accepts any size the region offers",
};

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** `./network.json#/definitions/SubResource` from `dir/virtualNetwork.json` → file and pointer. */
export function resolveRef(fromFile: string, ref: string): { file: string; pointer: string } {
  const hash = ref.indexOf("#");
  const filePart = hash < 0 ? ref : ref.slice(0, hash);
  const pointer = hash < 0 ? "" : ref.slice(hash + 1);
  const file = filePart === "" ? fromFile : posix.normalize(posix.join(posix.dirname(fromFile), filePart));
  return { file, pointer };
}

function fileStem(file: string): string {
  return posix.basename(file).replace(/\.json$/, "");
}

class Extractor {
  private readonly cache = new Map<string, Json>();
  readonly filesRead: string[] = [];
  private readonly warningSet = new Set<string>();
  get warnings(): string[] {
    return [...this.warningSet];
  }
  readonly definitions = new Map<string, Definition>();
  /** `file#name` → key, and key → `file#name` (to detect two files claiming one name). */
  private readonly keyOf = new Map<string, string>();
  private readonly owner = new Map<string, string>();

  private readonly read: ReadSpecFile;

  constructor(read: ReadSpecFile) {
    this.read = read;
  }

  doc(file: string): Json {
    let d = this.cache.get(file);
    if (d === undefined) {
      const parsed = this.read(file);
      if (!isObject(parsed)) throw new Error(`${file}: not a JSON object`);
      d = parsed;
      this.cache.set(file, d);
      this.filesRead.push(file);
    }
    return d;
  }

  node(file: string, pointer: string): unknown {
    let cur: unknown = this.doc(file);
    for (const raw of pointer.split("/").filter((s) => s !== "")) {
      const seg = raw.replace(/~1/g, "/").replace(/~0/g, "~");
      if (!isObject(cur) || !(seg in cur)) throw new Error(`${file}#${pointer}: not found`);
      cur = cur[seg];
    }
    return cur;
  }

  private claimKey(file: string, name: string): string {
    const id = `${file}#${name}`;
    const known = this.keyOf.get(id);
    if (known !== undefined) return known;
    let key = name;
    if (this.owner.has(key) && this.owner.get(key) !== id) key = `${fileStem(file)}.${name}`;
    if (this.owner.has(key) && this.owner.get(key) !== id) throw new Error(`definition key ${key} claimed by ${this.owner.get(key)} and ${id}`);
    this.keyOf.set(id, key);
    this.owner.set(key, id);
    return key;
  }

  /** The key of definition `name` of `file`, extracting it (and what it references) on first use. */
  definition(file: string, name: string): string {
    const id = `${file}#${name}`;
    const known = this.keyOf.get(id);
    if (known !== undefined) return known;
    const key = this.claimKey(file, name);
    const raw = this.node(file, `/definitions/${name}`);
    if (!isObject(raw)) throw new Error(`${id}: not a schema`);
    this.definitions.set(key, {}); // placeholder first: recursive references find the key
    this.definitions.set(key, this.objectDefinition(file, raw, key, name));
    return key;
  }

  /** Merges allOf parents (recursively) and converts the properties of an object schema. */
  private objectDefinition(file: string, schema: Json, key: string, swaggerName: string): Definition {
    const properties: Record<string, SchemaNode> = {};
    const required = new Set<string>();
    let additionalProperties: SchemaNode | boolean | undefined;
    const visit = (f: string, s: Json, name: string): void => {
      for (const parent of Array.isArray(s.allOf) ? s.allOf : []) {
        if (!isObject(parent)) continue;
        if (typeof parent.$ref === "string") {
          const { file: pf, pointer } = resolveRef(f, parent.$ref);
          const p = this.node(pf, pointer);
          if (isObject(p)) visit(pf, p, pointer.split("/").pop() ?? name);
        } else visit(f, parent, name);
      }
      if (isObject(s.properties)) {
        for (const [prop, ps] of Object.entries(s.properties)) {
          if (isObject(ps)) properties[prop] = this.schema(f, ps, key, prop, `${name}.${prop}`);
        }
      }
      for (const r of Array.isArray(s.required) ? s.required : []) if (typeof r === "string") required.add(r);
      if (s.additionalProperties !== undefined) additionalProperties = this.additional(f, s.additionalProperties, key, "{}");
    };
    visit(file, schema, swaggerName);
    const def: Definition = { type: "object" };
    if (Object.keys(properties).length > 0) def.properties = properties;
    if (required.size > 0) def.required = [...required];
    if (additionalProperties !== undefined) def.additionalProperties = additionalProperties;
    return def;
  }

  private additional(file: string, ap: unknown, ownerKey: string, label: string): SchemaNode | boolean {
    if (typeof ap === "boolean") return ap;
    if (!isObject(ap)) return true;
    return this.schema(file, ap, ownerKey, label, `${ownerKey}.${label}`);
  }

  private jsonType(t: unknown, where: string): JsonType | undefined {
    if (t === undefined) return undefined;
    const parsed = JsonTypeSchema.safeParse(t);
    if (parsed.success) return parsed.data;
    this.warningSet.add(`${where}: type ${JSON.stringify(t)} is not a JSON type; left unchecked`);
    return undefined;
  }

  /** A property (or items / additionalProperties) schema. `label` names inline definitions. */
  private schema(file: string, s: Json, ownerKey: string, label: string, swaggerPath: string): SchemaNode {
    const out: SchemaNode = {};
    if (s.readOnly === true) out.readOnly = true;
    if (s["x-ms-client-flatten"] === true) out.flatten = true;
    // `allOf: [ { $ref } ]` on a property is a $ref with a description (PrivateLinkService.visibility).
    let ref = typeof s.$ref === "string" ? s.$ref : undefined;
    if (ref === undefined && Array.isArray(s.allOf) && s.allOf.length === 1 && isObject(s.allOf[0]) && typeof s.allOf[0].$ref === "string" && !isObject(s.properties)) {
      ref = s.allOf[0].$ref;
    }
    if (ref !== undefined) {
      if (out.readOnly) return out; // ignored by ARM: not followed (see the header)
      const { file: tf, pointer } = resolveRef(file, ref);
      const target = this.node(tf, pointer);
      if (!isObject(target)) throw new Error(`${file}: ${ref} is not a schema`);
      const name = pointer.split("/").pop() ?? "";
      if (target.readOnly === true) return { ...out, readOnly: true };
      if (this.isPrimitive(target)) return { ...this.primitive(tf, target, `${fileStem(tf)}#${name}`, swaggerPath), ...out };
      return { ...out, $ref: this.definition(tf, name) };
    }
    const type = this.jsonType(s.type, `${file}: ${swaggerPath}`);
    if (out.readOnly) return type === undefined ? out : { ...out, type };
    if (type === "array") {
      out.type = "array";
      if (isObject(s.items)) out.items = this.schema(file, s.items, ownerKey, `${label}[]`, `${swaggerPath}[]`);
      return out;
    }
    if (type === "object" || (type === undefined && (isObject(s.properties) || Array.isArray(s.allOf)))) {
      if (isObject(s.properties) || Array.isArray(s.allOf)) {
        // An inline model: a definition of its own so that flattening and messages can name it.
        const key = this.claimKey(`${file}@inline`, `${ownerKey}.${label}`);
        if (!this.definitions.has(key)) {
          this.definitions.set(key, {});
          this.definitions.set(key, this.objectDefinition(file, s, key, swaggerPath));
        }
        return { ...out, $ref: key };
      }
      out.type = "object";
      if (s.additionalProperties !== undefined) out.additionalProperties = this.additional(file, s.additionalProperties, ownerKey, `${label}{}`);
      return out;
    }
    return { ...this.primitive(file, s, swaggerPath, swaggerPath), ...out };
  }

  private isPrimitive(s: Json): boolean {
    return !isObject(s.properties) && !Array.isArray(s.allOf) && s.additionalProperties === undefined && s.type !== "object" && s.type !== "array";
  }

  private primitive(file: string, s: Json, where: string, swaggerPath: string): SchemaNode {
    const out: SchemaNode = {};
    const type = this.jsonType(s.type, `${file}: ${where}`);
    if (type !== undefined) out.type = type;
    if (typeof s.format === "string") out.format = s.format;
    if (Array.isArray(s.enum)) {
      const values = s.enum.filter((v): v is string => typeof v === "string");
      if (values.length > 0) {
        out.enum = values;
        const xms = s["x-ms-enum"];
        // Without x-ms-enum autorest models the enum as closed; so does the RP's deserializer.
        out.modelAsString = isObject(xms) && xms.modelAsString === true;
        if (swaggerPath in OPEN_ENUMS) out.openEnum = true;
      }
    }
    return out;
  }

  /** The PUT operation of an ARM type in `file`. */
  resourceType(entry: ExtractTypeEntry, apiVersion: string): ResourceTypeSpec {
    const paths = this.doc(entry.file).paths;
    if (!isObject(paths)) throw new Error(`${entry.file}: no paths`);
    const pattern = pathPattern(entry.armType);
    const matches = Object.keys(paths).filter((p) => pattern.test(p) && isObject(paths[p]) && isObject((paths[p] as Json).put));
    if (matches.length !== 1) throw new Error(`${entry.file}: ${matches.length} PUT paths for ${entry.armType} (${matches.join(", ")})`);
    const pathTemplate = matches[0]!;
    const put = (paths[pathTemplate] as Json).put as Json;
    const params = (Array.isArray(put.parameters) ? put.parameters : []).map((p) => {
      if (isObject(p) && typeof p.$ref === "string") {
        const { file: pf, pointer } = resolveRef(entry.file, p.$ref);
        return this.node(pf, pointer);
      }
      return p;
    });
    let body: string | undefined;
    const queryParams: string[] = [];
    for (const p of params) {
      if (!isObject(p)) continue;
      if (p.in === "body" && isObject(p.schema) && typeof p.schema.$ref === "string") {
        const { file: bf, pointer } = resolveRef(entry.file, p.schema.$ref);
        body = this.definition(bf, pointer.split("/").pop() ?? "");
      }
      if (p.in === "query" && typeof p.name === "string" && p.name !== "api-version") queryParams.push(p.name);
    }
    if (body === undefined) throw new Error(`${entry.file}: PUT ${pathTemplate} has no body schema`);
    const pathParams = [...pathTemplate.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!).filter((n) => n !== "subscriptionId");
    return {
      apiVersion,
      pathTemplate,
      pathParams,
      queryParams,
      operationId: typeof put.operationId === "string" ? put.operationId : "",
      body,
      file: entry.file,
    };
  }
}

/**
 * The swagger path of an ARM type's PUT: resource groups at the subscription, everything else
 * under /providers/<namespace>/<type>/{name}[/<child>/{name}…] in a resource group.
 */
export function pathPattern(armType: string): RegExp {
  const [namespace, ...types] = armType.split("/");
  const name = "\\{[^}/]+\\}";
  if (armType.toLowerCase() === "microsoft.resources/resourcegroups") {
    return new RegExp(`^/subscriptions/\\{subscriptionId\\}/resourcegroups/${name}$`, "i");
  }
  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const tail = types.map((t) => `/${esc(t)}/${name}`).join("");
  return new RegExp(`^/subscriptions/\\{subscriptionId\\}/resourceGroups/${name}/providers/${esc(namespace ?? "")}${tail}$`, "i");
}

/** Extracts one excerpt file. `source` is recorded as given (the caller knows the revision). */
export function extractExcerpt(
  entry: ExtractPlanEntry,
  read: ReadSpecFile,
  source: { repository: string; revision: string | null; commitOf?: (file: string) => string | null; noteOf?: (file: string) => string | undefined },
): ExtractOutput {
  const x = new Extractor(read);
  const resourceTypes: Record<string, ResourceTypeSpec> = {};
  for (const t of entry.types) resourceTypes[t.armType] = x.resourceType(t, entry.apiVersion);
  const definitions: Record<string, Definition> = {};
  for (const key of [...x.definitions.keys()].sort()) definitions[key] = x.definitions.get(key)!;
  const files = x.filesRead.map((path) => {
    const note = source.noteOf?.(path);
    return { path, commit: source.commitOf?.(path) ?? source.revision, ...(note !== undefined ? { note } : {}) };
  });
  const excerpt = ExcerptFileSchema.parse({
    format: "latlab-arm-spec-excerpt/1",
    provider: entry.provider,
    apiVersion: entry.apiVersion,
    source: { repository: source.repository, revision: source.revision, files },
    resourceTypes,
    definitions,
  });
  return { excerpt, filesRead: x.filesRead, warnings: x.warnings };
}

/**
 * Compact, diffable JSON: one resource type and one definition per line.
 */
export function formatExcerpt(excerpt: ExcerptFile): string {
  const lines: string[] = ["{"];
  const top = (k: string, v: unknown, last = false) => lines.push(` ${JSON.stringify(k)}: ${JSON.stringify(v)}${last ? "" : ","}`);
  top("format", excerpt.format);
  top("provider", excerpt.provider);
  top("apiVersion", excerpt.apiVersion);
  lines.push(` "source": {`);
  lines.push(`  "repository": ${JSON.stringify(excerpt.source.repository)},`);
  lines.push(`  "revision": ${JSON.stringify(excerpt.source.revision)},`);
  lines.push(`  "files": [`);
  excerpt.source.files.forEach((f, i) => lines.push(`   ${JSON.stringify(f)}${i < excerpt.source.files.length - 1 ? "," : ""}`));
  lines.push("  ]");
  lines.push(" },");
  const block = (name: string, obj: Record<string, unknown>, last: boolean) => {
    const entries = Object.entries(obj);
    lines.push(` ${JSON.stringify(name)}: {`);
    entries.forEach(([k, v], i) => lines.push(`  ${JSON.stringify(k)}: ${JSON.stringify(v)}${i < entries.length - 1 ? "," : ""}`));
    lines.push(` }${last ? "" : ","}`);
  };
  block("resourceTypes", excerpt.resourceTypes, false);
  block("definitions", excerpt.definitions, true);
  lines.push("}");
  return `${lines.join("\n")}\n`;
}
