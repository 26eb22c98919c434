/**
 * The table a run prints fits the terminal (issue 24, item 5), seen in a real terminal: tmux
 * panes of 80 and 120 columns. `npm run experiment -- ppg-vs-zone` runs once for real (stderr to
 * a file, so the pane holds what stdout printed: npm's banner, the table, the result lines); its
 * table is then printed again by `latlab report` at 120 columns, and with `--wide`. A line longer
 * than the pane is wrapped by tmux into two rows; `capture-pane -J` joins them back, so the rows
 * a pane shows minus the lines it joins is the number of wrapped lines.
 *
 * Builds namespaces: run under `flock /tmp/latlab-ns.lock`, like every test that does.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { tempDirs } from "../tempDirs.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const tempDir = tempDirs();
const sessions: string[] = [];
/** tmux's server socket in this test's own temp folder: nothing of it is left in /tmp/tmux-<uid>. */
const SOCKET = join(tempDir("latlab-tmux-sock-"), "tmux.sock");
const tmux = (args: string[], options: Parameters<typeof execFileSync>[2] = {}) => execFileSync("tmux", ["-S", SOCKET, ...args], options);
const runFolders: string[] = [];

afterAll(() => {
  for (const s of sessions) {
    try {
      tmux(["kill-session", "-t", s], { stdio: "ignore" });
    } catch {
      // ended with its command
    }
  }
  for (const d of runFolders) rmSync(d, { recursive: true, force: true });
});

const shellQuote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

/**
 * Runs `command` (a shell line, in ROOT) in a detached tmux session `width` columns wide and waits
 * until it ends; returns the pane's rows as shown and as joined, and the command's exit code.
 */
function inTmux(command: string, width: number): { rows: string[]; lines: string[]; code: number } {
  const dir = tempDir("latlab-tmux-");
  const name = `latlab-table-${process.pid}-${sessions.length}`;
  sessions.push(name);
  const done = join(dir, "exit-code");
  // The pane stays after the command (remain-on-exit) so it can be read; the exit code goes to a file.
  tmux(["new-session", "-d", "-s", name, "-x", String(width), "-y", "50", "-c", ROOT, `${command}; echo $? > ${shellQuote(done)}; sleep 3600`], {
    env: { ...process.env, TERM: "xterm-256color", CI: "", COLUMNS: "" },
  });
  tmux(["set-option", "-t", name, "history-limit", "10000"]);
  for (let i = 0; i < 3600 && !existsSync(done); i++) execFileSync("sleep", ["0.5"]);
  const capture = (join: boolean) => (tmux(["capture-pane", "-p", ...(join ? ["-J"] : []), "-S", "-", "-E", "-", "-t", name], { encoding: "utf8" }) as string).replace(/\n+$/, "").split("\n");
  return { rows: capture(false), lines: capture(true), code: Number(readFileSync(done, "utf8").trim()) };
}

/**
 * The rows a pane shows that are the continuation of a line too long for it — above the first
 * line starting with `until` when given (the `results:`/`report:` lines after the table name a
 * path as long as wherever the user cloned latlab: not the table's width).
 */
const wrapped = (pane: { rows: string[]; lines: string[] }, until?: string) => {
  const upTo = (list: string[]) => (until === undefined || !list.some((l) => l.startsWith(until)) ? list.length : list.findIndex((l) => l.startsWith(until)));
  return upTo(pane.rows) - upTo(pane.lines);
};

describe("the table after a run, in a real terminal", () => {
  it("fits 80 columns for `npm run experiment -- ppg-vs-zone`, fits 120 in `latlab report`, and --wide shows every column", () => {
    const stderr = join(tempDir("latlab-tmux-err-"), "stderr");
    const run = inTmux(`npm run experiment -- ppg-vs-zone --duration 1 --no-history 2> ${shellQuote(stderr)}`, 80);
    expect(run.code, readFileSync(stderr, "utf8")).toBe(0);
    const resultsLine = run.lines.find((l) => l.startsWith("results: "));
    expect(resultsLine, run.lines.join("\n")).toBeDefined();
    const folder = resultsLine!.replace(/^results: /, "").replace(/\/results\.json.*$/, "");
    runFolders.push(folder);
    // The table is there, and nothing the run printed up to its results' path was wrapped at 80 columns.
    expect(run.lines.some((l) => /^│ *variant/.test(l) || /variant/.test(l) && /p50/.test(l))).toBe(true);
    expect(wrapped(run, "results: "), run.rows.join("\n")).toBe(0);

    const at120 = inTmux(`node bin/latlab.js report ${shellQuote(folder)} --no-html`, 120);
    expect(at120.code).toBe(0);
    expect(wrapped(at120), at120.rows.join("\n")).toBe(0);

    // --wide: every column, as wide as it comes (the terminal wraps it: that is the user's choice).
    const wide = inTmux(`node bin/latlab.js report ${shellQuote(folder)} --no-html --wide`, 120);
    expect(wide.code).toBe(0);
    const header = wide.lines.find((l) => /mean/.test(l) && /p99\.9/.test(l));
    expect(header, wide.lines.join("\n")).toBeDefined();
    for (const column of ["mean", "p50", "p95", "p99", "p99.9", "min", "max"]) expect(header).toContain(column);
    expect(wrapped(wide)).toBeGreaterThan(0);
  }, 600_000);
});
