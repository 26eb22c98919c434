import { describe, expect, it } from "vitest";
import { runStateDir, stateRoot } from "../../../../../src/targets/azure/lifecycle/runState.ts";

describe("where a run's state folder is", () => {
  it("${LATLAB_STATE_DIR} wins, then ${XDG_STATE_HOME}/latlab/runs, then ~/.local/state/latlab/runs", () => {
    expect(stateRoot({ LATLAB_STATE_DIR: "/srv/latlab-state", XDG_STATE_HOME: "/x", HOME: "/home/u" })).toBe("/srv/latlab-state");
    expect(stateRoot({ XDG_STATE_HOME: "/x", HOME: "/home/u" })).toBe("/x/latlab/runs");
    expect(stateRoot({ HOME: "/home/u" })).toBe("/home/u/.local/state/latlab/runs");
    // A relative XDG_STATE_HOME is invalid (XDG Base Directory spec): ignored.
    expect(stateRoot({ XDG_STATE_HOME: "rel", HOME: "/home/u" })).toBe("/home/u/.local/state/latlab/runs");
    expect(runStateDir("20260101-120000-abcd", { HOME: "/home/u" })).toBe("/home/u/.local/state/latlab/runs/20260101-120000-abcd");
  });

  it("a run id never climbs out of the root", () => {
    for (const bad of ["../x", "a/b", "", ".hidden", "a..b"]) expect(() => runStateDir(bad, { HOME: "/home/u" })).toThrow(/cannot name a state folder/);
  });
});
