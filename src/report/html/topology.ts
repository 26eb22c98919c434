/**
 * Where each host was placed, as nested groups — deployment → region → VNet → zone → PPG or
 * availability set → host — for the HTML report (nested boxes) and report.md (a Mermaid
 * flowchart). Hosts come from results.json: what was asked, with what was got beside it. Pure.
 */
import type { HostRecord, Results } from "../../results/schema.ts";
import { escapeHtml } from "./escapeHtml.ts";

interface Node {
  label: string;
  children: Map<string, Node>;
  hosts: HostRecord[];
}

const node = (label: string): Node => ({ label, children: new Map(), hosts: [] });
const child = (parent: Node, key: string, label: string) => {
  let c = parent.children.get(key);
  if (!c) parent.children.set(key, (c = node(label)));
  return c;
};

/** The placement tree of every deployment of the run. */
export function placementTree(results: Pick<Results, "variants">): Node {
  const root = node("run");
  for (const v of results.variants) {
    for (const h of v.hosts) {
      const d = child(root, h.deployment, `deployment ${h.deployment}`);
      const region = child(d, h.region, `region ${h.region}`);
      const vnet = child(region, h.vnet ?? "", h.vnet ? `VNet ${h.vnet}` : "VNet (default)");
      const zone = child(vnet, h.zone ?? "", h.zone ? `zone ${h.zone}` : "no zone (regional)");
      const group = h.ppg ? child(zone, `ppg:${h.ppg}`, `PPG ${h.ppg}`) : h.availabilitySet ? child(zone, `as:${h.availabilitySet}`, `availability set ${h.availabilitySet}`) : zone;
      if (!group.hosts.some((x) => x.role === h.role)) group.hosts.push(h);
    }
  }
  return root;
}


function hostHtml(h: HostRecord): string {
  const got = [h.actual.zone !== undefined ? `zone ${String(h.actual.zone)}` : "", h.actual.size ? String(h.actual.size) : h.size].filter(Boolean).join(", ");
  const bad = h.mismatches.length > 0;
  return `<div class="host${bad ? " mismatch" : ""}" title="${escapeHtml(h.mismatches.join("; ") || "as asked")}"><b>${escapeHtml(h.role)}</b><span>${escapeHtml(got)}${h.accelnet ? ", AccelNet" : ""}</span>${bad ? `<em>${escapeHtml(h.mismatches.join("; "))}</em>` : ""}</div>`;
}

function nodeHtml(n: Node, depth: number): string {
  const kids = [...n.children.values()].map((c) => nodeHtml(c, depth + 1)).join("");
  return `<div class="topo d${depth}"><div class="topo-label">${escapeHtml(n.label)}</div><div class="topo-body">${kids}${n.hosts.map(hostHtml).join("")}</div></div>`;
}

/** Nested boxes (CSS in reportHtml.ts), deployments side by side. */
export function topologyHtml(results: Pick<Results, "variants">): string {
  const root = placementTree(results);
  for (const d of root.children.values()) {
    // latlab peers every VNet pair of a deployment: said on the deployment, whose box holds them all.
    const vnets = [...d.children.values()].flatMap((region) => [...region.children.values()].map((v) => `${region.label.replace(/^region /, "")}/${v.label.replace(/^VNet /, "")}`));
    if (vnets.length > 1) d.label += ` — VNets peered: ${vnets.join(" ↔ ")}`;
  }
  return `<div class="topology">${[...root.children.values()].map((d) => nodeHtml(d, 0)).join("")}</div>`;
}

/** A Mermaid flowchart of the same tree; a deployment with two VNets shows their peering. */
export function topologyMermaid(results: Pick<Results, "variants">): string {
  const root = placementTree(results);
  const lines = ["flowchart LR"];
  let id = 0;
  const quote = (s: string) => `"${s.replace(/"/g, "'")}"`;
  const walk = (n: Node, indent: string): string => {
    const me = `n${id++}`;
    lines.push(`${indent}subgraph ${me} [${quote(n.label)}]`);
    const kids = [...n.children.values()].map((c) => walk(c, `${indent}  `));
    for (const h of n.hosts) lines.push(`${indent}  ${me}_${h.role.replace(/\W/g, "_")}(${quote(`${h.role} · ${h.size}${h.mismatches.length ? " ⚠" : ""}`)})`);
    lines.push(`${indent}end`);
    // VNets of one deployment are peered (latlab peers every VNet pair of a deployment).
    if (n.label.startsWith("deployment")) {
      const vnets = kids.flatMap((regionId) => vnetIds.get(regionId) ?? []);
      for (let i = 1; i < vnets.length; i++) lines.push(`${indent}${vnets[0]} <-.->|peering| ${vnets[i]}`);
    }
    if (n.label.startsWith("region")) vnetIds.set(me, kids);
    return me;
  };
  const vnetIds = new Map<string, string[]>();
  for (const d of root.children.values()) walk(d, "  ");
  return lines.join("\n");
}
