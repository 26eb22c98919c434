import { spawn, execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ResultsSchema, type Results } from "../../src/results/schema.ts";
import { BASE_PORT } from "../../src/runner/cellRunner.ts";
import { tempDirs } from "../tempDirs.ts";
import { leftovers } from "./leftovers.ts";

const tempDir = tempDirs();

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "bin/latlab.js");

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the CLI as a user would; `onStderr` may act on progress (e.g. send SIGINT). With
 * `ownGroup` it leads its own process group, as a command started from a terminal does, so a
 * test can signal the whole group the way Ctrl-C does.
 */
function latlab(args: string[], onStderr?: (text: string, child: ReturnType<typeof spawn>) => void, ownGroup = false): Promise<Exit> {
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...process.env, CI: "true" }, detached: ownGroup });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => {
      stderr += d;
      onStderr?.(stderr, child);
    });
    child.on("close", (code) => resolvePromise({ code, stdout, stderr }));
  });
}


const readResults = (dir: string): Results => ResultsSchema.parse(JSON.parse(readFileSync(join(dir, "results.json"), "utf8")));

describe("npm run experiment -- ppg-vs-zone (local target, real namespaces)", () => {
  it("measures both variants, prints the comparison and leaves nothing behind", async () => {
    const out = tempDir("latlab-e2e-");
    const run = await latlab(["run", "ppg-vs-zone", "--out", out, "--duration", "2"]);
    expect(run.stderr + run.stdout).not.toMatch(/Error:.*at /);
    expect(run.code, run.stderr).toBe(0);
    const results = readResults(out);
    expect(results.status).toBe("complete");
    expect(results.variants.map((v) => v.id)).toEqual(["ppg=false", "ppg=true"]);
    for (const variant of ["ppg=false", "ppg=true"]) {
      const sock = results.measurements.find((m) => m.variant === variant && m.tool === "sockperf")!;
      expect(sock.status).toBe("ok");
      expect(sock.summary!.count).toBeGreaterThanOrEqual(1000);
      expect(sock.summary!.unit).toBe("us");
      expect(sock.summary!.p50).toBeGreaterThan(0);
      const samples = readFileSync(join(out, sock.samplesFile!), "utf8").trim().split("\n");
      expect(samples).toHaveLength(sock.summary!.count);
      const ping = results.measurements.find((m) => m.variant === variant && m.tool === "ping")!;
      expect(ping.status).toBe("ok");
    }
    expect(results.environment.shaping.note).toMatch(/^shaping: /);
    expect(results.environment.toolVersions.sockperf).toMatch(/\d+\.\d+/);
    expect(results.comparisons.map((c) => `${c.variant}/${c.tool}`)).toEqual(["ppg=true/sockperf", "ppg=true/ping", "ppg=true/qperf"]);
    for (const variant of ["ppg=false", "ppg=true"]) {
      const qperf = results.measurements.find((m) => m.variant === variant && m.tool === "qperf")!;
      expect(qperf.status).toBe("ok");
      // qperf prints one-way latency; results hold the RTT: twice what it printed.
      expect(qperf.summary!.mean).toBeCloseTo(2 * Number(qperf.reported!.printedOneWayUs), 3);
    }
    expect(results.teardown).toMatchObject({ status: "ok", errors: [] });
    // The table a user reads
    // Fitted to 80 columns (stdout is not a terminal): the baseline says so in the verdict column.
    expect(run.stdout).toMatch(/│ ppg=false\s*│[^\n]*│ baseline\s*│/);
    expect(run.stdout).toMatch(/ppg=true\s*│\s*sockperf/);
    // The shaping line, wrapped to the table's width like every note under it.
    const words = (text: string) => text.replace(/\s+/g, " ");
    expect(words(run.stdout)).toContain(words(results.environment.shaping.note));
    expect(leftovers(out)).toEqual([]);
  });

  it("tears everything down on SIGINT and still writes results", async () => {
    const out = tempDir("latlab-e2e-");
    let sent = false;
    const run = await latlab(["run", "ppg-vs-zone", "--out", out, "--duration", "20"], (text, child) => {
      // After bring-up, while the first sockperf cell runs.
      if (!sent && text.includes("shaping:")) {
        sent = true;
        setTimeout(() => child.kill("SIGINT"), 1500);
      }
    });
    expect(sent).toBe(true);
    expect(run.code, run.stderr).toBe(130);
    const results = readResults(out);
    expect(results.status).toBe("interrupted");
    expect(results.measurements.some((m) => m.error?.includes("interrupt"))).toBe(true);
    expect(results.teardown.status).toBe("ok");
    expect(leftovers(out)).toEqual([]);
  });

  it("a Ctrl-C repeated during teardown (to the whole process group) does not break teardown", async () => {
    const out = tempDir("latlab-e2e-");
    let first = false;
    let during = 0;
    let timer: NodeJS.Timeout | undefined;
    const run = await latlab(
      ["run", "ppg-vs-zone", "--out", out, "--duration", "20"],
      (text, child) => {
        // What a terminal does on Ctrl-C: SIGINT to every process of the foreground group.
        if (!first && text.includes("shaping:")) {
          first = true;
          setTimeout(() => process.kill(-child.pid!, "SIGINT"), 1500);
        }
        // Then Ctrl-C again and again while teardown runs `ip netns del` & co.
        if (!timer && text.includes("tearing down")) {
          timer = setInterval(() => {
            if (during++ < 8) process.kill(-child.pid!, "SIGINT");
            else clearInterval(timer);
          }, 25);
        }
      },
      true,
    );
    clearInterval(timer);
    expect(during, "no SIGINT reached teardown").toBeGreaterThan(0);
    expect(run.code, run.stderr).toBe(130);
    const results = readResults(out);
    expect(results.status).toBe("interrupted");
    expect(results.teardown, run.stderr).toMatchObject({ status: "ok", errors: [] });
    expect(leftovers(out)).toEqual([]);
  });

  it("records a failed cell with its error, measures the others, exits 2", async () => {
    const out = tempDir("latlab-e2e-");
    // As soon as the run's server namespace exists, hold the port latlab will give the sockperf
    // server (measure 0), so that server dies at start as it would on a busy host.
    let squatter: ReturnType<typeof spawn> | undefined;
    const watch = setInterval(() => {
      if (squatter) return;
      const ns = execFileSync("ip", ["netns", "list"], { encoding: "utf8" }).match(/^ll-[0-9a-f]+-0-server\b/m)?.[0];
      if (!ns) return;
      squatter = spawn("ip", ["netns", "exec", ns, "python3", "-c", `import socket,time\ns=socket.socket()\ns.bind(("0.0.0.0", ${BASE_PORT}))\ns.listen()\ntime.sleep(120)`], { stdio: "ignore" });
    }, 20);
    const run = await latlab(["run", "tests/fixtures/experiments/one-cell-fails.ts", "--out", out]);
    clearInterval(watch);
    expect(squatter, "the test never saw the server namespace").toBeDefined();
    expect(run.code, run.stderr).toBe(2);
    const results = readResults(out);
    expect(results.status).toBe("partial");
    const [sock, ping] = results.measurements;
    expect(sock).toMatchObject({ tool: "sockperf", status: "failed" });
    expect(sock!.error).toMatch(/sockperf server exited at start/);
    expect(ping).toMatchObject({ tool: "ping", status: "ok" });
    expect(ping!.summary!.count).toBe(3);
    expect(run.stdout).toContain("1 failed cell(s)");
    // Teardown killed every process in the run's namespaces, the squatter included.
    expect(squatter!.exitCode !== null || squatter!.signalCode !== null).toBe(true);
    expect(leftovers(out)).toEqual([]);
  });

  it("refuses a malformed experiment before creating anything", async () => {
    const out = tempDir("latlab-e2e-");
    const run = await latlab(["run", "tests/fixtures/experiments/malformed-axis.ts", "--out", out]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("malformed-axis.ts");
    expect(run.stderr).toContain('axes.ppg[1]: expected boolean, got "yes"');
    expect(existsSync(join(out, "results.json"))).toBe(false);
    expect(leftovers(out)).toEqual([]);
  });
});
