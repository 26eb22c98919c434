import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { localRunsDir, newRunRecord, ownerAlive, processStartTicks, removeRunRecord, writeRunRecord, type RunRecord } from "./recovery/runRecord.ts";
import { readSavedEnvironment, saveEnvironment, type SavedEnvironment } from "./recovery/savedEnvironment.ts";
import { release, tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import type { Plan } from "../../plan/types.ts";
import { LATENCY_ONLY, type ShapingStatus, type TeardownReport } from "../../results/schema.ts";
import type { Environment, HostCheck, HostEndpoint, Target, TargetContext } from "../target.ts";
import { CommandError, execCommand, formatArgv, mustExec, spawnDetached } from "./exec.ts";
import type { DetachedProcess, ExecFn } from "./exec.ts";
import { bandwidthForSize } from "./model/latencyModel.ts";
import { deploymentModelEntries } from "./model/modelEntries.ts";
import type { BandwidthLookup } from "./model/latencyModel.ts";
import {
  DATA_NET,
  MGMT_NET,
  PUBLIC_NET,
  TRANSIT_NET,
  mgmtBaseBlock,
  mgmtRootLink,
  parseAddrLines,
  parseCidr,
  cidrContains,
  ipToInt,
  parseInUsePrefixes,
  parseLinkNames,
  parseNetnsIds,
  parseNetnsList,
  pickMgmtBlock,
  runNames,
} from "./network/names.ts";
import type { MgmtBlock, RunNames } from "./network/names.ts";
import { killNamespaceProcesses } from "./network/namespaceProcesses.ts";
import { checkAndRepair, expectedNetwork } from "./network/networkRepair.ts";
import { allowedCpus, assignCpus, cpuFact, formatCpuList, parseCpuList } from "./cpus.ts";
import type { CpuAssignment } from "./cpus.ts";
import { assertLocalPlan } from "./planCheck.ts";
import { NO_NETEM_NOTE, peerDelays } from "./network/shaping.ts";
import { applyShaping, delayLineLogPath, detectShapingSupport, shapingSupportLine } from "./network/latencyShaping.ts";
import type { AppliedShaping, HostShaping, ShapingSupport } from "./network/latencyShaping.ts";
import { HELPER_NAME } from "./delayLine/build.ts";
import { summarizeDelayLineRun, type DelayLineHelperRecord, type DelayLineRunSummary } from "../../results/delayLineRecord.ts";
import { parseHelperSummary } from "./delayLine/helperProcess.ts";
import { namespacePids } from "./network/namespaceProcesses.ts";
import { generateKey, sshBannerSeen, sshdConfig, sshdStartArgv } from "./sshd.ts";
import type { KeyPair } from "./sshd.ts";
import { buildDeploymentTopology, MGMT_IFNAME, PUBLIC_UPLINK_IFNAME } from "./network/topology.ts";
import type { DeploymentTopology, TopoHost } from "./network/topology.ts";

export interface HostRef {
  deployment: string;
  role: string;
  hostname: string;
  namespace: string;
}

export interface LocalTargetOptions {
  /** Command runner (default: execFile). */
  exec?: ExecFn;
  /**
   * Folder the run's temporary directory (keys, sshd configs, host work dirs) is made in.
   * Default: os.tmpdir(). The directory is removed by down().
   */
  tempRoot?: string;
  /** How long each sshd may take to accept connections (default 15 s). */
  sshdStartTimeoutMs?: number;
  /** How long down() waits after SIGTERM before SIGKILL (default 2 s). */
  killGraceMs?: number;
  /**
   * Rewrites a host's sshd_config before it is written. For tests (e.g. an impossible option
   * to make one host fail) and for local tweaks; the default config is sshd.ts's sshdConfig.
   */
  sshdConfigTransform?: (host: HostRef, config: string) => string;
  /**
   * The CPUs the hosts are pinned within (default: this process's own affinity, read from
   * /proc/self/status). For tests: pretend the machine has fewer or more.
   */
  cpus?: readonly number[];
  /**
   * Folder the run's key folder (client key, host keys, authorized_keys) is made in (default
   * /run/latlab/keys). sshd's StrictModes refuses an authorized_keys file any of whose parent
   * folders others may write to — /tmp is one — so the keys live apart from the temp folder, on a
   * path only root can write to, and in memory (tmpfs), not on disk.
   */
  keysRoot?: string;
  /** Where the run's crash-safe record goes (default $LATLAB_LOCAL_RUNS or /run/latlab/local-runs: see recovery/runRecord.ts). */
  recordsDir?: string;
  /** Whether an sshd answers at host:port within ms (default: its banner seen); tests of adopt() pass their own. */
  sshAnswers?: (host: string, port: number, timeoutMs: number) => Promise<boolean>;
}

interface Created {
  names: RunNames;
  /** True once up() checked that nothing of this run id existed: down() may then sweep by prefix. */
  ownsPrefix: boolean;
  namespaces: string[];
  rootLinks: string[];
  tempDir: string | null;
  /** The keys (see LocalTargetOptions.keysRoot). */
  keysDir: string | null;
  processes: { process: DetachedProcess; namespace: string }[];
  /** Set by down(): an up() still running stops at its next step. */
  aborted: boolean;
  /** The run's crash-safe record (written before anything is created), for `latlab cleanup`. */
  record: RunRecord | null;
  /** What shaping started (the delay line's helpers): down() stops it first. */
  shaping: AppliedShaping | null;
}

interface HostRuntime {
  topo: TopoHost;
  deployment: string;
  mgmt: MgmtBlock;
  rootLink: string;
  key: KeyPair;
  bandwidth: BandwidthLookup;
  capApplied: number | null;
  /** The CPU list its sshd is pinned to ("0-1"). */
  cpus: string;
  dir: string;
  workDir: string;
}

/**
 * Router namespaces:
 * - forward;
 * - no reverse-path filter: a public reply enters a zone router from its rack while the main
 *   table points public addresses up, not down that rack;
 * - accept packets whose source is one of their own addresses: an ICMP error a router sends on
 *   the way out to the public router (a traceroute's "time exceeded") comes back through that
 *   same router on its way down, and would otherwise be dropped as a martian;
 * - no ICMP redirects: the public router hairpins traffic between two hosts of one region back
 *   out of the interface it came in on.
 */
const ROUTER_SYSCTLS =
  "echo 1 > /proc/sys/net/ipv4/ip_forward && for c in all default; do " +
  "echo 0 > /proc/sys/net/ipv4/conf/$c/rp_filter && echo 1 > /proc/sys/net/ipv4/conf/$c/accept_local && " +
  "echo 0 > /proc/sys/net/ipv4/conf/$c/send_redirects && echo 0 > /proc/sys/net/ipv4/conf/$c/accept_redirects; done";

/** Said with the shaping status when a deployment has two VNets of one region. */
const PEERING_NOTE = "peered VNets of one region: separate routed networks joined by a peering link, same modelled latency as within one VNet";
const PEERING_FACT =
  "two VNets of one region are two region routers (each with its own zone routers and racks) joined by a 'peering' link: the private path between them is routed " +
  "(4 hops, the fabric's, not Azure's: Azure's traceroute shows 1) and gets the latency of the hosts' placement, no more: Microsoft documents that peered VNets communicate " +
  "'with the same latency and bandwidth as if the resources were in the same virtual network' (Microsoft Learn, 'Connect virtual networks with VNet peering'); bandwidth is the VM size's cap either way. Not emulated: peering's own limits and costs, classic (ASM) VNets, gateway transit, non-transitive routing (every VNet pair of a deployment is peered)";

/** What `ip -j link show` says of an interface (the fields read here). */
interface IpLinkJson {
  ifindex?: number;
  ifname?: string;
  link_index?: number;
  link_netnsid?: number;
  master?: string;
}

/** A host's wiring as read back from the kernel (null: not found where it should be). */
interface HostWiring {
  region: string | null;
  /** The VNet of the region router its zone router hangs off (null: the region's default VNet). */
  vnet: string | null;
  zone: string | null;
  ppg: string | null;
  rack: string | null;
  zoneRouter: string | null;
  regionRouter: string | null;
  publicRouter: string | null;
  privateAddress: string | null;
  publicAddress: string | null;
}

/** Errors of up(): always name the host or namespace, and the failing command with its stderr. */
export class LocalTargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LocalTargetError";
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Hosts as network namespaces on this machine, wired as racks, zone routers, region routers and
 * a public router per deployment (see topology.ts), each host with its own sshd reachable from the root namespace over a
 * management veth that never touches the data path.
 */
/** See LocalTargetOptions.keysRoot. */
export const DEFAULT_KEYS_ROOT = "/run/latlab/keys";

export class LocalTarget implements Target {
  readonly name = "local";
  private readonly exec: ExecFn;
  private created: Created | null = null;
  private pendingUp: Promise<unknown> | null = null;
  private upRunning = false;
  private labels = new Map<string, string>();
  /** Hosts a dead run left up, taken over by adopt(): up() gives these. */
  private adopted: SavedEnvironment | null = null;
  private readonly options: LocalTargetOptions;
  /** The run's abort signal (Ctrl-C): bring-up stops at its next command. */
  private signal: AbortSignal | undefined;
  /** What up() set up (or the adopted hosts' run had), by deployment: what checkHosts() restores. */
  private topologies = new Map<string, DeploymentTopology>();
  /** Host namespaces with a delay-line helper (up()'s, or the adopted run's): checkHosts() checks it lives. */
  private delayLineNamespaces = new Set<string>();
  /** The run's log (up()'s ctx.log, "local: "-prefixed): down() says there what the helpers did. */
  private log: (message: string) => void = () => undefined;

  constructor(options: LocalTargetOptions = {}) {
    this.options = options;
    this.exec = options.exec ?? execCommand;
  }

  /** What this target created so far (for tests and diagnostics). */
  get resources(): { namespaces: string[]; rootLinks: string[]; tempDir: string | null; keysDir: string | null; pids: number[] } {
    const c = this.created;
    return {
      namespaces: [...(c?.namespaces ?? [])],
      rootLinks: [...(c?.rootLinks ?? [])],
      tempDir: c?.tempDir ?? null,
      keysDir: c?.keysDir ?? null,
      pids: (c?.processes ?? []).map((p) => p.process.pid),
    };
  }

  async up(plan: Plan, ctx: TargetContext): Promise<Environment> {
    if (this.upRunning) throw new LocalTargetError("local target: up() is already running");
    this.upRunning = true;
    const p = this.bringUp(plan, ctx).finally(() => {
      this.upRunning = false;
    });
    this.pendingUp = p.catch(() => undefined);
    return p;
  }

  private async bringUp(plan: Plan, ctx: TargetContext): Promise<Environment> {
    if (this.adopted) return this.adoptedEnvironment(plan, ctx);
    if (this.created && (this.created.namespaces.length > 0 || this.created.tempDir !== null)) {
      throw new LocalTargetError("local target: up() called while a previous run is still up; call down() first");
    }
    // Before anything is brought up: a size or region latlab does not know is a mistake, not a host.
    assertLocalPlan(plan);
    if (typeof process.getuid === "function" && process.getuid() !== 0) {
      throw new LocalTargetError("local target: network namespaces need root; run latlab as root (e.g. with sudo)");
    }
    const names = runNames(ctx.runId);
    this.signal = ctx.signal;
    const c: Created = { names, ownsPrefix: false, namespaces: [], rootLinks: [], tempDir: null, keysDir: null, processes: [], aborted: false, record: null, shaping: null };
    this.created = c;
    this.labels = new Map();
    const log = (m: string) => ctx.log(`local: ${m}`);
    this.log = log;
    this.delayLineNamespaces = new Set();

    const topos: DeploymentTopology[] = plan.deployments.map((d) => buildDeploymentTopology(d, names));
    this.topologies = new Map(topos.map((t) => [t.deploymentId, t]));
    const cpuAssignment: CpuAssignment = assignCpus(plan, this.options.cpus ?? (await allowedCpus()));
    for (const t of topos) {
      for (const h of t.hosts) this.labels.set(h.namespace, `host ${h.hostname} (namespace ${h.namespace})`);
    }

    // Nothing of this run id may exist yet: two runs must never share names.
    const existingNs = (await this.listNamespaces()).filter((n) => n.startsWith(names.namespacePrefix));
    const existingLinks = (await this.listRootLinks()).filter((n) => n.startsWith(names.rootLinkPrefix));
    if (existingNs.length > 0 || existingLinks.length > 0) {
      throw new LocalTargetError(
        `local target: run id ${ctx.runId} (short ${names.short}) is already in use on this machine: ${[...existingNs, ...existingLinks].join(", ")}`,
      );
    }
    c.ownsPrefix = true;

    // Before the first thing is made: if this process dies from here on, `latlab cleanup` knows what to look for.
    c.record = newRunRecord(ctx.runId, names, ctx.runDir);
    writeRunRecord(c.record, this.options.recordsDir);
    c.tempDir = await mkdtemp(join(this.options.tempRoot ?? tmpdir(), `latlab-${names.short}-`));
    const tempDir = c.tempDir;
    const keysRoot = this.options.keysRoot ?? DEFAULT_KEYS_ROOT;
    await mkdir(keysRoot, { recursive: true, mode: 0o755 });
    c.keysDir = await mkdtemp(join(keysRoot, `latlab-${names.short}-`));
    c.record = { ...c.record, tempDir, keysDir: c.keysDir };
    writeRunRecord(c.record, this.options.recordsDir);

    // What can the kernel shape (and, without netem, can the delay line run: its helper built,
    // iptables' NFQUEUE)? Probed while the keys are made: neither waits for the other.
    const probeNs = `${names.namespacePrefix}probe`;
    const probing = (async () => {
      await this.addNamespace(probeNs);
      const found: ShapingSupport = await detectShapingSupport(this.exec, probeNs);
      await this.deleteNamespace(probeNs);
      return found;
    })();

    // Keys: one client key, one host key per host.
    const keysDir = c.keysDir;
    const allHosts = topos.flatMap((t) => t.hosts.map((h) => ({ t, h })));
    const [support, clientKey, hostKeys] = await Promise.all([
      probing,
      generateKey(this.exec, join(keysDir, "client_ed25519"), `latlab-client-${names.short}`, "local target: generating the client key"),
      Promise.all(
        allHosts.map(({ h }) =>
          generateKey(this.exec, join(keysDir, `host_${h.hostname}_ed25519`), `latlab-${h.hostname}`, `local target: host key of ${this.label(h.namespace)}`),
        ),
      ),
    ]);
    log(`kernel: ${shapingSupportLine(support)}`);
    const authorizedKeys = join(keysDir, "authorized_keys");
    await writeFile(authorizedKeys, `${clientKey.publicKey} latlab-${names.short}\n`, { mode: 0o600 });

    // The fabric, deployment by deployment.
    for (const t of topos) {
      log(`deployment ${t.deploymentId}: ${t.namespaces.length} namespaces, ${t.links.length} links`);
      for (const ns of t.namespaces) {
        await this.addNamespace(ns.name);
        await this.run(ns.name, ["ip", "-n", ns.name, "link", "set", "lo", "up"]);
        if (ns.forwarding) await this.run(ns.name, ["ip", "netns", "exec", ns.name, "sh", "-c", ROUTER_SYSCTLS]);
      }
      for (const b of t.bridges) {
        await this.run(b.namespace, ["ip", "-n", b.namespace, "link", "add", b.name, "type", "bridge"]);
        await this.run(b.namespace, ["ip", "-n", b.namespace, "addr", "add", b.address, "dev", b.name]);
        await this.run(b.namespace, ["ip", "-n", b.namespace, "link", "set", b.name, "up"]);
      }
      for (const l of t.links) {
        await this.run(l.b.namespace, ["ip", "-n", l.a.namespace, "link", "add", l.a.ifname, "type", "veth", "peer", "name", l.b.ifname, "netns", l.b.namespace]);
        for (const end of [l.a, l.b]) {
          if (end.bridge !== undefined) await this.run(end.namespace, ["ip", "-n", end.namespace, "link", "set", end.ifname, "master", end.bridge]);
          if (end.address !== undefined) await this.run(end.namespace, ["ip", "-n", end.namespace, "addr", "add", end.address, "dev", end.ifname]);
          await this.run(end.namespace, ["ip", "-n", end.namespace, "link", "set", end.ifname, "up"]);
        }
      }
      // Public /32s on the hosts' lo, before the routes that use them as `src`.
      for (const a of t.addresses) await this.run(a.namespace, ["ip", "-n", a.namespace, "addr", "add", a.address, "dev", a.dev]);
      for (const r of t.routes) {
        const argv = ["ip", "-n", r.namespace, "route", "add", r.destination, "via", r.via, "dev", r.dev];
        if (r.src !== undefined) argv.push("src", r.src);
        if (r.table !== undefined) argv.push("table", String(r.table));
        await this.run(r.namespace, argv);
      }
      for (const u of t.unreachable) {
        await this.run(u.namespace, ["ip", "-n", u.namespace, "route", "add", "unreachable", u.destination, "table", String(u.table)]);
      }
      for (const r of t.rules) {
        await this.run(r.namespace, ["ip", "-n", r.namespace, "rule", "add", "iif", r.iif, "lookup", String(r.table), "pref", String(r.priority)]);
      }
    }

    // Management veths: root namespace ↔ mgmt0 of each host.
    const runtimes: HostRuntime[] = [];
    const taken = new Set<number>();
    let start = mgmtBaseBlock(ctx.runId);
    for (const [ordinal, { t, h }] of allHosts.entries()) {
      const rootLink = mgmtRootLink(names, ordinal);
      await this.run(h.namespace, ["ip", "link", "add", rootLink, "type", "veth", "peer", "name", MGMT_IFNAME, "netns", h.namespace]);
      c.rootLinks.push(rootLink);
      await writeFile(`/proc/sys/net/ipv6/conf/${rootLink}/disable_ipv6`, "1").catch(() => undefined);
      const mgmt = await this.assignMgmt(h, rootLink, start, taken);
      taken.add(mgmt.index);
      start = mgmt.index + 1;
      await this.run(h.namespace, ["ip", "-n", h.namespace, "addr", "add", `${mgmt.hostAddress}/30`, "dev", MGMT_IFNAME]);
      await this.run(h.namespace, ["ip", "link", "set", rootLink, "up"]);
      await this.run(h.namespace, ["ip", "-n", h.namespace, "link", "set", MGMT_IFNAME, "up"]);
      const dir = join(tempDir, "hosts", h.hostname);
      const workDir = join(dir, "work");
      await mkdir(workDir, { recursive: true });
      runtimes.push({
        topo: h,
        deployment: t.deploymentId,
        mgmt,
        rootLink,
        key: hostKeys[ordinal] as KeyPair,
        bandwidth: bandwidthForSize(h.spec.size),
        capApplied: null,
        cpus: formatCpuList(cpuAssignment.byHost.get(`${t.deploymentId}/${h.role}`) ?? cpuAssignment.available),
        dir,
        workDir,
      });
    }

    // Shaping: netem where the kernel has it, else the delay line, and the caps (latencyShaping.ts).
    const hostShaping: HostShaping[] = runtimes.map((rt) => {
      const t = topos.find((x) => x.deploymentId === rt.deployment) as DeploymentTopology;
      return {
        // Short: the pair the precision was measured on is named in the shaping line; errors name the namespace through their command.
        label: `host ${rt.topo.hostname}`,
        namespace: rt.topo.namespace,
        dev: rt.topo.dataIfname,
        address: rt.topo.dataAddress,
        peers: peerDelays(rt.topo, t.hosts),
        capMbit: rt.bandwidth.mbit,
        logDir: rt.dir,
      };
    });
    if (c.aborted) throw new LocalTargetError("local target: up() interrupted by down() before shaping");
    try {
      c.shaping = await applyShaping(this.exec, support, hostShaping, { log, signal: this.signal });
    } catch (e) {
      throw new LocalTargetError(`local target: ${(e as Error).message}`);
    }
    const applied = c.shaping;
    for (const rt of runtimes) rt.capApplied = applied.capApplied.get(rt.topo.namespace) ?? null;
    for (const h of applied.helpers) this.delayLineNamespaces.add(h.namespace);
    log(`shaping: latency ${applied.latency === null ? `not applied (${applied.label})` : `with ${applied.label}`}`);

    // sshd per host.
    await mkdir("/run/sshd", { recursive: true, mode: 0o755 });
    const timeout = this.options.sshdStartTimeoutMs ?? 15_000;
    const started = await Promise.allSettled(
      runtimes.map(async (rt) => {
        const h = rt.topo;
        let config = sshdConfig({
          listenAddress: rt.mgmt.hostAddress,
          port: 22,
          hostKeyPath: rt.key.privatePath,
          authorizedKeysPath: authorizedKeys,
          pidFile: join(rt.dir, "sshd.pid"),
        });
        if (this.options.sshdConfigTransform) {
          config = this.options.sshdConfigTransform({ deployment: rt.deployment, role: h.role, hostname: h.hostname, namespace: h.namespace }, config);
        }
        const configPath = join(rt.dir, "sshd_config");
        await writeFile(configPath, config, { mode: 0o600 });
        const argv = sshdStartArgv(h.namespace, h.hostname, configPath, rt.cpus);
        const logPath = join(rt.dir, "sshd.log");
        const proc = spawnDetached(argv, logPath);
        c.processes.push({ process: proc, namespace: h.namespace });
        const deadline = Date.now() + timeout;
        for (;;) {
          if (c.aborted) throw new LocalTargetError(`local target: ${this.label(h.namespace)}: up() interrupted by down()`);
          if (this.signal?.aborted) throw new LocalTargetError(`local target: interrupted while waiting for ${this.label(h.namespace)}'s sshd`);
          if (proc.exit) {
            const out = await readFile(logPath, "utf8").catch(() => "");
            throw new LocalTargetError(
              `local target: ${this.label(h.namespace)}: sshd exited (code ${proc.exit.code ?? proc.exit.signal}) instead of starting: \`${formatArgv(argv)}\`: ${out.trim() || "(no output)"}`,
            );
          }
          if (await sshBannerSeen(rt.mgmt.hostAddress, 22, 500)) return;
          if (Date.now() > deadline) {
            const out = await readFile(logPath, "utf8").catch(() => "");
            throw new LocalTargetError(
              `local target: ${this.label(h.namespace)}: sshd did not accept connections on ${rt.mgmt.hostAddress}:22 within ${timeout} ms: \`${formatArgv(argv)}\`: ${out.trim() || "(no output)"}`,
            );
          }
          await sleep(50);
        }
      }),
    );
    const failed = started.find((s): s is PromiseRejectedResult => s.status === "rejected");
    if (failed) throw failed.reason instanceof Error ? failed.reason : new LocalTargetError(String(failed.reason));
    log(`${runtimes.length} hosts up, sshd accepting connections`);
    if (cpuAssignment.shortfall) log(`CPUs: ${cpuAssignment.shortfall}`);
    // The CPUs each sshd really runs on, read back from the kernel.
    const cpusGot = await Promise.all(runtimes.map((rt) => this.sshdCpus(rt)));

    // What was really got.
    const peered = topos.some((t) => t.links.some((l) => l.kind === "peering"));
    const anyCap = runtimes.some((r) => r.capApplied !== null);
    const uncapped = runtimes.filter((r) => r.capApplied === null);
    const uncappedNote = uncapped.length
      ? `; UNCAPPED (no bandwidth cap: ${support.netem || support.tbf ? "no documented figure for the size" : "the kernel has neither netem nor tbf"}, so these hosts are not their size here and comparing sizes is meaningless): ${uncapped
          .map((r) => `${r.topo.hostname} (${r.topo.spec.size})`)
          .join(", ")}`
      : "";
    const bandwidthNotes = runtimes.map((r) => `${r.topo.hostname}: ${r.capApplied !== null ? `${r.capApplied} Mbit/s egress cap` : "no cap"} (${r.bandwidth.note})`);
    const bandwidthWords = `bandwidth ${anyCap ? "capped per VM size" : "not capped"}`;
    const precision = applied.precision;
    const shaping: ShapingStatus = {
      latency: applied.latency !== null ? "applied" : support.delayLine.available ? "not-applicable" : "unavailable",
      bandwidth: !support.tbf && !support.netem ? "unavailable" : anyCap ? "applied" : "not-applicable",
      note:
        (applied.latency === "netem"
          ? `shaping: latency applied per peer with netem (RTT/2 on each end's egress, from the model); ${bandwidthWords}`
          : applied.latency === "delay-line"
            ? `shaping: latency applied per peer with the ${applied.label} (no netem in this kernel: NFQUEUE to latlab's helper in each host's namespace, RTT/2 on each end's egress, from the model${
                precision ? `; measured at bring-up on ${applied.precisionPair}: p50 error ${Math.round(precision.p50ErrorUs)} µs, p99 error ${Math.round(precision.p99ErrorUs)} µs` : ""
              }); ${bandwidthWords}`
            : support.delayLine.available
              ? `shaping: no latency to apply (${applied.label}); ${bandwidthWords}`
              : `${NO_NETEM_NOTE}, and no delay line: ${support.delayLine.reason ?? "not probed"}`) +
        uncappedNote +
        (peered ? `; ${PEERING_NOTE}` : "") +
        (cpuAssignment.shortfall ? `; CPUs: ${cpuAssignment.shortfall}` : ""),
      ...(applied.latency !== null ? { mechanism: applied.latency } : {}),
      ...(precision && applied.precisionPair
        ? {
            delayLinePrecision: { pair: applied.precisionPair, ...precision },
          }
        : {}),
      // The entries this run's pairs use (or would have, unshaped): a cross-region pair's published figure, every spread, with their sources.
      model: deploymentModelEntries(topos),
    };
    const wiring = await Promise.all(
      runtimes.map((rt) => {
        const t = topos.find((x) => x.deploymentId === rt.deployment) as DeploymentTopology;
        return this.readWiring(t, rt.topo);
      }),
    );
    const hosts: HostEndpoint[] = runtimes.map((rt, i) => {
      const w = wiring[i] as HostWiring;
      const actual: HostEndpoint["actual"] = {
        namespace: rt.topo.namespace,
        hostname: rt.topo.hostname,
        // Read back from the kernel: the router namespaces and bridge eth0 is really wired to.
        region: w.region,
        vnet: w.vnet,
        zone: w.zone,
        ppg: w.ppg,
        rack: w.rack,
        zoneRouter: w.zoneRouter,
        regionRouter: w.regionRouter,
        privateAddress: w.privateAddress,
        publicAddress: w.publicAddress,
        publicRouter: w.publicRouter,
        dataInterface: rt.topo.dataIfname,
        mgmtAddress: rt.mgmt.hostAddress,
        // A size is emulated only as its bandwidth cap; without a cap the host is not that size.
        ...(rt.capApplied !== null ? { size: rt.topo.spec.size } : {}),
        sizeEmulated: rt.capApplied !== null,
        // Not emulated here: reported as such, not as a value the runner would compare. Accelerated
        // Networking's latency is the model's where latency is applied (the pair's row depends on
        // both ends' accelnet); nothing else of it is emulated.
        accelnetEmulated: applied.latency !== null ? LATENCY_ONLY : false,
        availabilitySetEmulated: false,
        bandwidthCapMbit: rt.capApplied,
        bandwidthNote: rt.bandwidth.note,
        latencyShaping: applied.latency !== null ? "applied" : "unavailable",
        // netem, or the delay line where this host has a helper (one with no peer to delay has none).
        latencyMechanism: applied.latency === "netem" ? "netem" : this.delayLineNamespaces.has(rt.topo.namespace) ? "delay-line" : null,
        // The CPUs its sshd (and so everything started through it) may run on, read back.
        cpus: cpusGot[i] ?? null,
        cpusAsked: rt.cpus,
      };
      return {
        deployment: rt.deployment,
        role: rt.topo.role,
        ssh: { host: rt.mgmt.hostAddress, port: 22, username: "root", privateKey: clientKey.privateKey },
        hostKey: rt.key.publicKey,
        privateAddress: rt.topo.dataAddress,
        publicAddress: rt.topo.publicAddress,
        workDir: rt.workDir,
        actual,
      };
    });
    const facts: Record<string, string> = {
      target: "local (network namespaces)",
      kernel: release(),
      netem: support.netem ? "present" : `absent (${support.netemError ?? "refused"})`,
      tbf: support.tbf ? "present" : `absent (${support.tbfError ?? "refused"})`,
      delayLine: support.netem
        ? "not used (the kernel has netem)"
        : !support.delayLine.available
          ? `unavailable: ${support.delayLine.reason ?? "not probed"}`
          : `${applied.label}: iptables NFQUEUE (mangle POSTROUTING) to ${support.delayLine.binary}, one helper per host namespace${
              precision ? `; precision measured at bring-up on ${applied.precisionPair} (${precision.delayedSamples} pings, quantiles of single packets of one series)` : ""
            }; helper logs: <host folder>/${basename(delayLineLogPath("", "<namespace>"))}`,
      runShort: names.short,
      tempDir,
      "shaping.bandwidth": bandwidthNotes.join("; "),
      cpus: cpuFact(cpuAssignment, (key) => runtimes.find((r) => `${r.deployment}/${r.topo.role}` === key)?.topo.hostname ?? key),
      ...(cpuAssignment.shortfall ? { "cpus.shortfall": cpuAssignment.shortfall } : {}),
      addressPlan: `private ${DATA_NET} (a /24 per rack), public ${PUBLIC_NET} (a /32 per host, via the deployment's public router), router links ${TRANSIT_NET}, management ${MGMT_NET}`,
      ...(peered ? { peering: PEERING_FACT } : {}),
      publicPath:
        "public addresses are routed out through the region router to the deployment's public router and back in (zone, region, public, region, zone router: 5 routed hops for every pair); hosts source public traffic from their own public address, so replies come back the same way; no NAT",
    };
    const environment: Environment = { hosts, shaping, facts };
    // Whole hosts only: from here on a runner that dies leaves hosts `latlab resume` can re-attach to.
    c.record = { ...c.record, environmentFile: saveEnvironment(keysDir, ctx.runId, environment) };
    writeRunRecord(c.record, this.options.recordsDir);
    return environment;
  }

  /**
   * Takes over the hosts a local run left up when its runner died (`latlab resume`): the record
   * is rewritten with this process as owner — from now on cleanup leaves them alone while it
   * lives, and down() removes them as its own — and up() gives their saved endpoints instead of
   * bringing hosts up. Throws, naming the record, when its owner lives or its hosts are not whole.
   */
  async adopt(record: RunRecord, log: (message: string) => void = () => undefined): Promise<SavedEnvironment> {
    if (this.created) throw new LocalTargetError("local target: adopt() on a target that already has hosts");
    if (ownerAlive(record)) throw new LocalTargetError(`local target: run ${record.runId}'s runner (pid ${record.pid}) is alive: its hosts are its own`);
    if (!record.environmentFile || !record.keysDir || !record.tempDir) {
      throw new LocalTargetError(`local target: run ${record.runId}'s runner died before all its hosts were up: nothing whole to re-attach to`);
    }
    if (record.ended !== null) throw new LocalTargetError(`local target: run ${record.runId}'s own teardown ran (${record.ended}): what is left of its hosts is for \`latlab cleanup\``);
    // down() will remove what the record names: only what a run of this short name makes, where runs make it.
    const names0 = runNames(record.runId);
    const ownDir = (dir: string, roots: string[]) => roots.includes(dirname(dir)) && basename(dir).startsWith(`latlab-${record.short}-`);
    if (
      record.short !== names0.short ||
      record.namespacePrefix !== names0.namespacePrefix ||
      record.rootLinkPrefix !== names0.rootLinkPrefix ||
      !ownDir(record.tempDir, [this.options.tempRoot ?? tmpdir()]) ||
      !ownDir(record.keysDir, [this.options.keysRoot ?? DEFAULT_KEYS_ROOT]) ||
      dirname(record.environmentFile) !== record.keysDir
    ) {
      throw new LocalTargetError(`local target: run ${record.runId}'s record names things no run of that id makes (prefixes, temp or key folders): not taken over`);
    }
    const saved = readSavedEnvironment(record.environmentFile);
    if (saved.runId !== record.runId) throw new LocalTargetError(`local target: ${record.environmentFile} is run ${saved.runId}'s, not run ${record.runId}'s`);
    const present = new Set(await this.listNamespaces());
    const missing = saved.hosts.map((h) => String(h.actual.namespace)).filter((ns) => !present.has(ns));
    if (missing.length) throw new LocalTargetError(`local target: run ${record.runId}'s hosts are not all there any more (namespaces gone: ${missing.join(", ")})`);
    // A host whose sshd died cannot be measured on: better said now than as failed cells.
    const silent: string[] = [];
    for (const h of saved.hosts) if (!(await (this.options.sshAnswers ?? sshBannerSeen)(h.ssh.host, h.ssh.port, 2000))) silent.push(`${h.deployment}/${h.role} (${h.ssh.host}:${h.ssh.port})`);
    if (silent.length) throw new LocalTargetError(`local target: run ${record.runId}'s hosts do not all answer SSH any more: ${silent.join(", ")}`);
    const ticks = processStartTicks(process.pid);
    if (ticks === null) throw new LocalTargetError("local target: cannot read this process's start time from /proc");
    const names: RunNames = { runId: record.runId, short: record.short, namespacePrefix: record.namespacePrefix, rootLinkPrefix: record.rootLinkPrefix };
    const taken: RunRecord = { ...record, pid: process.pid, pidStartTicks: ticks, ended: null };
    writeRunRecord(taken, this.options.recordsDir);
    this.created = { names, ownsPrefix: true, namespaces: [], rootLinks: [], tempDir: record.tempDir, keysDir: record.keysDir, processes: [], aborted: false, record: taken, shaping: null };
    // Their helpers run on in their namespaces (detached, like the sshds): checkHosts() watches them, down() stops them.
    this.delayLineNamespaces = new Set(saved.hosts.filter((h) => h.actual.latencyMechanism === "delay-line").map((h) => String(h.actual.namespace)));
    this.log = (m) => log(`local: ${m}`);
    this.adopted = saved;
    log(`local: re-attached to the ${saved.hosts.length} hosts run ${record.runId} left up (its runner, pid ${record.pid}, died); this process owns them now`);
    return saved;
  }

  /** up() on adopted hosts: their saved endpoints, once every host the plan needs is among them. */
  private adoptedEnvironment(plan: Plan, ctx: TargetContext): Environment {
    const saved = this.adopted!;
    const missing = plan.deployments.flatMap((d) => d.hosts.filter((h) => !saved.hosts.some((s) => s.deployment === d.id && s.role === h.role)).map((h) => `${d.id}/${h.role}`));
    if (missing.length) throw new LocalTargetError(`local target: the re-attached hosts of run ${saved.runId} do not include ${missing.join(", ")}`);
    const wanted = new Set(plan.deployments.map((d) => d.id));
    // The same names, the same plan: the same fabric the dead runner set up (topology.ts is a pure function of them).
    this.topologies = new Map(plan.deployments.map((d) => [d.id, buildDeploymentTopology(d, this.created!.names)]));
    this.log = (m) => ctx.log(`local: ${m}`);
    ctx.log(`local: using the ${saved.hosts.length} hosts run ${saved.runId} left up (brought up at ${saved.savedAt})`);
    return {
      hosts: saved.hosts.filter((h) => wanted.has(h.deployment)).map((h) => ({ ...h, actual: { ...h.actual } })),
      shaping: saved.shaping,
      facts: { ...saved.facts, reattached: `the hosts run ${saved.runId} brought up at ${saved.savedAt} and left up when its runner died, re-attached: the same hosts, not a new draw` },
    };
  }

  /**
   * The deployment's namespaces against the topology up() set up: a link that went down and came
   * back lost every route through it (the kernel deletes them), which is restored here; a link
   * still down is reported (someone put it down: not ours to bring up). See networkRepair.ts.
   */
  async checkHosts(deployment: string): Promise<HostCheck> {
    const t = this.topologies.get(deployment);
    if (!t || !this.created || this.created.aborted) return { restored: [], problems: [] };
    const hostLabel = new Map(t.hosts.map((h) => [h.namespace, `host ${h.role} (${h.hostname}, namespace ${h.namespace})`]));
    let check: HostCheck;
    try {
      check = await checkAndRepair((argv) => this.exec(argv, { timeoutMs: 10_000 }), expectedNetwork(t, (ns) => hostLabel.get(ns) ?? `router namespace ${ns}`));
    } catch (error) {
      check = { restored: [], problems: [`local target: could not check deployment ${deployment}'s network: ${(error as Error).message}`] };
    }
    const deadHelpers = await this.deadDelayLines(t.hosts.map((h) => h.namespace).filter((ns) => this.delayLineNamespaces.has(ns)));
    const dead = deadHelpers.map((ns) => `${hostLabel.get(ns) ?? ns}: its delay line (${HELPER_NAME}) is not running: its packets to its peers are dropped (their NFQUEUE has no listener); not restarted`);
    return { restored: check.restored, problems: [...check.problems, ...dead] };
  }

  /** Of `namespaces`, those with no delay-line helper running in them. */
  private async deadDelayLines(namespaces: readonly string[]): Promise<string[]> {
    const dead: string[] = [];
    for (const ns of namespaces) {
      let alive = false;
      for (const pid of await namespacePids(this.exec, ns)) {
        const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
        if (cmdline.split("\0").some((arg) => basename(arg) === HELPER_NAME)) alive = true;
      }
      if (!alive) dead.push(ns);
    }
    return dead;
  }

  /** Each delay-line helper's summary (lateness, drops) from its log in the host folders, to the run's log. */
  /**
   * Each helper's last words (its summary: packets released, dropped and why, how late), logged
   * and gathered into one record of what the delay line did with the run's real traffic, for
   * results.json (teardown.delayLine). Undefined when the run had no delay line.
   */
  private async delayLineSummaries(tempDir: string): Promise<DelayLineRunSummary | undefined> {
    const hostsDir = join(tempDir, "hosts");
    const hostDirs = await readdir(hostsDir).catch(() => [] as string[]);
    const records: DelayLineHelperRecord[] = [];
    for (const host of hostDirs) {
      const files = (await readdir(join(hostsDir, host)).catch(() => [] as string[])).filter((f) => /^delayline-.*\.log$/.test(f));
      for (const f of files) {
        const summary = parseHelperSummary(await readFile(join(hostsDir, host, f), "utf8").catch(() => ""));
        records.push({ name: host, summary });
        this.log(
          summary
            ? `delay line of ${host}: released ${summary.released} packets, dropped ${summary.dropped}; release late by p50 ${summary.lateP50Us} µs, p99 ${summary.lateP99Us} µs, max ${summary.lateMaxUs} µs`
            : `delay line of ${host}: no summary in its log (it was killed, or died): ${join(hostsDir, host, f)}`,
        );
      }
    }
    return records.length > 0 ? summarizeDelayLineRun(records) : undefined;
  }

  async down(): Promise<TeardownReport> {
    const c = this.created;
    if (!c) return { status: "not-started", errors: [], removed: [] };
    // An up() still running stops at its next step; wait for it so nothing is created behind our back.
    c.aborted = true;
    if (this.pendingUp) await this.pendingUp;
    const errors: string[] = [];
    const removed: string[] = [];
    const prefix = c.names.namespacePrefix;
    const linkPrefix = c.names.rootLinkPrefix;
    const grace = this.options.killGraceMs ?? 2000;

    let present: string[] = [];
    try {
      present = await this.listNamespaces();
    } catch (e) {
      errors.push(`listing namespaces: ${(e as Error).message}`);
    }
    const ours = new Set(c.namespaces);
    if (c.ownsPrefix) for (const n of present) if (n.startsWith(prefix)) ours.add(n);
    const namespaces = [...ours].filter((n) => present.includes(n));

    // 0. The delay line's helpers first, while the hosts still send nothing: each writes its summary as it stops.
    if (c.shaping) {
      errors.push(...(await c.shaping.stop()));
      c.shaping = null;
    }
    // 1. Processes: everything inside the run's namespaces (an adopted run's helpers too), plus sshds we started.
    await Promise.all(namespaces.map((ns) => killNamespaceProcesses(this.exec, ns, grace, errors, removed)));
    const delayLine = c.tempDir !== null ? await this.delayLineSummaries(c.tempDir) : undefined;
    // Safety net: an sshd we launched that never entered its namespace (still running our config).
    for (const { process: p } of c.processes) {
      if (p.exit || p.pid <= 0 || c.tempDir === null) continue;
      const cmdline = await readFile(`/proc/${p.pid}/cmdline`, "utf8").catch(() => "");
      if (!cmdline.includes(c.tempDir)) continue;
      try {
        process.kill(p.pid, "SIGKILL");
        removed.push(`process ${p.pid} (sshd)`);
      } catch {
        /* already gone */
      }
    }

    // 2. Root-side veths.
    const links = new Set(c.rootLinks);
    if (c.ownsPrefix) {
      try {
        for (const l of await this.listRootLinks()) if (l.startsWith(linkPrefix)) links.add(l);
      } catch (e) {
        errors.push(`listing links: ${(e as Error).message}`);
      }
    }
    const rootLinksNow = await this.listRootLinks().catch(() => [] as string[]);
    for (const l of links) {
      if (!rootLinksNow.includes(l)) continue;
      const r = await this.exec(["ip", "link", "del", l]);
      if (r.code === 0) removed.push(`link ${l}`);
      else errors.push(`\`ip link del ${l}\`: ${r.stderr.trim()}`);
    }

    // 3. Namespaces.
    for (const ns of namespaces) {
      const r = await this.exec(["ip", "netns", "del", ns]);
      if (r.code === 0) removed.push(`namespace ${ns}`);
      else errors.push(`\`ip netns del ${ns}\`: ${r.stderr.trim()}`);
    }

    // 4. Temporary files and keys.
    for (const dir of [c.tempDir, c.keysDir]) {
      if (dir === null) continue;
      try {
        await rm(dir, { recursive: true, force: true });
        removed.push(`directory ${dir}`);
      } catch (e) {
        errors.push(`removing ${dir}: ${(e as Error).message}`);
      }
    }

    // 5. Check.
    if (c.ownsPrefix) {
      const left = (await this.listNamespaces().catch(() => [] as string[])).filter((n) => n.startsWith(prefix));
      if (left.length > 0) errors.push(`namespaces still present after teardown: ${left.join(", ")}`);
      const leftLinks = (await this.listRootLinks().catch(() => [] as string[])).filter((n) => n.startsWith(linkPrefix));
      if (leftLinks.length > 0) errors.push(`links still present after teardown: ${leftLinks.join(", ")}`);
    }

    // 6. The record: gone when everything is; kept, marked ended, for `latlab cleanup` to finish otherwise.
    if (c.record) {
      try {
        if (errors.length === 0) removeRunRecord(c.record.short, this.options.recordsDir);
        else writeRunRecord({ ...c.record, ended: "failed" }, this.options.recordsDir);
      } catch (e) {
        errors.push(`updating the run record in ${this.options.recordsDir ?? localRunsDir()}: ${(e as Error).message}`);
      }
      c.record = null;
    }

    c.namespaces = [];
    c.rootLinks = [];
    c.tempDir = null;
    c.keysDir = null;
    c.processes = [];
    return { status: errors.length > 0 ? "failed" : "ok", errors, removed, ...(delayLine ? { delayLine } : {}) };
  }

  // -------------------------------------------------------------------------------------------

  /** The CPU list the host's sshd may run on, from its pid file and /proc (null: not readable). */
  private async sshdCpus(rt: HostRuntime): Promise<string | null> {
    try {
      const pid = (await readFile(join(rt.dir, "sshd.pid"), "utf8")).trim();
      if (!/^\d+$/.test(pid)) return null;
      const status = await readFile(`/proc/${pid}/status`, "utf8");
      const list = /^Cpus_allowed_list:\s*(\S+)/m.exec(status)?.[1];
      return list === undefined ? null : formatCpuList(parseCpuList(list));
    } catch {
      return null;
    }
  }

  private label(namespace: string): string {
    return this.labels.get(namespace) ?? `namespace ${namespace}`;
  }

  /** Runs a setup command; on failure throws naming the host/namespace, the command and its stderr. */
  private async run(namespace: string, argv: readonly string[]): Promise<void> {
    if (this.created?.aborted) throw new LocalTargetError(`local target: ${this.label(namespace)}: up() interrupted by down()`);
    if (this.signal?.aborted) throw new LocalTargetError(`local target: interrupted while bringing hosts up (before \`${formatArgv(argv)}\`)`);
    try {
      await mustExec(this.exec, argv, `local target: ${this.label(namespace)}`);
    } catch (e) {
      if (e instanceof CommandError) throw new LocalTargetError(e.message);
      throw e;
    }
  }

  private async addNamespace(ns: string): Promise<void> {
    await this.run(ns, ["ip", "netns", "add", ns]);
    this.created?.namespaces.push(ns);
  }

  private async deleteNamespace(ns: string): Promise<void> {
    await this.run(ns, ["ip", "netns", "del", ns]);
    if (this.created) this.created.namespaces = this.created.namespaces.filter((n) => n !== ns);
  }

  private async listNamespaces(): Promise<string[]> {
    const r = await mustExec(this.exec, ["ip", "netns", "list"], "local target: listing namespaces");
    return parseNetnsList(r.stdout);
  }

  private async listRootLinks(): Promise<string[]> {
    const r = await mustExec(this.exec, ["ip", "-o", "link", "show"], "local target: listing interfaces");
    return parseLinkNames(r.stdout);
  }

  /**
   * Picks a /30 for a host's management link that nothing in the root namespace uses, puts the
   * root side's address on it, and re-checks (another run may have raced us) before keeping it.
   */
  private async assignMgmt(h: TopoHost, rootLink: string, start: number, taken: Set<number>): Promise<MgmtBlock> {
    const tried = new Set(taken);
    for (let attempt = 0; attempt < 16; attempt++) {
      const addrs = await mustExec(this.exec, ["ip", "-4", "-o", "addr", "show"], `local target: ${this.label(h.namespace)}: listing root addresses`);
      const routes = await mustExec(this.exec, ["ip", "-4", "route", "show", "table", "all"], `local target: ${this.label(h.namespace)}: listing root routes`);
      const block = pickMgmtBlock(start, parseInUsePrefixes(addrs.stdout, routes.stdout), tried);
      await this.run(h.namespace, ["ip", "addr", "add", `${block.rootAddress}/30`, "dev", rootLink]);
      const after = parseAddrLines((await this.exec(["ip", "-4", "-o", "addr", "show"])).stdout);
      const cidr = parseCidr(block.cidr);
      const clash = after.some((a) => a.ifname !== rootLink && cidrContains(cidr, ipToInt(a.address)));
      if (!clash) return block;
      await this.exec(["ip", "addr", "del", `${block.rootAddress}/30`, "dev", rootLink]);
      tried.add(block.index);
      start = block.index + 1;
    }
    throw new LocalTargetError(`local target: ${this.label(h.namespace)}: no free management /30 after 16 attempts`);
  }

  /** `ip -j …` in a namespace, parsed. */
  private async ipJson(ns: string, args: readonly string[]): Promise<IpLinkJson[]> {
    const argv = ["ip", "-n", ns, "-j", ...args];
    const r = await mustExec(this.exec, argv, `local target: ${this.label(ns)}: reading back the fabric`);
    const parsed: unknown = JSON.parse(r.stdout.trim() === "" ? "[]" : r.stdout);
    return Array.isArray(parsed) ? (parsed as IpLinkJson[]) : [];
  }

  /** The namespace and interface at the other end of veth `ifname` in `ns`, as the kernel has it. */
  private async vethPeer(ns: string, ifname: string): Promise<{ namespace: string; ifname: string; master: string | null } | null> {
    const [me] = await this.ipJson(ns, ["link", "show", "dev", ifname]);
    if (!me || me.link_index === undefined || me.link_netnsid === undefined) return null;
    const ids = await mustExec(this.exec, ["ip", "-n", ns, "netns", "list-id"], `local target: ${this.label(ns)}: reading back the fabric`);
    const peerNs = parseNetnsIds(ids.stdout).get(me.link_netnsid);
    if (peerNs === undefined) return null;
    const peer = (await this.ipJson(peerNs, ["link", "show"])).find((l) => l.ifindex === me.link_index && l.link_index === me.ifindex);
    if (!peer || peer.ifname === undefined) return null;
    return { namespace: peerNs, ifname: peer.ifname, master: peer.master ?? null };
  }

  /**
   * What a host is really attached to, read back from the kernel and named after the built
   * model: eth0's peer port → its zone router namespace and rack bridge (→ zone, PPG); the zone
   * router's up0 peer → its region router namespace (→ region); the addresses on eth0 and lo.
   */
  private async readWiring(t: DeploymentTopology, h: TopoHost): Promise<HostWiring> {
    const nsOf = (name: string | undefined) => t.namespaces.find((n) => n.name === name);
    const port = await this.vethPeer(h.namespace, h.dataIfname);
    const zr = nsOf(port?.namespace);
    const zoneRouter = zr?.kind === "zone-router" ? zr : undefined;
    const bridge = port && port.master !== null ? t.bridges.find((b) => b.namespace === port.namespace && b.name === port.master) : undefined;
    const uplink = zoneRouter ? await this.vethPeer(zoneRouter.name, "up0") : null;
    const rr = nsOf(uplink?.namespace);
    const regionRouter = rr?.kind === "region-router" ? rr : undefined;
    const pubLink = regionRouter ? await this.vethPeer(regionRouter.name, PUBLIC_UPLINK_IFNAME) : null;
    const pub = nsOf(pubLink?.namespace);
    const addrs = parseAddrLines((await mustExec(this.exec, ["ip", "-n", h.namespace, "-4", "-o", "addr", "show"], `local target: ${this.label(h.namespace)}: reading back addresses`)).stdout);
    const publicNet = parseCidr(PUBLIC_NET);
    return {
      region: regionRouter?.region ?? null,
      vnet: regionRouter?.vnet ?? null,
      zone: zoneRouter ? (zoneRouter.zone ?? null) : null,
      ppg: bridge ? bridge.ppg : null,
      rack: port && port.master !== null ? `${port.namespace}/${port.master}` : null,
      zoneRouter: zoneRouter?.name ?? null,
      regionRouter: regionRouter?.name ?? null,
      publicRouter: pub?.kind === "public-router" ? pub.name : null,
      privateAddress: addrs.find((a) => a.ifname === h.dataIfname)?.address ?? null,
      publicAddress: addrs.find((a) => a.ifname === "lo" && cidrContains(publicNet, ipToInt(a.address)))?.address ?? null,
    };
  }
}
