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
  // Seed 004's size (seed 003 does not name one): its ~2.01 → ~2.82 Gbit/s sits under D3_v2's cap.
  defaults: { region: "uksouth", size: "Standard_D3_v2" },
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
