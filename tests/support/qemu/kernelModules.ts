import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Kernel modules by name, in the order insmod must load them. `dpkg-deb -x` leaves no
 * modules.dep (depmod runs at install time, and nothing is installed), so each module's own
 * `depends=` field (its .modinfo section) is read instead; busybox's insmod then loads them one
 * by one, dependencies first. Debian 12 ships plain .ko files; a compressed .ko.xz/.ko.zst
 * (Debian 13) would need unpacking first, and is refused here rather than passed to insmod.
 */

/** A module's `depends=` list, read from the NUL-separated strings of its .modinfo section. */
export function moduleDepends(ko: Buffer): string[] {
  const key = Buffer.from("\0depends=");
  const at = ko.indexOf(key);
  if (at < 0) return [];
  const start = at + key.length;
  const end = ko.indexOf(0, start);
  const value = ko.subarray(start, end < 0 ? undefined : end).toString("latin1");
  return value === "" ? [] : value.split(",");
}

/** Every .ko under `modulesDir`, by module name (file name without .ko; '-' and '_' are one to the kernel). */
export function indexModules(modulesDir: string): Map<string, string> {
  const index = new Map<string, string>();
  for (const entry of readdirSync(modulesDir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".ko")) continue;
    index.set(entry.name.slice(0, -3).replace(/-/g, "_"), join(entry.parentPath, entry.name));
  }
  return index;
}

/**
 * The files to insmod for `names`, dependencies before what needs them, each once. `readKo`
 * is there for the unit tests.
 */
export function moduleLoadOrder(names: readonly string[], index: ReadonlyMap<string, string>, readKo: (path: string) => Buffer = readFileSync): string[] {
  const order: string[] = [];
  const visiting = new Set<string>();
  const done = new Set<string>();
  const visit = (raw: string) => {
    const name = raw.replace(/-/g, "_");
    if (done.has(name)) return;
    if (visiting.has(name)) throw new Error(`module dependency cycle at ${name}`);
    const path = index.get(name);
    if (!path) throw new Error(`no module ${name} in the kernel's modules (built in, or a compressed .ko this harness does not unpack?)`);
    visiting.add(name);
    for (const dep of moduleDepends(readKo(path))) visit(dep);
    visiting.delete(name);
    done.add(name);
    order.push(path);
  };
  names.forEach(visit);
  return order;
}
