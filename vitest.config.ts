import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  // "latlab" in experiments and fixtures is this repository's source, not the package's exports
  // (they name the built dist/, which need not exist or be current); tsconfig.json says the same.
  resolve: { alias: [{ find: /^latlab$/, replacement: fileURLToPath(new URL("./src/index.ts", import.meta.url)) }] },
  test: {
    include: ["tests/**/*.test.ts"],
    // Integration tests build namespaces and sshd's on a 2-core machine: run files one at a
    // time so two suites never fight for the same cores or the same kernel state.
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 120_000,
    reporters: process.env.CI ? ["default"] : ["default"],
  },
});
