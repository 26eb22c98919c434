import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  AZURE_PROBE_COMMAND,
  AZURE_READY_COMMAND,
  IMDS_COMPUTE_FETCH,
  azureReadyAndProbe,
  parseAzureProbe,
} from "../../../../src/targets/azure/probe.ts";
import { READY_MARKER } from "../../../../src/targets/azure/cloudInit.ts";

// IMDS compute documents as Microsoft publishes them: see tests/fixtures/azure-imds/README.md.
const FIXTURES = join(import.meta.dirname, "../../../fixtures/azure-imds");
const ZONAL = readFileSync(join(FIXTURES, "compute-docs-linux-sample.json"), "utf8"); // "zone": "3"
const REGIONAL = readFileSync(join(FIXTURES, "compute-2021-02-01-spec-example.json"), "utf8"); // "zone": ""

interface Nic {
  name: string;
  driver: string;
  master: string;
}
// Interfaces as Microsoft's "How Accelerated Networking works" page shows them.
const LO: Nic = { name: "lo", driver: "", master: "" };
const ETH0: Nic = { name: "eth0", driver: "hv_netvsc", master: "" };
const MLX5_VF: Nic = { name: "enP53091s1np0", driver: "mlx5_core", master: "eth0" };
const MANA_VF: Nic = { name: "enP30832s1", driver: "mana", master: "eth0" };

/** What AZURE_PROBE_COMMAND prints on a VM (one JSON line, the IMDS body base64-encoded). */
const probeStdout = (imds: string, nics: Nic[], curlExit = 0) =>
  `${JSON.stringify({ curlExit, imds: Buffer.from(imds, "utf8").toString("base64"), nics })}\n`;

describe("parseAzureProbe on IMDS compute documents", () => {
  it("zonal VM with an mlx5 VF bonded to eth0: region, zone, size, accelnet, VF driver, vmId", () => {
    const actual = parseAzureProbe(probeStdout(ZONAL, [ETH0, LO, MLX5_VF]));
    expect(actual).toEqual({
      region: "westus",
      zone: "3",
      size: "Standard_A3",
      imdsVmId: "02aab8a4-74ef-476e-8182-f6d2ba4166a6",
      accelnet: true,
      vfDriver: "mlx5_core",
      vfInterface: "enP53091s1np0",
    });
  });

  it("regional VM (IMDS zone \"\") without a VF: zone null, accelnet false", () => {
    const actual = parseAzureProbe(probeStdout(REGIONAL, [LO, ETH0]));
    expect(actual).toEqual({
      region: "westus",
      zone: null,
      size: "Standard_A3",
      imdsVmId: "02aab8a4-74ef-476e-8182-f6d2ba4166a6",
      accelnet: false,
      vfDriver: null,
      vfInterface: null,
    });
  });

  it("a MANA VF counts as Accelerated Networking too", () => {
    expect(parseAzureProbe(probeStdout(ZONAL, [LO, ETH0, MANA_VF]))).toMatchObject({ accelnet: true, vfDriver: "mana", vfInterface: "enP30832s1" });
  });

  it("reports no ppg or availabilitySet: IMDS's placementGroupId is a scale set's, not a PPG", () => {
    const actual = parseAzureProbe(probeStdout(ZONAL, [ETH0, MLX5_VF]));
    expect(JSON.parse(ZONAL).placementGroupId).toBe("f67c14ab-e92c-408c-ae2d-da15866ec79a");
    expect(actual).not.toHaveProperty("ppg");
    expect(actual).not.toHaveProperty("availabilitySet");
    expect(Object.values(actual)).not.toContain("f67c14ab-e92c-408c-ae2d-da15866ec79a");
  });

  it("finds the JSON line after a login banner", () => {
    expect(parseAzureProbe(`Welcome to Ubuntu 24.04 LTS\n\n${probeStdout(ZONAL, [ETH0])}`)).toMatchObject({ region: "westus", zone: "3", accelnet: false });
  });

  it("the names match what the runner compares (region, zone, size, accelnet) and the values are flat", () => {
    const actual = parseAzureProbe(probeStdout(ZONAL, [ETH0, MLX5_VF]));
    for (const k of ["region", "zone", "size", "accelnet"]) expect(actual).toHaveProperty(k);
    for (const v of Object.values(actual)) expect(["string", "number", "boolean"].includes(typeof v) || v === null).toBe(true);
  });
});

describe("parseAzureProbe on missing or garbled output: fields left out, probeError, never a throw", () => {
  const cases: [string, string, Record<string, unknown>, RegExp][] = [
    ["empty output", "", {}, /not the expected JSON/],
    ["not JSON", "bash: curl: command not found\n", {}, /not the expected JSON: "bash: curl/],
    ["truncated JSON", '{"curlExit":0,"imds":"eyJ', {}, /not the expected JSON/],
    ["a JSON array", "[1,2]", {}, /not the expected JSON/],
    ["IMDS unreachable (curl exit 7), VF present", probeStdout("", [ETH0, MLX5_VF], 7), { accelnet: true, vfDriver: "mlx5_core" }, /IMDS gave no compute document \(curl exit 7\)/],
    ["IMDS answered HTML", probeStdout("<html><body>502 Bad Gateway</body></html>", [ETH0]), { accelnet: false }, /IMDS compute document is not JSON: "<html>/],
    [
      "IMDS error document (bad api-version)",
      probeStdout('{"error":"Bad request. api-version is invalid or was not specified in the request. For more information refer to aka.ms/azureimds","newest-versions":["2025-04-07"]}', [ETH0]),
      { accelnet: false },
      /IMDS answered with an error: "Bad request\. api-version is invalid/,
    ],
    ["IMDS JSON that is not an object", probeStdout('"westus"', [ETH0]), { accelnet: false }, /not an object/],
    ["IMDS document without the fields", probeStdout("{}", [ETH0]), { accelnet: false }, /lacks location, zone, vmSize/],
    ["imds field not base64", JSON.stringify({ curlExit: 0, imds: "%%%", nics: [ETH0] }), { accelnet: false }, /no compute document/],
    ["no interface list", JSON.stringify({ curlExit: 0, imds: Buffer.from(ZONAL).toString("base64") }), { region: "westus", zone: "3" }, /no network interface list/],
    ["only lo", probeStdout(ZONAL, [LO]), { region: "westus" }, /no network interface besides lo/],
  ];
  for (const [name, stdout, kept, error] of cases) {
    it(name, () => {
      const actual = parseAzureProbe(stdout);
      expect(actual.probeError).toMatch(error);
      expect(actual).toMatchObject(kept);
      const fields = Object.keys(actual).filter((k) => k !== "probeError");
      // Nothing is invented: only what could be read is there.
      if (!("region" in kept)) expect(fields).not.toContain("region");
      if (!("accelnet" in kept)) expect(fields).not.toContain("accelnet");
    });
  }

  it("a partial IMDS document keeps what it has and names what it lacks", () => {
    const actual = parseAzureProbe(probeStdout(JSON.stringify({ location: "uksouth", zone: "" }), [ETH0]));
    expect(actual).toMatchObject({ region: "uksouth", zone: null, accelnet: false });
    expect(actual).not.toHaveProperty("size");
    expect(actual.probeError).toBe("IMDS compute document lacks vmSize");
  });

  it("never throws, whatever comes back", () => {
    const samples = ["\0", "{", "}", "null", "{}", '{"nics":null,"imds":null}', '{"nics":[null,1,"x",{"name":5}],"imds":5}', "\u{1F600}".repeat(50), "{".repeat(10_000)];
    for (const s of samples) {
      const actual = parseAzureProbe(s);
      expect(typeof actual.probeError).toBe("string");
    }
  });
});

describe("the commands (run on the VM by the runner)", () => {
  it("ready waits for cloud-init and cloudInit.ts's marker, for up to 15 minutes", () => {
    const { ready, probe } = azureReadyAndProbe();
    expect(ready).toEqual({ command: AZURE_READY_COMMAND, timeoutSeconds: 900 });
    expect(AZURE_READY_COMMAND).toMatch(/^cloud-init status --wait\b/);
    expect(AZURE_READY_COMMAND).toContain(`test -f ${READY_MARKER}`);
    expect(READY_MARKER).toBe("/var/lib/latlab/cloud-init-done");
    expect(probe.command).toBe(AZURE_PROBE_COMMAND);
    expect(probe.parse).toBe(parseAzureProbe);
  });

  it("the probe asks IMDS the documented way (Metadata header, proxies bypassed, compute, api-version 2021-02-01)", () => {
    expect(AZURE_PROBE_COMMAND).toContain(IMDS_COMPUTE_FETCH);
    expect(IMDS_COMPUTE_FETCH).toBe("curl -s -m 10 -H Metadata:true --noproxy '*' 'http://169.254.169.254/metadata/instance/compute?api-version=2021-02-01'");
    expect(AZURE_PROBE_COMMAND).toContain("/sys/class/net/");
    expect(AZURE_PROBE_COMMAND).toContain("device/driver");
  });

  it("both are valid POSIX sh (parsed with sh -n, not run)", () => {
    for (const cmd of [AZURE_READY_COMMAND, AZURE_PROBE_COMMAND]) execFileSync("sh", ["-n", "-c", cmd]);
  });

  // The probe's own shell, with the IMDS request swapped for a fixture file: nothing is asked of
  // any metadata service here; this machine's /sys/class/net stands in for the VM's interfaces.
  it.runIf(process.platform === "linux" && existsSync("/sys/class/net"))("with the IMDS request swapped for a fixture, its output parses (this machine's interfaces)", () => {
    const offline = AZURE_PROBE_COMMAND.replace(IMDS_COMPUTE_FETCH, `cat '${join(FIXTURES, "compute-docs-linux-sample.json")}'`);
    expect(offline).not.toContain("169.254.169.254");
    const stdout = execFileSync("sh", ["-c", offline], { encoding: "utf8" });
    const parsed = JSON.parse(stdout) as { curlExit: number; imds: string; nics: Nic[] };
    expect(parsed.curlExit).toBe(0);
    expect(JSON.parse(Buffer.from(parsed.imds, "base64").toString("utf8"))).toEqual(JSON.parse(ZONAL));
    expect(parsed.nics.map((n) => n.name)).toContain("lo");
    const actual = parseAzureProbe(stdout);
    expect(actual).toMatchObject({ region: "westus", zone: "3", size: "Standard_A3" });
    expect(typeof actual.accelnet).toBe("boolean");
  });
});
