import type { HostEndpoint } from "../../target.ts";
import { FAILED_MARKER, READY_MARKER } from "../program/cloudInit.ts";
import { KVP_POOL_3_PATHS, KVP_RECORD_SIZE, physicalHostFromPool, type PhysicalHost } from "./kvpPool.ts";

/**
 * What an Azure VM really is, asked from inside the VM once the runner has connected:
 * - `ready`: cloud-init has finished and written the marker cloudInit.ts's last step writes;
 * - `probe`: the Instance Metadata Service (IMDS) compute document, whether the Accelerated
 *   Networking VF is present, and Hyper-V's host-to-guest KVP pool (kvpPool.ts), turned by
 *   parseAzureProbe() into the fields the runner compares with what the plan asked (same names:
 *   region, zone, size, accelnet) and the fields that say where in the zone the VM landed
 *   (faultDomain, updateDomain, physicalHost), recorded for comparisons of placements.
 *
 * Nothing here runs on the runner's machine: the commands are strings the runner executes over
 * SSH (through `sh -c`, so POSIX sh: Ubuntu's dash).
 *
 * What IMDS does NOT tell (compute category, api-version 2021-02-01 and later; Microsoft's
 * "Azure Instance Metadata Service" page and the IMDS swagger in Azure/azure-rest-api-specs,
 * specification/imds): the proximity placement group and the availability set. Its
 * `placementGroupId` is the placement group of a *virtual machine scale set*, not a PPG, so
 * `ppg` and `availabilitySet` are left out of `actual` (the runner then does not compare them).
 * It does tell the VM's `platformFaultDomain` and `platformUpdateDomain` ("Fault domain the VM is
 * running in", "Update domain the VM is running in", same page): recorded as faultDomain and
 * updateDomain. Nor does IMDS name the physical host: that comes from Hyper-V's KVP pool 3,
 * readable only where the guest runs hv_kvp_daemon (kvpPool.ts); elsewhere physicalHostSource
 * says "unavailable" and physicalHost is null.
 */

/** cloud-init installs packages first: waiting for it is most of a host's bring-up. */
export const READY_TIMEOUT_SECONDS = 15 * 60;

/**
 * Exits 0 once cloud-init is done and latlab's marker exists. `cloud-init status --wait` exits
 * non-zero for a degraded run (e.g. one package failed): the marker, written by the last
 * runcmd step, is what decides; without it, cloud-init's long status goes to stderr (the runner
 * quotes it in the error).
 */
export const AZURE_READY_COMMAND =
  `cloud-init status --wait >/dev/null 2>&1; test -f ${READY_MARKER} || ` +
  `{ echo "latlab: cloud-init finished without writing ${READY_MARKER}" >&2; cat ${FAILED_MARKER} >&2 2>/dev/null; cloud-init status --long >&2; ` +
  // apt's own words are in cloud-init's output log (root:adm 0640 on Ubuntu; sudo when the admin cannot read it).
  `l=/var/log/cloud-init-output.log; r() { cat "$l" 2>/dev/null || sudo -n cat "$l"; }; ` +
  `echo "--- apt's errors and the last lines of $l:" >&2; { r | grep -E '^E: ' | tail -n 10; r | tail -n 10; } >&2 2>/dev/null; exit 1; }`;

/** API version of the IMDS request (documented since 2021-02-01; still served). */
export const IMDS_API_VERSION = "2021-02-01";
/** The IMDS request, as Microsoft documents it: header Metadata:true, proxies bypassed. */
export const IMDS_COMPUTE_FETCH = `curl -s -m 10 -H Metadata:true --noproxy '*' 'http://169.254.169.254/metadata/instance/compute?api-version=${IMDS_API_VERSION}'`;

/**
 * At most this much of the KVP pool file is sent: 64 records (Azure's pool 3 holds about 16:
 * PhysicalHostName, VirtualMachineName, HostingSystem*…). A longer file is cut at a record boundary.
 */
export const KVP_MAX_BYTES = 64 * KVP_RECORD_SIZE;

/**
 * Sets kr=true when a KVP daemon runs in the VM: hv_kvp_daemon (Ubuntu's linux-cloud-tools,
 * Debian's hyperv-daemons) or hypervkvpd (RHEL's name). The pool file lives in /var/lib and
 * outlives its writer: without a running daemon its contents may be stale, or, in latlab's
 * emulator, where a VM sees the machine's /var through an overlay but has its own PID namespace,
 * the machine's, not the VM's. comm holds at most 15 characters: both names fit.
 */
export const KVP_DAEMON_CHECK = `kr=false; grep -qxE 'hv_kvp_daemon|hypervkvpd' /proc/[0-9]*/comm 2>/dev/null && kr=true`;

/**
 * Prints one JSON line: {"curlExit": n, "imds": "<base64 of the IMDS body>", "nics": [{name,
 * driver, master}…], "kvp": {"path", "state", "size", "data", "daemon"}}. The IMDS body travels
 * base64-encoded so that whatever IMDS answers (an error page, nothing) cannot break the outer
 * JSON; interface and driver names are reduced to [A-Za-z0-9_.:@-] for the same reason. The
 * driver comes from /sys/class/net/<if>/device/driver (what `ethtool -i` reports), the master
 * from /sys/class/net/<if>/master: on Azure the VF (mlx4_core / mlx5_core / mana) is enslaved to
 * the synthetic hv_netvsc interface, eth0.
 *
 * kvp: the first of KVP_POOL_3_PATHS that exists ("path", "" if none), "state" missing |
 * unreadable | read, its "size" in bytes (digits only) and "data", the first KVP_MAX_BYTES of it
 * base64-encoded (binary, NUL-padded records: parsed by kvpPool.ts, never by the shell), and
 * "daemon", whether KVP_DAEMON_CHECK found the daemon running. The daemon creates the file
 * 0644, so the unprivileged SSH user can read it.
 */
export const AZURE_PROBE_COMMAND = [
  `kp=''; ks=missing; kz=0; kd=''`,
  `for f in ${KVP_POOL_3_PATHS.join(" ")}; do`,
  `  [ -e "$f" ] || continue`,
  `  kp=$f; ks=unreadable`,
  `  if [ -r "$f" ]; then ks=read; kz=$(wc -c <"$f" 2>/dev/null | tr -cd 0-9); kd=$(head -c ${KVP_MAX_BYTES} "$f" | base64 -w0); fi`,
  `  break`,
  `done`,
  KVP_DAEMON_CHECK,
  `doc=$(${IMDS_COMPUTE_FETCH}); rc=$?`,
  `c() { printf '%s' "$1" | tr -cd 'A-Za-z0-9_.:@-'; }`,
  `printf '{"curlExit":%d,"imds":"%s","nics":[' "$rc" "$(printf '%s' "$doc" | base64 -w0)"`,
  `sep=''`,
  `for d in /sys/class/net/*; do`,
  `  [ -e "$d" ] || continue`,
  `  drv=$(readlink "$d/device/driver" 2>/dev/null); m=$(readlink "$d/master" 2>/dev/null)`,
  `  printf '%s{"name":"%s","driver":"%s","master":"%s"}' "$sep" "$(c "\${d##*/}")" "$(c "\${drv##*/}")" "$(c "\${m##*/}")"`,
  `  sep=','`,
  `done`,
  `printf '],"kvp":{"path":"%s","state":"%s","size":%d,"data":"%s","daemon":%s}}\\n' "$kp" "$ks" "\${kz:-0}" "$kd" "$kr"`,
].join("\n");

/** Drivers of an Accelerated Networking VF: Mellanox ConnectX (mlx4/mlx5) or Microsoft's MANA. */
export const VF_DRIVER = /^(mlx4|mlx5|mana)/;

export type ProbeFields = Record<string, string | number | boolean | null>;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const short = (text: string, n = 80) => JSON.stringify(text.length > n ? `${text.slice(0, n)}…` : text);

/** The probe's JSON line: the whole output, or else its last line that parses (a login banner may precede it). */
function probeDocument(stdout: string): Record<string, unknown> | undefined {
  const candidates = [stdout.trim(), ...stdout.trim().split("\n").reverse().map((l) => l.trim())];
  for (const text of candidates) {
    if (!text.startsWith("{")) continue;
    try {
      const v: unknown = JSON.parse(text);
      if (isRecord(v)) return v;
    } catch {
      /* next candidate */
    }
  }
  return undefined;
}

/** Fields from the IMDS compute document; problems are pushed, never thrown. */
function imdsFields(doc: Record<string, unknown>, out: ProbeFields, problems: string[]): void {
  const curlExit = typeof doc.curlExit === "number" ? doc.curlExit : undefined;
  const encoded = typeof doc.imds === "string" ? doc.imds : "";
  const text = /^[A-Za-z0-9+/]*={0,2}$/.test(encoded) ? Buffer.from(encoded, "base64").toString("utf8").trim() : "";
  if (!text) {
    problems.push(`IMDS gave no compute document${curlExit ? ` (curl exit ${curlExit})` : ""}`);
    return;
  }
  let compute: unknown;
  try {
    compute = JSON.parse(text);
  } catch {
    problems.push(`IMDS compute document is not JSON: ${short(text)}`);
    return;
  }
  if (!isRecord(compute)) {
    problems.push(`IMDS compute document is not an object: ${short(text)}`);
    return;
  }
  if (typeof compute.error === "string") {
    problems.push(`IMDS answered with an error: ${short(compute.error, 160)}`);
    return;
  }
  // IMDS gives every primitive as a string and an inapplicable one as "" (Microsoft's IMDS page, "Data format").
  const str = (key: string) => (typeof compute[key] === "string" ? (compute[key] as string).trim() : undefined);
  const location = str("location");
  if (location) out.region = location.toLowerCase();
  const zone = str("zone");
  if (zone !== undefined) out.zone = zone === "" ? null : zone;
  const vmSize = str("vmSize");
  if (vmSize) out.size = vmSize;
  const vmId = str("vmId");
  if (vmId) out.imdsVmId = vmId;
  // Where in the zone: IMDS gives the domains as decimal strings ("" if inapplicable → null).
  const domain = (key: string, field: string) => {
    const v = str(key);
    if (v === undefined) return;
    if (v === "") out[field] = null;
    else if (/^\d{1,6}$/.test(v)) out[field] = Number(v);
    else problems.push(`IMDS ${key} is not a number: ${short(v)}`);
  };
  domain("platformFaultDomain", "faultDomain");
  domain("platformUpdateDomain", "updateDomain");
  // "" is a valid zone (a regional VM), not a valid location or size. Only the fields the runner
  // compares are required: without vmId or a domain, that field is simply not in `actual`.
  const missing = [!location && "location", zone === undefined && "zone", !vmSize && "vmSize"].filter((k): k is string => typeof k === "string");
  if (missing.length) problems.push(`IMDS compute document lacks ${missing.join(", ")}`);
}

/** accelnet / vfDriver / vfInterface from the interface list; problems are pushed, never thrown. */
function vfFields(doc: Record<string, unknown>, out: ProbeFields, problems: string[]): void {
  if (!Array.isArray(doc.nics)) {
    problems.push("no network interface list");
    return;
  }
  const nics = doc.nics.filter(isRecord).map((n) => ({
    name: typeof n.name === "string" ? n.name : "",
    driver: typeof n.driver === "string" ? n.driver : "",
    master: typeof n.master === "string" ? n.master : "",
  }));
  if (!nics.some((n) => n.name && n.name !== "lo")) {
    problems.push("no network interface besides lo");
    return;
  }
  // Prefer a VF that netvsc has taken as its slave (the normal Azure pairing), else any VF.
  const vfs = nics.filter((n) => VF_DRIVER.test(n.driver));
  const vf = vfs.find((n) => n.master !== "") ?? vfs[0];
  out.accelnet = vf !== undefined;
  out.vfDriver = vf?.driver ?? null;
  out.vfInterface = vf?.name ?? null;
}

/**
 * physicalHost / physicalHostSource / physicalHostNote from the probe's `kvp` part: "kvp" and the
 * name only when pool 3 holds a PhysicalHostName record and a KVP daemon runs (else the file may
 * be stale or, in the emulator, the machine's); otherwise "unavailable", null and why (no pool
 * file is the normal case where hv_kvp_daemon does not run, so it is no probeError).
 */
function kvpFields(doc: Record<string, unknown>): PhysicalHost {
  const none = (note: string): PhysicalHost => ({ physicalHost: null, physicalHostSource: "unavailable", physicalHostNote: note });
  const kvp = doc.kvp;
  if (!isRecord(kvp)) return none("the probe sent no KVP pool");
  const path = typeof kvp.path === "string" && (KVP_POOL_3_PATHS as readonly string[]).includes(kvp.path) ? kvp.path : undefined;
  if (kvp.state === "missing" || !path) return none(`no KVP pool file (${KVP_POOL_3_PATHS.join(", ")}): no KVP daemon has written one in this VM`);
  if (kvp.state === "unreadable") return none(`${path} is not readable`);
  if (kvp.state !== "read") return none(`the probe sent an unknown KVP state ${short(String(kvp.state))}`);
  if (kvp.daemon !== true) return none(`${path} exists but no KVP daemon (hv_kvp_daemon) runs in the VM: its contents may be stale or not this VM's`);
  const encoded = typeof kvp.data === "string" ? kvp.data : "";
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(encoded)) return none(`${path}: the probe sent data that is not base64`);
  const bytes = Buffer.from(encoded, "base64");
  const found = physicalHostFromPool(bytes, path);
  const size = typeof kvp.size === "number" ? kvp.size : undefined;
  if (found.physicalHostSource === "unavailable" && size !== undefined && size > bytes.length) {
    return none(`${found.physicalHostNote} (only the first ${bytes.length} of its ${size} bytes were read)`);
  }
  return found;
}

/**
 * Turns AZURE_PROBE_COMMAND's stdout into `actual` fields: region (IMDS `location`), zone
 * (IMDS `zone`, "" → null), size (`vmSize`), imdsVmId (`vmId`), faultDomain and updateDomain
 * (IMDS `platformFaultDomain` / `platformUpdateDomain` as numbers, "" → null), accelnet (a VF
 * interface is present), vfDriver and vfInterface (null without a VF), physicalHost (Hyper-V's
 * PhysicalHostName from KVP pool 3, else null), physicalHostSource ("kvp" | "unavailable") and
 * physicalHostNote (why it is unavailable, else null). No `ppg`/`availabilitySet`: IMDS does not
 * expose them (its `placementGroupId` is a scale set's). Pure; never throws: what cannot be read
 * is left out and `probeError` says why.
 */
export function parseAzureProbe(stdout: string): ProbeFields {
  const out: ProbeFields = {};
  const problems: string[] = [];
  try {
    const doc = probeDocument(stdout);
    if (!doc) {
      problems.push(`probe output is not the expected JSON: ${short(stdout.trim())}`);
    } else {
      imdsFields(doc, out, problems);
      vfFields(doc, out, problems);
      Object.assign(out, kvpFields(doc));
    }
  } catch (e) {
    problems.push(`probe output could not be read: ${(e as Error).message}`);
  }
  if (problems.length) out.probeError = problems.join("; ");
  return out;
}

/** The readiness check and the probe, as the runner wants them on a HostEndpoint. */
export function azureReadyAndProbe(): Required<Pick<HostEndpoint, "ready" | "probe">> {
  return {
    ready: { command: AZURE_READY_COMMAND, timeoutSeconds: READY_TIMEOUT_SECONDS },
    probe: { command: AZURE_PROBE_COMMAND, parse: parseAzureProbe },
  };
}
