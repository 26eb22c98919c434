import { z } from "zod";
import type { HostCheck } from "../../target.ts";
import type { DeploymentTopology } from "./topology.ts";

/**
 * The local fabric as the kernel holds it, checked against what the local target set up
 * (topology.ts), and restored where a link's flap took it away.
 *
 * Why: `ip link set <dev> down` (a fault, an operator, a flapping veth) makes the kernel delete
 * every IPv4 route through that device; `up` brings back only the connected subnet. The routes
 * latlab added (a host's default and public routes, a router's routes to other racks) stay gone,
 * and every later cell would fail with "Network is unreachable". A link still down is not ours to
 * bring up (someone put it down): it is reported, and the cell fails naming it.
 */

/** What one namespace should hold: the data links up, their addresses, the routes latlab added. */
export interface ExpectedNamespace {
  namespace: string;
  /** Who the namespace is, for messages ("host vm1 (namespace …)"). */
  label: string;
  links: string[];
  addresses: { dev: string; address: string }[];
  routes: ExpectedRoute[];
}

export interface ExpectedRoute {
  destination: string;
  /** Absent for an `unreachable` route. */
  via?: string;
  dev?: string;
  src?: string;
  table?: number;
  unreachable?: boolean;
}

/** Every namespace of a deployment and what it should hold, from the topology up() built. */
export function expectedNetwork(t: DeploymentTopology, label: (namespace: string) => string = (ns) => `namespace ${ns}`): ExpectedNamespace[] {
  const byNs = new Map<string, ExpectedNamespace>();
  const of = (ns: string) => {
    let e = byNs.get(ns);
    if (!e) byNs.set(ns, (e = { namespace: ns, label: label(ns), links: [], addresses: [], routes: [] }));
    return e;
  };
  for (const ns of t.namespaces) of(ns.name);
  for (const b of t.bridges) {
    of(b.namespace).links.push(b.name);
    of(b.namespace).addresses.push({ dev: b.name, address: b.address });
  }
  for (const l of t.links) {
    for (const end of [l.a, l.b]) {
      of(end.namespace).links.push(end.ifname);
      if (end.address !== undefined) of(end.namespace).addresses.push({ dev: end.ifname, address: end.address });
    }
  }
  for (const a of t.addresses) of(a.namespace).addresses.push({ dev: a.dev, address: a.address });
  for (const r of t.routes) {
    of(r.namespace).routes.push({ destination: r.destination, via: r.via, dev: r.dev, ...(r.src !== undefined ? { src: r.src } : {}), ...(r.table !== undefined ? { table: r.table } : {}) });
  }
  for (const u of t.unreachable) of(u.namespace).routes.push({ destination: u.destination, table: u.table, unreachable: true });
  return [...byNs.values()];
}

// What `ip -j addr show` and `ip -j route show table all` print (iproute2 JSON), the fields read.
const IpAddrJson = z.array(
  z.object({
    ifname: z.string(),
    flags: z.array(z.string()).default([]),
    addr_info: z.array(z.object({ family: z.string().optional(), local: z.string().optional(), prefixlen: z.number().optional() })).default([]),
  }),
);
const IpRouteJson = z.array(
  z.object({
    type: z.string().optional(),
    dst: z.string(),
    gateway: z.string().optional(),
    dev: z.string().optional(),
    table: z.string().optional(),
  }),
);

/** One namespace as the kernel holds it. */
export interface ActualNamespace {
  /** Interfaces and whether each is administratively up. */
  links: Map<string, { up: boolean; addresses: string[] }>;
  routes: { destination: string; via?: string; dev?: string; table?: number; unreachable: boolean }[];
}

/** Reads `ip -j addr show` and `ip -j route show table all` of one namespace. */
export function parseActual(addrJson: string, routeJson: string): ActualNamespace {
  const links = new Map<string, { up: boolean; addresses: string[] }>();
  for (const l of IpAddrJson.parse(JSON.parse(addrJson || "[]"))) {
    const addresses = l.addr_info.filter((a) => a.family === "inet" && a.local !== undefined).map((a) => `${a.local}/${a.prefixlen ?? 32}`);
    links.set(l.ifname, { up: l.flags.includes("UP"), addresses });
  }
  const routes = IpRouteJson.parse(JSON.parse(routeJson || "[]")).map((r) => ({
    // iproute2 prints a /32 without its length and the main table without a name.
    destination: r.dst === "default" || r.dst.includes("/") ? r.dst : `${r.dst}/32`,
    ...(r.gateway !== undefined ? { via: r.gateway } : {}),
    ...(r.dev !== undefined ? { dev: r.dev } : {}),
    ...(r.table !== undefined && /^\d+$/.test(r.table) ? { table: Number(r.table) } : {}),
    unreachable: r.type === "unreachable",
  }));
  return { links, routes };
}

const normalDest = (d: string) => (d === "default" || d.includes("/") ? d : `${d}/32`);

/** What differs, namespace by namespace: links down (not repaired), addresses and routes missing (repaired). */
export interface NetworkDiff {
  namespace: string;
  label: string;
  linksDown: string[];
  missingAddresses: { dev: string; address: string }[];
  missingRoutes: ExpectedRoute[];
}

/**
 * Compares one namespace with what it should hold. A namespace that is gone is all missing; an
 * address or route on a link that is down is not counted missing (it cannot be restored until
 * the link is up, and the link down is the cause to name).
 */
export function diffNamespace(expected: ExpectedNamespace, actual: ActualNamespace | undefined): NetworkDiff {
  const linksDown = expected.links.filter((l) => !actual?.links.get(l)?.up);
  const down = new Set(linksDown);
  const missingAddresses = expected.addresses.filter((a) => !down.has(a.dev) && !actual?.links.get(a.dev)?.addresses.includes(a.address));
  const missingRoutes = expected.routes.filter(
    (r) =>
      !(r.dev !== undefined && down.has(r.dev)) &&
      !actual?.routes.some(
        (k) =>
          k.destination === normalDest(r.destination) &&
          (k.table ?? null) === (r.table ?? null) &&
          k.unreachable === (r.unreachable ?? false) &&
          (r.unreachable || (k.via === r.via && k.dev === r.dev)),
      ),
  );
  return { namespace: expected.namespace, label: expected.label, linksDown, missingAddresses, missingRoutes };
}

/** The commands restoring what a diff found missing: addresses first (routes use them as `src`). */
export function repairCommands(d: NetworkDiff): string[][] {
  const ns = d.namespace;
  const cmds: string[][] = d.missingAddresses.map((a) => ["ip", "-n", ns, "addr", "replace", a.address, "dev", a.dev]);
  for (const r of d.missingRoutes) {
    const argv = r.unreachable ? ["ip", "-n", ns, "route", "replace", "unreachable", r.destination] : ["ip", "-n", ns, "route", "replace", r.destination, "via", r.via!, "dev", r.dev!];
    if (r.src !== undefined) argv.push("src", r.src);
    if (r.table !== undefined) argv.push("table", String(r.table));
    cmds.push(argv);
  }
  return cmds;
}

const describeRoute = (r: ExpectedRoute) =>
  r.unreachable ? `unreachable ${r.destination} (table ${r.table})` : `${r.destination} via ${r.via} dev ${r.dev}${r.table !== undefined ? ` table ${r.table}` : ""}`;

/** What one namespace's diff means, said the way a cell's error or warning says it. */
export function describeDiff(d: NetworkDiff): { problem?: string; restored?: string } {
  const parts: string[] = [];
  if (d.missingAddresses.length) parts.push(`address${d.missingAddresses.length === 1 ? "" : "es"} ${d.missingAddresses.map((a) => `${a.address} on ${a.dev}`).join(", ")}`);
  if (d.missingRoutes.length) parts.push(`route${d.missingRoutes.length === 1 ? "" : "s"} ${d.missingRoutes.map(describeRoute).join(", ")}`);
  return {
    ...(d.linksDown.length ? { problem: `${d.label}: link${d.linksDown.length === 1 ? "" : "s"} ${d.linksDown.join(", ")} down (network unreachable through ${d.linksDown.length === 1 ? "it" : "them"})` } : {}),
    ...(parts.length ? { restored: `${d.label}: the kernel had dropped ${parts.join("; ")} (a link went down); restored` } : {}),
  };
}

/** One `sh` reading every namespace at once (one process, not two per namespace, before every cell). */
export function readCommand(namespaces: readonly string[]): string[] {
  // Namespace names are latlab's own (names.ts: [a-z0-9-]), passed as arguments, never spliced in.
  const script = 'for ns in "$@"; do printf "@@ns %s\\n" "$ns"; ip -j -n "$ns" addr show 2>/dev/null || echo "[]"; echo; ip -j -4 -n "$ns" route show table all 2>/dev/null || echo "[]"; echo; done';
  return ["sh", "-c", script, "sh", ...namespaces];
}

/** Splits readCommand's output by namespace; a namespace whose `ip` failed (gone) is absent. */
export function parseReadOutput(stdout: string): Map<string, ActualNamespace> {
  const out = new Map<string, ActualNamespace>();
  for (const block of stdout.split(/^@@ns /m).slice(1)) {
    const [name, ...rest] = block.split("\n");
    const json = rest.map((l) => l.trim()).filter((l) => l.length > 0);
    if (!name || json.length < 2) continue;
    try {
      const addr = json[0]!;
      // A namespace that is gone prints "[]" for both: it holds nothing, and is not counted as present.
      if (addr === "[]") continue;
      out.set(name, parseActual(addr, json[1]!));
    } catch {
      // Unreadable: treated as absent, so everything is reported missing rather than assumed there.
    }
  }
  return out;
}

/** Runs `argv`; resolves with its exit code and output (the local target's ExecFn). */
type Exec = (argv: readonly string[]) => Promise<{ code: number; stdout: string; stderr: string }>;

/**
 * Checks a deployment's namespaces against what they should hold and restores missing addresses
 * and routes on links that are up. A link that is down is a problem (named, not brought up); a
 * restore the kernel refuses is a problem too.
 */
export async function checkAndRepair(exec: Exec, expected: readonly ExpectedNamespace[]): Promise<HostCheck> {
  const read = await exec(readCommand(expected.map((e) => e.namespace)));
  if (read.code !== 0) return { restored: [], problems: [`could not read the hosts' network: ${read.stderr.trim() || `exit ${read.code}`}`] };
  const actual = parseReadOutput(read.stdout);
  const restored: string[] = [];
  const problems: string[] = [];
  for (const e of expected) {
    const a = actual.get(e.namespace);
    if (!a) {
      problems.push(`${e.label}: namespace ${e.namespace} is gone`);
      continue;
    }
    const diff = diffNamespace(e, a);
    const said = describeDiff(diff);
    if (said.problem) problems.push(said.problem);
    if (!said.restored) continue;
    const failed: string[] = [];
    for (const argv of repairCommands(diff)) {
      const r = await exec(argv);
      if (r.code !== 0) failed.push(`\`${argv.join(" ")}\`: ${r.stderr.trim() || `exit ${r.code}`}`);
    }
    if (failed.length) problems.push(`${e.label}: the kernel dropped routes or addresses, and restoring them failed: ${failed.join("; ")}`);
    else restored.push(said.restored);
  }
  return { restored, problems };
}
