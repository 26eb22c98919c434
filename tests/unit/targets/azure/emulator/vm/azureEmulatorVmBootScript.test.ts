import { describe, expect, it } from "vitest";
import { customData } from "../../../../../../src/targets/azure/program/cloudInit.ts";
import { deriveHostKeys } from "../../../../../../src/targets/azure/access/hostKeys.ts";
import {
  AZURE_DATASOURCE,
  BootScriptSchema,
  compileBoot,
  hostnameFor,
  NEVER_READY_LINE,
  shellify,
  sudoersContent,
  useraddArgv,
  type BootInput,
  type BootScript,
  type Module,
  type Step,
} from "../../../../../../src/targets/azure/emulator/vm/bootScript.ts";
import { parseCloudConfigText, parseCustomData } from "../../../../../../src/targets/azure/emulator/vm/cloudConfig.ts";

const SEED = "test-seed-0123456789abcdef0123456789abcdef";
const hostKey = deriveHostKeys(SEED, ["d0-client"])["d0-client"]!;
const CLIENT_KEY = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 client";
const BOOT_TIME = new Date("2026-11-21T10:00:00Z");

const input = (over: Partial<BootInput> = {}): BootInput => ({
  vmName: "d0-client",
  adminUsername: "azureuser",
  sshPublicKeys: [CLIENT_KEY],
  disablePasswordAuthentication: true,
  privateAddress: "198.18.0.2",
  instanceId: "2b2b1a0e-1111-2222-3333-444455556666",
  stateDir: "/tmp/latlab-x/vm1",
  imds: { compute: { vmId: "2b2b1a0e-1111-2222-3333-444455556666" }, network: {} },
  neverReady: false,
  bootTime: BOOT_TIME,
  ...over,
});

const stages = (s: BootScript) => s.sequence.map((e) => ("stage" in e ? e.stage : `service:${e.service}`));
const modulesOf = (s: BootScript, stage: string): Module[] => {
  const e = s.sequence.find((x) => "stage" in x && x.stage === stage);
  return e && "modules" in e ? e.modules : [];
};
const moduleOf = (s: BootScript, stage: string, name: string) => modulesOf(s, stage).find((m) => m.name === name);
const text = (data: string) => Buffer.from(data, "base64").toString("utf8");
const writes = (steps: Step[]) => steps.filter((s): s is Extract<Step, { op: "write" }> => s.op === "write");

describe("emulated VM boot: latlab's cloud-config on Ubuntu 24.04 / Azure", () => {
  const cfg = parseCustomData("d0-client", customData({ hostName: "d0-client", hostKey }));
  const script = compileBoot(input(), cfg);

  it("is a valid boot script, stable as JSON", () => {
    expect(BootScriptSchema.parse(JSON.parse(JSON.stringify(script)))).toEqual(script);
    expect(compileBoot(input(), cfg)).toEqual(script);
  });

  it("runs cloud-init's stages in order, sshd after the init stage", () => {
    expect(stages(script)).toEqual(["init-local", "init", "service:ssh", "modules-config", "modules-final"]);
    expect(modulesOf(script, "init").map((m) => m.name)).toEqual(["write_files", "set_hostname", "users_groups", "ssh", "set_passwords"]);
    expect(modulesOf(script, "modules-config").map((m) => m.name)).toEqual(["runcmd"]);
    expect(modulesOf(script, "modules-final").map((m) => m.name)).toEqual(["package_update_upgrade_install", "scripts_user", "final_message"]);
    expect(script.datasource).toBe(AZURE_DATASOURCE);
  });

  it("gives the VM its own /etc, /home, /var, /root, /usr/local/bin, /tmp and /run, under stateDir", () => {
    expect(script.overlays).toEqual(["/etc", "/home", "/var", "/root", "/usr/local/bin"]);
    expect(script.tmpfs).toEqual([
      { path: "/tmp", mode: "1777" },
      { path: "/run", mode: "0755" },
    ]);
    expect(script.scratchDir).toBe("/tmp/latlab-x/vm1/vmfs");
    expect(Object.values(script.files).every((p) => p.startsWith("/tmp/latlab-x/vm1/"))).toBe(true);
    expect(script.imds).toMatchObject({ address: "169.254.169.254", port: 80 });
    expect(script.sshCheck).toEqual({ address: "198.18.0.2", port: 22 });
  });

  it("emulates Azure's DNS and a machine id of the VM's own", () => {
    const w = writes(script.platform);
    expect(w.find((s) => s.path === "/etc/hosts")).toMatchObject({ append: true });
    expect(text(w.find((s) => s.path === "/etc/hosts")!.data)).toBe("198.18.0.2\td0-client\t# Azure DNS (latlab emulator)\n");
    expect(text(w.find((s) => s.path === "/etc/machine-id")!.data)).toBe("2b2b1a0e111122223333444455556666\n");
    const notes = script.platform.filter((s) => s.op === "note").map((s) => (s as { message: string }).message);
    expect(notes).toContain("latlab emulator: cloud-config key package_update is not emulated");
  });

  it("creates the admin user as Ubuntu's default user: home, bash, sudo group, passwordless sudo", () => {
    const users = moduleOf(script, "init", "users_groups")!;
    expect(users.steps[0]).toEqual({
      op: "createUser",
      name: "azureuser",
      useradd: ["useradd", "azureuser", "--comment", "Ubuntu", "--groups", "adm,cdrom,dip,lxd,sudo", "--shell", "/bin/bash", "-m"],
      groups: ["adm", "cdrom", "dip", "lxd", "sudo"],
      lockPasswd: true,
    });
    expect(users.steps[1]).toEqual({ op: "ensureSudoDir", dir: "/etc/sudoers.d" });
    const sudo = writes(users.steps)[0]!;
    expect(sudo.path).toBe("/etc/sudoers.d/90-cloud-init-users");
    expect(sudo.mode).toBe(0o440);
    expect(text(sudo.data)).toBe(
      "# Created by cloud-init v. 24.4.1 (latlab emulator) on Sat, 21 Nov 2026 10:00:00 +0000\n\n# User rules for azureuser\nazureuser ALL=(ALL) NOPASSWD:ALL\n",
    );
  });

  it("deletes the image's host keys, writes only the given one, and installs the admin's key", () => {
    const ssh = moduleOf(script, "init", "ssh")!;
    expect(ssh.steps[0]).toEqual({ op: "removeGlob", pattern: "/etc/ssh/ssh_host_*key*" });
    expect(writes(ssh.steps).map((w) => [w.path, w.mode, text(w.data)])).toEqual([
      ["/etc/ssh/ssh_host_ed25519_key", 0o600, hostKey.privateKey],
      ["/etc/ssh/ssh_host_ed25519_key.pub", 0o644, hostKey.publicKey.trim()],
    ]);
    expect(ssh.steps.some((s) => s.op === "run" || s.op === "derivePublicKey")).toBe(false);
    const auth = ssh.steps.filter((s) => s.op === "authorizedKeys");
    expect(auth[0]).toEqual({ op: "authorizedKeys", user: "azureuser", keys: [CLIENT_KEY], options: null });
    expect(auth[1]).toMatchObject({ op: "authorizedKeys", user: "root", keys: [CLIENT_KEY] });
    expect((auth[1] as { options: string }).options).toBe(
      'no-port-forwarding,no-agent-forwarding,no-X11-forwarding,command="echo \'Please login as the user \\"azureuser\\" rather than the user \\"root\\".\';echo;sleep 10;exit 142"',
    );
  });

  it("turns ssh_pwauth into 50-cloud-init.conf", () => {
    const w = writes(moduleOf(script, "init", "set_passwords")!.steps)[0]!;
    expect([w.path, w.mode, text(w.data)]).toEqual(["/etc/ssh/sshd_config.d/50-cloud-init.conf", 0o600, "PasswordAuthentication no\n"]);
  });

  it("writes runcmd as cloud-init's script and runs it in the final stage", () => {
    const w = writes(moduleOf(script, "modules-config", "runcmd")!.steps)[0]!;
    expect(w.path).toBe("/var/lib/cloud/instance/scripts/runcmd");
    expect(w.mode).toBe(0o700);
    expect(text(w.data)).toBe(shellify(cfg.runcmd!));
    expect(text(w.data).split("\n")[1]).toBe("'sysctl' '--system'");
    expect(moduleOf(script, "modules-final", "scripts_user")!.steps).toEqual([{ op: "runparts", dir: "/var/lib/cloud/instance/scripts" }]);
    expect(moduleOf(script, "modules-final", "package_update_upgrade_install")!.steps[0]).toMatchObject({ op: "packages" });
  });

  it("neverReady hangs runcmd before anything of it runs", () => {
    const hung = compileBoot(input({ neverReady: true }), cfg);
    const body = text(writes(moduleOf(hung, "modules-config", "runcmd")!.steps)[0]!.data);
    expect(body.startsWith(`#!/bin/sh\n${NEVER_READY_LINE}\n'sysctl'`)).toBe(true);
    // Even without a runcmd of its own.
    const bare = compileBoot(input({ neverReady: true }), parseCustomData("vm", undefined));
    expect(text(writes(moduleOf(bare, "modules-config", "runcmd")!.steps)[0]!.data)).toContain("exec sleep infinity");
  });
});

describe("emulated VM boot: other cloud-configs", () => {
  it("without customData generates the default host key types, once each", () => {
    const s = compileBoot(input({ disablePasswordAuthentication: false }), parseCustomData("vm", undefined));
    const runs = moduleOf(s, "init", "ssh")!.steps.filter((x) => x.op === "run");
    expect(runs.map((r) => (r as { argv: string[]; unlessExists: string }).unlessExists)).toEqual([
      "/etc/ssh/ssh_host_rsa_key",
      "/etc/ssh/ssh_host_ecdsa_key",
      "/etc/ssh/ssh_host_ed25519_key",
    ]);
    expect(runs[0]).toMatchObject({ argv: ["ssh-keygen", "-t", "rsa", "-N", "", "-f", "/etc/ssh/ssh_host_rsa_key"], onFail: "warn" });
    // Azure's datasource: ssh_pwauth = not disablePasswordAuthentication.
    expect(text(writes(moduleOf(s, "init", "set_passwords")!.steps)[0]!.data)).toBe("PasswordAuthentication yes\n");
    expect(modulesOf(s, "modules-config")).toEqual([]);
    expect(modulesOf(s, "modules-final").map((m) => m.name)).toEqual(["scripts_user", "final_message"]);
  });

  it("derives a public key cloud-init was not given, and configures certificates", () => {
    const cfg = parseCloudConfigText("vm", "#cloud-config\nssh_keys:\n  rsa_private: K\n  rsa_certificate: C\n");
    const ssh = moduleOf(compileBoot(input(), cfg), "init", "ssh")!;
    expect(ssh.steps).toContainEqual({ op: "derivePublicKey", privatePath: "/etc/ssh/ssh_host_rsa_key", publicPath: "/etc/ssh/ssh_host_rsa_key.pub" });
    const cert = writes(ssh.steps).find((w) => w.path === "/etc/ssh/sshd_config")!;
    expect([cert.append, text(cert.data)]).toEqual([true, "HostCertificate /etc/ssh/ssh_host_rsa_key-cert.pub\n"]);
  });

  it("keeps the hostname with preserve_hostname, and splits an fqdn", () => {
    const keep = compileBoot(input(), parseCloudConfigText("vm", "#cloud-config\npreserve_hostname: true\nhostname: other\n"));
    expect(moduleOf(keep, "init", "set_hostname")).toBeUndefined();
    expect(keep.hostname).toBe("d0-client");
    const cfg = parseCloudConfigText("vm", "#cloud-config\nfqdn: web.example.com\n");
    expect(hostnameFor(cfg, "d0-client")).toEqual({ hostname: "web", fqdn: "web.example.com" });
    expect(hostnameFor(parseCloudConfigText("vm", "#cloud-config\nhostname: a.b\n"), "x")).toEqual({ hostname: "a", fqdn: "a.b" });
    expect(hostnameFor(parseCloudConfigText("vm", "#cloud-config\n"), "x")).toEqual({ hostname: "x", fqdn: null });
  });

  it("without the default user installs the osProfile keys for no one but root", () => {
    const s = compileBoot(input(), parseCloudConfigText("vm", "#cloud-config\nusers:\n  - name: bob\n"));
    const auth = moduleOf(s, "init", "ssh")!.steps.filter((x) => x.op === "authorizedKeys");
    expect(auth).toHaveLength(1);
    expect((auth[0] as { user: string; options: string }).user).toBe("root");
    expect((auth[0] as { options: string }).options).toContain('Please login as the user \\"NONE\\"');
    const users = moduleOf(s, "init", "users_groups")!;
    expect(users.steps.map((x) => x.op)).toEqual(["createUser"]);
  });

  it("writes deferred files in the final stage, bootcmd first in the init stage, warnings as WARNINGs", () => {
    const cfg = parseCloudConfigText(
      "vm",
      "#cloud-config\nbootcmd: [[touch, /b]]\nwrite_files:\n  - {path: /now}\n  - {path: /later, defer: true, owner: azureuser}\nssh_keys: {dsa_private: x}\n",
    );
    const s = compileBoot(input(), cfg);
    expect(modulesOf(s, "init").map((m) => m.name).slice(0, 3)).toEqual(["schema", "bootcmd", "write_files"]);
    expect(moduleOf(s, "init", "schema")!.steps).toEqual([{ op: "warn", message: 'Skipping unrecognized ssh_keys entry: "dsa_private"' }]);
    expect(moduleOf(s, "init", "bootcmd")!.steps).toEqual([
      { op: "shellScript", content: "#!/bin/sh\n'touch' '/b'\n", env: { INSTANCE_ID: "2b2b1a0e-1111-2222-3333-444455556666" } },
    ]);
    expect(writes(moduleOf(s, "init", "write_files")!.steps).map((w) => w.path)).toEqual(["/now"]);
    expect(writes(moduleOf(s, "modules-final", "write_files_deferred")!.steps).map((w) => [w.path, w.user])).toEqual([["/later", "azureuser"]]);
  });
});

describe("emulated VM boot: cloud-init's helpers", () => {
  it("shellify quotes list words and keeps strings verbatim", () => {
    expect(shellify([["echo", "it's", "$HOME"], "echo $HOME && true"])).toBe("#!/bin/sh\n'echo' 'it'\\''s' '$HOME'\necho $HOME && true\n");
    expect(shellify([])).toBe("#!/bin/sh\n");
  });

  it("useradd takes cloud-init's options in its order", () => {
    const base = { name: "svc", groups: [], system: false, noCreateHome: false, noUserGroup: false, lockPasswd: true, sudo: null, sshAuthorizedKeys: [] };
    expect(useraddArgv({ ...base, system: true, uid: "999", homedir: "/srv/svc", primaryGroup: "daemon", noUserGroup: true })).toEqual([
      "useradd",
      "svc",
      "--home",
      "/srv/svc",
      "--no-user-group",
      "--gid",
      "daemon",
      "--system",
      "--uid",
      "999",
      "-M",
    ]);
    expect(useraddArgv({ ...base, noCreateHome: true })).toEqual(["useradd", "svc", "-M"]);
  });

  it("sudoers: one header, a block per user, nothing without rules", () => {
    expect(sudoersContent([], BOOT_TIME)).toBeNull();
    expect(sudoersContent([{ name: "a", rules: ["ALL=(ALL) ALL"] }, { name: "b", rules: ["X", "Y"] }], BOOT_TIME)).toBe(
      "# Created by cloud-init v. 24.4.1 (latlab emulator) on Sat, 21 Nov 2026 10:00:00 +0000\n\n# User rules for a\na ALL=(ALL) ALL\n\n# User rules for b\nb X\nb Y\n",
    );
  });
});
