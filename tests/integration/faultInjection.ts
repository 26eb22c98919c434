import { execFileSync } from "node:child_process";

/** pid → command line of every process in a network namespace (empty when it is not there). */
export function namespaceProcesses(ns: string): Map<number, string> {
  let pids: string;
  try {
    pids = execFileSync("ip", ["netns", "pids", ns], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return new Map(); // not there yet, or gone
  }
  if (!pids) return new Map();
  let table: string;
  try {
    table = execFileSync("ps", ["-o", "pid=,args=", "-p", pids.split(/\s+/).join(",")], { encoding: "utf8" });
  } catch {
    return new Map(); // ps exits 1 when every pid exited meanwhile
  }
  return new Map(
    table
      .split("\n")
      .map((l) => /^\s*(\d+)\s+(.*)$/.exec(l))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [Number(m[1]), m[2]!] as const),
  );
}
