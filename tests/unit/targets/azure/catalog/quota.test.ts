import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { VM_SIZES } from "../../../../../src/targets/azure/catalog/capabilities.ts";
import { networkUsagesUrl, readComputeCapacity, skusUrl, usagesUrl, type HttpGet } from "../../../../../src/targets/azure/catalog/computeCapacity.ts";
import {
  ResourceSkuListSchema,
  UsageListSchema,
  checkCapacity,
  formatVcpuNeeds,
  vcpuNeeds,
  type QuotaShortfall,
  type ResourceSku,
  type SizeUnavailable,
  type Usage,
} from "../../../../../src/targets/azure/catalog/quota.ts";
import { planOf, shippedExperimentPlans } from "../helpers.ts";

// ARM responses: see tests/fixtures/azure/capacity/README.md for where each comes from.
const FIXTURES = join(import.meta.dirname, "../../../../fixtures/azure/capacity");
const fixture = (name: string): unknown => JSON.parse(readFileSync(join(FIXTURES, name), "utf8"));
const specBody = (name: string): unknown => (fixture(name) as { responses: { 200: { body: unknown } } }).responses[200].body;
const usages = (name: string): Usage[] => UsageListSchema.parse(fixture(name)).value;
const SKUS: ResourceSku[] = ResourceSkuListSchema.parse(fixture("skus-northeurope.json")).value;

const SUB = "00000000-0000-0000-0000-000000000000";
const TOKEN = "test-token";

/** public-vs-peered's hosts: one pair per size (both paths measured on it), two regional hosts each, North Europe. */
const publicVsPeered = () =>
  planOf({
    name: "pvp",
    defaults: { region: "northeurope", zone: null, accelnet: true },
    axes: { size: ["Standard_DS13_v2", "Standard_DS14_v2"], path: ["private", "public"] },
    hosts: { server: {}, client: {} },
  });

/** Two hosts of one size in one place. */
const pair = (size: string, zone: "1" | "2" | "3" | null, region = "northeurope") => planOf({ name: "pair", defaults: { region, zone, size, accelnet: false } });

beforeEach(() => {
  // A test that reached for the network would fail here rather than leave the machine.
  vi.stubGlobal("fetch", () => {
    throw new Error("network access in a unit test");
  });
});
afterEach(() => {
  vi.unstubAllGlobals();
});

describe("vcpuNeeds / formatVcpuNeeds", () => {
  it("counts every deployment's hosts by region and quota family: public-vs-peered needs 48 DSv2 vCPUs in North Europe", () => {
    const needs = vcpuNeeds(publicVsPeered());
    expect(needs).toEqual([
      {
        region: "northeurope",
        totalVcpus: 48,
        families: [
          {
            family: "standardDSv2Family",
            vcpus: 48,
            sizes: [
              { size: "Standard_DS13_v2", vcpusEach: 8, count: 2, zones: [] },
              { size: "Standard_DS14_v2", vcpusEach: 16, count: 2, zones: [] },
            ],
          },
        ],
      },
    ]);
    expect(formatVcpuNeeds(needs)).toBe("vCPUs: northeurope standardDSv2Family 48 (2× Standard_DS13_v2 = 16, 2× Standard_DS14_v2 = 32), total regional 48");
  });

  it("the shipped public-vs-peered experiment needs 24 vCPUs (4 VMs of two current sizes; issue 9's 96 counted 8, the path measured between different VMs)", async () => {
    const shipped = (await shippedExperimentPlans()).find((p) => p.name === "public-vs-peered");
    expect(shipped?.error).toBeUndefined();
    expect(formatVcpuNeeds(vcpuNeeds(shipped!.plan!))).toBe("vCPUs: northeurope standardDSv5Family 24 (2× Standard_D4s_v5 = 8, 2× Standard_D8s_v5 = 16), total regional 24");
  });

  it("splits regions and families, counts replicas, and keeps the zones hosts are pinned to", () => {
    const plan = planOf({
      name: "mixed",
      replicas: 2,
      defaults: { accelnet: false },
      hosts: {
        client: { region: "eastus", zone: "1", size: "Standard_D2s_v5" },
        server: { region: "eastus", zone: "2", size: "Standard_D4s_v4" },
        probe: { region: "westeurope", zone: null, size: "Standard_B2s" },
      },
    });
    const needs = vcpuNeeds(plan);
    expect(needs.map((r) => [r.region, r.totalVcpus, r.families.map((f) => [f.family, f.vcpus])])).toEqual([
      ["eastus", 12, [["standardDSv4Family", 8], ["standardDSv5Family", 4]]],
      ["westeurope", 4, [["standardBSFamily", 4]]],
    ]);
    expect(needs[0]!.families[1]!.sizes).toEqual([{ size: "Standard_D2s_v5", vcpusEach: 2, count: 2, zones: ["1"] }]);
    expect(formatVcpuNeeds(needs).split("\n")).toEqual([
      "vCPUs: eastus standardDSv4Family 8 (2× Standard_D4s_v4 = 8), standardDSv5Family 4 (2× Standard_D2s_v5 = 4), total regional 12",
      "vCPUs: westeurope standardBSFamily 4 (2× Standard_B2s = 4), total regional 4",
    ]);
  });

  it("every size in the capability table names a quota family, and those in the recorded SKU list agree with Azure's", () => {
    for (const [name, size] of Object.entries(VM_SIZES)) expect(size.quotaFamily, name).toMatch(/^standard[A-Za-z0-9]+Family$/);
    for (const sku of SKUS.filter((s) => s.resourceType === "virtualMachines")) expect(VM_SIZES[sku.name!]?.quotaFamily, sku.name).toBe(sku.family);
  });
});

describe("checkCapacity", () => {
  it("finds nothing when the quota suffices (DSv2 1 of 100 in use, total 4 of 260) and the sizes are open", () => {
    expect(checkCapacity(vcpuNeeds(publicVsPeered()), { northeurope: usages("usages-docs.json") }, { northeurope: SKUS })).toEqual([]);
  });

  it("reports a shortfall per family and for the regional total, with the exact numbers and how to ask for more", () => {
    const issues = checkCapacity(vcpuNeeds(publicVsPeered()), { northeurope: usages("usages-docs-low-limits.json") }, { northeurope: SKUS }) as QuotaShortfall[];
    expect(issues.map(({ kind, region, quota, needed, available, limit, current }) => ({ kind, region, quota, needed, available, limit, current }))).toEqual([
      { kind: "quota", region: "northeurope", quota: "standardDSv2Family", needed: 48, available: 9, limit: 10, current: 1 },
      { kind: "quota", region: "northeurope", quota: "cores", needed: 48, available: 6, limit: 10, current: 4 },
    ]);
    const [family, total] = issues;
    expect(family!.path).toBe("quota(northeurope).standardDSv2Family");
    expect(family!.message).toContain('northeurope: standardDSv2Family ("Standard DSv2 Family vCPUs") needed 48 (2× Standard_DS13_v2 = 16, 2× Standard_DS14_v2 = 32), available 9 (limit 10, in use 1)');
    expect(family!.message).toContain("a limit of at least 49");
    // DSv2 is a previous-generation series: Azure approves no more quota for it, so the advice is the current size, not a request.
    expect(family!.message).toContain("Azure will not approve more standardDSv2Family quota, so change the size instead");
    expect(family!.message).toContain("Use Standard_E8s_v5");
    expect(family!.message).not.toContain("New Quota Request");
    expect(family!.message).toContain("`az vm list-usage --location northeurope -o table`");
    expect(total!.message).toContain('northeurope: total regional vCPUs ("cores") needed 48 (all 4 VMs in northeurope), available 6 (limit 10, in use 4)');
    expect(total!.message).toContain("https://learn.microsoft.com/azure/quotas/regional-quota-requests");
  });

  it("counts a full quota (in use above the limit) as nothing available", () => {
    const over = usages("usages-docs.json").map((u) => (u.name.value === "standardDSv2Family" ? { ...u, currentValue: 120 } : u));
    const [issue] = checkCapacity(vcpuNeeds(pair("Standard_DS13_v2", null)), { northeurope: over }, { northeurope: SKUS }) as QuotaShortfall[];
    expect(issue).toMatchObject({ quota: "standardDSv2Family", needed: 16, available: 0, limit: 100, current: 120 });
  });

  it("catches a Zone restriction in a zone the plan uses, and only there", () => {
    const inZone3 = checkCapacity(vcpuNeeds(pair("Standard_DS14_v2", "3")), { northeurope: usages("usages-docs.json") }, { northeurope: SKUS });
    expect(inZone3).toHaveLength(1);
    const issue = inZone3[0] as SizeUnavailable;
    expect(issue).toMatchObject({ kind: "size-unavailable", region: "northeurope", size: "Standard_DS14_v2", zones: ["3"], path: "sku(northeurope).Standard_DS14_v2.zone" });
    expect(issue.message).toBe(
      "Standard_DS14_v2 is not available for this subscription (reason NotAvailableForSubscription) in northeurope zone 3 (restriction type Zone); place those hosts in another zone, or make them regional (zone: null), or ask Azure support for access (https://learn.microsoft.com/troubleshoot/azure/general/region-access-request-process)",
    );
    expect(checkCapacity(vcpuNeeds(pair("Standard_DS14_v2", "1")), { northeurope: usages("usages-docs.json") }, { northeurope: SKUS })).toEqual([]);
  });

  it("catches a Location restriction even for regional hosts", () => {
    const issues = checkCapacity(vcpuNeeds(pair("Standard_D2s_v5", null)), { northeurope: usages("usages-docs.json") }, { northeurope: SKUS });
    const unavailable = issues.filter((i) => i.kind === "size-unavailable");
    expect(unavailable).toEqual([
      expect.objectContaining({ size: "Standard_D2s_v5", zones: null, path: "sku(northeurope).Standard_D2s_v5" }),
    ]);
    expect(unavailable[0]!.message).toContain("Standard_D2s_v5 is not available for this subscription (reason NotAvailableForSubscription) in northeurope (restriction type Location)");
  });

  it("reports a zone the size is not offered in, and a size the region does not list at all", () => {
    const zone3 = checkCapacity(vcpuNeeds(pair("Standard_D4s_v5", "3")), { northeurope: usages("usages-docs.json") }, { northeurope: SKUS });
    expect(zone3.find((i) => i.kind === "size-unavailable")?.message).toBe(
      "Standard_D4s_v5 is not offered in northeurope zone 3 (the Resource SKUs API lists zones 1, 2); place those hosts in one of those zones or make them regional (zone: null)",
    );
    const absent = checkCapacity(vcpuNeeds(pair("Standard_DS12_v2", null)), { northeurope: usages("usages-docs.json") }, { northeurope: SKUS });
    expect(absent.find((i) => i.kind === "size-unavailable")?.message).toContain("Standard_DS12_v2 is not offered in northeurope: the Resource SKUs API lists no virtualMachines SKU of that name there");
  });

  it("says it cannot check a family the region lists no usage for, rather than passing it", () => {
    const issues = checkCapacity(vcpuNeeds(pair("Standard_D4s_v5", "1")), { northeurope: usages("usages-docs.json") }, { northeurope: SKUS });
    expect(issues).toEqual([expect.objectContaining({ kind: "quota-unknown", quota: "standardDSv5Family", needed: 8 })]);
    expect(issues[0]!.message).toContain('lists no quota "standardDSv5Family"');
  });

  it("counts a size against the family Azure's SKU list gives it, not only the table's", () => {
    const renamed = SKUS.map((s) => (s.name === "Standard_DS13_v2" ? { ...s, family: "standardDv2Family" } : s));
    const low = usages("usages-docs.json").map((u) => (u.name.value === "standardDv2Family" ? { ...u, limit: 4 } : u));
    const issues = checkCapacity(vcpuNeeds(pair("Standard_DS13_v2", null)), { northeurope: low }, { northeurope: renamed });
    expect(issues).toEqual([expect.objectContaining({ kind: "quota", quota: "standardDv2Family", needed: 16, available: 2 })]);
  });

  it("refuses to judge a region whose usages or SKUs were not read", () => {
    expect(() => checkCapacity(vcpuNeeds(publicVsPeered()), {}, { northeurope: SKUS })).toThrow("checkCapacity: no usages for northeurope");
    expect(() => checkCapacity(vcpuNeeds(publicVsPeered()), { northeurope: usages("usages-docs.json") }, {})).toThrow("checkCapacity: no SKU list for northeurope");
  });

  it("matches Azure's recorded spec shapes: an entry without name.value is no quota", () => {
    const minimum = UsageListSchema.parse(specBody("spec-Usage_List_MinimumSet_Gen.json")).value;
    expect(minimum).toEqual([{ unit: "Count", currentValue: 17, limit: 19, name: {} }]);
    const issues = checkCapacity(vcpuNeeds(pair("Standard_DS13_v2", null)), { northeurope: minimum }, { northeurope: SKUS });
    expect(issues.map((i) => [i.kind, i.kind === "size-unavailable" ? i.size : i.quota])).toEqual([
      ["quota-unknown", "standardDSv2Family"],
      ["quota-unknown", "cores"],
    ]);
    const westus = ResourceSkuListSchema.parse(specBody("spec-ListAvailableResourceSkusForARegion.json"));
    expect(westus.nextLink).toBeNull();
    expect(westus.value.map((s) => [s.name, s.family, s.locationInfo?.[0]?.zones])).toEqual([
      ["Standard_A0", "standardA0_A7Family", ["2", "1"]],
      ["Standard_A1", "standardA0_A7Family", ["1", "2", "3"]],
    ]);
  });
});

// ---------------------------------------------------------------------------------------------

type Reply = { status: number; body: unknown };
/** An HTTP function answering from a table of URL → reply, recording what was asked. */
function fakeHttp(routes: Record<string, Reply>) {
  const calls: { url: string; headers: Record<string, string> }[] = [];
  const http: HttpGet = async (url, init) => {
    calls.push({ url, headers: init.headers });
    const reply = routes[url];
    if (!reply) throw new Error(`fake ARM: no route for ${url}`);
    return { ok: reply.status >= 200 && reply.status < 300, status: reply.status, text: async () => (typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body)) };
  };
  return { http, calls };
}

const ok = (body: unknown): Reply => ({ status: 200, body });
const options = (http: HttpGet) => ({ subscriptionId: SUB, http, token: async () => TOKEN });

describe("readComputeCapacity", () => {
  it("reads each region's usages, SKUs and Network usages from ARM with the bearer token and keeps only virtualMachines SKUs", async () => {
    const { http, calls } = fakeHttp({
      [usagesUrl(SUB, "northeurope")]: ok(fixture("usages-docs.json")),
      [skusUrl(SUB, "northeurope")]: ok(fixture("skus-northeurope.json")),
      [networkUsagesUrl(SUB, "northeurope")]: ok(fixture("network-usages-standard-ips.json")),
    });
    const capacity = await readComputeCapacity(["northeurope", "northeurope"], options(http));
    expect(calls.map((c) => c.url)).toEqual([
      `https://management.azure.com/subscriptions/${SUB}/providers/Microsoft.Compute/locations/northeurope/usages?api-version=2024-11-01`,
      `https://management.azure.com/subscriptions/${SUB}/providers/Microsoft.Compute/skus?api-version=2021-07-01&$filter=location%20eq%20'northeurope'`,
      `https://management.azure.com/subscriptions/${SUB}/providers/Microsoft.Network/locations/northeurope/usages?api-version=2024-05-01`,
    ]);
    expect(capacity.networkUsages?.northeurope).toHaveLength(26);
    for (const c of calls) expect(c.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(capacity.usages.northeurope).toEqual(usages("usages-docs.json"));
    expect(capacity.skus.northeurope!.map((s) => s.name)).toEqual(["Standard_DS13_v2", "Standard_DS14_v2", "Standard_D2s_v5", "Standard_D4s_v5"]);
    // What it read is what checkCapacity takes.
    expect(checkCapacity(vcpuNeeds(publicVsPeered()), capacity.usages, capacity.skus)).toEqual([]);
  });

  it("follows nextLink until the last page", async () => {
    const rows = (fixture("usages-docs-low-limits.json") as { value: unknown[] }).value;
    const page2 = `https://management.azure.com/subscriptions/${SUB}/providers/Microsoft.Compute/locations/northeurope/usages?api-version=2024-11-01&$skiptoken=page2`;
    const { http, calls } = fakeHttp({
      [usagesUrl(SUB, "northeurope")]: ok({ value: rows.slice(0, 3), nextLink: page2 }),
      [page2]: ok({ value: rows.slice(3) }),
      [skusUrl(SUB, "northeurope")]: ok(fixture("skus-northeurope.json")),
      [networkUsagesUrl(SUB, "northeurope")]: ok(fixture("network-usages-spec.json")),
    });
    const capacity = await readComputeCapacity(["northeurope"], options(http));
    expect(calls.map((c) => c.url)).toContain(page2);
    expect(capacity.usages.northeurope).toHaveLength(rows.length);
    // The DSv2 entry sits on page 2: the shortfall is only found if the page was read.
    expect(checkCapacity(vcpuNeeds(publicVsPeered()), capacity.usages, capacity.skus).map((i) => i.kind === "quota" && [i.quota, i.available])).toEqual([
      ["standardDSv2Family", 9],
      ["cores", 6],
    ]);
  });

  it("refuses a nextLink off management.azure.com (the spec example's) instead of sending the token there", async () => {
    const { http, calls } = fakeHttp({ [usagesUrl(SUB, "westus")]: ok(specBody("spec-Usage_List_MaximumSet_Gen.json")) });
    await expect(readComputeCapacity(["westus"], options(http))).rejects.toThrow(
      'Compute usages API for westus: nextLink "aaaaaaaaaaaaaaaaaaaaaaaaaaa" is not on https://management.azure.com; not following it with the ARM token',
    );
    expect(calls).toHaveLength(1);
  });

  it("turns a 403 into a message naming the API, the region, ARM's error and the role to grant", async () => {
    const { http } = fakeHttp({ [usagesUrl(SUB, "northeurope")]: { status: 403, body: fixture("arm-error-403.json") } });
    const error = await readComputeCapacity(["northeurope"], options(http)).catch((e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/^Compute usages API for northeurope: HTTP 403 AuthorizationFailed: The client '\{client_id\}' .* does not have authorization to perform action 'Microsoft\.Compute\/locations\/usages\/read'/);
    expect((error as Error).message).toContain("Reader role");
    expect((error as Error).message).toContain(`(GET https://management.azure.com/subscriptions/${SUB}/providers/Microsoft.Compute/locations/northeurope/usages)`);
  });

  it("turns a 401 on the SKU list into a message naming that API and how to sign in again", async () => {
    const { http } = fakeHttp({
      [usagesUrl(SUB, "northeurope")]: ok(fixture("usages-docs.json")),
      [skusUrl(SUB, "northeurope")]: { status: 401, body: fixture("arm-error-401.json") },
    });
    await expect(readComputeCapacity(["northeurope"], options(http))).rejects.toThrow(
      /^Resource SKUs API for northeurope: HTTP 401 InvalidAuthenticationToken: The access token is invalid\. — ARM refused the token: sign in again \(`az login`\)/,
    );
  });

  it("shows the start of a body that is not ARM's JSON error", async () => {
    const { http } = fakeHttp({ [usagesUrl(SUB, "northeurope")]: { status: 502, body: "<html><body>Bad Gateway</body></html>" } });
    await expect(readComputeCapacity(["northeurope"], options(http))).rejects.toThrow("Compute usages API for northeurope: HTTP 502 <html><body>Bad Gateway</body></html>");
  });

  it("says why when no token or no subscription can be had", async () => {
    const { http, calls } = fakeHttp({});
    await expect(
      readComputeCapacity(["northeurope"], {
        subscriptionId: SUB,
        http,
        token: async () => {
          throw new Error("EnvironmentCredential is unavailable");
        },
      }),
    ).rejects.toThrow("capacity check: could not get an Azure token for https://management.azure.com: EnvironmentCredential is unavailable");
    vi.stubEnv("AZURE_SUBSCRIPTION_ID", "");
    vi.stubEnv("ARM_SUBSCRIPTION_ID", "");
    await expect(readComputeCapacity(["northeurope"], { http, token: async () => TOKEN })).rejects.toThrow("no subscription");
    vi.unstubAllEnvs();
    expect(calls).toEqual([]);
  });
});
