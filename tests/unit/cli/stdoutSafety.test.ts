import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

// What the CLI writes to stdout, as a terminal or a pipe gets it: bin/latlab.js in a child.
const ROOT = resolve(import.meta.dirname, "../../..");
const BIN = join(ROOT, "bin/latlab.js");
const scratch = mkdtempSync(join(tmpdir(), "latlab-stdout-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs latlab; with `closeEarly`, closes the read end of its stdout after the first chunk, as
 * `latlab … | head -1` does, so that its later writes fail with EPIPE.
 */
function latlab(args: string[], options: { cwd?: string; closeEarly?: boolean } = {}): Promise<Ended> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: options.cwd ?? ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, CI: "true" } });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      if (options.closeEarly) child.stdout.destroy();
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.on("error", fail);
    child.on("close", (code, signal) => done({ code, signal, stdout, stderr }));
  });
}

/** An experiment file in `dir`/experiments whose description is `description` (a JS string literal's body). */
function experimentFile(dir: string, name: string, description: string): string {
  mkdirSync(join(dir, "experiments"), { recursive: true });
  const file = join(dir, "experiments", `${name}.ts`);
  writeFileSync(
    file,
    `import { defineExperiment } from "latlab";\nexport default defineExperiment({ name: ${JSON.stringify(name)}, description: "${description}", hosts: { client: {}, server: {} }, measure: [{ tool: "ping", params: { count: 3, interval: 0.1 } }] });\n`,
  );
  return file;
}

const noStackTrace = (r: Ended) => {
  expect(r.stderr).not.toMatch(/EPIPE|Error|\n\s+at /);
  expect(r.signal).toBeNull();
};

describe("stdout closed early (`latlab … | head -1`)", () => {
  it("list ends quietly with its own exit code, no EPIPE stack trace", async () => {
    const r = await latlab(["list"], { closeEarly: true });
    noStackTrace(r);
    expect(r.code).toBe(0);
  });

  it("plan --json too, whatever the size of what it had left to write", async () => {
    // A plan larger than a pipe's buffer (64 KiB): its write is still going on when the reader leaves.
    const dir = join(scratch, "big");
    experimentFile(dir, "big", "x".repeat(300_000));
    const r = await latlab(["plan", "./experiments/big.ts", "--json"], { cwd: dir, closeEarly: true });
    noStackTrace(r);
    expect(r.code).toBe(0);
  });
});

// Terminal escapes (CSI, OSC), bidi controls and other C0/C1 controls in what a user wrote.
const HOSTILE = "ok \\x1b[31mred\\x1b[0m \\x1b]0;title\\x07 \\u202eevil\\u202c \\u2066iso\\u2069 bell\\x07 csi\\x9b2J del\\x7f";
// Whatever a terminal would act on: C0 but \t \n, DEL, C1, and bidi embeddings, overrides and isolates.
const ACTIVE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

describe("user-written text is printed terminal-safe", () => {
  const dir = join(scratch, "hostile");
  experimentFile(dir, "hostile", HOSTILE);

  it("list: the description's controls are shown escaped or removed, never sent raw", async () => {
    const r = await latlab(["list"], { cwd: dir });
    expect(r.code).toBe(0);
    const line = r.stdout.split("\n").find((l) => l.includes("hostile"))!;
    expect(line).toBeDefined();
    expect(line).not.toMatch(ACTIVE);
    // Visible where a reader must see that something was there (bidi, bell, C1); colour sequences removed whole.
    expect(line).toContain("ok red  \\u{202e}evil\\u{202c} \\u{2066}iso\\u{2069} bell\\x07 csi del\\x7f");
  });

  it("plan: the same, in the text and in --json (still the same JSON value)", async () => {
    const text = await latlab(["plan", "./experiments/hostile.ts"], { cwd: dir });
    expect(text.code).toBe(0);
    expect(text.stdout).not.toMatch(ACTIVE);
    expect(text.stdout.split("\n")[0]).toBe("hostile: ok red  \\u{202e}evil\\u{202c} \\u{2066}iso\\u{2069} bell\\x07 csi del\\x7f");
    const json = await latlab(["plan", "./experiments/hostile.ts", "--json"], { cwd: dir });
    expect(json.code).toBe(0);
    expect(json.stdout).not.toMatch(ACTIVE);
    expect(JSON.parse(json.stdout).experiment.description).toBe(JSON.parse(`"${HOSTILE.replaceAll("\\x", "\\u00")}"`));
  });
});
