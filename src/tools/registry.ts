import { iperf3 } from "./iperf3/index.ts";
import { ping } from "./ping/index.ts";
import { qperf } from "./qperf/index.ts";
import { sockperf } from "./sockperf/index.ts";
import { tcpEcho } from "./tcpEcho/index.ts";
import { traceroute } from "./traceroute/index.ts";
import type { ToolModule } from "./types.ts";

/**
 * Every tool latlab can drive. Adding a tool = writing its module and listing it here; the DSL,
 * the plan, the runner and `latlab parse` all read this table and nothing else.
 */
export const tools = {
  sockperf,
  ping,
  qperf,
  iperf3,
  "tcp-echo": tcpEcho,
  traceroute,
} as const satisfies Record<string, ToolModule>;

export type ToolName = keyof typeof tools;
export const TOOL_NAMES = Object.keys(tools) as ToolName[];

export function findTool(name: string): ToolModule | undefined {
  return Object.hasOwn(tools, name) ? (tools[name as ToolName] as ToolModule) : undefined;
}
