import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execCommand, type ExecFn } from "../../../src/targets/local/exec.ts";
import { ensureDebianKernel, type DebianKernel } from "./debianKernel.ts";
import { parseGuestOutput, type GuestOutput } from "./guestOutput.ts";
import { buildInitramfs } from "./initramfs.ts";
import { indexModules, moduleLoadOrder } from "./kernelModules.ts";

/**
 * Boots Debian's kernel under qemu with an initramfs around `script` and returns what the guest
 * printed. TCG (software emulation): /dev/kvm exists on this project's machine but KVM guests
 * hang before the kernel starts. One vCPU, no NIC, serial console on qemu's stdout; the guest
 * powers off when the script ends, and a kernel panic reboots, which -no-reboot turns into an
 * exit. Needs Debian's qemu-system-x86, busybox-static and cpio.
 */

export interface BootOptions {
  script: string;
  /** Module names to insmod (dependencies are found and loaded first). */
  modules?: readonly string[];
  hostBinaries?: readonly string[];
  hostFiles?: readonly string[];
  /** Kill qemu after this long (a hung guest): not a performance budget. */
  timeoutMs?: number;
  memoryMb?: number;
  /** More kernel parameters (after console=ttyS0 quiet loglevel=3 panic=-1). */
  kernelArgs?: readonly string[];
  /**
   * Run qemu at this niceness (nice -n; below 0 needs root, else nice warns and runs it as is):
   * the guest's clock is the host's, so every moment the host gives the emulator's thread to other
   * work is time the guest's timers fire late in.
   */
  niceness?: number;
  exec?: ExecFn;
  kernel?: DebianKernel;
}

export interface BootResult extends GuestOutput {
  kernel: DebianKernel;
  /** qemu's exit code (0 after the guest's poweroff). */
  qemuExit: number;
  qemuStderr: string;
}

export const QEMU = "qemu-system-x86_64";

export function qemuArgv(kernel: DebianKernel, initrd: string, memoryMb: number, kernelArgs: readonly string[] = []): string[] {
  return [
    QEMU, "-accel", "tcg", "-smp", "1", "-m", String(memoryMb), "-no-reboot",
    "-display", "none", "-monitor", "none", "-serial", "stdio", "-nic", "none",
    "-kernel", kernel.vmlinuz, "-initrd", initrd,
    // quiet + loglevel=3: the kernel's messages stay off the console, but for errors.
    "-append", ["console=ttyS0", "quiet", "loglevel=3", "panic=-1", ...kernelArgs].join(" "),
  ];
}

export async function bootGuest(options: BootOptions): Promise<BootResult> {
  const exec = options.exec ?? execCommand;
  const kernel = options.kernel ?? (await ensureDebianKernel(exec));
  const dir = mkdtempSync(join(tmpdir(), "latlab-qemu-"));
  try {
    const modules = moduleLoadOrder(options.modules ?? [], indexModules(kernel.modulesDir));
    const initrd = buildInitramfs({
      script: options.script,
      modules,
      hostBinaries: [...(options.hostBinaries ?? [])],
      hostFiles: [...(options.hostFiles ?? [])],
      outPath: join(dir, "initrd.gz"),
    });
    const argv = qemuArgv(kernel, initrd, options.memoryMb ?? 256, options.kernelArgs);
    const r = await exec(options.niceness !== undefined ? ["nice", "-n", String(options.niceness), ...argv] : argv, { timeoutMs: options.timeoutMs ?? 300_000 });
    return { ...parseGuestOutput(r.stdout), kernel, qemuExit: r.code, qemuStderr: r.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
