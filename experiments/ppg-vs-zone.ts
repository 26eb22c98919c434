import { defineExperiment } from "latlab";

/**
 * Seed 001 (PPG vs no PPG in one zone, AccelNet on, East US: ping ~1.3 ms vs ~0.86 ms, sockperf
 * 94 µs vs 63 µs) and seed 003's zonal vs PPG comparison, as one experiment; qperf added so the
 * PPG's effect is seen by a second TCP latency tool. The seed ran D2s_v4; this runs the current
 * generation, D2s_v5 (same 2 vCPUs, AccelNet): Dsv4 is a previous-generation series that new
 * subscriptions cannot deploy since July 2026. An existing subscription with Dsv4 quota can still
 * pass its own file with `size: "Standard_D2s_v4"` to repeat the seed to the letter. Seed 001's
 * own four-VM topology (two peered VNets, two zones) is experiments/ppg-peered-vnets.ts.
 */
export default defineExperiment({
  name: "ppg-vs-zone",
  description: "Does a Proximity Placement Group pay off? Two hosts in one zone, without vs with a PPG.",
  reproduces: [
    "seed 001: Reduce Latency with Azure Proximity Placement Groups (ping, sockperf; East US, AccelNet on)",
    "seed 003: Reduce latency on Azure with Accelerated Networking (sockperf within a zone vs within a PPG)",
  ],
  defaults: { region: "eastus", zone: "1", size: "Standard_D2s_v5", accelnet: true },
  seedSizes: [{ seed: "seed 001", size: "Standard_D2s_v4" }],
  axes: { ppg: [false, true] },
  baseline: { ppg: false },
  hosts: { client: {}, server: {} },
  measure: [
    { tool: "sockperf", params: { protocol: "tcp", messageSize: 64, duration: 5 } },
    { tool: "ping", params: { count: 40, interval: 0.05 } },
    // qperf prints one-way latency; latlab reports it as RTT like everything else.
    { tool: "qperf", params: { test: "tcp_lat", messageSize: 64, duration: 3 } },
  ],
});
