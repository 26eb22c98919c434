/**
 * The trend page (`latlab report --history`) in a real browser, as reportBrowser.test.ts does for
 * report.html: a history of fake runs (no real run needed: the page is made from the history
 * alone) with one experiment that regressed and one that did not; the real CLI writes the page;
 * headless Chromium opens it from disk. Fails on any console error, page error, failed request or
 * request other than the page itself; checks every chart drew marks, the regression is marked in
 * its chart and in its list, the calm experiment has no mark, and the page fits a phone's width.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendRuns } from "../../src/history/historyStore.ts";
import { tempDirs } from "../tempDirs.ts";
import { chromiumPath } from "./chromium.ts";
import { fixtureRecords, REGRESSED_VARIANT } from "../unit/report/trendFixture.ts";

const tempDir = tempDirs();
const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "bin/latlab.js");

describe("the trend page in headless Chromium", () => {
  let browser: Browser;
  let page: string;

  beforeAll(async () => {
    const dir = tempDir("latlab-trend-it-");
    const history = join(dir, "history.duckdb");
    // "hist": eight scheduled runs, the last with accelnet=true's RTT 1.6× its level, then a latlab upgrade; "calm": eight runs, nothing wrong.
    await appendRuns(history, [...fixtureRecords({ runs: 9, regressionAt: 7, upgradeAt: 8 }), ...fixtureRecords({ runs: 8, experiment: "calm" }).map((r) => ({ ...r, run: { ...r.run, runId: `calm-${r.run.runId}` }, summaries: r.summaries.map((s) => ({ ...s, runId: `calm-${s.runId}` })) }))]);
    const out = join(dir, "site");
    const r = spawnSync(process.execPath, [BIN, "report", "--history", history, "--out", out], { cwd: ROOT, encoding: "utf8" });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    page = join(out, "index.html");
    expect(r.stdout).toBe(`${page}\n`);
    browser = await chromium.launch({ executablePath: chromiumPath(), args: ["--no-sandbox"] });
  }, 600_000);
  afterAll(async () => {
    await browser?.close();
  });

  it("opens offline with no request but itself, draws every chart, marks the regression, and fits 390 px", async () => {
    const tab = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems: string[] = [];
    tab.on("console", (m) => void (m.type() === "error" && problems.push(`console: ${m.text()}`)));
    tab.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
    tab.on("requestfailed", (r) => problems.push(`request failed: ${r.url()}`));
    const url = pathToFileURL(page).href;
    // Anything but the page itself is recorded and refused, so the test never reaches out either.
    await tab.route("**/*", (route) => (route.request().url() === url ? route.continue() : (problems.push(`request other than the page: ${route.request().url()}`), route.abort())));
    await tab.goto(url, { waitUntil: "load" });
    expect(problems).toEqual([]);

    // Every chart drew its points: each figure's SVG has a value layer with drawn paths.
    const charts = await tab.$$eval("figure.chart", (figures) =>
      figures.map((f) => ({
        experiment: f.closest("section")!.getAttribute("data-experiment"),
        values: f.querySelectorAll("svg g.trend_value_marks path").length,
        bands: f.querySelectorAll("svg g.trend_band_marks line").length,
        alerts: f.querySelectorAll("svg g.trend_alert_marks path").length,
        changes: f.querySelectorAll("svg g.trend_change_marks line").length,
      })),
    );
    expect(charts.map((c) => c.experiment).sort()).toEqual(["calm", "hist"]);
    for (const c of charts) {
      expect(c.values, c.experiment!).toBeGreaterThan(0);
      // Runs 6 to 8 of each experiment have their band (5 previous comparable runs and more), per variant.
      expect(c.bands, c.experiment!).toBeGreaterThanOrEqual(6);
    }
    const hist = charts.find((c) => c.experiment === "hist")!;
    const calm = charts.find((c) => c.experiment === "calm")!;
    // The regression: ringed in its chart (one point), listed with its run and variant; the upgrade marked.
    expect([hist.alerts, hist.changes]).toEqual([1, 1]);
    expect([calm.alerts, calm.changes]).toEqual([0, 0]);
    const alerts = await tab.$$eval("section[data-experiment='hist'] li.alert", (items) => items.map((li) => [li.getAttribute("data-run"), li.getAttribute("data-variant"), li.className]));
    expect(alerts.length).toBeGreaterThan(0);
    for (const a of alerts) expect(a).toEqual(["r08", REGRESSED_VARIANT, "alert verdict-regression"]);
    expect(await tab.locator("section[data-experiment='calm'] li.alert").count()).toBe(0);
    expect(await tab.locator("section[data-experiment='hist'] li.change").textContent()).toContain("latlab 0.1.0 → 0.2.0");

    const shots = process.env.LATLAB_TEST_ARTIFACTS ?? join(ROOT, "test-artifacts");
    mkdirSync(shots, { recursive: true });
    await tab.screenshot({ path: join(shots, "trend-desktop.png"), fullPage: true });
    await tab.setViewportSize({ width: 390, height: 844 });
    // On a phone the page scrolls down, not sideways (wide tables scroll inside themselves).
    expect(await tab.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await tab.screenshot({ path: join(shots, "trend-phone.png"), fullPage: true });
    console.log(`trend page screenshots: ${join(shots, "trend-desktop.png")}, ${join(shots, "trend-phone.png")}`);
    expect(problems).toEqual([]);
  }, 600_000);
});
