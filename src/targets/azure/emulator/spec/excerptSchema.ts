import { z } from "zod";

/**
 * The format of the spec excerpts in this folder (network-2024-05-01.json, …): what
 * extractSpec.ts keeps of Azure's REST API specifications (swagger 2.0 files of
 * Azure/azure-rest-api-specs) for checking and (un)flattening request bodies, and nothing else.
 *
 * A definition is keyed by its swagger name (prefixed with its file's stem when two files of one
 * excerpt define the same name); `allOf` parents are merged into it; a reference is `$ref: key`,
 * never inlined, so recursive models (Subnet → NetworkSecurityGroup → … → Subnet) stay finite.
 * Enum definitions (a `$ref` to a string with `enum`) are inlined into the property that uses
 * them. Inline object schemas become definitions named `<owner>.<property>`.
 */

export const JsonTypeSchema = z.enum(["object", "array", "string", "integer", "number", "boolean"]);
export type JsonType = z.infer<typeof JsonTypeSchema>;

export interface SchemaNode {
  type?: JsonType;
  /** Key of a definition of the same excerpt file. */
  $ref?: string;
  items?: SchemaNode;
  enum?: string[];
  /** x-ms-enum.modelAsString: false means the RP's model is a closed enum (Json.NET refuses other values). */
  modelAsString?: boolean;
  /**
   * The enum lists examples, not the allowed set: the spec itself says the enum is deprecated
   * (HardwareProfile.vmSize). Values outside it are not reported. Set by extractSpec.ts, see there.
   */
  openEnum?: boolean;
  /** The service computes it; a value a client sends is ignored, so nothing under it is checked. */
  readOnly?: boolean;
  /** x-ms-client-flatten: SDKs (and so @pulumi/azure-native) hoist this object's members into the parent. */
  flatten?: boolean;
  format?: string;
  /** A dictionary: any key, each value checked against this schema (true: any value). */
  additionalProperties?: SchemaNode | boolean;
}

export const SchemaNodeSchema: z.ZodType<SchemaNode> = z.lazy(() =>
  z
    .object({
      type: JsonTypeSchema.optional(),
      $ref: z.string().min(1).optional(),
      items: SchemaNodeSchema.optional(),
      enum: z.array(z.string()).min(1).optional(),
      modelAsString: z.boolean().optional(),
      openEnum: z.boolean().optional(),
      readOnly: z.boolean().optional(),
      flatten: z.boolean().optional(),
      format: z.string().optional(),
      additionalProperties: z.union([SchemaNodeSchema, z.boolean()]).optional(),
    })
    .strict(),
);

export const DefinitionSchema = z
  .object({
    type: JsonTypeSchema.optional(),
    properties: z.record(z.string(), SchemaNodeSchema).optional(),
    required: z.array(z.string()).optional(),
    additionalProperties: z.union([SchemaNodeSchema, z.boolean()]).optional(),
  })
  .strict();
export type Definition = z.infer<typeof DefinitionSchema>;

export const ResourceTypeSpecSchema = z
  .object({
    apiVersion: z.string().regex(/^\d{4}-\d{2}-\d{2}(-preview)?$/),
    /** The swagger path of the PUT operation, e.g. /subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Network/virtualNetworks/{virtualNetworkName}. */
    pathTemplate: z.string().startsWith("/subscriptions/{subscriptionId}/"),
    /** Path parameters in template order, without subscriptionId (the caller's, never an SDK input). */
    pathParams: z.array(z.string().min(1)).min(1),
    /** Query parameters of the PUT other than api-version (VirtualNetworkPeering's syncRemoteAddressSpace). */
    queryParams: z.array(z.string().min(1)),
    operationId: z.string().min(1),
    /** Definition key of the PUT body. */
    body: z.string().min(1),
    /** The swagger file (repository path) the operation is in. */
    file: z.string().min(1),
  })
  .strict();
export type ResourceTypeSpec = z.infer<typeof ResourceTypeSpecSchema>;

export const SourceFileSchema = z
  .object({
    path: z.string().min(1),
    /** The commit this file's text was read at, where known. */
    commit: z.string().regex(/^[0-9a-f]{40}$/).nullable(),
    /** Set when the text is not the one at `path` for this api-version (see README). */
    note: z.string().optional(),
  })
  .strict();

export const ExcerptFileSchema = z
  .object({
    format: z.literal("latlab-arm-spec-excerpt/1"),
    /** Short name of the resource provider's spec folder: resources, network, compute. */
    provider: z.string().min(1),
    apiVersion: z.string().min(1),
    source: z
      .object({
        repository: z.string().min(1),
        /** The commit the whole tree was read at (git mode), or null when files came from several. */
        revision: z.string().regex(/^[0-9a-f]{40}$/).nullable(),
        files: z.array(SourceFileSchema).min(1),
      })
      .strict(),
    /** ARM type (Microsoft.Network/virtualNetworks/subnets) → its PUT operation. */
    resourceTypes: z.record(z.string(), ResourceTypeSpecSchema),
    definitions: z.record(z.string(), DefinitionSchema),
  })
  .strict()
  .superRefine((file, ctx) => {
    // A dangling key would make the checker silently accept anything under it.
    const check = (node: SchemaNode | boolean | undefined, where: string): void => {
      if (node === undefined || typeof node === "boolean") return;
      if (node.$ref !== undefined && !(node.$ref in file.definitions)) {
        ctx.addIssue({ code: "custom", message: `${where}: $ref '${node.$ref}' is not a definition of this file` });
      }
      check(node.items, `${where}[]`);
      check(node.additionalProperties, `${where}{}`);
    };
    for (const [key, def] of Object.entries(file.definitions)) {
      for (const [name, prop] of Object.entries(def.properties ?? {})) check(prop, `${key}.${name}`);
      check(def.additionalProperties, `${key}{}`);
    }
    for (const [type, spec] of Object.entries(file.resourceTypes)) {
      if (!(spec.body in file.definitions)) ctx.addIssue({ code: "custom", message: `${type}: body '${spec.body}' is not a definition of this file` });
      if (spec.apiVersion !== file.apiVersion) ctx.addIssue({ code: "custom", message: `${type}: api-version ${spec.apiVersion} differs from the file's ${file.apiVersion}` });
    }
  });
export type ExcerptFile = z.infer<typeof ExcerptFileSchema>;
