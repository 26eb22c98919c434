import { spawnSync } from "node:child_process";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { TOOL_NAMES } from "../../src/tools/registry.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const parse = (...args: string[]) => spawnSync(process.execPath, [join(ROOT, "bin/latlab.js"), "parse", ...args, "--json"], { cwd: ROOT, encoding: "utf8" });

// One hand-captured output per tool, as a user who ran the tool by hand would have it.
const CAPTURES: Record<string, { file: string; params?: string; metric: string; count: number }> = {
  sockperf: { file: "tests/fixtures/sockperf/tcp-one-way.stdout", metric: "rtt", count: 549 },
  ping: { file: "tests/fixtures/ping/partial-loss.stdout", metric: "rtt", count: 15 },
  qperf: { file: "tests/fixtures/qperf/tcp_lat.16M.vv.stdout", metric: "rtt", count: 1 },
  iperf3: { file: "tests/fixtures/iperf3/tcp-p4.json", params: '{"parallel": 4}', metric: "throughput", count: 3 },
  "tcp-echo": { file: "tests/fixtures/tcp-echo/break.csv", metric: "rtt", count: 59 },
  traceroute: { file: "tests/fixtures/traceroute/nmap-xml-closed.stdout", metric: "hops", count: 1 },
};

describe("latlab parse <tool> <file>", () => {
  it("has a capture for every registered tool", () => {
    expect(Object.keys(CAPTURES).sort()).toEqual([...TOOL_NAMES].sort());
  });

  for (const [tool, c] of Object.entries(CAPTURES)) {
    it(`normalises a ${tool} capture`, () => {
      const r = parse(tool, c.file, ...(c.params ? ["--params", c.params] : []));
      expect(r.status, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout);
      expect(out.summary).toMatchObject({ metric: c.metric, count: c.count });
    });
  }

  it("reports sockperf's one-way print as RTT: twice the printed average", () => {
    const out = JSON.parse(parse("sockperf", "tests/fixtures/sockperf/tcp-one-way.stdout").stdout);
    expect(out.summary.unit).toBe("us");
    expect(out.reported.printed).toBe("one-way");
  });

  it("refuses bad --params with the field named", () => {
    const r = parse("iperf3", "tests/fixtures/iperf3/tcp-p4.json", "--params", '{"parallel": "x"}');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('--params: parallel: expected number, got "x"');
  });
});
