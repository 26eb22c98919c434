import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join, posix } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { execCommand, spawnDetached } from "../../../local/exec.ts";
import type { DetachedProcess, ExecFn } from "../../../local/exec.ts";
import { killNamespaceProcesses, namespacePids } from "../../../local/network/namespaceProcesses.ts";
import { compileBoot, IMDS_ADDRESS, VM_ENV } from "./bootScript.ts";
import { parseCustomData } from "./cloudConfig.ts";

/**
 * Boots and stops one emulated Azure VM in a network namespace that already exists (I/O edge;
 * what the boot does is bootScript.ts's, how it is done inside the VM is vm_init.py's).
 *
 * The VM is one long-lived process tree: `ip netns exec <ns> unshare --mount --uts --pid --fork
 * … -- /usr/bin/python3 vm_init.py`, whose descendants (sshd, runcmd's daemons, SSH sessions) all
 * live in the network namespace and in the VM's own mount, UTS and PID namespaces. Its mounts
 * exist only in its mount namespace, so killing every process of the network namespace stops the
 * VM and takes its files with it; the machine's /etc, /home, /var, /root and /usr/local/bin are
 * never written.
 */

const HERE = dirname(fileURLToPath(import.meta.url));
export const VM_INIT_PATH = join(HERE, "vm_init.py");
/** The machine's own interpreter: a pyenv (or venv) shim is not on a VM's PATH and may not be root's. */
export const PYTHON = "/usr/bin/python3";
/** What the machine must have: the VM runs the machine's programs. */
export const REQUIRED_PROGRAMS = [
  { path: PYTHON, pkg: "python3" },
  { path: "/usr/sbin/sshd", pkg: "openssh-server" },
  { path: "/usr/bin/ssh-keygen", pkg: "openssh-client" },
  { path: "/usr/sbin/useradd", pkg: "passwd" },
  { path: "/usr/bin/sudo", pkg: "sudo" },
  { path: "/usr/bin/unshare", pkg: "util-linux" },
  { path: "/usr/bin/dpkg-query", pkg: "dpkg" },
] as const;

const MARKER_FILE = "latlab-vm.json";
const DEFAULT_BOOT_TIMEOUT_MS = 60_000;
const POLL_MS = 50;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const OPENSSH_PUBLIC_KEY = /^(ssh-rsa|ssh-ed25519|ecdsa-sha2-nistp(256|384|521)|sk-ssh-ed25519@openssh\.com|sk-ecdsa-sha2-nistp256@openssh\.com) [A-Za-z0-9+/]+={0,3}( [^\r\n]*)?$/;

export const VmBootSpecSchema = z.object({
  /** An existing network namespace with eth0 (the VM's private address) and a default route. */
  namespace: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, "a network namespace name: letters, digits, '_', '.', '-'"),
  /**
   * This VM's folder (logs, status, its overlays' mount point): created by bootVm, which refuses
   * one that holds anything; removed by stopVm. No ',' ':' or blanks (it goes into mount options).
   */
  stateDir: z
    .string()
    .refine((p) => posix.isAbsolute(p) && posix.normalize(p) === p && p !== "/", "an absolute, normalised path other than /")
    .refine((p) => !/[,:\s\\]/.test(p), "no ',', ':', '\\' or blanks (the path goes into overlayfs mount options)"),
  /** osProfile.computerName (Linux: letters, digits, '-' and '.', at most 64). */
  computerName: z.string().regex(/^[A-Za-z0-9]([A-Za-z0-9.-]{0,62}[A-Za-z0-9])?$/, "a Linux computer name: letters, digits, '-', '.', at most 64"),
  /** osProfile.adminUsername: the default user cloud-init creates. */
  adminUsername: z.string().regex(/^[a-z_][a-z0-9_-]{0,31}$/, "a Linux user name: lower case letters, digits, '_', '-', at most 32, not starting with a digit or '-'"),
  /** osProfile.linuxConfiguration.ssh.publicKeys. */
  sshPublicKeys: z.array(
    z.object({
      path: z.string(),
      keyData: z.string().transform((s) => s.trim()).pipe(z.string().regex(OPENSSH_PUBLIC_KEY, "an OpenSSH public key line")),
    }),
  ),
  /** osProfile.customData: base64 cloud-config. */
  customData: z.string().optional(),
  /** osProfile.linuxConfiguration.disablePasswordAuthentication (Azure's default for SSH keys: true). */
  disablePasswordAuthentication: z.boolean().default(true),
  /** The documents IMDS serves (compute.vmId, if a string, is cloud-init's instance id). */
  imds: z.object({ compute: z.record(z.string(), z.unknown()), network: z.record(z.string(), z.unknown()) }),
  faults: z
    .object({
      /** cloud-init never finishes (runcmd hangs on its first line): the ready marker never appears. */
      neverReady: z.boolean().optional(),
    })
    .optional(),
  /** Safety net for a boot that never gets sshd up (default 60 s); a healthy boot takes about a second. */
  bootTimeoutMs: z.number().int().positive().optional(),
});

export type VmBootSpec = z.input<typeof VmBootSpecSchema> & { exec?: ExecFn };

export interface BootedVm {
  namespace: string;
  stateDir: string;
  computerName: string;
  /** eth0's address: sshd listens there (and on every other address of the namespace). */
  privateAddress: string;
  /** `unshare`, in the root PID namespace: the VM's PID 1 (vm_init.py) is its child, every VM process descends from it. */
  initPid: number;
  /** Public host keys sshd serves ("type base64"), read inside the VM once sshd accepted a connection. */
  hostKeys: string[];
  /** Debugging copies, in stateDir. */
  files: { bootLog: string; sshdLog: string; imdsLog: string; initLog: string; status: string };
}

export class VmBootError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "VmBootError";
  }
}

/** eth0's first IPv4 address in `ip -j addr` output, or undefined. */
export function eth0Address(ipJson: string): string | undefined {
  let links: unknown;
  try {
    links = JSON.parse(ipJson);
  } catch {
    return undefined;
  }
  if (!Array.isArray(links)) return undefined;
  for (const link of links as { ifname?: string; addr_info?: { family?: string; local?: string }[] }[]) {
    if (link.ifname !== "eth0") continue;
    const a = (link.addr_info ?? []).find((i) => i.family === "inet" && typeof i.local === "string");
    if (a) return a.local;
  }
  return undefined;
}

/** ARM accepts no other destination for osProfile SSH keys (it says so in this error). */
export function authorizedKeysPathProblem(adminUsername: string, path: string): string | undefined {
  const expected = `/home/${adminUsername}/.ssh/authorized_keys`;
  if (path === expected) return undefined;
  return `Destination path for SSH public keys is currently limited to its default value ${expected} due to a known issue in Linux provisioning agent (got ${JSON.stringify(path)})`;
}

async function tail(path: string, lines = 20): Promise<string> {
  const text = await readFile(path, "utf8").catch(() => "");
  return text.trim().split("\n").slice(-lines).join("\n");
}

interface VmEvent {
  event: string;
  message?: string;
  hostKeys?: string[];
}

async function readEvents(path: string): Promise<VmEvent[]> {
  const text = await readFile(path, "utf8").catch(() => "");
  const out: VmEvent[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line) as VmEvent);
    } catch {
      /* a line being written: read again at the next poll */
    }
  }
  return out;
}

/**
 * Boots a VM in `spec.namespace` and resolves once sshd accepts connections on port 22 (checked
 * from inside the namespace, by the VM's init). cloud-init goes on in the background (packages,
 * runcmd, the ready marker), as on Azure. On any failure the VM is stopped and its stateDir
 * removed before the error is thrown (the error quotes the boot log).
 */
export async function bootVm(specInput: VmBootSpec): Promise<BootedVm> {
  const exec = specInput.exec ?? execCommand;
  const { exec: _exec, ...fields } = specInput;
  const parsed = VmBootSpecSchema.safeParse(fields);
  const who = typeof fields.computerName === "string" ? `VM ${fields.computerName}` : "VM";
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new VmBootError(`${who}: ${issue.path.join(".") || "spec"}: ${issue.message}`);
  }
  const spec = parsed.data;
  for (const k of spec.sshPublicKeys) {
    const problem = authorizedKeysPathProblem(spec.adminUsername, k.path);
    if (problem) throw new VmBootError(`${who}: ${problem}`);
  }
  // Bad cloud-config is refused before anything is created.
  const cfg = parseCustomData(spec.computerName, spec.customData);

  if (typeof process.getuid === "function" && process.getuid() !== 0) throw new VmBootError(`${who}: booting a VM needs root (namespaces, mounts)`);
  const addr = await exec(["ip", "-n", spec.namespace, "-j", "-4", "addr", "show", "dev", "eth0"]);
  const privateAddress = addr.code === 0 ? eth0Address(addr.stdout) : undefined;
  if (privateAddress === undefined) {
    throw new VmBootError(
      `${who}: network namespace ${spec.namespace} has no eth0 with an IPv4 address (it must exist, wired, before bootVm): ${addr.stderr.trim() || "no address"}`,
    );
  }
  const pids = await namespacePids(exec, spec.namespace);
  if (pids.length > 0) {
    throw new VmBootError(`${who}: network namespace ${spec.namespace} already runs processes (${pids.join(", ")}): is a VM already booted there? stopVm it first`);
  }
  if (existsSync(spec.stateDir) && (await readdir(spec.stateDir)).length > 0) {
    throw new VmBootError(`${who}: state folder ${spec.stateDir} already exists and is not empty`);
  }
  const missing = REQUIRED_PROGRAMS.filter((p) => !existsSync(p.path));
  if (missing.length > 0) {
    throw new VmBootError(`${who}: this machine lacks ${missing.map((m) => `${m.path} (apt-get install ${m.pkg})`).join(", ")}`);
  }

  await mkdir(spec.stateDir, { recursive: true, mode: 0o700 });
  let proc: DetachedProcess | undefined;
  try {
    await writeFile(
      join(spec.stateDir, MARKER_FILE),
      `${JSON.stringify({ namespace: spec.namespace, computerName: spec.computerName, bootedAt: new Date().toISOString() })}\n`,
      { mode: 0o600 },
    );
    await mkdir(join(spec.stateDir, "vmfs"), { mode: 0o700 });
    // IMDS lives on the namespace's lo: only this VM can reach it, and never the root namespace.
    for (const argv of [
      ["ip", "-n", spec.namespace, "link", "set", "lo", "up"],
      ["ip", "-n", spec.namespace, "addr", "replace", `${IMDS_ADDRESS}/32`, "dev", "lo"],
    ]) {
      const r = await exec(argv);
      if (r.code !== 0) throw new VmBootError(`${who}: \`${argv.join(" ")}\` failed: ${r.stderr.trim()}`);
    }
    const vmId = spec.imds.compute.vmId;
    const script = compileBoot(
      {
        vmName: spec.computerName,
        adminUsername: spec.adminUsername,
        sshPublicKeys: spec.sshPublicKeys.map((k) => k.keyData),
        disablePasswordAuthentication: spec.disablePasswordAuthentication,
        privateAddress,
        instanceId: typeof vmId === "string" && /^[A-Za-z0-9-]+$/.test(vmId) ? vmId : randomUUID(),
        stateDir: spec.stateDir,
        imds: spec.imds,
        neverReady: spec.faults?.neverReady ?? false,
        bootTime: new Date(),
      },
      cfg,
    );
    // Holds the VM's private host keys: mode 0600, and vm_init.py deletes it once read.
    const scriptPath = join(spec.stateDir, "boot.json");
    await writeFile(scriptPath, JSON.stringify(script), { mode: 0o600 });
    const initLog = join(spec.stateDir, "init.log");
    const argv = [
      "env",
      "-i",
      ...Object.entries(VM_ENV).map(([k, v]) => `${k}=${v}`),
      "ip",
      "netns",
      "exec",
      spec.namespace,
      "unshare",
      "--mount",
      "--uts",
      // Its own PIDs: `ps`, `pkill`, `kill -1` in a VM see the VM only, as on a real host.
      "--pid",
      "--fork",
      "--kill-child",
      "--mount-proc",
      "--propagation",
      "private",
      "--",
      PYTHON,
      "-B", // never write __pycache__ next to the sources
      "-E",
      "-s",
      VM_INIT_PATH,
      scriptPath,
    ];
    proc = spawnDetached(argv, initLog);
    const timeout = spec.bootTimeoutMs ?? DEFAULT_BOOT_TIMEOUT_MS;
    const deadline = Date.now() + timeout;
    for (;;) {
      const events = await readEvents(script.files.events);
      const fatal = events.find((e) => e.event === "fatal");
      if (fatal) throw new VmBootError(`${who}: boot failed: ${fatal.message ?? "(no message)"}`);
      const sshd = events.find((e) => e.event === "sshd");
      if (sshd) {
        return {
          namespace: spec.namespace,
          stateDir: spec.stateDir,
          computerName: spec.computerName,
          privateAddress,
          initPid: proc.pid,
          hostKeys: sshd.hostKeys ?? [],
          files: { bootLog: script.files.logCopy, sshdLog: script.files.sshdLog, imdsLog: script.files.imdsLog, initLog, status: script.files.statusCopy },
        };
      }
      if (proc.exit) throw new VmBootError(`${who}: the VM's init exited (code ${proc.exit.code ?? proc.exit.signal}) before sshd was up`);
      if (Date.now() > deadline) throw new VmBootError(`${who}: sshd did not accept connections within ${timeout} ms`);
      await sleep(POLL_MS);
    }
  } catch (error) {
    const logs = [
      ["init", join(spec.stateDir, "init.log")],
      ["cloud-init-output", join(spec.stateDir, "cloud-init-output.log")],
      ["sshd", join(spec.stateDir, "sshd.log")],
    ] as const;
    const quoted: string[] = [];
    for (const [name, path] of logs) {
      const t = await tail(path);
      if (t) quoted.push(`--- ${name} ---\n${t}`);
    }
    const stopped = await stopVm(spec.namespace, spec.stateDir, { exec });
    const base = error instanceof Error ? error.message : String(error);
    const extra = [...quoted, ...(stopped.errors.length ? [`--- teardown ---\n${stopped.errors.join("\n")}`] : [])];
    throw new VmBootError(extra.length ? `${base}\n${extra.join("\n")}` : base);
  }
}

export interface StopVmOptions {
  exec?: ExecFn;
  /** How long the VM's processes get after SIGTERM before SIGKILL (default 2 s). */
  graceMs?: number;
}

/**
 * Stops the VM in `namespace`: every process of the namespace (the VM's init, sshd, sessions,
 * runcmd's daemons) gets SIGTERM then SIGKILL, which unmounts the VM's files with its mount
 * namespace; IMDS's address leaves lo; `stateDir` is removed (only if bootVm made it). The
 * namespace itself stays (it is not the VM's). Never throws: what could not be undone is in
 * `errors`, what was is in `removed` (both worded for a teardown report).
 */
export async function stopVm(namespace: string, stateDir: string, options: StopVmOptions = {}): Promise<{ errors: string[]; removed: string[] }> {
  const exec = options.exec ?? execCommand;
  const errors: string[] = [];
  const removed: string[] = [];
  try {
    await killNamespaceProcesses(exec, namespace, options.graceMs ?? 2000, errors, removed);
  } catch (e) {
    errors.push(`stopping the processes of ${namespace}: ${(e as Error).message}`);
  }
  const lo = await exec(["ip", "-n", namespace, "-j", "-4", "addr", "show", "dev", "lo"]);
  if (lo.code === 0 && lo.stdout.includes(`"${IMDS_ADDRESS}"`)) {
    const r = await exec(["ip", "-n", namespace, "addr", "del", `${IMDS_ADDRESS}/32`, "dev", "lo"]);
    if (r.code === 0) removed.push(`IMDS address ${IMDS_ADDRESS} on lo of ${namespace}`);
    else errors.push(`removing ${IMDS_ADDRESS} from lo of ${namespace}: ${r.stderr.trim()}`);
  }
  if (existsSync(stateDir)) {
    const entries = await readdir(stateDir).catch(() => [] as string[]);
    if (entries.length > 0 && !entries.includes(MARKER_FILE)) {
      errors.push(`${stateDir} was not made by bootVm (no ${MARKER_FILE}): left in place`);
    } else {
      try {
        await rm(stateDir, { recursive: true, force: true });
        removed.push(`folder ${stateDir}`);
      } catch (e) {
        errors.push(`removing ${stateDir}: ${(e as Error).message}`);
      }
    }
  }
  return { errors, removed };
}
