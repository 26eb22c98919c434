import { describe, expect, it } from "vitest";
import { publicKeyOnly, SSHD_START_SCRIPT, sshdConfig, sshdStartArgv } from "../../../../src/targets/local/sshd.ts";

describe("sshd config", () => {
  it("listens on the management address only, keys only", () => {
    const c = sshdConfig({ listenAddress: "198.19.128.2", port: 22, hostKeyPath: "/tmp/x/host", authorizedKeysPath: "/tmp/x/ak", pidFile: "/tmp/x/pid" });
    for (const line of [
      "ListenAddress 198.19.128.2",
      'HostKey "/tmp/x/host"',
      'AuthorizedKeysFile "/tmp/x/ak"',
      'PidFile "/tmp/x/pid"',
      "PermitRootLogin prohibit-password",
      "PasswordAuthentication no",
      "UsePAM no",
      "StrictModes yes",
    ]) {
      expect(c.split("\n")).toContain(line);
    }
    expect(() => sshdConfig({ listenAddress: "a", port: 22, hostKeyPath: '/tmp/"x', authorizedKeysPath: "/a", pidFile: "/p" })).toThrow();
  });

  it("starts sshd in its own UTS namespace without building shell strings from data", () => {
    const argv = sshdStartArgv("ll-abc-0-client", "d0-client; rm -rf /", "/tmp/c");
    expect(argv.slice(0, 8)).toEqual(["ip", "netns", "exec", "ll-abc-0-client", "unshare", "--uts", "--mount", "--"]);
    const script = argv[argv.indexOf("-c") + 1]!;
    expect(script).toBe(SSHD_START_SCRIPT);
    // Data only as arguments; the script's one command substitution reads the passwd database.
    expect(script.startsWith('hostname "$1" && ')).toBe(true);
    expect(script.endsWith('exec "$2" -D -e -f "$3"')).toBe(true);
    expect(argv.slice(-3)).toEqual(["d0-client; rm -rf /", "/usr/sbin/sshd", "/tmp/c"]);
  });

  it("pins sshd (and what it starts) to a CPU list with taskset, refusing anything else", () => {
    const argv = sshdStartArgv("ll-abc-0-client", "d0-client", "/tmp/c", "0-1,3");
    expect(argv.slice(0, 7)).toEqual(["taskset", "-c", "0-1,3", "ip", "netns", "exec", "ll-abc-0-client"]);
    expect(sshdStartArgv("n", "h", "/c")[0]).toBe("ip");
    expect(() => sshdStartArgv("n", "h", "/c", "0; reboot")).toThrow(/not a CPU list/);
  });

  it("keeps type and key of a public key line", () => {
    expect(publicKeyOnly("ssh-ed25519 AAAAC3Nza comment here\n")).toBe("ssh-ed25519 AAAAC3Nza");
    expect(() => publicKeyOnly("garbage")).toThrow();
  });
});
