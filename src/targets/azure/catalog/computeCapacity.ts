import type { TokenCredential } from "@azure/identity";
import type { z } from "zod";
import { ResourceSkuListSchema, UsageListSchema, type ResourceSku, type Usage } from "./quota.ts";

/**
 * Reads, per region, the ARM lists quota.ts checks a plan against: the Compute usages (vCPU
 * quotas and what is in use), the Resource SKUs (which sizes the subscription may create, and
 * in which zones) and the Network usages (Standard public IPs: one per VM). Read-only; the HTTP function and the token (or the
 * credential) are injectable so tests never touch Azure.
 */

export const ARM_ENDPOINT = "https://management.azure.com";
/** The ARM scope latlab's credential (access/armCredential.ts) is asked a token for. */
export const ARM_SCOPE = `${ARM_ENDPOINT}/.default`;
/** Compute RP version of `Usage_List` (ComputeRP/stable/2024-11-01 in Azure/azure-rest-api-specs). */
export const USAGES_API_VERSION = "2024-11-01";
/** `ResourceSkus_List` (Skus/stable/2021-07-01): the version whose `$filter=location eq '…'` Microsoft documents. */
export const SKUS_API_VERSION = "2021-07-01";
/** Network RP version of `Usages_List` (network/resource-manager/Microsoft.Network/stable/2024-05-01/usage.json): the version the emulator's network spec excerpt is of. */
export const NETWORK_USAGES_API_VERSION = "2024-05-01";
/** A location-filtered list fits one page today; the cap only stops a server that loops. */
export const MAX_PAGES = 50;
/** Per request: ARM answers these lists in well under a second. */
export const REQUEST_TIMEOUT_MS = 30_000;

/** The slice of `fetch` used: GET with headers, the status and the body as text. */
export type HttpGet = (url: string, init: { method: "GET"; headers: Record<string, string> }) => Promise<{ ok: boolean; status: number; text(): Promise<string> }>;

export interface ComputeCapacityOptions {
  /** Default: AZURE_SUBSCRIPTION_ID, else ARM_SUBSCRIPTION_ID (as `latlab sweep`). */
  subscriptionId?: string;
  /** Default: the global fetch. */
  http?: HttpGet;
  /** A bearer token for ARM, asked before each request. Default: armTokenGetter(credential). */
  token?: () => Promise<string>;
  /** Default: latlabAzureCredential() (access/armCredential.ts: GitHub OIDC in CI, else DefaultAzureCredential). */
  credential?: TokenCredential;
}

/** Per region (as asked): its usages and its virtualMachines SKUs, ready for `checkCapacity`. */
export interface ComputeCapacity {
  usages: Record<string, Usage[]>;
  skus: Record<string, ResourceSku[]>;
  /** Network usages per region (public IPs: quota.ts standardPublicIpUsage); absent: not read, public IPs not checked. */
  networkUsages?: Record<string, Usage[]>;
}

export const usagesUrl = (subscriptionId: string, region: string) =>
  `${ARM_ENDPOINT}/subscriptions/${encodeURIComponent(subscriptionId)}/providers/Microsoft.Compute/locations/${encodeURIComponent(region)}/usages?api-version=${USAGES_API_VERSION}`;

export const networkUsagesUrl = (subscriptionId: string, region: string) =>
  `${ARM_ENDPOINT}/subscriptions/${encodeURIComponent(subscriptionId)}/providers/Microsoft.Network/locations/${encodeURIComponent(region)}/usages?api-version=${NETWORK_USAGES_API_VERSION}`;

export const skusUrl = (subscriptionId: string, region: string) =>
  `${ARM_ENDPOINT}/subscriptions/${encodeURIComponent(subscriptionId)}/providers/Microsoft.Compute/skus?api-version=${SKUS_API_VERSION}&$filter=${encodeURIComponent(`location eq '${region}'`)}`;

/**
 * A bearer-token getter for ARM over `credential` (default: latlabAzureCredential(), made on first
 * use). Call it before every request, not once per run: the credential hands back its cached
 * token while that is fresh and a renewed one as expiry nears, so a long run never sends an
 * expired token (the GitHub OIDC credential asks GitHub for a new assertion then).
 */
export function armTokenGetter(credential?: TokenCredential): () => Promise<string> {
  let made: Promise<TokenCredential> | undefined;
  return async () => {
    // Loaded on first use: @azure/identity is not needed by runs that never reach ARM.
    const c = await (made ??= credential ? Promise.resolve(credential) : import("../access/armCredential.ts").then((m) => m.latlabAzureCredential()));
    const token = await c.getToken(ARM_SCOPE);
    if (!token) throw new Error("the credential returned no token");
    return token.token;
  };
}

/** ARM's error body (`ErrorResponse` in common-types/resource-management/v3/types.json). */
export function armError(body: string): string {
  try {
    const e = (JSON.parse(body) as { error?: { code?: unknown; message?: unknown } }).error;
    if (e && (e.code || e.message)) return [e.code, e.message].filter((x) => typeof x === "string" && x).join(": ");
  } catch {
    // Not JSON (a proxy's HTML page): show its start below.
  }
  return body.trim().slice(0, 300) || "(empty body)";
}

const HINT: Record<number, string> = {
  401: "ARM refused the token: sign in again (`az login`), or check the credential latlab uses (ARM_USE_OIDC=true: ARM_CLIENT_ID / ARM_TENANT_ID and GitHub OIDC; else DefaultAzureCredential: AZURE_* or the Azure CLI)",
  403: "the identity may not read this subscription's quotas and SKUs: give it at least the Reader role (Microsoft.Compute/locations/usages/read, Microsoft.Compute/skus/read, Microsoft.Network/locations/usages/read)",
};

/** Every item of an ARM list, following nextLink; `what` names the API and region in errors. The token is asked for each page. */
async function listAll<T extends z.ZodType<{ value: unknown[]; nextLink?: string | null }>>(first: string, schema: T, what: string, http: HttpGet, bearer: () => Promise<string>): Promise<z.infer<T>["value"]> {
  const items: unknown[] = [];
  let url: string | null | undefined = first;
  for (let page = 0; url; page++) {
    if (page >= MAX_PAGES) throw new Error(`${what}: more than ${MAX_PAGES} pages; stopped following nextLink`);
    // The token goes to ARM only: a nextLink elsewhere is refused, not followed.
    if (!url.startsWith(`${ARM_ENDPOINT}/`)) throw new Error(`${what}: nextLink ${JSON.stringify(url)} is not on ${ARM_ENDPOINT}; not following it with the ARM token`);
    const data: z.infer<T> = await armGetJson(url, schema, what, http, await bearer());
    items.push(...data.value);
    url = data.nextLink;
  }
  return items as z.infer<T>["value"];
}

/**
 * One ARM GET with the bearer token, its body checked against `schema`. Throws with a message naming
 * `what`, the HTTP status, ARM's error and a hint for 401/403 (`hints`, default the capacity check's).
 */
export async function armGetJson<T extends z.ZodType>(url: string, schema: T, what: string, http: HttpGet, bearer: string, hints: Record<number, string> = HINT): Promise<z.infer<T>> {
  const response = await http(url, { method: "GET", headers: { authorization: `Bearer ${bearer}`, accept: "application/json" } });
  const body = await response.text();
  if (!response.ok) {
    throw new Error(`${what}: HTTP ${response.status} ${armError(body)}${hints[response.status] ? ` — ${hints[response.status]}` : ""} (GET ${url.split("?")[0]})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new Error(`${what}: the response is not JSON: ${body.slice(0, 200)}`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw new Error(`${what}: unexpected response shape: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  return parsed.data as z.infer<T>;
}

/**
 * Usages and SKUs of each region, each request with a token asked of the credential just before
 * it. Throws on the first failure with a message naming the API, the region and ARM's error.
 */
export async function readComputeCapacity(regions: readonly string[], options: ComputeCapacityOptions = {}): Promise<ComputeCapacity> {
  const subscriptionId = options.subscriptionId ?? process.env.AZURE_SUBSCRIPTION_ID ?? process.env.ARM_SUBSCRIPTION_ID;
  if (!subscriptionId) throw new Error("capacity check: no subscription: set AZURE_SUBSCRIPTION_ID (or ARM_SUBSCRIPTION_ID)");
  // A hung ARM call must not hold the run (and its Ctrl-C) for minutes: each request gets 30 s.
  const http: HttpGet = options.http ?? ((url, init) => fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }));
  const token = options.token ?? armTokenGetter(options.credential);
  const bearer = async () => {
    try {
      return await token();
    } catch (e) {
      throw new Error(`capacity check: could not get an Azure token for ${ARM_ENDPOINT}: ${(e as Error).message ?? String(e)}`);
    }
  };
  const result: ComputeCapacity = { usages: {}, skus: {}, networkUsages: {} };
  for (const region of [...new Set(regions)]) {
    result.usages[region] = await listAll(usagesUrl(subscriptionId, region), UsageListSchema, `Compute usages API for ${region}`, http, bearer);
    const skus = await listAll(skusUrl(subscriptionId, region), ResourceSkuListSchema, `Resource SKUs API for ${region}`, http, bearer);
    // The list holds disks, availability sets…: keep what quota.ts reads.
    result.skus[region] = skus.filter((s) => s.resourceType?.toLowerCase() === "virtualmachines");
    // Same shape as the Compute list (`UsagesListResult`: value[].name.value, currentValue, limit; `id` dropped).
    result.networkUsages![region] = await listAll(networkUsagesUrl(subscriptionId, region), UsageListSchema, `Network usages API for ${region}`, http, bearer);
  }
  return result;
}
