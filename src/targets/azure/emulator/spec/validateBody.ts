import type { SchemaNode } from "./excerptSchema.ts";
import { isPlainObject, type Definitions } from "./flatten.ts";

/**
 * Checks an ARM request body against a spec excerpt the way ARM and the resource providers
 * refuse bodies. The codes, and what they are based on:
 *
 * - InvalidRequestContent: the body does not deserialize into the RP's model. ARM's wording for
 *   an unknown member is "The request content was invalid and could not be deserialized: 'Could
 *   not find member 'resources' on object of type 'ResourceDefinition'. Path 'resources', …'"
 *   (Azure/azure-sdk-for-java#646, Azure/azure-sdk-for-net#3487). A JSON type the model cannot
 *   hold (an object where a string goes, a string where an int goes) and a value outside a closed
 *   enum (x-ms-enum modelAsString: false, a C# enum in the RP) fail the same way. Json.NET, which
 *   these RPs use, would coerce "100" into an int; latlab does not, on purpose: azure-native
 *   never sends that, so a string there is a bug in our program worth reporting.
 * - InvalidParameter: the body deserialized but the RP refuses a value. The compute RP answers a
 *   missing required member with {"code":"InvalidParameter","target":"osDisk.createOption",
 *   "message":"Required parameter 'osDisk.createOption' is missing (null)."}
 *   (Azure/azure-quickstart-templates#419, Azure/azure-powershell#4001); latlab uses the same for
 *   every RP, and for a value outside an open enum (modelAsString: true), which the RP refuses
 *   even though its model is a string.
 * - LocationRequired: ARM itself refuses a tracked resource without location, "The location
 *   property is required for this definition." (pulumi/pulumi-azure-native#215 shows it for
 *   PublicIPAddress and VirtualNetwork, whose specs do not mark location required).
 *
 * readOnly members a client sends are ignored, as ARM ignores them; dictionaries (tags) accept
 * any key. Object type names in messages are the swagger definition names, which are usually,
 * not always, the RP's own model names.
 */

export type ArmSpecIssueCode = "InvalidRequestContent" | "InvalidParameter" | "LocationRequired";

export interface ArmSpecIssue {
  /** JSON path in the ARM body, Json.NET style: properties.securityRules[0].properties.priority. */
  path: string;
  code: ArmSpecIssueCode;
  message: string;
}

export interface ValidateOptions {
  /** A tracked (top-level, located) resource: ARM requires `location` whatever the spec says. */
  tracked: boolean;
}

const deserialize = (detail: string) => `The request content was invalid and could not be deserialized: '${detail}.'.`;

const join = (path: string, key: string) => (path === "" ? key : `${path}.${key}`);

/** The path CRP puts in "Required parameter '…'": relative to the resource's properties. */
const paramName = (path: string) => path.replace(/^properties\./, "");

function jsonTypeOf(v: unknown): string {
  if (Array.isArray(v)) return "array";
  if (v === null) return "null";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

const TYPE_NAMES: Record<string, string> = {
  string: "String",
  integer: "Int32",
  number: "Double",
  boolean: "Boolean",
  array: "Array",
  object: "Object",
};

function typeMatches(type: string, v: unknown): boolean {
  switch (type) {
    case "string":
      return typeof v === "string";
    case "integer":
      return typeof v === "number" && Number.isInteger(v);
    case "number":
      return typeof v === "number" && Number.isFinite(v);
    case "boolean":
      return typeof v === "boolean";
    case "array":
      return Array.isArray(v);
    case "object":
      return isPlainObject(v);
    default:
      return true;
  }
}

export function validateBody(defs: Definitions, bodyKey: string, body: unknown, options: ValidateOptions): ArmSpecIssue[] {
  const issues: ArmSpecIssue[] = [];

  const wrongType = (path: string, expected: string, v: unknown) =>
    issues.push({
      path,
      code: "InvalidRequestContent",
      message: deserialize(`Error converting value ${JSON.stringify(v)} (${jsonTypeOf(v)}) to type '${TYPE_NAMES[expected] ?? expected}'. Path '${path}'`),
    });

  const checkDefinition = (key: string, value: unknown, path: string): void => {
    const def = defs[key];
    if (def === undefined) throw new Error(`spec excerpt has no definition ${key}`);
    if (!isPlainObject(value)) {
      wrongType(path, "object", value);
      return;
    }
    for (const name of def.required ?? []) {
      if (value[name] !== undefined && value[name] !== null) continue;
      const at = join(path, name);
      if (path === "" && name === "location") continue; // reported once below, as ARM does
      issues.push({ path: at, code: "InvalidParameter", message: `Required parameter '${paramName(at)}' is missing (null).` });
    }
    for (const [name, v] of Object.entries(value)) {
      const at = join(path, name);
      const schema: SchemaNode | boolean | undefined = def.properties?.[name] ?? def.additionalProperties;
      if (schema === undefined || schema === false) {
        issues.push({
          path: at,
          code: "InvalidRequestContent",
          message: deserialize(`Could not find member '${name}' on object of type '${key}'. Path '${at}'`),
        });
        continue;
      }
      if (schema === true) continue;
      checkSchema(schema, v, at);
    }
  };

  const checkSchema = (schema: SchemaNode, v: unknown, path: string): void => {
    if (schema.readOnly) return; // ARM ignores it
    if (v === null || v === undefined) return; // null is "not given"; required members are checked by their owner
    if (schema.$ref !== undefined) {
      checkDefinition(schema.$ref, v, path);
      return;
    }
    if (schema.type !== undefined && !typeMatches(schema.type, v)) {
      wrongType(path, schema.type, v);
      return;
    }
    if (schema.items !== undefined && Array.isArray(v)) v.forEach((item, i) => checkSchema(schema.items!, item, `${path}[${i}]`));
    if (schema.additionalProperties !== undefined && isPlainObject(v)) {
      const ap = schema.additionalProperties;
      if (typeof ap !== "boolean") for (const [k, item] of Object.entries(v)) checkSchema(ap, item, join(path, k));
    }
    if (schema.enum !== undefined && !schema.openEnum && typeof v === "string") {
      const allowed = schema.enum;
      if (!allowed.some((a) => a.toLowerCase() === v.toLowerCase())) {
        const list = allowed.join(", ");
        issues.push(
          schema.modelAsString
            ? { path, code: "InvalidParameter", message: `The value '${v}' of parameter '${paramName(path)}' is not allowed. Allowed values are: ${list}.` }
            : { path, code: "InvalidRequestContent", message: deserialize(`Error converting value "${v}" to an allowed value (${list}). Path '${path}'`) },
        );
      }
    }
  };

  if (!isPlainObject(body)) {
    wrongType("", "object", body);
    return issues;
  }
  const locationRequired = options.tracked || (defs[bodyKey]?.required ?? []).includes("location");
  const loc = body.location;
  if (locationRequired && (loc === undefined || loc === null || (typeof loc === "string" && loc.trim() === ""))) {
    issues.push({ path: "location", code: "LocationRequired", message: "The location property is required for this definition." });
  }
  checkDefinition(bodyKey, body, "");
  return issues;
}
