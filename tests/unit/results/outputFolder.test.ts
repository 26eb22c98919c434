import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { describeFsError, StorageError } from "../../../src/results/fsErrors.ts";
import { AZURE_POINTER_FILE, LOCK_FILE, OutputFolderError, prepareOutputFolder, type LockHolder } from "../../../src/results/outputFolder.ts";
import { MANIFEST_FILE, readManifest } from "../../../src/results/runManifest.ts";
import { RunFiles } from "../../../src/results/runFiles.ts";
import { POINTER_FILE } from "../../../src/targets/azure/lifecycle/runState.ts";
import { tempDirs } from "../../tempDirs.ts";

const tempDir = tempDirs();
const isRoot = process.getuid?.() === 0;
const ROOT = resolve(import.meta.dirname, "../../..");

/** A pid that no process has: one that just exited (and was reaped). */
function deadPid(): number {
  const child = spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" });
  return Number(child.stdout.trim());
}

const lockOf = (dir: string) => JSON.parse(readFileSync(join(dir, LOCK_FILE), "utf8")) as LockHolder;
const writeLock = (dir: string, holder: Partial<LockHolder>) =>
  writeFileSync(join(dir, LOCK_FILE), `${JSON.stringify({ host: hostname(), runId: "old", startedAt: "2026-01-01T00:00:00.000Z", ...holder })}\n`);

/** The error prepareOutputFolder rejects with. */
async function refusal(path: string, options: { force?: boolean; signal?: AbortSignal } = {}): Promise<Error> {
  try {
    const folder = await prepareOutputFolder(path, { runId: "unit", ...options });
    folder.release();
  } catch (error) {
    return error as Error;
  }
  throw new Error(`${path} was accepted`);
}

/** A tmpfs mounted for a test (root only), unmounted when the file is done. */
const mounts: string[] = [];
afterAll(() => {
  for (const m of mounts.splice(0)) spawnSync("umount", [m]);
});
function tmpfs(options: string): string {
  const dir = tempDir("latlab-unit-mnt-");
  execFileSync("mount", ["-t", "tmpfs", "-o", options, "tmpfs", dir]);
  mounts.push(dir);
  return dir;
}

describe("prepareOutputFolder: a new folder", () => {
  it("creates it (and its parents) and locks it with this process's pid, host and run; release removes the lock and the folders it made, if empty", async () => {
    const base = tempDir("latlab-unit-out-");
    const dir = join(base, "a", "b", "run");
    const folder = await prepareOutputFolder(dir, { runId: "run-1" });
    expect(folder.dir).toBe(dir);
    expect(lockOf(dir)).toMatchObject({ pid: process.pid, host: hostname(), runId: "run-1" });
    expect(folder.notes).toEqual([]);
    folder.release();
    folder.release();
    expect(existsSync(join(base, "a"))).toBe(false);
    expect(readdirSync(base)).toEqual([]);
  });

  it("keeps a folder it made once the run wrote in it, and a folder it did not make", async () => {
    const base = tempDir("latlab-unit-out-");
    const dir = join(base, "run");
    const folder = await prepareOutputFolder(dir, { runId: "run-1" });
    writeFileSync(join(dir, "results.json"), "{}\n");
    folder.release();
    expect(readdirSync(dir)).toEqual(["results.json"]);

    const empty = tempDir("latlab-unit-out-");
    (await prepareOutputFolder(empty, { runId: "run-2" })).release();
    expect(existsSync(empty)).toBe(true);
    expect(readdirSync(empty)).toEqual([]);
  });

  it("stops when the run is interrupted, creating nothing", async () => {
    const base = tempDir("latlab-unit-out-");
    const controller = new AbortController();
    controller.abort();
    const error = await refusal(join(base, "x", "run"), { signal: controller.signal });
    expect(error.message).toMatch(/interrupted while preparing the results folder .*x\/run; nothing was started/);
    expect(readdirSync(base)).toEqual([]);
  });
});

describe("prepareOutputFolder: one run per folder", () => {
  it("refuses a second run on a folder in use, naming the folder and the other run's pid; the first run's lock stays", async () => {
    const dir = tempDir("latlab-unit-out-");
    const first = await prepareOutputFolder(dir, { runId: "first" });
    const error = await refusal(dir);
    expect(error).toBeInstanceOf(OutputFolderError);
    expect(error.message).toBe(
      `${dir} is in use by another latlab run (run first, pid ${process.pid} on this host, since ${lockOf(dir).startedAt}): two runs in one folder would mix their files. Wait for it to end, or choose another --out.`,
    );
    expect(lockOf(dir)).toMatchObject({ pid: process.pid, runId: "first" });
    first.release();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  });

  it("takes over the lock of a run whose process is gone, saying so", async () => {
    const dir = tempDir("latlab-unit-out-");
    const pid = deadPid();
    writeLock(dir, { pid, runId: "crashed" });
    const logged: string[] = [];
    const folder = await prepareOutputFolder(dir, { runId: "next", log: (m) => logged.push(m) });
    expect(logged).toEqual([`${dir}: took over the lock of run crashed (pid ${pid} on this host is no longer running)`]);
    expect(folder.notes).toEqual(logged);
    expect(lockOf(dir)).toMatchObject({ pid: process.pid, runId: "next" });
    folder.release();
  });

  it("takes over a lock whose pid now belongs to another process (its start time differs)", async () => {
    const dir = tempDir("latlab-unit-out-");
    writeLock(dir, { pid: process.pid, runId: "long-ago", pidStart: "1" });
    const folder = await prepareOutputFolder(dir, { runId: "next" });
    expect(folder.notes[0]).toMatch(/took over the lock of run long-ago/);
    folder.release();
  });

  it("takes over past a take-over that died half-way", async () => {
    const dir = tempDir("latlab-unit-out-");
    writeLock(dir, { pid: deadPid(), runId: "crashed" });
    writeFileSync(join(dir, `${LOCK_FILE}.takeover`), JSON.stringify({ pid: deadPid(), host: hostname(), runId: "crashed", startedAt: "x" }));
    const folder = await prepareOutputFolder(dir, { runId: "next" });
    expect(lockOf(dir).runId).toBe("next");
    expect(readdirSync(dir)).toEqual([LOCK_FILE]);
    folder.release();
  });

  it("refuses a lock held on another host, which it cannot check, and says how to clear it", async () => {
    const dir = tempDir("latlab-unit-out-");
    writeLock(dir, { pid: 4242, host: "elsewhere.example", runId: "remote" });
    const error = await refusal(dir);
    expect(error.message).toBe(
      `${dir} is locked by another latlab run (run remote, pid 4242 on elsewhere.example, since 2026-01-01T00:00:00.000Z). latlab cannot tell from here whether it still runs: if it does not, remove ${join(dir, LOCK_FILE)} and try again; otherwise choose another --out.`,
    );
    expect(lockOf(dir).host).toBe("elsewhere.example");
  });

  it("refuses a lock it cannot read, naming it", async () => {
    const dir = tempDir("latlab-unit-out-");
    writeFileSync(join(dir, LOCK_FILE), "");
    const error = await refusal(dir);
    expect(error.message).toBe(
      `${dir} has a lock file that latlab cannot read (${join(dir, LOCK_FILE)}): another run may be starting there. If no latlab run uses ${dir}, remove ${join(dir, LOCK_FILE)} and try again.`,
    );
  });
});

describe("prepareOutputFolder: a folder that is not empty", () => {
  /** A previous run's folder with the user's own files beside it; `recorded`: latlab's record of what it wrote (plan.json, raw/, results.json, results.json.tmp, samples/). */
  function previousRun(recorded = true): string {
    const dir = tempDir("latlab-unit-out-");
    writeFileSync(join(dir, "results.json"), JSON.stringify({ runId: "20260101-000000-abcd", status: "complete" }));
    writeFileSync(join(dir, "results.json.tmp"), "");
    writeFileSync(join(dir, "plan.json"), "{}");
    mkdirSync(join(dir, "raw", "cell"), { recursive: true });
    writeFileSync(join(dir, "raw", "cell", "stdout.txt"), "old");
    mkdirSync(join(dir, "samples"));
    writeFileSync(join(dir, "samples", "cell.txt"), "1\n");
    writeFileSync(join(dir, "notes.txt"), "mine");
    mkdirSync(join(dir, "analysis"));
    if (recorded) {
      const written = [["plan.json", "file"], ["raw", "folder"], ["results.json", "file"], ["results.json.tmp", "file"], ["samples", "folder"]].map(([name, kind]) => ({ name, kind }));
      writeFileSync(join(dir, MANIFEST_FILE), JSON.stringify({ format: 1, runId: "20260101-000000-abcd", written }));
    }
    return dir;
  }

  it("is refused without --force, saying what is there and what --force would remove; nothing changes", async () => {
    const dir = previousRun();
    const before = readdirSync(dir, { recursive: true }).sort();
    const error = await refusal(dir);
    expect(error.message).toBe(
      `${dir} is not empty (analysis, notes.txt, plan.json, raw, results.json, results.json.tmp and 1 more) — it holds the results of run 20260101-000000-abcd (status complete): a run there would mix its files with these. ` +
        "Choose a new or empty folder, or add --force, which removes only what latlab recorded writing there (plan.json, raw/, results.json, results.json.tmp, samples/) and keeps everything else.",
    );
    expect(readdirSync(dir, { recursive: true }).sort()).toEqual(before);
  });

  it("with --force, removes nothing until claim(); then only what latlab recorded writing, saying what it removed and kept, and starts a new record", async () => {
    const dir = previousRun();
    const before = readdirSync(dir, { recursive: true }).sort();
    const folder = await prepareOutputFolder(dir, { runId: "unit", force: true });
    // Prepared, not claimed (a later check may still refuse the run): nothing removed yet.
    expect(readdirSync(dir, { recursive: true }).filter((e) => e !== LOCK_FILE).sort()).toEqual(before);
    expect(folder.notes).toEqual([]);
    await folder.claim();
    expect(readdirSync(dir).sort()).toEqual([MANIFEST_FILE, LOCK_FILE, "analysis", "notes.txt"]);
    expect(readFileSync(join(dir, "notes.txt"), "utf8")).toBe("mine");
    expect(folder.notes).toEqual([
      `--force: removed what latlab had written in ${dir}: plan.json, raw/, results.json, results.json.tmp, samples/`,
      `--force: kept what latlab did not write in ${dir}: analysis, notes.txt`,
    ]);
    expect(readManifest(dir).manifest).toEqual({ format: 1, runId: "unit", written: [] });
    folder.release();
  });

  it("with --force but no record of latlab's: refused, naming the files it would have removed; nothing removed", async () => {
    const dir = previousRun(false);
    const before = readdirSync(dir, { recursive: true }).sort();
    const error = await refusal(dir, { force: true });
    expect(error.message).toBe(
      `--force removes only what latlab recorded writing in ${dir} (its ${MANIFEST_FILE}), and there is no such record there for plan.json, raw, results.json, results.json.tmp, samples: ` +
        "latlab cannot tell them from your own files, and the run would write over them. Nothing was removed. Move or remove them yourself, or choose another --out.",
    );
    expect(readdirSync(dir, { recursive: true }).sort()).toEqual(before);
  });

  it("with --force, a record that does not list a file named like latlab's: refused naming it; a record that is not latlab's: refused", async () => {
    const dir = previousRun();
    writeFileSync(join(dir, MANIFEST_FILE), JSON.stringify({ format: 1, runId: "old", written: [{ name: "raw", kind: "folder" }] }));
    expect((await refusal(dir, { force: true })).message).toMatch(/and that record does not list plan\.json, results\.json, results\.json\.tmp, samples: latlab cannot tell them from your own files/);
    writeFileSync(join(dir, MANIFEST_FILE), JSON.stringify({ format: 1, runId: "old", written: [{ name: "../x", kind: "folder" }] }));
    expect((await refusal(dir, { force: true })).message).toMatch(new RegExp(`^${join(dir, MANIFEST_FILE).replaceAll(".", "\\.")} is not a record latlab wrote \\(`));
    expect(existsSync(join(dir, "raw", "cell", "stdout.txt"))).toBe(true);
  });

  it("RunFiles keeps the record: what a run writes there is listed (by its top-level name), what it does not write is not", async () => {
    const dir = tempDir("latlab-unit-out-");
    const folder = await prepareOutputFolder(dir, { runId: "unit" });
    await folder.claim();
    const files = new RunFiles(dir, { runId: "unit" });
    files.write("plan.json", "{}");
    files.write("raw/cell/stdout.txt", "x");
    files.write("raw/cell2/stdout.txt", "y");
    writeFileSync(join(dir, "mine.txt"), "mine");
    expect(readManifest(dir).manifest?.written).toEqual([
      { name: "plan.json", kind: "file" },
      { name: "raw", kind: "folder" },
    ]);
    folder.release();
    // A folder latlab did not prepare gets no record.
    const other = tempDir("latlab-unit-out-");
    new RunFiles(other, { runId: "unit" }).write("plan.json", "{}");
    expect(readdirSync(other)).toEqual(["plan.json"]);
  });

  it("counts a stale lock as nothing: a folder holding only that needs no --force", async () => {
    const dir = tempDir("latlab-unit-out-");
    writeLock(dir, { pid: deadPid() });
    const folder = await prepareOutputFolder(dir, { runId: "unit" });
    folder.release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it("never removes an Azure run's pointer, even with --force", async () => {
    expect(AZURE_POINTER_FILE).toBe(POINTER_FILE);
    const dir = tempDir("latlab-unit-out-");
    writeFileSync(join(dir, AZURE_POINTER_FILE), "{}");
    writeFileSync(join(dir, "results.json"), "{}");
    const error = await refusal(dir, { force: true });
    expect(error.message).toBe(
      `${dir} holds ${AZURE_POINTER_FILE}, an Azure run's pointer to its state: its resources may still exist. Run \`latlab destroy ${dir}\` first, or choose another --out (--force never removes it).`,
    );
    expect(readdirSync(dir).sort()).toEqual([AZURE_POINTER_FILE, "results.json"]);
  });

  it("with --force, refuses a folder where latlab recorded writing its results.json file, rather than remove it", async () => {
    const dir = tempDir("latlab-unit-out-");
    mkdirSync(join(dir, "results.json"));
    writeFileSync(join(dir, "results.json", "precious"), "x");
    writeFileSync(join(dir, MANIFEST_FILE), JSON.stringify({ format: 1, runId: "old", written: [{ name: "results.json", kind: "file" }] }));
    const error = await refusal(dir, { force: true });
    expect(error.message).toBe(`${join(dir, "results.json")} is a folder, not the file latlab wrote there; --force does not remove it: remove or rename it yourself.`);
    expect(existsSync(join(dir, "results.json", "precious"))).toBe(true);
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  });
});

describe("prepareOutputFolder: a path that cannot hold files fails at once, with the reason in words", () => {
  it("/proc and /sys: not file systems for files (and no endless mkdir)", async () => {
    expect((await refusal("/proc/x")).message).toBe("cannot use /proc/x as the results folder: /proc is on a pseudo-filesystem (proc: the kernel's view of processes), which cannot hold files; choose a folder on a disk");
    expect((await refusal("/proc/x/y/z")).message).toMatch(/^cannot use \/proc\/x\/y\/z as the results folder: \/proc is on a pseudo-filesystem \(proc/);
    expect((await refusal("/sys/x")).message).toBe("cannot use /sys/x as the results folder: /sys is on a pseudo-filesystem (sysfs: the kernel's view of devices), which cannot hold files; choose a folder on a disk");
  });

  it("a file, or a file on the way", async () => {
    const base = tempDir("latlab-unit-out-");
    const file = join(base, "file");
    writeFileSync(file, "x");
    expect((await refusal(file)).message).toBe(`cannot use ${file} as the results folder: it is a file, not a folder`);
    expect((await refusal(join(file, "run", "x"))).message).toBe(`cannot use ${join(file, "run", "x")} as the results folder: ${file} is a file, not a folder`);
    expect(readdirSync(base)).toEqual(["file"]);
  });

  it("a symbolic link to nothing", async () => {
    const base = tempDir("latlab-unit-out-");
    execFileSync("ln", ["-s", join(base, "gone"), join(base, "link")]);
    expect((await refusal(join(base, "link", "run"))).message).toBe(`cannot use ${join(base, "link", "run")} as the results folder: ${join(base, "link")} is a symbolic link to something that does not exist`);
  });

  it.skipIf(!isRoot)("a read-only file system: EROFS, found on the nearest folder that exists (not ENOENT)", async () => {
    const ro = tmpfs("ro,size=64k");
    expect((await refusal(join(ro, "a", "b"))).message).toBe(`cannot use ${join(ro, "a", "b")} as the results folder: ${ro} is on a read-only file system`);
  });

  it.skipIf(!isRoot)("a full file system: no space", async () => {
    const full = tmpfs("size=8k");
    spawnSync("sh", ["-c", `cat /dev/zero > ${join(full, "filler")}`]);
    expect((await refusal(join(full, "run"))).message).toBe(`cannot use ${join(full, "run")} as the results folder: no space left on the device holding ${full}`);
  });

  it.skipIf(!isRoot)("no permission (latlab run by another user)", () => {
    const base = tempDir("latlab-unit-out-");
    chmodSync(base, 0o755);
    const locked = join(base, "locked");
    mkdirSync(locked, { mode: 0o755 });
    const script = join(base, "prepare.mts");
    writeFileSync(
      script,
      `import { prepareOutputFolder } from ${JSON.stringify(join(ROOT, "src/results/outputFolder.ts"))};\n` +
        `try { await prepareOutputFolder(process.argv[2], { runId: "x" }); } catch (e) { console.log(e.message); }\n`,
    );
    chmodSync(script, 0o644);
    const r = spawnSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, "--import", "tsx", script, join(locked, "run")], { cwd: ROOT, encoding: "utf8", env: { ...process.env, HOME: "/tmp" } });
    expect(r.stdout.trim(), r.stderr).toBe(`cannot use ${join(locked, "run")} as the results folder: cannot write in ${locked}: no permission (latlab runs as nobody) (EACCES)`);
  });
});

describe("describeFsError / StorageError", () => {
  it("say errno codes in words, with the code", () => {
    const err = (code: string) => Object.assign(new Error(`${code}: raw`), { code });
    expect(describeFsError(err("ENOSPC"))).toBe("no space left on the device (ENOSPC)");
    expect(describeFsError(err("EROFS"))).toBe("the file system is read-only (EROFS)");
    expect(describeFsError(err("EIO"))).toBe("input/output error: the disk (or network file system) failed (EIO)");
    expect(describeFsError(err("EISDIR"))).toBe("it is a folder where a file was expected (EISDIR)");
    expect(describeFsError(err("EWHATEVER"))).toBe("EWHATEVER: raw");
    const storage = new StorageError("/x/results.json", err("ENOSPC"));
    expect(storage.message).toBe("cannot write /x/results.json: no space left on the device (ENOSPC)");
    expect(storage.code).toBe("ENOSPC");
  });
});
