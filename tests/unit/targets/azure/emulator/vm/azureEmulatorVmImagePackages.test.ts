/**
 * An emulated VM's `packages:` are checked against the packages of the image latlab deploys
 * (Ubuntu 24.04 noble, vm/ubuntu-24.04-packages.json, each version with its packages.ubuntu.com
 * page), not against the machine the emulator runs on. A package the image lacks fails
 * cloud-init as Ubuntu's would (apt cannot locate it; cloud-init raises PackageInstallerError) and
 * does not show as installed inside the VM, so latlab's ready step (dpkg-query) sees it missing.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PACKAGES } from "../../../../../../src/targets/azure/program/cloudInit.ts";
import { compileBoot, DPKG_STATUS, type BootInput, type Step } from "../../../../../../src/targets/azure/emulator/vm/bootScript.ts";
import { parseCloudConfigText } from "../../../../../../src/targets/azure/emulator/vm/cloudConfig.ts";
import { imagePackage, imagePackages, IMAGE_PACKAGES_FILE } from "../../../../../../src/targets/azure/emulator/vm/imagePackages.ts";
import { VM_INIT_PATH } from "../../../../../../src/targets/azure/emulator/vm/bootVm.ts";

const input: BootInput = {
  vmName: "d0-client",
  adminUsername: "azureuser",
  sshPublicKeys: ["ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 client"],
  disablePasswordAuthentication: true,
  privateAddress: "198.18.0.2",
  instanceId: "2b2b1a0e-1111-2222-3333-444455556666",
  stateDir: "/tmp/latlab-x/vm1",
  imds: { compute: {}, network: {} },
  neverReady: false,
  bootTime: new Date("2026-11-21T10:00:00Z"),
};

type PackagesStep = Extract<Step, { op: "packages" }>;
function packagesStep(yaml: string): PackagesStep {
  const script = compileBoot(input, parseCloudConfigText("vm", `#cloud-config\n${yaml}\n`));
  for (const e of script.sequence) {
    if (!("stage" in e)) continue;
    for (const m of e.modules) for (const s of m.steps) if (s.op === "packages") return s;
  }
  throw new Error("no packages step");
}

describe("the image's package list", () => {
  it("has every package latlab's cloud-init asks for, with its noble version and page", () => {
    const list = imagePackages();
    expect(list.image).toMatchObject({ publisher: "Canonical", offer: "ubuntu-24_04-lts", release: "Ubuntu 24.04 LTS (noble)" });
    for (const name of PACKAGES) {
      const p = imagePackage(name);
      expect(p, name).not.toBeNull();
      expect(p!.versions).toContain(p!.candidate);
      expect(p!.url).toMatch(/^https:\/\/packages\.ubuntu\.com\/(\w\w\/)?noble\//);
    }
    // As the pages say them (packages.ubuntu.com, noble): the measurement tools are in universe.
    expect(imagePackage("iperf3")).toMatchObject({ candidate: "3.16-1build2", component: "universe" });
    expect(imagePackage("sockperf")).toMatchObject({ candidate: "3.7-1", component: "universe" });
    expect(imagePackage("python3")).toMatchObject({ candidate: "3.12.3-0ubuntu2.1", component: "main" });
    expect(imagePackage("netperf")).toBeNull();
    expect(imagePackage("IPERF3")).toBeNull();
    expect(readFileSync(IMAGE_PACKAGES_FILE, "utf8")).toContain("notVerified");
  });

  it("compiles each package with the image's record, or null where the image lacks it", () => {
    const st = packagesStep("packages:\n  - iperf3\n  - [python3, 3.12.3-0ubuntu1]\n  - netperf\n  - {snap: [lxd]}");
    expect(st.image).toContain("Ubuntu 24.04 LTS (noble) amd64");
    expect(st.dpkgStatus).toBe(DPKG_STATUS);
    expect(st.packages).toEqual([
      { name: "iperf3", manager: "apt", image: { candidate: "3.16-1build2", versions: ["3.16-1build2"], component: "universe" } },
      { name: "python3", version: "3.12.3-0ubuntu1", manager: "apt", image: { candidate: "3.12.3-0ubuntu2.1", versions: ["3.12.3-0ubuntu1", "3.12.3-0ubuntu2.1"], component: "main" } },
      { name: "netperf", manager: "apt", image: null },
      { name: "lxd", manager: "snap", image: null },
    ]);
  });
});

const PY = "/usr/bin/python3";
const DIR = join(VM_INIT_PATH, "..");

describe("vm_init.py's package module", { skip: !existsSync(PY) }, () => {
  const root = mkdtempSync(join(tmpdir(), "latlab-pkgs-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  /** Vm.packages on a step, this machine's dpkg played by `installed` (name → version); what it printed, raised, and left in the status file. */
  function run(st: PackagesStep, installed: Record<string, string>, dpkgStatus: string) {
    const statusPath = join(root, `status-${Math.random().toString(36).slice(2)}`);
    writeFileSync(statusPath, dpkgStatus);
    const r = spawnSync(
      PY,
      [
        "-B",
        "-c",
        `
import json, sys
sys.path.insert(0, ".")
import vm_init
st, installed = json.loads(sys.argv[1]), json.loads(sys.argv[2])
vm = vm_init.Vm.__new__(vm_init.Vm)
out, warnings = [], []
vm.say = out.append
vm.warn = lambda stage, m: warnings.append(m)
def run_cmd(argv, capture=False, env=None, stdin=None):
    name = argv[-1]
    return (0, "install ok installed\\t" + installed[name], "") if name in installed else (1, "", "dpkg-query: no packages found matching " + name)
vm.run_cmd = run_cmd
err = None
try:
    vm.packages("modules-final", st)
except vm_init.PackageInstallerError as e:
    err = str(e)
print(json.dumps({"out": out, "warnings": warnings, "error": err}))
`,
        JSON.stringify({ ...st, dpkgStatus: statusPath }),
        JSON.stringify(installed),
      ],
      { encoding: "utf8", cwd: DIR, env: { PATH: "/usr/bin:/bin" }, timeout: 20_000 },
    );
    expect(r.stderr).toBe("");
    return { ...(JSON.parse(r.stdout) as { out: string[]; warnings: string[]; error: string | null }), status: readFileSync(statusPath, "utf8") };
  }

  const STATUS = ["Package: iperf3\nStatus: install ok installed\nVersion: 3.18-2", "Package: netperf\nStatus: install ok installed\nVersion: 2.7.0-0.1", "Package: sockperf\nStatus: install ok installed\nVersion: 3.10-1", ""].join("\n\n");

  it("latlab's packages pass when the image has them and this machine can run them", () => {
    const st = packagesStep(`packages:\n${PACKAGES.map((p) => `  - ${p}`).join("\n")}`);
    const installed = Object.fromEntries(PACKAGES.map((p) => [p, "9.9-debian"]));
    const r = run(st, installed, STATUS);
    expect(r.error).toBeNull();
    expect(r.out).toContain("Setting up iperf3 (3.16-1build2) ... [latlab emulator: this machine's iperf3 9.9-debian]");
    expect(r.status).toBe(STATUS);
  });

  it("a package the image lacks fails as on Ubuntu, even if this machine has it, and the VM no longer shows it installed", () => {
    const r = run(packagesStep("packages:\n  - iperf3\n  - netperf"), { iperf3: "3.18-2", netperf: "2.7.0-0.1" }, STATUS);
    expect(r.out).toContain("E: Unable to locate package netperf");
    // cloud-init's PackageInstallerError, as `cloud-init status --long` lists it.
    expect(r.error).toBe("Failed to install the following packages: {'netperf'}. See associated package manager logs for more details.");
    expect(r.warnings[0]).toBe("Failure when attempting to install packages: ['iperf3', 'netperf']");
    expect(r.status).toContain("Package: iperf3\n");
    expect(r.status).toContain("Package: sockperf\n");
    expect(r.status).not.toContain("Package: netperf");
  });

  it("a pinned version the archive lacks fails; one the image has but this machine lacks fails, naming what to install here", () => {
    const pinned = run(packagesStep("packages:\n  - [iperf3, 3.18-2]"), { iperf3: "3.18-2" }, STATUS);
    expect(pinned.out).toContain("E: Version '3.18-2' for 'iperf3' was not found");
    expect(pinned.error).toContain("{'iperf3'}");
    const missingHere = run(packagesStep("packages:\n  - qperf"), {}, STATUS);
    expect(missingHere.out.join("\n")).toContain("qperf 0.4.11-3build2 is in the image (universe) but not installed on this machine, whose programs the emulated VM runs (apt-get install qperf)");
    expect(missingHere.error).toContain("{'qperf'}");
    expect(missingHere.status).toBe(STATUS);
  });
});
