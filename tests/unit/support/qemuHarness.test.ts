// The qemu harness's pure parts (no boot): apt's answers, module order, ldd, the guest's console,
// the netem guest's script and its qdisc statistics. The boot itself: tests/integration/netemQemu.test.ts.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { qemuArgv } from "../../support/qemu/bootGuest.ts";
import { cacheKey, candidateVersionFromPolicy, imagePackageFromDepends } from "../../support/qemu/debianKernel.ts";
import { parseGuestOutput, section } from "../../support/qemu/guestOutput.ts";
import { initScript, librariesFromLdd, MARK } from "../../support/qemu/initramfs.ts";
import { moduleDepends, moduleLoadOrder } from "../../support/qemu/kernelModules.ts";
import { flowidFor, NETEM_GUEST_ROUNDS, netemGuestPlan, netemPacketsByParent } from "../../support/qemu/netemGuest.ts";

describe("Debian's kernel package", () => {
  it("reads the image package and its candidate version from apt-cache", () => {
    expect(imagePackageFromDepends("linux-image-amd64\n  Depends: linux-image-6.1.0-56-amd64\n")).toBe("linux-image-6.1.0-56-amd64");
    expect(() => imagePackageFromDepends("linux-image-amd64\n")).toThrow(/no linux-image dependency/);
    expect(candidateVersionFromPolicy("linux-image-6.1.0-56-amd64:\n  Installed: (none)\n  Candidate: 6.1.192-2\n")).toBe("6.1.192-2");
    expect(() => candidateVersionFromPolicy("x:\n  Installed: (none)\n  Candidate: (none)\n")).toThrow(/no candidate/);
    expect(cacheKey("linux-image-x", "1:6.1-2")).toBe("linux-image-x_1%3a6.1-2");
  });
});

describe("kernel modules", () => {
  const ko = (depends: string) => Buffer.from(`\x7fELF…\0license=GPL\0depends=${depends}\0vermagic=6.1.0 SMP\0`, "latin1");
  const files: Record<string, Buffer> = { "/m/a.ko": ko("b,c"), "/m/b.ko": ko("c"), "/m/c.ko": ko(""), "/m/d_e.ko": ko("") };
  const index = new Map(Object.keys(files).map((p) => [p.slice(3, -3), p]));
  const read = (p: string) => files[p]!;

  it("reads a module's depends= field", () => {
    expect(moduleDepends(ko("b,c"))).toEqual(["b", "c"]);
    expect(moduleDepends(ko(""))).toEqual([]);
    expect(moduleDepends(Buffer.from("no modinfo"))).toEqual([]);
  });

  it("loads dependencies first, each once, and takes '-' for '_'", () => {
    expect(moduleLoadOrder(["a", "c", "d-e"], index, read)).toEqual(["/m/c.ko", "/m/b.ko", "/m/a.ko", "/m/d_e.ko"]);
  });

  it("refuses a module it cannot find, and a cycle", () => {
    expect(() => moduleLoadOrder(["zz"], index, read)).toThrow(/no module zz/);
    const cyclic = { "/m/x.ko": ko("y"), "/m/y.ko": ko("x") };
    expect(() => moduleLoadOrder(["x"], new Map([["x", "/m/x.ko"], ["y", "/m/y.ko"]]), (p) => cyclic[p as keyof typeof cyclic])).toThrow(/cycle/);
  });
});

describe("the initramfs", () => {
  it("copies what ldd names, the interpreter included", () => {
    const ldd = "\tlinux-vdso.so.1 (0x00007ffd)\n\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f)\n\t/lib64/ld-linux-x86-64.so.2 (0x00007f)\n";
    expect(librariesFromLdd(ldd)).toEqual(["/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"]);
  });

  it("loads the modules in the order given, then sources the script between markers and powers off", () => {
    const init = initScript(["c.ko", "a.ko"]);
    expect(init.indexOf("insmod /lib/modules/latlab/c.ko")).toBeLessThan(init.indexOf("insmod /lib/modules/latlab/a.ko"));
    expect(init.indexOf(". /script.sh")).toBeGreaterThan(init.indexOf("insmod /lib/modules/latlab/a.ko"));
    expect(init.trimEnd().endsWith("poweroff -f")).toBe(true);
  });

  it("boots under TCG with the serial console on stdout", () => {
    const argv = qemuArgv({ package: "linux-image-x", version: "1", release: "r", vmlinuz: "/k/vmlinuz", modulesDir: "/k/m" }, "/i.gz", 256, ["idle=poll"]);
    expect(argv.slice(0, 3)).toEqual(["qemu-system-x86_64", "-accel", "tcg"]);
    expect(argv[argv.indexOf("-append") + 1]).toBe("console=ttyS0 quiet loglevel=3 panic=-1 idle=poll");
    expect(argv[argv.indexOf("-serial") + 1]).toBe("stdio");
  });
});

describe("the guest's console", () => {
  const raw = [
    `\x1bc\x1b[?7lSeaBIOS${MARK} insmod-failed veth.ko`,
    `${MARK} script-begin`,
    `${MARK} begin one`,
    "line 1\r",
    "[    2.1] a kernel message",
    `${MARK} end one 0\r`,
    `${MARK} begin two`,
    `${MARK} end two 2`,
    `${MARK} script-end 0`,
  ].join("\r\n");

  it("reads sections, their exit codes, refused modules and the script's end", () => {
    const out = parseGuestOutput(raw);
    expect(out.sections).toEqual([
      { name: "one", output: "line 1\n[    2.1] a kernel message", code: 0 },
      { name: "two", output: "", code: 2 },
    ]);
    expect(out.insmodFailed).toEqual(["veth.ko"]);
    expect(out.scriptExit).toBe(0);
    expect(section(out, "two").code).toBe(2);
    expect(() => section(out, "three")).toThrow(/found 0/);
  });

  it("has no script exit when the guest never got there", () => {
    expect(parseGuestOutput(`${MARK} begin one\nKernel panic`).scriptExit).toBeNull();
  });
});

describe("the netem guest", () => {
  // netemGuestPlan writes latlab's netem tables where the guest will find them: a folder of the test's own.
  const tables = mkdtempSync(join(tmpdir(), "latlab-netem-tables-test-"));
  afterAll(() => rmSync(tables, { recursive: true, force: true }));
  const plan = netemGuestPlan(8, 0.01, tables);

  it("runs every tc command latlab generates, each in a section of its own, between the baseline and the netem rounds", () => {
    expect(plan.tcCommands.some((c) => c.argv.includes("netem"))).toBe(true);
    const lines = plan.script.split("\n");
    const lastBaseline = lines.findLastIndex((l) => l.startsWith("section baseline-"));
    const firstNetem = lines.findIndex((l) => l.startsWith("section netem-"));
    plan.tcCommands.forEach((c, i) => {
      const at = lines.findIndex((l) => l.startsWith(`section tc-${i} `));
      expect(at).toBeGreaterThan(lastBaseline);
      expect(at).toBeLessThan(firstNetem);
      // Verbatim: the argv, word for word (none of latlab's words needs quoting).
      expect(lines[at]).toBe(`section tc-${i} ${c.argv.join(" ")}`);
    });
    expect(lines.filter((l) => l.startsWith("section netem-zone1 "))).toHaveLength(NETEM_GUEST_ROUNDS);
    expect(lines.find((l) => l.startsWith("section netem-zone1 "))).toContain(`-c ${8 / NETEM_GUEST_ROUNDS} `);
  });

  it("pairs the client with a same-zone and a cross-zone peer", () => {
    expect(plan.pairs.map((p) => [p.there.peerRole, p.there.pathKind, p.back.peerRole])).toEqual([
      ["zone1", "same-zone", "client"],
      ["zone2", "cross-zone", "client"],
    ]);
    expect(() => netemGuestPlan(7, 0.01, tables)).toThrow(/multiple/);
  });

  it("reads netem's packet counts by class, and the class latlab's filters send an address to", () => {
    const show = [
      "qdisc htb 1: root refcnt 2 r2q 10 default 0x2 direct_packets_stat 0 direct_qlen 1000",
      " Sent 700 bytes 7 pkt (dropped 0, overlimits 0 requeues 0) ",
      "qdisc netem 10: parent 1:10 limit 100000 delay 419us  96us rate 100Gbit",
      " Sent 19600 bytes 201 pkt (dropped 0, overlimits 0 requeues 0) ",
      "qdisc netem 11: parent 1:11 limit 100000 delay 694us",
      " Sent 0 bytes 0 pkt (dropped 0, overlimits 0 requeues 0) ",
    ].join("\n");
    expect([...netemPacketsByParent(show)]).toEqual([["1:10", 201], ["1:11", 0]]);
    const own = plan.tcCommands.filter((c) => c.host === "client").map((c) => c.argv);
    expect(flowidFor(own, plan.hosts[1]!.dataAddress)).toBe("1:10");
    expect(flowidFor(own, plan.hosts[2]!.dataAddress)).toBe("1:11");
    expect(flowidFor(own, "203.0.113.9")).toBeUndefined();
  });
});
