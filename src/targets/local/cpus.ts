import { readFile } from "node:fs/promises";
import { scheduleGroups } from "../../plan/schedule.ts";
import type { Plan } from "../../plan/types.ts";

/**
 * CPUs for the emulated hosts. All hosts share this machine's cores; left to the scheduler, a
 * client and its server may land on one core in one run and on two in the next (on a 2-core
 * machine the same sockperf cell gave p50 18 µs in one run and 68 µs in the next). So each
 * host's sshd — and everything started through it, since children inherit affinity — is pinned
 * to a CPU set, and hosts that measure at the same moment (one schedule group: a pair, or
 * every pair of a tool that runs its pairs together) get different CPUs where there are enough.
 * Deployments never measure at the same time, so they reuse the same CPUs.
 */

/** "0-3,8,10-11" → [0,1,2,3,8,10,11] (the kernel's cpulist format). */
export function parseCpuList(text: string): number[] {
  const out = new Set<number>();
  for (const part of text.trim().split(",")) {
    if (part === "") continue;
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) throw new Error(`not a CPU list: "${text}"`);
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    for (let c = a; c <= b; c++) out.add(c);
  }
  return [...out].sort((x, y) => x - y);
}

/** [0,1,2,3,8] → "0-3,8". */
export function formatCpuList(cpus: readonly number[]): string {
  const sorted = [...new Set(cpus)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(i === j ? String(sorted[i]) : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(",");
}

/** The CPUs this process may run on (its own affinity: a container's cpuset, a taskset). */
export async function allowedCpus(statusPath = "/proc/self/status"): Promise<number[]> {
  const status = await readFile(statusPath, "utf8");
  const line = /^Cpus_allowed_list:\s*(\S+)/m.exec(status);
  if (!line?.[1]) throw new Error(`${statusPath} has no Cpus_allowed_list`);
  return parseCpuList(line[1]);
}

export interface CpuAssignment {
  /** `deployment/role` → the CPUs that host's processes are pinned to. */
  byHost: Map<string, number[]>;
  /** The CPUs there were to share out. */
  available: number[];
  /** The most hosts that measure at the same moment (one schedule group), and where. */
  concurrent: { hosts: number; deployment: string | null; roles: string[] };
  /** Pairs of hosts that measure at the same moment yet share a CPU (`deployment: a+b`). */
  shared: string[];
  /** Said in the results and the printed report when the machine has too few CPUs; else null. */
  shortfall: string | null;
}

const hostKey = (deployment: string, role: string) => `${deployment}/${role}`;

/**
 * Gives each host of each deployment a CPU set. Hosts that measure at the same moment conflict;
 * a greedy colouring (most conflicted host first) gives them different colours, and the
 * available CPUs are split into as many contiguous sets as there are colours. With fewer CPUs
 * than colours, each colour is one CPU and conflicting hosts share as few as possible — and
 * the shortfall is said.
 */
export function assignCpus(plan: Plan, available: readonly number[]): CpuAssignment {
  if (available.length === 0) throw new Error("no CPUs to assign");
  const cpus = [...available].sort((a, b) => a - b);
  const byHost = new Map<string, number[]>();
  const shared: string[] = [];
  let concurrent: CpuAssignment["concurrent"] = { hosts: 0, deployment: null, roles: [] };
  const groups = scheduleGroups(plan.cells);
  for (const d of plan.deployments) {
    const roles = d.hosts.map((h) => h.role);
    // Hosts that measure at the same moment conflict (weight 1); a client and its server the
    // most (outweighing any number of the others): where CPUs are short, hosts that only run
    // side by side share first.
    const edges = new Map(roles.map((r) => [r, new Map<string, number>()]));
    const link = (a: string, b: string, w: number) => {
      if (a === b || !edges.has(a) || !edges.has(b)) return;
      edges.get(a)!.set(b, Math.max(w, edges.get(a)!.get(b) ?? 0));
      edges.get(b)!.set(a, Math.max(w, edges.get(b)!.get(a) ?? 0));
    };
    for (const g of groups) {
      if (g[0]?.deployment !== d.id) continue;
      const at = [...new Set(g.flatMap((c) => [c.from, c.to]))].filter((r) => edges.has(r));
      if (at.length > concurrent.hosts) concurrent = { hosts: at.length, deployment: d.id, roles: at };
      for (const a of at) for (const b of at) link(a, b, 1);
      for (const c of g) link(c.from, c.to, roles.length);
    }
    const weight = (r: string) => [...edges.get(r)!.values()].reduce((x, y) => x + y, 0);
    const order = [...roles].sort((a, b) => weight(b) - weight(a));
    // Unlimited colours first: how many does this deployment need?
    const colour = new Map<string, number>();
    for (const r of order) {
      const taken = new Set([...edges.get(r)!.keys()].map((n) => colour.get(n)).filter((c) => c !== undefined));
      let c = 0;
      while (taken.has(c)) c++;
      colour.set(r, c);
    }
    const needed = Math.max(...colour.values()) + 1;
    if (needed <= cpus.length) {
      // Contiguous sets, the first ones one CPU larger when it does not divide evenly.
      const base = Math.floor(cpus.length / needed);
      const extra = cpus.length % needed;
      const sets: number[][] = [];
      let at = 0;
      for (let i = 0; i < needed; i++) {
        const n = base + (i < extra ? 1 : 0);
        sets.push(cpus.slice(at, at + n));
        at += n;
      }
      for (const r of roles) byHost.set(hostKey(d.id, r), sets[colour.get(r)!]!);
      continue;
    }
    // Too few CPUs: one CPU per colour, the least shared one for each host.
    const limited = new Map<string, number>();
    const load = new Array<number>(cpus.length).fill(0);
    for (const r of order) {
      const clash = new Array<number>(cpus.length).fill(0);
      for (const [n, w] of edges.get(r)!) {
        const c = limited.get(n);
        if (c !== undefined) clash[c]! += w;
      }
      let best = 0;
      for (let c = 1; c < cpus.length; c++) if (clash[c]! < clash[best]! || (clash[c] === clash[best] && load[c]! < load[best]!)) best = c;
      limited.set(r, best);
      load[best]!++;
    }
    for (const r of roles) byHost.set(hostKey(d.id, r), [cpus[limited.get(r)!]!]);
    for (const a of roles) for (const b of edges.get(a)!.keys()) if (a < b && limited.get(a) === limited.get(b)) shared.push(`${d.id}: ${a}+${b} on CPU ${cpus[limited.get(a)!]}`);
  }
  const shortfall =
    shared.length > 0
      ? `this machine has ${cpus.length} CPU${cpus.length === 1 ? "" : "s"} (${formatCpuList(cpus)}) for up to ${concurrent.hosts} hosts that measure at once (${concurrent.deployment}: ${concurrent.roles.join(", ")}): hosts measuring together share a CPU (${shared.join("; ")}), so where the scheduler runs them is part of what is measured`
      : null;
  return { byHost, available: cpus, concurrent, shared, shortfall };
}

/** The fact recorded in results: the CPUs there were and each host's set. */
export function cpuFact(a: CpuAssignment, hostname: (key: string) => string): string {
  const hosts = [...a.byHost].map(([k, set]) => `${hostname(k)} ${formatCpuList(set)}`).join(", ");
  return `${a.available.length} CPU${a.available.length === 1 ? "" : "s"} (${formatCpuList(a.available)}); at most ${a.concurrent.hosts} host${a.concurrent.hosts === 1 ? "" : "s"} measure at once; each host's processes pinned (sshd and everything started through it): ${hosts}${
    a.shortfall ? "" : a.concurrent.hosts > 1 ? "; hosts measuring together are on different CPUs" : ""
  }`;
}
