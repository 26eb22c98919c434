import { defineConfig } from "vitest/config";

export default defineConfig({
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
