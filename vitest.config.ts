import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

/**
 * Runs the tests make record themselves in a history of their own, never in the checkout's
 * results/history.duckdb; tests/historySetup.ts removes it at the end.
 */
export const TEST_HISTORY_DIR = join(tmpdir(), `latlab-test-history-${process.pid}`);

export default defineConfig({
  // "latlab" in experiments and fixtures is this repository's source, not the package's exports
  // (they name the built dist/, which need not exist or be current); tsconfig.json says the same.
  resolve: { alias: [{ find: /^latlab$/, replacement: fileURLToPath(new URL("./src/index.ts", import.meta.url)) }] },
  test: {
    include: ["tests/**/*.test.ts"],
    // Integration tests build namespaces and sshd's on a 2-core machine: run files one at a
    // time so two suites never fight for the same cores or the same kernel state.
    fileParallelism: false,
    // A guard against a hung test, not a performance budget: this 2-core machine is shared, and a
    // run that completes slowly must not fail for it (performance belongs in `npm run bench`).
    testTimeout: 1_800_000,
    hookTimeout: 1_800_000,
    env: { LATLAB_HISTORY: join(TEST_HISTORY_DIR, "history.duckdb") },
    globalSetup: ["tests/historySetup.ts"],
    reporters: process.env.CI ? ["default"] : ["default"],
  },
});
