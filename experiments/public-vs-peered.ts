import { defineExperiment } from "latlab";

/**
 * Seed 002 ("Public IP vs Peered Networking"), North Europe: a client and a server in two
 * peered VNets, measured over the server's public IP and over the private, peered path. Hops:
 * 8 over the public IP, 1 over the peering. iperf3 -t 30 -i 1: both ~960 Mbit/s on A3/DS13_v2;
 * on DS14_v2 with -P 4: public 2480, peered 2630; with -w 32M: public 3230, peered 2710 Mbit/s.
 *
 * As in the seed, the client sits in VNet "a" and the server in VNet "b" of northeurope, peered
 * both ways, and both paths are measured between the same two VMs: `path` is a measurement axis,
 * so path=private and path=public of one size share one deployment (4 VMs: 2 sizes × 1 pair).
 * The seed's source VNet was a classic (ASM) one and its source VM an A3; Azure no longer
 * creates classic VNets, so both are ARM VNets here, and both VMs take each size in turn.
 */
export default defineExperiment({
  name: "public-vs-peered",
  description: "Does traffic between two VMs in peered VNets go faster over the private peered path than over their public IPs?",
  reproduces: ["seed 002: Azure Networking Bandwidth: Public IP vs Peered Networking (nmap traceroute, iperf3 -P 4, -w 32M)"],
  defaults: { region: "northeurope", zone: null, accelnet: true },
  // The seed's DS13_v2 (8 vCPUs) and DS14_v2 (16) are a previous-generation series new
  // subscriptions cannot deploy; two VMs of 16 vCPUs would not fit a new subscription's 20
  // regional vCPUs either. Standard_D4s_v5 and D8s_v5 (Dsv5, AccelNet required and on) keep two
  // sizes, the larger with as many vCPUs as the seed's smaller.
  axes: { size: ["Standard_D4s_v5", "Standard_D8s_v5"], path: ["private", "public"] },
  seedSizes: [
    { seed: "seed 002", size: "Standard_DS13_v2" },
    { seed: "seed 002", size: "Standard_DS14_v2" },
  ],
  // Public vs private within each size: the same pair of VMs, two paths.
  baseline: { path: "private" },
  hosts: { server: { vnet: "b" }, client: { vnet: "a" } },
  measure: [
    { tool: "traceroute", params: { port: 22 } },
    // The seed's first test: one stream, ~960 Mbit/s both ways on A3 → DS13_v2.
    { tool: "iperf3", params: { duration: 30, parallel: 1 } },
    { tool: "iperf3", params: { duration: 30, parallel: 4 } },
    { tool: "iperf3", params: { duration: 30, parallel: 4, window: "32M" } },
  ],
  durationByTarget: { local: 3 },
});
