import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { z } from "zod";

/**
 * A small initramfs of the harness's own making: the host's dash as /bin/sh, the host's own
 * binaries (ip, tc, ping …) with the libraries ldd names, busybox (Debian's busybox-static) only
 * for what the host binaries lack (mount, insmod, poweroff), the kernel modules to load, and the
 * caller's script, which /init sources between markers on the serial console.
 *
 * Why dash and not busybox's sh: Debian's busybox runs its own applets in preference to PATH
 * ("ip" would be busybox's ip, which knows no netns), and the script must run latlab's argv
 * verbatim, "tc" and "ip" included.
 */

export const BUSYBOX = "/bin/busybox";
/** The busybox applets /init needs; linked in /bin only, below the host's binaries on PATH. */
export const BUSYBOX_APPLETS = ["mount", "insmod", "poweroff", "cat", "sleep", "mkdir", "ln"] as const;

/** Marker lines /init prints around the script (guestOutput.ts reads them). */
export const MARK = "@@latlab";

export const InitramfsSpecSchema = z.object({
  /** Host executables to copy at their own paths (absolute, or names looked up on PATH). */
  hostBinaries: z.array(z.string()).default([]),
  /** Host files or folders to copy at their own paths (tc's netem distribution tables, say). */
  hostFiles: z.array(z.string()).default([]),
  /** Module files in load order (kernelModules.ts moduleLoadOrder). */
  modules: z.array(z.string()).default([]),
  /** Shell (dash) sourced by /init once the modules are loaded; `section` is defined for it. */
  script: z.string(),
  /** Where the gzip'd cpio goes. */
  outPath: z.string(),
});
export type InitramfsSpec = z.input<typeof InitramfsSpecSchema>;

/** The shared objects an ELF needs, from `ldd` output: "lib => /path (0x…)" and the interpreter line. */
export function librariesFromLdd(output: string): string[] {
  const libs = new Set<string>();
  for (const line of output.split("\n")) {
    const m = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(0x/.exec(line);
    if (m) libs.add(m[1]!);
  }
  return [...libs];
}

function which(name: string): string {
  if (name.startsWith("/")) return name;
  for (const dir of (process.env.PATH ?? "").split(":")) {
    const p = join(dir, name);
    if (dir !== "" && existsSync(p) && statSync(p).isFile()) return p;
  }
  throw new Error(`${name} is not on PATH`);
}

/** /init: mount the pseudo filesystems, insmod the modules, source the script between markers, power off. */
export function initScript(moduleNames: readonly string[]): string {
  return [
    "#!/bin/sh",
    "export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs devtmpfs /dev",
    // /run for iproute2's netns mounts; /tmp stays the initramfs's own (files the caller put there).
    "mount -t tmpfs tmpfs /run",
    ...moduleNames.map((m) => `insmod /lib/modules/latlab/${m} || echo "${MARK} insmod-failed ${m}"`),
    // section NAME argv…: runs argv, its output and exit code between markers of their own.
    `section() { _n="$1"; shift; echo "${MARK} begin $_n"; "$@" 2>&1; _rc=$?; echo "${MARK} end $_n $_rc"; return 0; }`,
    `echo "${MARK} script-begin"`,
    ". /script.sh",
    `echo "${MARK} script-end $?"`,
    "poweroff -f",
    "",
  ].join("\n");
}

function copyAtOwnPath(root: string, path: string): void {
  const to = join(root, path);
  mkdirSync(dirname(to), { recursive: true });
  if (statSync(path).isDirectory()) {
    for (const f of readdirSync(path)) copyAtOwnPath(root, join(path, f));
  } else {
    copyFileSync(realpathSync(path), to);
  }
}

/** Builds the initramfs at spec.outPath and returns that path. */
export function buildInitramfs(input: InitramfsSpec): string {
  const spec = InitramfsSpecSchema.parse(input);
  const root = mkdtempSync(join(tmpdir(), "latlab-initramfs-"));
  try {
    for (const d of ["bin", "sbin", "proc", "sys", "dev", "run", "tmp", "var", "lib/modules/latlab"]) mkdirSync(join(root, d), { recursive: true });
    // iproute2 keeps named namespaces in /var/run/netns (a link to /run on Debian).
    symlinkSync("/run", join(root, "var", "run"));
    copyFileSync(BUSYBOX, join(root, "bin", "busybox"));
    for (const a of BUSYBOX_APPLETS) symlinkSync("busybox", join(root, "bin", a));
    const shell = realpathSync(which("dash"));
    const binaries = [...spec.hostBinaries.map(which), shell];
    for (const bin of binaries) {
      copyAtOwnPath(root, bin);
      const ldd = execFileSync("ldd", [bin], { encoding: "utf8" });
      for (const lib of librariesFromLdd(ldd)) copyAtOwnPath(root, lib);
    }
    copyFileSync(shell, join(root, "bin", "sh"));
    for (const f of spec.hostFiles) copyAtOwnPath(root, f);
    for (const m of spec.modules) copyFileSync(m, join(root, "lib", "modules", "latlab", basename(m)));
    writeFileSync(join(root, "init"), initScript(spec.modules.map((m) => basename(m))));
    chmodSync(join(root, "init"), 0o755);
    writeFileSync(join(root, "script.sh"), spec.script);
    mkdirSync(dirname(spec.outPath), { recursive: true });
    execFileSync("sh", ["-c", 'cd "$1" && find . | cpio -o -H newc --quiet | gzip -1 > "$2"', "sh", root, spec.outPath]);
    return spec.outPath;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
