import type { Plan } from "../plan/types.ts";
import type { WaveLimits } from "../plan/waves.ts";
import type { ResourceSku } from "./azure/catalog/sizes/resourceSku.ts";
import type { ShapingStatus, TeardownReport } from "../results/schema.ts";
import type { HostPlacement } from "../results/placement.ts";

/** How the runner reaches one host, and what the host really got. */
export interface HostEndpoint {
  deployment: string;
  role: string;
  /** Address and port of the host's sshd as seen from the runner. */
  ssh: { host: string; port: number; username: string; privateKey: string };
  /** The host's own public key line ("ssh-ed25519 AAAA…"): connections are pinned to it. */
  hostKey: string;
  /** Address other hosts of the deployment reach it on over the private path. */
  privateAddress: string;
  /** Address over the public path, where the target has one. */
  publicAddress?: string;
  /**
   * Where traffic to publicAddress arrives on the host, when not at publicAddress itself: on Azure
   * (and its emulator) the public IP is translated to the NIC's private address on the way in.
   * Servers for the public path listen there — on one address, never on every interface.
   */
  publicPathArrivesAt?: string;
  /** Scratch directory on the host for tool files. */
  workDir: string;
  /** What the host actually got, to be recorded next to what was asked. */
  actual: Record<string, string | number | boolean | null>;
  /** What the cloud's control plane said of where the host runs, read after the deploy (Azure: placementEvidence.ts). */
  placement?: HostPlacement;
  /**
   * Run once after connecting, before any tool: must exit 0 when the host is ready (e.g. wait
   * for cloud-init). A host that is not ready in time fails its deployment's cells.
   */
  ready?: { command: string; timeoutSeconds: number };
  /**
   * Run once after `ready`: asks the host what it really is (zone, size, whether the
   * Accelerated Networking VF is present…); parse() turns stdout into fields merged into
   * `actual`, where the runner compares them with what was asked.
   */
  probe?: { command: string; parse(stdout: string): Record<string, string | number | boolean | null> };
}

export interface Environment {
  hosts: HostEndpoint[];
  shaping: ShapingStatus;
  /** Facts about the place the hosts run in (kernel, target version…). */
  facts: Record<string, string>;
}

export interface TargetContext {
  runId: string;
  /** The run's folder on the runner's machine (results, raw outputs, keys). */
  runDir: string;
  log: (message: string) => void;
  /** Aborted on Ctrl-C / SIGTERM: up() should stop at its next step (down() still follows). */
  signal?: AbortSignal;
}

/**
 * A place hosts are brought up in. One module per target; the runner knows only this.
 * down() must be safe to call at any time, more than once, and after a failed up().
 */
export interface Target {
  readonly name: string;
  /**
   * Each deployment is machines of its own (Azure: its own VMs, NICs and hosts), so one
   * deployment measuring does not disturb another: the runner may run different deployments'
   * cells at the same time, and a run takes about its slowest deployment rather than the sum of
   * them. A deployment's own cells still run one after another. Absent or false: one deployment
   * measures at a time — the local target, whose hosts all share this machine's CPUs (cpus.ts
   * pins them on that assumption).
   */
  readonly concurrentDeployments?: boolean;
  up(plan: Plan, ctx: TargetContext): Promise<Environment>;
  down(): Promise<TeardownReport>;
  /**
   * What the place can hold at once, read before anything is brought up (Azure: the
   * subscription's free vCPU and public IP quota in the plan's regions), for the run's waves
   * (plan/waves.ts). Absent or undefined: no limit but the user's --max-vcpus. Creates nothing.
   */
  waveLimits?(plan: Plan, ctx: TargetContext): Promise<TargetWaveLimits | undefined>;
  /**
   * The run must end within seconds (a second, different signal during its teardown: a CI
   * runner's SIGTERM, its SIGKILL 2.5 s behind): start removing everything the run holds without
   * waiting for it to go, and say what was started. May be called while up() or down() is in
   * flight (they may be given up: the process exits soon after); must resolve within `withinMs`.
   * Absent: the target's teardown is quick enough to finish anyway (the local target), and goes on.
   */
  handOver?(options: { withinMs: number; signal?: NodeJS.Signals }): Promise<HandOver>;
  /**
   * Before each cell, and after a cell failed (to name its first cause): does every host of the
   * deployment still have the network the target gave it? Restores what it can (routes and
   * addresses the kernel dropped when a link went down and came back) and says what it restored
   * and what is still wrong (a link still down). Never throws: a check that cannot run is a problem.
   * Absent: the target's hosts need no such care — Azure's VMs get their addresses and routes
   * from the platform (DHCP, the VNet's system routes), which restores them itself after a NIC
   * flap; latlab set none up there, so there is nothing of its own to restore.
   */
  checkHosts?(deployment: string): Promise<HostCheck>;
}

/** What checkHosts() found. Both empty: every host's network is as the target set it up. */
export interface HostCheck {
  /** What was missing and is back now, one line each, naming the host ("host vm1 (namespace …): … restored"). */
  restored: string[];
  /** What is wrong and was not repaired (a link down), one line each, naming the host: a cell now would fail for it. */
  problems: string[];
}

/** What a target's handOver() started, and what it could not. */
export interface HandOver {
  /** What goes on without latlab, one line each (Azure: "resource group … : deletion accepted by ARM"). */
  started: string[];
  /** What could not be started, and why. */
  errors: string[];
  /** Commands that finish (or confirm) the teardown later. */
  finishWith: string[];
}

/**
 * What `waveLimits` read: the limits, and the size entries read live with them (Azure: the
 * subscription's Resource SKUs in the plan's regions), which each deployment's vCPUs and quota
 * family are counted from (cli/run/runWaves.ts). Without `skus`: latlab's offline size catalog.
 */
export type TargetWaveLimits = WaveLimits & { skus?: readonly ResourceSku[] };
