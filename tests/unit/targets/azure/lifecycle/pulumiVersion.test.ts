import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compatiblePulumiVersion, PULUMI_CLI_VERSION, PulumiVersionError } from "../../../../../src/targets/azure/lifecycle/pulumiVersion.ts";
import { locatePulumiCli, PulumiCliMissingError, type PulumiStackFactoryOptions } from "../../../../../src/targets/azure/lifecycle/stack.ts";

/** A fake of the Automation API's PulumiCommand: which CLI each place holds (undefined: none). */
function fakePulumiCommand(found: { path?: string; root?: string; installs?: string }) {
  const calls: { op: string; root?: string; version?: string }[] = [];
  const cli = (command: string, version: string) => ({ command, version: { toString: () => version } });
  const api = {
    async get(opts?: { root?: string }) {
      calls.push({ op: "get", ...(opts?.root ? { root: opts.root } : {}) });
      const version = opts?.root ? found.root : found.path;
      if (!version) throw new Error("spawn pulumi ENOENT");
      return cli(opts?.root ? join(opts.root, "bin", "pulumi") : "pulumi", version);
    },
    async install(opts: { root: string; version: { toString(): string } }) {
      calls.push({ op: "install", root: opts.root, version: opts.version.toString() });
      return cli(join(opts.root, "bin", "pulumi"), found.installs ?? opts.version.toString());
    },
  };
  return { calls, pulumiCommand: api as unknown as NonNullable<PulumiStackFactoryOptions["pulumiCommand"]> };
}

const ROOT = "/opt/latlab-test/pulumi-root";

describe("the Pulumi CLI version is pinned", () => {
  it("latlab declares the version it is tested with, the one ../shared/tools/pulumi builds", () => {
    expect(PULUMI_CLI_VERSION).toBe("3.259.0");
    expect(compatiblePulumiVersion("3.259.4")).toBe(true);
    expect(compatiblePulumiVersion("v3.259.0")).toBe(true);
    expect(compatiblePulumiVersion("3.270.0")).toBe(false);
    expect(compatiblePulumiVersion("4.259.0")).toBe(false);
  });

  it("a CLI of another minor version is refused, saying how to install the right one", async () => {
    const fake = fakePulumiCommand({ path: "3.270.0" });
    const err = await locatePulumiCli({ pulumiCommand: fake.pulumiCommand, installRoot: ROOT, env: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PulumiVersionError);
    const msg = (err as Error).message;
    expect(msg).toContain("v3.270.0");
    expect(msg).toContain("tested with v3.259.0");
    expect(msg).toContain("--version 3.259.0");
    expect(msg).toContain("--install-pulumi");
    expect(msg).toContain("LATLAB_PULUMI_VERSION_CHECK=off");
    expect(fake.calls.filter((c) => c.op === "install")).toEqual([]);
  });

  it("the same major.minor is taken; so is any version with LATLAB_PULUMI_VERSION_CHECK=off", async () => {
    expect((await locatePulumiCli({ pulumiCommand: fakePulumiCommand({ path: "3.259.2" }).pulumiCommand, installRoot: ROOT, env: {} })).version?.toString()).toBe("3.259.2");
    const off = await locatePulumiCli({ pulumiCommand: fakePulumiCommand({ path: "3.270.0" }).pulumiCommand, installRoot: ROOT, env: { LATLAB_PULUMI_VERSION_CHECK: "off" } });
    expect(off.version?.toString()).toBe("3.270.0");
  });

  it("a wrong version on PATH and the right one in latlab's install root: the install root's is used", async () => {
    const fake = fakePulumiCommand({ path: "3.270.0", root: "3.259.0" });
    const cli = await locatePulumiCli({ pulumiCommand: fake.pulumiCommand, installRoot: ROOT, env: {} });
    expect(cli.command).toBe(join(ROOT, "bin", "pulumi"));
  });

  it("--install-pulumi installs exactly the pinned version (PulumiCommand.install({version})), into a root named after it", async () => {
    const fake = fakePulumiCommand({ path: "3.270.0" });
    const cli = await locatePulumiCli({ pulumiCommand: fake.pulumiCommand, installPulumi: true, env: {}, searchPath: true }, "3.259.0");
    const install = fake.calls.find((c) => c.op === "install")!;
    expect(install.version).toBe("3.259.0");
    expect(install.root).toMatch(/\.pulumi\/versions\/3\.259\.0$/);
    expect(cli.version?.toString()).toBe("3.259.0");
  });

  it("destroy asks for the version the run recorded", async () => {
    const fake = fakePulumiCommand({ path: "3.259.0" });
    await expect(locatePulumiCli({ pulumiCommand: fake.pulumiCommand, installRoot: ROOT, env: {} }, "3.258.1")).rejects.toThrow(/tested with v3\.258\.1/);
  });

  it("no CLI at all: the missing-CLI message, as before", async () => {
    const err = await locatePulumiCli({ pulumiCommand: fakePulumiCommand({}).pulumiCommand, installRoot: ROOT, env: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PulumiCliMissingError);
  });
});
