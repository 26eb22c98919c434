import type { HostEndpoint } from "../target.ts";
import { READY_MARKER } from "./cloudInit.ts";

/**
 * What an Azure VM really is, asked from inside the VM once the runner has connected:
 * - `ready`: cloud-init has finished and written the marker cloudInit.ts's last step writes;
 * - `probe`: the Instance Metadata Service (IMDS) compute document, and whether the Accelerated
 *   Networking VF is present, turned by parseAzureProbe() into the fields the runner compares
 *   with what the plan asked (same names: region, zone, size, accelnet).
 *
 * Nothing here runs on the runner's machine: the commands are strings the runner executes over
 * SSH (through `sh -c`, so POSIX sh: Ubuntu's dash).
 *
 * What IMDS does NOT tell (compute category, api-version 2021-02-01 and later; Microsoft's
 * "Azure Instance Metadata Service" page and the IMDS swagger in Azure/azure-rest-api-specs,
 * specification/imds): the proximity placement group and the availability set. Its
 * `placementGroupId` is the placement group of a *virtual machine scale set*, not a PPG, so
 * `ppg` and `availabilitySet` are left out of `actual` (the runner then does not compare them).
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
  `{ echo "latlab: cloud-init finished without writing ${READY_MARKER}" >&2; cloud-init status --long >&2; exit 1; }`;

/** API version of the IMDS request (documented since 2021-02-01; still served). */
export const IMDS_API_VERSION = "2021-02-01";
/** The IMDS request, as Microsoft documents it: header Metadata:true, proxies bypassed. */
export const IMDS_COMPUTE_FETCH = `curl -s -m 10 -H Metadata:true --noproxy '*' 'http://169.254.169.254/metadata/instance/compute?api-version=${IMDS_API_VERSION}'`;

/**
 * Prints one JSON line: {"curlExit": n, "imds": "<base64 of the IMDS body>", "nics": [{name,
 * driver, master}…]}. The IMDS body travels base64-encoded so that whatever IMDS answers (an
 * error page, nothing) cannot break the outer JSON; interface and driver names are reduced to
 * [A-Za-z0-9_.:@-] for the same reason. The driver comes from /sys/class/net/<if>/device/driver
 * (what `ethtool -i` reports), the master from /sys/class/net/<if>/master: on Azure the VF
 * (mlx4_core / mlx5_core / mana) is enslaved to the synthetic hv_netvsc interface, eth0.
 */
export const AZURE_PROBE_COMMAND = [
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
  `printf ']}\\n'`,
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
  // "" is a valid zone (a regional VM), not a valid location or size.
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
 * Turns AZURE_PROBE_COMMAND's stdout into `actual` fields: region (IMDS `location`), zone
 * (IMDS `zone`, "" → null), size (`vmSize`), imdsVmId (`vmId`), accelnet (a VF interface is
 * present), vfDriver and vfInterface (null without a VF). No `ppg`/`availabilitySet`: IMDS does
 * not expose them. Pure; never throws: what cannot be read is left out and `probeError` says why.
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
