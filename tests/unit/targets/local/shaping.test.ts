import { describe, expect, it } from "vitest";
import type { ExecFn } from "../../../../src/targets/local/exec.ts";
import { runNames } from "../../../../src/targets/local/network/names.ts";
import { detectQdiscSupport, netemCommands, NO_NETEM_NOTE, peerDelays, tbfBurstBytes, tbfCommands } from "../../../../src/targets/local/network/shaping.ts";
import { buildDeploymentTopology } from "../../../../src/targets/local/network/topology.ts";
import { netemDelayArgs } from "../../../../src/targets/local/network/netemDistribution.ts";
import { fiveHostDeployment } from "./fixtures.ts";

const topo = buildDeploymentTopology(fiveHostDeployment(), runNames("shaping"));
const client = topo.hosts[0];
if (!client) throw new Error("fixture");

describe("per-peer delays", () => {
  it("delays each peer by half the modelled RTT on this host's egress", () => {
    const d = peerDelays(client, topo.hosts);
    expect(d.map((p) => [p.peerRole, p.pathKind, p.egressDelayUs])).toEqual([
      ["server", "same-ppg", 394], // (126 + 662) / 2
      ["zone1", "same-zone", 425],
      ["zone2", "cross-zone", 713], // 1425 / 2 rounded
      ["west", "cross-region", 3750], // uksouth↔ukwest: Microsoft's P50, (7 + 8) / 2 ms = 7,500 µs
    ]);
    expect(d.every((p) => p.address.startsWith("198.18."))).toBe(true);
    expect(d.map((p) => p.publicAddress)).toEqual(topo.hosts.slice(1).map((h) => h.publicAddress));
    expect(d.every((p) => p.publicAddress?.startsWith("198.19."))).toBe(true);
  });
});

describe("tc command generation", () => {
  it("caps egress with tbf", () => {
    expect(tbfCommands("ns1", "eth0", 3000)).toEqual([
      ["tc", "-n", "ns1", "qdisc", "replace", "dev", "eth0", "root", "tbf", "rate", "3000mbit", "burst", "1500000", "latency", "50ms"],
    ]);
    expect(tbfBurstBytes(1)).toBe(65536);
    expect(() => tbfCommands("ns1", "eth0", 0)).toThrow();
  });

  it("builds htb + netem + u32 per destination", () => {
    const peers = peerDelays(client, topo.hosts);
    const cmds = netemCommands(client.namespace, "eth0", peers, null);
    const ns = client.namespace;
    expect(cmds[0]).toEqual(["tc", "-n", ns, "qdisc", "replace", "dev", "eth0", "root", "handle", "1:", "htb", "default", "2"]);
    expect(cmds[1]).toEqual(["tc", "-n", ns, "class", "add", "dev", "eth0", "parent", "1:", "classid", "1:1", "htb", "rate", "100gbit", "ceil", "100gbit"]);
    expect(cmds).toHaveLength(3 + 4 * peers.length);
    // first peer: class 1:10, netem handle 10:, filters on its private and public /32s
    expect(cmds[3]).toEqual(["tc", "-n", ns, "class", "add", "dev", "eth0", "parent", "1:1", "classid", "1:10", "htb", "rate", "100gbit", "ceil", "100gbit"]);
    expect(cmds[4]).toEqual(["tc", "-n", ns, "qdisc", "add", "dev", "eth0", "parent", "1:10", "handle", "10:", "netem", "delay", "394us", "limit", "100000"]);
    expect(cmds[5]).toEqual(["tc", "-n", ns, "filter", "add", "dev", "eth0", "parent", "1:", "protocol", "ip", "prio", "1", "u32", "match", "ip", "dst", `${peers[0]?.address}/32`, "flowid", "1:10"]);
    expect(cmds[6]).toEqual(["tc", "-n", ns, "filter", "add", "dev", "eth0", "parent", "1:", "protocol", "ip", "prio", "1", "u32", "match", "ip", "dst", `${peers[0]?.publicAddress}/32`, "flowid", "1:10"]);
    // fourth peer: class ids are hex
    expect(cmds[3 + 4 * 3 + 1]).toContain("13:");
    // Same-ppg has no spread (seed 001: an average only): constant. The others carry one (below).
    const delays = cmds.filter((c) => c.includes("netem")).map((c) => c[c.indexOf("delay") + 1]);
    expect(delays).toEqual(["394us", "420.754us", "695.691us", "3696.239us"]);
  });

  it("draws a jittered peer's delay from latlab's table, in order (rate), the constant peer untouched", () => {
    const peers = peerDelays(client, topo.hosts);
    const [ppg, zone1] = peers;
    const cmds = netemCommands(client.namespace, "eth0", peers, null, "/t/tables");
    const netem = cmds.filter((c) => c.includes("netem"));
    // The same-zone peer: median 363 + 57.754 µs, J = scale × the table's divisor, σ in the name.
    expect(zone1?.egressSpread).toEqual({ floorUs: 363, scaleUs: 57.754, sigma: 0.558875 });
    expect(netem[1]).toEqual([
      "env", "TC_LIB_DIR=/t/tables",
      "tc", "-n", client.namespace, "qdisc", "add", "dev", "eth0", "parent", "1:11", "handle", "11:", "netem",
      ...netemDelayArgs(zone1!.egressSpread!), "rate", "100gbit", "limit", "100000",
    ]);
    expect(netemDelayArgs(zone1!.egressSpread!)).toEqual(["delay", "420.754us", expect.stringMatching(/^\d+\.?\d*us$/), "distribution", "latlab-sln-0.558875"]);
    expect(ppg?.egressSpread).toBeUndefined();
    expect(netem[0]).toEqual(["tc", "-n", client.namespace, "qdisc", "add", "dev", "eth0", "parent", "1:10", "handle", "10:", "netem", "delay", "394us", "limit", "100000"]);
  });

  it("puts the VM's cap on the htb classes when there is one", () => {
    const cmds = netemCommands("n", "eth0", peerDelays(client, topo.hosts), 3000);
    expect(cmds.filter((c) => c.includes("class")).every((c) => c.includes("3000mbit"))).toBe(true);
  });
});

describe("netem / tbf detection", () => {
  const fake = (refuse: string[]): { exec: ExecFn; calls: string[][] } => {
    const calls: string[][] = [];
    const exec: ExecFn = async (argv) => {
      calls.push([...argv]);
      const kind = refuse.find((k) => argv.includes(k) && argv.includes("add"));
      return kind ? { code: 2, stdout: "", stderr: "Error: Specified qdisc kind is unknown." } : { code: 0, stdout: "", stderr: "" };
    };
    return { exec, calls };
  };

  it("reports netem missing when the kernel refuses it", async () => {
    const { exec } = fake(["netem"]);
    const s = await detectQdiscSupport(exec, "scratch");
    expect(s).toEqual({ netem: false, tbf: true, netemError: "Error: Specified qdisc kind is unknown." });
    expect(NO_NETEM_NOTE).toBe("shaping: unavailable — kernel has no netem");
  });

  it("reports both present and cleans up after itself", async () => {
    const { exec, calls } = fake([]);
    expect(await detectQdiscSupport(exec, "scratch")).toEqual({ netem: true, tbf: true });
    expect(calls.filter((c) => c.includes("del"))).toHaveLength(2);
    expect(calls.every((c) => c.includes("scratch"))).toBe(true);
  });
});
