import { describe, expect, it } from "vitest";
import {
  hostLabel,
  IFNAMSIZ_MAX,
  mgmtBaseBlock,
  mgmtBlock,
  mgmtRootLink,
  MGMT_BLOCKS,
  parseAddrLines,
  parseCidr,
  parseInUsePrefixes,
  parseLinkNames,
  parseNetnsIds,
  parseNetnsList,
  pickMgmtBlock,
  publicRouterNamespace,
  runNames,
  runShort,
  sanitizeRole,
} from "../../../../src/targets/local/network/names.ts";

describe("run names", () => {
  it("derives a short hex id from the run id, different per run", () => {
    expect(runShort("run-1")).toMatch(/^[0-9a-f]{6}$/);
    expect(runShort("run-1")).toBe(runShort("run-1"));
    expect(runShort("run-1")).not.toBe(runShort("run-2"));
    const a = runNames("2025-01-01T00-00-00-aaaa");
    const b = runNames("2025-01-01T00-00-00-aaab");
    expect(a.namespacePrefix).not.toBe(b.namespacePrefix);
    expect(a.rootLinkPrefix).not.toBe(b.rootLinkPrefix);
  });

  it("keeps root-side interface names within 15 characters", () => {
    const n = runNames("x");
    for (const i of [0, 9, 35, 36, 1000, 60_000_000]) {
      const name = mgmtRootLink(n, i);
      expect(name.length).toBeLessThanOrEqual(IFNAMSIZ_MAX);
      expect(name.startsWith(n.rootLinkPrefix)).toBe(true);
    }
  });

  it("sanitises roles so they never look like router names", () => {
    expect(sanitizeRole("client")).toBe("client");
    expect(sanitizeRole("_zr-x")).toBe("zr-x");
    expect(sanitizeRole("a b/c")).toBe("a_b_c");
    expect(sanitizeRole("___")).toBe("h");
    expect(hostLabel(0, "client")).toBe("d0-client");
    expect(hostLabel(3, "DB_Primary")).toBe("d3-db-primary");
  });
});

describe("management /30s", () => {
  it("stays inside 198.19.128.0/17", () => {
    const first = mgmtBlock(0);
    const last = mgmtBlock(MGMT_BLOCKS - 1);
    expect(first).toEqual({ index: 0, cidr: "198.19.128.0/30", rootAddress: "198.19.128.1", hostAddress: "198.19.128.2" });
    expect(last.cidr).toBe("198.19.255.252/30");
    expect(mgmtBlock(MGMT_BLOCKS).index).toBe(0);
    expect(mgmtBaseBlock("a")).toBe(mgmtBaseBlock("a"));
    expect(mgmtBaseBlock("a")).not.toBe(mgmtBaseBlock("b"));
  });

  it("skips blocks used in the root namespace and blocks already taken", () => {
    const inUse = [parseCidr("198.19.128.5/32"), parseCidr("198.19.128.8/30")];
    expect(pickMgmtBlock(0, inUse, new Set()).index).toBe(0);
    expect(pickMgmtBlock(1, inUse, new Set()).index).toBe(3);
    expect(pickMgmtBlock(1, inUse, new Set([3])).index).toBe(4);
    // A wide route covering the range (e.g. a default) does not make every block "used".
    expect(pickMgmtBlock(7, [parseCidr("0.0.0.0/0"), parseCidr("198.0.0.0/8")], new Set()).index).toBe(7);
  });

  it("parses ip -4 -o addr and route listings", () => {
    const addr = [
      "1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever",
      "2: eth0    inet 192.0.2.2/24 brd 192.0.2.255 scope global eth0\\       valid_lft forever preferred_lft forever",
      "7: ll0a1b2c-m0@if2    inet 198.19.130.1/30 scope global ll0a1b2c-m0",
    ].join("\n");
    const route = ["default via 192.0.2.1 dev eth0", "198.19.130.0/30 dev ll0a1b2c-m0 proto kernel scope link src 198.19.130.1", "local 127.0.0.1 dev lo table local proto kernel scope host src 127.0.0.1"].join("\n");
    const prefixes = parseInUsePrefixes(addr, route);
    expect(prefixes).toContainEqual(parseCidr("198.19.130.1/32"));
    expect(prefixes).toContainEqual(parseCidr("198.19.130.0/30"));
    expect(prefixes).toContainEqual(parseCidr("127.0.0.1/32"));
    expect(parseAddrLines(addr).map((a) => a.ifname)).toEqual(["lo", "eth0", "ll0a1b2c-m0"]);
    expect(parseNetnsList("ll-abc-0-client (id: 3)\nother\n")).toEqual(["ll-abc-0-client", "other"]);
    expect(parseLinkNames("1: lo: <LOOPBACK,UP> mtu 65536\n5: llabc-m0@if2: <BROADCAST> mtu 1500")).toEqual(["lo", "llabc-m0"]);
  });
});

describe("public path names", () => {
  it("names the public router after the deployment, never like a host", () => {
    const n = runNames("r");
    expect(publicRouterNamespace(n, 2)).toBe(`${n.namespacePrefix}2-_pub`);
    expect(sanitizeRole("_pub")).not.toBe("_pub");
  });

  it("parses `ip netns list-id`", () => {
    const out = "nsid 0 (iproute2 netns name: ll-abc123-0-_zr-uksouth-1)\nnsid 3 (iproute2 netns name: other)\nnsid 4\n";
    expect([...parseNetnsIds(out)]).toEqual([
      [0, "ll-abc123-0-_zr-uksouth-1"],
      [3, "other"],
    ]);
  });
});
