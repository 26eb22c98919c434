import { describe, expect, it } from "vitest";
import type { ExecFn } from "../../../../src/targets/local/exec.ts";
import { checkLocalPrerequisites, NFQUEUE_HEADER, packagesFor, TARGET_BINARIES } from "../../../../src/targets/local/preflight.ts";

function fakeExec(opts: { refuseQdisc?: string[]; installFailsFirst?: boolean } = {}) {
  const calls: string[][] = [];
  let installs = 0;
  const exec: ExecFn = async (argv) => {
    calls.push([...argv]);
    if (argv[0] === "apt-get" && argv[1] === "install") {
      installs++;
      if (opts.installFailsFirst && installs === 1) return { code: 100, stdout: "", stderr: "E: Unable to locate package sockperf" };
    }
    if (argv[0] === "tc" && (opts.refuseQdisc ?? []).some((q) => argv.includes(q)) && argv.includes("add")) {
      return { code: 2, stdout: "", stderr: "Error: Specified qdisc kind is unknown." };
    }
    return { code: 0, stdout: "", stderr: "" };
  };
  return { exec, calls };
}

const present = (missing: Set<string>) => async (name: string) => (missing.has(name) ? null : `/usr/bin/${name}`);

describe("preflight", () => {
  it("maps binaries to Debian packages", () => {
    expect(packagesFor(["sockperf", "sshd", "ssh-keygen", "ping", "ip", "tc", "unshare", "nmap", "qperf", "iperf3"])).toEqual({
      packages: ["sockperf", "openssh-server", "openssh-client", "iputils-ping", "iproute2", "util-linux", "nmap", "qperf", "iperf3"],
      unknown: [],
    });
    expect(packagesFor(["frobnicate"]).unknown).toEqual(["frobnicate"]);
  });

  it("returns facts, netem missing included, when everything is there", async () => {
    const { exec, calls } = fakeExec({ refuseQdisc: ["netem"] });
    const logs: string[] = [];
    const r = await checkLocalPrerequisites({ binaries: ["sockperf"], install: false, log: (m) => logs.push(m), exec, isRoot: true, findBinary: present(new Set()), hasFile: async () => true });
    expect(r).toEqual({ features: { netns: true, tbf: true, netem: false, delayLine: true }, installed: [] });
    expect(logs.join("\n")).toMatch(/no netem .*: latency will be applied by latlab's delay line/);
    const netns = calls.filter((c) => c[0] === "ip" && c[1] === "netns");
    expect(netns.map((c) => c[2])).toEqual(["add", "del"]);
  });

  it("without netem, names the delay line's missing Debian packages and the command (and installs them when allowed)", async () => {
    const { exec, calls } = fakeExec({ refuseQdisc: ["netem"] });
    const logs: string[] = [];
    const noHeader = async (path: string) => path !== NFQUEUE_HEADER;
    const r = await checkLocalPrerequisites({ binaries: [], install: false, log: (m) => logs.push(m), exec, isRoot: true, findBinary: present(new Set(["cc"])), hasFile: noHeader });
    expect(r.features).toEqual({ netns: true, tbf: true, netem: false, delayLine: false });
    expect(logs.join("\n")).toContain("the delay line that replaces it needs Debian's gcc, libnetfilter-queue-dev: latency shaping will be unavailable. Install them with: sudo apt-get install -y gcc libnetfilter-queue-dev");
    expect(calls.some((c) => c[0] === "apt-get")).toBe(false);
    // Allowed to install: apt-get gets exactly those, and the delay line is then ready.
    let header = false;
    const installing: ExecFn = async (argv, o) => {
      if (argv[0] === "apt-get" && argv[1] === "install") header = true;
      return exec(argv, o);
    };
    const missing = new Set(["iptables"]);
    const find = async (name: string) => (missing.has(name) && !header ? null : `/usr/bin/${name}`);
    const r2 = await checkLocalPrerequisites({ binaries: [], install: true, log: () => {}, exec: installing, isRoot: true, findBinary: find, hasFile: async () => header });
    expect(r2).toEqual({ features: { netns: true, tbf: true, netem: false, delayLine: true }, installed: ["libnetfilter-queue-dev", "iptables"] });
    expect(calls.filter((c) => c[0] === "apt-get").at(-1)).toEqual(["apt-get", "install", "-y", "--no-install-recommends", "libnetfilter-queue-dev", "iptables"]);
  });

  it("with netem, does not ask for the delay line's packages", async () => {
    const { exec } = fakeExec();
    const logs: string[] = [];
    const r = await checkLocalPrerequisites({ binaries: [], install: false, log: (m) => logs.push(m), exec, isRoot: true, findBinary: present(new Set(["cc", "iptables"])), hasFile: async () => false });
    expect(r.features).toEqual({ netns: true, tbf: true, netem: true, delayLine: false });
    expect(logs).toEqual([]);
  });

  it("checks the target's own binaries too", async () => {
    const { exec } = fakeExec();
    await expect(
      checkLocalPrerequisites({ binaries: [], install: false, log: () => {}, exec, isRoot: true, findBinary: present(new Set(["unshare"])) }),
    ).rejects.toThrow("sudo apt-get install -y util-linux");
    expect(TARGET_BINARIES).toEqual(expect.arrayContaining(["ip", "tc", "sshd", "ssh-keygen", "unshare"]));
  });

  it("installs missing packages with apt-get when allowed, updating first if needed", async () => {
    const { exec, calls } = fakeExec({ installFailsFirst: true });
    const missing = new Set(["sockperf"]);
    const logs: string[] = [];
    const find = async (name: string) => (missing.has(name) ? null : `/usr/bin/${name}`);
    const exec2: ExecFn = async (argv, o) => {
      const r = await exec(argv, o);
      if (argv[0] === "apt-get" && argv[1] === "install" && r.code === 0) missing.clear();
      return r;
    };
    const r = await checkLocalPrerequisites({ binaries: ["sockperf"], install: true, log: (m) => logs.push(m), exec: exec2, isRoot: true, findBinary: find });
    expect(r.installed).toEqual(["sockperf"]);
    const apt = calls.filter((c) => c[0] === "apt-get").map((c) => c[1]);
    expect(apt).toEqual(["install", "update", "install"]);
    expect(logs.join("\n")).toMatch(/installed sockperf/);
  });

  it("says the exact command when it may not install", async () => {
    const { exec } = fakeExec();
    await expect(
      checkLocalPrerequisites({ binaries: ["sockperf", "qperf"], install: false, log: () => {}, exec, isRoot: true, findBinary: present(new Set(["sockperf", "qperf"])) }),
    ).rejects.toThrow("sudo apt-get install -y sockperf qperf");
  });

  it("refuses without root, saying namespaces need it", async () => {
    const { exec } = fakeExec();
    await expect(checkLocalPrerequisites({ binaries: [], install: true, log: () => {}, exec, isRoot: false, findBinary: present(new Set()) })).rejects.toThrow(/needs root/);
    await expect(
      checkLocalPrerequisites({ binaries: ["nmap"], install: true, log: () => {}, exec, isRoot: false, findBinary: present(new Set(["nmap"])) }),
    ).rejects.toThrow(/sudo apt-get install -y nmap.*|needs root/);
  });
});
