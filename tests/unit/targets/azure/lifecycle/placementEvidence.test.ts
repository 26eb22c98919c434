import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { HttpGet } from "../../../../../src/targets/azure/catalog/computeCapacity.ts";
import { attachPlacement, PLACEMENT_API_VERSION, readPlacementEvidence } from "../../../../../src/targets/azure/lifecycle/placementEvidence.ts";
import type { AzureOutputs } from "../../../../../src/targets/azure/program/types.ts";
import type { HostEndpoint } from "../../../../../src/targets/target.ts";
import { HostPlacementSchema } from "../../../../../src/results/placement.ts";
import { planOf } from "../helpers.ts";

// Spec examples and bodies built from recorded values: tests/fixtures/azure/placement/README.md.
const fixture = (name: string) => readFileSync(new URL(`../../../../fixtures/azure/placement/${name}`, import.meta.url), "utf8");
const specBody = (name: string) => JSON.stringify((JSON.parse(fixture(name)) as { responses: { 200: { body: unknown } } }).responses[200].body);

const ARM = "https://management.azure.com";
const SUB = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/latlab-t1/providers/Microsoft.Compute";
const PPG = `${SUB}/proximityPlacementGroups/latlab-t1-d1-ppg-ppg`;
const vmId = (d: number, role: string) => `${SUB}/virtualMachines/latlab-t1-d${d}-${role}`;
const ppgUrl = `${ARM}${PPG}?api-version=${PLACEMENT_API_VERSION}&includeColocationStatus=true`;
const ivUrl = (d: number, role: string) => `${ARM}${vmId(d, role)}/instanceView?api-version=${PLACEMENT_API_VERSION}`;

const plan = planOf({ name: "ppg", axes: { ppg: [false, true] }, baseline: { ppg: false }, defaults: { region: "eastus", zone: "1", size: "Standard_D2s_v5", accelnet: true } } as never);

/** Stack outputs as program.ts exports them: d0 without a PPG, d1's hosts in PPG "ppg". */
function outputs(over: (h: AzureOutputs["hosts"][number]) => Partial<AzureOutputs["hosts"][number]> = () => ({})): AzureOutputs {
  return {
    resourceGroup: "latlab-t1",
    hosts: plan.deployments.flatMap((d) =>
      d.hosts.map((h) => {
        const base = { deployment: d.id, role: h.role, publicIp: "198.51.100.1", privateIp: "10.0.0.4", hostKey: "ssh-ed25519 AAAA", vmName: `latlab-t1-d${d.index}-${h.role}`, vmId: vmId(d.index, h.role), ...(h.ppg ? { ppgId: PPG } : {}) };
        return { ...base, ...over(base) };
      }),
    ),
  };
}

/** A fake ARM answering `routes` (url → status, body) and recording every call. */
function fakeArm(routes: Record<string, [number, string]>) {
  const calls: { url: string; auth: string | undefined }[] = [];
  const http: HttpGet = async (url, init) => {
    calls.push({ url, auth: init.headers.authorization });
    const reply = routes[url];
    if (!reply) return { ok: false, status: 404, text: async () => JSON.stringify({ error: { code: "ResourceNotFound", message: `no route for ${url}` } }) };
    return { ok: reply[0] >= 200 && reply[0] < 300, status: reply[0], text: async () => reply[1] };
  };
  return { http, calls };
}

const instanceViews = (): Record<string, [number, string]> =>
  Object.fromEntries(plan.deployments.flatMap((d) => d.hosts.map((h) => [ivUrl(d.index, h.role), [200, specBody("spec-VirtualMachine_Get_InstanceView.json")] as [number, string]])));

const read = (routes: Record<string, [number, string]>, out = outputs(), token = async () => "tok") => {
  const arm = fakeArm(routes);
  return { arm, evidence: readPlacementEvidence(plan, out, { http: arm.http, token, now: () => new Date("2026-11-21T10:00:00Z") }) };
};

describe("placement evidence from ARM", () => {
  it("reads each PPG once with includeColocationStatus=true and each VM's instance view, with the bearer token; Aligned as Azure's recordings say it", async () => {
    const { arm, evidence } = read({ [ppgUrl]: [200, fixture("ppg-aligned.json")], ...instanceViews() });
    const e = await evidence;
    expect(Object.keys(e).sort()).toEqual(["ppg=false/client", "ppg=false/server", "ppg=true/client", "ppg=true/server"]);
    for (const p of Object.values(e)) expect(HostPlacementSchema.safeParse(p).success).toBe(true);
    expect(arm.calls.filter((c) => c.url === ppgUrl)).toHaveLength(1);
    expect(arm.calls.every((c) => c.auth === "Bearer tok")).toBe(true);
    expect(arm.calls).toHaveLength(5);
    // d0 asked for no PPG: none is read, none recorded.
    expect(e["ppg=false/client"]!.ppg).toBeUndefined();
    const server = e["ppg=true/server"]!;
    expect(server).toMatchObject({ readAt: "2026-11-21T10:00:00.000Z", source: "azure" });
    expect(server.ppg).toMatchObject({ name: "ppg", id: PPG, status: "Aligned", colocationStatus: { code: "ColocationStatus/Aligned", level: "Info", message: "All resources in the proximity placement group are aligned." }, member: { code: "ColocationStatus/Aligned" } });
    expect(server.ppg!.reason).toBeUndefined();
    // The spec example's instance view: fault / update domain 1, running.
    expect(server.vm).toMatchObject({ name: "latlab-t1-d1-server", id: vmId(1, "server"), read: "ok", platformFaultDomain: 1, platformUpdateDomain: 1, powerState: "running", provisioningState: "succeeded" });
    expect(server.vm.statuses).toHaveLength(2);
  });

  it("NotAligned: the PPG's status, and the member VM Azure calls out", async () => {
    const e = await read({ [ppgUrl]: [200, fixture("ppg-not-aligned.json")], ...instanceViews() }).evidence;
    expect(e["ppg=true/server"]!.ppg).toMatchObject({ status: "NotAligned", member: { code: "ColocationStatus/NotAligned" } });
    expect(e["ppg=true/client"]!.ppg).toMatchObject({ status: "NotAligned", member: { code: "ColocationStatus/Aligned" } });
  });

  it("Unknown, as Azure says it (a member deallocated), and Unknown with a reason when ARM gives no colocationStatus (the spec example, asked without it)", async () => {
    const unknown = await read({ [ppgUrl]: [200, fixture("ppg-unknown.json")], ...instanceViews() }).evidence;
    expect(unknown["ppg=true/server"]!.ppg).toMatchObject({ status: "Unknown", colocationStatus: { message: "Colocation status is currently unknown." } });
    expect(unknown["ppg=true/server"]!.ppg!.reason).toBeUndefined();
    const none = await read({ [ppgUrl]: [200, specBody("spec-ProximityPlacementGroup_Get.json")], ...instanceViews() }).evidence;
    expect(none["ppg=true/server"]!.ppg).toMatchObject({ status: "Unknown", reason: "ARM returned no colocationStatus" });
  });

  it("a read that fails is Unknown / failed with the reason, never an error: HTTP 403 with the role to grant, a broken body, no token, ids missing from older stacks", async () => {
    const forbidden = await read({ [ppgUrl]: [403, fixture("arm-error-403.json")], ...instanceViews(), [ivUrl(1, "client")]: [200, "<html>proxy</html>"] }).evidence;
    expect(forbidden["ppg=true/server"]!.ppg!.status).toBe("Unknown");
    expect(forbidden["ppg=true/server"]!.ppg!.reason).toMatch(/^not read: colocation status of PPG latlab-t1-d1-ppg-ppg: HTTP 403 AuthorizationFailed: .*Microsoft\.Compute\/proximityPlacementGroups\/read/);
    expect(forbidden["ppg=true/server"]!.ppg!.reason).toContain("Reader role");
    expect(forbidden["ppg=true/client"]!.vm).toMatchObject({ read: "failed", reason: expect.stringMatching(/instance view of VM latlab-t1-d1-client: the response is not JSON/) });
    expect(forbidden["ppg=true/server"]!.vm.read).toBe("ok");

    const noToken = await read({}, outputs(), async () => {
      throw new Error("no credential");
    }).evidence;
    expect(noToken["ppg=true/server"]!.ppg!.reason).toMatch(/could not get an Azure token .*no credential/);
    expect(noToken["ppg=false/client"]!.vm).toMatchObject({ read: "failed", reason: expect.stringMatching(/no credential/) });

    const old = await read({}, outputs(() => ({ vmId: undefined, ppgId: undefined }))).evidence;
    expect(old["ppg=true/server"]!.ppg).toMatchObject({ status: "Unknown", reason: expect.stringMatching(/no PPG id/) });
    expect(old["ppg=true/server"]!.vm).toMatchObject({ read: "failed", reason: expect.stringMatching(/no VM id/) });
  });

  it("sends the token to ARM resource ids only", async () => {
    const { arm, evidence } = read({}, outputs(() => ({ vmId: "https://evil.example/x", ppgId: "//evil.example/ppg" })));
    const e = await evidence;
    expect(arm.calls).toHaveLength(0);
    expect(e["ppg=true/server"]!.ppg!.reason).toMatch(/is not an ARM resource id/);
  });

  it("attachPlacement puts the evidence on each host and logs each PPG once; a reader that throws leaves the hosts as they were", async () => {
    const e = await read({ [ppgUrl]: [200, fixture("ppg-not-aligned.json")], ...instanceViews() }).evidence;
    const hosts = plan.deployments.flatMap((d) => d.hosts.map((h) => ({ deployment: d.id, role: h.role, actual: {} }) as unknown as HostEndpoint));
    const log: string[] = [];
    await attachPlacement(plan, outputs(), hosts, async () => e, (m) => log.push(m));
    expect(hosts.every((h) => h.placement)).toBe(true);
    expect(log).toEqual([expect.stringMatching(/^azure: placement: deployment ppg=true, PPG 'ppg': NotAligned — At least one VM resource is not aligned .* comparisons on these hosts will say so$/)]);
    const bare = plan.deployments.flatMap((d) => d.hosts.map((h) => ({ deployment: d.id, role: h.role, actual: {} }) as unknown as HostEndpoint));
    await attachPlacement(plan, outputs(), bare, async () => {
      throw new Error("boom");
    }, (m) => log.push(m));
    expect(bare.some((h) => h.placement)).toBe(false);
    expect(log.at(-1)).toBe("azure: placement evidence not read: boom");
  });
});
