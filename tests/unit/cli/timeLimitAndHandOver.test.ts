import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runExitCode } from "../../../src/cli/output/runOutcome.ts";
import { parseTimeLimit } from "../../../src/cli/input/options.ts";
import { ResultsSchema, type TeardownReport } from "../../../src/results/schema.ts";
import { MAX_TIME_LIMIT_MINUTES } from "../../../src/runner/runStop.ts";
import { runMain } from "./runMain.ts";

const ROOT = resolve(import.meta.dirname, "../../..");

describe("--time-limit <minutes>", () => {
  it("takes a positive number of minutes, decimals included", () => {
    expect(parseTimeLimit("30")).toBe(30);
    expect(parseTimeLimit("0.5")).toBe(0.5);
    expect(parseTimeLimit(".25")).toBe(0.25);
    expect(parseTimeLimit(String(MAX_TIME_LIMIT_MINUTES))).toBe(MAX_TIME_LIMIT_MINUTES);
  });

  it("refuses anything else, saying what it expected and what it got", () => {
    for (const bad of ["0", "-5", "abc", "", "1e3", "30m", "Infinity", "NaN", "0x10", String(MAX_TIME_LIMIT_MINUTES + 1)]) {
      expect(() => parseTimeLimit(bad), bad).toThrow(`expected a positive number of minutes (e.g. 30 or 0.5), at most ${MAX_TIME_LIMIT_MINUTES}, got "${bad}"`);
    }
  });

  it("`latlab run` refuses a bad one before anything starts, naming the flag", async () => {
    const out = mkdtempSync(join(tmpdir(), "latlab-time-limit-"));
    try {
      const run = await runMain(["run", "ppg-vs-zone", "--out", join(out, "r"), "--time-limit", "-1"]);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/option '--time-limit <minutes>' argument '-1' is invalid\. expected a positive number of minutes/);
      expect(existsSync(join(out, "r"))).toBe(false);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it("a run stopped at its time limit exits 2 when it measured something, 1 when it measured nothing; a hand-over fails it (1)", () => {
    const ok: TeardownReport = { status: "ok", errors: [], removed: [] };
    expect(runExitCode({ status: "partial", teardown: ok })).toBe(2);
    expect(runExitCode({ status: "failed", teardown: ok })).toBe(1);
    expect(runExitCode({ status: "partial", teardown: { ...ok, status: "failed", handedOver: { at: "x", started: [], finishWith: [] } } })).toBe(1);
  });
});

describe("`latlab run` in a process of its own, a fake target", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  function startRun(args: string[], env: Record<string, string> = {}) {
    const out = mkdtempSync(join(tmpdir(), "latlab-stop-"));
    dirs.push(out);
    const child = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "fixtures/fakeTargetRun.ts"), "run", "ppg-vs-zone", "--target", "fake", "--out", out, ...args], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe", "ipc"],
      env: { ...process.env, CI: "true", ...env },
    });
    let stderr = "";
    let stdout = "";
    child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
    const up = new Promise<void>((resolve, reject) => {
      child.once("message", () => resolve());
      child.once("exit", (code) => reject(new Error(`exited with ${code} before up(): ${stderr}`)));
    });
    up.catch(() => {});
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
    const results = () => ResultsSchema.parse(JSON.parse(readFileSync(join(out, "results.json"), "utf8")));
    return { child, up, exited, results, out, stderr: () => stderr, stdout: () => stdout };
  }

  it("--time-limit stops the run as Ctrl-C would, tears down, and says it was the time limit (nothing measured yet: failed, exit 1)", async () => {
    // 0.005 min = 0.3 s; the fake's up() waits until the run is stopped.
    const run = startRun(["--time-limit", "0.005"]);
    expect(await run.exited).toEqual({ code: 1, signal: null });
    expect(run.stderr()).toMatch(/time limit of 0\.005 min reached \(--time-limit\): stopping after the current step and tearing everything down/);
    const results = run.results();
    expect(results.stopped).toMatchObject({ by: "time-limit", timeLimitMinutes: 0.005 });
    expect(results.status).toBe("failed");
    expect(results.error).toBe("the run stopped at its time limit (--time-limit 0.005 min) before any cell was measured: fake: up interrupted");
    expect(results.teardown).toMatchObject({ status: "ok", removed: ["fake hosts"] });
    expect(results.teardown.handedOver).toBeUndefined();
  });

  it("SIGTERM after SIGINT during a long teardown: the target hands it over, results.json says so, the process exits at once (1)", async () => {
    const log = join(mkdtempSync(join(tmpdir(), "latlab-handover-log-")), "calls");
    dirs.push(resolve(log, ".."));
    const run = startRun([], { FAKE_DOWN: "hang", FAKE_HANDOVER: "yes", FAKE_HANDOVER_LOG: log });
    await run.up;
    run.child.kill("SIGINT");
    // The teardown has started (and hangs): GitHub's runner sends SIGTERM 7.5 s after SIGINT.
    for (let i = 0; i < 200 && !run.stderr().includes("tearing down"); i++) await new Promise((r) => setTimeout(r, 25));
    expect(run.stderr()).toContain("tearing down");
    run.child.kill("SIGTERM");
    // The down() never ends: only the hand-over can end this process (the test's timeout is the guard).
    expect(await run.exited).toEqual({ code: 1, signal: null });
    expect(run.stderr()).toMatch(/SIGTERM after SIGINT: the process is about to be killed; handing the teardown over/);
    expect(JSON.parse(readFileSync(log, "utf8").trim())).toEqual({ withinMs: 1500, signal: "SIGTERM" });
    const results = run.results();
    expect(results.status).toBe("interrupted");
    expect(results.stopped).toMatchObject({ by: "signal", signal: "SIGINT" });
    expect(results.teardown.status).toBe("failed");
    expect(results.teardown.handedOver).toMatchObject({ signal: "SIGTERM", started: ["fake: deletion of everything accepted"], finishWith: ["npx latlab destroy fake-run"] });
    expect(results.teardown.errors.join("\n")).toMatch(/teardown handed over on SIGTERM: it did not finish in this process; going on without it: fake: deletion of everything accepted; finish it with `npx latlab destroy fake-run`/);
    expect(run.stdout()).toMatch(/teardown: handed over — fake: deletion of everything accepted\n {2}finish it with: npx latlab destroy fake-run/);
  });

  it("SIGTERM after SIGINT with a target that cannot hand over (the local one): the teardown goes on and results.json is written (130)", async () => {
    const run = startRun([], { FAKE_DOWN: "slow" });
    await run.up;
    run.child.kill("SIGINT");
    for (let i = 0; i < 200 && !run.stderr().includes("tearing down"); i++) await new Promise((r) => setTimeout(r, 25));
    run.child.kill("SIGTERM");
    expect(await run.exited).toEqual({ code: 130, signal: null });
    expect(run.stderr()).toMatch(/SIGTERM after SIGINT: teardown continues; .*this target cannot hand it over: further signals change nothing/);
    const results = run.results();
    expect(results.status).toBe("interrupted");
    expect(results.teardown).toMatchObject({ status: "ok", removed: ["fake hosts"] });
    expect(results.teardown.handedOver).toBeUndefined();
  });
});
