/**
 * checkHosts() on the local target (issue 23, fault 3): what the kernel holds, against what the
 * target set up. A link that went down and came back lost its routes (the kernel deletes them);
 * they are found missing and restored. A link still down is named, not brought up.
 */
import { describe, expect, it } from "vitest";
import { runNames } from "../../../../src/targets/local/network/names.ts";
import { checkAndRepair, describeDiff, diffNamespace, expectedNetwork, parseActual, parseReadOutput, readCommand, repairCommands } from "../../../../src/targets/local/network/networkRepair.ts";
import { buildDeploymentTopology } from "../../../../src/targets/local/network/topology.ts";
import { fiveHostDeployment } from "./fixtures.ts";

const topo = buildDeploymentTopology(fiveHostDeployment(), runNames("repair"));
const host = topo.hosts[0]!;
const expected = expectedNetwork(topo, (ns) => (ns === host.namespace ? `host ${host.role}` : `namespace ${ns}`));
const hostExpected = expected.find((e) => e.namespace === host.namespace)!;

/** `ip -j` output of a namespace holding everything expected (as iproute2 prints it: /32 without length, main table unnamed). */
function kernelJson(e: typeof hostExpected, drop: { routes?: boolean; down?: string[] } = {}) {
  const links = [...new Set(["lo", ...e.links, ...e.addresses.map((a) => a.dev)])].map((ifname) => ({
    ifname,
    flags: drop.down?.includes(ifname) ? ["BROADCAST"] : ["BROADCAST", "UP", "LOWER_UP"],
    addr_info: e.addresses.filter((a) => a.dev === ifname).map((a) => ({ family: "inet", local: a.address.split("/")[0], prefixlen: Number(a.address.split("/")[1]) })),
  }));
  const routes = drop.routes
    ? []
    : e.routes.map((r) => ({
        ...(r.unreachable ? { type: "unreachable" } : {}),
        dst: r.destination.endsWith("/32") ? r.destination.slice(0, -3) : r.destination,
        ...(r.via ? { gateway: r.via, dev: r.dev } : {}),
        ...(r.table !== undefined ? { table: String(r.table) } : {}),
      }));
  return { addr: JSON.stringify(links), route: JSON.stringify(routes) };
}

describe("the local fabric against its topology", () => {
  it("a host as set up: nothing missing, nothing down", () => {
    const k = kernelJson(hostExpected);
    const d = diffNamespace(hostExpected, parseActual(k.addr, k.route));
    expect(d).toMatchObject({ linksDown: [], missingAddresses: [], missingRoutes: [] });
    expect(describeDiff(d)).toEqual({});
  });

  it("after eth0 went down and up: the default and public routes are missing, and restored with `ip route replace`", () => {
    expect(hostExpected.routes.map((r) => r.destination)).toContain("default");
    const k = kernelJson(hostExpected, { routes: true });
    const d = diffNamespace(hostExpected, parseActual(k.addr, k.route));
    expect(d.missingRoutes).toEqual(hostExpected.routes);
    const cmds = repairCommands(d);
    expect(cmds[0]).toEqual(["ip", "-n", host.namespace, "route", "replace", "default", "via", host.gateway, "dev", "eth0"]);
    expect(cmds.some((c) => c.includes("src") && c.includes(host.publicAddress))).toBe(true);
    expect(describeDiff(d).restored).toMatch(/^host client: the kernel had dropped routes default via [\d.]+ dev eth0, .* \(a link went down\); restored$/);
  });

  it("eth0 still down: named as the problem; its routes are not counted missing (they cannot be restored yet)", () => {
    const k = kernelJson(hostExpected, { routes: true, down: ["eth0"] });
    const d = diffNamespace(hostExpected, parseActual(k.addr, k.route));
    expect(d).toMatchObject({ linksDown: ["eth0"], missingRoutes: [] });
    expect(describeDiff(d)).toEqual({ problem: "host client: link eth0 down (network unreachable through it)" });
  });

  it("checkAndRepair: one read for every namespace, the repairs, and what it says", async () => {
    const calls: string[][] = [];
    const result = await checkAndRepair(async (argv) => {
      calls.push([...argv]);
      if (argv[0] !== "sh") return { code: 0, stdout: "", stderr: "" };
      const out = expected.map((e) => {
        const k = kernelJson(e, e === hostExpected ? { routes: true } : {});
        return `@@ns ${e.namespace}\n${k.addr}\n\n${k.route}\n\n`;
      });
      return { code: 0, stdout: out.join(""), stderr: "" };
    }, expected);
    expect(calls[0]).toEqual(readCommand(expected.map((e) => e.namespace)));
    expect(calls.slice(1).every((c) => c.includes(host.namespace) && c.includes("replace"))).toBe(true);
    expect(calls).toHaveLength(1 + hostExpected.routes.length);
    expect(result.problems).toEqual([]);
    expect(result.restored).toHaveLength(1);
  });

  it("a namespace that is gone, and a repair the kernel refuses, are problems", async () => {
    const other = expected.find((e) => e !== hostExpected)!;
    const result = await checkAndRepair(async (argv) => {
      if (argv[0] !== "sh") return { code: 2, stdout: "", stderr: "Error: Nexthop has invalid gateway." };
      const k = kernelJson(hostExpected, { routes: true });
      return { code: 0, stdout: `@@ns ${host.namespace}\n${k.addr}\n\n${k.route}\n\n@@ns ${other.namespace}\n[]\n\n[]\n\n`, stderr: "" };
    }, [hostExpected, other]);
    expect(result.problems.some((p) => p.includes("is gone"))).toBe(true);
    expect(result.problems.some((p) => p.startsWith("host client: the kernel dropped routes or addresses, and restoring them failed: `ip -n") && p.includes("Nexthop has invalid gateway"))).toBe(true);
  });

  it("parseReadOutput reads the real `ip -j` of this machine's root namespace shape", () => {
    const m = parseReadOutput(`@@ns x\n[{"ifindex":1,"ifname":"lo","flags":["LOOPBACK","UP"],"addr_info":[{"family":"inet","local":"10.200.0.5","prefixlen":32}]}]\n\n[{"type":"unreachable","dst":"10.200.0.0/16","table":"100","flags":[]},{"dst":"default","gateway":"10.9.0.2","dev":"va","flags":[]},{"dst":"10.7.0.9","gateway":"10.9.0.2","dev":"va","table":"100","flags":[]}]\n\n`);
    expect(m.get("x")).toEqual({
      links: new Map([["lo", { up: true, addresses: ["10.200.0.5/32"] }]]),
      routes: [
        { destination: "10.200.0.0/16", table: 100, unreachable: true },
        { destination: "default", via: "10.9.0.2", dev: "va", unreachable: false },
        { destination: "10.7.0.9/32", via: "10.9.0.2", dev: "va", table: 100, unreachable: false },
      ],
    });
  });
});
