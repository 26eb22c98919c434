import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runMain } from "./runMain.ts";

// Every flag of the CLI is parsed and checked in src/cli/input/options.ts; these go through main(), as a user would.
const OUTSIDE = join(import.meta.dirname, "fixtures/outside.ts"); // ping, 0.1 s a probe
const SHORT = join(import.meta.dirname, "fixtures/short-tools.ts"); // ping 0.1 s a probe, iperf3
// Every `run` here uses a plan that needs --yes (ping 0.1 s a probe too): were a check missing, the
// plan guard would still refuse it, and no test would bring hosts up.
const MANY = join(import.meta.dirname, "fixtures/many-repetitions.ts");
const scratch = mkdtempSync(join(tmpdir(), "latlab-options-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A `run` that must be refused before anything: its --out folder is never made. */
async function refusedRun(args: string[]) {
  const out = join(scratch, `r-${Math.random().toString(36).slice(2)}`);
  const r = await runMain(["run", ...args, "--out", out]);
  expect(r.code, r.stderr).not.toBe(0);
  expect(existsSync(out), `${args.join(" ")}: ${out} made`).toBe(false);
  return r;
}

describe("integer flags take decimal digits only", () => {
  const cases: [string[], string][] = [
    [["run", MANY, "--replicas"], "--replicas <n>"],
    [["plan", OUTSIDE, "--replicas"], "--replicas <n>"],
    [["run", MANY, "--max-vcpus"], "--max-vcpus <n>"],
    [["plan", OUTSIDE, "--max-vcpus"], "--max-vcpus <n>"],
    [["trend", "outside", "--measure"], "--measure <index>"],
  ];
  for (const [args, flag] of cases) {
    for (const bad of ["0x10", "1e3", "1e0", "0b11", "0o7", " 3", "3 ", "+3", "3.0"]) {
      it(`${args[0]} ${flag} ${JSON.stringify(bad)} is refused naming the flag and the value`, async () => {
        const r = await runMain([...args, bad]);
        expect(r.code).not.toBe(0);
        expect(r.stderr).toContain(`option '${flag}' argument '${bad}' is invalid. expected a whole number`);
        expect(r.stderr).toContain("in decimal digits");
      });
    }
  }

  it("decimal digits are still taken", async () => {
    const r = await runMain(["plan", OUTSIDE, "--replicas", "2", "--max-vcpus", "16", "--json"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    // One host set, two replicas of it.
    expect(JSON.parse(r.stdout).deployments).toHaveLength(2);
  });
});

describe("number flags take decimal notation only", () => {
  for (const [args, flag] of [
    [["plan", OUTSIDE, "--target", "azure", "--max-cost"], "--max-cost <usd>"],
    [["compare", "a", "b", "--fail-on-regression"], "--fail-on-regression <percent>"],
  ] as const) {
    for (const bad of ["0x10", "1e3", "Infinity", " 5"]) {
      it(`${args[0]} ${flag} ${JSON.stringify(bad)} is refused naming the flag and the value`, async () => {
        const r = await runMain([...args, bad]);
        expect(r.code).not.toBe(0);
        expect(r.stderr).toContain(`option '${flag}' argument '${bad}' is invalid. expected`);
        expect(r.stderr).toContain("decimal");
      });
    }
  }
});

describe("--duration below the shortest run a tool accepts", () => {
  it("is refused naming the tool and its minimum, not rounded up silently (plan)", async () => {
    const r = await runMain(["plan", OUTSIDE, "--duration", "0.0001"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("--duration 0.0001");
    expect(r.stderr).toContain("ping at least 0.1 s");
    expect(r.stdout).toBe("");
  });

  it("names every tool it is too short for, and the minimum to give", async () => {
    const r = await runMain(["plan", SHORT, "--duration", "0.5"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("iperf3 at least 1 s");
    expect(r.stderr).not.toContain("ping at least");
    expect(r.stderr).toContain("give at least 1");
  });

  it("a factor too small is refused the same way", async () => {
    const r = await runMain(["plan", SHORT, "--duration", "0.01x"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("--duration 0.01x");
    expect(r.stderr).toMatch(/ping at least 0\.1 s.*iperf3 at least 1 s/);
  });

  it("run refuses it before anything is made", async () => {
    const r = await refusedRun([MANY, "--duration", "0.0001"]);
    expect(r.stderr).toContain("ping at least 0.1 s");
  });

  it("the minimum itself and above are taken", async () => {
    expect((await runMain(["plan", SHORT, "--duration", "1"])).code).toBe(0);
    expect((await runMain(["plan", OUTSIDE, "--duration", "0.1"])).code).toBe(0);
  });
});

describe("--history with --no-history", () => {
  for (const order of [
    ["--history", join(scratch, "h.duckdb"), "--no-history"],
    ["--no-history", "--history", join(scratch, "h.duckdb")],
  ]) {
    it(`run ${order.join(" ")} is refused naming both`, async () => {
      const r = await refusedRun([MANY, ...order]);
      expect(r.stderr).toContain("--history");
      expect(r.stderr).toContain("--no-history");
      expect(r.stderr).toMatch(/together|both/);
    });
  }

  it("resume refuses it too", async () => {
    const r = await runMain(["resume", join(scratch, "nothing-here"), "--history", join(scratch, "h.duckdb"), "--no-history"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/--history <file> and --no-history/);
  });

  it("each alone is taken", async () => {
    // Refused later for the unknown target: the flags themselves passed.
    for (const flags of [["--no-history"], ["--history", join(scratch, "h.duckdb")]]) {
      const r = await refusedRun([MANY, "--target", "nowhere", ...flags]);
      expect(r.stderr).toContain('unknown target "nowhere"');
    }
  });
});

describe("flags for another target", () => {
  const azureOnly: string[][] = [["--max-cost", "5"], ["--ssh-from", "203.0.113.7/32"], ["--backend", "file:///tmp/x"], ["--rehearse"], ["--live-prices"], ["--install-pulumi"]];
  for (const flag of azureOnly) {
    it(`run --target local ${flag.join(" ")} is refused, nothing started`, async () => {
      const r = await refusedRun([MANY, ...flag]);
      expect(r.stderr).toContain(`${flag[0]} applies to --target azure only`);
    });
  }

  it("several are named together", async () => {
    const r = await refusedRun([MANY, "--max-cost", "5", "--ssh-from", "auto"]);
    expect(r.stderr).toContain("--ssh-from and --max-cost apply to --target azure only");
  });

  for (const flag of [["--max-cost", "5"], ["--live-prices"]]) {
    it(`plan --target local ${flag.join(" ")} is refused`, async () => {
      const r = await runMain(["plan", OUTSIDE, ...flag]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`${flag[0]} applies to --target azure only`);
      expect(r.stdout).toBe("");
    });
  }
});
