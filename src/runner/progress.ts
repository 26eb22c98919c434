import cliProgress from "cli-progress";
import { sanitizeForTerminal } from "../tools/terminalText.ts";

/** Messages quote tools' and hosts' own text: nothing they print may drive the terminal. */
const safe = (text: string) => sanitizeForTerminal(text);

/** What the runner tells the person waiting. */
export interface Progress {
  start(totalCells: number): void;
  cellStarted(label: string): void;
  cellFinished(label: string, status: "ok" | "failed", detail?: string): void;
  log(message: string): void;
  stop(): void;
}

const elapsed = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

/** A live bar: cells done/total, the current cell, elapsed time. For terminals. */
export function barProgress(stream: NodeJS.WriteStream = process.stderr): Progress {
  // A MultiBar holding one bar: unlike SingleBar it can print log lines above the bar.
  const multi = new cliProgress.MultiBar(
    { format: "cells {value}/{total} |{bar}| {duration_formatted} | {cell}", stream, hideCursor: true, clearOnComplete: false, barsize: 20 },
    cliProgress.Presets.shades_classic,
  );
  let bar: cliProgress.SingleBar | undefined;
  let done = 0;
  let started = false;
  return {
    start(total) {
      bar = multi.create(total, 0, { cell: "starting" });
      started = true;
    },
    cellStarted(label) {
      bar?.update(done, { cell: label });
    },
    cellFinished(label, status, detail) {
      done++;
      bar?.update(done, { cell: label });
      if (status === "failed") multi.log(`${safe(`failed: ${label}: ${detail ?? ""}`)}\n`);
    },
    log(message) {
      if (started) multi.log(`${safe(message)}\n`);
      else stream.write(`${safe(message)}\n`);
    },
    stop() {
      if (started) multi.stop();
      started = false;
    },
  };
}

/** One line a step, no animation: for CI logs and pipes. `quiet` keeps only failures. */
export function lineProgress(stream: NodeJS.WritableStream = process.stderr, quiet = false): Progress {
  const since = Date.now();
  let total = 0;
  let done = 0;
  return {
    start(t) {
      total = t;
    },
    cellStarted() {},
    cellFinished(label, status, detail) {
      done++;
      if (!quiet || status === "failed") stream.write(`${safe(`[${done}/${total}] ${status} ${label}${detail ? `: ${detail}` : ""} (${elapsed(since)})`)}\n`);
    },
    log(message) {
      if (!quiet) stream.write(`${safe(message)}\n`);
    },
    stop() {},
  };
}
