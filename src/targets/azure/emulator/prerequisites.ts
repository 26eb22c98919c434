import { PACKAGES } from "../program/cloudInit.ts";

/**
 * What this machine needs to play Azure: nftables (NSGs and public-address NAT), sudo (the
 * admin user's passwordless sudo, as on Azure's Ubuntu images), curl (latlab's probe asks IMDS
 * with it), python3 (IMDS and cloud-init are emulated in Python), useradd (cloud-init's default
 * user), and the packages latlab's cloud-config installs on the VMs, which the emulated VMs take
 * from this machine.
 */
export const EMULATOR_BINARIES: readonly string[] = ["nft", "sudo", "curl", "python3", "useradd", "sshd", "ssh-keygen", "unshare", ...PACKAGES.filter((p) => p !== "python3")];
