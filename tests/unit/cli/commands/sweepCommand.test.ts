import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sweepSummaryMarkdown, MAX_ROWS } from "../../../../src/cli/output/sweepSummary.ts";
import { githubRunSelector } from "../../../../src/cli/commands/sweepCommand.ts";
import type { SweepReport, SweptGroup } from "../../../../src/targets/azure/lifecycle/sweeper.ts";
import { parseTagFilter } from "../../../../src/targets/azure/emulator/sweepRehearsals.ts";
import { runMain } from "../runMain.ts";

const NOW = new Date("2026-03-01T12:00:00Z");

const swept = (name: string, extra: Partial<SweptGroup> = {}): SweptGroup => ({ name, location: "eastus", expiresAt: "2026-03-01T20:00:00.000Z", state: "not-expired", selected: false, why: "not expired: expires 2026-03-01T20:00:00.000Z", ...extra });
const report = (extra: Partial<SweepReport>): SweepReport => ({ dryRun: false, githubRun: null, groups: [], deleted: [], failed: [], left: [], leftErrors: [], ...extra });

describe("the Markdown summary", () => {
  it("nothing found: says there was nothing to do", () => {
    const md = sweepSummaryMarkdown({ githubRun: { runId: "42" }, delete: true, where: "Azure", scopes: [{ title: "Azure subscription", report: report({ githubRun: { runId: "42" } }), notes: [], errors: [] }], now: NOW });
    expect(md).toMatch(/^### latlab sweep: every latlab resource group of GitHub run 42\n/);
    expect(md).toContain("**Nothing to do**: no latlab resource group of GitHub run 42 found.");
    expect(md).toContain("Left in ARM: nothing.");
    expect(md.endsWith("\n\n")).toBe(true);
  });

  it("says what was found, deleted, kept and why, and what ARM still holds", () => {
    const r = report({
      groups: [
        swept("latlab-a", { state: "expired", expiresAt: "2026-03-01T10:00:00.000Z", selected: true, why: "expired 2026-03-01T10:00:00.000Z" }),
        swept("latlab-b", { state: "expired", selected: true, why: "expired 2026-03-01T11:00:00.000Z" }),
        swept("latlab-c"),
        swept("latlab-d", { state: "unknown-expiry", expiresAt: null, why: "unknown expiry (no readable expiresAt tag)" }),
      ],
      deleted: ["latlab-a"],
      failed: [{ name: "latlab-b", error: "ScopeLocked | the scope is locked\nsecond line" }],
      left: ["/subscriptions/s/resourceGroups/latlab-b"],
    });
    const md = sweepSummaryMarkdown({ githubRun: null, delete: true, where: "Azure", scopes: [{ title: "Azure subscription", report: r, notes: [], errors: [] }], now: NOW });
    expect(md).toContain("### latlab sweep: expired latlab resource groups");
    expect(md).toContain("2 selected, 1 deleted, 1 failed, 1 resource(s) still in ARM.");
    expect(md).toContain("| `latlab-a` | `eastus` | 2026-03-01T10:00:00.000Z | **deleted** (expired 2026-03-01T10:00:00.000Z) |");
    // An error's pipe and newline stay inside its cell.
    expect(md).toContain("| `latlab-b` | `eastus` | 2026-03-01T20:00:00.000Z | **delete failed**: `ScopeLocked \\| the scope is locked second line` |");
    expect(md).toContain("| `latlab-c` | `eastus` | 2026-03-01T20:00:00.000Z | kept: not expired: expires 2026-03-01T20:00:00.000Z |");
    expect(md).toContain("| `latlab-d` | `eastus` | unknown | kept: unknown expiry (no readable expiresAt tag) |");
    expect(md).toContain("Left in ARM (1):\n\n- `/subscriptions/s/resourceGroups/latlab-b`");
    expect(md).not.toContain("Nothing to do");
  });

  it("with a GitHub run, other runs' groups are counted, not listed; a dry run says what --delete would delete", () => {
    const githubRun = { runId: "42", attempt: "1" };
    const r = report({
      dryRun: true,
      githubRun,
      left: null,
      groups: [swept("latlab-mine", { selected: true, why: "GitHub run 42 attempt 1", github: { runId: "42", runAttempt: "1" } }), swept("latlab-theirs", { why: "another GitHub run", github: { runId: "7" } }), swept("latlab-old", { why: "no githubRunId tag" })],
    });
    const md = sweepSummaryMarkdown({ githubRun, delete: false, where: "The rehearsal emulators on this machine", scopes: [{ title: "emulator /tmp/latlab-azemu-x", report: r, notes: ["nothing to delete in it"], errors: [] }], now: NOW });
    expect(md).toContain("1 selected, none deleted (dry run).");
    expect(md).toContain("| `latlab-mine` | `eastus` | 2026-03-01T20:00:00.000Z | would be deleted with --delete (GitHub run 42 attempt 1) |");
    expect(md).not.toContain("latlab-theirs");
    expect(md).toContain("2 other latlab resource group(s), not of this run: not touched.");
    expect(md).toContain("#### emulator /tmp/latlab-azemu-x\n\n- nothing to delete in it");
    expect(md).not.toContain("Left in ARM");
  });

  it("a long list is cut (a step summary holds 1 MiB at most); errors count", () => {
    const groups = Array.from({ length: MAX_ROWS + 5 }, (_, i) => swept(`latlab-${i}`));
    const md = sweepSummaryMarkdown({ githubRun: null, delete: true, where: "Azure", scopes: [{ title: "Azure subscription", report: report({ groups }), notes: [], errors: ["listing: 403"] }], now: NOW });
    expect(md).toContain(`latlab-${MAX_ROWS - 1}\``);
    expect(md).not.toContain(`latlab-${MAX_ROWS}\``);
    expect(md).toContain("| … | | | 5 more not listed |");
    expect(md).toContain("0 selected, 0 deleted, nothing of them left in ARM, 1 error(s).");
    expect(md).toContain("- **error**: `listing: 403`");
  });
});

describe("latlab sweep's flags", () => {
  it("--github-run takes digits; --github-attempt and --github-repository need it; --rehearse takes no --subscription", async () => {
    for (const [args, error] of [
      [["--github-run", "12x"], /--github-run <id>' argument '12x' is invalid\. expected a GitHub run id/],
      [["--github-run", "42", "--github-attempt", "0"], /--github-attempt <n>' argument '0' is invalid/],
      [["--github-attempt", "2"], /--github-attempt narrow\(s\) --github-run <id>/],
      [["--github-run", "42", "--github-repository", "nope"], /expected owner\/name/],
      [["--rehearse", "--subscription", "s"], /--rehearse sweeps this machine's emulators, not a subscription/],
    ] as const) {
      const r = await runMain(["sweep", ...args]);
      expect(r.code, args.join(" ")).not.toBe(0);
      expect(r.stderr, args.join(" ")).toMatch(error);
    }
  });

  it("inside GitHub Actions, --github-run is narrowed to the workflow's own repository unless told another", () => {
    const env = { GITHUB_ACTIONS: "true", GITHUB_REPOSITORY: "example/measurements" };
    expect(githubRunSelector({ githubRun: "42" }, env)).toEqual({ runId: "42", repository: "example/measurements" });
    expect(githubRunSelector({ githubRun: "42", githubRepository: "other/repo" }, env)).toEqual({ runId: "42", repository: "other/repo" });
    expect(githubRunSelector({ githubRun: "42", githubAttempt: "3" }, {})).toEqual({ runId: "42", attempt: "3" });
    expect(githubRunSelector({}, env)).toBeUndefined();
    expect(() => githubRunSelector({ githubRun: "42" }, { ...env, GITHUB_REPOSITORY: "x" })).toThrow(/GITHUB_REPOSITORY: expected owner\/name/);
  });

  it("the emulator listing understands the sweeper's one filter and refuses any other", () => {
    expect(parseTagFilter("tagName eq 'owner' and tagValue eq 'latlab'")).toEqual({ name: "owner", value: "latlab" });
    expect(() => parseTagFilter("substringof('latlab', name)")).toThrow(/understands only/);
  });
});

describe("latlab sweep --rehearse (saved emulator states; nothing started)", () => {
  let root: string;
  let savedTmp: string | undefined;
  let server: Server | undefined;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "latlab-sweep-unit-"));
    savedTmp = process.env.TMPDIR;
    // The emulator folders are looked for under the system's temp dir: this test's own.
    process.env.TMPDIR = root;
  });
  afterEach(async () => {
    if (savedTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmp;
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    server = undefined;
    rmSync(root, { recursive: true, force: true });
  });

  const rg = (name: string, tags: Record<string, string>) => ({ id: `/subscriptions/s/resourceGroups/${name}`, key: name, type: "Microsoft.Resources/resourceGroups", name, resourceGroup: name, body: { location: "eastus", tags }, state: "Succeeded", runtime: {}, seq: 1 });
  const saveEmulator = (name: string, resources: unknown[]) => {
    const home = join(root, `latlab-azemu-${name}`);
    mkdirSync(home);
    writeFileSync(join(home, "state.json"), `${JSON.stringify({ subscription: "s", seq: 1, resources })}\n`);
    return home;
  };

  it("no emulator: nothing to do, said in the summary", async () => {
    const summary = join(root, "summary.md");
    writeFileSync(summary, "earlier step\n");
    const r = await runMain(["sweep", "--rehearse", "--delete", "--summary", summary]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("no rehearsal emulator on this machine");
    // Appended, never overwritten.
    expect(readFileSync(summary, "utf8")).toMatch(/^earlier step\n### latlab sweep: expired latlab resource groups\n[\s\S]*\*\*Nothing to do\*\*/);
  });

  it("a dry run reads each dead emulator's saved ARM state; a live emulator is listed as skipped, never read", async () => {
    const run = saveEmulator("dead", [
      rg("latlab-r1", { owner: "latlab", expiresAt: "2099-01-01T00:00:00Z", githubRunId: "42", githubRunAttempt: "1", githubRepository: "example/measurements" }),
      rg("latlab-r2", { owner: "latlab", expiresAt: "2000-01-01T00:00:00Z", githubRunId: "43", githubRunAttempt: "1", githubRepository: "example/measurements" }),
    ]);
    const live = saveEmulator("live", [rg("latlab-live", { owner: "latlab", expiresAt: "2000-01-01T00:00:00Z", githubRunId: "42" })]);
    server = createServer();
    await new Promise<void>((r) => server!.listen(join(live, "arm.sock"), () => r()));
    const summary = join(root, "summary.md");
    const r = await runMain(["sweep", "--rehearse", "--github-run", "42", "--summary", summary]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`emulator ${run}: swept\n  latlab-r1\tnot-expired\t2099-01-01T00:00:00.000Z\twould delete: GitHub run 42`);
    expect(r.stdout).toMatch(/latlab-r2\texpired\t.*\tkept: another GitHub run \(githubRunId=43\)/);
    expect(r.stdout).toContain(`emulator ${live}: live`);
    expect(r.stdout).not.toContain("latlab-live");
    expect(r.stdout).toContain("dry run: nothing deleted; add --delete to remove the selected groups");
    const md = readFileSync(summary, "utf8");
    expect(md).toContain("| `latlab-r1` | `eastus` | 2099-01-01T00:00:00.000Z | would be deleted with --delete");
    expect(md).toContain(`#### emulator ${live}\n\n- skipped: its emulator answers (a run is still going); never touched`);
    // Nothing was changed: both states as they were.
    expect(JSON.parse(readFileSync(join(run, "state.json"), "utf8")).resources).toHaveLength(2);
    expect(existsSync(join(live, "state.json"))).toBe(true);
  });

  it("with --delete, an emulator holding nothing of the selection is not started nor changed", async () => {
    const home = saveEmulator("other", [rg("latlab-r9", { owner: "latlab", expiresAt: "2000-01-01T00:00:00Z", githubRunId: "9" })]);
    const before = readFileSync(join(home, "state.json"), "utf8");
    const r = await runMain(["sweep", "--rehearse", "--delete", "--github-run", "42"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`emulator ${home}: untouched`);
    expect(r.stdout).toMatch(/latlab-r9\texpired\t.*\tkept: another GitHub run/);
    expect(readFileSync(join(home, "state.json"), "utf8")).toBe(before);
  });

  it("a summary file that cannot be written is refused before anything is swept", async () => {
    const r = await runMain(["sweep", "--rehearse", "--summary", join(root, "missing", "summary.md")]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/--summary .*missing\/summary\.md: its folder .* cannot hold it/);
    expect(r.stdout).toBe("");
  });
});
