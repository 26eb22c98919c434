import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkWritableFile, makeWritableFolder, mountTypeOf, pseudoFileSystem } from "../../../src/results/writablePath.ts";
import { tempDirs } from "../../tempDirs.ts";

const tempDir = tempDirs();

const MOUNTINFO = [
  "22 27 0:21 / /proc rw,relatime - proc proc rw",
  "24 27 0:6 / /dev rw,relatime - devtmpfs devtmpfs rw,size=123k",
  "25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw",
  "27 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw",
  "40 27 8:2 / /mnt/my\\040disk rw - xfs /dev/sdb1 rw",
].join("\n");

describe("mountTypeOf: the mount table's type of the mount holding a path", () => {
  it("takes the longest mount point holding the path, with octal escapes read", () => {
    expect(mountTypeOf("/dev/x", MOUNTINFO)).toBe("devtmpfs");
    expect(mountTypeOf("/dev/shm/x", MOUNTINFO)).toBe("tmpfs");
    expect(mountTypeOf("/devices", MOUNTINFO)).toBe("ext4");
    expect(mountTypeOf("/mnt/my disk/run", MOUNTINFO)).toBe("xfs");
    expect(mountTypeOf("/x", "")).toBeUndefined();
  });
});

describe("the guard for every folder the CLI writes in", () => {
  it("refuses /proc and /sys by statfs type, naming the path and pseudo-filesystem, creating nothing (no endless mkdir)", async () => {
    expect(await pseudoFileSystem("/proc")).toMatch(/^proc/);
    await expect(makeWritableFolder("/proc/x/y", { what: "the test folder" })).rejects.toThrow(
      "cannot use /proc/x/y as the test folder: /proc is on a pseudo-filesystem (proc: the kernel's view of processes), which cannot hold files; choose a folder on a disk",
    );
    await expect(makeWritableFolder("/sys/x", { what: "the test folder" })).rejects.toThrow(/^cannot use \/sys\/x as the test folder: \/sys is on a pseudo-filesystem \(sysfs/);
  });

  // In a container /dev is often a plain tmpfs, which holds files: only devtmpfs is the kernel's.
  it.skipIf(mountTypeOf("/dev") !== "devtmpfs")("refuses /dev (devtmpfs, which statfs cannot tell from tmpfs) by the mount table", async () => {
    await expect(makeWritableFolder("/dev/latlab-x", { what: "the test folder" })).rejects.toThrow(/^cannot use \/dev\/latlab-x as the test folder: \/dev is on a pseudo-filesystem \(devtmpfs/);
    expect(existsSync("/dev/latlab-x")).toBe(false);
  });

  it("a file's folder: errors name the file; a folder where the file goes is refused", async () => {
    await expect(checkWritableFile("/proc/x/h.duckdb", { what: "the history file" })).rejects.toThrow(/^cannot use \/proc\/x\/h\.duckdb as the history file: \/proc is on a pseudo-filesystem/);
    const dir = tempDir("latlab-wp-");
    await expect(checkWritableFile(dir, { what: "the history file" })).rejects.toThrow(`cannot use ${dir} as the history file: it is a folder, not a file`);
  });

  it("makes what is missing one level at a time, and removes only what it made, if empty", async () => {
    const base = tempDir("latlab-wp-");
    const made = await makeWritableFolder(join(base, "a", "b"), { what: "the test folder" });
    expect(made.created).toEqual([join(base, "a"), join(base, "a", "b")]);
    expect(existsSync(join(base, "a", "b"))).toBe(true);
    made.removeCreated();
    expect(readdirSync(base)).toEqual([]);
  });
});

// Issue 23: an --out over 4096 characters printed the path twice and was cut before the reason.
describe("a path longer than Linux allows: said once, shortened, with the limit", () => {
  const count = (text: string, part: string) => text.split(part).length - 1;

  it("a path over PATH_MAX (4096 bytes): its start and end and its length, then the reason, creating nothing", async () => {
    const base = tempDir("latlab-wp-");
    const long = join(base, ...Array.from({ length: 25 }, (_, i) => `${String(i).padStart(2, "0")}${"a".repeat(198)}`));
    const error = await makeWritableFolder(long, { what: "the results folder" }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error?.message).toBe(
      `cannot use ${long.slice(0, 40)}…${long.slice(-40)} (a path of ${long.length} characters) as the results folder: ` +
        `it is ${long.length} bytes long, and Linux takes paths of at most 4095 (PATH_MAX 4096 with the end byte; ENAMETOOLONG)`,
    );
    expect(count(error!.message, long.slice(0, 40))).toBe(1);
    expect(error!.message.length).toBeLessThan(300);
    expect(readdirSync(base)).toEqual([]);
  });

  it("a part over NAME_MAX (255 bytes): names that part, shortened, creating nothing", async () => {
    const base = tempDir("latlab-wp-");
    const name = "b".repeat(300);
    await expect(makeWritableFolder(join(base, name, "c"), { what: "the results folder" })).rejects.toThrow(
      `cannot use ${join(base, name, "c").slice(0, 40)}…${join(base, name, "c").slice(-40)} (a path of ${join(base, name, "c").length} characters) as the results folder: ` +
        `its part ${"b".repeat(20)}…${"b".repeat(20)} is 300 bytes long, and Linux takes names of at most 255 (NAME_MAX; ENAMETOOLONG)`,
    );
    expect(readdirSync(base)).toEqual([]);
  });

  it("a file (history, export) is checked the same way, by its bytes, not its characters", async () => {
    const base = tempDir("latlab-wp-");
    const name = `${"é".repeat(128)}.duckdb`; // 128 characters of 2 bytes: 263 bytes
    await expect(checkWritableFile(join(base, name), { what: "the history file" })).rejects.toThrow(/its part é{20}…é{13}\.duckdb is 263 bytes long, and Linux takes names of at most 255 \(NAME_MAX; ENAMETOOLONG\)$/);
  });

  it("a short path is shown whole, as before", async () => {
    await expect(makeWritableFolder("/proc/x/y", { what: "the test folder" })).rejects.toThrow(/^cannot use \/proc\/x\/y as the test folder: /);
  });
});
