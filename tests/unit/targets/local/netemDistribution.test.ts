import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { shiftedLognormalQuantile, type ShiftedLognormal } from "../../../../src/targets/local/model/latencySpread.ts";
import {
  NETEM_DIST_SCALE,
  NETEM_TABLE_SIZE,
  netemDelayArgs,
  netemDistributionName,
  netemDistributionTable,
  writeNetemTables,
} from "../../../../src/targets/local/network/netemDistribution.ts";
import type { PeerDelay } from "../../../../src/targets/local/network/shaping.ts";

const zone: ShiftedLognormal = { floorUs: 363, scaleUs: 57.754, sigma: 0.558875 };
const cross: ShiftedLognormal = { floorUs: 2293.5, scaleUs: 302.739, sigma: 0.889235 };
const dir = mkdtempSync(join(tmpdir(), "latlab-netem-tables-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The table as tc reads it (comment lines skipped, numbers split on blanks). */
const entries = (text: string): number[] =>
  text
    .split("\n")
    .filter((l) => l !== "" && !l.startsWith("#"))
    .flatMap((l) => l.trim().split(/\s+/).map(Number));

/** What netem draws for table entry t: D + J·t/8192 (the kernel's tabledist), µs. */
function netemDelayUs(spread: ShiftedLognormal, t: number): number {
  const [, d, j] = netemDelayArgs(spread);
  return Number.parseFloat(d!) + (Number.parseFloat(j!) * t) / NETEM_DIST_SCALE;
}

describe("netem's table for a one-way spread", () => {
  for (const spread of [zone, cross]) {
    it(`σ ${spread.sigma}: ${NETEM_TABLE_SIZE} s16 entries that netem turns into the delay line's quantiles`, () => {
      const t = entries(netemDistributionTable(spread.sigma));
      expect(t).toHaveLength(NETEM_TABLE_SIZE);
      expect(t.every((x) => Number.isInteger(x) && x >= -32768 && x <= 32767)).toBe(true);
      expect(Math.max(...t)).toBe(32767);
      // Entry i stands for the quantile at (i + 0.5)/4096; netem's draw there is the spread's, to a µs.
      for (const i of [0, 1000, 2048, 4055, 4095]) {
        expect(Math.abs(netemDelayUs(spread, t[i]!) - shiftedLognormalQuantile(spread, (i + 0.5) / NETEM_TABLE_SIZE))).toBeLessThan(1);
      }
      // Ascending, so a uniformly drawn entry is the quantile function at a uniform point.
      expect(t.every((x, i) => i === 0 || x >= t[i - 1]!)).toBe(true);
    });
  }

  it("writes one file per σ the peers need, named as netemDelayArgs names it", () => {
    const p = (egressSpread?: ShiftedLognormal): PeerDelay => ({ peerRole: "x", address: "198.18.0.2", pathKind: "same-zone", rttUs: 850, egressDelayUs: 425, ...(egressSpread ? { egressSpread } : {}) });
    const written = writeNetemTables(dir, [p(zone), p(zone), p(cross), p()]);
    expect(written).toEqual([join(dir, `${netemDistributionName(zone.sigma)}.dist`), join(dir, `${netemDistributionName(cross.sigma)}.dist`)]);
    expect(readFileSync(written[0]!, "utf8")).toBe(netemDistributionTable(zone.sigma));
    expect(netemDelayArgs(zone)[4]).toBe(netemDistributionName(zone.sigma));
  });
});
