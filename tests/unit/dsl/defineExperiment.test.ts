import { describe, expect, it } from "vitest";
import { defineExperiment, ExperimentDefinitionError } from "../../../src/index.ts";

const base = {
  name: "t",
  description: "test",
  hosts: { client: {}, server: {} },
  measure: [{ tool: "sockperf" as const }],
};

function issuesOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ExperimentDefinitionError);
    return (error as ExperimentDefinitionError).issues.map((i) => `${i.path}: ${i.message}`);
  }
  throw new Error("expected an ExperimentDefinitionError");
}

describe("defineExperiment", () => {
  it("fills defaults and parses tool params", () => {
    const e = defineExperiment({ ...base, axes: { ppg: [false, true] } });
    expect(e.replicas).toBe(1);
    expect(e.repetitions).toBe(1);
    expect(e.measure[0]!.params).toMatchObject({ protocol: "tcp", messageSize: 64 });
    expect(e.kind).toBe("latlab.experiment");
  });

  it("names the field and the value for a wrong axis value", () => {
    // @ts-expect-error: "yes" is not a boolean — the point of the test
    expect(issuesOf(() => defineExperiment({ ...base, axes: { ppg: [false, "yes"] } }))).toEqual(['axes.ppg[1]: expected boolean, got "yes"']);
  });

  it("suggests the closest axis, tool and field names", () => {
    // @ts-expect-error: misspelled axis
    expect(issuesOf(() => defineExperiment({ ...base, axes: { ppgg: [true] } }))[0]).toBe('axes.ppgg: unknown field "ppgg" — did you mean "ppg"?');
    // @ts-expect-error: misspelled tool
    expect(issuesOf(() => defineExperiment({ ...base, measure: [{ tool: "sockpref" }] }))[0]).toBe('measure[0].tool: unknown tool "sockpref" — did you mean "sockperf"?');
    // @ts-expect-error: misspelled top-level field
    expect(issuesOf(() => defineExperiment({ ...base, replica: 2 }))[0]).toContain('did you mean "replicas"?');
  });

  it("validates tool parameters with the tool's own schema", () => {
    // @ts-expect-error: wrong type on purpose
    const issues = issuesOf(() => defineExperiment({ ...base, measure: [{ tool: "sockperf", params: { messageSize: "big" } }] }));
    expect(issues[0]).toMatch(/^measure\[0\]\.params\.messageSize: expected number/);
  });

  it("checks that pairs name hosts", () => {
    const issues = issuesOf(() => defineExperiment({ ...base, measure: [{ tool: "ping", pairs: [{ from: "clinet", to: "server" }] }] }));
    expect(issues).toEqual(['measure[0].pairs[0].from: no host "clinet" — did you mean "client"?']);
  });

  it("needs a server role when pairs are not given", () => {
    const issues = issuesOf(() => defineExperiment({ ...base, hosts: { a: {}, b: {} } }));
    expect(issues[0]).toContain('no host is called "server"');
  });

  it("refuses a baseline naming an axis that is not declared", () => {
    // @ts-expect-error: accelnet is not an axis of this experiment
    const issues = issuesOf(() => defineExperiment({ ...base, axes: { ppg: [false, true] }, baseline: { accelnet: false } }));
    expect(issues).toEqual(['baseline.accelnet: "accelnet" is not one of the declared axes (known: ppg)']);
  });

  it("refuses a baseline the filter removed", () => {
    const issues = issuesOf(() =>
      defineExperiment({ ...base, axes: { ppg: [false, true], accelnet: [false, true] }, filter: (v) => v.ppg || v.accelnet, baseline: { ppg: false, accelnet: false } }),
    );
    expect(issues[0]).toMatch(/^baseline: variant ppg=false,accelnet=true has no baseline/);
  });

  it("reports every problem at once: a shape error does not hide the checks of the other fields", () => {
    const issues = issuesOf(() =>
      defineExperiment({
        ...base,
        replicas: 0,
        axes: { ppg: [false, true] },
        // @ts-expect-error: "no" is not a value of the ppg axis
        baseline: { ppg: "no" },
        measure: [{ tool: "sockperf", params: { duration: -1 } }],
      }),
    );
    expect(issues).toEqual([
      "replicas: Too small: expected number to be >=1, got 0",
      "measure[0].params.duration: Too small: expected number to be >0, got -1",
      'baseline.ppg: expected one of false, true, got "no"',
    ]);
  });

  it("skips only the checks that need a broken field", () => {
    // @ts-expect-error: axes.ppg must hold booleans; the baseline cannot be checked against it
    const issues = issuesOf(() => defineExperiment({ ...base, axes: { ppg: ["yes"] }, baseline: { ppg: "maybe" }, measure: [{ tool: "sockpref" }] }));
    expect(issues).toEqual(['axes.ppg[0]: expected boolean, got "yes"', 'measure[0].tool: unknown tool "sockpref" — did you mean "sockperf"?']);
  });

  it("names the wrong host field, whether hosts is an object or not", () => {
    // @ts-expect-error: zone 1 is a number
    expect(issuesOf(() => defineExperiment({ ...base, hosts: { server: {}, client: { zone: 1 } } }))).toEqual(['hosts.client.zone: expected one of "1", "2", "3", got 1']);
    // @ts-expect-error: hosts is neither an object of roles nor a function
    expect(issuesOf(() => defineExperiment({ ...base, hosts: "two" }))).toEqual(['hosts: expected record, got "two"']);
    expect(issuesOf(() => defineExperiment({ ...base, hosts: { Server: {}, client: {} } }))).toEqual([
      'hosts.Server: a role is lower case letters and digits, at most 12, starting with a letter, got "Server"',
    ]);
  });

  it("names the field of a bad VNet name: on a host, in defaults, on the vnet axis", () => {
    const rule = 'a VNet name is lower case letters and digits, starting with a letter, at most 8 characters, like "a"';
    expect(issuesOf(() => defineExperiment({ ...base, hosts: { server: { vnet: "VNet-A" }, client: {} } }))).toEqual([`hosts.server.vnet: ${rule}, got "VNet-A"`]);
    expect(issuesOf(() => defineExperiment({ ...base, defaults: { vnet: "toolongname" } }))).toEqual([`defaults.vnet: ${rule}, got "toolongname"`]);
    expect(issuesOf(() => defineExperiment({ ...base, axes: { vnet: ["a", "1b"] } }))).toEqual([`axes.vnet[1]: ${rule}, got "1b"`]);
    // @ts-expect-error: the field is vnet
    expect(issuesOf(() => defineExperiment({ ...base, hosts: { server: { vent: "a" }, client: {} } }))[0]).toMatch(/hosts\.server.*vent.*did you mean "vnet"/);
  });

  it("checks baseline values against the values of their axis", () => {
    const axes = { accelnet: [false, true], placement: ["same-zone", "cross-zone"] } as const;
    // @ts-expect-error: "false" is a string, accelnet values are booleans
    expect(issuesOf(() => defineExperiment({ ...base, axes, baseline: { accelnet: "false" } }))).toEqual(['baseline.accelnet: expected one of false, true, got "false"']);
    // @ts-expect-error: misspelled placement
    expect(issuesOf(() => defineExperiment({ ...base, axes, baseline: { placement: "same-zon" } }))).toEqual([
      'baseline.placement: expected one of "same-zone", "cross-zone", got "same-zon" — did you mean "same-zone"?',
    ]);
    // A valid placement that is not one of this experiment's values is refused too.
    // @ts-expect-error: same-ppg is not a value of this axis
    expect(issuesOf(() => defineExperiment({ ...base, axes, baseline: { placement: "same-ppg" } }))).toEqual([
      'baseline.placement: expected one of "same-zone", "cross-zone", got "same-ppg"',
    ]);
  });

  it("refuses duplicate axis values and duplicate pairs, with their path", () => {
    const issues = issuesOf(() =>
      defineExperiment({
        ...base,
        axes: { ppg: [false, false, true] },
        measure: [{ tool: "ping", pairs: [{ from: "client", to: "server" }, { from: "client", to: "server" }] }],
      }),
    );
    expect(issues).toEqual(["measure[0].pairs[1]: duplicate pair client->server", "axes.ppg[1]: duplicate value false"]);
  });

  it("zips axes that repeat a value (issue 10): only the zipped tuples must differ", () => {
    const e = defineExperiment({
      ...base,
      axes: { placement: ["same-zone", "same-zone", "cross-zone"], accelnet: [false, true, false] },
      zip: [["placement", "accelnet"]],
      baseline: { placement: "same-zone", accelnet: false },
    });
    expect(e.axes).toEqual({ placement: ["same-zone", "same-zone", "cross-zone"], accelnet: [false, true, false] });
    const issues = issuesOf(() =>
      defineExperiment({ ...base, axes: { placement: ["same-zone", "same-zone"], accelnet: [true, true] }, zip: [["placement", "accelnet"]] }),
    );
    expect(issues).toEqual(['zip[0]: position 1 repeats position 0 (placement="same-zone", accelnet=true): zipped axes must not give the same combination twice']);
  });

  it("includes the file in the message once the loader knows it", () => {
    try {
      // @ts-expect-error
      defineExperiment({ ...base, axes: { ppg: ["yes"] } });
    } catch (error) {
      const e = (error as ExperimentDefinitionError).withSource("/x/my.ts");
      expect(e.message).toContain("/x/my.ts");
      expect(e.message).toContain("axes.ppg[0]");
    }
  });
});
