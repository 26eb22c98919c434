import { existsSync, readFileSync } from "node:fs";
import { copyFile, readdir, readFile, rm } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Recovering a Pulumi file backend after a crash (latlab destroy). Pulumi's file backend locks a stack with a file per running operation,
 * `<backend>/.pulumi/locks/<org>/<project>/<stack>/<id>.json` holding {pid, username, hostname,
 * timestamp} (pkg/backend/diy/lock.go in pulumi/pulumi v3.259.0). A Pulumi CLI killed in the
 * middle of `up` (kill -9, OOM, power cut) leaves its lock behind, and every later operation on
 * the stack fails with "the stack is currently locked". `pulumi cancel` would delete every lock,
 * a live one too; this removes only the locks whose process is gone from this machine.
 */

export interface LockFile {
  path: string;
  pid: number | null;
  hostname: string | null;
  timestamp: string | null;
}

/** The lock files of `stack` under a file:// backend (none for another kind of backend). */
export async function stackLocks(backendUrl: string, stack: string): Promise<LockFile[]> {
  if (!backendUrl.startsWith("file://")) return [];
  const root = join(fileURLToPath(backendUrl), ".pulumi", "locks");
  if (!existsSync(root)) return [];
  const out: LockFile[] = [];
  const walk = async (dir: string, inStack: boolean) => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) await walk(p, inStack || e.name === stack);
      else if (inStack && e.name.endsWith(".json")) {
        let content: Record<string, unknown> = {};
        try {
          content = JSON.parse(await readFile(p, "utf8")) as Record<string, unknown>;
        } catch {
          /* an unreadable lock is still a lock */
        }
        out.push({
          path: p,
          pid: typeof content.pid === "number" ? content.pid : null,
          hostname: typeof content.hostname === "string" ? content.hostname : null,
          timestamp: typeof content.timestamp === "string" ? content.timestamp : null,
        });
      }
    }
  };
  await walk(root, false);
  return out;
}

/** Is the process that took this lock still running here? Unknown owners and other machines count as alive. */
export function lockOwnerAlive(lock: LockFile, here = hostname()): boolean {
  if (lock.pid === null || lock.hostname !== here) return true;
  try {
    process.kill(lock.pid, 0);
  } catch {
    return false;
  }
  // The pid may have been reused by an unrelated process since.
  try {
    return readFileSync(`/proc/${lock.pid}/cmdline`, "utf8").includes("pulumi");
  } catch {
    return true;
  }
}

/** Removes the stack's locks whose Pulumi process is gone; says which it removed and which it left (alive or elsewhere). */
export async function removeStaleLocks(backendUrl: string, stack: string): Promise<{ removed: LockFile[]; kept: LockFile[] }> {
  const removed: LockFile[] = [];
  const kept: LockFile[] = [];
  for (const lock of await stackLocks(backendUrl, stack)) {
    if (lockOwnerAlive(lock)) kept.push(lock);
    else {
      // The file blob store keeps each object's attributes beside it, in <name>.attrs.
      await rm(lock.path, { force: true });
      await rm(`${lock.path}.attrs`, { force: true });
      removed.push(lock);
    }
  }
  return { removed, kept };
}

/** True when the file holds JSON (what Pulumi's file backend stores: checkpoints, their .attrs). */
async function readableJson(path: string): Promise<boolean> {
  try {
    JSON.parse(await readFile(path, "utf8"));
    return true;
  } catch {
    return false;
  }
}

/**
 * What a Pulumi CLI killed while saving a checkpoint can leave in a file backend, repaired:
 * a `<stack>.json.attrs` sidecar (written after the object, not atomically) that is empty or
 * cut off, which makes every later command fail with "failed to load checkpoint: EOF", is
 * removed (the blob store reads a missing one as no attributes); a checkpoint that is not JSON
 * is replaced by its `.bak` when that one is; the blob store's `*.tmp` files go. Only files that
 * cannot be read are touched. Returns what it did, worded for a log.
 */
export async function repairCheckpoint(backendUrl: string, stack: string): Promise<string[]> {
  if (!backendUrl.startsWith("file://")) return [];
  const root = join(fileURLToPath(backendUrl), ".pulumi", "stacks");
  if (!existsSync(root)) return [];
  const done: string[] = [];
  const visit = async (dir: string) => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) {
        await visit(p);
        continue;
      }
      if (!e.name.startsWith(`${stack}.json`)) continue;
      if (e.name.endsWith(".tmp")) {
        await rm(p, { force: true });
        done.push(`removed ${p} (a write the crash cut short)`);
      } else if (e.name.endsWith(".attrs") && !(await readableJson(p))) {
        await rm(p, { force: true });
        done.push(`removed ${p} (unreadable: cut short by the crash)`);
      }
    }
    const checkpoint = join(dir, `${stack}.json`);
    const backup = `${checkpoint}.bak`;
    if (existsSync(checkpoint) && !(await readableJson(checkpoint)) && existsSync(backup) && (await readableJson(backup))) {
      await copyFile(backup, checkpoint);
      await rm(`${checkpoint}.attrs`, { force: true });
      done.push(`restored ${checkpoint} from its backup (the crash left it unreadable)`);
    }
  };
  await visit(root);
  return done;
}
