import type { Placement } from "../dsl/axes.ts";
import { ExperimentDefinitionError, issuesFromZod, type DefinitionIssue } from "../dsl/errors.ts";
import { HostsObjectSchema, type Experiment } from "../dsl/experiment.ts";
import type { AxisPoint } from "../dsl/matrix.ts";
import type { HostSpec, ResolvedHost, Zone } from "../dsl/placement.ts";
import { pathKind } from "./pathKind.ts";
import type { PathKind } from "./types.ts";

const FALLBACK = { region: "uksouth", size: "Standard_D2s_v5", accelnet: true } as const;
const SHARED_PPG = "ppg";
const SHARED_AVSET = "avset";

const nextZone = (zone: Zone): Zone => (zone === "1" ? "2" : zone === "2" ? "3" : "1");

function groupName(value: string | boolean | null, shared: string): string | null {
  if (value === true) return shared;
  if (value === false || value === null) return null;
  return value;
}

type Source = "host" | "axis" | "placement" | "defaults" | "fallback";
interface Picked<T> {
  value: T;
  from: Source;
}

/**
 * The first source that says anything. Only `undefined` means "not said": an explicit `false`
 * or `null` (no PPG, no zone) is a choice and must win over the sources below it.
 */
function first<T>(...sources: [Source, T | undefined][]): Picked<T> {
  for (const [from, value] of sources) if (value !== undefined) return { value, from };
  throw new Error("resolveHosts: no fallback given");
}

interface Resolution {
  host: ResolvedHost;
  /** Where the fields that decide the path came from, as given (before group names). */
  picked: { region: Picked<string>; zone: Picked<Zone | null>; ppg: Picked<string | boolean | null> };
}

/**
 * The hosts of one variant with nothing left to guess. Precedence, highest first: what the
 * host says, the variant's axis value, the placement axis (for every host but the first,
 * the anchor), the experiment's defaults, latlab's fallback. A host or axis value that makes
 * the placement untrue is refused: the variant would be named for a path it does not measure.
 */
export function resolveHosts(experiment: Experiment, point: AxisPoint, variant: string): ResolvedHost[] {
  let spec: unknown = experiment.hosts;
  if (typeof spec === "function") {
    try {
      spec = spec(point);
    } catch (error) {
      throw new ExperimentDefinitionError([{ path: "hosts", message: `threw for variant ${variant}: ${(error as Error).message}` }], experiment.name);
    }
  }
  // The role schema too: a hosts function must not get past the rules an object is held to.
  const parsed = HostsObjectSchema.safeParse(spec, { reportInput: true });
  if (!parsed.success) {
    const issues = issuesFromZod(parsed.error, ["hosts"]).map((i) => ({ ...i, message: `${i.message} (variant ${variant})` }));
    throw new ExperimentDefinitionError(issues, experiment.name);
  }
  const hosts = parsed.data;
  const roles = Object.keys(hosts);
  const issues: DefinitionIssue[] = [];
  if (roles.length < 2) issues.push({ path: "hosts", message: `an experiment needs at least two hosts, got ${roles.length} (variant ${variant})` });

  const d = experiment.defaults;
  const placement = point.placement as Placement | undefined;
  const anchorSpec: HostSpec = hosts[roles[0]!] ?? {};
  // A placement axis talks about zones, so the anchor gets one when nobody gave it any.
  const anchorZonePicked = first<Zone | null>(["host", anchorSpec.zone], ["defaults", d.zone], ["fallback", placement && placement !== "cross-region" ? "1" : null]);
  const anchorZone = anchorZonePicked.value;

  const resolutions = roles.map((role, index): Resolution => {
    const h = hosts[role]!;
    const relative = index === 0 || !placement ? {} : placementFor(placement, anchorZone, experiment.peerRegion);
    const region = first<string>(["host", h.region], ["axis", point.region as string | undefined], ["placement", relative.region], ["defaults", d.region], ["fallback", FALLBACK.region]);
    const zone = index === 0 ? anchorZonePicked : first<Zone | null>(["host", h.zone], ["placement", relative.zone], ["defaults", d.zone], ["fallback", null]);
    // same-ppg puts the anchor in the PPG too: a PPG is shared, the others cannot join it alone.
    const ppg = first<string | boolean | null>(["host", h.ppg], ["axis", point.ppg as boolean | undefined], ["placement", placement === "same-ppg" ? true : undefined], ["defaults", d.ppg], ["fallback", null]);
    const availabilitySet = first<string | boolean | null>(["host", h.availabilitySet], ["axis", point.availabilitySet as boolean | undefined], ["defaults", d.availabilitySet], ["fallback", null]);
    return {
      host: {
        role,
        region: region.value,
        zone: zone.value,
        ppg: groupName(ppg.value, SHARED_PPG),
        availabilitySet: groupName(availabilitySet.value, SHARED_AVSET),
        size: first<string>(["host", h.size], ["axis", point.size as string | undefined], ["defaults", d.size], ["fallback", FALLBACK.size]).value,
        accelnet: first<boolean>(["host", h.accelnet], ["axis", point.accelnet as boolean | undefined], ["defaults", d.accelnet], ["fallback", FALLBACK.accelnet]).value,
        // Orthogonal to placement: the placement axis never moves a host to another VNet.
        vnet: first<string | null>(["host", h.vnet], ["axis", point.vnet as string | undefined], ["defaults", d.vnet], ["fallback", null]).value,
      },
      picked: { region, zone, ppg },
    };
  });
  const resolved = resolutions.map((r) => r.host);
  const physical = placementRules(resolved, variant);
  issues.push(...physical);
  // A PPG across zones already explains why the placement does not hold; say it once.
  if (placement && !physical.length) issues.push(...placementContradictions(resolutions, placement, variant, experiment.peerRegion));
  if (issues.length) throw new ExperimentDefinitionError(issues, experiment.name);
  return resolved;
}

/** The path kinds each placement promises between the anchor and every other host. */
const PROMISED: Record<Placement, readonly PathKind[]> = {
  "same-ppg": ["same-ppg"],
  // A PPG inside one zone is still one zone (a ppg axis next to the placement axis).
  "same-zone": ["same-zone", "same-ppg"],
  "cross-zone": ["cross-zone"],
  "cross-region": ["cross-region"],
};

function placementContradictions(resolutions: readonly Resolution[], placement: Placement, variant: string, peerRegion: string): DefinitionIssue[] {
  const [anchor, ...others] = resolutions;
  if (!anchor) return [];
  const issues: DefinitionIssue[] = [];
  for (const other of others) {
    const kind = pathKind(anchor.host, other.host);
    if (PROMISED[placement].includes(kind)) continue;
    const causes = new Set<string>();
    for (const r of [anchor, other]) {
      for (const field of ["region", "zone", "ppg"] as const) {
        const { from, value } = r.picked[field];
        // An explicit null in defaults reaches the anchor unchanged by the placement.
        if (from === "host" || from === "axis" || (r === anchor && from === "defaults" && value === null)) {
          const where = from === "host" ? `hosts.${r.host.role}.${field}` : from === "axis" ? `axes.${field}` : `defaults.${field}`;
          causes.add(`${where} = ${JSON.stringify(value)}`);
        }
      }
    }
    const samePeer = placement === "cross-region" && anchor.host.region === other.host.region && other.picked.region.from === "placement";
    issues.push({
      path: `hosts.${other.host.role}`,
      message:
        `${other.host.role} would be ${kind} from ${anchor.host.role}, not ${placement}, in variant ${variant}` +
        (causes.size ? `: contradicted by ${[...causes].join(", ")}` : "") +
        (samePeer ? `: peerRegion "${peerRegion}" is ${anchor.host.role}'s region too — give a peerRegion other than the hosts' region` : ""),
    });
  }
  return issues;
}

function placementFor(placement: Placement, anchorZone: Zone | null, peerRegion: string): { region?: string; zone?: Zone | null } {
  switch (placement) {
    case "same-ppg":
    case "same-zone":
      return { zone: anchorZone };
    case "cross-zone":
      return { zone: nextZone(anchorZone ?? "1") };
    case "cross-region":
      return { region: peerRegion, zone: null };
  }
}

/** Physical rules true on any target: a PPG is one datacenter, an availability set has no zones. */
export function placementRules(hosts: readonly ResolvedHost[], variant: string): DefinitionIssue[] {
  const issues: DefinitionIssue[] = [];
  const groups = new Map<string, ResolvedHost[]>();
  for (const h of hosts) if (h.ppg) groups.set(h.ppg, [...(groups.get(h.ppg) ?? []), h]);
  for (const [name, members] of groups) {
    const places = new Set(members.map((m) => `${m.region}/${m.zone ?? "-"}`));
    if (places.size > 1) {
      issues.push({ path: `hosts`, message: `PPG "${name}" spans ${[...places].join(" and ")} in variant ${variant}: a proximity placement group is one datacenter, it cannot span zones or regions` });
    }
  }
  for (const h of hosts) {
    if (h.availabilitySet && h.zone) {
      issues.push({ path: `hosts.${h.role}`, message: `availability set "${h.availabilitySet}" with zone ${h.zone} in variant ${variant}: an availability set cannot be combined with zones` });
    }
  }
  return issues;
}
