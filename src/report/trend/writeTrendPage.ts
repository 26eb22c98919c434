/** `latlab report --history`: the trend page of a history written as `<dir>/index.html` (the name GitHub Pages serves). */
import { existsSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { HistoryError, loadHistory } from "../../history/historyStore.ts";
import { makeWritableFolder } from "../../results/writablePath.ts";
import { trendPageModel } from "./trendModel.ts";
import { trendPageHtml } from "./trendPage.ts";

/** Where the page goes unless --out says otherwise: beside the runs' folders and the history. */
export const DEFAULT_TREND_DIR = "results/trend";
export const TREND_PAGE_FILE = "index.html";

/** Writes the page for the history `file` into `dir`; returns the page's path. A missing history is refused: an empty page would hide a mistyped path. */
export async function writeTrendPage(file: string, dir: string, now: Date = new Date()): Promise<string> {
  if (!existsSync(file)) throw new HistoryError(`history ${file}: does not exist (no run has been recorded there yet)`);
  const data = await loadHistory(file);
  const html = await trendPageHtml(trendPageModel(data, { history: file, generatedAt: now.toISOString() }));
  const folder = await makeWritableFolder(dir, { what: "the trend page's folder" });
  const page = join(folder.dir, TREND_PAGE_FILE);
  // Whole files only: a page cut off by a crash is never left looking finished (a published one least of all).
  const tmp = `${page}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, html);
    renameSync(tmp, page);
  } catch (error) {
    rmSync(tmp, { force: true });
    throw error;
  }
  return page;
}
