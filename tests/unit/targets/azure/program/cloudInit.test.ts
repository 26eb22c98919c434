import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FAILED_MARKER, PACKAGES, READY_MARKER, cloudConfig, customData, hostKeyProblem, readyStep } from "../../../../../src/targets/azure/program/cloudInit.ts";
import { tempDirs } from "../../../../tempDirs.ts";
import { deriveHostKeys, ed25519FromSeed, rsaModulusBits, sshKeyType, throwawayRsaPublicKey } from "../../../../../src/targets/azure/access/hostKeys.ts";
import { SEED } from "../helpers.ts";

const keys = deriveHostKeys(SEED, ["d0-client", "d0-server"]);
const hasPyYaml = spawnSync("python3", ["-c", "import yaml"]).status === 0;
const hasSshKeygen = spawnSync("ssh-keygen", ["-?"]).error === undefined;

describe("cloud-init", () => {
  const text = cloudConfig({ hostName: "d0-client", hostKey: keys["d0-client"]! });

  it("installs the tools, disables root and passwords, writes this host's key and no other", () => {
    expect(text.startsWith("#cloud-config\n")).toBe(true);
    for (const p of PACKAGES) expect(text).toContain(`- "${p}"`);
    expect([...PACKAGES]).toEqual(["sockperf", "iperf3", "qperf", "nmap", "python3"]);
    expect(text).toContain("disable_root: true");
    expect(text).toContain("ssh_pwauth: false");
    expect(text).toContain("ssh_deletekeys: true");
    expect(text).toContain("ssh_genkeytypes: []");
    expect(text).toContain("PermitRootLogin no");
    expect(text).toContain("PasswordAuthentication no");
    expect(text).toContain("HostKey /etc/ssh/ssh_host_ed25519_key");
    expect(text).toContain(`ed25519_public: "${keys["d0-client"]!.publicKey}"`);
    for (const line of keys["d0-client"]!.privateKey.trim().split("\n")) expect(text).toContain(`    ${line}`);
    // Nothing of the other host, and only one private key block.
    expect(text).not.toContain(keys["d0-server"]!.publicKey.split(" ")[1]!);
    expect(text).not.toContain(keys["d0-server"]!.privateKey.split("\n")[4]!);
    expect(text.match(/BEGIN [A-Z]* ?PRIVATE KEY/g)).toHaveLength(1);
    expect(text).toContain(READY_MARKER);
  });

  it("is valid YAML with the structure cloud-init reads", { skip: !hasPyYaml }, () => {
    const json = execFileSync("python3", ["-c", "import sys, yaml, json; print(json.dumps(yaml.safe_load(sys.stdin.read())))"], { input: text }).toString();
    const doc = JSON.parse(json);
    expect(doc.ssh_keys.ed25519_private).toBe(keys["d0-client"]!.privateKey);
    expect(doc.ssh_keys.ed25519_public).toBe(keys["d0-client"]!.publicKey);
    expect(doc.ssh_genkeytypes).toEqual([]);
    expect(doc.packages).toEqual([...PACKAGES]);
    expect(doc.write_files[0].path).toBe("/etc/ssh/sshd_config.d/60-latlab.conf");
    expect(doc.hostname).toBe("d0-client");
  });

  it("base64-encodes for customData", () => {
    const b64 = customData({ hostName: "d0-client", hostKey: keys["d0-client"]! });
    expect(b64).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(b64, "base64").toString("utf8")).toBe(text);
  });

  it("refuses a key pair it cannot write, and never a client key in place of a host key", () => {
    expect(hostKeyProblem({ privateKey: "x", publicKey: "ssh-ed25519 AAAA" })).toMatch(/not an OpenSSH public key line/);
    expect(hostKeyProblem({ privateKey: "not a key", publicKey: keys["d0-client"]!.publicKey })).toMatch(/not a PEM\/OpenSSH private key block/);
    expect(() => cloudConfig({ hostName: "x", hostKey: { privateKey: "", publicKey: "" } })).toThrow(/host key for x/);
  });
});

describe("host keys", () => {
  it("derive the same Ed25519 keys from the same seed, different ones per host", () => {
    const again = deriveHostKeys(SEED, ["d0-client"]);
    expect(again["d0-client"]).toEqual(keys["d0-client"]);
    expect(keys["d0-client"]!.publicKey).not.toBe(keys["d0-server"]!.publicKey);
    expect(sshKeyType(keys["d0-client"]!.publicKey)).toBe("ssh-ed25519");
    expect(() => deriveHostKeys("short", ["x"])).toThrow(/at least 32 characters/);
  });

  it("a seed gives byte-for-byte the same OpenSSH key every time (encoded by keys.ts, seed-derived check int)", () => {
    // Golden values: what hostKeys.ts produced with its own encoder before keys.ts became the only one.
    const k = ed25519FromSeed(Buffer.alloc(32, 7), "c");
    expect(k.publicKey).toBe("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOpKbGPinFIKvvVQexMuxfmVR3auvr57kkIe6mkURtIs c");
    expect(k.privateKey).toBe(
      [
        "-----BEGIN OPENSSH PRIVATE KEY-----",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
        "QyNTUxOQAAACDqSmxj4pxSCr71UHsTLsX5lUd2rr6+e5JCHuppFEbSLAAAAIhLsG+OS7Bv",
        "jgAAAAtzc2gtZWQyNTUxOQAAACDqSmxj4pxSCr71UHsTLsX5lUd2rr6+e5JCHuppFEbSLA",
        "AAAEAHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHB+pKbGPinFIKvvVQexMuxfmV",
        "R3auvr57kkIe6mkURtIsAAAAAWMBAgME",
        "-----END OPENSSH PRIVATE KEY-----",
        "",
      ].join("\n"),
    );
    expect(() => ed25519FromSeed(Buffer.alloc(31))).toThrow(/32 bytes/);
  });

  it("are real OpenSSH keys: ssh-keygen -y gives back the public line", { skip: !hasSshKeygen }, () => {
    const dir = mkdtempSync(join(tmpdir(), "latlab-hk-"));
    try {
      const file = join(dir, "k");
      writeFileSync(file, ed25519FromSeed(Buffer.alloc(32, 7), "c").privateKey, { mode: 0o600 });
      const pub = execFileSync("ssh-keygen", ["-y", "-f", file]).toString().trim();
      expect(pub).toBe(ed25519FromSeed(Buffer.alloc(32, 7), "c").publicKey);
      writeFileSync(join(dir, "r.pub"), `${throwawayRsaPublicKey()}\n`);
      expect(execFileSync("ssh-keygen", ["-l", "-f", join(dir, "r.pub")]).toString()).toMatch(/^2048 SHA256:.*\(RSA\)/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("read RSA key sizes", () => {
    expect(rsaModulusBits(throwawayRsaPublicKey(2048))).toBe(2048);
    expect(rsaModulusBits(keys["d0-client"]!.publicKey)).toBeUndefined();
    expect(rsaModulusBits("ssh-rsa !!!")).toBeUndefined();
  });
});

describe("cloud-init socket buffers", () => {
  it("raises net.core.{r,w}mem_max so iperf3 -w 32M is measured as asked (seed 002)", async () => {
    const { cloudConfig, SOCKET_BUFFER_MAX } = await import("../../../../../src/targets/azure/program/cloudInit.ts");
    const { generateHostKey } = await import("../../../../../src/targets/azure/access/keys.ts");
    const text = cloudConfig({ hostName: "d0-client", hostKey: generateHostKey("t") });
    expect(SOCKET_BUFFER_MAX).toBeGreaterThanOrEqual(2 * 32 * 1024 * 1024);
    expect(text).toContain(`net.core.rmem_max = ${SOCKET_BUFFER_MAX}`);
    expect(text).toContain(`net.core.wmem_max = ${SOCKET_BUFFER_MAX}`);
    expect(text).toMatch(/runcmd:\n  - \[sysctl, --system\]/);
  });
});

describe("the ready marker (issue 9, defect 5)", () => {
  const temp = tempDirs();
  /** Runs the step for real with sh, its folder moved into a temp dir, and a dpkg-query that knows `installed`. */
  function runStep(packages: string[], installed: string[]) {
    const dir = temp("latlab-ready-");
    const bin = join(dir, "bin");
    execFileSync("mkdir", ["-p", bin]);
    const known = installed.map((p) => `${p}) echo 'install ok installed';;`).join(" ");
    writeFileSync(join(bin, "dpkg-query"), `#!/bin/sh\nfor last; do :; done\ncase "$last" in ${known} *) echo "dpkg-query: no packages found matching $last" >&2; exit 1;; esac\n`, { mode: 0o755 });
    const step = readyStep(packages).split("/var/lib/latlab").join(join(dir, "state"));
    const r = spawnSync("sh", ["-c", step], { env: { PATH: `${bin}:/usr/bin:/bin` }, encoding: "utf8" });
    const read = (f: string) => spawnSync("cat", [join(dir, "state", f.split("/").pop()!)], { encoding: "utf8" }).stdout;
    return { code: r.status, ready: read(READY_MARKER), failed: read(FAILED_MARKER) };
  }

  it("is written when every package is installed", () => {
    const r = runStep(["sockperf", "iperf3"], ["sockperf", "iperf3"]);
    expect(r.code).toBe(0);
    expect(r.ready).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(r.failed).toBe("");
  });

  it("is not written when a package failed to install: the step fails and names what is missing", () => {
    const r = runStep(["sockperf", "iperf3", "qperf"], ["iperf3"]);
    expect(r.code).toBe(1);
    expect(r.ready).toBe("");
    expect(r.failed).toBe("packages not installed: sockperf qperf\n");
  });

  it("is the last runcmd step of the cloud-config, over the packages it installs", () => {
    const text = cloudConfig({ hostName: "d0-client", hostKey: keys["d0-client"]!, packages: ["iperf3", "nmap"] });
    const last = text.trimEnd().split("\n").pop()!;
    expect(last).toBe(`  - [sh, -c, ${JSON.stringify(readyStep(["iperf3", "nmap"]))}]`);
    expect(last).toContain("'iperf3' 'nmap'");
  });
});
