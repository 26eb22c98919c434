import { sshKeyType } from "../access/hostKeys.ts";

/**
 * The cloud-config each VM boots with (pure: text in, text out). It installs the measurement
 * tools and writes the host key latlab generated for this host, so that the runner can pin the
 * key from its very first connection; it generates no other host key. The result holds a
 * private key: the program passes it to Azure only as a Pulumi secret, and nothing prints it.
 */

/** Packages every host gets (Ubuntu 24.04 main/universe). */
export const PACKAGES = ["sockperf", "iperf3", "qperf", "nmap", "python3"] as const;

/** Written by the last cloud-init step: the runner can wait for it (or `cloud-init status --wait`). */
export const READY_MARKER = "/var/lib/latlab/cloud-init-done";
/** Written instead of the marker when a package is not installed: what is missing. */
export const FAILED_MARKER = "/var/lib/latlab/cloud-init-failed";

/**
 * The last runcmd step. cloud-init runs runcmd even after the package module failed (an apt
 * error is only a warning to it), so the marker is written only once dpkg says every package is
 * installed: a host missing a tool fails at readiness, not later with "command not found".
 */
export function readyStep(packages: readonly string[]): string {
  const dir = READY_MARKER.replace(/\/[^/]+$/, "");
  const names = packages.map((p) => `'${p.replace(/'/g, "")}'`).join(" ");
  return (
    `mkdir -p ${dir}; missing=''; ` +
    `for p in ${names}; do dpkg-query -W -f='\${Status}' "$p" 2>/dev/null | grep -qx 'install ok installed' || missing="$missing $p"; done; ` +
    `if [ -n "$missing" ]; then echo "packages not installed:$missing" > ${FAILED_MARKER}; exit 1; fi; ` +
    `rm -f ${FAILED_MARKER}; date -u +%Y-%m-%dT%H:%M:%SZ > ${READY_MARKER}`
  );
}

/** cloud-init `ssh_keys` prefixes and sshd HostKey paths, by OpenSSH key type. */
const HOST_KEY_KINDS: Readonly<Record<string, { cloudInit: string; path: string }>> = {
  "ssh-ed25519": { cloudInit: "ed25519", path: "/etc/ssh/ssh_host_ed25519_key" },
  "ssh-rsa": { cloudInit: "rsa", path: "/etc/ssh/ssh_host_rsa_key" },
  "ecdsa-sha2-nistp256": { cloudInit: "ecdsa", path: "/etc/ssh/ssh_host_ecdsa_key" },
  "ecdsa-sha2-nistp384": { cloudInit: "ecdsa", path: "/etc/ssh/ssh_host_ecdsa_key" },
  "ecdsa-sha2-nistp521": { cloudInit: "ecdsa", path: "/etc/ssh/ssh_host_ecdsa_key" },
};
export const HOST_KEY_TYPES = Object.keys(HOST_KEY_KINDS);

export interface CloudInitInput {
  /** hostName(deployment index, role), e.g. "d0-client". */
  hostName: string;
  /** This host's key pair, and only this host's. */
  hostKey: { privateKey: string; publicKey: string };
  packages?: readonly string[];
}

const PRIVATE_KEY_BLOCK = /^-----BEGIN (OPENSSH|RSA|EC) PRIVATE KEY-----\n[A-Za-z0-9+/=\n]+-----END \1 PRIVATE KEY-----\n?$/;

/** Why a host key pair cannot go into cloud-init, or undefined when it can. */
export function hostKeyProblem(key: { privateKey: string; publicKey: string }): string | undefined {
  const type = sshKeyType(key.publicKey);
  if (!type) return "the public key is not an OpenSSH public key line";
  if (!Object.hasOwn(HOST_KEY_KINDS, type)) return `host key type ${type} is not one cloud-init writes (${HOST_KEY_TYPES.join(", ")})`;
  if (!PRIVATE_KEY_BLOCK.test(key.privateKey.replace(/\r\n/g, "\n"))) return "the private key is not a PEM/OpenSSH private key block";
  return undefined;
}

const yamlString = (s: string) => JSON.stringify(s);
const block = (text: string, indent: string) =>
  text
    .replace(/\r\n/g, "\n")
    .replace(/\n$/, "")
    .split("\n")
    .map((l) => indent + l)
    .join("\n");

/** The cloud-config document (YAML). */
/** 64 MiB: room for iperf3 -w 32M (Linux doubles what is asked) and a margin. */
export const SOCKET_BUFFER_MAX = 64 * 1024 * 1024;

export function cloudConfig(input: CloudInitInput): string {
  const problem = hostKeyProblem(input.hostKey);
  if (problem) throw new Error(`host key for ${input.hostName}: ${problem}`);
  const kind = HOST_KEY_KINDS[sshKeyType(input.hostKey.publicKey)!]!;
  const publicLine = input.hostKey.publicKey.trim();
  const packages = input.packages ?? PACKAGES;
  return [
    "#cloud-config",
    `# latlab host ${input.hostName}: measurement tools and the host key latlab generated (pinned by the runner).`,
    `hostname: ${yamlString(input.hostName)}`,
    "disable_root: true",
    "ssh_pwauth: false",
    "# Only the generated host key: delete the image's keys and generate none.",
    "ssh_deletekeys: true",
    "ssh_genkeytypes: []",
    "ssh_keys:",
    `  ${kind.cloudInit}_private: |`,
    block(input.hostKey.privateKey, "    "),
    `  ${kind.cloudInit}_public: ${yamlString(publicLine)}`,
    "# Print no key fingerprints or keys to the serial console.",
    "no_ssh_fingerprints: true",
    "ssh:",
    "  emit_keys_to_console: false",
    "package_update: true",
    "packages:",
    ...packages.map((p) => `  - ${yamlString(p)}`),
    "write_files:",
    "  - path: /etc/ssh/sshd_config.d/60-latlab.conf",
    '    permissions: "0644"',
    "    content: |",
    `      HostKey ${kind.path}`,
    "      PermitRootLogin no",
    "      PasswordAuthentication no",
    "      KbdInteractiveAuthentication no",
    // Stock Ubuntu caps socket buffers at ~208 KiB and iperf3 refuses a larger -w (seed 002 ran
    // -w 32M): raise the cap to what the tools may ask for. Windows stay the kernel's default
    // unless a tool asks, so nothing else changes.
    "  - path: /etc/sysctl.d/90-latlab.conf",
    '    permissions: "0644"',
    "    content: |",
    `      net.core.rmem_max = ${SOCKET_BUFFER_MAX}`,
    `      net.core.wmem_max = ${SOCKET_BUFFER_MAX}`,
    "runcmd:",
    "  - [sysctl, --system]",
    `  - [sh, -c, ${yamlString(readyStep(packages))}]`,
    "",
  ].join("\n");
}

/** The cloud-config, base64-encoded as `osProfile.customData` wants it. */
export function customData(input: CloudInitInput): string {
  return Buffer.from(cloudConfig(input), "utf8").toString("base64");
}
