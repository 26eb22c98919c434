import { randomBytes } from "node:crypto";

/**
 * A run's id: its UTC start to the second, then 4 hex digits so two runs started in the same
 * second (a CI matrix) never share a folder or a stack. Sorts by time as text.
 */
export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `${stamp}-${randomBytes(2).toString("hex")}`;
}
