import { mkdirSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { normalQuantile, type ShiftedLognormal } from "../model/latencySpread.ts";
import type { PeerDelay } from "./shaping.ts";

/**
 * netem's side of the spread: a distribution table of latlab's own, so that netem draws each
 * packet's delay from the same shifted lognormal the delay line draws from (latencySpread.ts).
 *
 * netem draws delay = D + J·t/8192, t a random entry of the qdisc's table (the kernel's tabledist,
 * NETEM_DIST_SCALE 8192; tc reads the table from `$TC_LIB_DIR/<name>.dist`, numbers that fit an
 * s16). Its built-in tables (normal, pareto, paretonormal) have no floor and the wrong skew; a table
 * of exp(σ·z) − 1 at 4,096 equal-probability points of z, with D the median and J scaled to fit,
 * gives floor + scale·exp(σ·Z) exactly at those points. The table depends on σ alone (D and J carry
 * floor and scale), so a handful of files serve every pair. The 4,096 points stop at z = ±3.49:
 * netem never draws beyond the 99.98th percentile, where the delay line (a continuous draw) can.
 */

export const NETEM_DIST_SCALE = 8192;
export const NETEM_TABLE_SIZE = 4096;
const S16_MAX = 32767;

/** Where latlab keeps its netem tables (TC_LIB_DIR for the tc commands that use them). */
export const DEFAULT_NETEM_TABLE_DIR = join(homedir(), ".cache", "latlab", "netem");

const zAt = (i: number) => normalQuantile((i + 0.5) / NETEM_TABLE_SIZE);

/** exp(σ·z) − 1 over the table's range is divided by this to fit an s16 (|t| ≤ 32767). */
function tableDivisor(sigma: number): number {
  return (Math.exp(sigma * zAt(NETEM_TABLE_SIZE - 1)) - 1) / (S16_MAX / NETEM_DIST_SCALE);
}

export function netemDistributionName(sigma: number): string {
  return `latlab-sln-${sigma.toFixed(6)}`;
}

/** The .dist file's text for σ: a comment saying what it is, then the 4,096 entries. */
export function netemDistributionTable(sigma: number): string {
  const k = tableDivisor(sigma);
  const entries = Array.from({ length: NETEM_TABLE_SIZE }, (_, i) => Math.round((NETEM_DIST_SCALE * (Math.exp(sigma * zAt(i)) - 1)) / k));
  const lines = [`# latlab: exp(${sigma}·Z) − 1 at ${NETEM_TABLE_SIZE} equal-probability points of Z, × ${NETEM_DIST_SCALE}/${k} (netemDistribution.ts)`];
  for (let i = 0; i < entries.length; i += 16) lines.push(entries.slice(i, i + 16).join(" "));
  return `${lines.join("\n")}\n`;
}

/** netem's `delay D J distribution NAME` for a one-way spread: D the median, J the table's scale. */
export function netemDelayArgs(spread: ShiftedLognormal): string[] {
  const d = spread.floorUs + spread.scaleUs;
  const j = spread.scaleUs * tableDivisor(spread.sigma);
  const us = (x: number) => `${Number(x.toFixed(3))}us`;
  return ["delay", us(d), us(j), "distribution", netemDistributionName(spread.sigma)];
}

/** Writes the tables `peers` need into `dir` (idempotent: a table's name is its content's σ). */
export function writeNetemTables(dir: string, peers: readonly PeerDelay[]): string[] {
  mkdirSync(dir, { recursive: true });
  const sigmas = [...new Set(peers.flatMap((p) => (p.egressSpread ? [p.egressSpread.sigma] : [])))];
  return sigmas.map((sigma) => {
    const path = join(dir, `${netemDistributionName(sigma)}.dist`);
    writeFileSync(path, netemDistributionTable(sigma));
    return path;
  });
}
