import { describe, expect, it } from "vitest";
import { BASE_PORT } from "../../../../src/runner/cellRunner.ts";
import { BENCHMARK_BASE_PORT, CLOSING_DENY_PRIORITY, addressPlan, cellTraffic, inboundRules } from "../../../../src/targets/azure/network.ts";
import { SSH_FROM, planOf } from "./helpers.ts";

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
      { region: "uksouth", addressPrefix: "10.10.0.0/16" },
      { region: "ukwest", addressPrefix: "10.11.0.0/16" },
    ]);
    const ranges = a.vnets.map((v) => range(v.addressPrefix));
    for (let i = 0; i < ranges.length; i++) for (let j = i + 1; j < ranges.length; j++) expect(ranges[i]![1] < ranges[j]![0] || ranges[j]![1] < ranges[i]![0]).toBe(true);
    for (const s of a.subnets) expect(inside(s.addressPrefix.split("/")[0]!, a.vnets.find((v) => v.region === s.region)!.addressPrefix)).toBe(true);
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

describe("NSG rules: least privilege", () => {
  it("uses the runner's benchmark ports (one constant, two places)", () => {
    expect(BENCHMARK_BASE_PORT).toBe(BASE_PORT);
  });

  it("lets SSH in only from sshFrom, each benchmark port only from the hosts measuring this one, and closes the VNet", () => {
    const plan = crossRegion();
    const a = addressPlan(plan);
    const rules = inboundRules(plan, a, SSH_FROM);
    const ip = (name: string) => `${a.hosts.find((h) => h.name === name)!.privateIp}/32`;
    // Deployment 0 = path=private: private addresses of the two clients.
    const server0 = rules.get("d0-server")!;
    expect(server0.map((r) => [r.name, r.protocol, r.destinationPort, r.sources])).toEqual([
      ["allow-ssh-from-runner", "Tcp", "22", [{ kind: "prefix", prefix: SSH_FROM }]],
      ["allow-ping-icmp-private", "Icmp", "*", [{ kind: "prefix", prefix: ip("d0-crossregion") }, { kind: "prefix", prefix: ip("d0-samezone") }]],
      ["allow-tcp-echo-tcp-11000-private", "Tcp", "11000", [{ kind: "prefix", prefix: ip("d0-crossregion") }, { kind: "prefix", prefix: ip("d0-samezone") }]],
      ["allow-tcp-echo-udp-11000-private", "Udp", "11000", [{ kind: "prefix", prefix: ip("d0-crossregion") }, { kind: "prefix", prefix: ip("d0-samezone") }]],
      ["deny-other-vnet-inbound", "*", "*", []],
    ]);
    expect(server0.at(-1)).toMatchObject({ access: "Deny", sourceTag: "VirtualNetwork", priority: CLOSING_DENY_PRIORITY });
    // Deployment 1 = path=public: the clients' public IPs (resolved by the program).
    const server1 = rules.get("d1-server")!;
    expect(server1.filter((r) => r.name.endsWith("-public")).map((r) => r.sources)).toEqual([
      [{ kind: "publicIpOf", host: "d1-crossregion" }, { kind: "publicIpOf", host: "d1-samezone" }],
      [{ kind: "publicIpOf", host: "d1-crossregion" }, { kind: "publicIpOf", host: "d1-samezone" }],
      [{ kind: "publicIpOf", host: "d1-crossregion" }, { kind: "publicIpOf", host: "d1-samezone" }],
    ]);
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
