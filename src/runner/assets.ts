import { posix } from "node:path";
import type { NodeSSH } from "node-ssh";
import type { HostEndpoint } from "../targets/target.ts";
import type { ToolModule } from "../tools/types.ts";
import { shellQuote } from "./ssh.ts";

/** Where a tool's shipped files live on a host. */
export const assetsDirOf = (endpoint: HostEndpoint, tool: ToolModule) => posix.join(endpoint.workDir, "tools", tool.name);

/**
 * Writes a tool's assets onto a host (once per connection: `done` remembers), so a script
 * latlab ships is there before its server or client starts.
 */
export async function ensureAssets(ssh: NodeSSH, endpoint: HostEndpoint, tool: ToolModule, done: Set<string>): Promise<string> {
  const dir = assetsDirOf(endpoint, tool);
  const key = `${endpoint.deployment}/${endpoint.role}/${tool.name}`;
  if (!tool.assets || done.has(key)) return dir;
  for (const [name, content] of Object.entries(tool.assets)) {
    const file = posix.join(dir, name);
    const result = await ssh.execCommand(`mkdir -p ${shellQuote(dir)} && cat > ${shellQuote(file)} && chmod 0755 ${shellQuote(file)}`, { stdin: content });
    if (result.code !== 0) throw new Error(`${endpoint.deployment}/${endpoint.role}: cannot write ${file}: ${result.stderr.trim()}`);
  }
  done.add(key);
  return dir;
}
