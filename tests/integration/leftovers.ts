/**
 * What a local run could leave behind on this machine — namespaces, root-side links, sshd's and
 * tool processes, temp and key folders, a results folder's .tmp — listed for a test to assert
 * there is none. One definition for every integration test that checks it.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_KEYS_ROOT } from "../../src/targets/local/localTarget.ts";

export function leftovers(runDir?: string, options: { tempFolders?: boolean } = {}): string[] {
  const found: string[] = [];
  const netns = execFileSync("ip", ["netns", "list"], { encoding: "utf8" }).trim();
  if (netns) found.push(`namespaces: ${netns.replace(/\n/g, ", ")}`);
  // Live processes only: a killed server re-parented to PID 1 is a zombie (state Z) until PID 1
  // reaps it, which this machine's init does within about a second. It is dead already.
  const procs = execFileSync("ps", ["-eo", "pid,stat,args"], { encoding: "utf8" })
    .split("\n")
    .filter((l) => /sockperf|sshd -D -e -f|sshd: root|qperf|iperf3|ping -D|latlab_echo/.test(l) && !l.includes("ps -eo") && !/^\s*\d+\s+Z/.test(l));
  if (procs.length) found.push(`processes: ${procs.join("; ")}`);
  const links = execFileSync("ip", ["-o", "link", "show"], { encoding: "utf8" }).split("\n").filter((l) => /: ll[a-z0-9]/.test(l));
  if (links.length) found.push(`links: ${links.join("; ")}`);
  if (options.tempFolders !== false) {
    // The local target's temp folders and key folders are latlab-<short run id>-XXXXXX.
    const tmp = [tmpdir(), DEFAULT_KEYS_ROOT].flatMap((root) => (existsSync(root) ? readdirSync(root) : []).filter((f) => /^latlab-[0-9a-f]{4,}-/.test(f)));
    if (tmp.length) found.push(`temp: ${tmp.join(", ")}`);
  }
  if (runDir && existsSync(join(runDir, ".tmp"))) found.push(`temp: ${join(runDir, ".tmp")}`);
  return found;
}
