import { describe, expect, it } from "vitest";
import { describeChange, windowedMeans } from "../../../src/results/windows.ts";

const constantWindows = (means: number[], size = 100) => means.flatMap((m) => Array<number>(size).fill(m));

describe("windowedMeans", () => {
  it("reproduces seed 000's table (same AZ, cross AZ, cross region)", () => {
    const table = {
      sameAz: [813.14, 888.09, 925.49, 955.87, 789.58],
      crossAz: [1421.41, 1388.25, 1433.61, 1403.46, 1473.22],
      crossRegion: [5320.39, 5242.55, 5384.39, 5388.18, 5262.4],
    };
    const expected = { sameAz: "down by 166.29 µs", crossAz: "up by 69.76 µs", crossRegion: "down by 125.78 µs" };
    for (const [name, means] of Object.entries(table)) {
      // Older probes in front must not matter: only the last 500 count.
      const w = windowedMeans([...constantWindows([1, 2, 3]), ...constantWindows(means)], { last: 500, window: 100 });
      expect(w.rows.map((r) => r.label)).toEqual(["Records 500-401", "Records 400-301", "Records 300-201", "Records 200-101", "Last 100 records"]);
      w.rows.forEach((r, i) => expect(r.mean).toBeCloseTo(means[i]!, 9));
      expect(describeChange(w.finalChange!)).toBe(expected[name as keyof typeof expected]);
    }
  });

  it("means of 1…600: the last 500 are 101…600", () => {
    const samples = Array.from({ length: 600 }, (_, i) => i + 1);
    const w = windowedMeans(samples); // defaults: last 500, window 100
    expect(w.rows.map((r) => [r.from, r.to, r.start, r.stop, r.count, r.mean])).toEqual([
      [500, 401, 100, 200, 100, 150.5],
      [400, 301, 200, 300, 100, 250.5],
      [300, 201, 300, 400, 100, 350.5],
      [200, 101, 400, 500, 100, 450.5],
      [100, 1, 500, 600, 100, 550.5],
    ]);
    expect(w.finalChange).toBe(100);
  });

  it("small hand-checked case: window 2 over the last 4", () => {
    const w = windowedMeans([1, 2, 3, 4, 10, 20], { last: 4, window: 2 });
    expect(w.rows.map((r) => [r.label, r.mean])).toEqual([
      ["Records 4-3", 3.5],
      ["Last 2 records", 15],
    ]);
    expect(w.finalChange).toBe(11.5);
  });

  it("ends where asked (the first break), not at the end of the series", () => {
    const samples = Array.from({ length: 600 }, (_, i) => i + 1);
    const w = windowedMeans(samples, { end: 300 });
    expect(w.rows.map((r) => [r.label, r.mean])).toEqual([
      ["Records 300-201", 50.5],
      ["Records 200-101", 150.5],
      ["Last 100 records", 250.5],
    ]);
  });

  it("only whole windows when the series is short", () => {
    const samples = Array.from({ length: 250 }, (_, i) => i + 1);
    const w = windowedMeans(samples);
    expect(w.rows.map((r) => [r.label, r.start, r.mean])).toEqual([
      ["Records 200-101", 50, 100.5],
      ["Last 100 records", 150, 200.5],
    ]);
    expect(windowedMeans(samples.slice(0, 150)).finalChange).toBeUndefined(); // one window
    expect(windowedMeans(samples.slice(0, 99))).toEqual({ rows: [], finalChange: undefined });
    expect(windowedMeans([])).toEqual({ rows: [], finalChange: undefined });
  });

  it("rejects windows that do not tile", () => {
    expect(() => windowedMeans([1], { last: 450, window: 100 })).toThrow(RangeError);
    expect(() => windowedMeans([1], { window: 0 })).toThrow(RangeError);
    expect(() => windowedMeans([1], { last: 50, window: 100 })).toThrow(RangeError);
    expect(() => windowedMeans([1], { end: 2 })).toThrow(RangeError);
    expect(() => windowedMeans([1], { window: 1.5, last: 3 })).toThrow(RangeError);
  });
});

describe("describeChange", () => {
  it("says which way and how much", () => {
    expect(describeChange(-166.29000000000008)).toBe("down by 166.29 µs");
    expect(describeChange(69.76)).toBe("up by 69.76 µs");
    expect(describeChange(0.001)).toBe("no change");
    expect(describeChange(-0.004)).toBe("no change");
    expect(describeChange(2.5, "Mbit/s", 1)).toBe("up by 2.5 Mbit/s");
  });
});
