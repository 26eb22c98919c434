/**
 * The history store's rows and its SQL schema, as migrations. One zod schema per row kind; the
 * TypeScript types are inferred from them. Pure: no database here (historyStore.ts runs these).
 *
 * Why DuckDB (through @duckdb/node-api) rather than node:sqlite: the history is read by
 * analytical queries (a metric per variant across runs, grouped and ordered), DuckDB writes
 * Parquet itself (`latlab history export --parquet`, what Azure Data Explorer, Fabric and
 * warehouses load) and reads it back, and its prebuilt bindings need no install script. node:sqlite
 * would need a hand-written Parquet writer and is still marked experimental in Node 22.
 */
import { z } from "zod";
import { PlanContentSchema } from "../plan/planHash.ts";
import { InferenceUnitSchema } from "../results/schema.ts";
import { MetricSchema, UnitSchema } from "../results/summary.ts";

/** One finished run. `facts` holds the target's environment facts and the run's provenance (git, CI). */
export const RunRowSchema = z.object({
  runId: z.string().min(1),
  experiment: z.string().min(1),
  target: z.string().min(1),
  startedAt: z.iso.datetime({ offset: true }),
  finishedAt: z.iso.datetime({ offset: true }),
  status: z.enum(["complete", "partial", "failed", "interrupted"]),
  latlabVersion: z.string(),
  /** The commit of the project the run was made from (`git rev-parse HEAD`), "-dirty" when it had changes; null outside git. */
  gitCommit: z.string().nullable(),
  node: z.string(),
  kernel: z.string(),
  toolVersions: z.record(z.string(), z.string()),
  shaping: z.string(),
  facts: z.record(z.string(), z.string()),
  /** The plan hash (src/plan/planHash.ts): runs with the same one measured the same thing the same way; null in runs recorded before version 4. */
  planHash: z.string().nullable(),
  /** What the hash is of, so that a changed plan can be said in words (planDifferences.ts); null in runs recorded before version 4. */
  plan: PlanContentSchema.nullable(),
  /** What started the run (schedule, workflow_dispatch, push…, local: src/results/runEvent.ts); null when unknown (recorded before version 4 outside GitHub Actions). */
  event: z.string().nullable(),
});
export type RunRow = z.infer<typeof RunRowSchema>;

/**
 * A distribution summary at one of three levels: `all` (every replica and repetition of a
 * variant × measure × host pair merged: the headline), `replica` (one deployment, its
 * repetitions merged: the unit comparisons over replicas use) and `run` (one tool run).
 * `unitMean` / `unitP50` are the exact figures unitInference.ts reduces a unit to, so a
 * comparison made from the history uses the same numbers as one made from the samples.
 */
export const SummaryRowSchema = z.object({
  runId: z.string(),
  variant: z.string(),
  /** Index into the experiment's measure list as the run had it: moves when the file is edited. */
  measure: z.number().int().nonnegative(),
  /**
   * The measure's identity (src/plan/planHash.ts: tool, parameters as run, pairs, path): what
   * rows of different runs are matched by. null in rows recorded before version 4 (matched by
   * index, and said so).
   */
  measureId: z.string().nullable(),
  tool: z.string(),
  pair: z.string(),
  level: z.enum(["all", "replica", "run"]),
  /** null at level `all`. */
  replica: z.number().int().nonnegative().nullable(),
  /** null at levels `all` and `replica`. */
  repetition: z.number().int().nonnegative().nullable(),
  metric: MetricSchema,
  unit: UnitSchema,
  n: z.number().int().nonnegative(),
  mean: z.number(),
  stddev: z.number(),
  min: z.number(),
  p50: z.number(),
  p90: z.number(),
  p95: z.number().nullable(),
  p99: z.number(),
  /** Always stored (NOT NULL since version 1), even below 1 000 samples where it is the maximum; see tailSupported. */
  p999: z.number(),
  /** Only where the count supports them (n ≥ 10 000, n ≥ 100 000); null otherwise and in rows from before version 3. */
  p9999: z.number().nullable(),
  p99999: z.number().nullable(),
  max: z.number(),
  /** Exact mean and nearest-rank median of the samples (levels `replica` and `run`; null at `all`). */
  unitMean: z.number().nullable(),
  unitP50: z.number().nullable(),
});
export type SummaryRow = z.infer<typeof SummaryRowSchema>;

/** A variant of the run: its axes and the variant it was compared with. */
export const VariantRowSchema = z.object({
  runId: z.string(),
  variant: z.string(),
  baseline: z.string(),
  axes: z.record(z.string(), z.unknown()),
});
export type VariantRow = z.infer<typeof VariantRowSchema>;

/** Placement evidence: what each host asked for and what it got. */
export const HostRowSchema = z.object({
  runId: z.string(),
  variant: z.string(),
  host: z.string(),
  deployment: z.string(),
  requested: z.record(z.string(), z.unknown()),
  actual: z.record(z.string(), z.unknown()),
  mismatches: z.array(z.string()),
});
export type HostRow = z.infer<typeof HostRowSchema>;

/** A comparison the run itself made (variant vs baseline, or pair vs pair), with its CI and unit. */
export const ComparisonRowSchema = z.object({
  runId: z.string(),
  kind: z.enum(["variant", "pair"]),
  variant: z.string(),
  /** The baseline variant (kind `variant`) or the variant itself (kind `pair`). */
  baseline: z.string(),
  pair: z.string(),
  /** The baseline pair: the same pair for kind `variant`. */
  baselinePair: z.string(),
  measure: z.number().int().nonnegative(),
  tool: z.string(),
  metric: MetricSchema,
  unit: UnitSchema,
  /** Which difference: of the means, or of the unit medians. */
  statistic: z.enum(["mean", "p50"]),
  estimate: z.number(),
  ciLow: z.number(),
  ciHigh: z.number(),
  method: z.enum(["welch-t", "block-bootstrap"]),
  inferenceUnit: InferenceUnitSchema,
  unitsBaseline: z.number().int().nonnegative(),
  unitsCandidate: z.number().int().nonnegative(),
  pWelch: z.number().nullable(),
  pRank: z.number().nullable(),
});
export type ComparisonRow = z.infer<typeof ComparisonRowSchema>;

/** Everything one run adds to the history. */
export interface HistoryRecords {
  run: RunRow;
  variants: VariantRow[];
  hosts: HostRow[];
  summaries: SummaryRow[];
  comparisons: ComparisonRow[];
}

export interface Migration {
  version: number;
  description: string;
  sql: string;
}

/**
 * The schema, as the steps that build it. A file is at version N when steps 1…N ran on it;
 * historyStore.ts applies the missing ones in one transaction. Never edit a step that shipped:
 * add one. Step 1 is the first layout (runs and summaries only); step 2 added provenance, the
 * run's own comparisons with their CIs, and the placement evidence; step 3 the tail percentiles
 * p99.99 and p99.999 (nullable: rows already stored have no figure for them, and a summary has
 * them only where its count supports them); step 4 what tells comparable runs apart: each run's
 * plan hash, plan content and event (table run_plans), each summary's measure identity (null in
 * rows from before).
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: "runs and their summaries",
    sql: `
      CREATE TABLE runs (
        run_id VARCHAR PRIMARY KEY,
        experiment VARCHAR NOT NULL,
        target VARCHAR NOT NULL,
        started_at TIMESTAMPTZ NOT NULL,
        finished_at TIMESTAMPTZ NOT NULL,
        status VARCHAR NOT NULL,
        latlab_version VARCHAR NOT NULL,
        node VARCHAR,
        kernel VARCHAR,
        tool_versions JSON,
        shaping VARCHAR,
        added_at TIMESTAMPTZ NOT NULL
      );
      CREATE TABLE summaries (
        run_id VARCHAR NOT NULL,
        variant VARCHAR NOT NULL,
        measure INTEGER NOT NULL,
        tool VARCHAR NOT NULL,
        pair VARCHAR NOT NULL,
        level VARCHAR NOT NULL,
        replica INTEGER,
        repetition INTEGER,
        metric VARCHAR NOT NULL,
        unit VARCHAR NOT NULL,
        n BIGINT NOT NULL,
        mean DOUBLE NOT NULL,
        stddev DOUBLE NOT NULL,
        min DOUBLE NOT NULL,
        p50 DOUBLE NOT NULL,
        p90 DOUBLE NOT NULL,
        p95 DOUBLE,
        p99 DOUBLE NOT NULL,
        p999 DOUBLE NOT NULL,
        max DOUBLE NOT NULL,
        unit_mean DOUBLE,
        unit_p50 DOUBLE
      );`,
  },
  {
    version: 2,
    description: "provenance (git commit, facts), variants, placement evidence, the run's comparisons",
    sql: `
      ALTER TABLE runs ADD COLUMN git_commit VARCHAR;
      ALTER TABLE runs ADD COLUMN facts JSON;
      UPDATE runs SET facts = '{}' WHERE facts IS NULL;
      CREATE TABLE variants (
        run_id VARCHAR NOT NULL,
        variant VARCHAR NOT NULL,
        baseline VARCHAR NOT NULL,
        axes JSON NOT NULL
      );
      CREATE TABLE hosts (
        run_id VARCHAR NOT NULL,
        variant VARCHAR NOT NULL,
        host VARCHAR NOT NULL,
        deployment VARCHAR NOT NULL,
        requested JSON NOT NULL,
        actual JSON NOT NULL,
        mismatches JSON NOT NULL
      );
      CREATE TABLE comparisons (
        run_id VARCHAR NOT NULL,
        kind VARCHAR NOT NULL,
        variant VARCHAR NOT NULL,
        baseline VARCHAR NOT NULL,
        pair VARCHAR NOT NULL,
        baseline_pair VARCHAR NOT NULL,
        measure INTEGER NOT NULL,
        tool VARCHAR NOT NULL,
        metric VARCHAR NOT NULL,
        unit VARCHAR NOT NULL,
        statistic VARCHAR NOT NULL,
        estimate DOUBLE NOT NULL,
        ci_low DOUBLE NOT NULL,
        ci_high DOUBLE NOT NULL,
        method VARCHAR NOT NULL,
        inference_unit VARCHAR NOT NULL,
        units_baseline INTEGER NOT NULL,
        units_candidate INTEGER NOT NULL,
        p_welch DOUBLE,
        p_rank DOUBLE
      );`,
  },
  {
    version: 3,
    description: "tail percentiles p99.99 and p99.999 of the summaries",
    sql: `
      ALTER TABLE summaries ADD COLUMN p9999 DOUBLE;
      ALTER TABLE summaries ADD COLUMN p99999 DOUBLE;`,
  },
  {
    version: 4,
    description: "comparable runs: each run's plan hash and content and its event (run_plans), the measure identity of the summaries",
    // A table of its own, not columns of runs: DuckDB refuses to commit an ALTER of runs in the
    // transaction that ran step 2's UPDATE of it ("another transaction has altered this table"),
    // and a file at version 1 is brought to 4 in one transaction. An old run's event is known only
    // where GitHub Actions recorded it (its github.event fact); its plan and its summaries'
    // measure identities are not in the history (it keeps no parameters), so they stay null.
    sql: `
      CREATE TABLE run_plans (
        run_id VARCHAR NOT NULL,
        plan_hash VARCHAR,
        plan JSON,
        event VARCHAR
      );
      INSERT INTO run_plans SELECT run_id, NULL, NULL, json_extract_string(facts, '$."github.event"') FROM runs;
      ALTER TABLE summaries ADD COLUMN measure_id VARCHAR;`,
  },
];

export const HISTORY_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/** The tables, in the order a run's rows are written and exported. */
export const HISTORY_TABLES = ["runs", "run_plans", "variants", "hosts", "summaries", "comparisons"] as const;
