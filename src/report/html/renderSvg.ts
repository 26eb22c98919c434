/** A Vega-Lite specification drawn to SVG in Node (no browser, no canvas): vega-lite compiles it, vega renders it headless. */
import type { TopLevelSpec } from "vega-lite";

/**
 * vega and vega-lite, loaded on first use: over a thousand modules, which every latlab command
 * would otherwise load at start (`latlab --version` included). `latlab run` loads them while its
 * hosts come up, when nothing measures (see {@link loadVega}'s caller in src/cli/commands/runCommand.ts).
 */
let loading: Promise<[typeof import("vega"), typeof import("vega-lite")]> | undefined;
export function loadVega(): Promise<[typeof import("vega"), typeof import("vega-lite")]> {
  loading ??= Promise.all([import("vega"), import("vega-lite")]);
  return loading;
}

export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const [{ parse, View }, { compile }] = await loadVega();
  const view = new View(parse(compile(spec).spec), { renderer: "none" });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
