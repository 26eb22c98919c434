import { mkdir, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { execCommand, mustExec, type ExecFn } from "../../../local/exec.ts";
import { cidrContains, cidrOverlaps, intToIp, ipToInt, parseCidr, parseInUsePrefixes, parseLinkNames, parseNetnsList, type Cidr } from "../../../local/network/names.ts";
import { killNamespaceProcesses, namespacePids } from "../../../local/network/namespaceProcesses.ts";
import type { CloudView, StoredResource } from "../arm/cloud.ts";
import type { FaultBook } from "../arm/faults.ts";
import { nicIpConfig, subnetPrefix, TYPES, vnetPrefixes, type NetworkAllocator, type VmHooks } from "../arm/typeRules.ts";
import { primaryNicOf, vmPlacementOf, type VmPlacement } from "./latencyPlacement.ts";
import { nsgRuleset, nsgRulesOf } from "./nsgRuleset.ts";
import { VmShaping, type ShapingFunctions, type VmShapingState } from "./vmShaping.ts";
import { ALLOWED_VNET_SPACE, fabricNames, macForLink, natRuleset, PUBLIC_POOL_SPACE, subnetGateway, vnetTransit, type FabricNames, type NatEntry } from "./vnetRuleset.ts";

/**
 * The kernel side of the emulator: VNets, subnets, peerings, public addresses and NSGs become
 * namespaces, bridges, veths, routes and nftables rules (see vnetRuleset.ts for the picture);
 * a VM becomes a namespace on its subnet's bridge in which a host boots (../vm). `sync()`
 * brings the kernel in line with ARM's state after every change — it creates what is missing
 * and removes what ARM no longer has — so a wrong NSG rule or a missing peering breaks traffic
 * here as it would on Azure. Between the VMs it has booted, it applies latlab's latency model by
 * their placement in ARM (latencyPlacement.ts, vmShaping.ts): a rehearsal shows the shape of the
 * answer, modelled, not measured on Azure.
 */

export interface VmBootRequest {
  namespace: string;
  stateDir: string;
  computerName: string;
  adminUsername: string;
  sshPublicKeys: { path: string; keyData: string }[];
  customData?: string;
  imds: { compute: Record<string, unknown>; network: Record<string, unknown> };
  faults?: { neverReady?: boolean };
}

/** Boots and stops the host inside a VM's namespace (../vm). */
export interface VmRuntime {
  boot(request: VmBootRequest): Promise<void>;
  stop(namespace: string, stateDir: string): Promise<{ errors: string[]; removed: string[] }>;
}

export interface FabricOptions {
  /** Short id in every name this fabric creates (namespaces az<short>-…, the root link az<short>-i). */
  short: string;
  /** Folder for VMs' state (boot logs, overlay metadata). */
  stateDir: string;
  vms: VmRuntime;
  exec?: ExecFn;
  log?: (message: string) => void;
  /** How latency is detected and applied (default: the local target's, network/latencyShaping.ts). */
  shaping?: ShapingFunctions;
}

/** The data interface of a VM's namespace (its NIC). */
const VM_DEV = "eth0";

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const props = (r: StoredResource): Record<string, unknown> => (isRecord(r.body.properties) ? r.body.properties : {});
const refId = (v: unknown): string | undefined => (isRecord(v) && typeof v.id === "string" ? v.id : undefined);
const lower = (s: string | undefined) => (s ?? "").toLowerCase();

const PICK_LOCK = "/run/latlab-azure-emulator.lock";

/** Runs `work` holding a machine-wide lock (a directory: mkdir is atomic); a lock older than a minute is a dead holder's. */
async function withMachineLock<T>(path: string, work: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      await mkdir(path);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      const age = Date.now() - ((await stat(path).catch(() => null))?.mtimeMs ?? Date.now());
      if (age > 60_000) await rm(path, { recursive: true, force: true });
      else if (attempt > 600) throw new Error(`azure emulator: ${path} has been held for a minute; remove it if no emulator is starting`);
      else await new Promise((r) => setTimeout(r, 100));
    }
  }
  try {
    return await work();
  } finally {
    await rm(path, { recursive: true, force: true });
  }
}

/** The inet namespace's filter: only the public /24 may be forwarded to the root namespace. */
export function edgeRuleset(publicBlock: string): string {
  return [
    "table inet latlab_edge {}",
    "delete table inet latlab_edge",
    "table inet latlab_edge {",
    "  chain forward {",
    "    type filter hook forward priority 0; policy accept;",
    `    oifname "root0" ip saddr != ${publicBlock} drop`,
    "  }",
    "}",
    "",
  ].join("\n");
}

const ROUTER_SYSCTLS =
  "echo 1 > /proc/sys/net/ipv4/ip_forward && for c in all default; do echo 0 > /proc/sys/net/ipv4/conf/$c/rp_filter; done";

export class Fabric implements NetworkAllocator, VmHooks {
  readonly names: FabricNames;
  /** The runner's address as the VMs see it (the "what is my IP" of a rehearsal). */
  runnerAddress = "";
  private publicBlock: Cidr | null = null;
  private readonly usedPublic = new Set<string>();
  private readonly exec: ExecFn;
  private lock: Promise<unknown> = Promise.resolve();
  /** Last ruleset applied per namespace and table: unchanged text is not applied again. */
  private readonly applied = new Map<string, string>();
  private readonly inetRoutes = new Map<string, string>();
  /** VMs whose host this fabric booted (by ARM key): the ones latency is shaped between. */
  private readonly booted = new Map<string, string>();
  private readonly shaping: VmShaping;
  /** ARM's state as the last sync saw it (a live view: the emulator's Cloud); stopVm is given none. */
  private lastView?: CloudView;

  private readonly options: FabricOptions;

  constructor(options: FabricOptions) {
    this.options = options;
    this.names = fabricNames(options.short);
    this.exec = options.exec ?? execCommand;
    this.shaping = new VmShaping({
      exec: this.exec,
      probeNamespace: `az${options.short}-probe`,
      logDir: join(options.stateDir, "shaping"),
      log: (m) => this.options.log?.(m),
      ...(options.shaping ? { functions: options.shaping } : {}),
    });
  }

  /** How latency is shaped between the VMs now (the rehearsal's results.json says it). */
  shapingState(): VmShapingState {
    return this.shaping.state();
  }

  private log(m: string) {
    this.options.log?.(`emulator: ${m}`);
  }

  private async run(argv: readonly string[], what: string): Promise<void> {
    await mustExec(this.exec, argv, `azure emulator: ${what}`);
  }

  private serialized<T>(work: () => Promise<T>): Promise<T> {
    const next = this.lock.then(work, work);
    this.lock = next.catch(() => undefined);
    return next;
  }

  private async namespaces(): Promise<string[]> {
    return parseNetnsList((await mustExec(this.exec, ["ip", "netns", "list"], "azure emulator: listing namespaces")).stdout);
  }

  private async linksIn(ns: string): Promise<string[]> {
    const r = await this.exec(["ip", "-n", ns, "-o", "link", "show"]);
    return r.code === 0 ? parseLinkNames(r.stdout) : [];
  }

  /**
   * Creates the inet namespace and its link to the root namespace, on a /24 of PUBLIC_POOL_SPACE
   * nothing in the root namespace uses (another run, the local target's management links).
   * Adopts them when a previous emulator of the same short id left them (its state is resumed).
   */
  async start(): Promise<void> {
    const existing = (await this.namespaces()).includes(this.names.inet);
    if (existing) {
      const r = await mustExec(this.exec, ["ip", "-4", "-o", "addr", "show", "dev", this.names.rootLink], "azure emulator: reading the root link");
      const m = /inet (\d+\.\d+\.\d+\.\d+)\/30/.exec(r.stdout);
      if (!m) throw new Error(`azure emulator: namespace ${this.names.inet} exists but ${this.names.rootLink} has no address; remove both and start again`);
      this.runnerAddress = m[1]!;
      this.publicBlock = { network: ipToInt(this.runnerAddress) - (ipToInt(this.runnerAddress) % 256), prefix: 24 };
      this.log(`resuming the fabric on ${intToIp(this.publicBlock.network)}/24`);
      return;
    }
    // Two emulators starting at once must not pick the same /24: the choice and the setup are one step.
    await withMachineLock(PICK_LOCK, async () => {
      const addrs = await mustExec(this.exec, ["ip", "-4", "-o", "addr", "show"], "azure emulator: listing root addresses");
      const routes = await mustExec(this.exec, ["ip", "-4", "route", "show", "table", "all"], "azure emulator: listing root routes");
      const inUse = parseInUsePrefixes(addrs.stdout, routes.stdout);
      const pool = parseCidr(PUBLIC_POOL_SPACE);
      // From the top of the pool down: the local target takes its management /30s from the bottom up.
      let block: Cidr | undefined;
      for (let n = 2 ** (24 - pool.prefix) - 1; n >= 0; n--) {
        const c = { network: pool.network + n * 256, prefix: 24 };
        if (!inUse.some((u) => cidrOverlaps(u, c))) {
          block = c;
          break;
        }
      }
      if (!block) throw new Error(`azure emulator: no free /24 in ${PUBLIC_POOL_SPACE} for public addresses`);
      try {
        await this.createEdge(block);
      } catch (e) {
        // Half an edge is worse than none: nothing would know to remove it.
        await this.exec(["ip", "netns", "del", this.names.inet]);
        await this.exec(["ip", "link", "del", this.names.rootLink]);
        throw e;
      }
      this.publicBlock = block;
      this.runnerAddress = intToIp(block.network + 1);
    });
    this.log(`fabric up: public addresses ${intToIp(this.publicBlock!.network)}/24, the runner is ${this.runnerAddress}`);
  }

  /** The inet namespace, its link to the root namespace, and the route to the public /24 through it. */
  private async createEdge(block: Cidr): Promise<void> {
    const root = intToIp(block.network + 1);
    const inet = intToIp(block.network + 2);
    const ns = this.names.inet;
    await this.run(["ip", "netns", "add", ns], `creating ${ns}`);
    await this.run(["ip", "-n", ns, "link", "set", "lo", "up"], `${ns}: lo up`);
    await this.run(["ip", "netns", "exec", ns, "sh", "-c", ROUTER_SYSCTLS], `${ns}: forwarding`);
    await this.run(["ip", "link", "add", this.names.rootLink, "type", "veth", "peer", "name", "root0", "netns", ns], `creating ${this.names.rootLink}`);
    await this.run(["ip", "addr", "add", `${root}/30`, "dev", this.names.rootLink], `addressing ${this.names.rootLink}`);
    await this.run(["ip", "link", "set", this.names.rootLink, "up"], `${this.names.rootLink} up`);
    await this.run(["ip", "-n", ns, "addr", "add", `${inet}/30`, "dev", "root0"], `${ns}: addressing root0`);
    await this.run(["ip", "-n", ns, "link", "set", "root0", "up"], `${ns}: root0 up`);
    // Only public addresses reach the root namespace: a packet from a VM's private address (a VM
    // without a public IP) would get an answer the root namespace sends out by its default route.
    await this.applyNft(ns, "edge", edgeRuleset(`${intToIp(block.network)}/24`));
    await this.run(["ip", "route", "add", `${intToIp(block.network)}/24`, "via", inet, "dev", this.names.rootLink], "routing the public addresses");
  }

  /** An address of this fabric: a public IP of its /24, or inside the space its VNets may use. */
  owns(address: string): boolean {
    let n: number;
    try {
      n = ipToInt(address);
    } catch {
      return false;
    }
    return (this.publicBlock !== null && cidrContains(this.publicBlock, n)) || cidrContains(parseCidr(ALLOWED_VNET_SPACE), n);
  }

  // ---------------------------------------------------------------------------------------------
  // NetworkAllocator

  allocatePublicIp(): string {
    if (!this.publicBlock) throw new Error("azure emulator: the fabric is not started");
    for (let i = 8; i < 255; i++) {
      const ip = intToIp(this.publicBlock.network + i);
      if (!this.usedPublic.has(ip)) {
        this.usedPublic.add(ip);
        return ip;
      }
    }
    throw new Error("azure emulator: no public address left (a /24 per emulator)");
  }

  releasePublicIp(ip: string): void {
    this.usedPublic.delete(ip);
  }

  /** Marks addresses a resumed state already handed out. */
  adoptPublicIps(ips: readonly string[]): void {
    for (const ip of ips) this.usedPublic.add(ip);
  }

  addressSpaceProblem(prefix: string): string | undefined {
    let c: Cidr;
    try {
      c = parseCidr(prefix);
    } catch {
      return "not an IPv4 CIDR";
    }
    const allowed = parseCidr(ALLOWED_VNET_SPACE);
    if (!cidrContains(allowed, c.network) || c.prefix < allowed.prefix) {
      return `the emulator hosts VNets only inside ${ALLOWED_VNET_SPACE} (the benchmarking block), so that nothing on this machine ever sends to a real network; latlab's rehearsal asks for it (config latlab:addressSpace)`;
    }
    return undefined;
  }

  // ---------------------------------------------------------------------------------------------
  // Reconciliation

  /** Brings namespaces, bridges, peering links, NAT, public routes and NSG rules in line with ARM's state. */
  sync(view: CloudView): Promise<void> {
    return this.serialized(() => this.syncNow(view));
  }

  private async syncNow(view: CloudView): Promise<void> {
    this.lastView = view;
    const present = new Set(await this.namespaces());
    const vnets = view.all(TYPES.vnet).filter((v) => v.state !== "Deleting");
    const vnetBySeq = new Map(vnets.map((v) => [v.seq, v]));

    // VNet routers and their subnets.
    for (const v of vnets) {
      const ns = this.names.vnet(v.seq);
      if (!present.has(ns)) await this.createVnetRouter(v);
      const links = await this.linksIn(ns);
      const subnets = view.all(TYPES.subnet).filter((s) => s.parentKey === v.key && s.state !== "Deleting");
      for (const s of subnets) {
        const bridge = `sn${s.seq}`;
        const prefix = subnetPrefix(s);
        if (links.includes(bridge) || !prefix) continue;
        await this.run(["ip", "-n", ns, "link", "add", bridge, "type", "bridge"], `${ns}: subnet ${s.name}`);
        await this.run(["ip", "-n", ns, "addr", "add", subnetGateway(prefix).cidr, "dev", bridge], `${ns}: subnet ${s.name} gateway`);
        await this.run(["ip", "-n", ns, "link", "set", bridge, "up"], `${ns}: subnet ${s.name} up`);
      }
      const wanted = new Set(subnets.map((s) => `sn${s.seq}`));
      for (const l of links.filter((x) => /^sn\d+$/.test(x) && !wanted.has(x))) await this.run(["ip", "-n", ns, "link", "del", l], `${ns}: removing ${l}`);
    }

    // Peering links: a pair is linked while both of its peerings are Connected.
    const connected = new Set<string>();
    for (const p of view.all(TYPES.peering)) {
      if (p.state === "Deleting" || props(p).peeringState !== "Connected") continue;
      const a = vnets.find((v) => v.key === p.parentKey);
      const b = vnets.find((v) => lower(v.id) === lower(refId(props(p).remoteVirtualNetwork)));
      if (a && b) connected.add(a.seq < b.seq ? `${a.seq}:${b.seq}` : `${b.seq}:${a.seq}`);
    }
    for (const v of vnets) {
      const ns = this.names.vnet(v.seq);
      for (const l of (await this.linksIn(ns)).filter((x) => /^pr\d+$/.test(x))) {
        const other = Number(l.slice(2));
        const key = v.seq < other ? `${v.seq}:${other}` : `${other}:${v.seq}`;
        if (!connected.has(key)) await this.run(["ip", "-n", ns, "link", "del", l], `${ns}: unpeering`);
      }
    }
    for (const key of connected) {
      const [a, b] = key.split(":").map(Number) as [number, number];
      const va = vnetBySeq.get(a)!;
      const vb = vnetBySeq.get(b)!;
      const nsA = this.names.vnet(a);
      const nsB = this.names.vnet(b);
      if ((await this.linksIn(nsA)).includes(`pr${b}`)) continue;
      await this.run(["ip", "-n", nsA, "link", "add", `pr${b}`, "type", "veth", "peer", "name", `pr${a}`, "netns", nsB], `peering ${va.name} and ${vb.name}`);
      await this.run(["ip", "-n", nsA, "link", "set", `pr${b}`, "up"], `peering ${va.name}: up`);
      await this.run(["ip", "-n", nsB, "link", "set", `pr${a}`, "up"], `peering ${vb.name}: up`);
      // No addresses on the link: the next hop is the other router's id (its inet0 address), onlink.
      for (const p of vnetPrefixes(vb)) await this.run(["ip", "-n", nsA, "route", "add", p, "via", vnetTransit(b).router, "dev", `pr${b}`, "onlink"], `peering ${va.name} → ${p}`);
      for (const p of vnetPrefixes(va)) await this.run(["ip", "-n", nsB, "route", "add", p, "via", vnetTransit(a).router, "dev", `pr${a}`, "onlink"], `peering ${vb.name} → ${p}`);
    }

    // Public addresses: NAT in the VNet router, a /32 route in the inet namespace.
    const nat = new Map<number, NatEntry[]>();
    const publicRoutes = new Map<string, string>();
    for (const nic of view.all(TYPES.nic).filter((n) => n.state !== "Deleting")) {
      const cfg = nicIpConfig(nic);
      const pip = refId(cfg.publicIPAddress) ? view.get(refId(cfg.publicIPAddress)!) : undefined;
      const publicIp = pip && typeof props(pip).ipAddress === "string" ? (props(pip).ipAddress as string) : undefined;
      const subnet = refId(cfg.subnet) ? view.get(refId(cfg.subnet)!) : undefined;
      const vnet = subnet ? vnets.find((v) => v.key === subnet.parentKey) : undefined;
      if (!publicIp || !vnet || typeof cfg.privateIPAddress !== "string") continue;
      nat.set(vnet.seq, [...(nat.get(vnet.seq) ?? []), { privateIp: cfg.privateIPAddress, publicIp }]);
      publicRoutes.set(publicIp, `${vnetTransit(vnet.seq).router} dev vn${vnet.seq}`);
    }
    for (const v of vnets) await this.applyNft(this.names.vnet(v.seq), "nat", natRuleset(nat.get(v.seq) ?? []));
    for (const [ip, via] of publicRoutes) {
      if (this.inetRoutes.get(ip) === via) continue;
      const [gw, , dev] = via.split(" ");
      await this.run(["ip", "-n", this.names.inet, "route", "replace", `${ip}/32`, "via", gw!, "dev", dev!], `routing public address ${ip}`);
      this.inetRoutes.set(ip, via);
    }
    for (const ip of [...this.inetRoutes.keys()].filter((x) => !publicRoutes.has(x))) {
      await this.exec(["ip", "-n", this.names.inet, "route", "del", `${ip}/32`]);
      this.inetRoutes.delete(ip);
    }

    // NSGs of running VMs.
    for (const vm of view.all(TYPES.vm)) {
      const ns = this.names.vm(vm.seq);
      if (vm.state === "Deleting" || !present.has(ns)) continue;
      const nic = this.primaryNic(vm, view);
      if (!nic) continue;
      const nsgRes = refId(props(nic).networkSecurityGroup) ? view.get(refId(props(nic).networkSecurityGroup)!) : undefined;
      const vnet = this.vnetOfNic(nic, view);
      const space = vnet ? [...vnetPrefixes(vnet), ...this.peeredSpace(vnet, view, vnets)] : [];
      await this.applyNft(ns, "nsg", nsgRuleset(nsgRes ? nsgRulesOf(nsgRes.body) : undefined, space));
    }

    // VNets ARM no longer has.
    const wanted = new Set(vnets.map((v) => this.names.vnet(v.seq)));
    const isVnetRouter = new RegExp(`^az${this.options.short}-vn\\d+$`);
    for (const ns of present) {
      if (isVnetRouter.test(ns) && !wanted.has(ns)) {
        await this.exec(["ip", "netns", "del", ns]);
        this.applied.delete(`${ns}/nat`);
      }
    }

    // Latency between the booted VMs: re-applied only when they or their placement changed.
    await this.reshape(view);
  }

  /** Applies the latency model between the VMs this fabric booted that ARM still has running. */
  private async reshape(view: CloudView): Promise<void> {
    const placements: VmPlacement[] = [];
    for (const vm of view.all(TYPES.vm)) {
      const ns = this.booted.get(vm.key);
      if (!ns || vm.state === "Deleting") continue;
      const p = vmPlacementOf(vm, view, ns, VM_DEV);
      if ("problem" in p) this.log(`latency model: ${p.problem}; not shaped`);
      else placements.push(p);
    }
    await this.shaping.reapply(placements);
  }

  private peeredSpace(vnet: StoredResource, view: CloudView, vnets: StoredResource[]): string[] {
    const out: string[] = [];
    for (const p of view.all(TYPES.peering)) {
      if (p.parentKey !== vnet.key || props(p).peeringState !== "Connected") continue;
      const remote = vnets.find((v) => lower(v.id) === lower(refId(props(p).remoteVirtualNetwork)));
      if (remote) out.push(...vnetPrefixes(remote));
    }
    return out;
  }

  private async createVnetRouter(v: StoredResource): Promise<void> {
    const ns = this.names.vnet(v.seq);
    const t = vnetTransit(v.seq);
    this.log(`VNet ${v.name}: router namespace ${ns}`);
    try {
      await this.run(["ip", "netns", "add", ns], `creating ${ns}`);
      await this.run(["ip", "-n", ns, "link", "set", "lo", "up"], `${ns}: lo up`);
      await this.run(["ip", "netns", "exec", ns, "sh", "-c", ROUTER_SYSCTLS], `${ns}: forwarding`);
      await this.run(["ip", "-n", this.names.inet, "link", "add", `vn${v.seq}`, "type", "veth", "peer", "name", "inet0", "netns", ns], `${ns}: link to the internet`);
      await this.run(["ip", "-n", this.names.inet, "addr", "add", `${t.inet}/30`, "dev", `vn${v.seq}`], `${ns}: internet side address`);
      await this.run(["ip", "-n", this.names.inet, "link", "set", `vn${v.seq}`, "up"], `${ns}: internet side up`);
      await this.run(["ip", "-n", ns, "addr", "add", `${t.router}/30`, "dev", "inet0"], `${ns}: router address`);
      await this.run(["ip", "-n", ns, "link", "set", "inet0", "up"], `${ns}: inet0 up`);
      await this.run(["ip", "-n", ns, "route", "add", "default", "via", t.inet, "dev", "inet0"], `${ns}: default route`);
    } catch (e) {
      // A router half made would be taken for a whole one by the next sync: none at all instead.
      await this.exec(["ip", "netns", "del", ns]);
      await this.exec(["ip", "-n", this.names.inet, "link", "del", `vn${v.seq}`]);
      throw e;
    }
  }

  private async applyNft(ns: string, what: string, script: string): Promise<void> {
    const key = `${ns}/${what}`;
    if (this.applied.get(key) === script) return;
    // Kept as a file: what was applied can be read after the fact (and nft reads it from there).
    const dir = join(this.options.stateDir, "nft");
    await mkdir(dir, { recursive: true });
    const file = join(dir, `${ns}-${what}.nft`);
    await writeFile(file, script);
    const r = await this.exec(["ip", "netns", "exec", ns, "nft", "-f", file]);
    if (r.code !== 0) throw new Error(`azure emulator: ${ns}: applying the ${what} rules (${file}) failed: ${r.stderr.trim()}`);
    this.applied.set(key, script);
  }

  private primaryNic(vm: StoredResource, view: CloudView): StoredResource | undefined {
    return primaryNicOf(vm, view);
  }

  private vnetOfNic(nic: StoredResource, view: CloudView): StoredResource | undefined {
    const subnet = refId(nicIpConfig(nic).subnet) ? view.get(refId(nicIpConfig(nic).subnet)!) : undefined;
    return subnet ? view.all(TYPES.vnet).find((v) => v.key === subnet.parentKey) : undefined;
  }

  // ---------------------------------------------------------------------------------------------
  // VmHooks

  async startVm(vm: StoredResource, view: CloudView, faults: FaultBook): Promise<void> {
    const ns = this.names.vm(vm.seq);
    const nic = this.primaryNic(vm, view);
    if (!nic) throw new Error(`virtual machine ${vm.name} has no network interface`);
    const cfg = nicIpConfig(nic);
    const subnet = refId(cfg.subnet) ? view.get(refId(cfg.subnet)!) : undefined;
    const vnet = this.vnetOfNic(nic, view);
    const prefix = subnet ? subnetPrefix(subnet) : undefined;
    if (!subnet || !vnet || !prefix || typeof cfg.privateIPAddress !== "string") throw new Error(`virtual machine ${vm.name}: its NIC has no subnet or address`);
    vm.runtime.namespace = ns;
    const exists = (await this.namespaces()).includes(ns);
    if (exists && (await namespacePids(this.exec, ns)).length > 0) {
      // An update of a running VM (tags, say): Azure applies it without a reboot; the NSG and NAT follow.
      await this.sync(view);
      return;
    }
    if (!exists) {
      await this.serialized(async () => {
        await this.syncNow(view);
        const vnetNs = this.names.vnet(vnet.seq);
        this.log(`VM ${vm.name}: namespace ${ns} on subnet ${subnet.name} (${cfg.privateIPAddress})`);
        await this.run(["ip", "netns", "add", ns], `creating ${ns}`);
        await this.run(["ip", "-n", ns, "link", "set", "lo", "up"], `${ns}: lo up`);
        await this.run(["ip", "-n", vnetNs, "link", "add", `vm${vm.seq}`, "type", "veth", "peer", "name", "eth0", "netns", ns], `${ns}: NIC`);
        await this.run(["ip", "-n", vnetNs, "link", "set", `vm${vm.seq}`, "master", `sn${subnet.seq}`], `${ns}: NIC on subnet ${subnet.name}`);
        await this.run(["ip", "-n", vnetNs, "link", "set", `vm${vm.seq}`, "up"], `${ns}: NIC port up`);
        if (typeof props(nic).macAddress === "string") await this.run(["ip", "-n", ns, "link", "set", "eth0", "address", macForLink(props(nic).macAddress as string)], `${ns}: MAC address`);
        await this.run(["ip", "-n", ns, "addr", "add", `${cfg.privateIPAddress}/${parseCidr(prefix).prefix}`, "dev", "eth0"], `${ns}: private address`);
        await this.run(["ip", "-n", ns, "link", "set", "eth0", "up"], `${ns}: eth0 up`);
        await this.run(["ip", "-n", ns, "route", "add", "default", "via", subnetGateway(prefix).address, "dev", "eth0"], `${ns}: default route`);
        await this.syncNow(view);
      });
    }
    const never = faults.take("vm-never-ready", TYPES.vm, vm.name);
    const p = props(vm);
    const os = isRecord(p.osProfile) ? p.osProfile : {};
    const linux = isRecord(os.linuxConfiguration) ? os.linuxConfiguration : {};
    const keys = isRecord(linux.ssh) && Array.isArray(linux.ssh.publicKeys) ? linux.ssh.publicKeys.filter(isRecord) : [];
    const stateDir = join(this.options.stateDir, "vms", `vm${vm.seq}`);
    // bootVm makes the VM's own folder (and refuses one that holds anything): only its parent here.
    await mkdir(join(this.options.stateDir, "vms"), { recursive: true });
    vm.runtime.stateDir = stateDir;
    await this.options.vms.boot({
      namespace: ns,
      stateDir,
      computerName: typeof os.computerName === "string" ? os.computerName : vm.name,
      adminUsername: String(os.adminUsername),
      sshPublicKeys: keys.map((k) => ({ path: String(k.path), keyData: String(k.keyData) })),
      ...(vm.secrets?.customData !== undefined ? { customData: vm.secrets.customData } : {}),
      imds: imdsDocuments(vm, nic, view),
      ...(never ? { faults: { neverReady: true } } : {}),
    });
    // The host is up: the model between it and the other VMs, before ARM reports the VM created.
    this.booted.set(vm.key, ns);
    await this.serialized(() => this.reshape(view));
  }

  async stopVm(vm: StoredResource): Promise<void> {
    const ns = this.names.vm(vm.seq);
    const stateDir = typeof vm.runtime.stateDir === "string" ? vm.runtime.stateDir : join(this.options.stateDir, "vms", `vm${vm.seq}`);
    await this.serialized(async () => {
      // Its shaping first: the delay line's helper of its namespace goes before the namespace does.
      const view = this.booted.has(vm.key) ? this.lastView : undefined;
      this.booted.delete(vm.key);
      if (view) await this.reshape(view);
      const report = await this.options.vms.stop(ns, stateDir);
      if ((await this.namespaces()).includes(ns)) {
        const r = await this.exec(["ip", "netns", "del", ns]);
        if (r.code !== 0) report.errors.push(`ip netns del ${ns}: ${r.stderr.trim()}`);
      }
      this.applied.delete(`${ns}/nsg`);
      if (report.errors.length) throw new Error(`azure emulator: VM ${vm.name} could not be stopped cleanly: ${report.errors.join("; ")}`);
    });
  }

  /**
   * Removes everything this fabric made: processes in its namespaces, the namespaces, the root
   * link (and with it the route to the public addresses). Reports what it could not remove.
   */
  async shutdown(): Promise<{ errors: string[]; removed: string[] }> {
    return this.serialized(async () => {
      const errors: string[] = [];
      const removed: string[] = [];
      // The shaping's helpers before the VMs' namespaces they run in.
      const shaping = await this.shaping.stop();
      errors.push(...shaping.errors);
      removed.push(...shaping.removed);
      this.booted.clear();
      const prefix = `az${this.options.short}-`;
      const ours = (await this.namespaces().catch(() => [] as string[])).filter((n) => n.startsWith(prefix));
      for (const ns of ours.filter((n) => n.includes("-vm"))) {
        const stateDir = join(this.options.stateDir, "vms", ns.slice(ns.indexOf("-vm") + 1));
        const r = await this.options.vms.stop(ns, stateDir).catch((e: Error) => ({ errors: [e.message], removed: [] as string[] }));
        errors.push(...r.errors);
        removed.push(...r.removed);
      }
      for (const ns of ours) await killNamespaceProcesses(this.exec, ns, 1000, errors, removed);
      // The root link before the namespaces: its peer lives in the inet namespace, and the kernel
      // destroys a deleted namespace's links later, on its own; the link could vanish between
      // being listed and being deleted.
      const rootLinks = parseLinkNames((await this.exec(["ip", "-o", "link", "show"])).stdout);
      if (rootLinks.includes(this.names.rootLink)) {
        const r = await this.exec(["ip", "link", "del", this.names.rootLink]);
        if (r.code === 0) removed.push(`link ${this.names.rootLink}`);
        else errors.push(`ip link del ${this.names.rootLink}: ${r.stderr.trim()}`);
      }
      for (const ns of ours) {
        const r = await this.exec(["ip", "netns", "del", ns]);
        if (r.code === 0) removed.push(`namespace ${ns}`);
        else errors.push(`ip netns del ${ns}: ${r.stderr.trim()}`);
      }
      this.applied.clear();
      this.inetRoutes.clear();
      return { errors, removed };
    });
  }
}

/** What IMDS answers inside a VM: its compute document (strings, as IMDS gives them) and network. */
export function imdsDocuments(vm: StoredResource, nic: StoredResource, view: CloudView): VmBootRequest["imds"] {
  const p = props(vm);
  const zones = Array.isArray(vm.body.zones) ? (vm.body.zones as string[]) : [];
  const image = isRecord(p.storageProfile) && isRecord(p.storageProfile.imageReference) ? p.storageProfile.imageReference : {};
  const tags = isRecord(vm.body.tags) ? (vm.body.tags as Record<string, string>) : {};
  const size = isRecord(p.hardwareProfile) ? String(p.hardwareProfile.vmSize) : "";
  const cfg = nicIpConfig(nic);
  const pip = refId(cfg.publicIPAddress) ? view.get(refId(cfg.publicIPAddress)!) : undefined;
  const subnet = refId(cfg.subnet) ? view.get(refId(cfg.subnet)!) : undefined;
  const prefix = subnet ? subnetPrefix(subnet) : undefined;
  const os = isRecord(p.osProfile) ? p.osProfile : {};
  return {
    compute: {
      azEnvironment: "AzurePublicCloud",
      location: String(vm.body.location ?? "").toLowerCase(),
      name: vm.name,
      offer: String(image.offer ?? ""),
      osType: "Linux",
      // A VM scale set's placement group, not a PPG: "" for a standalone VM (IMDS does not expose PPGs).
      placementGroupId: "",
      platformFaultDomain: String(vm.runtime.faultDomain ?? 0),
      platformUpdateDomain: String(vm.runtime.updateDomain ?? 0),
      provider: "Microsoft.Compute",
      publisher: String(image.publisher ?? ""),
      resourceGroupName: vm.resourceGroup,
      resourceId: vm.id,
      sku: String(image.sku ?? ""),
      subscriptionId: view.subscription,
      tags: Object.entries(tags).map(([k, v]) => `${k}:${v}`).join(";"),
      tagsList: Object.entries(tags).map(([name, value]) => ({ name, value })),
      version: String(image.version ?? ""),
      vmId: String(p.vmId ?? ""),
      vmScaleSetName: "",
      vmSize: size,
      zone: zones[0] ?? "",
      osProfile: { adminUsername: String(os.adminUsername ?? ""), computerName: String(os.computerName ?? vm.name), disablePasswordAuthentication: "true" },
    },
    network: {
      interface: [
        {
          ipv4: {
            ipAddress: [{ privateIpAddress: String(cfg.privateIPAddress ?? ""), publicIpAddress: pip && typeof props(pip).ipAddress === "string" ? (props(pip).ipAddress as string) : "" }],
            subnet: prefix ? [{ address: intToIp(parseCidr(prefix).network), prefix: String(parseCidr(prefix).prefix) }] : [],
          },
          ipv6: { ipAddress: [] },
          macAddress: String(props(nic).macAddress ?? "").replace(/-/g, ""),
        },
      ],
    },
  };
}
