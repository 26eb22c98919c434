/**
 * Why two plans' hashes differ, in words: what a reader needs to see before trusting (or not)
 * a comparison of runs of an edited experiment. Pure.
 */
import { canonicalJson } from "./canonicalJson.ts";
import type { PlanContent, PlanContentVariant } from "./planHash.ts";

const text = (v: unknown) => (typeof v === "string" ? v : canonicalJson(v ?? null));

/** The keys of two flat records whose values differ, as "key a → b". */
function changedKeys(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return keys.filter((k) => canonicalJson(a[k] ?? null) !== canonicalJson(b[k] ?? null)).map((k) => `${k} ${text(a[k])} → ${text(b[k])}`);
}

function variantDifferences(a: PlanContentVariant, b: PlanContentVariant): string[] {
  const out: string[] = [];
  const axes = changedKeys(a.axes, b.axes);
  if (axes.length) out.push(`variant ${a.id}: axes ${axes.join(", ")}`);
  const roles = [...new Set([...a.hosts.map((h) => h.role), ...b.hosts.map((h) => h.role)])].sort();
  for (const role of roles) {
    const ha = a.hosts.find((h) => h.role === role);
    const hb = b.hosts.find((h) => h.role === role);
    if (!ha || !hb) out.push(`variant ${a.id}: host ${role} only in run ${ha ? "A" : "B"}`);
    else {
      const changed = changedKeys(ha, hb);
      if (changed.length) out.push(`variant ${a.id}: host ${role} ${changed.join(", ")}`);
    }
  }
  if (a.replicas !== b.replicas) out.push(`variant ${a.id}: replicas ${a.replicas} → ${b.replicas}`);
  if (a.repetitions !== b.repetitions) out.push(`variant ${a.id}: repetitions ${a.repetitions} → ${b.repetitions}`);
  const idsB = new Set(b.measures.map((m) => m.identity));
  const idsA = new Set(a.measures.map((m) => m.identity));
  const onlyA = a.measures.filter((m) => !idsB.has(m.identity));
  const onlyB = b.measures.filter((m) => !idsA.has(m.identity));
  for (const ma of onlyA) {
    // The same tool on the same pairs and path with other parameters: say which (a duration, a rate).
    const mb = onlyB.find((m) => m.tool === ma.tool && canonicalJson(m.pairs) === canonicalJson(ma.pairs) && m.path === ma.path);
    if (mb) {
      onlyB.splice(onlyB.indexOf(mb), 1);
      out.push(`variant ${a.id}: ${ma.tool} parameters ${changedKeys(ma.params, mb.params).join(", ")}`);
    } else out.push(`variant ${a.id}: ${ma.tool} ${ma.pairs.join(" ")} (${ma.path}) only in run A`);
  }
  for (const mb of onlyB) out.push(`variant ${b.id}: ${mb.tool} ${mb.pairs.join(" ")} (${mb.path}) only in run B`);
  return out;
}

/** Every difference between plan A and plan B; empty when they are the same plan. */
export function planDifferences(a: PlanContent, b: PlanContent): string[] {
  const out: string[] = [];
  if (a.format !== b.format) out.push(`plan format ${a.format} → ${b.format}`);
  if (a.target !== b.target) out.push(`target ${a.target} → ${b.target}`);
  for (const va of a.variants) {
    const vb = b.variants.find((v) => v.id === va.id);
    if (!vb) out.push(`variant ${va.id} only in run A`);
    else out.push(...variantDifferences(va, vb));
  }
  for (const vb of b.variants) if (!a.variants.some((v) => v.id === vb.id)) out.push(`variant ${vb.id} only in run B`);
  return out;
}

/**
 * Whether a variant was set up alike in both plans (axes, hosts, replicas, repetitions): its
 * measures of equal identity are then comparable; otherwise none of them is (a changed size
 * changes every figure of the variant).
 */
export function sameVariantSetup(a: PlanContent, b: PlanContent, variant: string): boolean {
  const va = a.variants.find((v) => v.id === variant);
  const vb = b.variants.find((v) => v.id === variant);
  if (!va || !vb || a.target !== b.target) return false;
  const setup = (v: PlanContentVariant) => canonicalJson({ axes: v.axes, hosts: v.hosts, replicas: v.replicas, repetitions: v.repetitions });
  return setup(va) === setup(vb);
}
