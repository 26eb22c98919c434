/**
 * What an Azure VM size's name says, read by Microsoft's naming convention:
 *   [Family] + [Sub-family*] + [# of vCPUs] + [Constrained vCPUs*] + [Additive Features] + [Accelerator Type*] + [Version]
 * ("Azure virtual machine sizes naming conventions", MicrosoftDocs/azure-compute-docs
 * articles/virtual-machines/vm-naming-conventions.md @ 028a4dc: "# of vCPUs — Denotes the number of
 * vCPUs of the VM"; "M8-2ms_v2: # of vCPUs 8, # of constrained (actual) vCPUs 2").
 *
 * Older series predate the convention: D11_v2…D15_v2, DS11_v2…, A0…A7, G1…G5 carry a size
 * number, not a vCPU count (D3_v2 has 4 vCPUs, DS13_v2 has 8). vCPUs are read from the name only
 * for series the convention covers (version 3 or later, and B-series), and never for a
 * constrained size; everything else is UNKNOWN until Azure's SKU list says.
 */

export interface SizeName {
  /** The ARM name as given, e.g. "Standard_D4s_v5". */
  name: string;
  /** Upper-case family and sub-family letters as written: "D", "DS", "NC", "E". */
  family: string;
  /** The number in the name (vCPUs under the convention; a size number in older series). */
  number: number;
  /** Constrained (actual) vCPUs, e.g. 2 in M8-2ms_v2. */
  constrained: number | null;
  /** Lower-case additive features: "s", "ds", "als", "ms". */
  features: string;
  /** Accelerator type, e.g. "T4" in NC4as_T4_v3. */
  accelerator: string | null;
  /** Series version: 5 for "_v5"; null for a first version (no suffix). */
  version: number | null;
}

const PATTERN = /^(?:Standard|Basic)_([A-Z]+)(\d+)(?:-(\d+))?([a-z]*)(?:_([A-Z][A-Za-z0-9]*))?(?:_v(\d+))?$/;

/** Reads a size name; undefined when it does not follow the pattern at all. */
export function parseSizeName(name: string): SizeName | undefined {
  const m = PATTERN.exec(name.trim());
  if (!m) return undefined;
  return {
    name,
    family: m[1]!,
    number: Number(m[2]),
    constrained: m[3] === undefined ? null : Number(m[3]),
    features: m[4] ?? "",
    accelerator: m[5] ?? null,
    version: m[6] === undefined ? null : Number(m[6]),
  };
}

/** vCPUs the name states, where the naming convention applies (see the module comment); null otherwise. */
export function vcpusFromName(name: string): number | null {
  const n = parseSizeName(name);
  if (!n || n.constrained !== null) return null;
  const convention = (n.version !== null && n.version >= 3) || n.family === "B";
  return convention && n.number > 0 ? n.number : null;
}

/**
 * The series as Microsoft's size pages name it: "Dsv5", "Dv2", "Dsv2" (for DS13_v2), "Bs" (for
 * B2s), "Easv4". Legacy "DS"/"GS" family letters are the "s" feature of D/G.
 */
export function seriesOf(name: string): string | undefined {
  const n = parseSizeName(name);
  if (!n) return undefined;
  let family = n.family;
  let features = n.features;
  if (/^(DS|GS)$/.test(family)) {
    family = family[0]!;
    features = `s${features}`;
  }
  return `${family}${features}${n.version !== null ? `v${n.version}` : ""}`;
}
