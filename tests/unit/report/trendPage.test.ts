import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { appendRuns } from "../../../src/history/historyStore.ts";
import { trendPageModel } from "../../../src/report/trend/trendModel.ts";
import { trendPageHtml } from "../../../src/report/trend/trendPage.ts";
import { tempDirs } from "../../tempDirs.ts";
import { runMain } from "../cli/runMain.ts";
import { asHistory, fixtureRecords } from "./trendFixture.ts";

const tempDir = tempDirs();
const HOSTILE = `<img src=x onerror="alert(1)">&'`;

describe("the trend page's HTML", () => {
  it("draws one chart per measure with the band, the ringed regression and the change rule; escapes the history's text; says no CI is recorded", async () => {
    const page = trendPageModel(asHistory(fixtureRecords({ runs: 9, regressionAt: 7, upgradeAt: 8, experiment: HOSTILE })), { history: "/h/<history>.duckdb", generatedAt: "2026-12-01T00:00:00.000Z" });
    const html = await trendPageHtml(page);
    expect(html).not.toContain("<img");
    expect(html).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;&#39;");
    expect(html).toContain("/h/&lt;history&gt;.duckdb");
    // No script and nothing fetched: no src, no href but the page's own anchors, no @import or url() (a quote in the text is &quot;).
    expect(html).not.toMatch(/<script|<[^>]*\s(src|href)="(?!#)|@import|url\(/i);
    const figures = html.match(/<figure class="chart"[\s\S]*?<\/figure>/g) ?? [];
    expect(figures).toHaveLength(1);
    for (const layer of ["trend_band_marks", "trend_value_marks", "trend_alert_marks", "trend_change_marks"]) expect(figures[0], layer).toContain(layer);
    expect(html).toMatch(/<li class="alert verdict-regression" data-run="r08"/);
    expect(html).toMatch(/<li class="change" data-run="r09">from run <code>r09<\/code>.*latlab 0\.1\.0 → 0\.2\.0/);
    expect(html).toContain("no CI recorded");
  });

  it("rings nothing and draws no band where there is no alert and every run is learning", async () => {
    const html = await trendPageHtml(trendPageModel(asHistory(fixtureRecords({ runs: 4 })), { history: "h", generatedAt: "t" }));
    expect(html).toContain("trend_value_marks");
    expect(html).not.toMatch(/trend_(alert|band|change)_marks/);
    expect(html).toContain('class="ok no-alerts"');
    expect(html).toContain("No band yet");
  });
});

describe("latlab report --history [file] [--out <dir>]", () => {
  it("writes <dir>/index.html and prints its path", async () => {
    const dir = tempDir("latlab-trend-page-");
    const file = join(dir, "history.duckdb");
    await appendRuns(file, fixtureRecords({ runs: 6, regressionAt: 5 }));
    const out = join(dir, "site");
    const r = await runMain(["report", "--history", file, "--out", out]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${join(out, "index.html")}\n`);
    const html = readFileSync(join(out, "index.html"), "utf8");
    expect(html).toMatch(/<li class="alert verdict-regression" data-run="r06"/);
    expect(html).toContain(file);
  });

  it("takes the history from $LATLAB_HISTORY when --history names none", async () => {
    const dir = tempDir("latlab-trend-page-");
    // A history of this test's own, not the one the other tests record in.
    vi.stubEnv("LATLAB_HISTORY", join(dir, "env.duckdb"));
    await appendRuns(process.env.LATLAB_HISTORY!, fixtureRecords({ runs: 2, experiment: "from-env" }));
    const r = await runMain(["report", "--history", "--out", dir]).finally(() => vi.unstubAllEnvs());
    expect(r.code).toBe(0);
    expect(readFileSync(join(dir, "index.html"), "utf8")).toContain('data-experiment="from-env"');
  });

  it("refuses neither a run nor --history, both, run-only flags with --history, --out without it, and a history that does not exist", async () => {
    const dir = tempDir("latlab-trend-page-");
    const cases: [string[], RegExp][] = [
      [["report"], /which report\? give a run .* or --history \[file\]/],
      [["report", "some-run", "--history"], /a run \("some-run"\) and --history: give one/],
      [["report", "--history", "--markdown"], /--markdown: for a run's report, not with --history/],
      [["report", "--history", "--no-html"], /--no-html: for a run's report, not with --history/],
      [["report", "some-run", "--out", dir], /--out is for the trend page: give --history too/],
      [["report", "--history", join(dir, "none.duckdb"), "--out", dir], /none\.duckdb: does not exist/],
    ];
    for (const [args, message] of cases) {
      const r = await runMain(args);
      expect(r.code, args.join(" ")).toBe(1);
      expect(r.stderr, args.join(" ")).toMatch(message);
      expect(r.stdout).toBe("");
    }
    expect(existsSync(join(dir, "index.html"))).toBe(false);
  });
});
