import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDirs } from "../../tempDirs.ts";
import { runMain } from "./runMain.ts";

const FIXTURES = resolve(import.meta.dirname, "../../fixtures");
const tempDir = tempDirs();

/** A real capture cut before `marker` (which must be in it once), written to a file of its own. */
function cut(tool: string, name: string, marker: string): string {
  const text = readFileSync(join(FIXTURES, tool, name), "utf8");
  expect(text.split(marker).length - 1, `${marker} in ${name}`).toBe(1);
  const file = join(tempDir("latlab-parse-cut-"), name);
  writeFileSync(file, text.slice(0, text.indexOf(marker)));
  return file;
}

// Issue 23: "parse exit codes for non-sockperf tools": a capture cut short exits non-zero,
// naming the file and what is missing, as `parse sockperf` of a cut summary does.
describe("latlab parse of a capture cut short, for ping, iperf3 and traceroute", () => {
  it.each([
    ["ping", "normal.stdout", "rtt min/avg/max/mdev", "ping: ping's summary is incomplete (output cut short?): no rtt min/avg/max/mdev line"],
    ["iperf3", "tcp-p1.json", '\n\t"end":', `iperf3: iperf3's JSON ends before it is complete (output cut short?): it has "start", "intervals" but no "end"`],
    ["traceroute", "nmap-text-three-hops.stdout", "Nmap done:", `traceroute: nmap's output is incomplete (output cut short?): it started ("Starting Nmap") but has no "Nmap done" line`],
    ["traceroute", "nmap-xml-three-hops.stdout", "</nmaprun>", "traceroute: nmap's XML is incomplete (output cut short?): it has <nmaprun> but no </nmaprun>"],
  ])("%s %s cut before %j: exit 1, the file and what is missing", async (tool, name, marker, why) => {
    const file = cut(tool, name, marker);
    const r = await runMain(["parse", tool, file]);
    expect(r.stderr).toContain(`latlab: ${file}: ${why}`);
    expect(r.stdout).toBe("");
    expect(r.code).toBe(1);
    // The whole capture still parses.
    expect((await runMain(["parse", tool, join(FIXTURES, tool, name)])).code).toBe(0);
  });

  it("a folder given as --file is named too (EISDIR alone named nothing)", async () => {
    const dir = tempDir("latlab-parse-cut-");
    const r = await runMain(["parse", "ping", join(FIXTURES, "ping", "normal.stdout"), "--file", dir]);
    expect(r.stderr).toBe(`latlab: --file ${dir}: a folder, not a file: expected a tool's captured output\n`);
    expect(r.code).toBe(1);
  });
});
