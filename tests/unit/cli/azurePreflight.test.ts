import { EventEmitter } from "node:events";
import { PassThrough } from "node:stream";
import { describe, expect, it, vi } from "vitest";
import { azurePreflight, checkCost, confirmOnTerminal, costOfPart, LISTING_MAX_BUFFER, listingArgs, listingFailure, rehearsalSshFrom } from "../../../src/targets/azure/lifecycle/preflight.ts";
import { buildPlan, defineExperiment } from "../../../src/index.ts";
import { wavePlan } from "../../../src/plan/waves.ts";
import { loadPriceSnapshot } from "../../../src/targets/azure/catalog/prices.ts";

// (Here rather than in tests/unit/targets: what the CLI's run hands the Azure preflight.)
describe("the offline listing subprocess", () => {
  it("plans the same run: --duration as given and --live-prices", () => {
    expect(listingArgs("/x/e.ts", {})).toEqual(["plan", "/x/e.ts", "--target", "azure"]);
    expect(listingArgs("/x/e.ts", { duration: { seconds: 30 }, livePrices: true })).toEqual(["plan", "/x/e.ts", "--target", "azure", "--duration", "30", "--live-prices"]);
    // The listing must be of the plan that will run: the same replicas.
    expect(listingArgs("/x/e.ts", { replicas: 3 })).toEqual(["plan", "/x/e.ts", "--target", "azure", "--replicas", "3"]);
    expect(listingArgs("/x/e.ts", { duration: { factor: 2.5 }, livePrices: false })).toEqual(["plan", "/x/e.ts", "--target", "azure", "--duration", "2.5x"]);
  });

  it("says why it failed: timeout, too much output, a failed exit, or nothing", () => {
    const base = { status: 0, signal: null, stdout: "listing", stderr: "" };
    expect(listingFailure(base)).toBeUndefined();
    expect(LISTING_MAX_BUFFER).toBeGreaterThanOrEqual(64 * 1024 * 1024);
    const timedOut = { ...base, status: null, signal: "SIGKILL" as const, error: Object.assign(new Error("spawnSync node ETIMEDOUT"), { code: "ETIMEDOUT" }) };
    expect(listingFailure(timedOut, 300_000)).toBe("the offline Azure listing did not finish within 300 s");
    const tooBig = { ...base, status: null, error: Object.assign(new Error("spawnSync node ENOBUFS"), { code: "ENOBUFS" }) };
    expect(listingFailure(tooBig)).toMatch(/printed more than \d+ MiB/);
    expect(listingFailure({ ...base, status: 1, stderr: "refused: x" })).toBe("the offline Azure listing failed:\nrefused: x");
  });
});

describe("--ssh-from in a rehearsal", () => {
  it("auto is the emulator's runner address (accepted, dropped, nothing asked); an address is refused; none is fine", () => {
    const auto: { sshFrom?: string } = { sshFrom: "auto" };
    expect(rehearsalSshFrom(auto)).toMatch(/^--ssh-from auto: a rehearsal's VMs accept SSH from the emulator's own runner address/);
    expect(auto).toEqual({});
    expect(() => rehearsalSshFrom({ sshFrom: "198.51.100.7/32" })).toThrow("--ssh-from does not apply to --rehearse");
    expect(rehearsalSshFrom({})).toBeUndefined();
  });
});

describe("Deploy? [y/N]", () => {
  /** A terminal: raw-mode keys in, prompt out. */
  function terminal() {
    const input = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => {} });
    const output = Object.assign(new PassThrough(), { isTTY: true, columns: 80 });
    let shown = "";
    output.on("data", (d: Buffer) => (shown += d.toString()));
    const signals = new EventEmitter();
    const interrupt = vi.fn();
    const type = async (keys: string) => {
      await vi.waitFor(() => expect(shown).toContain("Deploy? [y/N]"));
      input.write(keys);
    };
    return { io: { input, output, signals, interrupt }, type, interrupt, signals };
  }

  it("y deploys, anything else does not", async () => {
    for (const [keys, want] of [["y\r", true], ["yes\r", true], ["\r", false], ["n\r", false]] as const) {
      const t = terminal();
      const answer = confirmOnTerminal("2 VMs", t.io);
      await t.type(keys);
      expect(await answer).toBe(want);
      expect(t.interrupt).not.toHaveBeenCalled();
    }
  });

  it("Ctrl-C answers no and interrupts the run (the terminal swallowed the SIGINT)", async () => {
    const t = terminal();
    const answer = confirmOnTerminal("2 VMs", t.io);
    await t.type("\x03");
    expect(await answer).toBe(false);
    expect(t.interrupt).toHaveBeenCalledTimes(1);
  });

  it("Ctrl-D answers no without interrupting", async () => {
    const t = terminal();
    const answer = confirmOnTerminal("2 VMs", t.io);
    await t.type("\x04");
    expect(await answer).toBe(false);
    expect(t.interrupt).not.toHaveBeenCalled();
  });

  it("a stop signal while asking (hang-up, kill) answers no at once; the run's own handler stops the run", async () => {
    const t = terminal();
    const answer = confirmOnTerminal("2 VMs", t.io);
    await t.type("");
    t.signals.emit("SIGHUP", "SIGHUP");
    expect(await answer).toBe(false);
    expect(t.interrupt).not.toHaveBeenCalled();
    expect(t.signals.listenerCount("SIGHUP")).toBe(0);
  });

  it("without a terminal: no", async () => {
    const output = new PassThrough();
    expect(await confirmOnTerminal("2 VMs", { input: new PassThrough(), output })).toBe(false);
    expect(String(output.read())).toMatch(/not a terminal and no --yes: not deploying/);
  });
});

describe("the cost shown at each deploy's confirmation", () => {
  it("costOfPart prices a wave's plan on its own (less than the whole run), and the whole plan as the preflight's line", () => {
    const plan = buildPlan(
      defineExperiment({
        name: "w",
        description: "w",
        axes: { ppg: [false, true] },
        replicas: 2,
        defaults: { region: "eastus", zone: null, size: "Standard_D4s_v5", accelnet: false },
        hosts: { client: {}, server: {} },
        measure: [{ tool: "ping", params: { count: 3, interval: 0.1 } }],
      }),
    );
    const costOf = costOfPart(loadPriceSnapshot(), false);
    const usd = (line: string) => Number(/^\$([\d.]+)\/h/.exec(line)?.[1]);
    const whole = costOf(plan);
    const wave = costOf(wavePlan(plan, [plan.deployments[0]!.id]));
    expect(whole).toMatch(/^\$[\d.]+\/h/);
    expect(wave).not.toBe(whole);
    // One deployment of four: a quarter of the hourly rate.
    expect(usd(wave) * 4).toBeCloseTo(usd(whole), 2);
  });
});

describe("--max-cost in a rehearsal (issue 23)", () => {
  const plan = () =>
    buildPlan(
      defineExperiment({
        name: "budget",
        description: "budget",
        defaults: { region: "eastus", zone: null, size: "Standard_D4s_v5", accelnet: false },
        hosts: { client: {}, server: {} },
        measure: [{ tool: "ping", params: { count: 3, interval: 0.1 } }],
      }),
      { duration: { seconds: 1 } },
    );

  it("the real run refuses a budget below its worst case, naming --max-cost", async () => {
    const log = vi.fn();
    await expect(checkCost(plan(), { maxCost: 0.01, log })).rejects.toThrow(/^not deploying: --max-cost: estimated \$[\d.]+ .* is above the limit \$0\.01/);
    await expect(checkCost(plan(), { maxCost: 1000, log })).resolves.toBeUndefined();
  });

  it("a rehearsal refuses the same budget the same way, before anything is checked on this machine or started", async () => {
    const log = vi.fn();
    const options = { rehearse: true, maxCost: 0.01, binaries: [], install: false, log, source: "/nonexistent/budget.ts", resultsRoot: "/nonexistent/results" };
    const refused = azurePreflight(plan(), options, () => Promise.reject(new Error("no address is asked in a rehearsal")));
    await expect(refused).rejects.toThrow(/^--rehearse: not rehearsing \(nothing was started\): the real run refuses this: --max-cost: estimated \$[\d.]+ .* is above the limit \$0\.01/);
    expect(log).toHaveBeenCalledWith(expect.stringMatching(/^estimated cost of this run on Azure \(the rehearsal itself costs nothing\): \$/));
  });

  it("a rehearsal within the budget passes the cost check, as the real run does", async () => {
    await expect(checkCost(plan(), { rehearse: true, maxCost: 1000, log: vi.fn() })).resolves.toBeUndefined();
  });
});
