import { describe, expect, it } from "vitest";
import { NAME_RULES, nameProblems, plannedNames, resourceNameIssues, type NameKind } from "../../../../../src/targets/azure/catalog/resourceNames.ts";
import { validateAzureRun, validateSettings } from "../../../../../src/targets/azure/catalog/validateAzure.ts";
import { listAzureResources } from "../../../../../src/targets/azure/program/listing.ts";
import { VNET_NAME_MAX_LENGTH, fitName, vnetName } from "../../../../../src/targets/azure/program/names.ts";
import { namePrefix } from "../../../../../src/targets/azure/program/types.ts";
import { planOf, settingsFor, shippedExperimentPlans } from "../helpers.ts";

/** The longest run id latlab accepts (validateSettings: 1-30 of [a-z0-9-]); `latlab run` makes 20-character ones, a project stack's name gives up to 30. */
const RUN_ID_30 = "sched-20261121-100000-abcd1234";
/** The longest names the DSL and latlab's region table allow: role 12, VNet 8, group 31, region 18. */
const GROUP_31 = "placement-group-of-31-character";
const longestPlan = (name = "longest-names", groups: { ppg?: string; availabilitySet?: string } = {}) =>
  planOf({
    name,
    defaults: { region: "germanywestcentral", zone: null, size: "Standard_D2s_v5", accelnet: true, ppg: groups.ppg ?? GROUP_31, availabilitySet: groups.availabilitySet ?? GROUP_31 },
    hosts: { clientabcdef: { vnet: "abcdefgh" }, serverabcdef: { vnet: "abcdefgi" } },
    measure: [{ tool: "ping", params: { count: 5, interval: 0.2 }, pairs: [{ from: "clientabcdef", to: "serverabcdef" }] }],
  });

const kinds = (issues: { path: string }[]) => issues.map((i) => i.path);

describe("Azure naming rules (resource-name-rules.md @ 849e815)", () => {
  it("each rule keeps its documented length and the VNet fitting uses the documented 64", () => {
    expect([NAME_RULES.virtualNetwork.min, NAME_RULES.virtualNetwork.max]).toEqual([2, 64]);
    expect(VNET_NAME_MAX_LENGTH).toBe(NAME_RULES.virtualNetwork.max);
    expect(NAME_RULES.virtualNetwork.says).toMatch(/\| virtualNetworks \| resource group \| 2-64 \|/);
    expect(NAME_RULES.resourceGroup.max).toBe(90);
    expect(NAME_RULES.virtualMachine.max).toBe(64);
    for (const k of ["subnet", "virtualNetworkPeering", "networkSecurityGroup", "securityRule", "networkInterface", "publicIpAddress", "availabilitySet"] as NameKind[]) expect(NAME_RULES[k].max, k).toBe(80);
    expect(NAME_RULES.tagValue.max).toBe(256);
  });

  it("names what is wrong: length, characters, first and last character", () => {
    expect(nameProblems(NAME_RULES.virtualNetwork, "a".repeat(70))).toEqual(["70 characters, more than the 64 allowed"]);
    expect(nameProblems(NAME_RULES.virtualNetwork, "x")).toEqual(["1 characters, fewer than the 2 required"]);
    expect(nameProblems(NAME_RULES.availabilitySet, "-a b-")).toEqual(['characters not allowed: " "', 'starts with "-"', 'ends with "-"']);
    expect(nameProblems(NAME_RULES.virtualMachine, "vm.")).toEqual(['ends with "."']);
    expect(nameProblems(NAME_RULES.computerName, "d0-client")).toEqual([]);
    expect(nameProblems(NAME_RULES.computerName, "d0_Client")).toEqual(['characters not allowed: "_" "C"']);
    expect(nameProblems(NAME_RULES.resourceGroup, "latlab-x.")).toEqual(['ends with "."']);
  });
});

describe("VNet names: 70 characters by construction, fitted to 64", () => {
  const prefix = namePrefix(RUN_ID_30);
  const raw = `${prefix}-vnet-germanywestcentral-abcdefgh`;

  it("the name latlab used to build is 70 characters, which Azure refuses", () => {
    expect(raw).toHaveLength(70);
    expect(nameProblems(NAME_RULES.virtualNetwork, raw)).toEqual(["70 characters, more than the 64 allowed"]);
  });

  it("is now its first 55 characters and 8 hex digits of its hash: deterministic, distinct, valid", () => {
    const fitted = vnetName(prefix, "germanywestcentral-abcdefgh");
    expect(fitted).toHaveLength(64);
    expect(fitted).toMatch(/^latlab-sched-20261121-100000-abcd1234-vnet-germanywestc-[0-9a-f]{8}$/);
    expect(vnetName(prefix, "germanywestcentral-abcdefgh")).toBe(fitted);
    expect(vnetName(prefix, "germanywestcentral-abcdefgi")).not.toBe(fitted);
    expect(nameProblems(NAME_RULES.virtualNetwork, fitted)).toEqual([]);
  });

  it("leaves every name Azure already accepts as it was (no stack's VNet moves)", () => {
    expect(vnetName("latlab-t1", "northeurope")).toBe("latlab-t1-vnet-northeurope");
    expect(vnetName("latlab-20261121-100000-abcd", "germanywestcentral-abcdefgh")).toBe("latlab-20261121-100000-abcd-vnet-germanywestcentral-abcdefgh");
    const at64 = `${"a".repeat(60)}-b-c`;
    expect(fitName(at64, 64)).toBe(at64);
  });
});

describe("resourceNameIssues: every name the program builds, checked before deploy", () => {
  it("accepts the longest names latlab allows today (run id 30, region 18, VNet 8, role 12, groups 31)", () => {
    const plan = longestPlan();
    const settings = settingsFor(plan, { runId: RUN_ID_30 });
    const names = plannedNames(plan, settings);
    const longest = (kind: NameKind) => Math.max(...names.filter((n) => n.kind === kind).map((n) => n.name.length));
    expect(longest("virtualNetwork")).toBe(64);
    expect(longest("availabilitySet")).toBe(7 + 30 + 3 + 7 + 31); // 78 of 80
    expect(longest("proximityPlacementGroup")).toBe(7 + 30 + 3 + 5 + 31); // 76 of 80
    expect(longest("virtualMachine")).toBe(7 + 30 + 1 + 15); // 53 of 64
    expect(longest("computerName")).toBe(15);
    expect(resourceNameIssues(plan, settings)).toEqual([]);
    expect(validateAzureRun(plan, settings)).toEqual([]);
  });

  it("accepts every shipped experiment with a 30-character run id", async () => {
    for (const s of await shippedExperimentPlans()) {
      if (!s.plan) continue;
      expect(resourceNameIssues(s.plan, settingsFor(s.plan, { runId: RUN_ID_30 })), s.name).toEqual([]);
    }
  });

  it("refuses a group name the DSL allows but Azure does not: an availability set (and PPG) ending in '-'", () => {
    const plan = longestPlan("dash", { ppg: "grp-", availabilitySet: "set-" });
    const issues = resourceNameIssues(plan, settingsFor(plan));
    expect(kinds(issues)).toEqual(["azure.names.proximityPlacementGroup", "azure.names.availabilitySet"]);
    expect(issues[1]!.message).toBe(
      'availability set (Microsoft.Compute/availabilitySets) "latlab-t1-d0-avset-set-" (23 characters): ends with "-". Azure\'s rule: 1-80 characters, alphanumerics, underscores, periods and hyphens; starts with an alphanumeric; ends with an alphanumeric or underscore (articles/azure-resource-manager/management/resource-name-rules.md @ 849e815). Built from run id "t1", deployment 0, availability set "set-": shorten or rename that',
    );
    expect(issues[0]!.message).toMatch(/assumed: the availabilitySets row/);
    expect(validateSettings(plan, settingsFor(plan)).map((i) => i.path)).toEqual(kinds(issues));
  });

  it("refuses an experiment name longer than a tag value may be (256)", () => {
    const name = `e${"x".repeat(299)}`;
    const plan = longestPlan(name);
    const issues = resourceNameIssues(plan, settingsFor(plan));
    expect(kinds(issues)).toEqual(["azure.tags.experiment"]);
    expect(issues[0]!.message).toMatch(/^value of tag experiment on the run "ex{116}…" \(300 characters\): 300 characters, more than the 256 allowed\. Azure's rule: 1-256 characters, any characters/);
  });

  it("refuses, resource by resource, what a longer run id would make (a hand-made settings object)", () => {
    const plan = longestPlan();
    const runId = "r".repeat(50);
    const issues = resourceNameIssues(plan, settingsFor(plan, { runId }));
    expect(kinds(issues)).toEqual([
      "azure.names.virtualMachine",
      "azure.names.virtualMachine",
      "azure.names.proximityPlacementGroup",
      "azure.names.availabilitySet",
    ]);
    expect(issues[0]!.message).toMatch(/^virtual machine \(Microsoft.Compute\/virtualMachines\) "latlab-r{50}-d0-clientabcdef" \(73 characters\): 73 characters, more than the 64 allowed/);
    // latlab's own run id rule says it first; the names say what Azure would have done with it.
    expect(validateSettings(plan, settingsFor(plan, { runId })).map((i) => i.path)).toEqual(["settings.runId", ...kinds(issues)]);
  });

  it("checks the very names and tags the program declares", async () => {
    const plan = longestPlan();
    const settings = settingsFor(plan, { runId: RUN_ID_30 });
    const listing = await listAzureResources(plan, settings);
    const declared = new Set<string>();
    const tagValues = new Set<string>();
    for (const r of listing.resources) {
      declared.add(r.name);
      const inputs = r.inputs as { tags?: Record<string, string>; securityRules?: { name: string }[]; computerName?: string };
      for (const v of Object.values(inputs.tags ?? {})) tagValues.add(v);
      for (const rule of inputs.securityRules ?? []) declared.add(rule.name);
      if (inputs.computerName) declared.add(inputs.computerName);
    }
    const planned = plannedNames(plan, settings);
    const names = new Set(planned.filter((n) => n.kind !== "tagName" && n.kind !== "tagValue" && n.kind !== "ipConfiguration").map((n) => n.name));
    expect(names).toEqual(declared);
    expect(new Set(planned.filter((n) => n.kind === "tagValue").map((n) => n.name))).toEqual(tagValues);
    expect([...declared].filter((n) => n.includes("-vnet-"))).toEqual(expect.arrayContaining([expect.stringMatching(/^.{55}-[0-9a-f]{8}$/)]));
  });
});
