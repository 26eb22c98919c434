import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";

/**
 * Temporary folders a test file makes, removed when the file is done: tests leave the machine as
 * they found it. Call once at the top of a test file; the returned function makes a folder.
 */
export function tempDirs(): (prefix: string) => string {
  const made: string[] = [];
  afterAll(() => {
    for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return (prefix) => {
    const d = mkdtempSync(join(tmpdir(), prefix));
    made.push(d);
    return d;
  };
}
