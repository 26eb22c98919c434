import { posix } from "node:path";
import type { NodeSSH } from "node-ssh";
import type { HostEndpoint } from "../targets/target.ts";
import type { ToolModule } from "../tools/types.ts";
import { execWithTimeout, shellQuote } from "./ssh.ts";

/** Limit for writing one asset (a small script) onto a host. */
export const ASSET_TIMEOUT_SECONDS = 30;

/** Where a tool's shipped files live on a host. */
export const assetsDirOf = (endpoint: HostEndpoint, tool: ToolModule) => posix.join(endpoint.workDir, "tools", tool.name);

/**
 * Writes a tool's assets onto a host (once per connection: `done` remembers), so a script
 * latlab ships is there before its server or client starts.
 */
export async function ensureAssets(ssh: NodeSSH, endpoint: HostEndpoint, tool: ToolModule, done: Set<string>, signal?: AbortSignal): Promise<string> {
  const dir = assetsDirOf(endpoint, tool);
  const key = `${endpoint.deployment}/${endpoint.role}/${tool.name}`;
  if (!tool.assets || done.has(key)) return dir;
  for (const [name, content] of Object.entries(tool.assets)) {
    const file = posix.join(dir, name);
    const where = `${endpoint.deployment}/${endpoint.role}`;
    // Guarded like every other command: a wedged host fails this cell instead of hanging the run.
    const result = await execWithTimeout(ssh, `mkdir -p ${shellQuote(dir)} && cat > ${shellQuote(file)} && chmod 0755 ${shellQuote(file)}`, ASSET_TIMEOUT_SECONDS, signal, { stdin: content }).catch(
      (error: Error) => {
        throw new Error(`${where}: cannot write ${file}: ${error.message}`, { cause: error });
      },
    );
    if (result.exitCode !== 0) throw new Error(`${where}: cannot write ${file}: ${result.timedOut ? `timed out after ${ASSET_TIMEOUT_SECONDS} s` : result.stderr.trim()}`);
  }
  done.add(key);
  return dir;
}
