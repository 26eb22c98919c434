import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { mustExec, type ExecFn } from "../../../src/targets/local/exec.ts";

/**
 * Debian's kernel for a throw-away VM: the image package that Debian's `linux-image-amd64`
 * currently points at, fetched with `apt-get download` (Debian's registry, its own client) and
 * unpacked with `dpkg-deb -x` into ~/.cache/latlab/debian-kernel/<package>_<version>/ — never
 * installed on the host. A later call with the same version finds it there; a new Debian kernel
 * gets a folder of its own.
 */

export const DebianKernelSchema = z.object({
  /** The image package, e.g. linux-image-6.1.0-56-amd64. */
  package: z.string().regex(/^linux-image-[\w.+-]+$/),
  /** Its Debian version, e.g. 6.1.192-2. */
  version: z.string().min(1),
  /** The kernel release (`uname -r` in the guest; the modules' folder name). */
  release: z.string().min(1),
  vmlinuz: z.string(),
  /** lib/modules/<release> of the unpacked package. */
  modulesDir: z.string(),
});
export type DebianKernel = z.infer<typeof DebianKernelSchema>;

export const DEFAULT_KERNEL_CACHE = join(homedir(), ".cache", "latlab", "debian-kernel");
/** The metapackage whose dependency names the current kernel image. */
export const KERNEL_METAPACKAGE = "linux-image-amd64";

/** The image package a metapackage depends on, from `apt-cache depends` output. */
export function imagePackageFromDepends(output: string): string {
  const m = /^\s*Depends:\s*(linux-image-[\w.+-]+)\s*$/m.exec(output);
  if (!m) throw new Error(`no linux-image dependency in apt-cache's answer:\n${output}`);
  return m[1]!;
}

/** The candidate version from `apt-cache policy <package>` output. */
export function candidateVersionFromPolicy(output: string): string {
  const m = /^\s*Candidate:\s*(\S+)\s*$/m.exec(output);
  if (!m || m[1] === "(none)") throw new Error(`no candidate version in apt-cache's answer:\n${output}`);
  return m[1]!;
}

/** A package version as a folder name (an epoch's ':' is not welcome in paths). */
export const cacheKey = (pkg: string, version: string): string => `${pkg}_${version.replace(/:/g, "%3a")}`;

function readUnpacked(dir: string, pkg: string, version: string): DebianKernel {
  const vmlinuz = readdirSync(join(dir, "boot")).find((f) => f.startsWith("vmlinuz-"));
  if (!vmlinuz) throw new Error(`no vmlinuz in ${dir}/boot`);
  const release = vmlinuz.slice("vmlinuz-".length);
  return DebianKernelSchema.parse({ package: pkg, version, release, vmlinuz: join(dir, "boot", vmlinuz), modulesDir: join(dir, "lib", "modules", release) });
}

/** The current Debian kernel, unpacked in the cache (downloaded and unpacked the first time). */
export async function ensureDebianKernel(exec: ExecFn, cacheRoot = DEFAULT_KERNEL_CACHE): Promise<DebianKernel> {
  const pkg = imagePackageFromDepends((await mustExec(exec, ["apt-cache", "depends", KERNEL_METAPACKAGE], "apt-cache depends")).stdout);
  const version = candidateVersionFromPolicy((await mustExec(exec, ["apt-cache", "policy", pkg], "apt-cache policy")).stdout);
  const dir = join(cacheRoot, cacheKey(pkg, version));
  // "complete" is written last: a folder without it is an unpacking that was cut short.
  if (existsSync(join(dir, "complete"))) return readUnpacked(dir, pkg, version);
  mkdirSync(cacheRoot, { recursive: true });
  const work = mkdtempSync(join(cacheRoot, ".unpacking-"));
  try {
    // apt-get download writes into its working directory: run it there through sh's cd.
    await mustExec(exec, ["sh", "-c", 'cd "$1" && apt-get download -q "$2"', "sh", work, `${pkg}=${version}`], `apt-get download ${pkg}`, { timeoutMs: 600_000 });
    const deb = readdirSync(work).find((f) => f.endsWith(".deb"));
    if (!deb) throw new Error(`apt-get download left no .deb in ${work}`);
    const root = join(work, "root");
    await mustExec(exec, ["dpkg-deb", "-x", join(work, deb), root], "dpkg-deb -x", { timeoutMs: 300_000 });
    writeFileSync(join(root, "complete"), `${pkg} ${version}\n`);
    rmSync(dir, { recursive: true, force: true });
    renameSync(root, dir);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return readUnpacked(dir, pkg, version);
}
