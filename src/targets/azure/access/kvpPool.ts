/**
 * Hyper-V's key-value pair (KVP) pool files, as a Linux guest keeps them, and the physical host
 * name Azure writes into one of them.
 *
 * The layout, from the Linux kernel: tools/hv/hv_kvp_daemon.c (torvalds/linux) keeps each pool in
 * KVP_CONFIG_LOC "/var/lib/hyperv" as ".kvp_pool_<n>", written with fwrite() as an array of
 *
 *   struct kvp_record { char key[HV_KVP_EXCHANGE_MAX_KEY_SIZE]; char value[HV_KVP_EXCHANGE_MAX_VALUE_SIZE]; };
 *
 * with HV_KVP_EXCHANGE_MAX_KEY_SIZE 512 and HV_KVP_EXCHANGE_MAX_VALUE_SIZE 2048 bytes
 * (include/uapi/linux/hyperv.h): 2560-byte records, no header, each field a C string padded
 * with NULs (drivers/hv/hv_kvp.c, kvp_send_key(), hands the daemon UTF-8 converted from the host's
 * UTF-16 with utf16s_to_utf8s()).
 * The pools are numbered by enum hv_kvp_exchg_pool (same header): 0 EXTERNAL, 1 GUEST, 2 AUTO,
 * 3 AUTO_EXTERNAL, 4 AUTO_INTERNAL. Pool 3 is the one the host fills for the guest: Azure's
 * azure-init (Azure/azure-init, doc/kvp.md: "the primary read target is pool 3
 * (KVP_POOL_AUTO_EXTERNAL, host → guest)"), Azure's AKS node labeler
 * (Azure/ai-infrastructure-on-azure, utilities/aks/node_labeler: labels each node with the keys
 * of /var/lib/hyperv/.kvp_pool_3, among them PhysicalHostName, PhysicalHostNameFullyQualified,
 * VirtualMachineName, VirtualMachineId) and Azure/hyperkv all read it there. Older daemons
 * used /var/opt/hyperv instead (the path Ubuntu's hv_kvp_daemon(8) man page still names), so the
 * probe looks there second.
 *
 * The file exists only while something writes it: hv_kvp_daemon (Ubuntu: package
 * linux-cloud-tools-common with the kernel's linux-cloud-tools-<version>; Debian: hyperv-daemons).
 * Everything here is pure: it parses bytes the probe sent (probe.ts), it never reads a file.
 */

/** HV_KVP_EXCHANGE_MAX_KEY_SIZE (include/uapi/linux/hyperv.h). */
export const KVP_KEY_SIZE = 512;
/** HV_KVP_EXCHANGE_MAX_VALUE_SIZE (include/uapi/linux/hyperv.h). */
export const KVP_VALUE_SIZE = 2048;
/** sizeof(struct kvp_record) in hv_kvp_daemon.c. */
export const KVP_RECORD_SIZE = KVP_KEY_SIZE + KVP_VALUE_SIZE;

/** Where hv_kvp_daemon keeps the host-to-guest pool (KVP_POOL_AUTO_EXTERNAL = 3), then where pre-3.8 daemons kept it. */
export const KVP_POOL_3_PATHS = ["/var/lib/hyperv/.kvp_pool_3", "/var/opt/hyperv/.kvp_pool_3"] as const;

/** The key of the Hyper-V host's name in pool 3 (also PhysicalHostNameFullyQualified, not used: one name, always the same key). */
export const PHYSICAL_HOST_KEY = "PhysicalHostName";

export interface KvpRecord {
  key: string;
  value: string;
}

export interface KvpPool {
  /** Whole records, in file order; records with an empty key (never written by the daemon) are left out. */
  records: KvpRecord[];
  /** Bytes after the last whole record: a file read while the daemon rewrote it, or not a pool file. */
  trailingBytes: number;
}

const utf8 = new TextDecoder("utf-8", { fatal: false });

/** A NUL-padded C string field: the bytes before the first NUL (all of them if there is none), as UTF-8. */
function cString(bytes: Uint8Array): string {
  const end = bytes.indexOf(0);
  return utf8.decode(end === -1 ? bytes : bytes.subarray(0, end));
}

/** Splits a pool file's bytes into records (key 512 bytes, value 2048 bytes, both NUL-padded). Never throws. */
export function parseKvpPool(data: Uint8Array): KvpPool {
  const records: KvpRecord[] = [];
  const whole = Math.floor(data.length / KVP_RECORD_SIZE);
  for (let i = 0; i < whole; i++) {
    const at = i * KVP_RECORD_SIZE;
    const key = cString(data.subarray(at, at + KVP_KEY_SIZE));
    if (key === "") continue;
    records.push({ key, value: cString(data.subarray(at + KVP_KEY_SIZE, at + KVP_RECORD_SIZE)) });
  }
  return { records, trailingBytes: data.length - whole * KVP_RECORD_SIZE };
}

/** A host name as Hyper-V gives it: printable ASCII, no blanks (anything else is not taken as one). */
const HOST_NAME = /^[A-Za-z0-9._-]{1,255}$/;

export type PhysicalHost = { physicalHost: string; physicalHostSource: "kvp"; physicalHostNote: null } | { physicalHost: null; physicalHostSource: "unavailable"; physicalHostNote: string };

const unavailable = (note: string): PhysicalHost => ({ physicalHost: null, physicalHostSource: "unavailable", physicalHostNote: note });

/**
 * The physical host's name from pool 3's bytes, or why there is none: only what the pool says
 * (key PhysicalHostName in a whole record), never a guess. Two records of that key that disagree
 * count as none.
 */
export function physicalHostFromPool(data: Uint8Array, where: string = KVP_POOL_3_PATHS[0]): PhysicalHost {
  const pool = parseKvpPool(data);
  if (data.length === 0) return unavailable(`${where} is empty`);
  const values = [...new Set(pool.records.filter((r) => r.key === PHYSICAL_HOST_KEY).map((r) => r.value.trim()))];
  const partial = pool.trailingBytes ? ` (${pool.trailingBytes} bytes after the last whole ${KVP_RECORD_SIZE}-byte record)` : "";
  if (values.length === 0) return unavailable(`${where} has no ${PHYSICAL_HOST_KEY} record${partial}`);
  if (values.length > 1) return unavailable(`${where} has ${values.length} different ${PHYSICAL_HOST_KEY} records`);
  const name = values[0]!;
  if (!HOST_NAME.test(name)) return unavailable(`${where}: ${PHYSICAL_HOST_KEY} is not a host name: ${JSON.stringify(name.slice(0, 80))}`);
  return { physicalHost: name, physicalHostSource: "kvp", physicalHostNote: null };
}
