import { describe, expect, it } from "vitest";
import { Cloud } from "../../../../../src/targets/azure/emulator/arm/cloud.ts";
import { API_VERSIONS, createTypeRules } from "../../../../../src/targets/azure/emulator/arm/typeRules.ts";
import { groupResourceIds } from "../../../../../src/targets/azure/emulator/rehearsal.ts";

const SUB = "00000000-0000-4000-8000-000000000001";
const RG = `/subscriptions/${SUB}/resourceGroups/latlab-r1`;

function cloud(): Cloud {
  const rules = createTypeRules({
    schemaCheck: () => [],
    network: { allocatePublicIp: () => "198.19.255.8", releasePublicIp: () => undefined, addressSpaceProblem: () => undefined },
    vm: { startVm: async () => undefined, stopVm: async () => undefined },
  });
  return new Cloud({ subscription: SUB, rules, faults: [], delays: { default: 1 } });
}

describe("a rehearsal's RunGroups.resources: what the emulator's ARM holds of a group", () => {
  it("the group's id first, then what is in it; nothing for another group or once the group is deleted", async () => {
    const c = cloud();
    c.put(RG, API_VERSIONS.resources, { location: "uksouth", tags: { owner: "latlab", runId: "r1" } });
    await c.idle();
    c.put(`${RG}/providers/Microsoft.Network/networkSecurityGroups/latlab-r1-nsg`, API_VERSIONS.network, { location: "uksouth", properties: { securityRules: [] } });
    await c.idle();
    expect(groupResourceIds(c, "LATLAB-R1")).toEqual([RG, `${RG}/providers/Microsoft.Network/networkSecurityGroups/latlab-r1-nsg`]);
    expect(groupResourceIds(c, "latlab-other")).toEqual([]);
    c.delete(RG, API_VERSIONS.resources);
    await c.idle();
    expect(groupResourceIds(c, "latlab-r1")).toEqual([]);
  });
});
