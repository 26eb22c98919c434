/**
 * The real latlab_echo.py on 127.0.0.1: server and clients started exactly as the runner starts
 * them (the server command under `setsid sh -c 'exec …'`, the client's detached command under
 * `sh -c`), the server stopped and restarted mid-run, one client ended by SIGTERM and one by its
 * duration. Loopback only; every process started here is killed in afterAll (by pid).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tcpEcho, TcpEchoParamsSchema, type TcpEchoParams } from "../../src/tools/tcpEcho/index.ts";
import { readTcpEchoCsv, type TcpEchoRecord } from "../../src/tools/tcpEcho/parse.ts";
import type { ClientSpec } from "../../src/tools/types.ts";

const INTERVAL = 0.02;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Running (a zombie waiting for this container's init to reap it counts as gone). */
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
};
const sh = (command: string) => execFileSync("sh", ["-c", command], { encoding: "utf8", timeout: 20_000, stdio: ["ignore", "pipe", "pipe"] });

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 5000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const c = createConnection({ host: "127.0.0.1", port }, () => (c.destroy(), resolve(true)));
    c.once("error", () => resolve(false));
  });

let root: string;
let assetsDir: string;
let port: number;
const pids = new Set<number>();

/** As src/runner/servers.ts does it: detached, `exec` so the pid is the server's. */
async function startServer(): Promise<number> {
  const spec = tcpEcho.server({ bindAddress: "127.0.0.1", port, workDir: join(root, "servers"), assetsDir }, params());
  expect(spec?.port).toBe(port);
  const workDir = join(root, "servers");
  mkdirSync(workDir, { recursive: true });
  const quoted = `'${`exec ${spec!.command}`.replace(/'/g, `'\\''`)}'`;
  const pid = Number(sh(`cd '${workDir}' && (setsid sh -c ${quoted} >> server.log 2>&1 < /dev/null & echo $!)`).trim());
  expect(pid).toBeGreaterThan(0);
  pids.add(pid);
  await until("the server to listen", () => listening(port));
  return pid;
}

async function stopServer(pid: number) {
  process.kill(pid, "SIGTERM");
  await until("the server to exit", () => !alive(pid));
}

const params = (over: Partial<TcpEchoParams> = {}) => TcpEchoParamsSchema.parse({ interval: INTERVAL, ...over });

interface Started {
  spec: ClientSpec;
  pid: number;
  stdout: string;
  ms: number;
}

function startClient(name: string, p: TcpEchoParams): Started {
  const workDir = join(root, name);
  const spec = tcpEcho.client({ targetAddress: "127.0.0.1", port, workDir, assetsDir }, p);
  const t = Date.now();
  const stdout = sh(spec.command);
  const ms = Date.now() - t;
  const pid = Number(readFileSync(spec.detached!.pidFile, "utf8").trim());
  pids.add(pid);
  return { spec, pid, stdout, ms };
}

const records = (c: Started): TcpEchoRecord[] => readTcpEchoCsv(readFileSync(c.spec.detached!.outputFile, "utf8")).records;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "latlab-tcpecho-"));
  // What ensureAssets() does on a host.
  assetsDir = join(root, "tools", "tcp-echo");
  mkdirSync(assetsDir, { recursive: true });
  for (const [name, content] of Object.entries(tcpEcho.assets!)) writeFileSync(join(assetsDir, name), content, { mode: 0o755 });
  port = await freePort();
});

afterAll(async () => {
  for (const pid of pids) {
    try {
      // Only ours: a pid of a process that already ended may have been reused.
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("latlab_echo.py")) process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  await until("every process started here to be gone", () => [...pids].every((p) => !alive(p)));
  rmSync(root, { recursive: true, force: true });
});

describe("latlab_echo.py on loopback", () => {
  it("keeps a fixed schedule, survives a server restart, and stops cleanly", async () => {
    let server = await startServer();

    // A: long duration, sees the server restart, is stopped by SIGTERM. B: short, ends by itself.
    const a = startClient("a", params({ duration: 60 }));
    const b = startClient("b", params({ duration: 1.5 }));
    for (const c of [a, b]) {
      expect(c.ms).toBeLessThan(5000); // the start command returns at once
      expect(c.stdout).toBe(`latlab_echo client started, pid ${c.pid}\n`);
      expect(alive(c.pid)).toBe(true);
      // setsid: its own session, not tied to the shell that started it.
      expect(sh(`ps -o sid= -p ${c.pid}`).trim()).toBe(String(c.pid));
    }

    // Lines appear as they happen (each one flushed, whole).
    await sleep(600);
    expect(readFileSync(a.spec.detached!.outputFile, "utf8").endsWith("\n")).toBe(true);
    expect(records(a).filter((r) => r.event === "probe").length).toBeGreaterThan(10);

    // B ends by itself at its duration: an end record, its pid file gone.
    await until("B to end", () => !alive(b.pid), 5000);
    const bRecs = records(b);
    expect(bRecs.at(-1)).toMatchObject({ event: "end", count: bRecs.filter((r) => r.event === "probe").length });
    // (skipped may be > 0 on a busy machine: a 20 ms hiccup while an echo is awaited.)
    expect(bRecs.at(-1)!.detail).toMatch(new RegExp(`^reason=duration probes=${bRecs.at(-1)!.count} lost=0 breaks=0 reconnects=0 skipped=\\d+$`));
    expect(Math.max(...bRecs.filter((r) => r.event === "probe").map((r) => r.monoNs!))).toBeLessThan(1.5e9);
    expect(existsSync(b.spec.detached!.pidFile)).toBe(false);

    // The server goes away for a while and comes back on the same port; A reconnects.
    await stopServer(server);
    await sleep(300);
    server = await startServer();
    await until("A to reconnect", () => records(a).some((r) => r.event === "reconnect"), 8000);
    await until("A to probe again", () => records(a).slice(records(a).findIndex((r) => r.event === "reconnect")).filter((r) => r.event === "probe").length >= 20);

    // SIGTERM ends A cleanly, as the runner's stop does.
    process.kill(a.pid, "SIGTERM");
    await until("A to exit", () => !alive(a.pid), 3000);
    const aRecs = records(a);
    const last = aRecs.at(-1)!;
    expect(last.event).toBe("end");
    expect(last.detail).toMatch(/^reason=SIGTERM /);
    expect(existsSync(a.spec.detached!.pidFile)).toBe(false);
    expect(readFileSync(join(root, "a", `tcp-echo-${port}.log`), "utf8")).toBe(""); // no traceback

    const kinds = aRecs.map((r) => r.event);
    const brk = kinds.indexOf("break");
    const rec = kinds.indexOf("reconnect");
    expect(kinds.filter((k) => k === "break")).toHaveLength(1);
    expect(brk).toBeGreaterThan(0);
    expect(rec).toBeGreaterThan(brk);
    expect(kinds.slice(rec).filter((k) => k === "probe").length).toBeGreaterThanOrEqual(20); // probes after it
    expect(aRecs[brk]!.detail).toMatch(/^recv: (connection closed by the server \(EOF\)|Connection reset by peer \(ECONNRESET\))$/);
    expect(aRecs[rec]!.outageMs).toBeGreaterThan(250); // the server was down ≥ 300 ms
    expect(aRecs[rec]!.count).toBeGreaterThan(1); // refused at least once, then backoff
    // Slots due during the outage are lost, with their own seq and time, never an RTT.
    const lostDuring = aRecs.slice(brk, rec).filter((r) => r.event === "lost");
    expect(lostDuring.length).toBeGreaterThan(5);
    // Before the break at most the probe that was in flight when the server went away.
    const lostBefore = aRecs.slice(0, brk).filter((r) => r.event === "lost");
    expect(lostBefore.length).toBeLessThanOrEqual(1);
    for (const r of lostBefore) expect(r.detail).toBe(`in flight: ${aRecs[brk]!.detail}`);

    for (const recs of [aRecs, bRecs]) {
      // Fixed schedule: probe k leaves at k × interval on the monotonic clock, with no drift.
      const probes = recs.filter((r) => r.event === "probe");
      const late = probes.map((r) => r.monoNs! - r.seq! * INTERVAL * 1e9);
      const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
      expect(Math.min(...late)).toBeGreaterThanOrEqual(0);
      expect(median(late)).toBeLessThan(3e6);
      expect(median(late.slice(-20))).toBeLessThan(3e6); // still on time at the end
      // Every slot is a probe, a loss or a skip, once: none vanish, none counted twice.
      const seqs = recs.filter((r) => r.event === "probe" || r.event === "lost").map((r) => r.seq!);
      const skips = recs.filter((r) => r.event === "skip");
      const skipped = skips.reduce((s, r) => s + r.count!, 0);
      const lastSlot = Math.max(...seqs, ...skips.map((r) => r.seq! + r.count! - 1));
      expect(new Set(seqs).size).toBe(seqs.length);
      expect(seqs.length + skipped).toBe(lastSlot + 1);
      // Probes' RTTs are loopback-sized: no outage ever shows up as an RTT.
      expect(Math.max(...probes.map((r) => r.rttNs!))).toBeLessThan(200e6);
      // Wall clock and monotonic clock agree on when each probe left (within 50 ms).
      const start = Date.parse(recs[0]!.time);
      for (const p of probes) expect(Math.abs(Date.parse(p.time) - start - p.monoNs! / 1e6)).toBeLessThan(50);
    }

    // What parse() makes of it, the file handed over as the runner would.
    const out = readFileSync(a.spec.detached!.outputFile, "utf8");
    const result = tcpEcho.parse({ stdout: a.stdout, stderr: "", exitCode: 0, files: { [a.spec.detached!.outputFile]: out } }, params());
    expect(result.reported).toMatchObject({ breaks: 1, reconnects: 1, endedBy: "SIGTERM" });
    expect(result.warnings[0]).toMatch(/^connection broke at \S+Z after \d+ probes: recv: .*; reconnected at \S+Z after [\d.]+ ms \(\d+ attempts\)$/);
    expect(result.samples.length).toBe(aRecs.filter((r) => r.event === "probe").length);

    await stopServer(server);
  }, 20_000);

  it("a client whose start fails says why and leaves nothing running", () => {
    const spec = tcpEcho.client({ targetAddress: "127.0.0.1", port, workDir: join(root, "bad"), assetsDir: join(root, "nowhere") }, params({ duration: 1 }));
    let error: (Error & { stderr?: string; status?: number }) | undefined;
    try {
      sh(spec.command);
    } catch (e) {
      error = e as Error & { stderr?: string; status?: number };
    }
    expect(error?.status).toBe(1);
    expect(error?.stderr).toMatch(/latlab_echo client did not start:\n.*No such file or directory/);
    expect(existsSync(spec.detached!.pidFile)).toBe(false);
  });
});
