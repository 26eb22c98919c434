import * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { ExperimentDefinitionError } from "../../../../../src/dsl/errors.ts";
import { findTool } from "../../../../../src/tools/registry.ts";
import {
  AzureValidationError,
  BRING_UP_ALLOWANCE_SECONDS,
  PER_CELL_OVERHEAD_SECONDS,
  PER_DEPLOYMENT_OVERHEAD_SECONDS,
  TEARDOWN_ALLOWANCE_SECONDS,
  azureWarnings,
  checkTtl,
  recommendedExpiresAt,
  sshFromProblem,
  validateForAzure,
  validateSettings,
  worstCaseRun,
} from "../../../../../src/targets/azure/catalog/validateAzure.ts";
import { CREATED_AT, planOf, settingsFor, withHost } from "../helpers.ts";

const paths = (issues: { path: string }[]) => issues.map((i) => i.path);

describe("validateForAzure: what Azure would refuse, before anything is created", () => {
  it("accepts a plain zonal pair with Accelerated Networking on a size that has it", () => {
    expect(validateForAzure(planOf({ name: "ok", defaults: { region: "uksouth", zone: "1", size: "Standard_D2s_v5", accelnet: true } }))).toEqual([]);
  });

  it("refuses Accelerated Networking on B1s, naming variant, host and field", () => {
    const plan = planOf({ name: "b1s", defaults: { region: "uksouth", zone: "1", size: "Standard_B1s" }, axes: { accelnet: [false, true] } });
    const issues = validateForAzure(plan);
    expect(paths(issues)).toEqual(["variants[accelnet=true].hosts.client.accelnet", "variants[accelnet=true].hosts.server.accelnet"]);
    expect(issues[0]!.message).toMatch(/Standard_B1s \(1 vCPU\) does not support Accelerated Networking \(Azure's SKU capability AcceleratedNetworkingEnabled is False, in latlab's SKU snapshot\)/);
  });

  it("refuses a zonal host in a region without zones (UK West)", () => {
    const plan = planOf({ name: "ukw", defaults: { region: "ukwest", zone: "1", size: "Standard_B1s", accelnet: false } });
    const issues = validateForAzure(plan);
    expect(paths(issues)).toEqual(["variants[default].hosts.client.zone", "variants[default].hosts.server.zone"]);
    expect(issues[0]!.message).toMatch(/UK West \(ukwest\) has no availability zones/);
  });

  it("accepts UK West without a zone (seed 000's cross-region client)", () => {
    const plan = planOf({ name: "ukw2", defaults: { region: "uksouth", zone: "1", size: "Standard_B1s", accelnet: false }, hosts: { client: { region: "ukwest", zone: null }, server: {} } });
    expect(validateForAzure(plan)).toEqual([]);
  });

  it("refuses a PPG across zones (buildPlan refuses it too; a hand-made plan meets the Azure check)", () => {
    expect(() => planOf({ name: "ppgz", defaults: { region: "uksouth", size: "Standard_D2s_v5", ppg: true }, hosts: { client: { zone: "1" }, server: { zone: "2" } } })).toThrow(ExperimentDefinitionError);
    const base = planOf({ name: "ppgz", defaults: { region: "uksouth", zone: "1", size: "Standard_D2s_v5", ppg: true } });
    const plan = withHost(base, "default", "server", { zone: "2" });
    const issues = validateForAzure(plan);
    expect(paths(issues)).toEqual(["variants[default].hosts.client+server.ppg"]);
    expect(issues[0]!.message).toMatch(/"ppg" would span uksouth\/zone 1 and uksouth\/zone 2: a PPG is pinned to one datacenter/);
  });

  it("refuses a PPG across regions", () => {
    const base = planOf({ name: "ppgr", defaults: { region: "uksouth", size: "Standard_D2s_v5", ppg: true } });
    const issues = validateForAzure(withHost(base, "default", "server", { region: "ukwest" }));
    expect(issues.map((i) => i.message).join("\n")).toMatch(/would span uksouth\/no zone and ukwest\/no zone/);
  });

  it("refuses an availability set with zones", () => {
    expect(() => planOf({ name: "avz", defaults: { region: "uksouth", zone: "1", size: "Standard_D2s_v5", availabilitySet: true } })).toThrow(/cannot be combined with zones/);
    const base = planOf({ name: "avz", defaults: { region: "uksouth", size: "Standard_D2s_v5", availabilitySet: true } });
    const issues = validateForAzure(withHost(base, "default", "client", { zone: "1" }));
    expect(paths(issues)).toEqual(["variants[default].hosts.client.availabilitySet"]);
    expect(issues[0]!.message).toMatch(/cannot combine an availability set with zones/);
  });

  it("refuses an availability set whose members disagree on the PPG", () => {
    const base = planOf({ name: "avp", defaults: { region: "uksouth", size: "Standard_D2s_v5", availabilitySet: true, ppg: true } });
    const issues = validateForAzure(withHost(base, "default", "client", { ppg: null }));
    expect(paths(issues)).toEqual(["variants[default].hosts.client+server.ppg"]);
    expect(issues[0]!.message).toMatch(/mixes PPGs \(none, ppg\)/);
  });

  it("refuses a region missing from the region table, but never a size it does not know: that one is UNKNOWN, said, and read live", () => {
    const plan = planOf({ name: "unk", defaults: { region: "marsnorth", size: "Standard_Z9_v9" } });
    const issues = validateForAzure(plan);
    expect(paths(issues)).toEqual(["variants[default].hosts.client.region", "variants[default].hosts.server.region"]);
    const warnings = azureWarnings(plan);
    expect(warnings.filter((w) => w.includes("Standard_Z9_v9 is not a size latlab knows"))).toHaveLength(2);
    expect(warnings[0]).toMatch(/UNKNOWN offline and are read from Azure's Resource SKUs API before anything is deployed/);
  });

  it("plans any current size without refusing it: E4s_v5, D4ds_v6, F8als_v6 (vCPUs from the name, the rest live)", () => {
    for (const size of ["Standard_E4s_v5", "Standard_D4ds_v6", "Standard_F8als_v6"]) {
      const plan = planOf({ name: "cur", defaults: { region: "uksouth", zone: "1", size, accelnet: true } });
      expect(validateForAzure(plan), size).toEqual([]);
      expect(azureWarnings(plan).join("\n"), size).toMatch(new RegExp(`${size}: vCPUs \\d+ and family \\w+ known offline`));
    }
  });

  it("a typo of a size gets a did-you-mean from the snapshot's names", () => {
    const plan = planOf({ name: "typo", defaults: { region: "uksouth", zone: "1", size: "Standard_D4sv5", accelnet: true } });
    expect(azureWarnings(plan).join("\n")).toMatch(/did you mean "Standard_D4s_v5"\?/);
  });

  it("names a previous-generation size plainly, with its restriction, retirement and a current replacement", () => {
    const plan = planOf({ name: "old", defaults: { region: "uksouth", zone: "1", size: "Standard_D3_v2", accelnet: true } });
    expect(validateForAzure(plan)).toEqual([]);
    expect(azureWarnings(plan).join("\n")).toMatch(/Standard_D3_v2 is a previous-generation size \(Dv2 series\): since 2026-07 Azure does not let new subscriptions deploy it .*retires on 2028-05-01\. Use Standard_D4s_v5/);
  });

  it("warns (does not refuse) when accelnet is off on a size whose page says Required", () => {
    const plan = planOf({ name: "req", defaults: { region: "uksouth", zone: "1", size: "Standard_D2s_v5", accelnet: false } });
    expect(validateForAzure(plan)).toEqual([]);
    expect(azureWarnings(plan)).toHaveLength(2);
    expect(azureWarnings(plan)[0]).toMatch(/Required for Standard_D2s_v5/);
  });
});

describe("validateSettings", () => {
  const plan = planOf({ name: "s", defaults: { region: "uksouth", zone: "1", size: "Standard_D2s_v5" } });

  it("accepts good settings", () => {
    expect(validateSettings(plan, settingsFor(plan))).toEqual([]);
  });

  it.each(["*", "0.0.0.0/0", "Internet", "any", "::/0", "10.0.0.0/8", "203.0.113.0/16", "not-an-ip", "203.0.113.7/33", "2001:db8::1", "2001:db8::/56"])("refuses sshFrom %s", (sshFrom) => {
    expect(sshFromProblem(sshFrom)).toBeDefined();
    expect(paths(validateSettings(plan, settingsFor(plan, { sshFrom })))).toEqual(["settings.sshFrom"]);
  });

  it.each(["203.0.113.7", "203.0.113.7/32", "203.0.113.0/24"])("accepts sshFrom %s", (sshFrom) => {
    expect(sshFromProblem(sshFrom)).toBeUndefined();
  });

  it("refuses a non-RSA or short client key, a private key, a reserved admin name, a bad run id", () => {
    const ed = settingsFor(plan).hostKeys["d0-client"]!.publicKey;
    expect(validateSettings(plan, settingsFor(plan, { sshPublicKey: ed }))[0]!.message).toMatch(/expected an OpenSSH "ssh-rsa" public key line.*got ssh-ed25519/);
    expect(paths(validateSettings(plan, settingsFor(plan, { adminUsername: "admin" })))).toEqual(["settings.adminUsername"]);
    expect(paths(validateSettings(plan, settingsFor(plan, { adminUsername: "Root!" })))).toEqual(["settings.adminUsername"]);
    expect(paths(validateSettings(plan, settingsFor(plan, { runId: "Run_1" })))).toEqual(["settings.runId"]);
    const priv = settingsFor(plan).hostKeys["d0-client"]!.privateKey;
    expect(paths(validateSettings(plan, settingsFor(plan, { sshPublicKey: priv })))).toContain("settings.sshPublicKey");
  });

  it("refuses an RSA key under 2048 bits", async () => {
    const { generateKeyPairSync } = await import("node:crypto");
    const { toOpenSshPublicLine } = await import("../../../../../src/targets/azure/access/keys.ts");
    const small = toOpenSshPublicLine(generateKeyPairSync("rsa", { modulusLength: 1024 }).publicKey);
    expect(validateSettings(plan, settingsFor(plan, { sshPublicKey: small }))[0]!.message).toMatch(/1024 bits; Azure requires at least 2048/);
  });

  it("needs a host key for every host, so the runner can pin each one", () => {
    const s = settingsFor(plan);
    const { ["d0-server"]: _gone, ...fewer } = s.hostKeys;
    const issues = validateSettings(plan, { ...s, hostKeys: fewer });
    expect(paths(issues)).toEqual(["settings.hostKeys.d0-server"]);
    expect(issues[0]!.message).toMatch(/the runner could not pin it/);
    expect(paths(validateSettings(plan, { ...s, hostKeys: { ...s.hostKeys, "d0-client": { privateKey: "nope", publicKey: "ssh-ed25519 AAAA" } } }))).toEqual(["settings.hostKeys.d0-client"]);
  });
});

describe("TTL: longer than the run's worst case", () => {
  const plan = planOf({ name: "ttl", defaults: { region: "uksouth", zone: "1", size: "Standard_D2s_v5" }, axes: { ppg: [false, true] } });

  it("is bring-up + every cell at its client timeout (+ overheads) + teardown", () => {
    const timeouts = plan.cells.map((c) => findTool(c.tool)!.client({ targetAddress: "x", port: 1, workDir: "/w", assetsDir: "/a" }, c.params).timeoutSeconds);
    const expected =
      BRING_UP_ALLOWANCE_SECONDS +
      timeouts.reduce((a, b) => a + b, 0) +
      plan.cells.length * PER_CELL_OVERHEAD_SECONDS +
      plan.deployments.length * PER_DEPLOYMENT_OVERHEAD_SECONDS +
      TEARDOWN_ALLOWANCE_SECONDS;
    expect(worstCaseRun(plan).seconds).toBe(expected);
    // sockperf duration 1 s: ceil((1 + overhead) × 1.5) + 20; ping 5 × 0.2 s: ceil(4 × 0.2 + 2 + 10)
    expect(timeouts.every((t) => t > 0)).toBe(true);
  });

  it("refuses a TTL not longer than the worst case, and says what to set", () => {
    const worst = worstCaseRun(plan).seconds;
    const exactly = new Date(CREATED_AT.getTime() + worst * 1000);
    const issues = checkTtl(plan, exactly, CREATED_AT);
    expect(paths(issues)).toEqual(["settings.expiresAt"]);
    expect(issues[0]!.message).toMatch(/is not longer than the run's worst case .*the sweeper could delete the hosts mid-run. Set expiresAt after 2026-11-21T/);
    expect(checkTtl(plan, new Date(exactly.getTime() + 1000), CREATED_AT)).toEqual([]);
    expect(paths(checkTtl(plan, new Date(CREATED_AT.getTime() - 1), CREATED_AT))).toEqual(["settings.expiresAt"]);
    expect(paths(checkTtl(plan, new Date("nope"), CREATED_AT))).toEqual(["settings.expiresAt"]);
  });

  it("grows with the run: a long run needs a long TTL", () => {
    const long = planOf({ name: "long", defaults: { region: "uksouth", zone: "1", size: "Standard_D2s_v5" }, measure: [{ tool: "sockperf", params: { duration: 3600 } }] });
    const twoHours = new Date(CREATED_AT.getTime() + 2 * 3600_000);
    expect(checkTtl(long, twoHours, CREATED_AT)).toHaveLength(1);
    expect(recommendedExpiresAt(long, CREATED_AT).getTime()).toBeGreaterThan(CREATED_AT.getTime() + worstCaseRun(long).seconds * 1000);
    expect(validateSettings(long, settingsFor(long, { expiresAt: twoHours })).map((i) => i.path)).toEqual(["settings.expiresAt"]);
  });
});

describe("refusals come before the first resource", () => {
  it("createProgram throws AzureValidationError and the mocks see no resource", async () => {
    const seen: string[] = [];
    await pulumi.runtime.setMocks({ newResource: (a) => (seen.push(a.type), { id: a.name, state: a.inputs }), call: (a) => a.inputs }, "latlab", "refusal", false);
    const { createProgram } = await import("../../../../../src/targets/azure/program/program.ts");
    const plan = planOf({ name: "refused", defaults: { region: "ukwest", zone: "1", size: "Standard_B1s" } });
    let error: unknown;
    try {
      await createProgram(plan, settingsFor(plan, { sshFrom: "*" }))();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(AzureValidationError);
    expect(error).toBeInstanceOf(ExperimentDefinitionError);
    const message = (error as Error).message;
    expect(message).toMatch(/^experiment "refused" cannot be deployed on Azure:/);
    for (const p of ["variants[default].hosts.client.accelnet", "variants[default].hosts.client.zone", "settings.sshFrom"]) expect(message).toContain(p);
    expect(seen).toEqual([]);
  });
});
