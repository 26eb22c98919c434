import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { PACKAGES, READY_MARKER, cloudConfig, customData } from "../../../../../../src/targets/azure/program/cloudInit.ts";
import { deriveHostKeys } from "../../../../../../src/targets/azure/access/hostKeys.ts";
import { CloudConfigError, DEFAULT_GENKEYTYPES, parseCloudConfigText, parseCustomData } from "../../../../../../src/targets/azure/emulator/vm/cloudConfig.ts";

const SEED = "test-seed-0123456789abcdef0123456789abcdef";
const keys = deriveHostKeys(SEED, ["d0-client"]);
const hostKey = keys["d0-client"]!;
const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");
const text = (contentBase64: string) => Buffer.from(contentBase64, "base64").toString("utf8");
const parse = (yaml: string) => parseCloudConfigText("vm1", `#cloud-config\n${yaml}`);

describe("emulated VM: latlab's own cloud-config (cloudInit.ts)", () => {
  const cfg = parseCustomData("d0-client", customData({ hostName: "d0-client", hostKey }));

  it("reads the hostname, the host key and no key generation", () => {
    expect(cfg.hostname).toBe("d0-client");
    expect(cfg.ssh.deleteKeys).toBe(true);
    expect(cfg.ssh.genKeyTypes).toEqual([]);
    expect(cfg.ssh.keys).toEqual([
      { type: "ed25519", part: "private", value: hostKey.privateKey },
      { type: "ed25519", part: "public", value: hostKey.publicKey.trim() },
    ]);
    expect(cfg.ssh.pwauth).toBe(false);
    expect(cfg.ssh.disableRoot).toBe(true);
    expect(cfg.users).toEqual([{ kind: "default" }]);
  });

  it("reads write_files with their paths, modes and exact content", () => {
    expect(cfg.writeFiles.map((f) => [f.path, f.mode, f.user, f.group, f.append, f.defer])).toEqual([
      ["/etc/ssh/sshd_config.d/60-latlab.conf", 0o644, "root", "root", false, false],
      ["/etc/sysctl.d/90-latlab.conf", 0o644, "root", "root", false, false],
    ]);
    expect(text(cfg.writeFiles[0]!.contentBase64)).toBe(
      "HostKey /etc/ssh/ssh_host_ed25519_key\nPermitRootLogin no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n",
    );
    expect(text(cfg.writeFiles[1]!.contentBase64)).toMatch(/^net\.core\.rmem_max = \d+\nnet\.core\.wmem_max = \d+\n$/);
  });

  it("reads packages and runcmd (the last step writes the ready marker)", () => {
    expect(cfg.packages).toEqual(PACKAGES.map((name) => ({ name, manager: "apt" })));
    expect(cfg.runcmd).toHaveLength(2);
    expect(cfg.runcmd![0]).toEqual(["sysctl", "--system"]);
    const last = cfg.runcmd![1] as string[];
    expect(last.slice(0, 2)).toEqual(["sh", "-c"]);
    expect(last[2]).toContain(READY_MARKER);
  });

  it("lists what it does not emulate and what only reaches the console", () => {
    expect(cfg.notEmulated).toEqual(["package_update"]);
    expect(cfg.consoleOnly).toEqual(["no_ssh_fingerprints", "ssh"]);
    expect(cfg.warnings).toEqual([]);
  });

  it("takes the cloud-config text the same way", () => {
    expect(parseCloudConfigText("d0-client", cloudConfig({ hostName: "d0-client", hostKey }))).toEqual(cfg);
  });
});

describe("emulated VM: cloud-config edge cases", () => {
  it("applies cloud-init's defaults without customData", () => {
    for (const none of [undefined, "", "  "]) {
      const cfg = parseCustomData("vm1", none);
      expect(cfg.users).toEqual([{ kind: "default" }]);
      expect(cfg.ssh.deleteKeys).toBe(true);
      expect(cfg.ssh.genKeyTypes).toEqual([...DEFAULT_GENKEYTYPES]);
      expect(cfg.ssh.keys).toBeUndefined();
      expect(cfg.ssh.pwauth).toBeUndefined();
      expect(cfg.runcmd).toBeUndefined();
      expect(cfg.writeFiles).toEqual([]);
    }
  });

  it("refuses what is not a cloud-config document, naming the VM", () => {
    expect(() => parseCustomData("vm7", "not base64!")).toThrow(/customData of VM vm7: is not base64/);
    expect(() => parseCustomData("vm7", b64("#!/bin/bash\necho hi\n"))).toThrow(/VM vm7: is a shell script, not a #cloud-config document/);
    expect(() => parseCustomData("vm7", b64("Content-Type: multipart/mixed; boundary=x\n"))).toThrow(/MIME multipart/);
    expect(() => parseCustomData("vm7", b64("## template: jinja\n#cloud-config\n"))).toThrow(/Jinja template/);
    expect(() => parseCustomData("vm7", b64("hostname: x\n"))).toThrow(/text starting with "hostname: x"/);
    expect(() => parseCustomData("vm7", b64("#cloud-config\nruncmd: [a\n"))).toThrow(/VM vm7: is not valid YAML/);
    expect(() => parseCustomData("vm7", b64("#cloud-config\n- a\n"))).toThrow(/YAML mapping at the top level/);
    expect(() => parseCustomData("vm7", b64("#cloud-config\npackages: sockperf\n"))).toThrow(/VM vm7: cloud-config key packages:/);
    expect(() => parseCustomData("vm7", b64("#cloud-config\nwrite_files:\n  - content: x\n"))).toThrow(/key write_files\[0\]\.path/);
    const err = (() => {
      try {
        parseCustomData("vm7", "@@@");
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(CloudConfigError);
  });

  it("reads gzip-compressed user-data, as cloud-init does", () => {
    const gz = gzipSync(Buffer.from("#cloud-config\nhostname: zipped\n")).toString("base64");
    expect(parseCustomData("vm1", gz).hostname).toBe("zipped");
  });

  it("reads an empty cloud-config as the defaults", () => {
    expect(parse("").users).toEqual([{ kind: "default" }]);
  });

  it("reads YAML 1.1 as PyYAML does: 0644 is octal, yes is true", () => {
    const cfg = parse(
      [
        "ssh_deletekeys: no",
        "write_files:",
        "  - {path: /a, permissions: 0644}",
        "  - {path: /b, permissions: '0600'}",
        "  - {path: /c, permissions: 493}",
        "  - {path: /d, permissions: rwx}",
        "  - {path: /e}",
      ].join("\n"),
    );
    expect(cfg.ssh.deleteKeys).toBe(false);
    expect(cfg.writeFiles.map((f) => f.mode)).toEqual([0o644, 0o600, 0o755, 0o644, 0o644]);
    expect(cfg.warnings).toEqual(["Undecodable permissions rwx, returning default 644"]);
    // PyYAML keeps y and n as strings (the yaml package's 1.1 schema alone would not).
    expect(parse("runcmd:\n  - [echo, y, n, on, Off]\n").runcmd).toEqual([["echo", "y", "n", "True", "False"]]);
  });

  it("decodes write_files encodings, owners, append and defer", () => {
    const gz = gzipSync(Buffer.from("zipped\n")).toString("base64");
    const cfg = parse(
      [
        "write_files:",
        `  - {path: /x/b64, encoding: b64, content: ${b64("plain\n")}}`,
        `  - {path: /x/gz, encoding: gzip+base64, content: "${gz}"}`,
        "  - {path: /x/text, encoding: text/plain, content: hi}",
        "  - {path: /x/odd, encoding: rot13, content: hi}",
        "  - {path: x/../y/rel, owner: 'azureuser:azureuser', append: true, defer: true}",
        "  - {path: /x/u, owner: bob}",
      ].join("\n"),
    );
    expect(cfg.writeFiles.map((f) => [f.path, text(f.contentBase64)])).toEqual([
      ["/x/b64", "plain\n"],
      ["/x/gz", "zipped\n"],
      ["/x/text", "hi"],
      ["/x/odd", "hi"],
      ["/y/rel", ""],
      ["/x/u", ""],
    ]);
    expect(cfg.writeFiles[4]).toMatchObject({ user: "azureuser", group: "azureuser", append: true, defer: true });
    expect(cfg.writeFiles[5]).toMatchObject({ user: "bob", group: null });
    expect(cfg.warnings).toEqual(["Unknown encoding type rot13, assuming text/plain"]);
  });

  it("refuses write_files content that does not decode", () => {
    expect(() => parse("write_files:\n  - {path: /x, encoding: gz, content: notgzip}")).toThrow(/write_files\[0\]\.content does not decode as gz/);
  });

  it("reads runcmd and bootcmd as cloud-init's shellify sees them", () => {
    const cfg = parse(["runcmd:", "  - [echo, 1, true, it's]", "  - echo $HOME", "  -", "bootcmd:", "  - [touch, /b]"].join("\n"));
    expect(cfg.runcmd).toEqual([["echo", "1", "True", "it's"], "echo $HOME"]);
    expect(cfg.bootcmd).toEqual([["touch", "/b"]]);
  });

  it("reads every packages form", () => {
    const cfg = parse(["packages:", "  - iperf3", "  - [sockperf, 3.7-1]", "  - qperf=0.4.11-3", "  - {apt: [nmap], snap: [lxd]}"].join("\n"));
    expect(cfg.packages).toEqual([
      { name: "iperf3", manager: "apt" },
      { name: "sockperf", version: "3.7-1", manager: "apt" },
      { name: "qperf", version: "0.4.11-3", manager: "apt" },
      { name: "nmap", manager: "apt" },
      { name: "lxd", manager: "snap" },
    ]);
  });

  it("warns of ssh_keys entries cloud-init skips", () => {
    const cfg = parse(["ssh_keys:", "  rsa_private: x", "  dsa_private: y", "  ed25519-sk_private: z"].join("\n"));
    expect(cfg.ssh.keys).toEqual([{ type: "rsa", part: "private", value: "x" }]);
    expect(cfg.warnings).toEqual(['Skipping unrecognized ssh_keys entry: "dsa_private"', 'Skipping unsupported ssh_keys entry: "ed25519-sk_private"']);
  });

  it("reads users: default, names, and dictionaries; what it cannot apply is listed", () => {
    const cfg = parse(
      [
        "users:",
        "  - default",
        "  - bob",
        "  - name: carol",
        "    groups: 'adm, video'",
        "    sudo: ALL=(ALL) ALL",
        "    shell: /bin/sh",
        "    lock_passwd: false",
        "    ssh_authorized_keys: ssh-ed25519 AAAA carol",
        "    passwd: $6$hash",
        "groups:",
        "  - ops",
        "  - dev: [bob, carol]",
      ].join("\n"),
    );
    expect(cfg.users[0]).toEqual({ kind: "default" });
    expect(cfg.users[1]).toMatchObject({ kind: "user", name: "bob", groups: [], sudo: null, lockPasswd: true });
    expect(cfg.users[2]).toMatchObject({
      kind: "user",
      name: "carol",
      groups: ["adm", "video"],
      sudo: ["ALL=(ALL) ALL"],
      shell: "/bin/sh",
      lockPasswd: false,
      sshAuthorizedKeys: ["ssh-ed25519 AAAA carol"],
    });
    expect(cfg.groups).toEqual([
      { name: "ops", members: [] },
      { name: "dev", members: ["bob", "carol"] },
    ]);
    expect(cfg.notEmulated).toEqual(["users[2].passwd"]);
    expect(parse("users: default, dave").users).toEqual([{ kind: "default" }, expect.objectContaining({ name: "dave" })]);
    expect(parse("users: []").users).toEqual([]);
  });

  it("records unknown top-level keys as not emulated and keeps going", () => {
    const cfg = parse("timezone: Europe/London\npower_state: {mode: reboot}\nhostname: h\n");
    expect(cfg.notEmulated).toEqual(["timezone", "power_state"]);
    expect(cfg.hostname).toBe("h");
  });
});
