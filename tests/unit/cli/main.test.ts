import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { main } from "../../../src/cli/main.ts";
import { runExitCode } from "../../../src/cli/output/runOutcome.ts";
import { planOptions, withReplicas } from "../../../src/cli/input/options.ts";
import { buildPlan } from "../../../src/plan/buildPlan.ts";
import { defineExperiment } from "../../../src/index.ts";
import type { TeardownReport } from "../../../src/results/schema.ts";

const ROOT = resolve(import.meta.dirname, "../../..");
const TYPO = join(import.meta.dirname, "fixtures/duration-typo.ts");

/** main() in this process, with what it writes to stderr. */
async function cli(args: string[]): Promise<{ code: number; stderr: string }> {
  let stderr = "";
  const spy = vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  });
  try {
    return { code: await main(args), stderr };
  } finally {
    spy.mockRestore();
  }
}

describe("durationByTarget keys", () => {
  const experiment = (durationByTarget: Record<string, number>) =>
    defineExperiment({ name: "x", description: "x", hosts: { a: {}, server: {} }, measure: [{ tool: "ping" }], durationByTarget });

  it("must name targets: a misspelled key is an error with a suggestion, whatever the target or --duration", () => {
    const e = experiment({ locl: 30 });
    expect(() => planOptions(e, "local")).toThrow(/durationByTarget: "locl" is not a target — did you mean "local"\?/);
    expect(() => planOptions(e, "azure")).toThrow(/"locl"/);
    expect(() => planOptions(e, "local", { seconds: 5 })).toThrow(/"locl"/);
  });

  it("lists the known targets when nothing is close", () => {
    expect(() => planOptions(experiment({ gcp: 30 }), "local")).toThrow(/"gcp" is not a target \(known: local, azure\)/);
  });

  it("accepts target names", () => {
    expect(planOptions(experiment({ local: 3, azure: 60 }), "azure")).toEqual({ duration: { seconds: 60 } });
  });

  it("plan and run refuse the file, naming the key, before anything starts", async () => {
    const plan = await cli(["plan", TYPO]);
    expect(plan.code).toBe(1);
    // Refused by the loader, which knows the file: the message names it and the key path.
    expect(plan.stderr).toMatch(/duration-typo\.ts: experiment "duration-typo": invalid definition\n\s+durationByTarget\.locl: "locl" is not a target — did you mean "local"\?/);
    const out = mkdtempSync(join(tmpdir(), "latlab-typo-"));
    try {
      // azure: refused before its preflight (which would ask for --ssh-from first).
      const run = await cli(["run", TYPO, "--target", "azure", "--out", out]);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/"locl" is not a target — did you mean "local"\?/);
      expect(run.stderr).not.toMatch(/ssh-from/);
      expect(existsSync(join(out, "plan.json"))).toBe(false);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});

describe("runExitCode", () => {
  const ok: TeardownReport = { status: "ok", errors: [], removed: [] };
  const failed: TeardownReport = { status: "failed", errors: ["vm-1 left"], removed: [] };

  it("maps the run's status", () => {
    expect(runExitCode({ status: "complete", teardown: ok })).toBe(0);
    expect(runExitCode({ status: "partial", teardown: ok })).toBe(2);
    expect(runExitCode({ status: "failed", teardown: ok })).toBe(1);
    expect(runExitCode({ status: "interrupted", teardown: ok })).toBe(130);
  });

  it("a failed teardown wins, even over an interruption", () => {
    expect(runExitCode({ status: "interrupted", teardown: failed })).toBe(1);
    expect(runExitCode({ status: "complete", teardown: failed })).toBe(1);
  });
});

describe("stopping a run with a signal (a real process, a fake target)", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  function startRun(env: Record<string, string> = {}) {
    const out = mkdtempSync(join(tmpdir(), "latlab-signal-"));
    dirs.push(out);
    const child = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "fixtures/fakeTargetRun.ts"), "run", "ppg-vs-zone", "--target", "fake", "--out", out], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe", "ipc"],
      env: { ...process.env, CI: "true", ...env },
    });
    let stderr = "";
    child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    const up = new Promise<void>((resolve, reject) => {
      child.once("message", () => resolve());
      child.once("exit", (code) => reject(new Error(`exited with ${code} before up(): ${stderr}`)));
    });
    up.catch(() => {}); // awaited by the tests that need it
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
    const results = () => JSON.parse(readFileSync(join(out, "results.json"), "utf8"));
    return { child, up, exited, results, stderr: () => stderr };
  }

  it("SIGHUP (the SSH session dropped) stops gracefully: teardown, results.json, exit 130, even with stdout and stderr gone", async () => {
    const run = startRun();
    await run.up;
    // The terminal is gone: every later write fails (EPIPE here, EIO on a hung-up tty).
    run.child.stdout!.destroy();
    run.child.stderr!.destroy();
    run.child.kill("SIGHUP");
    expect(await run.exited).toEqual({ code: 130, signal: null });
    const results = run.results();
    expect(results.status).toBe("interrupted");
    expect(results.teardown.status).toBe("ok");
    expect(results.measurements.every((m: { error?: string }) => /interrupted/.test(m.error ?? ""))).toBe(true);
  });

  it("Ctrl-C stops gracefully with exit 130 and says so", async () => {
    const run = startRun();
    await run.up;
    run.child.kill("SIGINT");
    expect(await run.exited).toEqual({ code: 130, signal: null });
    expect(run.stderr()).toMatch(/SIGINT: stopping after the current step/);
    expect(run.results().status).toBe("interrupted");
  });

  it("Ctrl-C at Azure's Deploy? [y/N] prompt answers no and ends the run as interrupted (130), not failed", async () => {
    const run = startRun({ FAKE_PROMPT: "ctrl-c" });
    expect(await run.exited).toEqual({ code: 130, signal: null });
    expect(run.stderr()).toMatch(/SIGINT: stopping after the current step/);
    const results = run.results();
    expect(results.status).toBe("interrupted");
    expect(results.error).toMatch(/not confirmed; nothing was created/);
  });

  it("Ctrl-C followed by a failed teardown exits 1: resources may be leaking", async () => {
    const run = startRun({ FAKE_TEARDOWN: "failed" });
    await run.up;
    run.child.kill("SIGINT");
    expect(await run.exited).toEqual({ code: 1, signal: null });
    expect(run.stderr()).toMatch(/teardown FAILED:\s+fake: vm-1 could not be removed/);
    const results = run.results();
    expect(results.status).toBe("interrupted");
    expect(results.teardown.status).toBe("failed");
  });
});

describe("--replicas", () => {
  it("overrides the experiment's replicas: that many independent host sets per variant", () => {
    const e = defineExperiment({ name: "r", description: "r", axes: { ppg: [false, true] }, hosts: { client: {}, server: {} }, measure: [{ tool: "ping" }] });
    expect(buildPlan(withReplicas(e, undefined)).deployments).toHaveLength(2);
    const plan = buildPlan(withReplicas(e, 3));
    expect(plan.deployments).toHaveLength(6);
    expect(plan.deployments.map((d) => d.replica)).toEqual([0, 1, 2, 0, 1, 2]);
  });

  it("refuses what is not a whole number of at least 1, before anything", async () => {
    for (const bad of ["0", "1.5", "x"]) {
      const r = await cli(["plan", "ppg-vs-zone", "--replicas", bad]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(`argument '${bad}' is invalid. expected a whole number of at least 1`);
    }
  });
});

describe("latlab plan on the local target", () => {
  it("refuses a size or region the target does not know, naming the file and suggesting the name", async () => {
    const r = await cli(["plan", join(import.meta.dirname, "fixtures/local-typo.ts")]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("local-typo.ts");
    expect(r.stderr).toMatch(/hosts\.client\.size: variant default, host client: unknown VM size "Standard_D2sv5" — did you mean "Standard_D2s_v5"\?/);
    expect(r.stderr).toMatch(/unknown region "uksouht" — did you mean "uksouth"\?/);
  });
});
