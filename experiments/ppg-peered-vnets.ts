import { defineExperiment } from "latlab";

/**
 * Seed 001 ("Reduce Latency with Azure Proximity Placement Groups"), its lab as drawn: four VMs,
 * two availability zones, two VNets peered together, and one VM of each VNet sharing a PPG with
 * a VM of the other VNet, "to show that even if you're outside of the Virtual Network, the
 * Proximity Placement Groups can still have a significant impact". East US, AccelNet on, Ubuntu,
 * D2s_v4 (a previous-generation series now: D2s_v5 here, the same 2 vCPUs). Found: ping ~1.3 ms
 * not pinned vs ~0.86-0.95 ms pinned; sockperf 94 µs vs 63 µs; "anything not pinned together was
 * about the same latency".
 *
 * The pinned pair (a1, b1) shares PPG "pinned" in zone 1; a2 and b2 sit in zone 2 without one.
 * Each pair is measured: pinned across the peering (a1 → b1), unpinned across the peering in one
 * zone (a2 → b2), and unpinned across the peering and the zones (a1 → b2). One deployment holds
 * all four VMs, so the rows compare pairs on the same draw of hosts: the table's unit says so.
 */
export default defineExperiment({
  name: "ppg-peered-vnets",
  description: "Seed 001's lab: does a PPG shared across two peered VNets pay off, against unpinned VMs in the same and in another zone?",
  reproduces: ["seed 001: Reduce Latency with Azure Proximity Placement Groups (4 VMs, 2 zones, 2 peered VNets, ping and sockperf; East US, AccelNet on)"],
  seedSizes: [{ seed: "seed 001", size: "Standard_D2s_v4" }],
  defaults: { region: "eastus", size: "Standard_D2s_v5", accelnet: true },
  hosts: {
    a1: { vnet: "a", zone: "1", ppg: "pinned" },
    b1: { vnet: "b", zone: "1", ppg: "pinned" },
    a2: { vnet: "a", zone: "2" },
    b2: { vnet: "b", zone: "2" },
  },
  measure: [
    {
      tool: "ping",
      params: { count: 100, interval: 0.2 },
      pairs: [
        { from: "a1", to: "b1" },
        { from: "a2", to: "b2" },
        { from: "a1", to: "b2" },
      ],
    },
    {
      tool: "sockperf",
      params: { protocol: "tcp", messageSize: 64, duration: 10 },
      pairs: [
        { from: "a1", to: "b1" },
        { from: "a2", to: "b2" },
        { from: "a1", to: "b2" },
      ],
    },
  ],
  durationByTarget: { local: 3 },
});
