import type { Placement } from "../dsl/axes.ts";
import { ExperimentDefinitionError, issuesFromZod, type DefinitionIssue } from "../dsl/errors.ts";
import type { Experiment } from "../dsl/experiment.ts";
import { HostSpecSchema, type HostSpec, type ResolvedHost, type Zone } from "../dsl/placement.ts";
import { z } from "zod";
import type { AxisPoint } from "../dsl/matrix.ts";

const FALLBACK = { region: "uksouth", size: "Standard_D2s_v5", accelnet: true } as const;
const SHARED_PPG = "ppg";
const SHARED_AVSET = "avset";

const nextZone = (zone: Zone): Zone => (zone === "1" ? "2" : zone === "2" ? "3" : "1");

function groupName(value: string | boolean | null | undefined, shared: string): string | null | undefined {
  if (value === undefined) return undefined;
  if (value === true) return shared;
  if (value === false || value === null) return null;
  return value;
}

/**
 * The hosts of one variant with nothing left to guess. Precedence, highest first: what the
 * host says, the variant's axis value, the placement axis (for every host but the first,
 * the anchor), the experiment's defaults, latlab's fallback.
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
  const parsed = z.record(z.string(), HostSpecSchema).safeParse(spec, { reportInput: true });
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
  const anchorZone: Zone | null = anchorSpec.zone ?? d.zone ?? (placement && placement !== "cross-region" ? "1" : null);

  const resolved = roles.map((role, index): ResolvedHost => {
    const h = hosts[role]!;
    const relative = index === 0 || !placement ? {} : placementFor(placement, anchorZone, experiment.peerRegion);
    const region = h.region ?? relative.region ?? (point.region as string | undefined) ?? d.region ?? FALLBACK.region;
    const zone = h.zone !== undefined ? h.zone : relative.zone !== undefined ? relative.zone : index === 0 ? anchorZone : d.zone ?? (placement ? anchorZone : null);
    const ppgAxis = point.ppg as boolean | undefined;
    const ppg = groupName(h.ppg, SHARED_PPG) ?? groupName(ppgAxis, SHARED_PPG) ?? (placement === "same-ppg" ? SHARED_PPG : undefined) ?? groupName(d.ppg, SHARED_PPG) ?? null;
    const avsetAxis = point.availabilitySet as boolean | undefined;
    const availabilitySet = groupName(h.availabilitySet, SHARED_AVSET) ?? groupName(avsetAxis, SHARED_AVSET) ?? groupName(d.availabilitySet, SHARED_AVSET) ?? null;
    return {
      role,
      region,
      zone: zone ?? null,
      ppg,
      availabilitySet,
      size: h.size ?? (point.size as string | undefined) ?? d.size ?? FALLBACK.size,
      accelnet: h.accelnet ?? (point.accelnet as boolean | undefined) ?? d.accelnet ?? FALLBACK.accelnet,
    };
  });
  issues.push(...placementRules(resolved, variant));
  if (issues.length) throw new ExperimentDefinitionError(issues, experiment.name);
  return resolved;
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
