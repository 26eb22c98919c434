import { describe, expect, it } from "vitest";
import { RunStop, stopSignalHandler } from "../../../src/runner/runStop.ts";

/** The handler `latlab run` gives its stop signals, fed signals one by one; what it said and did. */
function handler(canHandOver: boolean, running = true) {
  const controller = new AbortController();
  const handOver = new AbortController();
  const said: string[] = [];
  const on = stopSignalHandler({ controller, handOver, running: () => running, canHandOver: () => canHandOver, write: (t) => said.push(t.trim()), pid: 4242 });
  return { on, said, controller, handOver };
}

describe("what each stop signal does to a run (issue 23: a second Ctrl-C never cancels the teardown)", () => {
  it("a second Ctrl-C: the teardown continues, said on stderr with what would stop waiting (SIGTERM to latlab's pid); nothing is handed over", () => {
    const h = handler(true);
    h.on("SIGINT");
    h.on("SIGINT");
    expect(h.said[0]).toBe("SIGINT: stopping after the current step and tearing everything down…");
    expect(h.said[1]).toMatch(/^SIGINT again: teardown continues; it reports what it could not remove when it ends \(another SIGINT changes nothing\)\. Not to wait for it: SIGTERM \(`kill 4242`\) hands it over/);
    expect(h.handOver.signal.aborted).toBe(false);
    // The run's stop is the first signal's.
    expect((h.controller.signal.reason as RunStop).stop).toEqual({ by: "signal", signal: "SIGINT" });
    h.on("SIGINT");
    expect(h.said[2]).toMatch(/^SIGINT again: teardown continues/);
    expect(h.handOver.signal.aborted).toBe(false);
  });

  it("SIGTERM twice (a kill repeated): the advice names SIGINT, the signal that would hand over, not SIGTERM again", () => {
    const h = handler(true);
    h.on("SIGTERM");
    h.on("SIGTERM");
    expect(h.said[1]).toMatch(/^SIGTERM again: teardown continues; .*\(another SIGTERM changes nothing\)\. Not to wait for it: SIGINT \(`kill -INT 4242`\) hands it over/);
    h.on("SIGINT");
    expect(h.said[2]).toBe("SIGINT after SIGTERM: the process is about to be killed; handing the teardown over and exiting…");
  });

  it("SIGTERM after SIGINT (GitHub's runner): the teardown is handed over, as in issue 22; later signals change nothing", () => {
    const h = handler(true);
    h.on("SIGINT");
    h.on("SIGINT");
    h.on("SIGTERM");
    expect(h.said[2]).toBe("SIGTERM after SIGINT: the process is about to be killed; handing the teardown over and exiting…");
    expect((h.handOver.signal.reason as RunStop).stop).toEqual({ by: "signal", signal: "SIGTERM" });
    h.on("SIGINT");
    expect(h.said[3]).toBe("SIGINT: the teardown is being handed over already; exiting…");
  });

  it("a target that cannot hand over: every later signal says the teardown continues and that signals change nothing", () => {
    const h = handler(false);
    h.on("SIGINT");
    h.on("SIGTERM");
    h.on("SIGINT");
    expect(h.said.slice(1)).toEqual([
      "SIGTERM after SIGINT: teardown continues; it reports what it could not remove when it ends (this target cannot hand it over: further signals change nothing)",
      "SIGINT again: teardown continues; it reports what it could not remove when it ends (this target cannot hand it over: further signals change nothing)",
    ]);
    expect(h.handOver.signal.aborted).toBe(false);
  });

  it("before anything is brought up, and after the time limit stopped the run", () => {
    const early = handler(true, false);
    early.on("SIGINT");
    expect(early.said).toEqual(["SIGINT: stopping; nothing has been brought up yet"]);
    const limited = handler(true);
    limited.controller.abort(new RunStop({ by: "time-limit", minutes: 1 }));
    limited.on("SIGINT");
    expect(limited.said).toEqual(["SIGINT: already stopping (its time limit); the teardown goes on…"]);
    expect((limited.controller.signal.reason as RunStop).stop.by).toBe("time-limit");
  });
});
