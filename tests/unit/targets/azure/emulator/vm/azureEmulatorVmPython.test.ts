/**
 * The Python halves of an emulated VM, run with the machine's /usr/bin/python3 as the VM runs
 * them: IMDS's request handling (on 127.0.0.1, port chosen by the kernel) and the `cloud-init
 * status` command (against status files written here, in cloud-init's format, as vm_init.py
 * writes them).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { VM_INIT_PATH } from "../../../../../../src/targets/azure/emulator/vm/bootVm.ts";

const PY = "/usr/bin/python3";
const DIR = join(VM_INIT_PATH, "..");
const hasPython = existsSync(PY);

function python(script: string, env: Record<string, string> = {}, args: string[] = []) {
  const r = spawnSync(PY, ["-B", "-c", script, ...args], { encoding: "utf8", env: { PATH: "/usr/bin:/bin", ...env }, cwd: DIR, timeout: 20_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("emulated IMDS", { skip: !hasPython }, () => {
  const docs = {
    compute: { vmId: "id-1", location: "uksouth", zone: "", vmSize: "Standard_B1s", tags: "", publicKeys: [{ keyData: "ssh-rsa A", path: "/home/a/.ssh/authorized_keys" }] },
    network: { interface: [{ ipv4: { ipAddress: [{ privateIpAddress: "198.18.0.2", publicIpAddress: "" }] }, macAddress: "0011AAFFBB22" }] },
  };
  // One Python run: the server on 127.0.0.1 (an ephemeral port), requests through urllib.
  const run = python(
    `
import json, sys, threading, urllib.request, urllib.error
sys.path.insert(0, ".")
import imds
docs = json.loads(sys.argv[1])
srv = imds.make_server("127.0.0.1", 0, docs)
threading.Thread(target=srv.serve_forever, daemon=True).start()
port = srv.server_address[1]
out = []
for path, headers, method in json.loads(sys.argv[2]):
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            out.append([r.status, r.headers.get("Content-Type"), r.read().decode()])
    except urllib.error.HTTPError as e:
        out.append([e.code, e.headers.get("Content-Type"), e.read().decode()])
print(json.dumps(out))
`,
    {},
    [
      JSON.stringify(docs),
      JSON.stringify([
        ["/metadata/instance/compute?api-version=2021-02-01", { Metadata: "true" }, "GET"],
        ["/metadata/instance?api-version=2021-02-01", { Metadata: "True" }, "GET"],
        ["/metadata/instance/network?api-version=2025-04-07", { Metadata: "true" }, "GET"],
        ["/metadata/instance/compute?api-version=2021-02-01", {}, "GET"],
        ["/metadata/instance/compute", { Metadata: "true" }, "GET"],
        ["/metadata/instance/compute?api-version=2010-01-01", { Metadata: "true" }, "GET"],
        ["/metadata/instance/compute/vmId?api-version=2021-02-01&format=text", { Metadata: "true" }, "GET"],
        ["/metadata/instance/compute/vmId?api-version=2021-02-01", { Metadata: "true" }, "GET"],
        ["/metadata/instance/network/interface/0/macAddress?api-version=2021-02-01&format=text", { Metadata: "true" }, "GET"],
        ["/metadata/instance/compute/nope?api-version=2021-02-01", { Metadata: "true" }, "GET"],
        ["/metadata/instance/compute?api-version=2021-02-01", { Metadata: "true", "X-Forwarded-For": "1.2.3.4" }, "GET"],
        ["/metadata/instance/compute?api-version=2021-02-01&api-version=2021-02-01", { Metadata: "true" }, "GET"],
        ["/metadata/versions", { Metadata: "true" }, "GET"],
        ["/metadata/instance/compute?api-version=2021-02-01", { Metadata: "true" }, "POST"],
      ]),
    ],
  );
  const results = (): [number, string, string][] => {
    expect(run.stderr).toBe("");
    return JSON.parse(run.stdout) as [number, string, string][];
  };

  it("serves the compute, instance and network documents as compact JSON", () => {
    const r = results();
    expect(r[0]).toEqual([200, "application/json; charset=utf-8", JSON.stringify(docs.compute)]);
    expect(JSON.parse(r[1]![2])).toEqual(docs);
    expect(JSON.parse(r[2]![2])).toEqual(docs.network);
  });

  it("refuses a request without `Metadata: true`, or forwarded, as IMDS does", () => {
    const r = results();
    expect(r[3]).toEqual([400, "application/json; charset=utf-8", '{"error":"Bad request. Required metadata header not specified"}']);
    expect(r[10]![0]).toBe(400);
  });

  it("requires a documented api-version and says which are newest", () => {
    const r = results();
    for (const i of [4, 5]) {
      expect(r[i]![0]).toBe(400);
      expect(JSON.parse(r[i]![2])).toEqual({
        error: "Bad request. api-version is invalid or was not specified in the request. For more information refer to aka.ms/azureimds",
        "newest-versions": ["2025-04-07", "2024-07-17", "2024-03-15"],
      });
    }
    expect(r[11]![0]).toBe(400);
    expect(JSON.parse(r[12]![2]).apiVersions).toContain("2021-02-01");
  });

  it("filters by route: a leaf needs format=text; what is not there is 404; GET only", () => {
    const r = results();
    expect(r[6]).toEqual([200, "text/plain; charset=utf-8", "id-1"]);
    expect(r[7]![0]).toBe(400);
    expect(r[8]![2]).toBe("0011AAFFBB22");
    expect(r[9]![0]).toBe(404);
    expect(r[13]![0]).toBe(405);
  });
});

describe("emulated `cloud-init status`", { skip: !hasPython }, () => {
  const root = mkdtempSync(join(tmpdir(), "latlab-vmtest-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const nullStage = { errors: [] as string[], recoverable_errors: {} as Record<string, string[]>, start: null as number | null, finished: null as number | null };
  const v1 = (over: Record<string, unknown> = {}) => ({
    v1: {
      datasource: "DataSourceAzure [seed=/dev/sr0]",
      init: { ...nullStage, start: 1.2, finished: 1.5 },
      "init-local": { ...nullStage, start: 1.0, finished: 1.1 },
      "modules-config": { ...nullStage, start: 1.6, finished: 1.7 },
      "modules-final": { ...nullStage, start: 1.8, finished: 2.5 },
      stage: null,
      ...over,
    },
  });
  let n = 0;
  /** A run dir with these files, then `cloud-init <args>` against it. */
  function status(files: { status?: object; result?: boolean; enabled?: boolean }, args: string[]) {
    const dir = join(root, String(n++));
    spawnSync("mkdir", ["-p", dir]);
    if (files.status) writeFileSync(join(dir, "status.json"), JSON.stringify(files.status));
    if (files.result) writeFileSync(join(dir, "result.json"), "{}");
    if (files.enabled ?? true) writeFileSync(join(dir, "enabled"), "");
    const r = spawnSync(PY, ["-B", join(DIR, "cloud_init_command.py"), ...args], {
      encoding: "utf8",
      env: { PATH: "/usr/bin:/bin", LATLAB_CLOUD_INIT_RUN_DIR: dir },
      timeout: 20_000,
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  it("not started, running, done", () => {
    expect(status({}, ["status"])).toMatchObject({ code: 0, stdout: "status: not started\n" });
    const running = v1({ "modules-final": { ...nullStage, start: 1.8 }, stage: "modules-final" });
    expect(status({ status: running }, ["status"])).toMatchObject({ code: 0, stdout: "status: running\n" });
    expect(status({ status: v1(), result: true }, ["status"])).toMatchObject({ code: 0, stdout: "status: done\n" });
    expect(status({ status: v1(), result: true }, ["status", "--wait"])).toMatchObject({ code: 0, stdout: "status: done\n" });
  });

  it("an error: exit 1, the long form lists it", () => {
    const err = "('package_update_upgrade_install', PackageInstallerError(\"Failed to install the following packages: {'nope'}.\"))";
    const r = status({ status: v1({ "modules-final": { ...nullStage, start: 1.8, finished: 2.5, errors: [err] } }), result: true }, ["status", "--long"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe(
      [
        "status: error",
        "extended_status: error - done",
        "boot_status_code: enabled-by-generator",
        "last_update: Thu, 01 Jan 1970 00:00:02 +0000",
        "detail: DataSourceAzure [seed=/dev/sr0]",
        "errors:",
        `\t- ${err}`,
        "recoverable_errors: {}",
        "",
      ].join("\n"),
    );
  });

  it("warnings only: done, degraded, exit 2; JSON has every field", () => {
    const warned = v1({ init: { ...nullStage, start: 1.2, finished: 1.5, recoverable_errors: { WARNING: ["Skipping x"] } } });
    const r = status({ status: warned, result: true }, ["status", "--format", "json"]);
    expect(r.code).toBe(2);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({
      status: "done",
      extended_status: "degraded done",
      datasource: "azure",
      boot_status_code: "enabled-by-generator",
      detail: "DataSourceAzure [seed=/dev/sr0]",
      errors: [],
      recoverable_errors: { WARNING: ["Skipping x"] },
      stage: null,
    });
    expect(doc["modules-final"]).toMatchObject({ start: 1.8, finished: 2.5 });
  });

  it("says what it does not emulate", () => {
    const r = status({}, ["query", "ds"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/not emulated/);
    expect(status({}, ["--version"]).stdout).toMatch(/latlab emulator/);
  });
});
