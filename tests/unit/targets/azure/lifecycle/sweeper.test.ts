import { describe, expect, it } from "vitest";
import {
  LATLAB_FILTER,
  parseExpiry,
  sweep,
  type ResourceGroupInfo,
  type ResourceGroupsClient,
} from "../../../../../src/targets/azure/lifecycle/sweeper.ts";

const NOW = new Date("2026-03-01T12:00:00Z");

function fakeClient(groups: ResourceGroupInfo[], failDeletes: Record<string, string> = {}) {
  const filters: string[] = [];
  const deleted: string[] = [];
  const client: ResourceGroupsClient = {
    async *list(filter) {
      filters.push(filter);
      for (const g of groups) yield g;
    },
    async beginDeleteAndWait(name) {
      if (name in failDeletes) throw new Error(failDeletes[name]);
      deleted.push(name);
    },
  };
  return { client, filters, deleted };
}

const rg = (name: string, tags: Record<string, string> | undefined, extra: Partial<ResourceGroupInfo> = {}): ResourceGroupInfo => ({
  name,
  location: "uksouth",
  ...(tags ? { tags } : {}),
  ...extra,
});

const groups = [
  rg("latlab-old", { owner: "latlab", expiresAt: "2026-03-01T10:00:00.000Z", runId: "r1" }),
  rg("latlab-new", { owner: "latlab", expiresAt: "2026-03-01T14:00:00.000Z", runId: "r2" }),
  rg("latlab-notag", { owner: "latlab" }),
  rg("latlab-garbage", { owner: "latlab", expiresAt: "tomorrow" }),
  rg("latlab-epoch", { owner: "latlab", expiresAt: "1" }),
  rg("latlab-deleting", { owner: "latlab", expiresAt: "2026-01-01T00:00:00Z" }, { provisioningState: "Deleting" }),
  rg("latlab-case", { Owner: "LatLab", ExpiresAt: "2026-02-01T00:00:00+01:00" }),
  // The filter is Azure's: a group that slips through without the tag is never touched.
  rg("someone-elses", { owner: "alice", expiresAt: "2020-01-01T00:00:00Z" }),
  rg("untagged", undefined),
];

describe("sweep", () => {
  it("dry run (the default): lists by owner=latlab tag and classifies; deletes nothing", async () => {
    const f = fakeClient(groups);
    const lines: string[] = [];
    const report = await sweep({ client: f.client, now: NOW, delete: false, log: (m) => lines.push(m) });
    expect(f.filters).toEqual(["tagName eq 'owner' and tagValue eq 'latlab'"]);
    expect(LATLAB_FILTER).toBe(f.filters[0]);
    expect(report.dryRun).toBe(true);
    expect(f.deleted).toEqual([]);
    expect(report.deleted).toEqual([]);
    expect(Object.fromEntries(report.groups.map((g) => [g.name, g.state]))).toEqual({
      "latlab-old": "expired",
      "latlab-new": "not-expired",
      "latlab-notag": "unknown-expiry",
      "latlab-garbage": "unknown-expiry",
      "latlab-epoch": "unknown-expiry",
      "latlab-deleting": "deleting",
      "latlab-case": "expired",
    });
    expect(report.groups.find((g) => g.name === "latlab-old")).toMatchObject({ runId: "r1", expiresAt: "2026-03-01T10:00:00.000Z", location: "uksouth" });
    expect(lines.join("\n")).toMatch(/would delete \(pass --delete\)/);
    expect(lines.join("\n")).toMatch(/latlab-garbage.*unknown expiry/);
    expect(lines.at(-1)).toMatch(/2 expired of 7 .*dry run: nothing deleted/);
  });

  it("with delete: removes only the expired groups; not-expired, unknown-expiry and already-deleting are kept", async () => {
    const f = fakeClient(groups);
    const report = await sweep({ client: f.client, now: NOW, delete: true, log: () => undefined });
    expect(report.dryRun).toBe(false);
    expect(f.deleted.sort()).toEqual(["latlab-case", "latlab-old"]);
    expect(report.deleted.sort()).toEqual(["latlab-case", "latlab-old"]);
    expect(report.failed).toEqual([]);
  });

  it("a failed delete is reported and the others still go", async () => {
    const f = fakeClient(groups, { "latlab-old": "AuthorizationFailed: no delete permission" });
    const lines: string[] = [];
    const report = await sweep({ client: f.client, now: NOW, delete: true, log: (m) => lines.push(m) });
    expect(report.failed).toEqual([{ name: "latlab-old", error: "AuthorizationFailed: no delete permission" }]);
    expect(report.deleted).toEqual(["latlab-case"]);
    expect(lines.some((l) => /FAILED to delete latlab-old: AuthorizationFailed/.test(l))).toBe(true);
    expect(lines.at(-1)).toMatch(/deleted 1 of 2 .*1 failed/);
  });

  it("expiry exactly now counts as expired; nothing found is fine", async () => {
    const f = fakeClient([rg("edge", { owner: "latlab", expiresAt: NOW.toISOString() })]);
    expect((await sweep({ client: f.client, now: NOW, delete: true, log: () => undefined })).deleted).toEqual(["edge"]);
    const empty = await sweep({ client: fakeClient([]).client, now: NOW, delete: true, log: () => undefined });
    expect(empty).toEqual({ dryRun: false, githubRun: null, groups: [], deleted: [], failed: [], left: null, leftErrors: [] });
  });
});

describe("parseExpiry", () => {
  it("reads ISO date-times with a zone, nothing else", () => {
    expect(parseExpiry("2026-03-01T10:00:00.000Z")?.toISOString()).toBe("2026-03-01T10:00:00.000Z");
    expect(parseExpiry("2026-03-01T10:00:00+02:00")?.toISOString()).toBe("2026-03-01T08:00:00.000Z");
    for (const bad of [undefined, "", "1", "tomorrow", "2026-03-01", "2026-03-01T10:00:00", "2026-13-45T99:00:00Z"]) expect(parseExpiry(bad)).toBeNull();
  });

  it("after --delete, says what ARM still holds of the expired groups: none for a group deleted, every id of one whose delete ARM refused", async () => {
    const expired = [rg("latlab-gone", { owner: "latlab", expiresAt: "2026-03-01T10:00:00Z" }), rg("latlab-locked", { owner: "latlab", expiresAt: "2026-03-01T10:00:00Z" })];
    const f = fakeClient(expired, { "latlab-locked": "The scope cannot perform delete operation because following scope(s) are locked" });
    const held: Record<string, string[]> = { "latlab-locked": ["/subscriptions/s/resourceGroups/latlab-locked", "/subscriptions/s/resourceGroups/latlab-locked/providers/Microsoft.Compute/virtualMachines/vm"] };
    const client: ResourceGroupsClient = { ...f.client, resources: async (name) => (f.deleted.includes(name) ? [] : (held[name] ?? [])) };
    const report = await sweep({ client, now: NOW, delete: true, log: () => undefined });
    expect(report.deleted).toEqual(["latlab-gone"]);
    expect(report.left).toEqual(held["latlab-locked"]);
    expect((await sweep({ client, now: NOW, delete: false, log: () => undefined })).left).toBeNull();
  });
});

describe("sweep --delete asks for every deletion at once", () => {
  it("requests each expired group's deletion before waiting for any (a sweep cut short has asked for them all), and reports them in the order found", async () => {
    const expired = ["latlab-a", "latlab-b", "latlab-c"].map((name) => rg(name, { owner: "latlab", expiresAt: "2026-03-01T10:00:00.000Z" }));
    const requested: string[] = [];
    let release: () => void = () => {};
    const allRequested = new Promise<void>((r) => (release = r));
    const client: ResourceGroupsClient = {
      async *list() {
        for (const g of expired) yield g;
      },
      // Azure takes minutes per group: each deletion "ends" only once all three were asked for.
      // One at a time, the first would wait for the others forever.
      async beginDeleteAndWait(name) {
        requested.push(name);
        if (requested.length === expired.length) release();
        const waited = await Promise.race([allRequested.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 5_000))]);
        if (!waited) throw new Error(`${name}: still waiting for the other deletions to be asked for`);
        // The last one asked for ends first.
        if (name === "latlab-a") await new Promise((r) => setTimeout(r, 20));
      },
    };
    const report = await sweep({ client, now: NOW, delete: true, log: () => {} });
    expect(report.failed).toEqual([]);
    expect(report.deleted).toEqual(["latlab-a", "latlab-b", "latlab-c"]);
  });
});
