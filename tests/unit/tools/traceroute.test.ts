import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  nmapTracerouteArgs,
  nmapTracerouteCommand,
  traceroute,
  TracerouteParamsSchema,
  type TracerouteParams,
} from "../../../src/tools/traceroute/index.ts";
import {
  detectTraceFormat,
  parseNmapText,
  parseNmapVersion,
  parseNmapXml,
  parseTcptraceroute,
  parseTraceroute,
} from "../../../src/tools/traceroute/parse.ts";
import { capture, clientContext, clientOutput, expectToolError, fixture, serverContext } from "./helpers.ts";

const fx = (name: string) => fixture("traceroute", name);
/** The `seed-*` tables were pasted from the seed experiments: stdout only. */
const output = (name: string, exitCode = 0) => capture("traceroute", name, { exitCode, stderr: !name.startsWith("seed-") });
const params = (over: Partial<TracerouteParams> = {}): TracerouteParams => TracerouteParamsSchema.parse(over);
const run = (name: string, exitCode = 0) => traceroute.parse(output(name, exitCode), params());

describe("traceroute params", () => {
  it("fills defaults", () => {
    expect(TracerouteParamsSchema.parse({})).toEqual({ port: 22, sudo: "auto" });
  });

  it("takes a port in 1..65535 and a sudo mode", () => {
    expect(params({ port: 443, sudo: "never" })).toEqual({ port: 443, sudo: "never" });
    // maxHops included: nmap has no such limit, so it is an unknown key, not an option.
    for (const bad of [{ port: 0 }, { port: 65536 }, { port: 22.5 }, { port: "22" }, { sudo: "yes" }, { maxHops: 10 }]) {
      expect(TracerouteParamsSchema.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
  });
});

describe("traceroute commands", () => {
  const ctx = clientContext({ targetAddress: "198.18.3.2", port: 0 });

  it("needs no server", () => {
    expect(traceroute.server(serverContext({ port: 1 }), params())).toBeUndefined();
  });

  it("builds the nmap invocation (nmap is the one binary)", () => {
    expect(traceroute.binaries).toEqual(["nmap"]);
    expect(nmapTracerouteArgs("198.18.3.2", 22)).toBe("nmap -Pn -n -sS -p 22 --traceroute -oX - 198.18.3.2");
    expect(nmapTracerouteArgs("host name", 80)).toBe("nmap -Pn -n -sS -p 80 --traceroute -oX - 'host name'");
  });

  it("has root, sudo and auto forms", () => {
    const nmap = "nmap -Pn -n -sS -p 22 --traceroute -oX - 198.18.3.2";
    expect(traceroute.client(ctx, params({ sudo: "never" }))).toEqual({ command: nmap, timeoutSeconds: 120, files: [] });
    expect(traceroute.client(ctx, params({ sudo: "always" })).command).toBe(`sudo -n ${nmap}`);
    expect(traceroute.client(ctx, params()).command).toBe(`if [ "$(id -u)" -eq 0 ]; then ${nmap}; else sudo -n ${nmap}; fi`);
    expect(traceroute.client(ctx, params({ port: 8080 })).command).toContain("-p 8080");
    expect(nmapTracerouteCommand("198.18.3.2", 22)).toBe(traceroute.client(ctx, params()).command);
  });

  describe("the auto form in a real shell", () => {
    // Stubs for id, nmap and sudo: checks which one the command runs, without running nmap.
    const bin = mkdtempSync(join(tmpdir(), "lltest-tr-bin-"));
    const stub = (name: string, body: string) => {
      writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
      chmodSync(join(bin, name), 0o755);
    };
    stub("id", 'echo "$FAKE_UID"');
    stub("nmap", 'echo "nmap $*"');
    stub("sudo", 'echo "sudo $*"');
    afterAll(() => rmSync(bin, { recursive: true, force: true }));
    const sh = (uid: string) =>
      execFileSync("/bin/sh", ["-c", traceroute.client(ctx, params()).command], { env: { PATH: bin, FAKE_UID: uid } }).toString();

    it("runs nmap directly as root", () => {
      expect(sh("0")).toBe("nmap -Pn -n -sS -p 22 --traceroute -oX - 198.18.3.2\n");
    });
    it("goes through sudo -n otherwise", () => {
      expect(sh("1000")).toBe("sudo -n nmap -Pn -n -sS -p 22 --traceroute -oX - 198.18.3.2\n");
    });
  });

  it("has no duration to set", () => {
    const p = params({ port: 80 });
    expect(traceroute.withDuration(p, 60)).toBe(p);
    expect(traceroute.measurementSeconds(p)).toBeGreaterThan(0);
    expect(traceroute.estimateSeconds(p)).toBeLessThan(traceroute.client(ctx, p).timeoutSeconds);
  });
});

describe("traceroute version", () => {
  it("reads nmap --version", () => {
    expect(traceroute.versionCommand).toBe("nmap --version");
    expect(parseNmapVersion(fx("version.txt"))).toBe("7.93");
    expect(traceroute.parseVersion(fx("version.txt"))).toBe("7.93");
  });
  it("reads the other banners too", () => {
    expect(parseNmapVersion(fx("tcptraceroute-version.txt"))).toBe("1.5beta7");
    expect(parseNmapVersion(fx("nmap-text-three-hops.stdout"))).toBe("7.93");
    expect(parseNmapVersion("nothing here")).toBeUndefined();
  });
});

describe("format detection", () => {
  it.each([
    ["nmap-xml-three-hops", "nmap-xml"],
    ["nmap-xml-host-down", "nmap-xml"],
    ["nmap-text-three-hops", "nmap-text"],
    ["nmap-text-host-down", "nmap-text"],
    ["seed-public-ip", "nmap-text"],
    ["seed-peered", "nmap-text"],
    ["tcptraceroute-three-hops", "tcptraceroute"],
    ["tcptraceroute-silent-hop", "tcptraceroute"],
    ["tcptraceroute-unreachable", "tcptraceroute"],
  ])("%s is %s", (name, format) => {
    const o = output(name);
    expect(detectTraceFormat(o.stdout, o.stderr)).toBe(format);
    if (!name.includes("host-down")) expect(traceroute.parse(o, params()).reported?.format).toBe(format);
  });

  it("recognises tcptraceroute from its stderr alone (nothing answered)", () => {
    expect(detectTraceFormat("", fx("tcptraceroute-three-hops.stderr"))).toBe("tcptraceroute");
  });

  it("knows nothing of other text", () => {
    expect(detectTraceFormat("", "You requested a scan type which requires root privileges.\nQUITTING!\n")).toBeUndefined();
    expect(detectTraceFormat("hello\nworld\n")).toBeUndefined();
  });
});

describe("nmap XML (what latlab runs)", () => {
  it("3 hops, port open", () => {
    const r = run("nmap-xml-three-hops");
    expect(r.metric).toBe("hops");
    expect(r.unit).toBe("hops");
    expect(r.samples).toEqual([3]);
    expect(r.warnings).toEqual([]);
    expect(r.reported).toEqual({
      format: "nmap-xml",
      target: "198.18.3.2",
      targetReached: "yes",
      hops: 3,
      hopsSilent: 0,
      portState: "open",
      port: 22,
      probe: "tcp/22",
      hop1Address: "198.18.1.1",
      hop1RttUs: 110,
      hop2Address: "198.18.2.2",
      hop2RttUs: 170,
      hop3Address: "198.18.3.2",
      hop3RttUs: 10,
    });
  });

  it("1 hop on the same L2 (nmap sends no probes)", () => {
    const r = run("nmap-xml-one-hop");
    expect(r.samples).toEqual([1]);
    expect(r.reported).toMatchObject({ hops: 1, probe: "direct", hop1Address: "198.18.4.2", hop1RttUs: 30, targetReached: "yes" });
    expect(r.warnings).toEqual([]);
  });

  it("closed port: the target answered, so it is reached", () => {
    const r = run("nmap-xml-closed");
    expect(r.samples).toEqual([3]);
    expect(r.reported).toMatchObject({ portState: "closed", port: 23, probe: "tcp/23", targetReached: "yes" });
  });

  it("filtered port: nmap traced with ICMP, said in a warning", () => {
    const r = run("nmap-xml-filtered");
    expect(r.samples).toEqual([3]);
    expect(r.reported).toMatchObject({ portState: "filtered", probe: "icmp", targetReached: "yes", hop3Address: "198.18.3.2" });
    expect(r.warnings).toEqual(["port 22 is filtered, so nmap traced with ICMP instead of TCP: the hop count is of the ICMP path"]);
    expect(run("nmap-xml-target-rejects").warnings).toEqual(r.warnings);
  });

  it("filtered but directly connected: no warning, 1 hop", () => {
    const r = run("nmap-xml-direct-filtered");
    expect(r.samples).toEqual([1]);
    expect(r.reported).toMatchObject({ portState: "filtered", probe: "direct", hop1RttUs: 20 });
    expect(r.warnings).toEqual([]);
  });

  it("unreachable target: partial trace, no sample, a warning", () => {
    const r = run("nmap-xml-unreachable");
    expect(r.samples).toEqual([]);
    expect(r.reported).toMatchObject({ targetReached: "no", lastAnsweringHop: 2, hop1Address: "198.18.1.1", hop2Address: "198.18.2.2" });
    expect(r.reported?.hops).toBeUndefined();
    expect(r.warnings).toContain("target 198.18.3.2 not reached: last answer from hop 2 (198.18.2.2); hop count unknown");
  });

  it("silent hop: a ttl missing from the XML", () => {
    const r = run("nmap-xml-silent-hop");
    expect(r.samples).toEqual([3]);
    expect(r.reported).toMatchObject({ hopsSilent: 1, hop2Address: "198.18.2.2", hop2RttUs: 20, hop3RttUs: 20 });
    expect(r.reported).not.toHaveProperty("hop1Address");
    expect(r.reported).not.toHaveProperty("hop1RttUs");
  });

  it("rtt `-&#45;`: decoded, left out, warned about", () => {
    const r = run("nmap-xml-rtt-unknown-send-ip");
    expect(r.samples).toEqual([1]);
    expect(r.reported).toMatchObject({ hop1Address: "198.18.4.2" });
    expect(r.reported).not.toHaveProperty("hop1RttUs");
    expect(r.warnings).toEqual(["no RTT for hop 1 (printed as --); left out"]);
  });

  it("parseNmapXml gives the hops and silent ttls", () => {
    const [t] = parseNmapXml(fx("nmap-xml-silent-hop.stdout"));
    expect(t).toMatchObject({ target: "198.18.3.2", reached: true, hopCount: 3, silent: [1], probe: "tcp/22" });
    expect(t?.hops).toEqual([
      { ttl: 2, address: "198.18.2.2", rttUs: 20 },
      { ttl: 3, address: "198.18.3.2", rttUs: 20 },
    ]);
  });

  it("takes host names and keeps the first of several hosts", () => {
    const xml = fx("nmap-xml-three-hops.stdout")
      .replace('rtt="0.17"/>', 'rtt="0.17" host="r2.example"/>')
      .replace(/<host [\s\S]*<\/host>/, (h) => `${h}\n${h.replaceAll("198.18.3.2", "198.18.9.9")}`);
    const r = traceroute.parse(clientOutput({ stdout: xml }), params());
    expect(r.samples).toEqual([3]);
    expect(r.reported).toMatchObject({ hop2Name: "r2.example", target: "198.18.3.2" });
    expect(r.warnings).toEqual(["output traces 2 targets; kept the first (198.18.3.2)"]);
  });

  it("refuses a cut-off XML (run killed mid-trace): its hops are not all there (issue 23; was a note)", () => {
    const xml = fx("nmap-xml-three-hops.stdout");
    const cut = xml.slice(0, xml.indexOf('<hop ttl="3"'));
    const e = expectToolError(() => traceroute.parse(clientOutput({ stdout: cut, exitCode: null }), params()), "traceroute");
    expect(e.message).toBe("traceroute: nmap's XML is incomplete (output cut short?): it has <nmaprun> but no </nmaprun>");
    // What the hops read say, for the record: the trace ends inside <trace>.
    expect(parseNmapXml(cut)[0]!.notes).toContain("the XML ends inside <trace> (output cut off?)");
  });
});

describe("nmap plain text (pasted)", () => {
  it("matches the XML of the same run", () => {
    for (const name of ["three-hops", "one-hop", "closed", "filtered", "silent-hop", "direct-filtered"]) {
      const text = run(`nmap-text-${name}`);
      const xml = run(`nmap-xml-${name}`);
      expect(text.samples, name).toEqual(xml.samples);
      const strip = (r: Record<string, unknown>) =>
        Object.fromEntries(Object.entries(r).filter(([k]) => k !== "format" && !k.endsWith("RttUs")));
      expect(strip(text.reported!), name).toEqual(strip(xml.reported!));
    }
  });

  it("3 hops with their RTTs", () => {
    const r = run("nmap-text-three-hops");
    expect(r.samples).toEqual([3]);
    expect(r.reported).toMatchObject({ format: "nmap-text", hop1RttUs: 20, hop2RttUs: 20, hop3RttUs: 20, probe: "tcp/22", portState: "open" });
  });

  it("silent hop `1   ...`", () => {
    const r = run("nmap-text-silent-hop");
    expect(r.samples).toEqual([3]);
    expect(r.reported).toMatchObject({ hopsSilent: 1 });
    expect(r.reported).not.toHaveProperty("hop1Address");
  });

  it("unreachable: `3   ... 30` after the last answer", () => {
    const r = run("nmap-text-unreachable");
    expect(r.samples).toEqual([]);
    expect(r.reported).toMatchObject({ targetReached: "no", hopsSilent: 0, hopsSilentAfter: 28, lastAnsweringHop: 2, probe: "icmp" });
    expect(r.warnings).toContain("target 198.18.3.2 not reached: last answer from hop 2 (198.18.2.2), then hops 3-30 silent; hop count unknown");
  });

  it("seed, public IP: `1   ... 7` then hop 8", () => {
    const r = run("seed-public-ip");
    expect(r.samples).toEqual([8]);
    expect(r.reported).toEqual({
      format: "nmap-text",
      targetReached: "yes",
      hops: 8,
      hopsSilent: 7,
      hop8Address: "13.xx.xx.xx",
      hop8RttUs: 0,
    });
    expect(r.warnings).toEqual([]);
  });

  it("seed, peered network: 1 hop", () => {
    const r = run("seed-peered");
    expect(r.samples).toEqual([1]);
    expect(r.reported).toMatchObject({ hops: 1, hopsSilent: 0, hop1Address: "10.xx.xx.xx", hop1RttUs: 0 });
  });

  it("both seed tables pasted together are two traces", () => {
    const both = `${fx("seed-public-ip.stdout")}\n${fx("seed-peered.stdout")}`;
    expect(parseNmapText(both).map((t) => t.hopCount)).toEqual([8, 1]);
  });

  it("several targets: `Hops 1-2 are the same as for …`", () => {
    const traces = parseNmapText(fx("nmap-text-two-targets.stdout"));
    expect(traces.map((t) => [t.target, t.hopCount, t.portState])).toEqual([
      ["198.18.2.2", 2, "closed"],
      ["198.18.3.2", 3, "open"],
    ]);
    expect(traces[1]).toMatchObject({ shared: [1, 2], silent: [], reached: true });
    expect(traces[1]?.hops).toEqual([{ ttl: 3, address: "198.18.3.2", rttUs: 20 }]);
    expect(traces[1]?.notes).toEqual(["hops 1-2 are the same as for 198.18.2.2 (not listed)"]);
    const r = run("nmap-text-two-targets");
    expect(r.samples).toEqual([2]);
    expect(r.warnings).toEqual(["output traces 2 targets; kept the first (198.18.2.2)"]);
  });

  it("name (address) rows, `--` RTTs and CRLF line ends", () => {
    const text = [
      "Nmap scan report for scanme.example (74.207.244.221)",
      "TRACEROUTE (using port 53/tcp)",
      "HOP RTT      ADDRESS",
      "1   --       gw.example (10.0.0.1)",
      "2   ... 10",
      "11  17.65 ms li86-221.members.example (74.207.244.221)",
      "",
    ].join("\r\n");
    const r = traceroute.parse(clientOutput({ stdout: text }), params());
    expect(r.samples).toEqual([11]);
    expect(r.reported).toMatchObject({
      target: "74.207.244.221",
      hopsSilent: 9,
      hop1Address: "10.0.0.1",
      hop1Name: "gw.example",
      hop11Address: "74.207.244.221",
      hop11Name: "li86-221.members.example",
      hop11RttUs: 17650,
      probe: "tcp/53",
    });
    expect(r.warnings).toEqual(["no RTT for hop 1 (printed as --); left out"]);
  });
});

describe("tcptraceroute text", () => {
  it("3 hops: the lowest of the three probe RTTs per hop", () => {
    const r = run("tcptraceroute-three-hops");
    expect(r.samples).toEqual([3]);
    expect(r.reported).toEqual({
      format: "tcptraceroute",
      target: "198.18.3.2",
      targetReached: "yes",
      hops: 3,
      hopsSilent: 0,
      portState: "open",
      port: 22,
      probe: "tcp/22",
      hop1Address: "198.18.1.1",
      hop1RttUs: 27,
      hop2Address: "198.18.2.2",
      hop2RttUs: 41,
      hop3Address: "198.18.3.2",
      hop3RttUs: 53,
    });
  });

  it("1 hop and a closed port", () => {
    expect(run("tcptraceroute-one-hop").samples).toEqual([1]);
    const closed = run("tcptraceroute-closed");
    expect(closed.samples).toEqual([3]);
    expect(closed.reported).toMatchObject({ portState: "closed", port: 23, hop3RttUs: 33 });
  });

  it("silent hop `* * *`", () => {
    const r = run("tcptraceroute-silent-hop");
    expect(r.samples).toEqual([3]);
    expect(r.reported).toMatchObject({ hopsSilent: 1, hop2Address: "198.18.2.2", hop2RttUs: 35 });
    expect(r.reported).not.toHaveProperty("hop1Address");
  });

  it("unreachable, with single lost probes", () => {
    const r = run("tcptraceroute-unreachable", 1);
    expect(r.samples).toEqual([]);
    expect(r.reported).toMatchObject({ targetReached: "no", hop1RttUs: 47, hop2RttUs: 46, lastAnsweringHop: 2, hopsSilentAfter: 3 });
    expect(r.warnings).toEqual(["target 198.18.3.2 not reached: last answer from hop 2 (198.18.2.2), then hops 3-5 silent; hop count unknown"]);
  });

  it("names, annotations and a second address on one line", () => {
    const t = parseTcptraceroute(
      [
        " 1  gw.example (10.0.0.1)  0.5 ms  0.4 ms  0.6 ms",
        " 2  10.0.1.1  1.0 ms 10.0.1.2  1.1 ms *",
        " 3  10.0.2.1  2.0 ms !H  2.2 ms !H  *",
        " 4  srv.example (10.0.3.2) [open]  3.0 ms  3.1 ms  2.9 ms",
      ].join("\n"),
      "Tracing the path to srv.example (10.0.3.2) on TCP port 443 (https), 30 hops max\n",
    );
    expect(t).toMatchObject({ target: "10.0.3.2", reached: true, hopCount: 4, port: 443, portState: "open" });
    expect(t.hops).toEqual([
      { ttl: 1, address: "10.0.0.1", name: "gw.example", rttUs: 400 },
      { ttl: 2, address: "10.0.1.1", rttUs: 1000 },
      { ttl: 3, address: "10.0.2.1", rttUs: 2000 },
      { ttl: 4, address: "10.0.3.2", name: "srv.example", rttUs: 2900 },
    ]);
    expect(t.notes).toEqual(["hop 2: probes answered from more than one address; kept 10.0.1.1"]);
  });
});

describe("errors", () => {
  it.each([
    ["nmap-xml-non-root", 1, "traceroute: You requested a scan type which requires root privileges. QUITTING!"],
    ["nmap-text-non-root", 1, "traceroute: You requested a scan type which requires root privileges. QUITTING!"],
    ["nmap-xml-no-route", 0, "traceroute: setup_target: failed to determine route to 198.19.9.9"],
    ["nmap-text-no-route", 0, "traceroute: setup_target: failed to determine route to 198.19.9.9"],
    ["nmap-xml-unknown-host", 0, 'traceroute: Failed to resolve "no-such-host.invalid".'],
    [
      "nmap-xml-host-down",
      0,
      "traceroute: target down: Nmap done at Sat Nov 21 05:02:44 2026; 1 IP address (0 hosts up) scanned in 1.46 seconds",
    ],
    ["nmap-text-host-down", 0, "traceroute: target down: Nmap done: 1 IP address (0 hosts up) scanned in 1.47 seconds"],
    [
      "nmap-text-host-down-no-Pn",
      0,
      "traceroute: target down: Note: Host seems down. If it is really up, but blocking our ping probes, try -Pn; Nmap done: 1 IP address (0 hosts up) scanned in 3.07 seconds",
    ],
    ["nmap-xml-loopback", 0, "traceroute: nmap printed no trace for the target (nmap never traces a loopback address)"],
    ["auto-non-root-no-sudo", 127, "traceroute: /bin/sh: 1: sudo: not found"],
    ["tcptraceroute-no-route", 1, "traceroute: connect: Network is unreachable"],
    ["tcptraceroute-unknown-host", 1, "traceroute: Bad destination address: no-such-host.invalid"],
  ])("%s", (name, exitCode, message) => {
    const e = expectToolError(() => run(name, exitCode), "traceroute");
    expect(e.message).toBe(message);
  });

  it("sudo and a missing nmap (the shell's words)", () => {
    const err = (stderr: string, exitCode = 1) =>
      expectToolError(() => traceroute.parse(clientOutput({ stderr, exitCode }), params())).message;
    expect(err("sudo: a password is required\n")).toBe("traceroute: sudo: a password is required");
    expect(err("sudo: nmap: command not found\n")).toBe("traceroute: sudo: nmap: command not found");
    expect(err("sh: 1: nmap: not found\n", 127)).toBe("traceroute: sh: 1: nmap: not found");
  });

  it("empty or unknown output", () => {
    expect(expectToolError(() => parseTraceroute({ stdout: "", stderr: "", exitCode: 137 })).message).toBe("traceroute: no output (exit 137)");
    expect(expectToolError(() => parseTraceroute({ stdout: "something else\n" })).message).toBe(
      "traceroute: no traceroute output recognised: something else",
    );
  });
});

describe("describe()", () => {
  it("draws the path and says what is odd", () => {
    const lines = (name: string) => {
      const r = run(name);
      return traceroute.describe!(r.reported as Record<string, number | string>, r.samples, r.warnings);
    };
    expect(lines("nmap-xml-three-hops")).toEqual(["path: 198.18.1.1 → 198.18.2.2 → 198.18.3.2", "port 22 open"]);
    expect(lines("nmap-xml-silent-hop")).toEqual(["path: * → 198.18.2.2 → 198.18.3.2", "port 22 open, 1 silent hop"]);
    expect(lines("nmap-xml-unreachable")).toEqual([
      "path: 198.18.1.1 → 198.18.2.2 → (target not reached)",
      "port 22 filtered, traced with icmp",
    ]);
    expect(lines("seed-public-ip")).toEqual(["path: * → * → * → * → * → * → * → 13.xx.xx.xx", "7 silent hops"]);
  });
});

describe("issue 21: nmap 7.94SVN captures (the upstream snapshot Ubuntu 24.04 ships)", () => {
  const d = "nmap-7.94";
  const withStderr = new Set(["nmap-xml-no-route", "nmap-xml-unknown-host", "nmap-xml-non-root"]);
  const out = (name: string, exitCode = 0) => capture("traceroute", `${d}/${name}`, { exitCode, stderr: withStderr.has(name) });
  const run794 = (name: string, port = 22, exitCode = 0) => traceroute.parse(out(name, exitCode), params({ port }));

  it("nmap --version says 7.94SVN; the XML carries the same", () => {
    expect(traceroute.parseVersion(fx(`${d}/version.txt`))).toBe("7.94SVN");
    expect(fx(`${d}/nmap-xml-three-hops.stdout`)).toContain('version="7.94SVN"');
  });

  it("three hops to an open port (latlab's command)", () => {
    const r = run794("nmap-xml-three-hops");
    expect(r.samples).toEqual([3]);
    expect(r.warnings).toEqual([]);
    expect(r.reported).toMatchObject({
      format: "nmap-xml",
      targetReached: "yes",
      hops: 3,
      hopsSilent: 0,
      portState: "open",
      probe: "tcp/22",
      hop1Address: "198.18.1.1",
      hop1RttUs: 70,
      hop2Address: "198.18.2.2",
      hop2RttUs: 210,
      hop3Address: "198.18.3.2",
      hop3RttUs: 10,
    });
  });

  it("a neighbour is one hop (no probes); a closed port still traces", () => {
    expect(run794("nmap-xml-one-hop").reported).toMatchObject({ hops: 1, probe: "direct", hop1Address: "198.18.4.2", hop1RttUs: 50 });
    expect(run794("nmap-xml-closed", 23).reported).toMatchObject({ hops: 3, portState: "closed", port: 23, probe: "tcp/23" });
  });

  it("the same trace as plain text", () => {
    const r = traceroute.parse(capture("traceroute", `${d}/nmap-text-three-hops`, { stderr: false }), params());
    expect(r.samples).toEqual([3]);
    expect(r.reported).toMatchObject({ format: "nmap-text", hops: 3, hop3Address: "198.18.3.2" });
  });

  it("filtered port: ICMP trace, warned; target rejecting: the same", () => {
    for (const name of ["nmap-xml-filtered", "nmap-xml-target-rejects"]) {
      const r = run794(name);
      expect(r.samples, name).toEqual([3]);
      expect(r.reported, name).toMatchObject({ portState: "filtered", probe: "icmp" });
      expect(r.warnings, name).toEqual(["port 22 is filtered, so nmap traced with ICMP instead of TCP: the hop count is of the ICMP path"]);
    }
    expect(run794("nmap-xml-direct-filtered").reported).toMatchObject({ hops: 1, portState: "filtered", probe: "direct" });
  });

  it("all traffic to the target dropped: not reached, no hop count", () => {
    const r = run794("nmap-xml-unreachable");
    expect(r.samples).toEqual([]);
    expect(r.reported).toMatchObject({ targetReached: "no", lastAnsweringHop: 2, hop2Address: "198.18.2.2" });
    expect(r.warnings).toContain("target 198.18.3.2 not reached: last answer from hop 2 (198.18.2.2); hop count unknown");
  });

  it("a silent router: hop 1 missing, still 3 hops", () => {
    const r = run794("nmap-xml-silent-hop");
    expect(r.samples).toEqual([3]);
    expect(r.reported).toMatchObject({ hopsSilent: 1, hop2Address: "198.18.2.2" });
    expect(r.reported?.hop1Address).toBeUndefined();
  });

  it("failures", () => {
    expect(expectToolError(() => run794("nmap-xml-host-down")).message).toMatch(/^traceroute: target down: .*\(0 hosts up\)/);
    expect(expectToolError(() => run794("nmap-xml-no-route")).message).toBe("traceroute: setup_target: failed to determine route to 198.19.9.9");
    expect(expectToolError(() => run794("nmap-xml-unknown-host")).message).toBe('traceroute: Failed to resolve "no-such-host.invalid".');
    expect(expectToolError(() => run794("nmap-xml-loopback")).message).toMatch(/never traces a loopback address/);
    expect(expectToolError(() => run794("nmap-xml-non-root", 22, 1)).message).toBe(
      "traceroute: You requested a scan type which requires root privileges. QUITTING!",
    );
  });
});
