import { describe, expect, it } from "vitest";
import { detectRunnerAddress } from "../../../../../src/targets/azure/access/runnerAddress.ts";

// A fake fetch: nothing leaves this machine.
const answers = (map: Record<string, { status?: number; body?: string; throws?: string }>) => async (url: string) => {
  const a = map[url];
  if (!a || a.throws) throw new Error(a?.throws ?? "unreachable");
  return { ok: (a.status ?? 200) < 400, status: a.status ?? 200, json: async () => a.body, text: async () => a.body ?? "" };
};

describe("detectRunnerAddress (only for --ssh-from auto)", () => {
  it("takes the first service that answers with an address, as a single-host CIDR", async () => {
    const r = await detectRunnerAddress(answers({ a: { throws: "getaddrinfo ENOTFOUND" }, b: { body: "203.0.113.7\n" } }), ["a", "b"]);
    expect(r).toEqual({ cidr: "203.0.113.7/32", source: "b" });
    expect((await detectRunnerAddress(answers({ a: { body: "2001:db8::7" } }), ["a"])).cidr).toBe("2001:db8::7/128");
  });

  it("refuses an answer that is not an IP and says what every service did", async () => {
    const run = detectRunnerAddress(answers({ a: { body: "<html>captive portal</html>" }, b: { status: 503 } }), ["a", "b"]);
    await expect(run).rejects.toThrow(/a: answered "<html>captive portal<\/html>", not an IP address; b: HTTP 503\): pass --ssh-from CIDR/);
  });
});
