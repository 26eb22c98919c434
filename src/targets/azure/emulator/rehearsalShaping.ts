import type { ShapingStatus } from "../../../results/schema.ts";
import type { VmShapingState } from "./fabric/vmShaping.ts";

/**
 * A rehearsal's shaping, as results.json records it (pure): whether latlab's latency model was
 * applied between the emulator's VMs (fabric/vmShaping.ts), by what, and with which figures. Its
 * note starts "rehearsal:" and says, either way, that nothing here is measured on Azure.
 */

const PLAYED = "rehearsal: Azure played by latlab's emulator on this machine (ARM, VMs as network namespaces)";

export function rehearsalShapingStatus(state: VmShapingState): ShapingStatus {
  if (state.latency !== null) {
    return {
      latency: "applied",
      bandwidth: "unavailable",
      mechanism: state.latency,
      note:
        `${PLAYED}; latency: applied (modelled, ${state.label}) — latlab's latency model between the VMs by their placement in ARM ` +
        "(region, zone, PPG, availability set; Accelerated Networking from the NIC: its latency only; figures, spreads and sources in results.json): differences between placements are the model's, " +
        "the shape of the answer, not measured on Azure; bandwidth: not modelled (VM sizes are not emulated: throughput differences are this machine's)",
      // Each entry with its spread: the jitter applied is part of what "sources in results.json" names.
      model: state.model.map(({ pathKind, accelnet, rttUs, source, spread }) => ({ pathKind, accelnet, rttUs, source, spread })),
    };
  }
  return {
    latency: "unavailable",
    bandwidth: "unavailable",
    note:
      `${PLAYED}; latency model not applied (${state.reason ?? "no mechanism"}), no bandwidth model — these numbers are this machine's kernel, not Azure's: ` +
      "the rehearsal checks the run, not the network",
  };
}
