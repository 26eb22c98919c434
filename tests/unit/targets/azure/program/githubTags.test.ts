import { describe, expect, it } from "vitest";
import { GITHUB_RUN_TAGS, runTags } from "../../../../../src/targets/azure/program/names.ts";
import { githubRunFromEnv } from "../../../../../src/targets/azure/program/types.ts";
import { listAzureResources } from "../../../../../src/targets/azure/program/listing.ts";
import { planAndSettingsFromConfig, type ConfigSource } from "../../../../../src/targets/azure/program/entryConfig.ts";
import { validateAzureRun } from "../../../../../src/targets/azure/catalog/validateAzure.ts";
import { clientPublicKey, CREATED_AT, planOf, SEED, settingsFor, SSH_FROM } from "../helpers.ts";

const IN_ACTIONS = { GITHUB_ACTIONS: "true", GITHUB_RUN_ID: "1658821493", GITHUB_RUN_ATTEMPT: "3", GITHUB_REPOSITORY: "octocat/Hello-World" };
const plan = planOf({ name: "gh-tags", defaults: { region: "eastus", zone: "1", size: "Standard_D2s_v5" } });

describe("GitHub run tags", () => {
  it("outside GitHub Actions: no GitHub run, and the tags are the five they always were", () => {
    expect(githubRunFromEnv({})).toBeUndefined();
    // GITHUB_* without GITHUB_ACTIONS=true (a developer's shell that copied them) is not a GitHub run either.
    expect(githubRunFromEnv({ ...IN_ACTIONS, GITHUB_ACTIONS: "false" })).toBeUndefined();
    expect(Object.keys(runTags(settingsFor(plan)))).toEqual(["owner", "runId", "experiment", "createdAt", "expiresAt"]);
  });

  it("inside GitHub Actions: the run id, attempt and repository as GitHub sets them, tagged beside the others", () => {
    const githubRun = githubRunFromEnv(IN_ACTIONS);
    expect(githubRun).toEqual({ runId: "1658821493", runAttempt: "3", repository: "octocat/Hello-World" });
    expect(runTags(settingsFor(plan, { githubRun }))).toMatchObject({ owner: "latlab", runId: "t1", githubRunId: "1658821493", githubRunAttempt: "3", githubRepository: "octocat/Hello-World" });
    expect(GITHUB_RUN_TAGS).toEqual({ runId: "githubRunId", runAttempt: "githubRunAttempt", repository: "githubRepository" });
    // Names GitHub allows: dots, underscores and dashes in a repository, a managed user's _SHORT-CODE owner, the longest owner and name.
    for (const repository of ["a/b", "my-org/repo.name_2", "mona-lisa_octo/x", `${"o".repeat(39)}/${"r".repeat(100)}`, "o/.github"]) {
      expect(githubRunFromEnv({ ...IN_ACTIONS, GITHUB_REPOSITORY: repository })?.repository).toBe(repository);
    }
  });

  it("a value GitHub would not set is refused, naming the variable; none is tagged", () => {
    const refused = (env: Record<string, string | undefined>, pattern: RegExp) => expect(() => githubRunFromEnv({ ...IN_ACTIONS, ...env })).toThrow(pattern);
    refused({ GITHUB_RUN_ID: "12a" }, /GITHUB_RUN_ID: expected a GitHub run id: digits.*got "12a"/);
    refused({ GITHUB_RUN_ID: "0123" }, /GITHUB_RUN_ID/);
    refused({ GITHUB_RUN_ID: "1".repeat(20) }, /GITHUB_RUN_ID/);
    refused({ GITHUB_RUN_ID: undefined }, /GITHUB_RUN_ID: not set/);
    refused({ GITHUB_RUN_ATTEMPT: "0" }, /GITHUB_RUN_ATTEMPT: expected a run attempt/);
    refused({ GITHUB_RUN_ATTEMPT: "" }, /GITHUB_RUN_ATTEMPT: not set/);
    refused({ GITHUB_REPOSITORY: "no-slash" }, /GITHUB_REPOSITORY: expected owner\/name/);
    refused({ GITHUB_REPOSITORY: "a/b/c" }, /GITHUB_REPOSITORY/);
    refused({ GITHUB_REPOSITORY: "-a/b" }, /GITHUB_REPOSITORY/);
    refused({ GITHUB_REPOSITORY: "o/.." }, /GITHUB_REPOSITORY/);
    refused({ GITHUB_REPOSITORY: `${"o".repeat(40)}/r` }, /GITHUB_REPOSITORY/);
    refused({ GITHUB_REPOSITORY: `o/${"r".repeat(101)}` }, /GITHUB_REPOSITORY/);
    refused({ GITHUB_REPOSITORY: "o/r x" }, /GITHUB_REPOSITORY/);
    // Every problem at once, so one fix suffices.
    expect(() => githubRunFromEnv({ GITHUB_ACTIONS: "true" })).toThrow(/GITHUB_RUN_ID: not set; GITHUB_RUN_ATTEMPT: not set; GITHUB_REPOSITORY: not set/);
  });

  it("every value accepted fits an Azure tag value (at most 256 characters), as the run's own name check says", () => {
    const longest = githubRunFromEnv({ ...IN_ACTIONS, GITHUB_RUN_ID: "9".repeat(19), GITHUB_RUN_ATTEMPT: "9".repeat(9), GITHUB_REPOSITORY: `${"o".repeat(39)}/${"r".repeat(100)}` })!;
    for (const value of Object.values(longest)) expect(value.length).toBeLessThanOrEqual(256);
    expect(validateAzureRun(plan, settingsFor(plan, { githubRun: longest }))).toEqual([]);
  });

  it("every taggable resource the program declares carries the GitHub run tags", async () => {
    const githubRun = githubRunFromEnv(IN_ACTIONS)!;
    const listing = await listAzureResources(plan, settingsFor(plan, { githubRun }));
    const tagged = listing.resources.filter((r) => r.inputs.tags !== undefined);
    expect(tagged.map((r) => r.type)).toEqual(expect.arrayContaining(["azure-native:resources:ResourceGroup", "azure-native:network:VirtualNetwork", "azure-native:compute:VirtualMachine", "azure-native:network:NetworkInterface"]));
    for (const r of tagged) expect(r.inputs.tags, `${r.type} ${r.name}`).toMatchObject({ githubRunId: "1658821493", githubRunAttempt: "3", githubRepository: "octocat/Hello-World" });
    const plain = await listAzureResources(plan, settingsFor(plan));
    for (const r of plain.resources) expect(Object.keys((r.inputs.tags as Record<string, string> | undefined) ?? {}).filter((k) => k.startsWith("github"))).toEqual([]);
  });

  it("the Pulumi project (entryConfig) takes them from the environment of `pulumi up`, and refuses a bad one before anything", async () => {
    const values: Record<string, string> = { experiment: "ppg-vs-zone", sshFrom: SSH_FROM, sshPublicKey: clientPublicKey(), hostKeySeed: SEED, createdAt: CREATED_AT.toISOString() };
    const source: ConfigSource = (key) => values[key];
    expect((await planAndSettingsFromConfig(source, "s", CREATED_AT, IN_ACTIONS)).settings.githubRun).toEqual({ runId: "1658821493", runAttempt: "3", repository: "octocat/Hello-World" });
    expect((await planAndSettingsFromConfig(source, "s", CREATED_AT, {})).settings.githubRun).toBeUndefined();
    await expect(planAndSettingsFromConfig(source, "s", CREATED_AT, { ...IN_ACTIONS, GITHUB_RUN_ATTEMPT: "x" })).rejects.toThrow(/GITHUB_RUN_ATTEMPT/);
  });
});
