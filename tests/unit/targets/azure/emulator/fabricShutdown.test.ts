// Fabric.shutdown against a kernel played by a fake `ip`: one whose namespace deletion, like the
// real one, destroys the namespace's links some time after `ip netns del` has returned.
import { describe, expect, it } from "vitest";
import { Fabric, type VmRuntime } from "../../../../../src/targets/azure/emulator/fabric/fabric.ts";
import type { ExecFn, ExecResult } from "../../../../../src/targets/local/exec.ts";

const ok = (stdout = ""): ExecResult => ({ code: 0, stdout, stderr: "" });

/** The inet namespace holds root0, the peer of the root namespace's az<short>-i. */
function fakeKernel(short: string) {
  const inet = `az${short}-inet`;
  const rootLink = `az${short}-i`;
  const namespaces = new Set([inet]);
  const rootLinks = new Set(["lo", rootLink]);
  /** Links the kernel will destroy once the command after next has started (a namespace being torn down). */
  let dying: { links: string[]; after: number } | undefined;
  const calls: string[] = [];
  const exec: ExecFn = async (argv) => {
    calls.push(argv.join(" "));
    if (dying && dying.after-- === 0) {
      for (const l of dying.links) rootLinks.delete(l);
      dying = undefined;
    }
    const [, a, b, c] = argv;
    if (a === "netns" && b === "list") return ok([...namespaces].map((n) => `${n} (id: 1)`).join("\n"));
    if (a === "netns" && b === "pids") return ok();
    if (a === "netns" && b === "del" && c !== undefined && namespaces.delete(c)) {
      // The veth pair goes with the namespace, once the kernel gets to it: still listed by the
      // next command, gone by the one after.
      if (c === inet && rootLinks.has(rootLink)) dying = { links: [rootLink], after: 1 };
      return ok();
    }
    if (a === "-o" && b === "link" && c === "show") return ok([...rootLinks].map((l, i) => `${i + 1}: ${l}${l === rootLink ? "@if2" : ""}: <BROADCAST,UP> mtu 1500`).join("\n"));
    if (a === "link" && b === "del" && c !== undefined) {
      if (rootLinks.delete(c)) return ok();
      return { code: 1, stdout: "", stderr: `Cannot find device "${c}"` };
    }
    return { code: 1, stdout: "", stderr: `fake ip: unexpected ${argv.join(" ")}` };
  };
  return { exec, calls, namespaces, rootLinks, rootLink, inet };
}

const noVms: VmRuntime = {
  boot: async () => {
    throw new Error("no VM boots in this test");
  },
  stop: async () => ({ errors: [], removed: [] }),
};

describe("Fabric.shutdown", () => {
  it("removes the root link before the namespace that holds its peer, so the kernel's late teardown of that namespace cannot make it fail", async () => {
    const kernel = fakeKernel("t1");
    const fabric = new Fabric({ short: "t1", stateDir: "/nonexistent/latlab-test-state", vms: noVms, exec: kernel.exec });
    const report = await fabric.shutdown();
    expect(report.errors).toEqual([]);
    expect(report.removed).toEqual([`link ${kernel.rootLink}`, `namespace ${kernel.inet}`]);
    expect(kernel.namespaces.size).toBe(0);
    expect([...kernel.rootLinks]).toEqual(["lo"]);
    expect(kernel.calls.filter((c) => !c.startsWith("ip netns pids"))).toEqual([
      "ip netns list",
      "ip -o link show",
      `ip link del ${kernel.rootLink}`,
      `ip netns del ${kernel.inet}`,
    ]);
  });
});
