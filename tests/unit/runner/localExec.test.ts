// The local target's command runner (src/targets/local/exec.ts). Real processes, no namespaces.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { execCommand } from "../../../src/targets/local/exec.ts";
import { SessionSpawner, sessionSpawner, type SpawnedCommandEvents } from "../../../src/targets/local/spawner/sessionSpawner.ts";

const EXEC = new URL("../../../src/targets/local/exec.ts", import.meta.url).pathname;
const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Alive = exists and is not a zombie waiting for its reaper. */
const alive = (pid: number) => existsSync(`/proc/${pid}`) && !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));

describe("execCommand (local target)", () => {
  it("runs the command in its own process group", async () => {
    const r = await execCommand(["sh", "-c", "echo $$; ps -o pgid= -p $$"]);
    const [pid, pgid] = r.stdout.trim().split(/\s+/).map(Number);
    expect(r.code).toBe(0);
    expect(pgid).toBe(pid);
    expect(pgid).not.toBe(process.pid);
  });

  it("Ctrl-C after Ctrl-C to latlab's process group reaches none of its commands: each one finishes", async () => {
    // A stand-in for latlab: handles SIGINT as `latlab run` does (keeps going) and runs commands:
    // one long one, then many short ones (teardown runs dozens of `ip … del` one after another).
    const script = `
      import { execCommand } from ${JSON.stringify(EXEC)};
      process.on("SIGINT", () => process.stderr.write("SIGINT\\n"));
      console.log("started");
      // The first command starts latlab's command spawner: under the Ctrl-Cs too. (A pending
      // promise alone would let the process end: the interval keeps it until the first one.)
      const waiting = setInterval(() => {}, 1_000);
      await new Promise((r) => process.once("SIGINT", r));
      clearInterval(waiting);
      const results = [await execCommand(["sh", "-c", "sleep 0.5; echo finished"])];
      for (let i = 0; i < 150; i++) results.push(await execCommand(["sh", "-c", "echo finished"]));
      console.log(JSON.stringify(results));`;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    const closed = new Promise((r) => child.on("close", r));
    while (!out.includes("started")) await delay(20);
    // What the terminal does on every Ctrl-C: SIGINT to the whole foreground group.
    const ctrlC = setInterval(() => {
      try {
        process.kill(-child.pid!, "SIGINT");
      } catch {
        // Its group is gone: the close event is on its way.
      }
    }, 3);
    await closed;
    clearInterval(ctrlC);
    expect(err).toContain("SIGINT");
    const results = JSON.parse(out.split("\n")[1]!) as { code: number; stdout: string }[];
    expect(results).toHaveLength(151);
    expect(results.filter((r) => r.code !== 0 || r.stdout !== "finished\n")).toEqual([]);
  });

  it("on our timeout kills the command's whole group, its children too", async () => {
    const started = Date.now();
    const r = await execCommand(["sh", "-c", "sleep 30 & echo $!; wait"], { timeoutMs: 300 });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(r.code).toBe(124);
    expect(r.stderr).toMatch(/after 300 ms: timed out/);
    const grandchild = Number(r.stdout.trim());
    for (let i = 0; i < 50 && alive(grandchild); i++) await delay(20);
    expect(alive(grandchild)).toBe(false);
  });

  it("keeps exit codes, output and 'command not found'", async () => {
    expect(await execCommand(["sh", "-c", "echo out; echo err >&2; exit 3"])).toEqual({ code: 3, stdout: "out\n", stderr: "err\n" });
    expect(await execCommand(["latlab-no-such-command"])).toEqual({ code: 127, stdout: "", stderr: "latlab-no-such-command: command not found" });
    expect(await execCommand([])).toMatchObject({ code: 127 });
    expect(await execCommand(["sh", "-c", "echo $LC_ALL $X"], { env: { X: "y" } })).toMatchObject({ code: 0, stdout: "C y\n" });
  });

  it("the session spawner: output arrives whole, a spawner that dies loses only its commands in flight, the next command starts a new one", async () => {
    const many = await execCommand(["seq", "1", "200000"]);
    expect(many.stdout).toBe(Array.from({ length: 200000 }, (_, i) => `${i + 1}\n`).join(""));
    const first = sessionSpawner.pid!;
    expect(alive(first)).toBe(true);
    // Its own session: not latlab's, and no terminal can signal it.
    const [, , , , , sid] = readFileSync(`/proc/${first}/stat`, "utf8").replace(/^.*\) /, ". . ").split(" ");
    expect(Number(sid)).toBe(first);

    const inFlight = execCommand(["sh", "-c", "sleep 0.3; echo late"]);
    await delay(100);
    process.kill(first, "SIGKILL");
    const lost = await inFlight;
    expect(lost.code).toBe(125);
    expect(lost.stderr).toMatch(new RegExp(`spawner \\(pid ${first}\\) ended \\(SIGKILL\\) while the command ran`));

    expect(await execCommand(["echo", "again"])).toEqual({ code: 0, stdout: "again\n", stderr: "" });
    expect(sessionSpawner.pid).not.toBe(first);
  });

  it("the session spawner keeps no one alive: latlab exits when its commands are done, and the spawner goes with it", async () => {
    const script = `
      import { execCommand } from ${JSON.stringify(EXEC)};
      import { sessionSpawner } from ${JSON.stringify(new URL("../../../src/targets/local/spawner/sessionSpawner.ts", import.meta.url).pathname)};
      await execCommand(["true"]);
      console.log(sessionSpawner.pid);`;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    // A guard against a hang (a channel that keeps it alive), not a time budget.
    const hang = setTimeout(() => child.kill("SIGKILL"), 120_000);
    const code = await new Promise((r) => child.on("close", r));
    clearTimeout(hang);
    expect(code).toBe(0);
    const spawnerPid = Number(out.trim());
    expect(spawnerPid).toBeGreaterThan(0);
    for (let i = 0; i < 100 && alive(spawnerPid); i++) await delay(20);
    expect(alive(spawnerPid)).toBe(false);
  });

  it("a spawner that cannot start, or never gets ready, fails its commands with the reason, and is tried again for the next one", async () => {
    const outcome = (spawner: SessionSpawner) =>
      new Promise<string>((resolve) => {
        const events: SpawnedCommandEvents = {
          stdout: () => {},
          stderr: () => {},
          failedToStart: (_code, message) => resolve(`failed: ${message}`),
          exited: (code) => resolve(`exited ${code}`),
          lost: (reason) => resolve(`lost: ${reason}`),
        };
        void spawner.spawn("true", [], process.env, events);
      });

    const dir = mkdtempSync(join(tmpdir(), "latlab-spawner-"));
    try {
      // No Node where it is looked for: each command fails with why; once there is one, it starts.
      const node = join(dir, "node");
      const later = new SessionSpawner({ execPath: node });
      expect(await outcome(later)).toMatch(/^failed: latlab's command spawner .* could not start: .*ENOENT/);
      expect(await outcome(later)).toMatch(/^failed: .*ENOENT/);
      symlinkSync(process.execPath, node);
      expect(await outcome(later)).toBe("exited 0");

      // A helper that never says it is ready is given up on, and killed.
      const silent = join(dir, "silentSpawner.mjs");
      writeFileSync(silent, "setInterval(() => {}, 1000);\n");
      const mute = new SessionSpawner({ script: pathToFileURL(silent), startTimeoutMs: 300 });
      expect(await outcome(mute)).toMatch(/could not start: it did not say it was ready within 300 ms/);
      const running = () => readdirSync("/proc").filter((p) => /^\d+$/.test(p) && alive(Number(p)) && readFileSync(`/proc/${p}/cmdline`, "utf8").includes(silent));
      for (let i = 0; i < 100 && running().length > 0; i++) await delay(20);
      expect(running()).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
