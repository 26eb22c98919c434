import { mkdir } from "node:fs/promises";
import type { ExecFn } from "../../../local/exec.ts";
import type { LatencyModelEntry } from "../../../local/model/latencyModel.ts";
import { DELAY_LINE_STATED_P50_US, type DelayLinePrecision } from "../../../local/delayLine/precision.ts";
// A namespace import: the emulator loads even where latencyShaping.ts offers no implementation
// yet; applying then fails, and the rehearsal says latency was not applied and why.
import * as latencyShaping from "../../../local/network/latencyShaping.ts";
import type { AppliedShaping, HostShaping, LatencyMechanism, ShapingSupport } from "../../../local/network/latencyShaping.ts";
import { modelEntriesUsed, shapingHostsOf, type VmPlacement } from "./latencyPlacement.ts";

/**
 * Keeps latlab's latency model applied between the emulator's running VMs (the rehearsal's
 * hosts), through the local target's shaping (netem where the kernel has it, else the delay
 * line). The fabric calls reapply() with the VMs it has booted whenever that set or their
 * placement may have changed; an unchanged set is left alone, a changed one is re-applied whole
 * (the previous shaping stopped first). Errors never fail a VM: they are kept and said in the
 * rehearsal's shaping status, which then says latency was not applied.
 *
 * The delay line's precision is not measured here (the hosts are given no `address`): it pings
 * between two hosts, and a rehearsal's VMs answer a ping only where their NSGs allow it (latlab's
 * program opens ICMP only to the hosts a cell pings), so bring-up would hinge on the experiment.
 * The stated precision is said instead.
 */

export interface ShapingFunctions {
  detect: typeof latencyShaping.detectShapingSupport;
  apply: typeof latencyShaping.applyShaping;
}

const DEFAULT_FUNCTIONS: ShapingFunctions = {
  detect: (exec, probe) => latencyShaping.detectShapingSupport(exec, probe),
  apply: (exec, support, hosts, options) => latencyShaping.applyShaping(exec, support, hosts, options),
};

/** What the rehearsal reports of its shaping (rehearsalShaping.ts turns it into results.json's). */
export interface VmShapingState {
  /** How latency is applied between the VMs now; null: it is not (see `reason`). */
  latency: LatencyMechanism | null;
  /** The mechanism's words ("netem", "delay line, ±120 µs at p99"); "" when none. */
  label: string;
  precision?: DelayLinePrecision;
  /** Why latency is not applied (no mechanism, fewer than two VMs, a failure). */
  reason?: string;
  /** The model's entries between the shaped VMs, with their sources. */
  model: LatencyModelEntry[];
  /** VMs shaped. */
  vms: number;
}

export interface VmShapingOptions {
  exec: ExecFn;
  /** A namespace name free for the one-off probe of what the kernel offers. */
  probeNamespace: string;
  /** Folder for the delay-line helpers' logs. */
  logDir: string;
  log: (message: string) => void;
  functions?: ShapingFunctions;
}

export class VmShaping {
  private readonly options: VmShapingOptions;
  private readonly fns: ShapingFunctions;
  private support?: ShapingSupport;
  private current?: { signature: string; applied: AppliedShaping; hosts: readonly HostShaping[] };
  private status: VmShapingState = { latency: null, label: "", reason: "no VM running yet", model: [], vms: 0 };

  constructor(options: VmShapingOptions) {
    this.options = options;
    this.fns = options.functions ?? DEFAULT_FUNCTIONS;
  }

  state(): VmShapingState {
    return { ...this.status, model: this.status.model.map((m) => ({ ...m })) };
  }

  /** Applies the model between these VMs, unless it already is; the caller serializes calls. */
  async reapply(vms: readonly VmPlacement[]): Promise<void> {
    const sorted = [...vms].sort((a, b) => a.namespace.localeCompare(b.namespace));
    const hosts = shapingHostsOf(sorted, this.options.logDir);
    const signature = JSON.stringify(hosts);
    if (this.current?.signature === signature) return;
    const errors = await this.stopCurrent();
    for (const e of errors) this.options.log(`emulator: ${e}`);
    if (sorted.length < 2) {
      this.status = { latency: null, label: "", reason: "fewer than two VMs running: no pair to shape", model: [], vms: sorted.length };
      return;
    }
    try {
      this.support ??= await this.detect();
      await mkdir(this.options.logDir, { recursive: true });
      const applied = await this.fns.apply(this.options.exec, this.support, hosts, { log: this.options.log });
      this.current = { signature, applied, hosts };
      this.status = {
        latency: applied.latency,
        label: applied.latency === "delay-line" && !applied.precision ? `delay line, precision not measured in a rehearsal (stated: p50 within ±${DELAY_LINE_STATED_P50_US} µs)` : applied.label,
        ...(applied.precision ? { precision: applied.precision } : {}),
        ...(applied.latency === null ? { reason: applied.label || "neither netem nor the delay line is available" } : {}),
        model: modelEntriesUsed(sorted),
        vms: sorted.length,
      };
      this.options.log(`emulator: latency model applied between ${sorted.length} VMs: ${applied.latency === null ? `not applied (${this.status.reason})` : applied.label}`);
    } catch (e) {
      this.status = { latency: null, label: "", reason: `could not apply the latency model: ${[...errors, (e as Error).message].join("; ")}`, model: [], vms: sorted.length };
      this.options.log(`emulator: ${this.status.reason}`);
    }
  }

  /** Stops what applying started (the delay-line helpers); what could not be stopped is returned. */
  async stop(): Promise<{ errors: string[]; removed: string[] }> {
    const had = this.current !== undefined;
    // The status stays what the VMs had: the run's results were measured under it.
    const errors = await this.stopCurrent();
    return { errors, removed: had && errors.length === 0 ? ["latency shaping between the VMs"] : [] };
  }

  /**
   * Takes the shaping out of the VMs that stay: netem's qdisc; for the delay line, applyShaping's
   * stop(), which removes its rules before its helpers (a packet queued to a helper that is gone
   * is dropped: the VM would be cut off). A failed apply has already undone its own (applyShaping).
   */
  private async stopCurrent(): Promise<string[]> {
    const current = this.current;
    this.current = undefined;
    if (!current) return [];
    const { exec } = this.options;
    const errors: string[] = [];
    if (current.applied.latency === "netem") {
      for (const h of current.hosts) await exec(["tc", "-n", h.namespace, "qdisc", "del", "dev", h.dev, "root"]);
    }
    try {
      errors.push(...(await current.applied.stop()).map((e) => `latency shaping: ${e}`));
    } catch (e) {
      errors.push(`latency shaping: ${(e as Error).message}`);
    }
    return errors;
  }

  /** What the kernel offers, probed once in a scratch namespace made for it and removed after. */
  private async detect(): Promise<ShapingSupport> {
    const { exec, probeNamespace } = this.options;
    await exec(["ip", "netns", "del", probeNamespace]);
    const add = await exec(["ip", "netns", "add", probeNamespace]);
    if (add.code !== 0) throw new Error(`ip netns add ${probeNamespace}: ${add.stderr.trim()}`);
    try {
      return await this.fns.detect(exec, probeNamespace);
    } finally {
      await exec(["ip", "netns", "del", probeNamespace]);
    }
  }
}
