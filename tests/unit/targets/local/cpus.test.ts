import { describe, expect, it } from "vitest";
import { buildPlan, defineExperiment } from "../../../../src/index.ts";
import { assignCpus, cpuFact, formatCpuList, parseCpuList } from "../../../../src/targets/local/cpus.ts";
import zoneRegion from "../../../../experiments/zone-region-baseline.ts";

const pair = buildPlan(
  defineExperiment({
    name: "pair",
    description: "client and server, two variants",
    axes: { ppg: [false, true] },
    hosts: { client: {}, server: {} },
    measure: [{ tool: "sockperf" }],
    repetitions: 2,
  }),
);

describe("CPU lists", () => {
  it("parses and formats the kernel's cpulist format", () => {
    expect(parseCpuList("0-3,8,10-11\n")).toEqual([0, 1, 2, 3, 8, 10, 11]);
    expect(formatCpuList([11, 0, 1, 2, 3, 8, 10])).toBe("0-3,8,10-11");
    expect(formatCpuList([5])).toBe("5");
    expect(() => parseCpuList("0-a")).toThrow(/not a CPU list/);
  });
});

describe("assignCpus", () => {
  it("puts client and server of a cell on different CPUs on a 2-CPU machine; deployments reuse them", () => {
    const a = assignCpus(pair, [0, 1]);
    for (const d of ["ppg=false", "ppg=true"]) {
      const client = a.byHost.get(`${d}/client`)!;
      const server = a.byHost.get(`${d}/server`)!;
      expect(client.length).toBe(1);
      expect(server.length).toBe(1);
      expect(client).not.toEqual(server);
    }
    expect(a.concurrent.hosts).toBe(2);
    expect(a.shortfall).toBeNull();
    expect(cpuFact(a, (k) => k)).toMatch(/^2 CPUs \(0-1\); at most 2 hosts measure at once; .*ppg=false\/client \d, ppg=false\/server \d.*; hosts measuring together are on different CPUs$/);
  });

  it("splits a larger machine into contiguous sets, one per host measuring together", () => {
    const a = assignCpus(pair, [0, 1, 2, 3, 4]);
    const sets = [a.byHost.get("ppg=false/client")!, a.byHost.get("ppg=false/server")!].sort((x, y) => x[0]! - y[0]!);
    expect(sets).toEqual([[0, 1, 2], [3, 4]]);
  });

  it("says when the machine has fewer CPUs than hosts measuring at once", () => {
    const one = assignCpus(pair, [0]);
    expect(one.byHost.get("ppg=false/client")).toEqual([0]);
    expect(one.shortfall).toMatch(/^this machine has 1 CPU \(0\) for up to 2 hosts that measure at once \(ppg=false: client, server\): hosts measuring together share a CPU/);
    // seed 000: three clients watch one server at the same moment; 2 CPUs cannot keep 4 hosts apart.
    const seed = buildPlan(zoneRegion);
    const two = assignCpus(seed, [0, 1]);
    expect(two.concurrent.hosts).toBe(4);
    expect(two.shortfall).toMatch(/2 CPUs \(0-1\) for up to 4 hosts that measure at once/);
    // …but the server gets a CPU of its own while the clients share the other.
    const d = seed.deployments[0]!.id;
    const server = two.byHost.get(`${d}/server`)!;
    for (const h of seed.deployments[0]!.hosts.filter((h) => h.role !== "server")) expect(two.byHost.get(`${d}/${h.role}`)).not.toEqual(server);
    expect(assignCpus(seed, [0, 1, 2, 3]).shortfall).toBeNull();
  });
});
