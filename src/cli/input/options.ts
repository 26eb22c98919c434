/**
 * Every flag of the CLI parsed and checked in one place: the value parsers commander calls
 * (`--replicas 3`, `--duration 2x`…), and the checks that need more than one flag or the
 * experiment (flags another target would read, `--history` with `--no-history`, a --duration
 * shorter than a tool can run). Each refusal names the flag, the value and what was expected.
 *
 * Numbers are decimal notation only: JavaScript's Number() also reads "0x10" (16), "1e3" (1000),
 * "0b11", " 3" and "" (0), so a typo would quietly become another number.
 *
 * Imports nothing from main.ts or the commands: every command may import this module.
 */
import { InvalidArgumentError, type Command } from "commander";
import { z } from "zod";
import type { Experiment } from "../../dsl/experiment.ts";
import { didYouMean } from "../../dsl/suggest.ts";
import type { PlanOptions } from "../../plan/buildPlan.ts";
import { MAX_TIME_LIMIT_MINUTES } from "../../runner/runStop.ts";
import { TARGET_NAMES } from "../../targets/registry.ts";
import { findTool } from "../../tools/registry.ts";
import { HISTORY_ENV } from "../../history/historyStore.ts";

/** Decimal digits, nothing else (no sign, no spaces, no 0x/0b/0o, no exponent). */
const DIGITS = /^[0-9]+$/;
/** A non-negative decimal number: `30`, `0.5`, `.25` (no sign, no spaces, no exponent, no Infinity). */
const DECIMAL = /^(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)$/;

/** A commander value parser from a schema: any failure is `expected`, with the value given. */
function flagParser<T>(schema: z.ZodType<T, string>, expected: string): (value: string) => T {
  return (value) => {
    const parsed = schema.safeParse(value);
    if (!parsed.success) throw new InvalidArgumentError(`${expected}, got "${value}"`);
    return parsed.data;
  };
}

/** A whole number in decimal digits of at least `min` (and at most what a double holds exactly). */
function wholeNumber(min: number, of: string, example: string): (value: string) => number {
  const schema = z.string().regex(DIGITS).transform(Number).pipe(z.number().int().min(min).max(Number.MAX_SAFE_INTEGER));
  return flagParser(schema, `expected a whole number${of} of at least ${min}, in decimal digits (e.g. ${example})`);
}

/** A decimal number above 0 (`positive`) or at least 0. */
function decimalNumber(positive: boolean, expected: string): (value: string) => number {
  const number = z.number().finite();
  return flagParser(z.string().regex(DECIMAL).transform(Number).pipe(positive ? number.positive() : number.nonnegative()), expected);
}

/** `--replicas N`: independent host sets per variant. */
export const parseReplicas = wholeNumber(1, "", "3");

/** `--max-vcpus N`: vCPUs up at once. */
export const parseMaxVcpus = wholeNumber(1, " of vCPUs", "16");

/** `trend --measure N`: a measure's index in the experiment's list. */
export const parseMeasure = wholeNumber(0, "", "0 for the experiment's first measure; see `latlab history`");

/** `gate --min-runs k`: previous comparable runs before a band is made (the gate's own minimum is 3: GateConfigSchema). */
export const parseMinRuns = wholeNumber(3, " of previous runs", "5");

/** `--max-cost <usd>` (run, plan): above 0. */
export const parsePositive = decimalNumber(true, "expected a positive amount in decimal notation (e.g. 20 or 7.50)");

/** `compare --fail-on-regression <percent>`: at least 0. */
export const parsePercent = decimalNumber(false, "expected a percentage ≥ 0 in decimal notation (e.g. 20)");

/** `--duration 30` (seconds per tool run) or `--duration 2x` (scale each tool's own). */
export function parseDuration(value: string): NonNullable<PlanOptions["duration"]> {
  const factor = /^(\d+(?:\.\d+)?)x$/i.exec(value);
  if (factor) {
    const f = Number(factor[1]);
    if (f > 0) return { factor: f };
  } else if (/^\d+(?:\.\d+)?$/.test(value) && Number(value) > 0) {
    return { seconds: Number(value) };
  }
  throw new InvalidArgumentError(`expected seconds (e.g. 30) or a factor (e.g. 2x), got "${value}"`);
}

/** `--time-limit <minutes>`: a positive number of minutes (decimals allowed), at most what a Node timer holds. */
export function parseTimeLimit(value: string): number {
  const n = /^\s*\d+(\.\d+)?\s*$|^\s*\.\d+\s*$/.test(value) ? Number(value) : Number.NaN;
  if (!(n > 0) || n > MAX_TIME_LIMIT_MINUTES) throw new InvalidArgumentError(`expected a positive number of minutes (e.g. 30 or 0.5), at most ${MAX_TIME_LIMIT_MINUTES}, got "${value}"`);
  return n;
}

const round = (n: number) => Number(n.toPrecision(6));
/** `n` to 6 significant digits, never below it: a minimum to give must pass the check itself (1/3 → 0.333334). */
const roundUp = (n: number) => {
  const r = round(n);
  return r >= n ? r : round(r + 10 ** (Math.floor(Math.log10(n)) - 5));
};
const listed = (items: string[]) => new Intl.ListFormat("en", { type: "conjunction" }).format(items);

/**
 * Refuses a duration shorter than one of the experiment's tools can run: each tool rounds it up
 * (iperf3, qperf and sockperf to whole seconds, ping to one probe at its interval), so the run
 * would measure something else than asked, silently. A tool's minimum is what its own
 * withDuration makes of the smallest duration there is; tools a duration does not change
 * (traceroute) have none. `what` names where the duration came from (`--duration 0.5`).
 */
export function checkDurationMinimum(experiment: Experiment, duration: NonNullable<PlanOptions["duration"]>, what: string): void {
  const short = new Map<string, { minimum: number; factor: number }>();
  for (const m of experiment.measure) {
    const tool = findTool(m.tool);
    if (!tool) continue;
    const own = tool.measurementSeconds(m.params);
    const minimum = tool.measurementSeconds(tool.withDuration(m.params, Number.MIN_VALUE));
    if (minimum === tool.measurementSeconds(tool.withDuration(m.params, 1e6))) continue;
    const seconds = "seconds" in duration ? duration.seconds : own * duration.factor;
    // A hair of tolerance: 0.1 × 3 probes is 0.30000000000000004 s.
    if (seconds >= minimum * (1 - 1e-9)) continue;
    const before = short.get(tool.name);
    short.set(tool.name, { minimum: Math.max(minimum, before?.minimum ?? 0), factor: Math.max(minimum / own, before?.factor ?? 0) });
  }
  if (!short.size) return;
  const tools = [...short].map(([name, s]) => `${name} at least ${round(s.minimum)} s`);
  const give = "seconds" in duration ? `${roundUp(Math.max(...[...short.values()].map((s) => s.minimum)))}` : `${roundUp(Math.max(...[...short.values()].map((s) => s.factor)))}x`;
  throw new Error(`experiment "${experiment.name}": ${what} is shorter than a tool run can be (${listed(tools)}), and would be rounded up silently: give at least ${give}`);
}

/**
 * --duration wins; otherwise the experiment's own default for this target, if it has one.
 * Every `durationByTarget` key must name a target: a misspelled one (`locl`) would otherwise be
 * ignored silently and the experiment run for the tools' defaults. Either is refused when shorter
 * than a tool run can be ({@link checkDurationMinimum}).
 */
export function planOptions(experiment: Experiment, target: string, duration?: PlanOptions["duration"]): PlanOptions {
  const unknown = Object.keys(experiment.durationByTarget).filter((key) => !TARGET_NAMES.includes(key));
  if (unknown.length) {
    throw new Error(
      `experiment "${experiment.name}": durationByTarget: ${unknown.map((key) => `"${key}" is not a target${didYouMean(key, TARGET_NAMES)}`).join("; ")}`,
    );
  }
  if (duration) {
    checkDurationMinimum(experiment, duration, `--duration ${"seconds" in duration ? duration.seconds : `${duration.factor}x`}`);
    return { duration };
  }
  const seconds = experiment.durationByTarget[target];
  if (!seconds) return {};
  checkDurationMinimum(experiment, { seconds }, `durationByTarget.${target} (${seconds} s)`);
  return { duration: { seconds } };
}

/** `--replicas N` overrides the experiment's own: on Azure, independent host sets are what separate placement from luck. */
export function withReplicas(experiment: Experiment, replicas: number | undefined): Experiment {
  return replicas === undefined ? experiment : { ...experiment, replicas };
}

/**
 * Refuses `--<name> <value>` together with `--no-<name>`: commander lets the last one win, so
 * `--history h.duckdb --no-history` would quietly record nothing. Checked before the action runs.
 */
export function refuseWithNegation(command: Command, name: string): Command {
  const given = new Set<string>();
  command.on(`option:${name}`, () => given.add(name));
  command.on(`option:no-${name}`, () => given.add(`no-${name}`));
  return command.hook("preAction", () => {
    if (given.size < 2) return;
    const flags = command.options.find((o) => o.long === `--${name}`)?.flags ?? `--${name}`;
    throw new Error(`${flags} and --no-${name} together: give one or the other, nothing was started`);
  });
}

/**
 * Flags only the Azure target reads (its `opts` keys and how they are spelt). Given for another
 * target they would be ignored silently: a --max-cost that caps nothing, an --ssh-from that opens
 * nothing.
 */
const AZURE_ONLY = {
  sshFrom: "--ssh-from",
  backend: "--backend",
  maxCost: "--max-cost",
  livePrices: "--live-prices",
  installPulumi: "--install-pulumi",
  rehearse: "--rehearse",
} as const;

/** Refuses, before anything is loaded or started, flags that `target` would not read (see {@link AZURE_ONLY}). */
export function refuseFlagsOfOtherTargets(opts: Partial<Record<keyof typeof AZURE_ONLY, unknown>>, target: string): void {
  if (target === "azure") return;
  const given = (Object.keys(AZURE_ONLY) as (keyof typeof AZURE_ONLY)[]).filter((key) => opts[key] !== undefined && opts[key] !== false).map((key) => AZURE_ONLY[key]);
  if (!given.length) return;
  throw new Error(`${listed(given)} appl${given.length === 1 ? "ies" : "y"} to --target azure only (this is --target ${target}): drop ${given.length === 1 ? "it" : "them"} or use --target azure; nothing was started`);
}

/** The help of every `--history <file>` that reads a history. */
export const HISTORY_HELP = `the history file (default $${HISTORY_ENV}, else results/history.duckdb)`;
