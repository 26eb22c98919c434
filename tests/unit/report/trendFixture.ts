/**
 * Histories for the trend page's tests, from fakeRun (no real runs): scheduled runs of the
 * two-variant ping experiment a day apart, each an independent draw around 100 µs, optionally one
 * run where the accelnet=true variant's RTT jumps, and a latlab upgrade part-way.
 */
import { historyRecords } from "../../../src/history/historyRecords.ts";
import type { HistoryRecords } from "../../../src/history/historySchema.ts";
import type { HistoryData } from "../../../src/history/historyStore.ts";
import { around, fakeRun } from "../history/fakeRun.ts";

export const REGRESSED_VARIANT = "accelnet=true";
/** Each run's level: a spread from run to run, so the band has a width. */
const LEVELS = [100, 103, 98, 101, 99, 102, 100, 97, 101, 103, 99, 100];

export interface FixtureOptions {
  runs?: number;
  /** Index of the run whose REGRESSED_VARIANT measures `jump` times its level. */
  regressionAt?: number;
  jump?: number;
  /** Runs from this index on were made by latlab 0.2.0. */
  upgradeAt?: number;
  /** Index of a run started by hand (workflow_dispatch): no scheduled run's baseline. */
  manualAt?: number;
  /** Index of a run made with two repetitions per cell: another plan hash. */
  planChangeAt?: number;
  experiment?: string;
}

export const runIdOf = (i: number) => `r${String(i + 1).padStart(2, "0")}`;
export const startOf = (i: number) => new Date(Date.UTC(2026, 10, 1 + i, 3)).toISOString();

export function fixtureRecords(options: FixtureOptions = {}): HistoryRecords[] {
  const { runs = 8, regressionAt, jump = 1.6, upgradeAt, manualAt, planChangeAt, experiment } = options;
  return Array.from({ length: runs }, (_, i) => {
    const level = LEVELS[i % LEVELS.length]!;
    const run = fakeRun(runIdOf(i), (c) => around(c.variant === REGRESSED_VARIANT && i === regressionAt ? level * jump : level, 40, i + 1), {
      startedAt: startOf(i),
      ...(i === planChangeAt ? { repetitions: 2 } : {}),
      facts: { "github.event": i === manualAt ? "workflow_dispatch" : "schedule", "github.ref": "refs/heads/main" },
    });
    const results = {
      ...run.results,
      experiment: { ...run.results.experiment, name: experiment ?? run.results.experiment.name },
      environment: { ...run.results.environment, latlabVersion: upgradeAt !== undefined && i >= upgradeAt ? "0.2.0" : "0.1.0" },
    };
    return historyRecords(results, run.samplesOf);
  });
}

/** The same records as loadHistory would give them back (runs oldest first). */
export const asHistory = (records: readonly HistoryRecords[]): HistoryData => ({
  runs: records.map((r) => r.run),
  variants: records.flatMap((r) => r.variants),
  hosts: records.flatMap((r) => r.hosts),
  summaries: records.flatMap((r) => r.summaries),
  comparisons: records.flatMap((r) => r.comparisons),
});
