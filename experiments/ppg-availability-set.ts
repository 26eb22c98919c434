import { defineExperiment } from "latlab";

/**
 * Seed 004: two VMs (D3_v2 in the seed) in one availability set, with and without a PPG on the set,
 * Accelerated Networking off and on; qperf latency and iperf throughput over 10 test runs
 * (PPG: ~72.9 → ~68.8 µs with AccelNet; AccelNet: 156.5 → 72.9 µs one-way, 2.01 → 2.82 Gbit/s).
 */
export default defineExperiment({
  name: "ppg-availability-set",
  description: "Two VMs in an availability set inside a PPG: what do AccelNet and the PPG buy, over 10 repetitions?",
  reproduces: ["seed 004: Reducing latency through Proximity Placement groups in Azure (D3_v2, availability set + PPG, qperf, iperf)"],
  // Seed 004's Standard_D3_v2 is a previous-generation size new subscriptions cannot deploy;
  // Standard_B4s_v2 has its 4 vCPUs and keeps Accelerated Networking optional (see accelnet-on-off.ts).
  defaults: { region: "westeurope", zone: null, size: "Standard_B4s_v2", availabilitySet: true },
  seedSizes: [{ seed: "seed 004", size: "Standard_D3_v2" }],
  axes: { ppg: [false, true], accelnet: [false, true] },
  // The PPG's effect within each AccelNet setting; AccelNet's effect reads across the rows — on a
  // subscription that runs this in waves (a new one: accelnet=false in one wave, true in the next),
  // that reading also crosses waves (other hosts, another time), and the report says so.
  baseline: { ppg: false },
  hosts: { server: {}, client: {} },
  measure: [
    { tool: "qperf", params: { test: "tcp_lat", messageSize: 64, duration: 5 } },
    { tool: "iperf3", params: { duration: 10, parallel: 1 } },
  ],
  repetitions: 10,
  durationByTarget: { local: 1 },
});
