import { defineExperiment } from "latlab";

/**
 * Seed 002 ("Public IP vs Peered Networking"): the same pair over the public-IP path and over the
 * private path, North Europe. The seed's hosts sat in two peered VNets (classic and ARM); latlab
 * places both hosts of a region in one VNet, so "private" here is the VNet path, not a peering. Hops: 8 over the public IP, 1 over the peering. iperf3 -t 30
 * -i 1: both ~960 Mbit/s on A3/DS13_v2; on DS14_v2 with -P 4: public 2480, peered 2630; with
 * -w 32M: public 3230, peered 2710 Mbit/s.
 */
export default defineExperiment({
  name: "public-vs-peered",
  description: "Does traffic between two VMs go faster over the private peered path than over their public IPs?",
  reproduces: ["seed 002: Azure Networking Bandwidth: Public IP vs Peered Networking (nmap traceroute, iperf3 -P 4, -w 32M)"],
  defaults: { region: "northeurope", zone: null, accelnet: true },
  axes: { size: ["Standard_DS13_v2", "Standard_DS14_v2"], path: ["private", "public"] },
  // Public vs private within each size.
  baseline: { path: "private" },
  hosts: { server: {}, client: {} },
  measure: [
    { tool: "traceroute", params: { port: 22 } },
    // The seed's first test: one stream, ~960 Mbit/s both ways on A3 → DS13_v2.
    { tool: "iperf3", params: { duration: 30, parallel: 1 } },
    { tool: "iperf3", params: { duration: 30, parallel: 4 } },
    { tool: "iperf3", params: { duration: 30, parallel: 4, window: "32M" } },
  ],
  durationByTarget: { local: 3 },
});
