import { execFileSync, spawn } from "node:child_process";

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

/** The namespace of a host of the first deployment on this machine (ll-<run>-0-<role>), if it is up. */
export function deploymentNamespace(role: string): string | undefined {
  const list = execFileSync("ip", ["netns", "list"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  return new RegExp(`^ll-[0-9a-f]+-0-${role}\\b`, "m").exec(list)?.[0];
}

/** Whether a process whose command line matches `command` runs in the namespace. */
export const runsIn = (ns: string, command: RegExp): boolean => [...namespaceProcesses(ns).values()].some((args) => command.test(args));

/**
 * `latlab <args>` in a process of its own (CI=true: line progress), with `tick` called every 20 ms
 * while it runs: where a test injects its fault once the run has reached the moment it waits for.
 */
export function runLatlabWithFault(bin: string, args: string[], options: { cwd: string; tick: () => void }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: options.cwd, env: { ...process.env, CI: "true" } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const watch = setInterval(options.tick, 20);
    child.on("close", (code) => {
      clearInterval(watch);
      done({ code, stdout, stderr });
    });
  });
}
