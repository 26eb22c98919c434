import { describe, expect, it } from "vitest";
import { sweep, type ResourceGroupInfo, type ResourceGroupsClient } from "../../../../../src/targets/azure/lifecycle/sweeper.ts";

const NOW = new Date("2026-03-01T12:00:00Z");
const PAST = "2026-03-01T10:00:00.000Z";
const FUTURE = "2026-03-01T20:00:00.000Z";

function fakeArm(groups: ResourceGroupInfo[]) {
  const deleted: string[] = [];
  const client: ResourceGroupsClient = {
    async *list() {
      for (const g of groups) yield g;
    },
    async beginDeleteAndWait(name) {
      deleted.push(name);
    },
    // ARM still holds a group it was not asked to delete (and one that is "Deleting" still).
    resources: async (name) => (deleted.includes(name) ? [] : [`/subscriptions/s/resourceGroups/${name}`]),
  };
  return { client, deleted };
}

const group = (name: string, tags: Record<string, string> | undefined, provisioningState?: string): ResourceGroupInfo => ({
  name,
  location: "eastus",
  ...(tags ? { tags } : {}),
  ...(provisioningState ? { provisioningState } : {}),
});
const ofRun = (runId: string, attempt: string, expiresAt: string, repository = "example/measurements") => ({ owner: "latlab", expiresAt, githubRunId: runId, githubRunAttempt: attempt, githubRepository: repository });

const groups = [
  group("latlab-run-a1", ofRun("42", "1", FUTURE)),
  group("latlab-run-a2", ofRun("42", "2", PAST)),
  group("latlab-run-unknown-expiry", { ...ofRun("42", "2", FUTURE), expiresAt: "soon" }),
  group("latlab-other-run", ofRun("43", "1", PAST)),
  // The same run id in another repository: run ids are unique only within a repository.
  group("latlab-other-repo", ofRun("42", "1", PAST, "someone/else")),
  group("latlab-no-github-tags", { owner: "latlab", expiresAt: PAST }),
  group("latlab-prefix-of-id", ofRun("4", "1", PAST)),
  group("latlab-run-deleting", ofRun("42", "1", FUTURE), "Deleting"),
  // Not latlab's, though it claims the run: never touched.
  group("not-latlab", { owner: "alice", githubRunId: "42", expiresAt: PAST }),
  group("untagged", undefined),
];

const names = (list: { name: string }[]) => list.map((g) => g.name).sort();

describe("sweep --github-run", () => {
  it("selects every latlab group of the run, whatever its expiry (not expired, expired, unknown) — and nothing else", async () => {
    const arm = fakeArm(groups);
    const report = await sweep({ client: arm.client, now: NOW, delete: true, githubRun: { runId: "42" }, log: () => undefined });
    expect(names(report.groups.filter((g) => g.selected))).toEqual(["latlab-other-repo", "latlab-run-a1", "latlab-run-a2", "latlab-run-unknown-expiry"]);
    expect(arm.deleted.sort()).toEqual(["latlab-other-repo", "latlab-run-a1", "latlab-run-a2", "latlab-run-unknown-expiry"]);
    expect(report.groups.find((g) => g.name === "latlab-run-a1")).toMatchObject({ state: "not-expired", selected: true, github: { runId: "42", runAttempt: "1", repository: "example/measurements" } });
    // Never another run's group, one without the tags, one whose id only starts the same, nor one that is not latlab's.
    expect(arm.deleted).not.toContain("latlab-other-run");
    expect(arm.deleted).not.toContain("latlab-no-github-tags");
    expect(arm.deleted).not.toContain("latlab-prefix-of-id");
    expect(report.groups.map((g) => g.name)).not.toContain("not-latlab");
    expect(report.groups.find((g) => g.name === "latlab-other-run")!.why).toMatch(/another GitHub run \(githubRunId=43\)/);
    expect(report.groups.find((g) => g.name === "latlab-no-github-tags")!.why).toMatch(/no githubRunId tag/);
  });

  it("--github-attempt and the repository narrow it to that attempt of that repository's run", async () => {
    const arm = fakeArm(groups);
    const report = await sweep({ client: arm.client, now: NOW, delete: true, githubRun: { runId: "42", attempt: "2", repository: "example/measurements" }, log: () => undefined });
    expect(arm.deleted.sort()).toEqual(["latlab-run-a2", "latlab-run-unknown-expiry"]);
    expect(report.groups.find((g) => g.name === "latlab-run-a1")!.why).toMatch(/another attempt of the run \(githubRunAttempt=1\)/);
    const repo = await sweep({ client: fakeArm(groups).client, now: NOW, delete: false, githubRun: { runId: "42", repository: "example/measurements" }, log: () => undefined });
    expect(repo.groups.find((g) => g.name === "latlab-other-repo")).toMatchObject({ selected: false, why: expect.stringMatching(/another repository's run \(githubRepository=someone\/else\)/) });
  });

  it("a group of the run Azure is already deleting is not deleted again, but what ARM still holds of it is reported", async () => {
    const arm = fakeArm(groups);
    const report = await sweep({ client: arm.client, now: NOW, delete: true, githubRun: { runId: "42", repository: "example/measurements" }, log: () => undefined });
    expect(arm.deleted).not.toContain("latlab-run-deleting");
    expect(report.groups.find((g) => g.name === "latlab-run-deleting")).toMatchObject({ selected: false, why: expect.stringMatching(/already deleting/) });
    expect(report.left).toEqual(["/subscriptions/s/resourceGroups/latlab-run-deleting"]);
    expect(report.githubRun).toEqual({ runId: "42", repository: "example/measurements" });
  });

  it("a dry run selects the same and deletes nothing; without --github-run only the expired groups are selected, as before", async () => {
    const arm = fakeArm(groups);
    const lines: string[] = [];
    const dry = await sweep({ client: arm.client, now: NOW, delete: false, githubRun: { runId: "42" }, log: (m) => lines.push(m) });
    expect(arm.deleted).toEqual([]);
    expect(dry.left).toBeNull();
    expect(lines.at(-1)).toMatch(/^4 of GitHub run 42 of 8 latlab resource groups \(dry run: nothing deleted\)$/);
    const expired = await sweep({ client: arm.client, now: NOW, delete: true, log: () => undefined });
    expect(expired.githubRun).toBeNull();
    expect(arm.deleted.sort()).toEqual(["latlab-no-github-tags", "latlab-other-repo", "latlab-other-run", "latlab-prefix-of-id", "latlab-run-a2"]);
  });
});
