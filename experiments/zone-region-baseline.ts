import { defineExperiment } from "latlab";

/**
 * Seed 000 ("Azure Latency Part 1"): B1 VMs without Accelerated Networking, an echo server and
 * a client in UK South zone 1, a client in zone 2, a client in UK West over peered VNets; 64 B
 * once a second for ~11 h. Found: same zone ~850 µs, cross zone ~1425 µs (1.7×), cross region
 * ~5300 µs (6.2×); every connection broke after ~11 h, latency shifting just before.
 */
export default defineExperiment({
  name: "zone-region-baseline",
  description: "How much slower are cross-zone and cross-region than same-zone, and do long-lived TCP connections survive?",
  reproduces: ["seed 000: Azure Latency Part 1 (B1, UK South zones 1/2 and UK West, TCP echo 64 B once a second, ~11 h)"],
  // Seed 000's B1 (B-series v1) is a previous-generation series new subscriptions cannot deploy;
  // its successor Bsv2's smallest size, B2ts_v2 (2 vCPUs, 1 GiB), keeps it cheap for 11 hours and
  // has Accelerated Networking optional, so "off" as in the seed is what the VM gets.
  defaults: { region: "uksouth", size: "Standard_B2ts_v2", accelnet: false },
  seedSizes: [{ seed: "seed 000", size: "Standard_B1s", note: "the seed says B1" }],
  hosts: {
    server: { zone: "1" },
    samezone: { zone: "1" },
    crosszone: { zone: "2" },
    crossregion: { region: "ukwest", zone: null },
  },
  measure: [{ tool: "tcp-echo", params: { interval: 1, payload: 64, duration: 11 * 3600 } }],
  // One parameter, two defaults: the seed's 11 hours on Azure, half a minute on this machine.
  durationByTarget: { local: 30 },
});
