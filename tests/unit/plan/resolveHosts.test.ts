import { describe, expect, it } from "vitest";
import { buildPlan, defineExperiment, ExperimentDefinitionError, type ExperimentInput } from "../../../src/index.ts";

const base = { name: "x", description: "x", hosts: { server: {}, client: {} }, measure: [{ tool: "ping" as const }] };
const hostsOf = (plan: ReturnType<typeof buildPlan>, variant: string) =>
  plan.variants.find((v) => v.id === variant)!.hosts.map((h) => ({ role: h.role, region: h.region, zone: h.zone, ppg: h.ppg, availabilitySet: h.availabilitySet }));

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ExperimentDefinitionError);
    return (error as ExperimentDefinitionError).issues.map((i) => `${i.path}: ${i.message}`).join("\n");
  }
  throw new Error("expected an ExperimentDefinitionError");
}
const plan = (e: Record<string, unknown>) => buildPlan(defineExperiment({ ...base, ...e } as ExperimentInput));

describe("resolveHosts precedence: the first source that says anything, false and null included", () => {
  it("an axis value false wins over defaults true (ppg and availability set)", () => {
    const p = plan({ defaults: { zone: null, ppg: true, availabilitySet: true }, axes: { ppg: [false, true], availabilitySet: [false, true] } });
    expect(hostsOf(p, "ppg=false,availabilitySet=false").map((h) => [h.ppg, h.availabilitySet])).toEqual([
      [null, null],
      [null, null],
    ]);
    expect(hostsOf(p, "ppg=true,availabilitySet=true").map((h) => [h.ppg, h.availabilitySet])).toEqual([
      ["ppg", "avset"],
      ["ppg", "avset"],
    ]);
  });

  it("a host's own false or null wins over the axis and the defaults", () => {
    const p = plan({ defaults: { zone: null, availabilitySet: true }, axes: { ppg: [true] }, hosts: { server: { ppg: null }, client: { ppg: false, availabilitySet: false } } });
    expect(hostsOf(p, "ppg=true").map((h) => [h.ppg, h.availabilitySet])).toEqual([
      [null, "avset"],
      [null, null],
    ]);
  });

  it("an explicit zone null on the anchor is a regional host, not an unset zone", () => {
    const p = plan({ defaults: { zone: "1" }, hosts: { server: { zone: null }, client: {} } });
    expect(hostsOf(p, "default").map((h) => [h.role, h.zone])).toEqual([
      ["server", null],
      ["client", "1"],
    ]);
  });

  it("the region axis comes before the placement, as the README says", () => {
    const p = plan({ axes: { placement: ["same-zone"], region: ["westeurope"] } });
    expect(hostsOf(p, "placement=same-zone,region=westeurope").map((h) => [h.region, h.zone])).toEqual([
      ["westeurope", "1"],
      ["westeurope", "1"],
    ]);
  });
});

describe("resolveHosts refuses what contradicts the placement instead of ignoring it", () => {
  it("a host's own ppg false under same-ppg", () => {
    expect(messageOf(() => plan({ axes: { placement: ["same-ppg"] }, hosts: { server: {}, client: { ppg: false } } }))).toBe(
      "hosts.client: client would be same-zone from server, not same-ppg, in variant placement=same-ppg: contradicted by hosts.client.ppg = false",
    );
  });

  it("a ppg axis false next to a same-ppg placement, naming the variant", () => {
    expect(messageOf(() => plan({ axes: { placement: ["same-ppg"], ppg: [false] } }))).toBe(
      "hosts.client: client would be same-zone from server, not same-ppg, in variant placement=same-ppg,ppg=false: contradicted by axes.ppg = false",
    );
  });

  it("a zone null on the anchor under same-zone", () => {
    expect(messageOf(() => plan({ axes: { placement: ["same-zone"] }, hosts: { server: { zone: null }, client: {} } }))).toBe(
      "hosts.client: client would be same-region from server, not same-zone, in variant placement=same-zone: contradicted by hosts.server.zone = null",
    );
  });

  it("cross-region when the hosts' region is the peer region", () => {
    expect(messageOf(() => plan({ defaults: { region: "ukwest" }, axes: { placement: ["cross-region"] } }))).toBe(
      'hosts.client: client would be same-region from server, not cross-region, in variant placement=cross-region: peerRegion "ukwest" is server\'s region too — give a peerRegion other than the hosts\' region',
    );
  });

  it("cross-region when a region axis puts every host in one region", () => {
    expect(messageOf(() => plan({ axes: { placement: ["same-zone", "cross-region"], region: ["uksouth"] } }))).toBe(
      'hosts.client: client would be same-region from server, not cross-region, in variant placement=cross-region,region=uksouth: contradicted by axes.region = "uksouth"',
    );
  });

  it("still places cross-region hosts in the peer region when nothing contradicts it", () => {
    const p = plan({ defaults: { region: "uksouth" }, peerRegion: "northeurope", axes: { placement: ["cross-region"] } });
    expect(hostsOf(p, "placement=cross-region").map((h) => [h.region, h.zone])).toEqual([
      ["uksouth", null],
      ["northeurope", null],
    ]);
  });
});

describe("resolveHosts on a hosts function", () => {
  it("holds the roles it returns to the role rules", () => {
    const e = defineExperiment({ ...base, hosts: () => ({ Server: {}, client: {} }) });
    expect(messageOf(() => buildPlan(e))).toBe(
      'hosts.Server: a role is lower case letters and digits, at most 12, starting with a letter, got "Server" (variant default)',
    );
  });
});

describe("resolveHosts: vnet", () => {
  const vnets = (p: ReturnType<typeof buildPlan>, variant: string) => p.variants.find((v) => v.id === variant)!.hosts.map((h) => [h.role, h.vnet]);
  it("defaults to the region's one VNet (null)", () => {
    expect(vnets(plan({}), "default")).toEqual([
      ["server", null],
      ["client", null],
    ]);
  });

  it("host > axis > defaults, an explicit null included; the placement axis never moves a host to another VNet", () => {
    const p = plan({ defaults: { vnet: "d" }, axes: { vnet: ["a", "b"], placement: ["same-zone"] }, hosts: { server: { vnet: "s" }, client: {}, other: { vnet: null } } });
    expect(vnets(p, "placement=same-zone,vnet=a")).toEqual([
      ["server", "s"],
      ["client", "a"],
      ["other", null],
    ]);
    expect(vnets(plan({ defaults: { vnet: "d" } }), "default")).toEqual([
      ["server", "d"],
      ["client", "d"],
    ]);
  });
});
