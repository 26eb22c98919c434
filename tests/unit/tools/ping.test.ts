import { describe, expect, it } from "vitest";
import { ping, PingParamsSchema, type PingParams } from "../../../src/tools/ping/index.ts";
import { parsePing, parsePingReplies, parsePingVersion } from "../../../src/tools/ping/parse.ts";
import { capture, clientContext, expectToolError, fixture, serverContext } from "./helpers.ts";

const fx = (name: string) => fixture("ping", name);
/** `public-*` captures were pasted from elsewhere: stdout only. */
const output = (name: string, exitCode = 0) => capture("ping", name, { exitCode, stderr: !name.startsWith("public-") });
const params = (over: Partial<PingParams> = {}): PingParams => PingParamsSchema.parse(over);

describe("ping params", () => {
  it("fills defaults", () => {
    // count has no default filled in (the client sends 20): see "--duration replaces an explicit count"
    expect(PingParamsSchema.parse({})).toEqual({ interval: 0.2, size: 56 });
    expect(ping.client(clientContext(), PingParamsSchema.parse({})).command).toContain(" -c 20 ");
  });

  it("rejects what iputils rejects or cannot time", () => {
    expect(PingParamsSchema.safeParse({ interval: 0.001 }).success).toBe(false); // < 2 ms
    expect(PingParamsSchema.safeParse({ interval: 0.002 }).success).toBe(true);
    expect(PingParamsSchema.safeParse({ size: 15 }).success).toBe(false); // no time= below 16 bytes
    expect(PingParamsSchema.safeParse({ size: 16 }).success).toBe(true);
    expect(PingParamsSchema.safeParse({ size: 65508 }).success).toBe(false); // message too long
    expect(PingParamsSchema.safeParse({ count: 0 }).success).toBe(false);
    expect(PingParamsSchema.safeParse({ count: 2.5 }).success).toBe(false);
  });
});

describe("ping commands", () => {
  const ctx = clientContext({ port: 0 });

  it("needs no server", () => {
    expect(ping.server(serverContext({ port: 1 }), params())).toBeUndefined();
  });

  it("builds the client command, for the ping binary", () => {
    expect(ping.binaries).toEqual(["ping"]);
    const c = ping.client(ctx, params());
    expect(c.command).toBe("LC_ALL=C ping -D -n -c 20 -i 0.2 -W 2 -s 56 198.18.0.2");
    expect(c.files).toEqual([]);
    expect(ping.client(ctx, params({ count: 5, interval: 0.002, size: 1400 })).command).toBe(
      "LC_ALL=C ping -D -n -c 5 -i 0.002 -W 2 -s 1400 198.18.0.2",
    );
  });

  it("estimates and times out from count × interval", () => {
    const p = params({ count: 51, interval: 0.2 });
    expect(ping.estimateSeconds(p)).toBeCloseTo(10.5, 6);
    expect(ping.client(ctx, p).timeoutSeconds).toBe(22); // 10 s of probes + 2 s wait + 10 s slack
  });

  it("withDuration adjusts count for the interval", () => {
    expect(ping.withDuration(params(), 10)).toEqual({ count: 50, interval: 0.2, size: 56 });
    expect(ping.withDuration(params({ interval: 0.01, size: 100 }), 3)).toEqual({ count: 300, interval: 0.01, size: 100 });
    expect(ping.withDuration(params({ interval: 1 }), 0.2).count).toBe(1);
    expect(() => ping.withDuration(params(), -1)).toThrow(RangeError);
  });

  it("versions", () => {
    expect(ping.versionCommand).toBe("ping -V");
    expect(ping.parseVersion(fx("version.txt"))).toBe("20221126");
    expect(parsePingVersion("ping utility, iputils-s20161105")).toBe("s20161105");
    expect(parsePingVersion("ping: invalid option -- 'V'")).toBeUndefined();
  });
});

describe("ping captures (iputils 20221126)", () => {
  it("normal run: 20 samples in µs, summary in µs", () => {
    const r = ping.parse(output("normal"), params());
    expect(r.metric).toBe("rtt");
    expect(r.unit).toBe("us");
    expect(r.samples).toHaveLength(20);
    expect(r.samples.slice(0, 3)).toEqual([115, 33, 32]); // time=0.115 / 0.033 / 0.032 ms
    expect(r.samples.at(-1)).toBe(33);
    expect(r.reported).toMatchObject({
      count: 20,
      transmitted: 20,
      received: 20,
      lossPercent: 0,
      duplicates: 0,
      errors: 0,
      min: 31,
      mean: 39,
      max: 115,
      stddev: 17,
      mdev: 17,
      totalTimeMs: 3875,
    });
    expect(r.reported?.pipe).toBeUndefined();
    expect(r.warnings).toEqual([]);
    expect(Math.min(...r.samples)).toBe(r.reported?.min);
    expect(Math.max(...r.samples)).toBe(r.reported?.max);
  });

  it("partial loss: a warning and a normal result", () => {
    const r = ping.parse(output("partial-loss"), params());
    expect(r.samples).toHaveLength(15);
    expect(r.reported).toMatchObject({ transmitted: 20, received: 15, lossPercent: 25, min: 34, mean: 38, max: 44 });
    expect(r.warnings).toEqual(["packet loss: 5 of 20 probes unanswered (25%)"]);
  });

  it("fractional loss percent (2.5%)", () => {
    const r = ping.parse(output("loss-2.5pct"), params({ count: 40, interval: 0.05 }));
    expect(r.samples).toHaveLength(39);
    expect(r.reported?.lossPercent).toBe(2.5);
    expect(r.warnings[0]).toContain("(2.5%)");
  });

  it("+N errors from ICMP unreachables", () => {
    const r = ping.parse(output("errors"), params({ count: 9 }));
    expect(r.samples).toEqual([29, 38, 37, 41, 34, 36]);
    expect(r.reported).toMatchObject({ transmitted: 9, received: 6, errors: 3, lossPercent: 33.3333 });
    expect(r.warnings).toContain("+3 errors: Destination Host Unreachable (from 127.0.0.1) ×3");
  });

  it("+N duplicates: DUP! replies are left out of the samples", () => {
    const r = ping.parse(output("duplicates"), params({ count: 5 }));
    expect(r.samples).toEqual([69, 41, 47, 50, 48]);
    expect(r.reported).toMatchObject({ received: 5, duplicates: 4, lossPercent: 0, max: 70 });
    expect(r.warnings).toEqual(["4 duplicate replies (DUP!), left out of the samples"]);
    const replies = parsePingReplies(fx("duplicates.stdout"));
    expect(replies.filter((x) => x.duplicate).map((x) => x.seq)).toEqual([1, 2, 3, 4]);
  });

  it("summary line followed by ', ipg/ewma' and a stderr warning", () => {
    const r = ping.parse(output("interval-garbage-flood"), params());
    expect(r.samples).toEqual([26, 8, 6]);
    expect(r.reported).toMatchObject({ min: 6, mean: 13, max: 26, stddev: 9, ipgUs: 49, ewmaUs: 21 });
    expect(r.warnings).toContain("ping: option argument contains garbage: abc");
  });
});

describe("ping errors", () => {
  it("100% loss", () => {
    const e = expectToolError(() => ping.parse(output("total-loss", 1), params({ count: 5 })), "ping");
    expect(e.message).toBe("ping: no reply: 100% packet loss (5 sent)");
  });

  it("100% loss with local errors carries ping's message", () => {
    const e = expectToolError(() => ping.parse(output("message-too-long", 1), params()));
    expect(e.message).toContain("no reply: 100% packet loss");
    expect(e.message).toContain("+3 errors");
    expect(e.message).toContain("local error: message too long, mtu=65535");
  });

  it("network unreachable", () => {
    const e = expectToolError(() => ping.parse(output("network-unreachable", 2), params()));
    expect(e.message).toBe("ping: connect: Network is unreachable");
  });

  it("unknown host", () => {
    const e = expectToolError(() => ping.parse(output("unknown-host", 2), params()));
    expect(e.message).toBe("ping: no-such-host.invalid: Temporary failure in name resolution");
  });

  it("replies without time= (payload under 16 bytes)", () => {
    const e = expectToolError(() => ping.parse(output("small-payload"), params()));
    expect(e.message).toContain("no time=");
  });

  it("empty output", () => {
    const e = expectToolError(() => parsePing({ stdout: "", stderr: "" }));
    expect(e.message).toContain("no ping statistics");
  });
});

describe("ping older formats (public output)", () => {
  it("icmp_req= and whole-millisecond times", () => {
    const r = parsePing({ stdout: fx("public-icmp-req-loss.stdout") });
    expect(r.samples).toEqual([46_500, 796_000, 332_000]);
    expect(r.reported).toMatchObject({ transmitted: 4, received: 3, lossPercent: 25, min: 46_504, mean: 391_904, max: 796_498, stddev: 309_031 });
    expect(r.warnings).toEqual(["packet loss: 1 of 4 probes unanswered (25%)"]);
  });

  it("', pipe N' after the rtt line", () => {
    const r = parsePing({ stdout: fx("public-icmp-req-pipe.stdout") });
    expect(r.samples).toEqual([1_283_000, 284_000, 54_100, 538_000]);
    expect(r.reported).toMatchObject({ pipe: 2, max: 1_283_876 });
  });

  it("a ^C glued to a reply line, host names in the header", () => {
    const r = parsePing({ stdout: fx("public-ctrl-c-pipe.stdout") });
    expect(r.samples).toEqual([1_138_000, 1_525_000]);
    expect(r.reported).toMatchObject({ pipe: 2, mean: 1_332_165 });
  });

  it("time<1 ms is kept at the bound with a warning", () => {
    const text = [
      "64 bytes from 10.0.0.1: icmp_seq=1 ttl=64 time<1 ms",
      "64 bytes from 10.0.0.1: icmp_seq=2 ttl=64 time=0.9 ms",
      "2 packets transmitted, 2 received, 0% packet loss, time 1001ms",
      // ping prints this whenever timed replies came back (without it the output was cut: issue 23).
      "rtt min/avg/max/mdev = 0.900/0.950/1.000/0.050 ms",
    ].join("\n");
    const r = parsePing({ stdout: text });
    expect(r.samples).toEqual([1000, 900]);
    expect(r.warnings.join("\n")).toContain("time<N ms");
  });
});

describe("issue 10: --duration replaces an explicit count, and says so", () => {
  // The experiment asked for 100 probes at 0.2 s; --duration 2 makes it 10 (the capture is that
  // run's command, see the README).
  it("the run's duration wins; the result says the count was replaced", () => {
    const p = ping.withDuration(params({ count: 100 }), 2);
    expect(p.count).toBe(10);
    expect(ping.client(clientContext({ port: 0 }), p).command).toBe("LC_ALL=C ping -D -n -c 10 -i 0.2 -W 2 -s 56 198.18.0.2");
    const r = ping.parse(output("duration-count10"), p);
    expect(r.samples).toHaveLength(10);
    expect(r.warnings).toEqual([
      "count: the experiment asked for 100 probes; the run's duration (--duration or durationByTarget) replaced it with 10 (10 × 0.2 s = 2 s)",
    ]);
  });

  it("no warning when the experiment left the count to its default", () => {
    const p = ping.withDuration(PingParamsSchema.parse({}), 2);
    expect(p.count).toBe(10);
    expect(ping.parse(output("duration-count10"), p).warnings).toEqual([]);
  });

  it("no warning when the duration gives the count asked", () => {
    const p = ping.withDuration(params({ count: 10 }), 2);
    expect(p).toEqual(params({ count: 10 }));
    expect(ping.parse(output("duration-count10"), p).warnings).toEqual([]);
  });

  it("applied twice, the warning still names the experiment's count", () => {
    const p = ping.withDuration(ping.withDuration(params({ count: 100 }), 4), 2);
    expect(p.count).toBe(10);
    expect(ping.parse(output("duration-count10"), p).warnings[0]).toContain("asked for 100 probes");
  });
});

describe("issue 21: iputils 20240905 captures (Debian trixie; Ubuntu 24.04 ships 20240117)", () => {
  /** A 20240905 capture: stdout, and stderr where ping wrote one (the README lists them). */
  const withStderr = new Set(["network-unreachable", "unknown-host", "message-too-long", "interval-garbage", "interval-too-short"]);
  const out = (name: string, exitCode = 0) =>
    capture("ping", `20240905/${name}`, { exitCode, stderr: withStderr.has(name) });
  const us = (ms: string) => ms.split(",").map((t) => Math.round(Number(t) * 1000));

  it("ping -V", () => {
    expect(ping.parseVersion(fx("20240905/version.txt"))).toBe("20240905");
  });

  it("latlab's command as a user (ICMP datagram socket, as on Ubuntu): 20 replies", () => {
    const r = ping.parse(out("normal"), params());
    expect(r.samples).toEqual(us("0.300,0.062,0.050,0.051,0.049,0.050,0.057,0.055,0.069,0.057,0.049,0.052,0.049,0.050,0.049,0.051,0.060,0.052,0.051,0.051"));
    expect(r.warnings).toEqual([]);
    expect(r.reported).toMatchObject({ transmitted: 20, received: 20, lossPercent: 0, totalTimeMs: 3893, min: 49, mean: 65, max: 300, mdev: 54 });
  });

  it("the same as root (raw socket) and to 127.0.0.1 read alike", () => {
    expect(ping.parse(out("normal-root"), params()).reported).toMatchObject({ received: 20, min: 29, mean: 49, max: 59 });
    const lo = ping.parse(out("loopback"), params({ count: 10 }));
    expect(lo.samples).toHaveLength(10);
    expect(lo.reported).toMatchObject({ transmitted: 10, received: 10, min: 35, mean: 65, max: 294 });
  });

  it("the peer losing its address for a second: 5 of 20 unanswered, seq 7-11 missing", () => {
    const r = ping.parse(out("partial-loss"), params());
    expect(r.samples).toEqual(us("0.031,0.053,0.049,0.052,0.041,0.050,0.065,0.050,0.049,0.052,0.052,0.053,0.050,0.058,0.050"));
    expect(r.reported).toMatchObject({ transmitted: 20, received: 15, lossPercent: 25, errors: 0, min: 31, mean: 50, max: 65 });
    expect(r.warnings).toEqual(["packet loss: 5 of 20 probes unanswered (25%)"]);
  });

  it("rejected probes: +3 errors, the same as user and as root", () => {
    for (const name of ["errors", "errors-root"]) {
      const r = ping.parse(out(name), params({ count: 9 }));
      expect(r.samples, name).toHaveLength(6);
      expect(r.reported, name).toMatchObject({ transmitted: 9, received: 6, errors: 3, lossPercent: 33.3333 });
      expect(r.warnings, name).toEqual([
        "packet loss: 3 of 9 probes unanswered (33.3333%)",
        "+3 errors: Destination Host Unreachable (from 198.18.9.2) ×3",
      ]);
    }
    expect(ping.parse(out("errors"), params({ count: 9 })).samples).toEqual(us("0.358,0.057,0.053,0.052,0.058,0.055"));
  });

  it("duplicated replies: +4 duplicates left out", () => {
    const r = ping.parse(out("duplicates"), params({ count: 5 }));
    expect(r.samples).toEqual(us("0.039,0.061,0.072,0.062,0.065"));
    expect(r.reported).toMatchObject({ received: 5, duplicates: 4, lossPercent: 0, max: 73 });
    expect(r.warnings).toEqual(["4 duplicate replies (DUP!), left out of the samples"]);
  });

  it("no host behind the address: 100% loss fails the cell; only root sees the ARP failure", () => {
    expect(expectToolError(() => ping.parse(out("total-loss", 1), params({ count: 5 })), "ping").message).toBe("ping: no reply: 100% packet loss (5 sent)");
    // a user's datagram socket got no "Destination Host Unreachable" (no +errors), root's raw socket one
    expect(expectToolError(() => ping.parse(out("no-host-unreachable", 1), params({ count: 6 }))).message).toBe("ping: no reply: 100% packet loss (6 sent)");
    expect(expectToolError(() => ping.parse(out("no-host-unreachable-root", 1), params({ count: 6 }))).message).toBe(
      "ping: no reply: 100% packet loss (6 sent); +1 errors: Destination Host Unreachable (from 198.18.9.1)",
    );
  });

  it("errors on stderr, exit 2: no route, unknown host, -i under 2 ms as a user", () => {
    expect(expectToolError(() => ping.parse(out("network-unreachable", 2), params())).message).toBe("ping: connect: Network is unreachable");
    expect(expectToolError(() => ping.parse(out("unknown-host", 2), params())).message).toBe("ping: no-such-host.invalid: Temporary failure in name resolution");
    expect(expectToolError(() => ping.parse(out("interval-too-short", 2), params())).message).toBe(
      "ping: cannot flood, minimal interval for user must be >= 2 ms, use -i 0.002 (or higher)",
    );
  });

  it("-s: 65508 is refused up front (20221126 sent it and failed), 65507 works, 15 has no time=", () => {
    expect(expectToolError(() => ping.parse(out("message-too-long", 1), params())).message).toBe("ping: invalid -s value: '65508': out of range: 0 <= value <= 65507");
    const max = ping.parse(out("max-payload"), params({ count: 3, size: 65507 }));
    expect(max.samples).toEqual(us("0.043,0.057,0.066"));
    expect(expectToolError(() => ping.parse(out("small-payload"), params())).message).toMatch(/^ping: replies carry no time=/);
  });

  it("a garbage -i is still only a warning in 20240905", () => {
    const r = ping.parse(out("interval-garbage"), params({ count: 3 }));
    expect(r.samples).toHaveLength(3);
    expect(r.warnings).toEqual(["ping: option argument contains garbage: x", "ping: this will become fatal error in the future"]);
  });
});
