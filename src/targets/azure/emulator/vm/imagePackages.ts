import { readFileSync } from "node:fs";
import { z } from "zod";

/**
 * The packages of the image latlab's program deploys (Canonical ubuntu-24_04-lts, Ubuntu 24.04
 * noble), for the names latlab's cloud-init asks for: `ubuntu-24.04-packages.json`, with each
 * version's page on packages.ubuntu.com. An emulated VM's cloud-init checks its `packages:`
 * against this list, not against the machine the emulator runs on (a Debian machine has packages
 * Ubuntu lacks, and the other way round). What the VM then runs is still this machine's binary.
 */

export const ImagePackageSchema = z
  .object({
    /** What apt installs: the newest of noble, noble-updates and noble-security. */
    candidate: z.string().min(1),
    /** Every version of the archive's pockets (a cloud-config may pin one). */
    versions: z.array(z.string().min(1)).min(1),
    component: z.enum(["main", "restricted", "universe", "multiverse"]),
    section: z.string(),
    url: z.string().url(),
    /** What the page said, in short. */
    page: z.string(),
  })
  .strict();
export type ImagePackage = z.infer<typeof ImagePackageSchema>;

export const ImagePackagesSchema = z
  .object({
    image: z.object({ publisher: z.string(), offer: z.string(), skus: z.array(z.string()).min(1), release: z.string(), architecture: z.string() }).strict(),
    source: z.object({ site: z.string(), read: z.string(), pockets: z.string() }).strict(),
    covers: z.string(),
    packages: z.record(z.string().regex(/^[a-z0-9][a-z0-9+.-]+$/), ImagePackageSchema),
    notVerified: z.string(),
  })
  .strict();
export type ImagePackages = z.infer<typeof ImagePackagesSchema>;

export const IMAGE_PACKAGES_FILE = new URL("./ubuntu-24.04-packages.json", import.meta.url);
/** The list's path in the repository, for messages. */
export const IMAGE_PACKAGES_PATH = "src/targets/azure/emulator/vm/ubuntu-24.04-packages.json";

let cached: ImagePackages | undefined;

/** The shipped list, read and checked once. */
export function imagePackages(): ImagePackages {
  cached ??= ImagePackagesSchema.parse(JSON.parse(readFileSync(IMAGE_PACKAGES_FILE, "utf8")));
  return cached;
}

/** The image's record of a package (apt names are exact), or null when the image is not known to have it. */
export function imagePackage(name: string, list: ImagePackages = imagePackages()): ImagePackage | null {
  return Object.hasOwn(list.packages, name) ? list.packages[name]! : null;
}

/** "Ubuntu 24.04 LTS (noble) amd64, packages.ubuntu.com": for the VM's log. */
export const describeImage = (list: ImagePackages = imagePackages()) => `${list.image.release} ${list.image.architecture} (${list.image.publisher} ${list.image.offer}), per ${list.source.site}`;
