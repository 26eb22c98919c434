import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { main } from "../../../src/cli/main.ts";
import { writeRunState } from "../../../src/targets/azure/lifecycle/destroyRun.ts";
import { tempDirs } from "../../tempDirs.ts";

const tempDir = tempDirs();
afterEach(() => vi.unstubAllEnvs());

/** main() in this process, with what it writes to stdout and stderr. */
async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const out = vi.spyOn(process.stdout, "write").mockImplementation((c: string | Uint8Array) => ((stdout += String(c)), true));
  const err = vi.spyOn(process.stderr, "write").mockImplementation((c: string | Uint8Array) => ((stderr += String(c)), true));
  try {
    return { code: await main(args), stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

describe("latlab destroy", () => {
  it("finds a run by its id in the state folder (LATLAB_STATE_DIR) and prints what is left", async () => {
    const root = tempDir("latlab-cli-destroy-");
    vi.stubEnv("LATLAB_STATE_DIR", root);
    await writeRunState(join(root, "20260101-120000-cafe"), {
      runId: "20260101-120000-cafe",
      projectName: "latlab",
      stackName: "latlab-20260101-120000-cafe",
      backendUrl: `file://${join(root, "20260101-120000-cafe")}`,
      passphrase: "file",
      resourceGroup: "latlab-20260101-120000-cafe",
      createdAt: "2026-01-01T12:00:00.000Z",
      expiresAt: "2026-01-01T15:00:00.000Z",
      status: "destroyed",
      updatedAt: "2026-01-01T13:00:00.000Z",
    });
    const r = await cli(["destroy", "20260101-120000-cafe"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^teardown: ok\nleft: unknown \(not asked: run 20260101-120000-cafe's state says destroyed at 2026-01-01T13:00:00.000Z\)\n$/);
    expect(r.stderr).toContain("already destroyed; nothing to do");
  });

  it("a rehearsal whose emulator is gone (its teardown's destroy cancelled, then the emulator stopped): destroyed, said so, its key and passphrase removed; exit 0 (issue 23)", async () => {
    const root = tempDir("latlab-cli-destroy-");
    vi.stubEnv("LATLAB_STATE_DIR", root);
    const runId = "20260101-120000-f00d";
    const stateDir = join(root, runId);
    const home = join(root, "latlab-azemu-gone");
    await writeRunState(stateDir, {
      runId,
      projectName: "latlab",
      stackName: `latlab-${runId}`,
      backendUrl: `file://${stateDir}`,
      passphrase: "file",
      resourceGroup: `latlab-${runId}`,
      createdAt: "2026-01-01T12:00:00.000Z",
      expiresAt: "2026-01-01T15:00:00.000Z",
      status: "leaked",
      updatedAt: "2026-01-01T13:00:00.000Z",
      rehearsal: { emulatorHome: home },
    });
    writeFileSync(join(stateDir, "client_rsa"), "-----BEGIN OPENSSH PRIVATE KEY-----\nx\n-----END OPENSSH PRIVATE KEY-----\n", { mode: 0o600 });
    writeFileSync(join(stateDir, "passphrase"), "6f1c0e2d9a4b7c3e8f5a1d2b6c9e0f4a\n", { mode: 0o600 });
    // No subscription in the environment: before issue 23 the destroy fell to Azure's ARM and failed on that ("leaked").
    vi.stubEnv("ARM_SUBSCRIPTION_ID", "");
    vi.stubEnv("AZURE_SUBSCRIPTION_ID", "");
    const r = await cli(["destroy", runId]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("teardown: ok\nleft: none\n");
    expect(r.stderr).toContain(`its emulator's folder ${home} is gone, and none of its namespaces remain: the emulator and everything it ran are gone; nothing of it is on Azure`);
    expect(r.stderr).not.toMatch(/leaked|subscription/);
    expect(JSON.parse(readFileSync(join(stateDir, "state.json"), "utf8")).status).toBe("destroyed");
    expect(existsSync(join(stateDir, "client_rsa"))).toBe(false);
    expect(existsSync(join(stateDir, "passphrase"))).toBe(false);
  });

  it("a results folder with no Azure state (the run deployed nothing) exits 0: nothing left to tear down", async () => {
    const root = tempDir("latlab-cli-destroy-");
    vi.stubEnv("LATLAB_STATE_DIR", join(root, "state"));
    const runDir = join(root, "ppg-vs-zone-123");
    mkdirSync(runDir);
    writeFileSync(join(runDir, "plan.json"), "{}\n");
    const r = await cli(["destroy", runDir]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`teardown: ok\nleft: unknown (not asked: nothing left to tear down: ${runDir} records no Azure state, so the run deployed nothing)\n`);
    expect(r.stderr).toContain("nothing left to tear down");
  });
});
