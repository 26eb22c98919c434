import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { repairCheckpoint } from "../../../../../src/targets/azure/lifecycle/fileBackendRecovery.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A file backend as Pulumi 3.259 lays one out: .pulumi/stacks/<project>/<stack>.json (+ .bak, + the blob store's .attrs). */
function backend(files: Record<string, string>) {
  const root = mkdtempSync(join(tmpdir(), "latlab-backend-"));
  dirs.push(root);
  const dir = join(root, ".pulumi", "stacks", "latlab");
  mkdirSync(dir, { recursive: true });
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return { url: pathToFileURL(root).href.replace(/\/$/, ""), dir };
}

const CHECKPOINT = JSON.stringify({ version: 3, checkpoint: { latest: { resources: [{ urn: "a" }] } } });
const BACKUP = JSON.stringify({ version: 3, checkpoint: { latest: { resources: [] } } });
const ATTRS = JSON.stringify({ "user.content_type": "application/json", md5: "x" });

describe("repairing a file backend after a crash (latlab destroy)", () => {
  it("removes an .attrs the crash left empty (Pulumi then fails with 'failed to load checkpoint: EOF') and the blob store's temp files", async () => {
    const b = backend({ "s1.json": CHECKPOINT, "s1.json.attrs": "", "s1.json.bak": BACKUP, "s1.json.bak.attrs": ATTRS, "s1.json.bak.18eab318.tmp": "" });
    const done = await repairCheckpoint(b.url, "s1");
    expect(done).toHaveLength(2);
    expect(existsSync(join(b.dir, "s1.json.attrs"))).toBe(false);
    expect(existsSync(join(b.dir, "s1.json.bak.18eab318.tmp"))).toBe(false);
    expect(readFileSync(join(b.dir, "s1.json"), "utf8")).toBe(CHECKPOINT);
    expect(readFileSync(join(b.dir, "s1.json.bak.attrs"), "utf8")).toBe(ATTRS);
  });

  it("restores a checkpoint the crash cut off from its backup", async () => {
    const b = backend({ "s1.json": CHECKPOINT.slice(0, 20), "s1.json.attrs": ATTRS, "s1.json.bak": BACKUP });
    expect(await repairCheckpoint(b.url, "s1")).toEqual([expect.stringMatching(/restored .*s1\.json from its backup/)]);
    expect(readFileSync(join(b.dir, "s1.json"), "utf8")).toBe(BACKUP);
    expect(existsSync(join(b.dir, "s1.json.attrs"))).toBe(false);
  });

  it("touches nothing that can be read, nor another stack's files, nor a non-file backend", async () => {
    const b = backend({ "s1.json": CHECKPOINT, "s1.json.attrs": ATTRS, "s10.json.attrs": "", "other.json.attrs": "" });
    expect(await repairCheckpoint(b.url, "s1")).toEqual([]);
    expect(existsSync(join(b.dir, "other.json.attrs"))).toBe(true);
    expect(await repairCheckpoint("azblob://state", "s1")).toEqual([]);
  });
});
