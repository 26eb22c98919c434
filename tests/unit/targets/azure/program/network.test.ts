import { describe, expect, it } from "vitest";
import { BASE_PORT } from "../../../../../src/runner/cellRunner.ts";
import { BENCHMARK_BASE_PORT, CLOSING_DENY_PRIORITY, addressPlan, addressPlanIssues, cellTraffic, inboundRules } from "../../../../../src/targets/azure/program/network.ts";
import { SSH_FROM, planOf } from "../helpers.ts";

/** 10.a.b.c/n → [first, last] as 32-bit numbers. */
function range(cidr: string): [number, number] {
  const [ip, bits] = cidr.split("/") as [string, string];
  const n = ip.split(".").reduce((a, o) => a * 256 + Number(o), 0);
  const size = 2 ** (32 - Number(bits));
  return [n, n + size - 1];
}
const inside = (ip: string, cidr: string) => {
  const [lo, hi] = range(cidr);
  const [n] = range(`${ip}/32`);
  return n >= lo && n <= hi;
};

const crossRegion = () =>
  planOf({
    name: "xr",
    defaults: { region: "uksouth", size: "Standard_B1s", accelnet: false },
    axes: { path: ["private", "public"] },
    hosts: { server: { zone: "1" }, samezone: { zone: "1" }, crossregion: { region: "ukwest", zone: null } },
    measure: [{ tool: "tcp-echo", params: { duration: 5 } }, { tool: "ping", params: { count: 5, interval: 0.2 } }],
  });

describe("address plan", () => {
  it("gives each region one /16 of 10.0.0.0/8, never overlapping, and each deployment a /24 inside", () => {
    const plan = crossRegion();
    const a = addressPlan(plan);
    expect(a.vnets).toEqual([
      { key: "uksouth", region: "uksouth", vnet: null, addressPrefix: "10.10.0.0/16" },
      { key: "ukwest", region: "ukwest", vnet: null, addressPrefix: "10.11.0.0/16" },
    ]);
    const ranges = a.vnets.map((v) => range(v.addressPrefix));
    for (let i = 0; i < ranges.length; i++) for (let j = i + 1; j < ranges.length; j++) expect(ranges[i]![1] < ranges[j]![0] || ranges[j]![1] < ranges[i]![0]).toBe(true);
    for (const s of a.subnets) expect(inside(s.addressPrefix.split("/")[0]!, a.vnets.find((v) => v.key === s.vnet)!.addressPrefix)).toBe(true);
    for (const h of a.hosts) expect(inside(h.privateIp, a.subnets.find((s) => s.key === h.subnet)!.addressPrefix)).toBe(true);
    expect(new Set(a.hosts.map((h) => h.privateIp)).size).toBe(a.hosts.length);
    // Azure reserves .0-.3 of a subnet.
    expect(a.hosts.every((h) => Number(h.privateIp.split(".")[3]) >= 4)).toBe(true);
  });

  it("peers both ways exactly the regions a deployment spans", () => {
    expect(addressPlan(crossRegion()).peerings).toEqual([
      { from: "uksouth", to: "ukwest" },
      { from: "ukwest", to: "uksouth" },
    ]);
    expect(addressPlan(planOf({ name: "one", defaults: { region: "eastus", zone: "1", size: "Standard_D2s_v5" } })).peerings).toEqual([]);
  });
});

describe("address plan: VNets named by the hosts", () => {
  const twoVnets = () =>
    planOf({
      name: "peered",
      defaults: { region: "northeurope", zone: null, size: "Standard_DS13_v2" },
      axes: { path: ["private", "public"] },
      hosts: { server: { vnet: "b" }, client: { vnet: "a" }, same: { vnet: "b" }, other: { region: "westeurope", vnet: "a" } },
    });

  it("gives each (region, vnet) its own non-overlapping block, the default VNet its region as key", () => {
    const a = addressPlan(twoVnets());
    expect(a.vnets).toEqual([
      { key: "northeurope-b", region: "northeurope", vnet: "b", addressPrefix: "10.10.0.0/16" },
      { key: "northeurope-a", region: "northeurope", vnet: "a", addressPrefix: "10.11.0.0/16" },
      { key: "westeurope-a", region: "westeurope", vnet: "a", addressPrefix: "10.12.0.0/16" },
    ]);
    expect(a.hosts.map((h) => [h.name, h.vnet, h.privateIp])).toEqual([
      ["d0-server", "northeurope-b", "10.10.0.4"],
      ["d0-same", "northeurope-b", "10.10.0.5"],
      ["d0-client", "northeurope-a", "10.11.0.4"],
      ["d0-other", "westeurope-a", "10.12.0.4"],
    ]);
    for (const h of a.hosts) expect(inside(h.privateIp, a.vnets.find((v) => v.key === h.vnet)!.addressPrefix)).toBe(true);
  });

  it("peers both ways every VNet pair the deployment spans, two VNets of one region too", () => {
    const pairs = addressPlan(twoVnets()).peerings.map((p) => `${p.from}>${p.to}`);
    expect(pairs.sort()).toEqual(
      ["northeurope-b>northeurope-a", "northeurope-a>northeurope-b", "northeurope-b>westeurope-a", "westeurope-a>northeurope-b", "northeurope-a>westeurope-a", "westeurope-a>northeurope-a"].sort(),
    );
  });

  it("opens both paths on the same server: the private one from the clients' private addresses (across the peering), the public one from their public IPs", () => {
    const plan = twoVnets();
    const a = addressPlan(plan);
    const server = inboundRules(plan, a, SSH_FROM).get("d0-server")!;
    const ping = server.filter((r) => r.name.startsWith("allow-ping"));
    const clients = ["d0-client", "d0-other", "d0-same"];
    expect(ping.map((r) => [r.name, r.sources])).toEqual([
      ["allow-ping-icmp-private", clients.map((c) => ({ kind: "prefix", prefix: `${a.hosts.find((h) => h.name === c)!.privateIp}/32` }))],
      ["allow-ping-icmp-public", clients.map((c) => ({ kind: "publicIpOf", host: c }))],
    ]);
  });

  it("counts VNets, not regions, against the address space", () => {
    const plan = planOf({ name: "many", defaults: { region: "uksouth", zone: "1", size: "Standard_D2s_v5" }, hosts: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [i === 0 ? "server" : `c${i}`, { vnet: `v${i}` }])) });
    expect(addressPlanIssues(plan, "198.18.0.0/16").map((i) => i.message)).toEqual([expect.stringMatching(/^17 VNets \(uksouth-v0, .*\); the address plan \(198\.18\.0\.0\/16\) has room for 16$/)]);
  });
});

describe("NSG rules: least privilege", () => {
  it("uses the runner's benchmark ports (one constant, two places)", () => {
    expect(BENCHMARK_BASE_PORT).toBe(BASE_PORT);
  });

  it("lets SSH in only from sshFrom, each benchmark port only from the hosts measuring this one, and closes the VNet", () => {
    const plan = crossRegion();
    const a = addressPlan(plan);
    const rules = inboundRules(plan, a, SSH_FROM);
    const ip = (name: string) => `${a.hosts.find((h) => h.name === name)!.privateIp}/32`;
    // One deployment measures both paths (path is a measurement axis): the private path from the
    // clients' private addresses, the public path from their public IPs (resolved by the program).
    expect(plan.deployments.map((d) => d.id)).toEqual(["default"]);
    const server0 = rules.get("d0-server")!;
    const publicIps = [{ kind: "publicIpOf", host: "d0-crossregion" }, { kind: "publicIpOf", host: "d0-samezone" }];
    expect(server0.map((r) => [r.name, r.protocol, r.destinationPort, r.sources])).toEqual([
      ["allow-ssh-from-runner", "Tcp", "22", [{ kind: "prefix", prefix: SSH_FROM }]],
      ["allow-ping-icmp-private", "Icmp", "*", [{ kind: "prefix", prefix: ip("d0-crossregion") }, { kind: "prefix", prefix: ip("d0-samezone") }]],
      ["allow-tcp-echo-tcp-11000-private", "Tcp", "11000", [{ kind: "prefix", prefix: ip("d0-crossregion") }, { kind: "prefix", prefix: ip("d0-samezone") }]],
      ["allow-tcp-echo-udp-11000-private", "Udp", "11000", [{ kind: "prefix", prefix: ip("d0-crossregion") }, { kind: "prefix", prefix: ip("d0-samezone") }]],
      ["allow-ping-icmp-public", "Icmp", "*", publicIps],
      ["allow-tcp-echo-tcp-11000-public", "Tcp", "11000", publicIps],
      ["allow-tcp-echo-udp-11000-public", "Udp", "11000", publicIps],
      ["deny-other-vnet-inbound", "*", "*", []],
    ]);
    expect(server0.at(-1)).toMatchObject({ access: "Deny", sourceTag: "VirtualNetwork", priority: CLOSING_DENY_PRIORITY });
    // A host nobody measures opens nothing but SSH.
    expect(rules.get("d0-samezone")!.map((r) => r.name)).toEqual(["allow-ssh-from-runner", "deny-other-vnet-inbound"]);
    // No allow rule anywhere from everyone.
    for (const list of rules.values()) {
      for (const r of list.filter((x) => x.access === "Allow")) {
        expect(r.sources.length).toBeGreaterThan(0);
        for (const s of r.sources) if (s.kind === "prefix") expect(["*", "0.0.0.0/0", "Internet", "Any"]).not.toContain(s.prefix);
      }
      expect(new Set(list.map((r) => r.priority)).size).toBe(list.length);
    }
  });

  it("knows each tool's traffic: ICMP for ping, TCP to the traced port for traceroute, both qperf ports, the server port otherwise", () => {
    expect(cellTraffic({ tool: "ping", params: {}, measure: 0 })).toEqual([{ protocol: "Icmp", port: "*" }]);
    expect(cellTraffic({ tool: "traceroute", params: { port: 22 }, measure: 0 })).toEqual([{ protocol: "Tcp", port: "22" }]);
    expect(cellTraffic({ tool: "sockperf", params: { protocol: "tcp", duration: 1 }, measure: 2 })).toEqual([
      { protocol: "Tcp", port: "11002" },
      { protocol: "Udp", port: "11002" },
    ]);
    expect(cellTraffic({ tool: "qperf", params: {}, measure: 1 })!.map((t) => `${t.protocol}/${t.port}`)).toEqual(["Tcp/11001", "Udp/11001", "Tcp/12001", "Udp/12001"]);
    expect(cellTraffic({ tool: "no-such-tool", params: {}, measure: 0 })).toBeUndefined();
  });
});
