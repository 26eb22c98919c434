import { execFileSync, spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  AZURE_PROBE_COMMAND,
  AZURE_READY_COMMAND,
  IMDS_COMPUTE_FETCH,
  KVP_DAEMON_CHECK,
  KVP_MAX_BYTES,
  azureReadyAndProbe,
  parseAzureProbe,
} from "../../../../../src/targets/azure/access/probe.ts";
import { READY_MARKER } from "../../../../../src/targets/azure/program/cloudInit.ts";
import { KVP_POOL_3_PATHS, KVP_RECORD_SIZE } from "../../../../../src/targets/azure/access/kvpPool.ts";
import { AZURE_POOL_3, kvpRecord } from "../../../../fixtures/hyperv-kvp/pool.ts";

// IMDS compute documents as Microsoft publishes them: see tests/fixtures/azure-imds/README.md.
const FIXTURES = join(import.meta.dirname, "../../../../fixtures/azure-imds");
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

interface Kvp {
  path: string;
  state: string;
  size: number;
  data: string;
  daemon: boolean;
}
/** The probe's `kvp` part: no pool file (a guest without hv_kvp_daemon), or a pool it read while the daemon ran. */
const NO_KVP: Kvp = { path: "", state: "missing", size: 0, data: "", daemon: false };
const kvpRead = (pool: Buffer, path: string = KVP_POOL_3_PATHS[0], size = pool.length): Kvp => ({ path, state: "read", size, data: pool.toString("base64"), daemon: true });
const NO_HOST = { physicalHost: null, physicalHostSource: "unavailable", physicalHostNote: "no KVP pool file (/var/lib/hyperv/.kvp_pool_3, /var/opt/hyperv/.kvp_pool_3): no KVP daemon has written one in this VM" };

/** What AZURE_PROBE_COMMAND prints on a VM (one JSON line, the IMDS body and the KVP pool base64-encoded). */
const probeStdout = (imds: string, nics: Nic[], curlExit = 0, kvp: Kvp = NO_KVP) =>
  `${JSON.stringify({ curlExit, imds: Buffer.from(imds, "utf8").toString("base64"), nics, kvp })}\n`;

describe("parseAzureProbe on IMDS compute documents", () => {
  it("zonal VM with an mlx5 VF bonded to eth0 and hv_kvp_daemon: region, zone, size, domains, accelnet, VF driver, vmId, physical host", () => {
    const actual = parseAzureProbe(probeStdout(ZONAL, [ETH0, LO, MLX5_VF], 0, kvpRead(AZURE_POOL_3)));
    expect(actual).toEqual({
      region: "westus",
      zone: "3",
      size: "Standard_A3",
      imdsVmId: "02aab8a4-74ef-476e-8182-f6d2ba4166a6",
      faultDomain: 36,
      updateDomain: 42,
      accelnet: true,
      vfDriver: "mlx5_core",
      vfInterface: "enP53091s1np0",
      physicalHost: "FRA052070811045",
      physicalHostSource: "kvp",
      physicalHostNote: null,
    });
  });

  it("regional VM (IMDS zone \"\") without a VF nor a KVP pool: zone null, accelnet false, physical host unavailable", () => {
    const actual = parseAzureProbe(probeStdout(REGIONAL, [LO, ETH0]));
    expect(actual).toEqual({
      region: "westus",
      zone: null,
      size: "Standard_A3",
      imdsVmId: "02aab8a4-74ef-476e-8182-f6d2ba4166a6",
      faultDomain: 36,
      updateDomain: 42,
      accelnet: false,
      vfDriver: null,
      vfInterface: null,
      ...NO_HOST,
    });
  });

  it("fault and update domains: IMDS's decimal strings as numbers, \"\" as null, anything else left out and named", () => {
    const doc = (fd: unknown, ud: unknown) => probeStdout(JSON.stringify({ ...JSON.parse(REGIONAL), platformFaultDomain: fd, platformUpdateDomain: ud }), [ETH0]);
    expect(parseAzureProbe(doc("0", "0"))).toMatchObject({ faultDomain: 0, updateDomain: 0 });
    expect(parseAzureProbe(doc("2", "19"))).toMatchObject({ faultDomain: 2, updateDomain: 19 });
    expect(parseAzureProbe(doc("", ""))).toMatchObject({ faultDomain: null, updateDomain: null });
    expect(parseAzureProbe(doc("", ""))).not.toHaveProperty("probeError");
    const bad = parseAzureProbe(doc("-1", "two"));
    expect(bad).not.toHaveProperty("faultDomain");
    expect(bad).not.toHaveProperty("updateDomain");
    expect(bad.probeError).toBe('IMDS platformFaultDomain is not a number: "-1"; IMDS platformUpdateDomain is not a number: "two"');
    // Not strings (IMDS gives every primitive as a string), or absent: not taken, like a missing vmId (not compared, so no probeError).
    const numbers = parseAzureProbe(doc(1, 1));
    expect(numbers).not.toHaveProperty("faultDomain");
    expect(numbers).not.toHaveProperty("updateDomain");
    expect(numbers).not.toHaveProperty("probeError");
    const absent = parseAzureProbe(doc(undefined, undefined));
    expect(absent).toMatchObject({ region: "westus", zone: null });
    expect(absent).not.toHaveProperty("faultDomain");
    expect(absent).not.toHaveProperty("probeError");
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
    const actual = parseAzureProbe(probeStdout(JSON.stringify({ location: "uksouth", zone: "", platformUpdateDomain: "1" }), [ETH0]));
    expect(actual).toMatchObject({ region: "uksouth", zone: null, updateDomain: 1, accelnet: false });
    expect(actual).not.toHaveProperty("size");
    expect(actual).not.toHaveProperty("faultDomain");
    expect(actual.probeError).toBe("IMDS compute document lacks vmSize");
  });

  it("never throws, whatever comes back", () => {
    const samples = [
      "\0",
      "{",
      "}",
      "null",
      "{}",
      '{"nics":null,"imds":null}',
      '{"nics":[null,1,"x",{"name":5}],"imds":5}',
      '{"kvp":{"path":"/var/lib/hyperv/.kvp_pool_3","state":"read","size":"x","data":5}}',
      '{"kvp":[1]}',
      "\u{1F600}".repeat(50),
      "{".repeat(10_000),
    ];
    for (const s of samples) {
      const actual = parseAzureProbe(s);
      expect(typeof actual.probeError).toBe("string");
    }
  });
});

describe("parseAzureProbe on the KVP pool: the physical host, or unavailable (never a guess)", () => {
  const host = (kvp: Kvp | undefined) => {
    const doc = JSON.parse(probeStdout(ZONAL, [ETH0])) as Record<string, unknown>;
    if (kvp === undefined) delete doc.kvp;
    else doc.kvp = kvp;
    const a = parseAzureProbe(JSON.stringify(doc));
    return { physicalHost: a.physicalHost, physicalHostSource: a.physicalHostSource, physicalHostNote: a.physicalHostNote, probeError: a.probeError };
  };

  it("pool 3 read at /var/lib/hyperv or /var/opt/hyperv: PhysicalHostName", () => {
    expect(host(kvpRead(AZURE_POOL_3))).toEqual({ physicalHost: "FRA052070811045", physicalHostSource: "kvp", physicalHostNote: null, probeError: undefined });
    expect(host(kvpRead(AZURE_POOL_3, "/var/opt/hyperv/.kvp_pool_3")).physicalHost).toBe("FRA052070811045");
  });

  it("no pool file (no hv_kvp_daemon): unavailable, and no probeError (it is the usual case)", () => {
    expect(host(NO_KVP)).toEqual({ ...NO_HOST, probeError: undefined });
  });

  const cases: [string, Kvp | undefined, RegExp][] = [
    ["an older probe without kvp", undefined, /^the probe sent no KVP pool$/],
    ["unreadable file", { path: KVP_POOL_3_PATHS[0], state: "unreadable", size: 0, data: "", daemon: true }, /^\/var\/lib\/hyperv\/\.kvp_pool_3 is not readable$/],
    // The file outlives the daemon (and an emulated VM sees the machine's /var, not its processes).
    ["a pool file but no daemon running", { ...kvpRead(AZURE_POOL_3), daemon: false }, /^\/var\/lib\/hyperv\/\.kvp_pool_3 exists but no KVP daemon \(hv_kvp_daemon\) runs in the VM: its contents may be stale or not this VM's$/],
    ["a probe that did not say whether the daemon runs", { path: KVP_POOL_3_PATHS[0], state: "read", size: AZURE_POOL_3.length, data: AZURE_POOL_3.toString("base64") } as unknown as Kvp, /no KVP daemon/],
    ["empty file", kvpRead(Buffer.alloc(0)), /is empty$/],
    ["no PhysicalHostName record", kvpRead(Buffer.concat([kvpRecord("HostName", "H"), kvpRecord("VirtualMachineName", "v")])), /has no PhysicalHostName record$/],
    ["truncated before it (a read while the daemon rewrote the file)", kvpRead(AZURE_POOL_3.subarray(0, 6 * KVP_RECORD_SIZE + 40), KVP_POOL_3_PATHS[0], AZURE_POOL_3.length), /no PhysicalHostName record \(40 bytes after the last whole 2560-byte record\) \(only the first 15400 of its 28160 bytes were read\)$/],
    ["a path the probe does not read", { ...kvpRead(AZURE_POOL_3), path: "/tmp/x" }, /^no KVP pool file/],
    ["an unknown state", { ...kvpRead(AZURE_POOL_3), state: "weird" }, /unknown KVP state "weird"/],
    ["data that is not base64", { ...kvpRead(AZURE_POOL_3), data: "%%%" }, /not base64/],
  ];
  for (const [name, kvp, note] of cases) {
    it(`${name}: unavailable`, () => {
      const h = host(kvp);
      expect(h.physicalHost).toBeNull();
      expect(h.physicalHostSource).toBe("unavailable");
      expect(h.physicalHostNote).toMatch(note);
      expect(h.probeError).toBeUndefined();
    });
  }
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
  it("the probe reads KVP pool 3 where hv_kvp_daemon keeps it, at most 64 records", () => {
    expect(AZURE_PROBE_COMMAND).toContain("for f in /var/lib/hyperv/.kvp_pool_3 /var/opt/hyperv/.kvp_pool_3; do");
    expect(AZURE_PROBE_COMMAND).toContain(`head -c ${KVP_MAX_BYTES} "$f" | base64 -w0`);
    expect(KVP_MAX_BYTES).toBe(64 * 2560);
  });

  // The probe's own shell, with the IMDS request swapped for a fixture file and the KVP pool paths
  // for files of a temporary folder: nothing is asked of any metadata service here; this
  // machine's /sys/class/net stands in for the VM's interfaces.
  const offlineProbe = (dir: string, daemon: boolean) =>
    AZURE_PROBE_COMMAND.replace(IMDS_COMPUTE_FETCH, `cat '${join(FIXTURES, "compute-docs-linux-sample.json")}'`)
      .replace(KVP_POOL_3_PATHS.join(" "), `${join(dir, "lib", ".kvp_pool_3")} ${join(dir, "opt", ".kvp_pool_3")}`)
      .replace(KVP_DAEMON_CHECK, `kr=${daemon}`);
  const runOffline = (setup: (dir: string) => void, daemon = true) => {
    const dir = mkdtempSync(join(tmpdir(), "latlab-kvp-"));
    try {
      setup(dir);
      const command = offlineProbe(dir, daemon);
      expect(command).not.toContain("169.254.169.254");
      expect(command).not.toContain("/var/lib/hyperv");
      const stdout = execFileSync("sh", ["-c", command], { encoding: "utf8" });
      return { stdout, dir };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  const linux = process.platform === "linux" && existsSync("/sys/class/net");

  it.runIf(linux)("with IMDS and the KVP pool swapped for fixtures, its output parses (this machine's interfaces)", () => {
    const { stdout, dir } = runOffline((d) => {
      execFileSync("mkdir", ["-p", join(d, "opt")]);
      // A real pool has a NUL in its first byte after a short key, and bytes that are not UTF-8: base64 carries them.
      writeFileSync(join(d, "opt", ".kvp_pool_3"), Buffer.concat([AZURE_POOL_3, kvpRecord("Junk", "\u00ff\"'`$(x)\n")]));
    });
    const parsed = JSON.parse(stdout) as { curlExit: number; imds: string; nics: Nic[]; kvp: Kvp };
    expect(parsed.curlExit).toBe(0);
    expect(JSON.parse(Buffer.from(parsed.imds, "base64").toString("utf8"))).toEqual(JSON.parse(ZONAL));
    expect(parsed.nics.map((n) => n.name)).toContain("lo");
    expect(parsed.kvp).toMatchObject({ path: join(dir, "opt", ".kvp_pool_3"), state: "read", size: 12 * 2560, daemon: true });
    expect(Buffer.from(parsed.kvp.data, "base64").equals(Buffer.concat([AZURE_POOL_3, kvpRecord("Junk", "\u00ff\"'`$(x)\n")]))).toBe(true);
    // The parser takes only its own two paths: here the swapped one is mapped back.
    const actual = parseAzureProbe(stdout.replace(join(dir, "opt", ".kvp_pool_3"), KVP_POOL_3_PATHS[1]));
    expect(actual).toMatchObject({ region: "westus", zone: "3", size: "Standard_A3", faultDomain: 36, updateDomain: 42, physicalHost: "FRA052070811045", physicalHostSource: "kvp" });
    expect(typeof actual.accelnet).toBe("boolean");
  });

  it.runIf(linux)("without a KVP pool file it says so, and the physical host is unavailable", () => {
    const { stdout } = runOffline(() => undefined);
    expect(JSON.parse(stdout).kvp).toEqual({ path: "", state: "missing", size: 0, data: "", daemon: true });
    expect(parseAzureProbe(stdout)).toMatchObject(NO_HOST);
  });

  it.runIf(linux)("a pool file without a running daemon: read, but the physical host is unavailable", () => {
    const { stdout } = runOffline((d) => {
      execFileSync("mkdir", ["-p", join(d, "lib")]);
      writeFileSync(join(d, "lib", ".kvp_pool_3"), AZURE_POOL_3);
    }, false);
    expect(JSON.parse(stdout).kvp).toMatchObject({ state: "read", daemon: false });
    const actual = parseAzureProbe(stdout.replace(/"path":"[^"]*"/, `"path":"${KVP_POOL_3_PATHS[0]}"`));
    expect(actual).toMatchObject({ physicalHost: null, physicalHostSource: "unavailable" });
    expect(actual.physicalHostNote).toMatch(/no KVP daemon/);
  });

  // The daemon check itself, on this machine's /proc: a process named hv_kvp_daemon (a copy of
  // sleep) makes it true; none makes it false.
  it.runIf(linux && existsSync("/bin/sleep"))("the daemon check finds a process named hv_kvp_daemon, and only while it runs", async () => {
    const check = `${KVP_DAEMON_CHECK}; printf '%s' "$kr"`;
    const dir = mkdtempSync(join(tmpdir(), "latlab-kvpd-"));
    try {
      const before = execFileSync("sh", ["-c", check], { encoding: "utf8" });
      copyFileSync("/bin/sleep", join(dir, "hv_kvp_daemon"));
      execFileSync("chmod", ["755", join(dir, "hv_kvp_daemon")]);
      const child = spawn(join(dir, "hv_kvp_daemon"), ["30"], { stdio: "ignore" });
      try {
        await new Promise<void>((resolve, reject) => {
          child.once("spawn", () => resolve());
          child.once("error", reject);
        });
        expect(execFileSync("sh", ["-c", check], { encoding: "utf8" })).toBe("true");
      } finally {
        child.kill("SIGKILL");
        await new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(undefined) : child.once("exit", resolve)));
      }
      // Unless this machine runs a real one, nothing else is called so.
      if (before === "false") expect(execFileSync("sh", ["-c", check], { encoding: "utf8" })).toBe("false");
      else expect(before).toBe("true");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.runIf(linux)("a pool longer than 64 records is cut at a record boundary, and its size told", () => {
    const big = Buffer.concat([...Array.from({ length: 70 }, (_, i) => kvpRecord(`K${i}`, "v")), kvpRecord("PhysicalHostName", "LATE01")]);
    const { stdout } = runOffline((d) => {
      execFileSync("mkdir", ["-p", join(d, "lib")]);
      writeFileSync(join(d, "lib", ".kvp_pool_3"), big);
    });
    const kvp = (JSON.parse(stdout) as { kvp: Kvp }).kvp;
    expect(kvp.size).toBe(71 * 2560);
    expect(Buffer.from(kvp.data, "base64").length).toBe(64 * 2560);
    const actual = parseAzureProbe(stdout.replace(/"path":"[^"]*"/, `"path":"${KVP_POOL_3_PATHS[0]}"`));
    expect(actual).toMatchObject({ physicalHost: null, physicalHostSource: "unavailable" });
    expect(actual.physicalHostNote).toMatch(/no PhysicalHostName record \(only the first 163840 of its 181760 bytes were read\)$/);
  });
});
