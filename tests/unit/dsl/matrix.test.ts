import { describe, expect, it } from "vitest";
import { baselineMap, expandMatrix, variantId } from "../../../src/dsl/matrix.ts";

describe("expandMatrix", () => {
  it("is the cartesian product, first axis slowest", () => {
    const { points, issues } = expandMatrix({ accelnet: [false, true], placement: ["same-zone", "cross-zone", "same-ppg"] });
    expect(issues).toEqual([]);
    expect(points.map(variantId)).toEqual([
      "accelnet=false,placement=same-zone",
      "accelnet=false,placement=cross-zone",
      "accelnet=false,placement=same-ppg",
      "accelnet=true,placement=same-zone",
      "accelnet=true,placement=cross-zone",
      "accelnet=true,placement=same-ppg",
    ]);
  });

  it("moves zipped axes together", () => {
    const { points } = expandMatrix({ size: ["Standard_D2s_v5", "Standard_D4s_v5"], accelnet: [false, true], ppg: [false, true] }, [["size", "accelnet"]]);
    expect(points).toEqual([
      { size: "Standard_D2s_v5", accelnet: false, ppg: false },
      { size: "Standard_D2s_v5", accelnet: false, ppg: true },
      { size: "Standard_D4s_v5", accelnet: true, ppg: false },
      { size: "Standard_D4s_v5", accelnet: true, ppg: true },
    ]);
  });

  it("applies a typed predicate filter", () => {
    const { points } = expandMatrix({ ppg: [false, true], accelnet: [false, true] }, [], (p) => !(p.ppg && !p.accelnet));
    expect(points.map(variantId)).toEqual(["ppg=false,accelnet=false", "ppg=false,accelnet=true", "ppg=true,accelnet=true"]);
  });

  it("reports zip groups of unequal length and unknown axes with their path", () => {
    expect(expandMatrix({ a: [1, 2], b: [1] }, [["a", "b"]]).issues).toEqual([{ path: "zip[0]", message: expect.stringContaining("same number of values") }]);
    expect(expandMatrix({ a: [1] }, [["a", "c"]]).issues[0]).toMatchObject({ path: "zip[0][1]" });
  });

  it("pairs each zipped axis with its own length when one name is unknown", () => {
    expect(expandMatrix({ a: [1, 2], b: [1] }, [["a", "c", "b"]]).issues).toEqual([
      { path: "zip[0][1]", message: '"c" is not one of the declared axes (a, b)' },
      { path: "zip[0]", message: "zipped axes must have the same number of values, got a: 2, b: 1" },
    ]);
  });

  it("refuses a value repeated in an axis: two variants would share one id", () => {
    expect(expandMatrix({ ppg: [false, false, true], placement: ["same-zone", "cross-zone", "same-zone"] }).issues).toEqual([
      { path: "axes.ppg[1]", message: "duplicate value false" },
      { path: "axes.placement[2]", message: 'duplicate value "same-zone"' },
    ]);
  });

  it("lets a zipped axis repeat a value: zipped axes are read position by position", () => {
    const { points, issues } = expandMatrix({ placement: ["same-zone", "same-zone", "cross-zone"], accelnet: [false, true, false] }, [["placement", "accelnet"]]);
    expect(issues).toEqual([]);
    expect(points.map(variantId)).toEqual(["placement=same-zone,accelnet=false", "placement=same-zone,accelnet=true", "placement=cross-zone,accelnet=false"]);
  });

  it("refuses a zipped tuple given twice, and still a repeated value in an axis that is not zipped", () => {
    const { issues } = expandMatrix(
      { placement: ["same-zone", "cross-zone", "same-zone"], accelnet: [false, true, false], ppg: [true, true] },
      [["placement", "accelnet"]],
    );
    expect(issues).toEqual([
      { path: "axes.ppg[1]", message: "duplicate value true" },
      { path: "zip[0]", message: 'position 2 repeats position 0 (placement="same-zone", accelnet=false): zipped axes must not give the same combination twice' },
    ]);
  });

  it("reports a filter that removes everything or throws", () => {
    expect(expandMatrix({ a: [1, 2] }, [], () => false).issues).toEqual([{ path: "filter", message: "removes every variant" }]);
    const thrown = expandMatrix({ a: [1] }, [], () => {
      throw new Error("boom");
    }).issues;
    expect(thrown[0]?.message).toContain("boom");
  });

  it("has one default point without axes", () => {
    expect(expandMatrix({}).points.map(variantId)).toEqual(["default"]);
  });
});

describe("baselineMap", () => {
  const { points } = expandMatrix({ accelnet: [false, true], placement: ["same-zone", "same-ppg"] });
  it("maps every variant to the one fully named baseline", () => {
    const { map } = baselineMap(points, { accelnet: false, placement: "same-zone" });
    expect(new Set(Object.values(map))).toEqual(new Set(["accelnet=false,placement=same-zone"]));
  });
  it("maps each variant to its sibling when the baseline names only some axes", () => {
    const { map, issues } = baselineMap(points, { accelnet: false });
    expect(issues).toEqual([]);
    expect(map).toEqual({
      "accelnet=false,placement=same-zone": "accelnet=false,placement=same-zone",
      "accelnet=false,placement=same-ppg": "accelnet=false,placement=same-ppg",
      "accelnet=true,placement=same-zone": "accelnet=false,placement=same-zone",
      "accelnet=true,placement=same-ppg": "accelnet=false,placement=same-ppg",
    });
  });
  it("says which variant lost its baseline to the filter", () => {
    const filtered = points.filter((p) => !(p.accelnet === false && p.placement === "same-ppg"));
    const { issues } = baselineMap(filtered, { accelnet: false });
    expect(issues).toEqual([{ path: "baseline", message: expect.stringContaining("variant accelnet=true,placement=same-ppg has no baseline") }]);
  });
});
