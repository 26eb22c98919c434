import { rmSync } from "node:fs";
import { TEST_HISTORY_DIR } from "../vitest.config.ts";

/** Removes the history the test runs recorded themselves in (see vitest.config.ts). */
export default function setup(): () => void {
  return () => rmSync(TEST_HISTORY_DIR, { recursive: true, force: true });
}
