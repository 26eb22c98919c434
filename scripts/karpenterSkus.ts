/**
 * Reads the two files Azure's Karpenter provider (github.com/Azure/karpenter-provider-azure)
 * generates from Azure's Resource SKUs API:
 *  - pkg/fake/zz_generated.sku.<region>.go: full `compute.ResourceSku` entries of selected sizes
 *    in one region, written as Go literals by its hack/code/instancetype_gen (--format testfakes);
 *  - pkg/providers/instancetype/known_skus.yaml: every size name seen in any region with its
 *    family (the same generator, --format nameonly).
 * Only the literal shapes that generator writes are understood; anything else throws, so a
 * changed generator is noticed instead of read wrongly.
 */
import { parse as parseYaml } from "yaml";
import type { ResourceSku } from "../src/targets/azure/catalog/quota.ts";

const str = (block: string, field: string): string | undefined => new RegExp(`\\b${field}:\\s*lo\\.ToPtr\\("([^"]*)"\\)`).exec(block)?.[1];
const quoted = (text: string) => [...text.matchAll(/"([^"]*)"/g)].map((m) => m[1]!);

/** The text between the `{` at `open` and its matching `}`. */
function braced(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      i = text.indexOf('"', i + 1);
      if (i < 0) break;
    } else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return text.slice(open + 1, i);
  }
  throw new Error(`unbalanced braces from offset ${open}`);
}

/** The body of `Field: &[]T{ … }` (or `&T{ … }`) in a block, or undefined when absent. */
function fieldBody(block: string, field: string): string | undefined {
  const m = new RegExp(`\\b${field}:\\s*&(?:\\[\\])?[\\w.]+\\{`).exec(block);
  return m ? braced(block, m.index + m[0].length - 1) : undefined;
}

/** Top-level `{ … }` items of a list body. */
function items(body: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < body.length; i++) {
    if (body[i] === '"') i = body.indexOf('"', i + 1);
    else if (body[i] === "{") {
      const inner = braced(body, i);
      out.push(inner);
      i += inner.length + 1;
    }
  }
  return out;
}

export interface GoSkuFile {
  region: string;
  generatedAt: string | null;
  skus: ResourceSku[];
}

export function parseKarpenterSkuGo(text: string): GoSkuFile {
  const head = /ResourceSkus\["([a-z0-9]+)"\]\s*=\s*\[\]compute\.ResourceSku\{/.exec(text);
  if (!head) throw new Error('no `ResourceSkus["<region>"] = []compute.ResourceSku{` in the file');
  const region = head[1]!;
  const generatedAt = /\/\/ generated at (\S+)/.exec(text)?.[1] ?? null;
  const skus = items(braced(text, head.index + head[0].length - 1)).map((block): ResourceSku => {
    const name = str(block, "Name");
    if (!name) throw new Error(`${region}: an entry without Name`);
    const caps = fieldBody(block, "Capabilities");
    const capabilities = caps === undefined ? [] : items(caps).map((c) => ({ name: str(c, "Name"), value: str(c, "Value") }));
    const restrictionsBody = fieldBody(block, "Restrictions");
    const restrictions = restrictionsBody === undefined ? [] : items(restrictionsBody).map((r) => {
      const info = fieldBody(r, "RestrictionInfo") ?? "";
      const type = /Type:\s*compute\.ResourceSkuRestrictionsType\("([^"]*)"\)/.exec(r)?.[1];
      const reason = /ReasonCode:\s*(?:compute\.ResourceSkuRestrictionsReasonCode\()?"([^"]*)"/.exec(r)?.[1];
      return {
        ...(type ? { type } : {}),
        values: quoted(fieldBody(r, "Values") ?? ""),
        restrictionInfo: { locations: quoted(fieldBody(info, "Locations") ?? ""), zones: quoted(fieldBody(info, "Zones") ?? "") },
        ...(reason ? { reasonCode: reason } : {}),
      };
    });
    const locationInfoBody = fieldBody(block, "LocationInfo") ?? "";
    const locationInfo = items(locationInfoBody).map((li) => ({ location: str(li, "Location"), zones: quoted(fieldBody(li, "Zones") ?? "") }));
    return {
      name,
      resourceType: str(block, "ResourceType"),
      family: str(block, "Family"),
      locations: quoted(fieldBody(block, "Locations") ?? ""),
      locationInfo,
      capabilities,
      restrictions,
    };
  });
  return { region, generatedAt, skus };
}

export function parseKnownSkusYaml(text: string): Record<string, { family: string; discoveredOn: string | null }> {
  const list = parseYaml(text) as unknown;
  if (!Array.isArray(list)) throw new Error("known_skus.yaml: expected a list");
  const out: Record<string, { family: string; discoveredOn: string | null }> = {};
  for (const [i, e] of list.entries()) {
    const entry = e as { name?: unknown; family?: unknown; discoveredOn?: unknown };
    if (typeof entry.name !== "string" || typeof entry.family !== "string") throw new Error(`known_skus.yaml: entry ${i} has no name/family`);
    out[entry.name] = { family: entry.family, discoveredOn: typeof entry.discoveredOn === "string" ? entry.discoveredOn : null };
  }
  return out;
}
