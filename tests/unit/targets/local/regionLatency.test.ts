import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { formatSnapshot, gitBlobId, makeRegionLatencySnapshot } from "../../../../scripts/regionLatencySnapshot.ts";
import { REGIONS } from "../../../../src/targets/azure/catalog/capabilities.ts";
import { regionPairRtt } from "../../../../src/targets/local/model/latencyModel.ts";
import { publishedRegionRtt, REGION_LATENCY_SNAPSHOT_FILE, regionLatencySnapshot, RegionLatencySnapshotSchema } from "../../../../src/targets/local/model/regionLatency.ts";
import { parseLatencyArticle } from "../../../../src/targets/local/model/regionLatencyMarkdown.ts";

// Microsoft's article as published (ms.date 07/30/2026): see tests/fixtures/azure-latency/SOURCE.md.
const FIXTURE = new URL("../../../fixtures/azure-latency/azure-network-latency.md", import.meta.url);
const markdown = readFileSync(FIXTURE);
const text = markdown.toString("utf8");

describe("Microsoft's round-trip article → directed matrix", () => {
  const a = parseLatencyArticle(text);

  it("reads the date, the statistic and every region of the real article", () => {
    expect(a.msDate).toBe("2026-07-30");
    expect(a.statistic).toBe("P50");
    expect(a.datasetTakenOn).toBe("July 30, 2026");
    expect(a.periodEnding).toBe("July 30, 2026");
    expect(a.regions).toHaveLength(54);
    expect(a.tables).toEqual({ pipe: 16, csv: true });
  });

  it("keeps the table's direction: row = source, column = destination", () => {
    const ms = (from: string, to: string) => a.rttMs[a.regions.indexOf(from)]![a.regions.indexOf(to)];
    // 'UK / Northern Europe' tab: row UK South, column UK West = 7; row UK West, column UK South = 8.
    expect(ms("UK South", "UK West")).toBe(7);
    expect(ms("UK West", "UK South")).toBe(8);
    // 'Western Europe' tab, row East US, column West Europe = 83; 'East US' tab, row West Europe = 85.
    expect(ms("East US", "West Europe")).toBe(83);
    expect(ms("West Europe", "East US")).toBe(85);
    expect(ms("UK South", "UK South")).toBeNull();
  });

  it("refuses a CSV figure that differs from the tables, and a cell that is not a figure", () => {
    const csvRow = "UK South,251,249,261,261,28,14,180,81,77,141,108,22,200,78,82,11,20,21,17,180,60,27,229,232,149,240,233,171,126,266,97,12,24,17,29,88,164,146,112,152,167,25,31,23,19,101,119,,7,";
    expect(text).toContain(csvRow);
    expect(() => parseLatencyArticle(text.replace(csvRow, csvRow.replace(",,7,", ",,9,")))).toThrow(/UK South → UK West: 7 ms in one table, 9 ms in the CSV block/);
    expect(text).toContain("| UK South | 12 |  | 7 |");
    expect(() => parseLatencyArticle(text.replace("| UK South | 12 |  | 7 |", "| UK South | 12 |  | ~7 |"))).toThrow(/"~7" is not a figure/);
    expect(() => parseLatencyArticle(text.replace("Percentile P50 round trip times", "round trip times"))).toThrow(/statistic/);
  });
});

describe("the shipped snapshot", () => {
  it("is what the script makes from the fixture, with its source", () => {
    const shipped = regionLatencySnapshot();
    const made = makeRegionLatencySnapshot(markdown, { commit: shipped.source.commit, obtained: shipped.source.obtained }, shipped.madeAt);
    expect(formatSnapshot(made)).toBe(readFileSync(REGION_LATENCY_SNAPSHOT_FILE, "utf8"));
    expect(shipped.source.blob).toBe(gitBlobId(markdown));
    expect(shipped.source.path).toBe("articles/networking/azure-network-latency.md");
    expect(RegionLatencySnapshotSchema.safeParse({ ...shipped, rttMs: shipped.rttMs.slice(1) }).success).toBe(false);
  });

  it("has every pair of the regions latlab knows", () => {
    const names = Object.keys(REGIONS);
    const missing = names.flatMap((x) => names.filter((y) => y > x && !publishedRegionRtt(x, y)).map((y) => `${x}↔${y}`));
    expect(missing).toEqual([]);
  });
});

describe("regionPairRtt", () => {
  it("gives the published figure, the same both ways, with its source", () => {
    const there = regionPairRtt("uksouth", "ukwest");
    const back = regionPairRtt("ukwest", "uksouth");
    expect(there.rttUs).toBe(7500); // (7 + 8) / 2 ms
    expect(back.rttUs).toBe(there.rttUs);
    expect(there.basis).toBe("published");
    expect(there.source).toMatch(/P50 of the 30 days ending July 30, 2026 .*articles\/networking\/azure-network-latency\.md, ms\.date 2026-07-30/);
    expect(there.source).toContain("UK South→UK West 7 ms, UK West→UK South 8 ms; mean of the two directions");
    expect(regionPairRtt("eastus", "westeurope").rttUs).toBe(84_000);
    expect(regionPairRtt("westeurope", "eastus").rttUs).toBe(84_000);
  });

  it("takes the one direction published when the other is missing", () => {
    const s = regionLatencySnapshot();
    const i = s.regions.indexOf("UK South");
    const j = s.regions.indexOf("UK West");
    const oneWay = { ...s, rttMs: s.rttMs.map((row, r) => row.map((v, c) => (r === j && c === i ? null : v))) };
    const r = publishedRegionRtt("ukwest", "uksouth", oneWay);
    expect(r?.rttUs).toBe(7000);
    expect(r?.source).toMatch(/UK South→UK West 7 ms; the one direction published/);
  });

  it("falls back to seed 000's figure, saying so, for a pair the table lacks", () => {
    const s = regionLatencySnapshot();
    const i = s.regions.indexOf("UK South");
    const j = s.regions.indexOf("UK West");
    const without = { ...s, rttMs: s.rttMs.map((row, r) => row.map((v, c) => ((r === i && c === j) || (r === j && c === i) ? null : v))) };
    expect(publishedRegionRtt("uksouth", "ukwest", without)).toBeUndefined();
    const r = regionPairRtt("uksouth", "marsnorth");
    expect(r).toMatchObject({ rttUs: 5300, basis: "fallback" });
    expect(r.source).toMatch(/^fallback, uksouth↔marsnorth not in Microsoft's round-trip table: seed 000/);
  });
});
