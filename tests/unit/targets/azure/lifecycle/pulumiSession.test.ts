import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { resolveCommand, sessionCommand, wrapperScript } from "../../../../../src/targets/azure/lifecycle/pulumiSession.ts";

/**
 * Issue 23, fault 5: one Ctrl-C in the terminal reached Pulumi twice — straight from the
 * terminal (its whole foreground process group) and as the cancel latlab forwards — and two
 * SIGINTs are Pulumi's "terminating", which abandons resources. A fake `pulumi` (a Node script:
 * each SIGINT is counted, none coalesced) is driven through the real Automation API's
 * PulumiCommand, in a process that leads its own group as latlab does in a terminal, and the
 * terminal's Ctrl-C is a SIGINT to that whole group.
 */

const ROOT = resolve(import.meta.dirname, "../../../../..");
const work = mkdtempSync(join(tmpdir(), "latlab-psession-test-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A fake Pulumi CLI at <root>/bin/pulumi: `version`, and a long operation that logs its pid, session and every SIGINT. */
function fakeCli(root: string): string {
  mkdirSync(join(root, "bin"), { recursive: true });
  const cli = join(root, "bin", "pulumi");
  writeFileSync(
    cli,
    `#!${process.execPath}
const { appendFileSync, readFileSync } = require("node:fs");
if (process.argv[2] === "version") { console.log("v3.259.0"); process.exit(0); }
const log = process.env.FAKE_LOG;
// /proc/self/stat: pid (comm) state ppid pgrp session … (proc(5))
const [pgrp, session] = readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ").slice(2, 4);
appendFileSync(log, JSON.stringify({ started: process.pid, pgrp: Number(pgrp), session: Number(session), path: process.env.PATH }) + "\\n");
let ints = 0;
process.on("SIGINT", () => { ints++; appendFileSync(log, JSON.stringify({ sigint: ints }) + "\\n"); });
// Ends a while after its first SIGINT, as a cancelling Pulumi does: a second SIGINT would come before.
setInterval(() => {}, 1000);
process.on("SIGINT", () => setTimeout(() => process.exit(255), 1500));
`,
  );
  chmodSync(cli, 0o755);
  return cli;
}

/**
 * latlab in miniature: leads its own process group (a terminal's foreground job), runs one
 * Pulumi operation through PulumiCommand.run (what LocalWorkspace and Stack call), and on its
 * first SIGINT forwards one cancel through the operation's AbortSignal, as AzureTarget does.
 */
const DRIVER = `
const { PulumiCommand } = await import("@pulumi/pulumi/automation/index.js");
const { inOwnSession } = await import(${JSON.stringify(join(ROOT, "src/targets/azure/lifecycle/stack.ts"))});
const real = await PulumiCommand.get({ root: process.env.FAKE_ROOT, skipVersionCheck: true });
const cli = process.env.OWN_SESSION === "1" ? await inOwnSession(real, { log: (m) => console.error(m) }) : real;
const cancel = new AbortController();
process.on("SIGINT", () => cancel.abort());
await cli.run(["up"], process.cwd(), {}, () => {}, () => {}, cancel.signal).catch(() => {});
`;

type LogLine = { started?: number; pgrp?: number; session?: number; path?: string; sigint?: number };

async function ctrlCDuringUp(name: string, ownSession: boolean): Promise<{ lines: LogLine[]; driverPgid: number }> {
  const root = join(work, name);
  fakeCli(root);
  const log = join(work, `${name}.log`);
  writeFileSync(log, "");
  const driver = spawn(process.execPath, ["--input-type=module", "-e", DRIVER], {
    cwd: ROOT,
    env: { ...process.env, FAKE_ROOT: root, FAKE_LOG: log, OWN_SESSION: ownSession ? "1" : "0", XDG_CACHE_HOME: join(work, "cache") },
    stdio: ["ignore", "inherit", "inherit"],
    detached: true, // a process group of its own, led by the driver: latlab's place in a terminal
  });
  const exited = new Promise((r) => driver.once("exit", r));
  const lines = () =>
    readFileSync(log, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as LogLine);
  while (!lines().some((l) => l.started)) await new Promise((r) => setTimeout(r, 50));
  process.kill(-driver.pid!, "SIGINT"); // the terminal's Ctrl-C: the whole foreground group
  await exited;
  return { lines: lines(), driverPgid: driver.pid! };
}

describe("the Pulumi CLI in a session of its own (issue 23, fault 5)", () => {
  it("one Ctrl-C in the terminal reaches Pulumi once: the cancel latlab forwards, never the terminal's own", async () => {
    const { lines, driverPgid } = await ctrlCDuringUp("own", true);
    const started = lines.find((l) => l.started)!;
    // A session of its own, led by the very process the Automation API signals (setsid did not fork).
    expect(started.session).toBe(started.started);
    expect(started.pgrp).toBe(started.started);
    expect(started.pgrp).not.toBe(driverPgid);
    expect(lines.filter((l) => l.sigint)).toEqual([{ sigint: 1 }]);
  }, 30_000);

  it("without it (the Automation API as it spawns), Pulumi is in latlab's process group: the terminal's Ctrl-C reaches it directly (the fault this prevents)", async () => {
    // Whether that SIGINT and the forwarded one arrive as two or merge into one pending signal
    // is a matter of timing: the process group is what decides, and is what is checked.
    const { lines, driverPgid } = await ctrlCDuringUp("shared", false);
    expect(lines.find((l) => l.started)!.pgrp).toBe(driverPgid);
    expect(lines.filter((l) => l.sigint).length).toBeGreaterThanOrEqual(1);
  }, 30_000);

  it("Pulumi's PATH is as without the wrapper: an install root's folder first, the wrapper's own folder gone", async () => {
    const { lines } = await ctrlCDuringUp("path", true);
    const path = lines.find((l) => l.started)!.path!.split(":");
    expect(path[0]).toBe(join(work, "path", "bin"));
    expect(path.some((p) => p.includes("pulumi-session"))).toBe(false);
  }, 30_000);

  it("a CLI found on PATH is wrapped by its full path, PATH left as it was; a name found nowhere (or no setsid) gives no wrapper", () => {
    const root = join(work, "on-path");
    const cli = fakeCli(root);
    expect(resolveCommand("pulumi", `/nonexistent:${join(root, "bin")}`)).toBe(cli);
    const wrapper = sessionCommand("pulumi", { PATH: `${join(root, "bin")}:/usr/bin:/bin`, XDG_CACHE_HOME: join(work, "cache") })!;
    const script = readFileSync(wrapper.script, "utf8");
    expect(script).toContain(`exec '/usr/bin/setsid' '${cli}' "$@"`);
    expect(script).not.toMatch(/^PATH='.*'"\$PATH"$/m);
    expect(sessionCommand("pulumi", { PATH: "/nonexistent" })).toBeUndefined();
  });

  it("quotes every path for sh, whatever it holds", () => {
    const script = wrapperScript({ real: "/o'dd $(x)/pulumi", setsid: "/usr/bin/setsid", wrapperBin: "/t/b", fromRoot: true });
    expect(script).toContain(`exec '/usr/bin/setsid' '/o'\\''dd $(x)/pulumi' "$@"`);
    expect(script).toContain(`PATH='/o'\\''dd $(x):'"$PATH"`);
  });

  it("one wrapper per real CLI, in the user's cache, written once and reused: nothing left per run, whoever kills it", () => {
    const root = join(work, "reuse");
    const cli = fakeCli(root);
    const env = { PATH: "/usr/bin:/bin", XDG_CACHE_HOME: join(work, "reuse-cache") };
    const first = sessionCommand(cli, env)!;
    expect(first.root.startsWith(join(work, "reuse-cache", "latlab", "pulumi-session"))).toBe(true);
    const written = statSync(first.script).mtimeMs;
    expect(sessionCommand(cli, env)).toEqual(first);
    expect(statSync(first.script).mtimeMs).toBe(written);
    expect(readdirSync(join(work, "reuse-cache", "latlab", "pulumi-session"))).toHaveLength(1);
  });
});
