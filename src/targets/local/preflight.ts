import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { access } from "node:fs/promises";
import { delimiter, join } from "node:path";
import type { Plan } from "../../plan/types.ts";
import { execCommand, formatArgv } from "./exec.ts";
import { assertLocalPlan } from "./planCheck.ts";
import type { ExecFn } from "./exec.ts";
import { detectQdiscSupport } from "./network/shaping.ts";
import { DELAY_LINE_DEBIAN_PACKAGES } from "./delayLine/build.ts";
import { SSHD_PATH } from "./sshd.ts";

/** Binaries the local target itself runs. */
export const TARGET_BINARIES: readonly string[] = ["ip", "tc", "sshd", "ssh-keygen", "unshare", "taskset"];

/** Debian/Ubuntu package that ships each binary. */
export const DEBIAN_PACKAGES: Readonly<Record<string, string>> = {
  sockperf: "sockperf",
  iperf3: "iperf3",
  qperf: "qperf",
  sshd: "openssh-server",
  "ssh-keygen": "openssh-client",
  ssh: "openssh-client",
  ping: "iputils-ping",
  nmap: "nmap",
  ip: "iproute2",
  tc: "iproute2",
  unshare: "util-linux",
  taskset: "util-linux",
  tcptraceroute: "tcptraceroute",
  nft: "nftables",
  sudo: "sudo",
  curl: "curl",
  python3: "python3",
  useradd: "passwd",
  cc: "gcc",
  iptables: "iptables",
};

/** The header the delay line's helper is compiled against (Debian's libnetfilter-queue-dev). */
export const NFQUEUE_HEADER = "/usr/include/libnetfilter_queue/libnetfilter_queue.h";

/**
 * Of the delay line's Debian packages (DELAY_LINE_DEBIAN_PACKAGES: what latency shaping needs on
 * a kernel without netem), those whose binary or header is missing.
 */
export async function missingDelayLinePackages(find: (name: string) => Promise<string | null>, hasFile: (path: string) => Promise<boolean>): Promise<string[]> {
  const missing: string[] = [];
  if ((await find("cc")) === null) missing.push("gcc");
  if (!(await hasFile(NFQUEUE_HEADER))) missing.push("libnetfilter-queue-dev");
  if ((await find("iptables")) === null) missing.push("iptables");
  return DELAY_LINE_DEBIAN_PACKAGES.filter((p) => missing.includes(p));
}

const fileExists = (path: string) =>
  access(path, constants.R_OK).then(
    () => true,
    () => false,
  );

export interface PreflightOptions {
  /**
   * The plan to run on the local target: its sizes and regions are checked against Azure's
   * catalogue first (planCheck.ts), before anything is installed or built. The Azure
   * emulator's preflight passes none (Azure's own validation covers its plans).
   */
  plan?: Plan;
  /** Binaries the experiment's tools need on the hosts (the target adds its own). */
  binaries: readonly string[];
  /** May missing packages be installed with apt-get? */
  install: boolean;
  log: (message: string) => void;
  /** For tests: command runner, root check and binary lookup. */
  exec?: ExecFn;
  isRoot?: boolean;
  findBinary?: (name: string) => Promise<string | null>;
  hasFile?: (path: string) => Promise<boolean>;
}

export interface PreflightReport {
  /** delayLine: what it needs is installed (only looked at without netem: false when netem is there). */
  features: { netns: boolean; tbf: boolean; netem: boolean; delayLine: boolean };
  /** Debian packages this check installed. */
  installed: string[];
}

const SBIN_DIRS = ["/usr/local/sbin", "/usr/sbin", "/sbin"];

/** Where a binary is: on PATH or in the sbin folders (root's PATH may lack them); sshd must be at /usr/sbin/sshd. */
export async function findBinary(name: string): Promise<string | null> {
  const candidates =
    name === "sshd"
      ? [SSHD_PATH]
      : [...(process.env.PATH ?? "").split(delimiter).filter((d) => d !== ""), ...SBIN_DIRS].map((d) => join(d, name));
  for (const c of candidates) {
    try {
      await access(c, constants.X_OK);
      return c;
    } catch {
      /* next */
    }
  }
  return null;
}

/** Packages to install for missing binaries; binaries with no known package listed apart. */
export function packagesFor(missing: readonly string[]): { packages: string[]; unknown: string[] } {
  const packages: string[] = [];
  const unknown: string[] = [];
  for (const b of missing) {
    const p = DEBIAN_PACKAGES[b];
    if (p === undefined) unknown.push(b);
    else if (!packages.includes(p)) packages.push(p);
  }
  return { packages, unknown };
}

export function installCommand(packages: readonly string[]): string {
  return `sudo apt-get install -y ${packages.join(" ")}`;
}

export async function checkLocalPrerequisites(options: PreflightOptions): Promise<PreflightReport> {
  const exec = options.exec ?? execCommand;
  const find = options.findBinary ?? findBinary;
  const isRoot = options.isRoot ?? (typeof process.getuid === "function" ? process.getuid() === 0 : false);
  if (options.plan) assertLocalPlan(options.plan);
  const wanted = [...new Set([...options.binaries, ...TARGET_BINARIES])];
  const installed: string[] = [];

  const missingNow = async () => {
    const out: string[] = [];
    for (const b of wanted) if ((await find(b)) === null) out.push(b);
    return out;
  };

  const aptInstall = async (packages: readonly string[], what: string) => {
    const env = { DEBIAN_FRONTEND: "noninteractive" };
    const argv = ["apt-get", "install", "-y", "--no-install-recommends", ...packages];
    options.log(`preflight: missing ${what}; running ${formatArgv(argv)}`);
    // In latlab's own process group: a Ctrl-C during preflight (before any teardown exists)
    // must stop apt-get too, not leave it running behind an exited latlab.
    let r = await exec(argv, { env, timeoutMs: 15 * 60_000, foreground: true });
    if (r.code !== 0) {
      options.log("preflight: apt-get install failed; running apt-get update and trying again");
      await exec(["apt-get", "update"], { env, timeoutMs: 15 * 60_000, foreground: true });
      r = await exec(argv, { env, timeoutMs: 15 * 60_000, foreground: true });
    }
    if (r.code !== 0) {
      throw new Error(`apt-get could not install ${packages.join(" ")}: ${(r.stderr || r.stdout).trim().split("\n").slice(-5).join("\n")}\nRun it yourself: ${installCommand(packages)}`);
    }
    installed.push(...packages);
    options.log(`preflight: installed ${packages.join(", ")}`);
  };

  let missing = await missingNow();
  if (missing.length > 0) {
    const { packages, unknown } = packagesFor(missing);
    const aptGet = await find("apt-get");
    if (unknown.length > 0) {
      throw new Error(
        `missing binaries with no known Debian package: ${unknown.join(", ")}; install them yourself` +
          (packages.length > 0 ? `, and run: ${installCommand(packages)}` : ""),
      );
    }
    if (isRoot && aptGet !== null && options.install) {
      await aptInstall(packages, missing.join(", "));
      missing = await missingNow();
      if (missing.length > 0) throw new Error(`still missing after installing ${packages.join(" ")}: ${missing.join(", ")}`);
    } else {
      const why = !isRoot
        ? " (and the local target builds network namespaces, which needs root)"
        : aptGet === null
          ? " (apt-get not found on this machine: use your package manager)"
          : " (automatic install not allowed)";
      throw new Error(`missing binaries: ${missing.join(", ")}${why}. Install them with: ${installCommand(packages)}`);
    }
  }

  if (!isRoot) {
    throw new Error("the local target builds network namespaces, which needs root: run latlab as root (e.g. with sudo)");
  }

  // Kernel features, in a scratch namespace.
  const scratch = `ll-preflight-${process.pid}-${randomBytes(3).toString("hex")}`;
  const add = await exec(["ip", "netns", "add", scratch]);
  if (add.code !== 0) {
    throw new Error(`the kernel refused to create a network namespace (\`ip netns add ${scratch}\`): ${add.stderr.trim()}`);
  }
  try {
    const q = await detectQdiscSupport(exec, scratch);
    if (!q.tbf) options.log(`preflight: kernel has no tbf (${q.tbfError ?? "refused"}): bandwidth caps will be unavailable`);
    let delayLine = false;
    if (!q.netem) {
      // Without netem, latency is applied by the delay line: a helper compiled here, and iptables' NFQUEUE.
      const hasFile = options.hasFile ?? fileExists;
      let lacking = await missingDelayLinePackages(find, hasFile);
      if (lacking.length > 0 && (await find("apt-get")) !== null && options.install) {
        await aptInstall(lacking, `the delay line's ${lacking.join(", ")} (the kernel has no netem)`);
        lacking = await missingDelayLinePackages(find, hasFile);
      }
      delayLine = lacking.length === 0;
      options.log(
        delayLine
          ? `preflight: kernel has no netem (${q.netemError ?? "refused"}): latency will be applied by latlab's delay line (NFQUEUE)`
          : `preflight: kernel has no netem (${q.netemError ?? "refused"}) and the delay line that replaces it needs Debian's ${lacking.join(", ")}: latency shaping will be unavailable. Install them with: ${installCommand(lacking)}`,
      );
    }
    return { features: { netns: true, tbf: q.tbf, netem: q.netem, delayLine }, installed };
  } finally {
    await exec(["ip", "netns", "del", scratch]);
  }
}
