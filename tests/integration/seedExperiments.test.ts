import { spawn, execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ResultsSchema, type Results } from "../../src/results/schema.ts";
import { tempDirs } from "../tempDirs.ts";

const tempDir = tempDirs();
/** A safety net, not a budget: each seed's run measures for minutes on a shared 2-core machine. */
const SEED_TIMEOUT_MS = 600_000;

// Every seed's experiment, run for real on the local target with short durations, as
// `npm run experiment -- <name>` runs it. Each test checks the tools and variants the issue
// lists for that experiment, and that nothing is left behind.

const ROOT = resolve(import.meta.dirname, "../..");

function run(name: string, duration: string): Promise<{ code: number | null; stdout: string; stderr: string; results: Results }> {
  const out = tempDir(`latlab-seed-${name}-`);
  return new Promise((done) => {
    const child = spawn(process.execPath, [join(ROOT, "bin/latlab.js"), "run", name, "--out", out, "--duration", duration, "--quiet"], { cwd: ROOT });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => done({ code, stdout, stderr, results: ResultsSchema.parse(JSON.parse(readFileSync(join(out, "results.json"), "utf8"))) }));
  });
}

const noNamespacesLeft = () => expect(execFileSync("ip", ["netns", "list"], { encoding: "utf8" }).trim()).toBe("");
const tools = (r: Results) => [...new Set(r.measurements.map((m) => m.tool))].sort();
const okCells = (r: Results) => r.measurements.filter((m) => m.status === "ok").length;

describe("the seed experiments on the local target", () => {
  it("zone-region-baseline (seed 000): three clients at once, pair ratios, breaks, windowed means", async () => {
    const { code, stdout, stderr, results } = await run("zone-region-baseline", "3");
    expect(code, stderr).toBe(0);
    expect(tools(results)).toEqual(["tcp-echo"]);
    expect(results.measurements.map((m) => `${m.from}:${m.pathKind}`)).toEqual(["samezone:same-zone", "crosszone:cross-zone", "crossregion:cross-region"]);
    // The three clients ran at the same time, as in the seed.
    const starts = results.measurements.map((m) => Date.parse(m.startedAt));
    expect(Math.max(...starts) - Math.min(...starts)).toBeLessThan(2000);
    expect(results.pairComparisons.map((c) => `${c.pair} vs ${c.baselinePair}`)).toEqual([
      "crosszone->server vs samezone->server",
      "crossregion->server vs samezone->server",
      "crossregion->server vs crosszone->server",
    ]);
    expect(results.measurements.every((m) => Number(m.reported?.breaks) === 0)).toBe(true);
    expect(stdout).toContain("host pairs compared:");
    expect(stdout).toMatch(/no break/);
    noNamespacesLeft();
  }, SEED_TIMEOUT_MS);

  it("ppg-vs-zone (seeds 001, 003): sockperf, ping and qperf on both variants", async () => {
    const { code, stderr, results } = await run("ppg-vs-zone", "1");
    expect(code, stderr).toBe(0);
    expect(tools(results)).toEqual(["ping", "qperf", "sockperf"]);
    expect(results.variants.map((v) => v.id)).toEqual(["ppg=false", "ppg=true"]);
    noNamespacesLeft();
  }, SEED_TIMEOUT_MS);

  it("accelnet-on-off (seeds 003, 004): AccelNet off/on × three placements, compared within each placement", async () => {
    const { code, stdout, stderr, results } = await run("accelnet-on-off", "1");
    expect(code, stderr).toBe(0);
    expect(tools(results)).toEqual(["iperf3", "qperf", "sockperf"]);
    expect(results.variants).toHaveLength(6);
    expect(new Set(results.measurements.map((m) => m.pathKind))).toEqual(new Set(["cross-zone", "same-zone", "same-ppg"]));
    for (const c of results.comparisons) {
      expect(c.variant).toMatch(/accelnet=true/);
      expect(c.baseline).toBe(c.variant.replace("accelnet=true", "accelnet=false"));
    }
    // With latency applied (netem or the delay line), AccelNet's per-RTT saving is the model's; without it, AccelNet is not emulated at all.
    expect(stdout).toContain(results.environment.shaping.latency === "applied" ? "modelled for latency only on local: accelnet" : "not emulated on local: accelnet");
    noNamespacesLeft();
  }, SEED_TIMEOUT_MS);

  it("ppg-peered-vnets (seed 001's lab): a PPG shared across two peered VNets, pinned and unpinned pairs, ping and sockperf", async () => {
    const { code, stderr, stdout, results } = await run("ppg-peered-vnets", "1");
    expect(code, stderr).toBe(0);
    expect(tools(results)).toEqual(["ping", "sockperf"]);
    // One deployment, four hosts, two VNets: the pinned pair shares the PPG across the peering.
    expect(results.variants.map((v) => v.hosts.map((h) => `${h.role}:${h.vnet}:${h.zone}:${h.ppg ?? "-"}`))).toEqual([["a1:a:1:pinned", "b1:b:1:pinned", "a2:a:2:-", "b2:b:2:-"]]);
    expect(results.measurements.filter((m) => m.tool === "ping").map((m) => `${m.from}->${m.to}:${m.pathKind}`)).toEqual(["a1->b1:same-ppg", "a2->b2:same-zone", "a1->b2:cross-zone"]);
    expect(okCells(results)).toBe(results.measurements.length);
    expect(stdout).toContain("seed 001 used Standard_D2s_v4, a previous-generation size (Dsv4 series)");
    noNamespacesLeft();
  }, SEED_TIMEOUT_MS);

  it("public-vs-peered (seed 002): hop count per path, iperf3 -P 4 with and without -w 32M, two sizes", async () => {
    const { code, stderr, results } = await run("public-vs-peered", "2");
    expect(code, stderr).toBe(0);
    expect(tools(results)).toEqual(["iperf3", "traceroute"]);
    expect(results.variants.map((v) => v.id)).toEqual([
      "size=Standard_D4s_v5,path=private",
      "size=Standard_D4s_v5,path=public",
      "size=Standard_D8s_v5,path=private",
      "size=Standard_D8s_v5,path=public",
    ]);
    const hops = (v: string) => results.measurements.find((m) => m.variant === v && m.tool === "traceroute")!.summary!.mean;
    expect(hops("size=Standard_D4s_v5,path=public")).toBeGreaterThan(hops("size=Standard_D4s_v5,path=private"));
    // As in the seed, both paths between the same two hosts (one deployment per size), in two peered VNets.
    for (const d of ["size=Standard_D4s_v5", "size=Standard_D8s_v5"]) expect(new Set(results.measurements.filter((m) => m.deployment === d).map((m) => m.path))).toEqual(new Set(["private", "public"]));
    expect(new Set(results.measurements.map((m) => m.deployment)).size).toBe(2);
    expect(results.environment.facts.peering).toMatch(/peering/);
    const windowed = results.measurements.filter((m) => m.tool === "iperf3" && m.params.window === "32M");
    expect(windowed).toHaveLength(4);
    expect(windowed.every((m) => m.params.parallel === 4 && m.summary!.count >= 2)).toBe(true);
    expect(okCells(results)).toBe(results.measurements.length);
    noNamespacesLeft();
  }, SEED_TIMEOUT_MS);

  it("ppg-availability-set (seed 004): availability set with/without PPG × AccelNet off/on, qperf and iperf3, 10 repetitions", async () => {
    const { code, stderr, results } = await run("ppg-availability-set", "1");
    expect(code, stderr).toBe(0);
    expect(tools(results)).toEqual(["iperf3", "qperf"]);
    expect(results.variants.map((v) => v.id)).toEqual(["ppg=false,accelnet=false", "ppg=false,accelnet=true", "ppg=true,accelnet=false", "ppg=true,accelnet=true"]);
    for (const v of results.variants) {
      expect(v.hosts.every((h) => h.availabilitySet === "avset" && h.ppg === (v.axes.ppg ? "ppg" : null))).toBe(true);
    }
    expect(new Set(results.measurements.map((m) => m.repetition)).size).toBe(10);
    expect(okCells(results)).toBe(80);
    // The PPG's effect within each AccelNet setting: ppg=true against its ppg=false sibling.
    const latency = results.comparisons.filter((c) => c.tool === "qperf");
    expect(latency.map((c) => `${c.variant} vs ${c.baseline}`)).toEqual([
      "ppg=true,accelnet=false vs ppg=false,accelnet=false",
      "ppg=true,accelnet=true vs ppg=false,accelnet=true",
    ]);
    expect(latency.every((c) => c.variantSummary.count === 10)).toBe(true);
    noNamespacesLeft();
  }, SEED_TIMEOUT_MS);
});
