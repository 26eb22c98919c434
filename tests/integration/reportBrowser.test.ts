/**
 * report.html in a real browser (issue 13): a real local run writes it; headless Chromium (Debian's
 * `chromium`, driven by playwright-core) opens it from disk. Fails on any console error, page
 * error or failed request, and on any request that is not the file itself (self-contained: no CDN,
 * no font); checks that every chart drew marks, that each comparison's verdict says what
 * results.json says, and that the page fits a phone's width. Screenshots at desktop and phone width
 * are kept in $LATLAB_TEST_ARTIFACTS (default: test-artifacts/ in the checkout, ignored by git),
 * named in the test's output.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ResultsSchema, type Results } from "../../src/results/schema.ts";
import { fmt } from "../../src/report/wording.ts";
import { tempDirs } from "../tempDirs.ts";
import { chromiumPath } from "./chromium.ts";

const tempDir = tempDirs();
const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "bin/latlab.js");

describe("report.html in headless Chromium", () => {
  let browser: Browser;
  let runDir: string;
  let results: Results;
  let stdout: string;

  beforeAll(async () => {
    runDir = join(tempDir("latlab-report-it-"), "run");
    const run = spawnSync(process.execPath, [BIN, "run", "ppg-vs-zone", "--duration", "2", "--out", runDir, "--no-history"], { cwd: ROOT, env: { ...process.env, CI: "true" }, encoding: "utf8" });
    expect(run.status, run.stdout + run.stderr).toBe(0);
    stdout = run.stdout;
    results = ResultsSchema.parse(JSON.parse(readFileSync(join(runDir, "results.json"), "utf8")));
    browser = await chromium.launch({ executablePath: chromiumPath(), args: ["--no-sandbox"] });
  }, 600_000);
  afterAll(async () => {
    await browser?.close();
  });

  it("the run ends with the report's path; report.html opens offline with no error and no request but itself", async () => {
    const html = join(runDir, "report.html");
    expect(stdout.trimEnd().split("\n").at(-1)).toBe(`report: ${html} (and report.md)`);
    expect(statSync(html).size).toBeLessThan(5 * 1024 * 1024);
    // Every chart's spec is saved beside the report.
    expect(readdirSync(join(runDir, "charts")).filter((f) => f.endsWith(".vl.json")).length).toBeGreaterThanOrEqual(9);

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems: string[] = [];
    page.on("console", (m) => void (m.type() === "error" && problems.push(`console: ${m.text()}`)));
    page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
    page.on("requestfailed", (r) => problems.push(`request failed: ${r.url()}`));
    const url = pathToFileURL(html).href;
    page.on("request", (r) => void (r.url() !== url && problems.push(`request other than the report: ${r.url()}`)));
    await page.goto(url, { waitUntil: "load" });
    expect(problems).toEqual([]);

    // Every chart drew marks: each figure's SVG has mark groups with drawn paths.
    const charts = await page.$$eval("figure.chart", (figures) =>
      figures.map((f) => ({ id: f.getAttribute("data-chart"), marks: f.querySelectorAll("svg g[class*='mark-'] path, svg g[class*='mark-'] line").length })),
    );
    expect(charts.length).toBeGreaterThanOrEqual(9);
    for (const c of charts) expect(c.marks, `chart ${c.id}`).toBeGreaterThan(0);
    for (const kind of ["cdf", "box", "time", "delta"]) expect(charts.some((c) => c.id!.endsWith(`-${kind}`)), kind).toBe(true);

    // Each comparison's verdict says what results.json says: its CI bounds and the finding they imply.
    const shown = await page.$$eval("li.verdict", (items) => items.map((li) => ({ variant: li.getAttribute("data-variant"), measure: Number(li.getAttribute("data-measure")), pair: li.getAttribute("data-pair"), text: li.textContent ?? "" })));
    expect(shown).toHaveLength(results.comparisons.length);
    for (const c of results.comparisons) {
      const v = shown.find((s) => s.variant === c.variant && s.measure === c.measure && s.pair === c.pair);
      expect(v, `${c.variant} ${c.measure}`).toBeDefined();
      if (!c.diffMean) {
        expect(v!.text).toMatch(/no confidence interval/);
        continue;
      }
      const [lo, hi] = c.diffMean.ci95;
      expect(v!.text).toContain(`95 % CI [${fmt(lo)}, ${fmt(hi)}]`);
      const finding = lo <= 0 && hi >= 0 ? "no clear difference" : c.diffMean.estimate < 0 ? "lower by" : "higher by";
      expect(v!.text).toContain(finding);
      expect(v!.text).toContain(c.inference.unit === "sample-blocks" ? "sample blocks of one deployment" : c.inference.unit === "replica" ? "replicas" : "repetitions");
    }
    // What was asked and got, per host.
    expect(await page.locator(".topology .host").count()).toBe(results.variants.flatMap((v) => v.hosts).length);

    // Kept for a look after the run (CI can upload them), inside the checkout: ignored by git.
    const shots = process.env.LATLAB_TEST_ARTIFACTS ?? join(ROOT, "test-artifacts");
    mkdirSync(shots, { recursive: true });
    await page.screenshot({ path: join(shots, "report-desktop.png"), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    // On a phone the page scrolls down, not sideways (wide tables scroll inside themselves).
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.screenshot({ path: join(shots, "report-phone.png"), fullPage: true });
    console.log(`report screenshots: ${join(shots, "report-desktop.png")}, ${join(shots, "report-phone.png")}`);
    expect(problems).toEqual([]);
  }, 600_000);
});
