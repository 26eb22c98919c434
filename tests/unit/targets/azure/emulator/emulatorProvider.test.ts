import { describe, expect, it } from "vitest";
import { ArmRequestError, type ArmClient } from "../../../../../src/targets/azure/emulator/provider/armClient.ts";
import { EmulatorProvider, INPUTS_KEY, tokenOfUrn } from "../../../../../src/targets/azure/emulator/provider/emulatorProvider.ts";
import { SECRET_SIG, SIG_KEY, UNKNOWN, unwrapSecrets, wrapSecret } from "../../../../../src/targets/azure/emulator/provider/wireValues.ts";
import { armToSdk, armTypeForToken, sdkToArm } from "../../../../../src/targets/azure/emulator/spec/armSpec.ts";

const shape = { typeOf: armTypeForToken, toArm: sdkToArm, toSdk: armToSdk };
const SUB = "00000000-0000-4000-8000-000000000002";
const URN = "urn:pulumi:dev::latlab::azure-native:network:PublicIPAddress::pip";

/** ARM as a map of ids: what a PUT sends is what GET returns (with the address ARM adds). */
function fakeArm(options: { failAccepted?: boolean } = {}) {
  const puts: { id: string; body: Record<string, unknown> }[] = [];
  const deletes: string[] = [];
  const store = new Map<string, Record<string, unknown>>();
  const client = {
    async info() {
      return { subscription: SUB };
    },
    async get(id: string) {
      return store.get(id);
    },
    async put(id: string, _api: string, body: Record<string, unknown>) {
      puts.push({ id, body });
      const stored = { ...body, id, name: id.split("/").pop(), properties: { ...(body.properties as object), ipAddress: "198.19.255.8", provisioningState: "Succeeded" } };
      store.set(id, stored);
      if (options.failAccepted) throw new ArmRequestError(200, "AllocationFailed", "no capacity", "PUT", id, true);
      return stored;
    },
    async delete(id: string) {
      deletes.push(id);
    },
  } as unknown as ArmClient;
  return { client, puts, deletes };
}

const inputs = { resourceGroupName: "rg", publicIpAddressName: "pip", location: "uksouth", sku: { name: "Standard" }, publicIPAllocationMethod: "Static", tags: { owner: "latlab" } };

describe("the emulator's azure-native provider", () => {
  it("names the type from a URN, parents included", () => {
    expect(tokenOfUrn(URN)).toBe("azure-native:network:PublicIPAddress");
    expect(tokenOfUrn("urn:pulumi:dev::latlab::my:component:Host$azure-native:compute:VirtualMachine::vm")).toBe("azure-native:compute:VirtualMachine");
  });

  it("create: PUTs the ARM body at the resource's id and returns ARM's answer as SDK outputs, plus the inputs for diff", async () => {
    const arm = fakeArm();
    const p = new EmulatorProvider(arm.client, shape, "3.28.0");
    const r = await p.create(URN, inputs);
    const id = `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Network/publicIPAddresses/pip`;
    expect(r.id).toBe(id);
    expect(arm.puts[0]).toEqual({ id, body: { location: "uksouth", sku: { name: "Standard" }, tags: { owner: "latlab" }, properties: { publicIPAllocationMethod: "Static" } } });
    expect(r.outs).toMatchObject({ ipAddress: "198.19.255.8", name: "pip", [INPUTS_KEY]: inputs });
  });

  it("sends secrets to ARM in clear but keeps them wrapped in what goes back to the engine", async () => {
    const arm = fakeArm();
    const p = new EmulatorProvider(arm.client, shape, "3.28.0");
    const secretInputs = { ...inputs, tags: wrapSecret({ owner: "latlab" }) };
    const r = await p.create(URN, secretInputs);
    expect(arm.puts[0]!.body.tags).toEqual({ owner: "latlab" });
    expect((r.outs as Record<string, Record<string, unknown>>)[INPUTS_KEY]!.tags).toEqual({ [SIG_KEY]: SECRET_SIG, value: { owner: "latlab" } });
    expect(unwrapSecrets(secretInputs)).toEqual(inputs);
  });

  it("a create that ARM accepted and then failed is reported with its id, so that Pulumi keeps it and destroys it", async () => {
    const p = new EmulatorProvider(fakeArm({ failAccepted: true }).client, shape, "3.28.0");
    const e = (await p.create(URN, inputs).catch((x: unknown) => x)) as Error & { id?: string; reasons?: string[] };
    expect(e.id).toMatch(/publicIPAddresses\/pip$/);
    expect(e.reasons?.[0]).toContain('Code="AllocationFailed"');
  });

  it("a refused create carries no id (nothing exists in ARM)", async () => {
    const arm = fakeArm();
    (arm.client as unknown as { put: () => Promise<never> }).put = async () => {
      throw new ArmRequestError(409, "SkuNotAvailable", "not here", "PUT", "/x");
    };
    const e = (await new EmulatorProvider(arm.client, shape, "3.28.0").create(URN, inputs).catch((x: unknown) => x)) as Error & { id?: string };
    expect(e.message).toContain('Status=409 Code="SkuNotAvailable"');
    expect(e.id).toBeUndefined();
  });

  it("diff: no change for the same inputs; a name or a location change replaces; a tag change updates in place", async () => {
    const p = new EmulatorProvider(fakeArm().client, shape, "3.28.0");
    const olds = { ipAddress: "198.19.255.8", [INPUTS_KEY]: inputs };
    expect(await p.diff("id", URN, olds, inputs)).toEqual({ changes: false });
    expect(await p.diff("id", URN, olds, { ...inputs, tags: { owner: "x" } })).toMatchObject({ changes: true, replaces: [] });
    expect(await p.diff("id", URN, olds, { ...inputs, location: "ukwest" })).toMatchObject({ changes: true, replaces: ["location"] });
    expect(await p.diff("id", URN, olds, { ...inputs, publicIpAddressName: "other" })).toMatchObject({ changes: true, replaces: ["publicIpAddressName"] });
    // A preview waiting on the group's name: possibly an update, not a replacement.
    expect(await p.diff("id", URN, olds, { ...inputs, resourceGroupName: UNKNOWN })).toMatchObject({ changes: true, replaces: [] });
  });

  it("check: names a missing path parameter; an unknown one (preview) is fine", async () => {
    const p = new EmulatorProvider(fakeArm().client, shape, "3.28.0");
    expect((await p.check(URN, {}, { ...inputs, resourceGroupName: "" })).failures).toEqual([{ property: "resourceGroupName", reason: "missing required property 'resourceGroupName'" }]);
    expect((await p.check(URN, {}, { ...inputs, resourceGroupName: UNKNOWN })).failures).toEqual([]);
  });

  it("refuses a type it does not play, by name", async () => {
    const p = new EmulatorProvider(fakeArm().client, shape, "3.28.0");
    await expect(p.check("urn:pulumi:dev::latlab::azure-native:storage:StorageAccount::s", {}, {})).rejects.toThrow(/azure-native:storage:StorageAccount is not emulated/);
  });
});
