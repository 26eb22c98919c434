import { defineExperiment } from "latlab";

/**
 * Seeds 003 and 004: what Accelerated Networking buys, between zones, within a zone and within
 * a PPG (seed 003: sockperf, -35% cross-zone, "850%" within a zone, "300%" in a PPG) and in
 * throughput and qperf latency (seed 004: D3_v2, ~2.01 → ~2.82 Gbit/s, 156.5 → 72.9 µs one-way).
 */
export default defineExperiment({
  name: "accelnet-on-off",
  description: "What does Accelerated Networking buy, across zones, within a zone and within a PPG?",
  reproduces: [
    "seed 003: Reduce latency on Azure with Accelerated Networking (sockperf; cross-zone, zonal, PPG)",
    "seed 004: Reducing latency through Proximity Placement groups (iperf and qperf, AccelNet on/off)",
  ],
  // Seed 004 ran Standard_D3_v2 (4 vCPUs, Dv2), which Azure has not let new subscriptions deploy
  // since July 2026 (previous-generation series). The current 4-vCPU sizes of the D family list
  // Accelerated Networking as *Required* (Dsv5: "Accelerated Networking: Required"), so "off" would
  // not be honoured; Bsv2 lists it as *Supported* — on and off both real — with 6,250 Mbit/s, above
  // seed 004's ~2.8 Gbit/s. Bsv2 is burstable: a 4-vCPU B4s_v2 starts with 120 CPU credits, far
  // more than these cells use (MicrosoftDocs/azure-compute-docs …/general-purpose/bsv2-series.md).
  defaults: { region: "uksouth", size: "Standard_B4s_v2" },
  seedSizes: [{ seed: "seed 004", size: "Standard_D3_v2" }],
  axes: { placement: ["cross-zone", "same-zone", "same-ppg"], accelnet: [false, true] },
  // AccelNet on vs off within each placement.
  baseline: { accelnet: false },
  hosts: { server: {}, client: {} },
  measure: [
    { tool: "sockperf", params: { messageSize: 64, duration: 10 } },
    { tool: "qperf", params: { test: "tcp_lat", messageSize: 64, duration: 5 } },
    { tool: "iperf3", params: { duration: 10, parallel: 1 } },
  ],
  durationByTarget: { local: 2 },
});
