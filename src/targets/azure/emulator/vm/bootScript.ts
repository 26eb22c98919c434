import { posix } from "node:path";
import { z } from "zod";
import type { CloudConfig, ShellEntry, UserConfig } from "./cloudConfig.ts";
import { describeImage, IMAGE_PACKAGES_PATH, imagePackage, imagePackages, type ImagePackages } from "./imagePackages.ts";

/**
 * What an emulated VM does at boot, as data (pure): the cloud-config and the VM's osProfile
 * compiled into the steps Ubuntu 24.04's cloud-init would take on Azure, stage by stage and
 * module by module, in cloud.cfg's order. vm_init.py, running inside the VM's namespaces,
 * executes them one by one and knows nothing of cloud-config: every decision (which files, which
 * modes, which useradd flags, what goes into sudoers) is made here, where it is unit-tested.
 */

/** What `cloud-init --version` and the file headers say. */
export const EMULATED_CLOUD_INIT_VERSION = "24.4.1 (latlab emulator)";
/** How cloud-init names the Azure datasource in its status (`detail`). */
export const AZURE_DATASOURCE = "DataSourceAzure [seed=/dev/sr0]";
export const IMDS_ADDRESS = "169.254.169.254";

/** Where a VM gets its own writable view: overlays keep the machine's files visible, read-only underneath. */
export const OVERLAID_DIRS = ["/etc", "/home", "/var", "/root", "/usr/local/bin"] as const;
/** Fresh, empty per VM (as after a reboot): /run holds no socket of the machine's systemd, dbus or nscd. */
export const TMPFS_DIRS = [
  { path: "/tmp", mode: "1777" },
  { path: "/run", mode: "0755" },
] as const;

/** The default user of Ubuntu's cloud.cfg (cloud-init 24.1 and later), named after osProfile.adminUsername on Azure. */
export const UBUNTU_DEFAULT_USER = {
  gecos: "Ubuntu",
  groups: ["adm", "cdrom", "dip", "lxd", "sudo"],
  shell: "/bin/bash",
  lockPasswd: true,
  sudo: ["ALL=(ALL) NOPASSWD:ALL"],
} as const;

export const SUDOERS_FILE = "/etc/sudoers.d/90-cloud-init-users";
export const SCRIPTS_DIR = "/var/lib/cloud/instance/scripts";
/** Where cloud-init (24.x, Ubuntu) turns ssh_pwauth into sshd configuration. */
export const PWAUTH_FILE = "/etc/ssh/sshd_config.d/50-cloud-init.conf";
const HOST_KEY_PATH = (type: string) => `/etc/ssh/ssh_host_${type}_key`;

/** A clean environment for everything the VM runs, as a systemd service would get. */
export const VM_ENV = {
  PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
  HOME: "/root",
  LANG: "C.UTF-8",
} as const;

// --- the steps vm_init.py knows --------------------------------------------------------------

const OnFail = z.enum(["raise", "warn"]);

export const StepSchema = z.discriminatedUnion("op", [
  /** sethostname(2) in the VM's UTS namespace (+ /etc/hostname, as cc_set_hostname writes it). */
  z.object({ op: z.literal("hostname"), name: z.string(), writeEtcHostname: z.boolean() }),
  z.object({ op: z.literal("mkdir"), path: z.string(), mode: z.number().int() }),
  z.object({ op: z.literal("symlink"), target: z.string(), path: z.string() }),
  /** Missing parent folders are created (and given to user:group, as cloud-init's ensure_dir does). */
  z.object({
    op: z.literal("write"),
    path: z.string(),
    data: z.string(),
    mode: z.number().int(),
    user: z.string().nullable(),
    group: z.string().nullable(),
    append: z.boolean(),
  }),
  z.object({ op: z.literal("removeGlob"), pattern: z.string() }),
  z.object({ op: z.literal("run"), argv: z.array(z.string()).min(1), unlessExists: z.string().optional(), onFail: OnFail, what: z.string() }),
  z.object({ op: z.literal("createGroup"), name: z.string(), members: z.array(z.string()) }),
  /** Skipped when the user exists ("User x already exists, skipping."); missing groups are created first. */
  z.object({ op: z.literal("createUser"), name: z.string(), useradd: z.array(z.string()), groups: z.array(z.string()), lockPasswd: z.boolean() }),
  /** /etc/sudoers must include the folder (cloud-init appends an #includedir when it does not). */
  z.object({ op: z.literal("ensureSudoDir"), dir: z.string() }),
  /** The user's AuthorizedKeysFile (~/.ssh/authorized_keys), merged as cloud-init's update_authorized_keys merges. */
  z.object({ op: z.literal("authorizedKeys"), user: z.string(), keys: z.array(z.string()), options: z.string().nullable() }),
  z.object({ op: z.literal("derivePublicKey"), privatePath: z.string(), publicPath: z.string() }),
  /**
   * Checked, never installed. `image` is the image's record of the package (imagePackages.ts), or
   * null: apt on the image cannot locate it, so it fails and is removed from the VM's own
   * `dpkgStatus` (the machine may have it; the VM must not show it installed). One the image has
   * runs from this machine's installation, which dpkg-query must find.
   */
  z.object({
    op: z.literal("packages"),
    image: z.string(),
    /** The list's file, for the message about a name it lacks. */
    listFile: z.string(),
    dpkgStatus: z.string(),
    packages: z.array(
      z.object({
        name: z.string(),
        version: z.string().optional(),
        manager: z.enum(["apt", "snap"]),
        image: z.object({ candidate: z.string(), versions: z.array(z.string()), component: z.string() }).nullable(),
      }),
    ),
  }),
  /** bootcmd: a temporary script run with /bin/sh, INSTANCE_ID in its environment. */
  z.object({ op: z.literal("shellScript"), content: z.string(), env: z.record(z.string(), z.string()) }),
  /** scripts_user: every executable file of the folder, in name order. */
  z.object({ op: z.literal("runparts"), dir: z.string() }),
  /** A WARNING cloud-init would log: a recoverable error in `cloud-init status`. */
  z.object({ op: z.literal("warn"), message: z.string() }),
  z.object({ op: z.literal("note"), message: z.string() }),
  z.object({ op: z.literal("finalMessage"), template: z.string() }),
]);
export type Step = z.infer<typeof StepSchema>;

export const ModuleSchema = z.object({ name: z.string(), steps: z.array(StepSchema) });
export type Module = z.infer<typeof ModuleSchema>;

export const STAGES = ["init-local", "init", "modules-config", "modules-final"] as const;
export type StageName = (typeof STAGES)[number];

export const BootScriptSchema = z.object({
  version: z.literal(1),
  vmName: z.string(),
  /** The computerName, set when the UTS namespace is made (before any stage, as Azure's provisioning does). */
  hostname: z.string(),
  /** A tmpfs mounted here (in the VM's mount namespace only) holds the overlays' upper layers. */
  scratchDir: z.string(),
  overlays: z.array(z.string()),
  tmpfs: z.array(z.object({ path: z.string(), mode: z.string() })),
  files: z.object({ events: z.string(), logCopy: z.string(), statusCopy: z.string(), imdsLog: z.string(), sshdLog: z.string() }),
  imds: z.object({ address: z.string(), port: z.number().int(), documents: z.record(z.string(), z.unknown()) }),
  sshCheck: z.object({ address: z.string(), port: z.number().int() }),
  env: z.record(z.string(), z.string()),
  cloudInitVersion: z.string(),
  datasource: z.string(),
  /** Emulator set-up inside the VM; a failure here fails the boot. */
  platform: z.array(StepSchema),
  sequence: z.array(
    z.union([z.object({ stage: z.enum(STAGES), modules: z.array(ModuleSchema) }), z.object({ service: z.literal("ssh") })]),
  ),
});
export type BootScript = z.infer<typeof BootScriptSchema>;

export interface BootInput {
  /** osProfile.computerName. */
  vmName: string;
  adminUsername: string;
  /** osProfile.linuxConfiguration.ssh.publicKeys[].keyData: what cloud-init reads from IMDS. */
  sshPublicKeys: string[];
  disablePasswordAuthentication: boolean;
  /** eth0's address: Azure's DNS resolves the computer name to it. */
  privateAddress: string;
  /** IMDS compute.vmId: cloud-init's instance id on Azure. */
  instanceId: string;
  stateDir: string;
  imds: { compute: Record<string, unknown>; network: Record<string, unknown> };
  neverReady: boolean;
  /** When the VM boots (file headers carry it). */
  bootTime: Date;
  /** The image's packages (default: the shipped Ubuntu 24.04 list, imagePackages.ts). */
  imagePackages?: ImagePackages;
}

/** The VM's dpkg database (under /var, which the VM overlays). */
export const DPKG_STATUS = "/var/lib/dpkg/status";

const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");

/** RFC 2822 time as cloud-init's util.time_rfc2822 prints it: "Thu, 01 Jan 2026 10:00:00 +0000". */
export function rfc2822(d: Date): string {
  return d.toUTCString().replace(/GMT$/, "+0000");
}

/** cloud-init's util.shellify: list items single-quoted (' as '\''), strings verbatim, one per line. */
export function shellify(entries: readonly ShellEntry[]): string {
  let content = "#!/bin/sh\n";
  for (const e of entries) {
    content += typeof e === "string" ? `${e}\n` : `${e.map((w) => `'${w.replace(/'/g, "'\\''")}'`).join(" ")}\n`;
  }
  return content;
}

/** useradd argv the way cloud-init's Distro.add_user builds it: options in key order, then -m or -M. */
export function useraddArgv(u: UserConfig): string[] {
  const argv = ["useradd", u.name];
  // sorted(kwargs): gecos, groups, homedir, no_user_group, primary_group, shell, system, uid.
  if (u.gecos) argv.push("--comment", u.gecos);
  if (u.groups.length > 0) argv.push("--groups", u.groups.join(","));
  if (u.homedir) argv.push("--home", u.homedir);
  if (u.noUserGroup) argv.push("--no-user-group");
  if (u.primaryGroup) argv.push("--gid", u.primaryGroup);
  if (u.shell) argv.push("--shell", u.shell);
  if (u.system) argv.push("--system");
  if (u.uid) argv.push("--uid", u.uid);
  argv.push(u.noCreateHome || u.system ? "-M" : "-m");
  return argv;
}

/** The default user as Ubuntu's cloud-init on Azure makes it. */
export function defaultUser(adminUsername: string): UserConfig {
  return {
    name: adminUsername,
    gecos: UBUNTU_DEFAULT_USER.gecos,
    groups: [...UBUNTU_DEFAULT_USER.groups],
    shell: UBUNTU_DEFAULT_USER.shell,
    system: false,
    noCreateHome: false,
    noUserGroup: false,
    lockPasswd: UBUNTU_DEFAULT_USER.lockPasswd,
    sudo: [...UBUNTU_DEFAULT_USER.sudo],
    sshAuthorizedKeys: [],
  };
}

/** The hostname cc_set_hostname sets: cloud-config's hostname/fqdn, else the datasource's (computerName). */
export function hostnameFor(cfg: CloudConfig, computerName: string): { hostname: string; fqdn: string | null } {
  if (cfg.fqdn !== undefined) return { hostname: cfg.hostname ?? cfg.fqdn.split(".")[0]!, fqdn: cfg.fqdn };
  if (cfg.hostname !== undefined) {
    return cfg.hostname.includes(".") ? { hostname: cfg.hostname.split(".")[0]!, fqdn: cfg.hostname } : { hostname: cfg.hostname, fqdn: null };
  }
  return { hostname: computerName, fqdn: null };
}

/** /etc/sudoers.d/90-cloud-init-users as cloud-init writes it: a header, then a block per user. */
export function sudoersContent(users: readonly { name: string; rules: readonly string[] }[], bootTime: Date): string | null {
  if (users.length === 0) return null;
  const header = `# Created by cloud-init v. ${EMULATED_CLOUD_INIT_VERSION} on ${rfc2822(bootTime)}`;
  const blocks = users.map((u) => ["", `# User rules for ${u.name}`, ...u.rules.map((r) => `${u.name} ${r}`)].join("\n") + "\n");
  return [header, blocks.join("")].join("\n");
}

const note = (message: string): Step => ({ op: "note", message });
const write = (path: string, text: string, mode: number, user: string | null = null, group: string | null = null, append = false): Step => ({
  op: "write",
  path,
  data: b64(text),
  mode,
  user,
  group,
  append,
});

function platformSteps(input: BootInput, cfg: CloudConfig): Step[] {
  const instanceDir = `/var/lib/cloud/instances/${input.instanceId}`;
  const steps: Step[] = [
    { op: "mkdir", path: "/run/lock", mode: 0o1777 },
    { op: "mkdir", path: "/run/cloud-init", mode: 0o755 },
    // cloud-init-generator's mark: `cloud-init status` reports boot_status_code enabled-by-generator.
    write("/run/cloud-init/enabled", "", 0o644),
    { op: "mkdir", path: "/var/lib/cloud/data", mode: 0o755 },
    { op: "mkdir", path: `${instanceDir}/scripts`, mode: 0o755 },
    { op: "symlink", target: instanceDir, path: "/var/lib/cloud/instance" },
    // A VM has its own machine id (systemd makes one at first boot); the machine's must not leak.
    write("/etc/machine-id", `${machineId(input)}\n`, 0o444),
    // Azure's DNS resolves the computer name to the primary private address; here /etc/hosts does.
    write("/etc/hosts", `${input.privateAddress}\t${input.vmName}\t# Azure DNS (latlab emulator)\n`, 0o644, null, null, true),
    note(`latlab emulator: Ubuntu 24.04 on Azure, emulated in network namespace; cloud-init ${EMULATED_CLOUD_INIT_VERSION}`),
  ];
  for (const key of cfg.notEmulated) steps.push(note(`latlab emulator: cloud-config key ${key} is not emulated`));
  for (const key of cfg.consoleOnly) steps.push(note(`latlab emulator: cloud-config key ${key} only affects the serial console (none here)`));
  return steps;
}

/** 32 hex digits, stable per instance (the Azure vmId without dashes when it is a UUID). */
function machineId(input: BootInput): string {
  const hex = input.instanceId.toLowerCase().replace(/[^0-9a-f]/g, "");
  if (hex.length >= 32) return hex.slice(0, 32);
  let h = 0x811c9dc5;
  let out = "";
  for (let round = 0; out.length < 32; round++) {
    for (const ch of `${round}:${input.instanceId}:${input.vmName}`) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
    out += h.toString(16).padStart(8, "0");
  }
  return out.slice(0, 32);
}

function sshModule(input: BootInput, cfg: CloudConfig, defaultUserName: string | null): Module {
  const steps: Step[] = [];
  if (cfg.ssh.deleteKeys) steps.push({ op: "removeGlob", pattern: "/etc/ssh/ssh_host_*key*" });
  if (cfg.ssh.keys !== undefined) {
    for (const k of cfg.ssh.keys) {
      const path = k.part === "private" ? HOST_KEY_PATH(k.type) : k.part === "public" ? `${HOST_KEY_PATH(k.type)}.pub` : `${HOST_KEY_PATH(k.type)}-cert.pub`;
      steps.push(write(path, k.value, k.part === "private" ? 0o600 : 0o644));
    }
    const certs = cfg.ssh.keys.filter((k) => k.part === "certificate");
    if (certs.length > 0) {
      steps.push(write("/etc/ssh/sshd_config", certs.map((c) => `HostCertificate ${HOST_KEY_PATH(c.type)}-cert.pub\n`).join(""), 0o644, null, null, true));
    }
    for (const k of cfg.ssh.keys) {
      if (k.part !== "private" || cfg.ssh.keys.some((o) => o.type === k.type && o.part === "public")) continue;
      steps.push({ op: "derivePublicKey", privatePath: HOST_KEY_PATH(k.type), publicPath: `${HOST_KEY_PATH(k.type)}.pub` });
    }
  } else {
    for (const type of cfg.ssh.genKeyTypes) {
      steps.push({
        op: "run",
        argv: ["ssh-keygen", "-t", type, "-N", "", "-f", HOST_KEY_PATH(type)],
        unlessExists: HOST_KEY_PATH(type),
        onFail: "warn",
        what: `Failed generating key type ${type} to file ${HOST_KEY_PATH(type)}`,
      });
    }
  }
  const keys = [...(cfg.ssh.allowPublicKeys ? input.sshPublicKeys : []), ...cfg.ssh.authorizedKeys];
  if (defaultUserName !== null) steps.push({ op: "authorizedKeys", user: defaultUserName, keys, options: null });
  const rootOptions = cfg.ssh.disableRoot ? cfg.ssh.disableRootOpts.replaceAll("$USER", defaultUserName ?? "NONE").replaceAll("$DISABLE_USER", "root") : null;
  steps.push({ op: "authorizedKeys", user: "root", keys, options: rootOptions });
  return { name: "ssh", steps };
}

function usersModule(input: BootInput, cfg: CloudConfig): { module: Module; defaultUserName: string | null } {
  const steps: Step[] = [];
  for (const g of cfg.groups) steps.push({ op: "createGroup", name: g.name, members: g.members });
  const users: UserConfig[] = [];
  let defaultUserName: string | null = null;
  for (const entry of cfg.users) {
    if (entry.kind === "default") {
      if (defaultUserName !== null) continue;
      defaultUserName = input.adminUsername;
      users.push(defaultUser(input.adminUsername));
    } else {
      const { kind: _kind, ...u } = entry;
      users.push(u);
    }
  }
  const sudoers: { name: string; rules: string[] }[] = [];
  for (const u of users) {
    const groups = [...u.groups, ...(u.primaryGroup ? [u.primaryGroup] : [])];
    steps.push({ op: "createUser", name: u.name, useradd: useraddArgv(u), groups, lockPasswd: u.lockPasswd });
    if (u.sudo !== null) sudoers.push({ name: u.name, rules: u.sudo });
    if (u.sshAuthorizedKeys.length > 0) steps.push({ op: "authorizedKeys", user: u.name, keys: u.sshAuthorizedKeys, options: null });
  }
  const sudoText = sudoersContent(sudoers, input.bootTime);
  if (sudoText !== null) {
    steps.push({ op: "ensureSudoDir", dir: posix.dirname(SUDOERS_FILE) });
    steps.push(write(SUDOERS_FILE, sudoText, 0o440));
  }
  return { module: { name: "users_groups", steps }, defaultUserName };
}

function writeFilesModule(name: string, cfg: CloudConfig, deferred: boolean): Module {
  return {
    name,
    steps: cfg.writeFiles
      .filter((f) => f.defer === deferred)
      .map((f): Step => ({ op: "write", path: f.path, data: f.contentBase64, mode: f.mode, user: f.user, group: f.group, append: f.append })),
  };
}

/** ssh_pwauth: cloud-config's value, else the datasource's (Azure: not disablePasswordAuthentication). */
function setPasswordsModule(input: BootInput, cfg: CloudConfig): Module {
  const pwauth = cfg.ssh.pwauth ?? !input.disablePasswordAuthentication;
  return { name: "set_passwords", steps: [write(PWAUTH_FILE, `PasswordAuthentication ${pwauth ? "yes" : "no"}\n`, 0o600)] };
}

/** The neverReady fault: runcmd hangs on its first line, so cloud-init never finishes. */
export const NEVER_READY_LINE = "# latlab emulator fault neverReady: runcmd hangs here and cloud-init never finishes\nexec sleep infinity";

/** Compiles a VM's boot. Pure: the same input gives the same script. */
export function compileBoot(input: BootInput, cfg: CloudConfig): BootScript {
  const { hostname, fqdn } = hostnameFor(cfg, input.vmName);
  const { module: users, defaultUserName } = usersModule(input, cfg);
  const runcmd: ShellEntry[] | undefined = input.neverReady ? [NEVER_READY_LINE, ...(cfg.runcmd ?? [])] : cfg.runcmd;
  const modulesInit: Module[] = [
    { name: "bootcmd", steps: cfg.bootcmd ? [{ op: "shellScript", content: shellify(cfg.bootcmd), env: { INSTANCE_ID: input.instanceId } }] : [] },
    writeFilesModule("write_files", cfg, false),
    {
      name: "set_hostname",
      steps: cfg.preserveHostname ? [] : [{ op: "hostname", name: hostname, writeEtcHostname: true }],
    },
    ...(fqdn !== null ? [{ name: "update_etc_hosts", steps: [note(`fqdn ${fqdn}: /etc/hosts is not managed (manage_etc_hosts unset, as on Ubuntu)`)] }] : []),
    users,
    sshModule(input, cfg, defaultUserName),
    setPasswordsModule(input, cfg),
  ];
  // What cloud-init logs as WARNING while applying this config (recoverable errors in its status).
  if (cfg.warnings.length > 0) modulesInit.unshift({ name: "schema", steps: cfg.warnings.map((message): Step => ({ op: "warn", message })) });
  const imageList = input.imagePackages ?? imagePackages();
  const packages = cfg.packages.map((p) => {
    const known = p.manager === "apt" ? imagePackage(p.name, imageList) : null;
    return { ...p, image: known ? { candidate: known.candidate, versions: [...known.versions], component: known.component } : null };
  });
  return {
    version: 1,
    vmName: input.vmName,
    hostname: input.vmName,
    scratchDir: posix.join(input.stateDir, "vmfs"),
    overlays: [...OVERLAID_DIRS],
    tmpfs: TMPFS_DIRS.map((t) => ({ ...t })),
    files: {
      events: posix.join(input.stateDir, "events.jsonl"),
      logCopy: posix.join(input.stateDir, "cloud-init-output.log"),
      statusCopy: posix.join(input.stateDir, "status.json"),
      imdsLog: posix.join(input.stateDir, "imds.log"),
      sshdLog: posix.join(input.stateDir, "sshd.log"),
    },
    imds: { address: IMDS_ADDRESS, port: 80, documents: { compute: input.imds.compute, network: input.imds.network } },
    sshCheck: { address: input.privateAddress, port: 22 },
    env: { ...VM_ENV },
    cloudInitVersion: EMULATED_CLOUD_INIT_VERSION,
    datasource: AZURE_DATASOURCE,
    platform: platformSteps(input, cfg),
    sequence: [
      { stage: "init-local", modules: [] },
      { stage: "init", modules: modulesInit.filter((m) => m.steps.length > 0) },
      // ssh.service comes after cloud-init.service (the init stage), as on Ubuntu.
      { service: "ssh" },
      {
        stage: "modules-config",
        modules: runcmd !== undefined ? [{ name: "runcmd", steps: [write(`${SCRIPTS_DIR}/runcmd`, shellify(runcmd), 0o700)] }] : [],
      },
      {
        stage: "modules-final",
        modules: [
          ...(packages.length > 0 ? [{ name: "package_update_upgrade_install", steps: [{ op: "packages" as const, image: describeImage(imageList), listFile: IMAGE_PACKAGES_PATH, dpkgStatus: DPKG_STATUS, packages }] }] : []),
          writeFilesModule("write_files_deferred", cfg, true),
          { name: "scripts_user", steps: [{ op: "runparts", dir: SCRIPTS_DIR }] },
          { name: "final_message", steps: [{ op: "finalMessage", template: cfg.finalMessage ?? "" }] },
        ].filter((m) => m.steps.length > 0) as Module[],
      },
    ],
  };
}
