/**
 * Issue 23: a capture cut short is refused, naming what is missing, as sockperf's truncated
 * summary is (tests/unit/cli/parseCommand.test.ts) — where the output itself shows the cut: ping
 * without its statistics or rtt line, iperf3's JSON not closed, nmap's output without its end
 * ("Nmap done", </nmaprun>). Each case is a real capture from tests/fixtures/<tool>/ cut here, in
 * the open, at a point `cutBefore` checks is in the capture exactly once.
 */
import { describe, expect, it } from "vitest";
import { iperf3, Iperf3ParamsSchema } from "../../../src/tools/iperf3/index.ts";
import { ping, PingParamsSchema } from "../../../src/tools/ping/index.ts";
import { traceroute, TracerouteParamsSchema } from "../../../src/tools/traceroute/index.ts";
import { clientOutput, expectToolError, fixture } from "./helpers.ts";

/** `text` up to (not including) `marker`, which must be in it exactly once. */
function cutBefore(text: string, marker: string, extra = 0): string {
  expect(text.split(marker).length - 1, `cutBefore: ${marker} in the capture`).toBe(1);
  return text.slice(0, text.indexOf(marker) + extra);
}

const runPing = (stdout: string) => ping.parse(clientOutput({ stdout }), PingParamsSchema.parse({}));
const runIperf3 = (stdout: string) => iperf3.parse(clientOutput({ stdout }), Iperf3ParamsSchema.parse({}));
const runTrace = (stdout: string) => traceroute.parse(clientOutput({ stdout }), TracerouteParamsSchema.parse({}));

describe("ping: a capture cut in or before its summary", () => {
  const normal = fixture("ping", "normal.stdout");

  it("the whole capture parses", () => {
    expect(runPing(normal).samples).toHaveLength(20);
  });

  it("cut before the rtt line: refused, naming the rtt line", () => {
    const e = expectToolError(() => runPing(cutBefore(normal, "rtt min/avg/max/mdev")), "ping");
    expect(e.message).toBe("ping: ping's summary is incomplete (output cut short?): no rtt min/avg/max/mdev line after the statistics, which ping prints whenever timed replies came back");
  });

  it("cut inside the statistics line: refused, quoting what is there", () => {
    const e = expectToolError(() => runPing(cutBefore(normal, "0% packet loss")), "ping");
    expect(e.message).toBe('ping: ping\'s summary is incomplete (output cut short?): the statistics line has no packet loss figure: "20 packets transmitted, 20 received,"');
  });

  it("the same for a capture with duplicates (another real run)", () => {
    const dups = fixture("ping", "duplicates.stdout");
    expectToolError(() => runPing(cutBefore(dups, "rtt min/avg/max/mdev")), "ping");
    expectToolError(() => runPing(cutBefore(dups, "duplicates, 0% packet loss")), "ping");
  });

  it("cut before the statistics: refused as before", () => {
    expect(expectToolError(() => runPing(cutBefore(normal, "--- 127.0.0.1 ping statistics ---")), "ping").message).toMatch(/^ping: no ping statistics in output/);
  });
});

describe("iperf3: JSON cut off", () => {
  const whole = fixture("iperf3", "tcp-p1.json");

  it("the whole capture parses", () => {
    expect(runIperf3(whole).samples.length).toBeGreaterThan(0);
  });

  it("cut inside \"intervals\": refused, saying the JSON is not closed and which sections are missing", () => {
    const e = expectToolError(() => runIperf3(cutBefore(whole, '\n\t"end":')), "iperf3");
    expect(e.message).toBe('iperf3: iperf3\'s JSON ends before it is complete (output cut short?): it has "start", "intervals" but no "end", which holds the results');
  });

  it("cut inside \"start\": the same, naming both missing sections", () => {
    const e = expectToolError(() => runIperf3(cutBefore(whole, '\n\t"intervals":')), "iperf3");
    expect(e.message).toBe('iperf3: iperf3\'s JSON ends before it is complete (output cut short?): it has "start" but no "intervals", "end", which holds the results');
  });

  it("cut just before its last brace: still cut", () => {
    const e = expectToolError(() => runIperf3(whole.slice(0, whole.trimEnd().length - 1)), "iperf3");
    expect(e.message).toMatch(/^iperf3: iperf3's JSON ends before it is complete \(output cut short\?\): it has "start", "intervals", "end"/);
  });
});

describe("traceroute (nmap): output without nmap's end", () => {
  it("text: the whole capture parses; cut before \"Nmap done\" it is refused", () => {
    const text = fixture("traceroute", "nmap-text-three-hops.stdout");
    expect(runTrace(text).samples).toEqual([3]);
    // Cut after the last hop line: the table looks whole, but nmap never said it was done.
    const e = expectToolError(() => runTrace(cutBefore(text, "Nmap done:")), "traceroute");
    expect(e.message).toBe('traceroute: nmap\'s output is incomplete (output cut short?): it started ("Starting Nmap") but has no "Nmap done" line');
    // In the middle of the hop table: the same.
    expectToolError(() => runTrace(cutBefore(text, "3   0.02 ms")), "traceroute");
  });

  it("XML: the whole capture parses; cut before </nmaprun> or inside <trace> it is refused", () => {
    const xml = fixture("traceroute", "nmap-xml-three-hops.stdout");
    expect(runTrace(xml).samples).toEqual([3]);
    const e = expectToolError(() => runTrace(cutBefore(xml, "</nmaprun>")), "traceroute");
    expect(e.message).toBe("traceroute: nmap's XML is incomplete (output cut short?): it has <nmaprun> but no </nmaprun>");
    expectToolError(() => runTrace(cutBefore(xml, '<hop ttl="3"')), "traceroute");
  });

  it("a pasted TRACEROUTE table alone (no \"Starting Nmap\") is still read", () => {
    const text = fixture("traceroute", "nmap-text-three-hops.stdout");
    const table = text.slice(text.indexOf("TRACEROUTE"), text.indexOf("Nmap done:"));
    expect(runTrace(table).samples).toEqual([3]);
  });
});
