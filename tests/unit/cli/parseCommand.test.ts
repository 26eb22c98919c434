import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { readCapture } from "../../../src/cli/input/readInput.ts";
import { tempDirs } from "../../tempDirs.ts";
import { runMain } from "./runMain.ts";
import { spawnLatlab } from "./spawnLatlab.ts";

const ROOT = resolve(import.meta.dirname, "../../..");
const SOCKPERF = join(ROOT, "tests/fixtures/sockperf");
const tempDir = tempDirs();

/**
 * bin/latlab.js, in a process of its own: what is under test may never return (the kill is a
 * guard that turns a hang into this test's failure, not a time budget).
 */
const latlab = (args: string[]) => spawnLatlab(args, { killAfterMs: 120_000 });

describe("latlab parse reads only a regular file, bounded, and names the path it refuses", () => {
  it("refuses /dev/zero, as the capture and as --file, instead of reading forever", async () => {
    for (const args of [["parse", "ping", "/dev/zero"], ["parse", "sockperf", join(SOCKPERF, "tcp-full-rtt.stdout"), "--file", "/dev/zero"]]) {
      const r = await latlab(args);
      expect(r.stderr).toMatch(/^latlab: (--file )?\/dev\/zero: a character device, not a file/);
      expect(r.stdout).toBe("");
      expect(r.code).toBe(1);
    }
  });

  it("refuses a FIFO without waiting for a writer", async () => {
    const fifo = join(tempDir("latlab-parse-"), "capture.fifo");
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
    const r = await latlab(["parse", "ping", fifo]);
    expect(r.stderr).toBe(`latlab: ${fifo}: a FIFO (named pipe), not a file: expected a tool's captured output\n`);
    expect(r.code).toBe(1);
  });

  it("names the folder it was given (EISDIR alone named nothing), and a missing file", async () => {
    const dir = tempDir("latlab-parse-");
    const folder = await runMain(["parse", "ping", dir]);
    expect(folder.stderr).toBe(`latlab: ${dir}: a folder, not a file: expected a tool's captured output\n`);
    expect(folder.code).toBe(1);
    const missing = await runMain(["parse", "ping", join(dir, "nope.txt")]);
    expect(missing.stderr).toBe(`latlab: ${join(dir, "nope.txt")}: no such file\n`);
    expect(missing.code).toBe(1);
  });

  it("refuses a file over the limit, and reads one under it whole", () => {
    const dir = tempDir("latlab-parse-");
    const file = join(dir, "big.txt");
    writeFileSync(file, "x".repeat(2048));
    expect(() => readCapture(file, undefined, 1024)).toThrow(`${file}: 2048 bytes, over the 1024 bytes a capture may have`);
    expect(readCapture(file, undefined, 2048)).toBe("x".repeat(2048));
    // A file whose size says 0 (as /proc's do) is still read to its end.
    expect(readCapture("/proc/self/status")).toMatch(/^Name:/);
  });
});

describe("latlab parse sockperf of a truncated capture", () => {
  it("exits non-zero naming the file and what the summary lacks", async () => {
    const dir = tempDir("latlab-parse-");
    const whole = readFileSync(join(SOCKPERF, "tcp-full-rtt.stdout"), "utf8");
    // Cut after "percentile 75.000": no p50 and no <MIN> observation.
    const cut = join(dir, "cut.stdout");
    writeFileSync(cut, whole.slice(0, whole.indexOf("sockperf: ---> percentile 50.000")));
    const r = await runMain(["parse", "sockperf", cut]);
    expect(r.stderr).toBe(
      `latlab: ${cut}: sockperf: sockperf's summary is incomplete (output cut short?): no percentile 50.000, <MIN> observation; without a full log (--full-log) the summary is the result, and it needs every one of these\n`,
    );
    expect(r.stdout).toBe("");
    expect(r.code).toBe(1);
    // The whole capture still parses.
    const full = join(dir, "whole.stdout");
    writeFileSync(full, whole);
    expect(await runMain(["parse", "sockperf", full])).toMatchObject({ code: 0, stdout: expect.stringMatching(/^sockperf rtt \(us\): n=550 /) });
  });
});

describe("latlab parse fails for a capture that holds no measurement, whatever the tool", () => {
  it("a traceroute that never reached its target: the warnings printed, exit 1 naming the file", async () => {
    const file = join(ROOT, "tests/fixtures/traceroute/nmap-xml-unreachable.stdout");
    const r = await runMain(["parse", "traceroute", file]);
    expect(r.stdout).toMatch(/warning: target 198\.18\.3\.2 not reached/);
    expect(r.stderr).toContain(`latlab parse: ${file} holds no traceroute measurement`);
    expect(r.code).toBe(1);
    const json = await runMain(["parse", "traceroute", file, "--json"]);
    expect(JSON.parse(json.stdout).summary).toBeUndefined();
    expect(json.code).toBe(1);
  });

  it("a traceroute that reached it still exits 0", async () => {
    const r = await runMain(["parse", "traceroute", join(ROOT, "tests/fixtures/traceroute/nmap-xml-three-hops.stdout")]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });
});
