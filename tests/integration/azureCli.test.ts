import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
// What these tests promise: no Pulumi CLI (CI puts one on PATH for the rehearsal tests: take its
// folder out, and give a HOME without ~/.pulumi), and no Azure credentials.
const NO_PULUMI_PATH = (process.env.PATH ?? "")
  .split(delimiter)
  .filter((d) => d && !existsSync(join(d, "pulumi")))
  .join(delimiter);
const HOME = mkdtempSync(join(tmpdir(), "latlab-az-home-"));
const made: string[] = [HOME];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "latlab-az-"));
  made.push(d);
  return d;
};
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});
/** A subscription id of the right shape; nothing here ever reaches Azure (no Pulumi CLI, no credentials). */
const SUBSCRIPTION = "00000000-0000-4000-8000-000000000000";
const latlab = (args: string[], subscription: string = SUBSCRIPTION) =>
  spawnSync(process.execPath, [join(ROOT, "bin/latlab.js"), ...args], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, CI: "true", PATH: NO_PULUMI_PATH, HOME, AZURE_SUBSCRIPTION_ID: "", ARM_SUBSCRIPTION_ID: subscription, AZURE_CLIENT_ID: "", ARM_CLIENT_ID: "" },
  });

describe("latlab --target azure, offline (no Pulumi CLI, no credentials here)", () => {
  it("plan --json lists every resource and a cost, under mocks", () => {
    const r = latlab(["plan", "ppg-vs-zone", "--target", "azure", "--json"]);
    expect(r.status, r.stderr).toBe(0);
    const { plan, azure } = JSON.parse(r.stdout);
    expect(plan.experiment.name).toBe("ppg-vs-zone");
    const types = azure.resources.map((x: { type: string }) => x.type.split(":").pop());
    expect(types.filter((t: string) => t === "VirtualMachine")).toHaveLength(4);
    expect(types).toContain("ProximityPlacementGroup");
    const nics = azure.resources.filter((x: { type: string }) => x.type.endsWith("NetworkInterface"));
    expect(nics.every((n: { inputs: { acceleratedNetworking: boolean } }) => n.inputs.acceleratedNetworking === true)).toBe(true);
    expect(azure.cost.hourlyUsd).toBeGreaterThan(0);
    expect(azure.cost.totalUsd).toBeGreaterThan(azure.cost.hourlyUsd * 0.5);
    expect(r.stdout).not.toMatch(/PRIVATE KEY/);
  });

  it("--max-cost below the estimate refuses", () => {
    const r = latlab(["plan", "ppg-vs-zone", "--target", "azure", "--max-cost", "0.01"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/refused: .*0\.01/);
  });

  it("refuses at plan time what Azure would refuse, naming variant, host and field", () => {
    const r = latlab(["plan", "tests/fixtures/experiments/accelnet-on-b1s.ts", "--target", "azure"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/cannot be deployed on Azure/);
    expect(r.stderr).toMatch(/accelnet.*Standard_B1s|Standard_B1s.*Accelerated Networking/i);
  });

  it("run needs --ssh-from and creates nothing without it", () => {
    const out = tempDir();
    const r = latlab(["run", "ppg-vs-zone", "--target", "azure", "--out", out]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("--ssh-from CIDR is required");
    expect(existsSync(join(out, "results.json"))).toBe(false);
  });

  it("run refuses an SSH source open to everyone", () => {
    const r = latlab(["run", "ppg-vs-zone", "--target", "azure", "--ssh-from", "0.0.0.0/0"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/--ssh-from: .*opens SSH to everyone|wider than/);
  });

  it("run without a subscription (no ARM_/AZURE_SUBSCRIPTION_ID, no Azure CLI) stops before anything, saying what to set", () => {
    const out = tempDir();
    const r = latlab(["run", "ppg-vs-zone", "--target", "azure", "--ssh-from", "203.0.113.7/32", "--out", out], "");
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/no Azure subscription: set ARM_SUBSCRIPTION_ID \(or AZURE_SUBSCRIPTION_ID\)/);
    expect(existsSync(join(out, "results.json"))).toBe(false);
  });

  it("run without the Pulumi CLI stops before anything is created and says how to install it", () => {
    const out = tempDir();
    const r = latlab(["run", "ppg-vs-zone", "--target", "azure", "--ssh-from", "203.0.113.7/32", "--out", out]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/estimated cost: \$/);
    expect(r.stderr).toContain(`azure: subscription ${SUBSCRIPTION} (from ARM_SUBSCRIPTION_ID)`);
    expect(r.stderr).toMatch(/Pulumi CLI/);
    expect(r.stderr).toMatch(/--install-pulumi/);
    expect(existsSync(join(out, "results.json"))).toBe(false);
  });

  it("run's offline listing plans the same run: its --duration, not the experiment's default", () => {
    const totals = (text: string) => text.split("\n").filter((l) => /^\d+ deployments, .*estimated measurement time|^cost: .*worst case/.test(l));
    const planned = totals(latlab(["plan", "ppg-vs-zone", "--target", "azure", "--duration", "7"]).stdout);
    expect(planned).toHaveLength(2);
    expect(totals(latlab(["plan", "ppg-vs-zone", "--target", "azure"]).stdout)).not.toEqual(planned);
    const out = tempDir();
    const r = latlab(["run", "ppg-vs-zone", "--target", "azure", "--ssh-from", "203.0.113.7/32", "--duration", "7", "--out", out]);
    expect(r.stderr).toMatch(/Azure resources \(offline/);
    expect(totals(r.stderr)).toEqual(planned);
    expect(r.status).toBe(1);
  });
});
