import { describe, expect, it } from "vitest";
import { extractExcerpt, formatExcerpt, pathPattern, resolveRef } from "../../../../../src/targets/azure/emulator/spec/extractCore.ts";
import { ExcerptFileSchema } from "../../../../../src/targets/azure/emulator/spec/excerptSchema.ts";
import { EXTRACT_PLAN } from "../../../../../src/targets/azure/emulator/spec/extractSpec.ts";

/**
 * A hand-made miniature of the spec layout (two swagger files referencing each other, plus a
 * shared file one folder up) exercising what the real files need: cross-file $ref, allOf,
 * recursion, readOnly references that point at files the extractor must never open, enum
 * definitions, inline and allOf-wrapped schemas, and a definition name used by two files.
 */
const DIR = "specification/widget/resource-manager/Microsoft.Widget/stable/2024-01-01";
const FILES: Record<string, unknown> = {
  [`${DIR}/widget.json`]: {
    swagger: "2.0",
    paths: {
      "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Widget/widgets/{widgetName}": {
        get: { parameters: [] },
        put: {
          operationId: "Widgets_CreateOrUpdate",
          parameters: [
            { name: "resourceGroupName", in: "path", required: true, type: "string" },
            { name: "widgetName", in: "path", required: true, type: "string" },
            { name: "body", in: "body", required: true, schema: { $ref: "#/definitions/Widget" } },
            { name: "force", in: "query", type: "string" },
            { $ref: "../../../common/v1/common.json#/parameters/ApiVersionParameter" },
            { $ref: "../../../common/v1/common.json#/parameters/SubscriptionIdParameter" },
          ],
        },
      },
      "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Widget/widgets/{widgetName}/gears/{gearName}": {
        put: {
          operationId: "Gears_CreateOrUpdate",
          parameters: [{ name: "body", in: "body", schema: { $ref: "./gear.json#/definitions/Gear" } }],
        },
      },
    },
    definitions: {
      Widget: {
        description: "dropped",
        properties: {
          properties: { "x-ms-client-flatten": true, $ref: "#/definitions/WidgetProperties", description: "dropped" },
          etag: { readOnly: true, type: "string" },
        },
        allOf: [{ $ref: "../../../common/v1/common.json#/definitions/Resource" }],
      },
      WidgetProperties: {
        properties: {
          size: { $ref: "#/definitions/Size" },
          colour: { type: "string", enum: ["Red", "Blue"] },
          gears: { type: "array", items: { $ref: "./gear.json#/definitions/Gear" } },
          parent: { $ref: "#/definitions/Widget" },
          status: { readOnly: true, $ref: "./status.json#/definitions/Status" },
          pool: { type: "object", "x-ms-client-flatten": true, properties: { id: { type: "string", format: "arm-id" } } },
          limits: { allOf: [{ $ref: "#/definitions/Limits" }], description: "a $ref with a description" },
          mode: { type: "enum" },
          link: { $ref: "#/definitions/SubResource" },
          labels: { type: "object", additionalProperties: { type: "string" } },
        },
        required: ["size"],
      },
      Size: { type: "string", enum: ["Small", "Large"], "x-ms-enum": { name: "Size", modelAsString: true } },
      Limits: { properties: { max: { type: "integer", format: "int32" } } },
      SubResource: { properties: { id: { type: "string" } } },
    },
  },
  [`${DIR}/gear.json`]: {
    swagger: "2.0",
    paths: {},
    definitions: {
      Gear: {
        properties: { properties: { "x-ms-client-flatten": true, $ref: "#/definitions/GearProperties" } },
        allOf: [{ $ref: "#/definitions/SubResource" }],
      },
      GearProperties: {
        properties: { teeth: { type: "integer" }, owner: { $ref: "./widget.json#/definitions/Widget" }, axle: { $ref: "#/definitions/SubResource" } },
      },
      SubResource: { properties: { id: { type: "string" }, name: { type: "string" } } },
    },
  },
  "specification/widget/resource-manager/common/v1/common.json": {
    swagger: "2.0",
    paths: {},
    definitions: {
      Resource: {
        properties: { id: { readOnly: true, type: "string" }, location: { type: "string" }, tags: { type: "object", additionalProperties: { type: "string" } } },
        required: ["location"],
      },
    },
    parameters: {
      ApiVersionParameter: { name: "api-version", in: "query", required: true, type: "string" },
      SubscriptionIdParameter: { name: "subscriptionId", in: "path", required: true, type: "string" },
    },
  },
};

function run() {
  const read = (path: string) => {
    if (!(path in FILES)) throw new Error(`read ${path}`);
    return structuredClone(FILES[path]);
  };
  return extractExcerpt(
    {
      provider: "widget",
      apiVersion: "2024-01-01",
      types: [
        { armType: "Microsoft.Widget/widgets", file: `${DIR}/widget.json` },
        { armType: "Microsoft.Widget/widgets/gears", file: `${DIR}/widget.json` },
      ],
    },
    read,
    { repository: "Azure/azure-rest-api-specs", revision: "0123456789abcdef0123456789abcdef01234567" },
  );
}

describe("extractExcerpt", () => {
  const { excerpt, filesRead, warnings } = run();
  const defs = excerpt.definitions;

  it("finds each type's PUT with its path and query parameters in order, api-version and subscription left out", () => {
    expect(excerpt.resourceTypes["Microsoft.Widget/widgets"]).toEqual({
      apiVersion: "2024-01-01",
      pathTemplate: "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Widget/widgets/{widgetName}",
      pathParams: ["resourceGroupName", "widgetName"],
      queryParams: ["force"],
      operationId: "Widgets_CreateOrUpdate",
      body: "Widget",
      file: `${DIR}/widget.json`,
    });
    expect(excerpt.resourceTypes["Microsoft.Widget/widgets/gears"]?.pathParams).toEqual(["resourceGroupName", "widgetName", "gearName"]);
    expect(excerpt.resourceTypes["Microsoft.Widget/widgets/gears"]?.body).toBe("Gear");
  });

  it("merges allOf parents from another file, required included, and strips descriptions", () => {
    expect(defs.Widget).toEqual({
      type: "object",
      properties: {
        id: { type: "string", readOnly: true },
        location: { type: "string" },
        tags: { type: "object", additionalProperties: { type: "string" } },
        properties: { $ref: "WidgetProperties", flatten: true },
        etag: { type: "string", readOnly: true },
      },
      required: ["location"],
    });
    expect(JSON.stringify(excerpt)).not.toContain("dropped");
  });

  it("keeps recursive references as keys (Widget → WidgetProperties → Gear → GearProperties → Widget)", () => {
    expect(defs.WidgetProperties?.properties?.parent).toEqual({ $ref: "Widget" });
    expect(defs.WidgetProperties?.properties?.gears).toEqual({ type: "array", items: { $ref: "Gear" } });
    expect(defs.GearProperties?.properties?.owner).toEqual({ $ref: "Widget" });
  });

  it("inlines enum definitions and records modelAsString (closed when x-ms-enum is absent)", () => {
    expect(defs.WidgetProperties?.properties?.size).toEqual({ type: "string", enum: ["Small", "Large"], modelAsString: true });
    expect(defs.WidgetProperties?.properties?.colour).toEqual({ type: "string", enum: ["Red", "Blue"], modelAsString: false });
    expect(defs).not.toHaveProperty("Size");
    expect(defs.WidgetProperties?.required).toEqual(["size"]);
  });

  it("does not follow readOnly references: the file they point to is never read", () => {
    expect(defs.WidgetProperties?.properties?.status).toEqual({ readOnly: true });
    expect(filesRead.some((f) => f.endsWith("status.json"))).toBe(false);
  });

  it("names inline models after their owner and unwraps a single-$ref allOf", () => {
    expect(defs.WidgetProperties?.properties?.pool).toEqual({ $ref: "WidgetProperties.pool", flatten: true });
    expect(defs["WidgetProperties.pool"]).toEqual({ type: "object", properties: { id: { type: "string", format: "arm-id" } } });
    expect(defs.WidgetProperties?.properties?.limits).toEqual({ $ref: "Limits" });
    expect(defs.WidgetProperties?.properties?.labels).toEqual({ type: "object", additionalProperties: { type: "string" } });
  });

  it("prefixes a definition name two files use with the file's stem", () => {
    // gear.json's SubResource is reached first (WidgetProperties.gears comes before .link).
    expect(defs.GearProperties?.properties?.axle).toEqual({ $ref: "SubResource" });
    expect(defs.SubResource?.properties).toEqual({ id: { type: "string" }, name: { type: "string" } });
    expect(defs.WidgetProperties?.properties?.link).toEqual({ $ref: "widget.SubResource" });
    expect(defs["widget.SubResource"]?.properties).toEqual({ id: { type: "string" } });
    expect(defs.Gear?.properties).toEqual({ id: { type: "string" }, name: { type: "string" }, properties: { $ref: "GearProperties", flatten: true } });
  });

  it("drops a `type` that is not a JSON type, with a warning", () => {
    expect(defs.WidgetProperties?.properties?.mode).toEqual({});
    expect(warnings).toEqual([expect.stringContaining('type "enum" is not a JSON type')]);
  });

  it("records where the files came from and formats to JSON that parses back to the same excerpt", () => {
    expect(excerpt.source.files.map((f) => f.commit)).toEqual(filesRead.map(() => "0123456789abcdef0123456789abcdef01234567"));
    expect(ExcerptFileSchema.parse(JSON.parse(formatExcerpt(excerpt)))).toEqual(excerpt);
  });

  it("fails loudly on a reference it cannot resolve", () => {
    const broken = structuredClone(FILES) as Record<string, { definitions: Record<string, { properties: Record<string, unknown> }> }>;
    broken[`${DIR}/widget.json`]!.definitions.WidgetProperties!.properties.link = { $ref: "./nowhere.json#/definitions/X" };
    expect(() =>
      extractExcerpt(
        { provider: "widget", apiVersion: "2024-01-01", types: [{ armType: "Microsoft.Widget/widgets", file: `${DIR}/widget.json` }] },
        (p) => {
          if (!(p in broken)) throw new Error(`no file ${p}`);
          return broken[p];
        },
        { repository: "r", revision: null },
      ),
    ).toThrow(/nowhere\.json/);
  });
});

describe("helpers", () => {
  it("resolve references relative to the referring file", () => {
    expect(resolveRef("a/b/c.json", "../../d/e.json#/definitions/F")).toEqual({ file: "d/e.json", pointer: "/definitions/F" });
    expect(resolveRef("a/b/c.json", "#/parameters/P")).toEqual({ file: "a/b/c.json", pointer: "/parameters/P" });
  });

  it("match a type's PUT path, resource groups included (lower-case 'resourcegroups' in the spec)", () => {
    expect(pathPattern("Microsoft.Resources/resourceGroups").test("/subscriptions/{subscriptionId}/resourcegroups/{resourceGroupName}")).toBe(true);
    const subnet = pathPattern("Microsoft.Network/virtualNetworks/subnets");
    expect(subnet.test("/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Network/virtualNetworks/{virtualNetworkName}/subnets/{subnetName}")).toBe(true);
    expect(subnet.test("/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Network/virtualNetworks/{virtualNetworkName}/subnets/{subnetName}/ResourceNavigationLinks")).toBe(false);
    expect(subnet.test("/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Network/virtualNetworks/{virtualNetworkName}")).toBe(false);
  });

  it("plan the ten types in three excerpts named <provider>-<api-version>.json", () => {
    expect(EXTRACT_PLAN.map((e) => `${e.provider}-${e.apiVersion}`)).toEqual(["resources-2024-03-01", "network-2024-05-01", "compute-2024-11-01"]);
    expect(EXTRACT_PLAN.flatMap((e) => e.types)).toHaveLength(10);
  });
});
